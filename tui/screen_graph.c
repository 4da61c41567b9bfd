/* The history pane (key G): the selected row's share, or the selected section's mean run time, over
 * the last minutes, as a bar chart under the table. Like uC/Probe's oscilloscope, at any size. */
#include "view_int.h"

#include <stdio.h>
#include <string.h>

#define LABEL_W 9 /* the y axis' labels: "100.0%", "12345.6µs" */

/* The shortest of one, two and five minutes that holds the history so far. */
static int span_for(int len)
{
    return len <= 60 ? 60 : len <= 120 ? 120 : HISTORY_POINTS;
}

/* Values as vertical bars `rows` high from column x; eight levels a cell, scaled to peak. */
static void bars(struct vbuf *b, int x, int y, int rows, const float *pts, int n, float peak, bool unicode)
{
    for (int p = 0; p < n; p++) {
        if (pts[p] <= 0 || peak <= 0)
            continue;
        int filled = (int)(pts[p] / peak * (float)(rows * 8) + 0.5f);
        if (filled < 1)
            filled = 1; /* something happened then: a sliver, not nothing */
        for (int r = 0; r < rows; r++) {
            int level = filled - (rows - 1 - r) * 8; /* eighths of this cell, from its bottom */
            if (level <= 0)
                continue;
            uint32_t ch = level >= 8 ? (unicode ? 0x2588 : '#') : (unicode ? 0x2580 + (uint32_t)level : (level >= 4 ? '#' : '.'));
            vb_putc(b, x + p, y + r, ch, VA_BAR);
        }
    }
}

static void axis_time(char *buf, size_t len, int seconds)
{
    if (seconds % 60 == 0)
        snprintf(buf, len, "-%dmin", seconds / 60);
    else
        snprintf(buf, len, "-%ds", seconds);
}

void view_render_graph(struct view *v, struct vbuf *b, int y, int height)
{
    int rows = height - 2, width = b->w - LABEL_W - 1;
    if (rows < 1 || width < 10)
        return;
    int points = width;
    float pts[512];
    if (points > (int)(sizeof pts / sizeof *pts))
        points = (int)(sizeof pts / sizeof *pts);
    bool section = v->mode == VM_SECTIONS;
    int len = section ? v->sect_history.len : view_history(v)->len, span = span_for(len);
    if (points > span)
        points = span; /* at least a second a column */
    char name[128] = "", unit[8] = "%";
    double scale = 100; /* shares in per cent */
    bool us = false;    /* a section's times in microseconds, else timer ticks */
    int got = 0;
    if (section) {
        double hz = view_section_hz(v);
        us = !v->ticks && hz > 0;
        snprintf(unit, sizeof unit, "%s", us ? (v->unicode ? "\u00b5s" : "us") : "ticks");
        scale = us ? 1e6 / hz : 1;
        for (int i = 0, shown = 0; i < PROF_SECTIONS && !got; i++) {
            const struct prof_section *s = prof_section(v->prof, i);
            if (!s->seen)
                continue;
            if (shown++ == v->sel) {
                snprintf(name, sizeof name, "%s", s->name[0] ? s->name : "-");
                got = section_history_of(&v->sect_history, i, pts, points, span);
            }
        }
    } else {
        const struct prof_row *r;
        size_t n = view_top_rows(v, &r);
        if (v->sel >= 0 && (size_t)v->sel < n) {
            snprintf(name, sizeof name, "%s", view_shown_name(v, r[v->sel].name));
            got = history_of(view_history(v), r[v->sel].name, pts, points, span);
        }
    }
    float peak = 0;
    for (int p = 0; p < got; p++)
        peak = pts[p] > peak ? pts[p] : peak;
    int seconds = span / points;
    char per[32];
    if (span % points == 0)
        snprintf(per, sizeof per, "%d s", seconds);
    else
        snprintf(per, sizeof per, "%.1f s", (double)span / points);
    int x = vb_putf(b, 0, y, VA_TITLE, "HISTORY  %s  %s per %s, last %d min", name[0] ? name : "(no row)",
                    section ? "mean time" : "share", per, span / 60);
    char peak_text[48], num[32]; /* timer ticks whole, as the section table shows them */
    if (section && !us)
        view_section_time(num, sizeof num, peak * scale, false, LABEL_W);
    else
        snprintf(num, sizeof num, "%.1f", peak * scale);
    snprintf(peak_text, sizeof peak_text, ", peak %s %s", num, unit);
    if (got && peak > 0 && x + vb_columns(peak_text) <= b->w)
        vb_put(b, x, y, VA_TITLE, peak_text); /* whole or not at all: the axis has it too */
    vb_fill_attr(b, y, VA_TITLE);
    if (v->st.rate_of != VIEW_RATE_STREAM) { /* its seconds would be the host's reading: an empty axis */
        vb_put(b, 2, y + 1, VA_DIM, "a file has no time: the history is a live stream's, a point a second");
        return;
    }
    if (!got) {
        vb_put(b, 2, y + 1, VA_DIM, name[0] ? "no history yet: a point a second" : "nothing selected");
        return;
    }
    char label[48];
    snprintf(label, sizeof label, "%s%s", num, section && !us ? "" : unit); /* ticks: the unit in the title */
    vb_putf(b, 0, y + 1, VA_DIM, "%*s", LABEL_W, label);
    if (rows > 1) /* one row (a short terminal): the peak's label alone */
        vb_putf(b, 0, y + rows, VA_DIM, "%*s", LABEL_W, section ? "0" : "0%");
    for (int r = 0; r < rows; r++)
        vb_put(b, LABEL_W, y + 1 + r, VA_DIM, v->unicode ? "\u2502" : "|");
    int x0 = LABEL_W + 1 + (width - points); /* the newest second at the right edge */
    bars(b, x0, y + 1, rows, pts, points, peak, v->unicode);
    char left[16], mid[16];
    axis_time(left, sizeof left, span);
    axis_time(mid, sizeof mid, span / 2);
    int ya = y + rows + 1;
    vb_put(b, x0, ya, VA_DIM, left);
    vb_put(b, x0 + points / 2 - (int)strlen(mid) / 2, ya, VA_DIM, mid);
    vb_put(b, x0 + points - 3, ya, VA_DIM, "now");
}
