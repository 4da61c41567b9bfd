/* The section timings screen. */
#include "view_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What fits the width: the columns shown and their widths. */
struct layout {
    double hz, scale;       /* the sections' clock, and ticks to the unit shown */
    bool us, rate, narrow, spark, budgets;
    bool col[4];            /* cur, min, max, mean */
    int nw, vw;             /* name and number widths */
};

/* The title row, and the columns that fit: at 80 columns narrower name and number columns, no
 * rate, the budget as over/limit. */
static struct layout title_row(struct view *v, struct vbuf *b, int y0)
{
    struct layout l = {.hz = view_section_hz(v)};
    l.us = !v->ticks && l.hz > 0;
    l.scale = l.us ? 1e6 / l.hz : 1;
    l.rate = b->w >= 96;
    l.narrow = b->w < 96;
    l.spark = b->w >= 130 && v->sect_history.len > 1; /* each second's mean time, the last minute */
    l.nw = l.narrow ? (l.us ? 12 : 11) : 16; /* narrow ticks: a column wide enough for "MEAN ticks" */
    l.vw = l.narrow && l.us ? 9 : 10;
    const char *unit = l.us ? (v->unicode ? "\u00b5s" : "us") : "ticks";
    int x = vb_putf(b, 0, y0, VA_TITLE, "%-2s %-*s %9s", "#", l.nw, "SECTION", "COUNT");
    if (l.rate)
        x = vb_putf(b, x, y0, VA_TITLE, " %9s", "RATE/s");
    int hw = l.vw + (l.us && v->unicode ? 1 : 0); /* printf pads by bytes: "\u00b5" is two bytes, one column */
    /* the time columns that fit whole (a number is never cut at the edge): current, max, mean, min */
    int fit = (b->w - x) / (l.vw + 1);
    static const char *const heads[4] = {"CUR", "MIN", "MAX", "MEAN"};
    static const int needs[4] = {1, 4, 2, 3}; /* the room each takes its place in: cur, max, mean, min */
    for (int c = 0; c < 4; c++) {
        l.col[c] = fit >= needs[c];
        char head[16];
        snprintf(head, sizeof head, "%s %s", heads[c], unit);
        if (l.col[c])
            x = vb_putf(b, x, y0, VA_TITLE, " %*s", hw, head);
    }
    if (l.spark)
        x = vb_putf(b, x, y0, VA_TITLE, "  %-20s", "LAST 60 s (mean)");
    l.budgets = x + 12 <= b->w; /* the budget column, when it fits whole */
    if (l.budgets)
        vb_putf(b, x, y0, VA_TITLE, "  %s", l.narrow ? "OVER/LIMIT" : "OVER BUDGET");
    vb_fill_attr(b, y0, VA_TITLE);
    return l;
}

/* The runs over budget and the limit, in the unit of the columns (ticks under key u); with no clock
 * the runs cannot be told ("?") and the limit stays as given. */
static void budget_cell(struct view *v, struct vbuf *b, int x, int y, uint8_t attr, const struct layout *l,
                        const struct view_budget *bu, uint64_t runs)
{
    char count[24], limit[32];
    snprintf(count, sizeof count, l->hz > 0 ? "%llu" : "?", (unsigned long long)runs);
    bool us = l->us || l->hz <= 0;
    snprintf(limit, sizeof limit, us ? "%.1f" : "%.0f", us ? bu->us : bu->us * l->hz / 1e6);
    char wide[80];
    snprintf(wide, sizeof wide, "  %5s > %s %s", count, limit, !us ? "ticks" : v->unicode ? "\u00b5s" : "us");
    if (l->narrow)
        vb_putf(b, x, y, attr, "  %5s/%s", count, limit);
    else if (x + vb_columns(wide) > b->w) /* the unit is the columns' */
        vb_putf(b, x, y, attr, "  %5s > %s", count, limit);
    else
        vb_put(b, x, y, attr, wide);
}

/* Section i's row, the shown-th; since the reset (key r) when there was one: a baseline for count
 * and sum, min/max as seen. */
