/* The section timings screen. */
#include "view_int.h"

#include <math.h>
#include <stdio.h>

/* Sections like an oscilloscope panel: times in microseconds (ticks on key u), runs per second,
 * and runs over budget counted whenever one is known (the latest, a new maximum, or all when even
 * the minimum is over). */
void view_render_sections(struct view *v, struct vbuf *b, int y0)
{
    double hz = view_section_hz(v);
    /* at 80 columns: narrower name and number columns, no rate, the budget as over/limit */
    bool us = !v->ticks && hz > 0, rate = b->w >= 96, narrow = b->w < 96;
    bool spark = b->w >= 130 && v->sect_history.len > 1; /* each second's mean time, the last minute */
    int nw = narrow ? 12 : 16, vw = narrow ? 9 : 10;
    const char *unit = us ? (v->unicode ? "\u00b5s" : "us") : "tk";
    char h_cur[16], h_min[16], h_max[16], h_mean[16];
    snprintf(h_cur, sizeof h_cur, "CUR %s", unit);
    snprintf(h_min, sizeof h_min, "MIN %s", unit);
    snprintf(h_max, sizeof h_max, "MAX %s", unit);
    snprintf(h_mean, sizeof h_mean, "MEAN %s", unit);
    int x = vb_putf(b, 0, y0, VA_TITLE, "%-2s %-*s %9s", "#", nw, "SECTION", "COUNT");
    if (rate)
        x = vb_putf(b, x, y0, VA_TITLE, " %9s", "RATE/s");
    int hw = vw + (us && v->unicode ? 1 : 0); /* printf pads by bytes: "\u00b5" is two bytes, one column */
    /* the time columns that fit whole (a number is never cut at the edge): current, max, mean, min */
    int fit = (b->w - x) / (vw + 1);
    bool col[4] = {fit >= 1, fit >= 4, fit >= 2, fit >= 3}; /* cur, min, max, mean */
    const char *heads[4] = {h_cur, h_min, h_max, h_mean};
    for (int c = 0; c < 4; c++)
        if (col[c])
            x = vb_putf(b, x, y0, VA_TITLE, " %*s", hw, heads[c]);
    if (spark)
        x = vb_putf(b, x, y0, VA_TITLE, "  %-20s", "LAST 60 s (mean)");
    bool budgets = x + 12 <= b->w; /* the budget column, when it fits whole */
    if (budgets)
        vb_putf(b, x, y0, VA_TITLE, "  %s", narrow ? "OVER/LIMIT" : "OVER BUDGET");
    vb_fill_attr(b, y0, VA_TITLE);
    double since = v->st.elapsed - v->sect_reset_at;
    int y = y0 + 1, shown = 0;
    for (int i = 0; i < INGEST_SECTIONS && y < b->h - 2; i++) {
        const struct ingest_section *s = &v->in->section[i];
        if (!s->seen)
            continue;
        const struct view_budget *bu = view_budget_for(v, i, s->name);
        struct ingest_section now = *s;
        if (v->sect_reset[i]) { /* since the reset: a baseline for count and sum, min/max as seen */
            now.count = s->count - v->sect_base_count[i];
            now.sum = s->sum - v->sect_base_sum[i];
            now.min = v->sect_max[i] ? v->sect_min[i] : 0;
            now.max = v->sect_max[i];
        }
        s = &now;
        double mean = s->count ? (double)s->sum / (double)s->count : 0, scale = us ? 1e6 / hz : 1;
        bool over = bu && hz > 0 && v->budget_violations[i] > 0;
        uint8_t attr = shown == v->sel ? VA_SELECT : (over ? VA_WARN : VA_NORMAL);
        x = vb_putf(b, 0, y, attr, "%-2d %-*.*s %9llu", i, nw, nw, s->name[0] ? s->name : "-",
                    (unsigned long long)s->count);
        if (rate)
            x = since > 0 ? vb_putf(b, x, y, attr, " %9.1f", (double)s->count / since) : vb_putf(b, x, y, attr, " %9s", "-");
        double values[4] = {(double)s->current * scale, (double)s->min * scale, (double)s->max * scale, mean * scale};
        for (int c = 0; c < 4; c++)
            if (col[c])
                x = vb_putf(b, x, y, attr, " %*.2f", vw, values[c]);
        if (spark) {
            float pts[20];
            if (!section_history_of(&v->sect_history, i, pts, 20, 60))
                for (int k = 0; k < 20; k++)
                    pts[k] = -1.0f;
            x = vb_put(b, x, y, attr, "  ");
            x = vb_sparkline(b, x, y, pts, 20, v->unicode, shown == v->sel ? VA_SELECT : VA_BAR);
        }
        if (bu && budgets && narrow)
            vb_putf(b, x, y, over ? VA_WARN : attr, "  %5llu/%.1f", (unsigned long long)v->budget_violations[i], bu->us);
        else if (bu && budgets)
            vb_putf(b, x, y, over ? VA_WARN : attr, "  %5llu > %.1f %s", (unsigned long long)v->budget_violations[i],
                 bu->us, v->unicode ? "\u00b5s" : "us");
        y++;
        shown++;
        /* Cortex-A/R: the PMU events the section counts, per run, on a line of their own */
        int ex = vb_put(b, 0, y, VA_DIM, "   ");
        bool events = false;
        for (int k = 0; k < INGEST_SECTION_EVENTS && y < b->h - 2; k++) {
            const struct ingest_section_event *e = &v->in->section[i].ev[k];
            if (!e->seen)
                continue;
            const char *en = ingest_event_name(e->event);
            double per_run = s->count ? (double)e->sum / (double)v->in->section[i].count : 0;
            ex = en ? vb_putf(b, ex, y, VA_DIM, " %s %.0f/run (%llu..%llu)", en, per_run,
                              (unsigned long long)e->min, (unsigned long long)e->max)
                    : vb_putf(b, ex, y, VA_DIM, " event 0x%02x %.0f/run (%llu..%llu)", (unsigned)e->event, per_run,
                              (unsigned long long)e->min, (unsigned long long)e->max);
            events = true;
        }
        double ipc = ingest_section_ipc(v->in, &v->in->section[i]);
        if (events && ipc >= 0)
            vb_putf(b, ex, y, VA_DIM, "  IPC %.2f", ipc);
        if (events)
            y++;
    }
    if (!shown)
        vb_put(b, 0, y0 + 1, VA_DIM, "no section timings in the stream (cmprof_stream_sections() sends them)");
    else
    {
        int x = vb_putf(b, 0, b->h - 2, VA_DIM, "%s; clock %.3f MHz (%s)%s", us ? "u: timer ticks" : "u: microseconds",
                        hz / 1e6, v->cpu_hz > 0 ? "--cpu-hz" : "announced", hz > 0 ? "" : ": unknown, give --cpu-hz");
        double clk = v->in->info.present ? (double)v->in->info.clock_hz : 0;
        if (hz > 0 && clk > 0 && fabs(hz - clk) > 0.5) /* the header's clk is the sampling one */
            vb_putf(b, x, b->h - 2, VA_DIM, ", not the header's clk %.1f MHz (the core's)", clk / 1e6);
    }
    for (int i = 0; i < 32; i++)
        if (v->sect_reset[i]) {
            vb_putf(b, 0, b->h - 3, VA_BOLD, "since r %.0f s ago: count, mean, rate, min and max from the reports since",
                    since);
            break;
        }
}