static void section_row(struct view *v, struct vbuf *b, int y, int i, int shown, const struct layout *l)
{
    const struct prof_section *s = prof_section(v->prof, i);
    const struct view_budget *bu = view_budget_for(v, i, s->name);
    struct prof_section now = *s;
    if (v->sect_reset[i]) {
        now.count = s->count - v->sect_base_count[i];
        now.sum = s->sum - v->sect_base_sum[i];
        now.min = v->sect_max[i] ? v->sect_min[i] : 0;
        now.max = v->sect_max[i];
    }
    s = &now;
    double mean = s->count ? (double)s->sum / (double)s->count : 0, since = v->st.elapsed - v->sect_reset_at;
    bool over = bu && l->hz > 0 && v->budget_violations[i] > 0;
    uint8_t attr = shown == v->sel ? VA_SELECT : (over ? VA_WARN : VA_NORMAL);
    int x = vb_putf(b, 0, y, attr, "%-2d %-*.*s %9llu", i, l->nw, l->nw, s->name[0] ? s->name : "-",
                    (unsigned long long)s->count);
    if (l->rate)
        x = since > 0 && v->st.rate_of == VIEW_RATE_STREAM /* a file's would be how fast it is read */
                ? vb_putf(b, x, y, attr, " %9.1f", (double)s->count / since)
                : vb_putf(b, x, y, attr, " %9s", "-");
    double values[4] = {(double)s->current, (double)s->min, (double)s->max, mean};
    for (int c = 0; c < 4; c++) {
        char num[32];
        if (l->col[c] && view_section_time(num, sizeof num, values[c] * l->scale, l->us, l->vw) >= 0)
            x = vb_putf(b, x, y, attr, " %*s", l->vw, num);
    }
    if (l->spark) {
        float pts[20];
        if (!section_history_of(&v->sect_history, i, pts, 20, 60))
            for (int k = 0; k < 20; k++)
                pts[k] = -1.0f;
        x = vb_put(b, x, y, attr, "  ");
        x = vb_sparkline(b, x, y, pts, 20, v->unicode, shown == v->sel ? VA_SELECT : VA_BAR);
    }
    if (bu && l->budgets)
        budget_cell(v, b, x, y, over ? VA_WARN : attr, l, bu, v->budget_violations[i]);
}

/* Cortex-A/R: the PMU events section i counts, per run, on a line of their own; returns the next
 * free row. */
static int events_row(struct view *v, struct vbuf *b, int y, int i)
{
    const struct prof_section *s = prof_section(v->prof, i);
    uint64_t runs = v->sect_reset[i] ? s->count - v->sect_base_count[i] : s->count; /* as the row counts them */
    int ex = vb_put(b, 0, y, VA_DIM, "   ");
    bool events = false;
    for (int k = 0; k < PROF_SECTION_EVENTS && y < b->h - 2; k++) {
        const struct prof_section_event *e = &s->ev[k];
        if (!e->seen)
            continue;
        const char *en = prof_event_name(v->prof, e->event);
        double per_run = runs ? (double)e->sum / (double)s->count : 0;
        ex = en ? vb_putf(b, ex, y, VA_DIM, " %s %.0f/run (%llu..%llu)", en, per_run, (unsigned long long)e->min,
                          (unsigned long long)e->max)
                : vb_putf(b, ex, y, VA_DIM, " event 0x%02x %.0f/run (%llu..%llu)", (unsigned)e->event, per_run,
                          (unsigned long long)e->min, (unsigned long long)e->max);
        events = true;
    }
    double ipc = prof_section_ipc(v->prof, s);
    if (events && ipc >= 0)
        vb_putf(b, ex, y, VA_DIM, "  IPC %.2f", ipc);
    return events ? y + 1 : y;
}

/* Runs past the firmware clock's 32-bit range: their current and max are saturated (the mean is
 * exact); returns the next free row. */
static int long_runs_row(struct view *v, struct vbuf *b, int y, int i)
{
    const struct prof_section *s = prof_section(v->prof, i);
    if (!s->long_runs || y >= b->h - 2)
        return y;
    char full[160], brief[80];
    snprintf(full, sizeof full, "   ! %llu run%s past the timer's range (2^32 ticks): max shows the range, the mean "
             "is exact", (unsigned long long)s->long_runs, s->long_runs == 1 ? "" : "s");
    snprintf(brief, sizeof brief, "   ! %llu past 2^32 ticks: max saturated, mean exact",
             (unsigned long long)s->long_runs);
    vb_put_fit(b, 0, y, VA_WARN, (const char *const[]){full, brief}, 2);
    return y + 1;
}

/* The line under the table: what key u shows, the sections' clock and where it came from, and
 * that it is not the header's clk when it differs; shorter forms on a narrower screen. */
static void footer(struct view *v, struct vbuf *b, const struct layout *l)
{
    const struct prof_stream_info *info = prof_stream_info(v->prof);
    double clk = info->present ? (double)info->clock_hz : 0;
    bool other = l->hz > 0 && clk > 0 && fabs(l->hz - clk) > 0.5; /* the header's clk is the sampling one */
    const char *from = v->cpu_hz > 0 ? "--cpu-hz" : "announced";
    char f[4][160];
    if (l->hz <= 0) {
        snprintf(f[0], sizeof f[0], "sections' clock unknown (none announced): give --cpu-hz for microseconds");
        snprintf(f[1], sizeof f[1], "sections' clock unknown: give --cpu-hz");
        snprintf(f[2], sizeof f[2], "clock unknown: --cpu-hz");
    } else {
        snprintf(f[0], sizeof f[0], "%s; clock %.3f MHz (%s)", l->us ? "u: timer ticks" : "u: microseconds", l->hz / 1e6,
                 from);
        snprintf(f[1], sizeof f[1], "%s; clock %.3f MHz (%s)", l->us ? "u: ticks" : v->unicode ? "u: \u00b5s" : "u: us",
                 l->hz / 1e6, from);
        snprintf(f[2], sizeof f[2], "clock %.3f MHz", l->hz / 1e6);
        if (other) {
            snprintf(f[0] + strlen(f[0]), sizeof f[0] - strlen(f[0]), ", not the header's clk %.1f MHz (the core's)",
                     clk / 1e6);
            snprintf(f[1] + strlen(f[1]), sizeof f[1] - strlen(f[1]), ", not the core's %.1f MHz", clk / 1e6);
            snprintf(f[2] + strlen(f[2]), sizeof f[2] - strlen(f[2]), ", not the core's %.1f", clk / 1e6);
        }
    }
    snprintf(f[3], sizeof f[3], "clock %.1f MHz", l->hz / 1e6);
    vb_put_fit(b, 0, b->h - 2, VA_DIM, (const char *const[]){f[0], f[1], f[2], f[3]}, l->hz > 0 ? 4 : 3);
}

/* Sections like an oscilloscope panel: times in microseconds (ticks on key u), runs per second,
 * and runs over budget counted whenever one is known (the latest, a new maximum, or all when even
 * the minimum is over). */
void view_render_sections(struct view *v, struct vbuf *b, int y0)
{
    struct layout l = title_row(v, b, y0);
    int y = y0 + 1, shown = 0;
    for (int i = 0; i < PROF_SECTIONS && y < b->h - 2; i++) {
        if (!prof_section(v->prof, i)->seen)
            continue;
        section_row(v, b, y++, i, shown++, &l);
        y = long_runs_row(v, b, y, i);
        y = events_row(v, b, y, i);
    }
    if (!shown)
        vb_put_fit(b, 0, y0 + 1, VA_DIM, (const char *const[]){"no section timings in the stream "
                   "(cmprof_stream_sections() sends them)", "no section timings in the stream", "no sections"}, 3);
    else
        footer(v, b, &l);
    for (int i = 0; i < 32; i++)
        if (v->sect_reset[i]) {
            char full[120], brief[60];
            double ago = v->st.elapsed - v->sect_reset_at;
            snprintf(full, sizeof full, "since r %.0f s ago: count, mean, rate, min and max from the reports since", ago);
            snprintf(brief, sizeof brief, "since r %.0f s ago: the figures from then on", ago);
            vb_put_fit(b, 0, b->h - 3, VA_BOLD, (const char *const[]){full, brief}, 2);
            break;
        }
}
