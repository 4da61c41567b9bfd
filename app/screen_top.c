/* The top screen: one row per function, line, file or task, with its share and interval. */
#include "../report/baseline.h"
#include "draw.h"
#include "view_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A path as a reader wants it in a column of `width`: "a/./b/../c" as "a/c", and when too long,
 * its end kept from a directory on ("...config/arm/lib1funcs.S"), where the file's own name is;
 * no directory's name is cut unless the file's own name alone is too long. */
const char *view_fit_path(const char *path, int width, char *buf, size_t len)
{
    char norm[512];
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < sizeof norm;) {
        if (p[0] == '.' && (p[1] == '/' || !p[1]) && (p == path || p[-1] == '/')) { /* "./" */
            p += p[1] ? 2 : 1;
            continue;
        }
        if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]) && (p == path || p[-1] == '/') && n > 1) {
            /* "../": drop the directory before it, unless that is ".." or the root */
            size_t k = n - 1;
            while (k > 0 && norm[k - 1] != '/')
                k--;
            if (!(n - k == 3 && memcmp(norm + k, "../", 3) == 0)) {
                n = k;
                p += p[2] ? 3 : 2;
                continue;
            }
        }
        norm[n++] = *p++;
    }
    norm[n] = '\0';
    if (width < 4 || (int)n <= width) {
        snprintf(buf, len, "%s", norm);
        return buf;
    }
    const char *tail = norm + n - (size_t)(width - 3), *slash = strchr(tail, '/');
    snprintf(buf, len, "...%s", slash && slash != tail ? slash : tail);
    return buf;
}

#define SPARK 20 /* characters of sparkline: three seconds each */

/* A row's last minute, scaled to its own peak so its shape shows; blank before it had samples. */
static int sparkline(struct view *v, struct vbuf *b, int x, int y, const char *name, uint8_t attr)
{
    float pts[SPARK];
    int n = history_of(view_history(v), name, pts, SPARK, 60);
    for (int i = n; i < SPARK; i++)
        pts[i] = -1.0f;
    return vb_sparkline(b, x, y, pts, SPARK, v->unicode, attr);
}

void view_render_rows(struct view *v, struct vbuf *b, int y0, const struct prof_row *rows, size_t n, bool lines)
{
    int bw = b->w >= 100 ? 24 : (b->w >= 90 ? 16 : 10);
    bool diff = view_baseline(v) && !lines; /* by address never matches a baseline's grouping */
    /* wide terminals: each row's share second by second, the last minute as a sparkline */
    bool spark = !lines && !diff && b->w >= 110 && view_history(v)->len > 1;
    if (diff) /* --diff: the baseline's share and the change, '*' when significant */
        vb_putf(b, 0, y0, VA_TITLE, "%-*s %7s %7s %9s %7s %8s  %s", bw, "SHARE \u00b195%", "%", "\u00b1%", "SAMPLES", "BASE%",
             "CHANGE", "NAME");
    else if (spark)
        vb_putf(b, 0, y0, VA_TITLE, "%-*s %7s %7s %9s  %-*s  %s", bw, "SHARE \u00b195%", "%", "\u00b1%", "SAMPLES",
                SPARK, "LAST 60 s", "NAME");
    else
        vb_putf(b, 0, y0, VA_TITLE, "%-*s %7s %7s %9s  %s", bw, "SHARE \u00b195%", "%", "\u00b1%", "SAMPLES",
             lines ? "LINE" : "NAME");
    vb_fill_attr(b, y0, VA_TITLE);
    int rows_h = b->h - 1 - (y0 + 1);
    view_clamp_scroll(v, (int)n, rows_h);
    for (int r = 0; r < rows_h && (size_t)(v->top + r) < n; r++) {
        const struct prof_row *row = &rows[v->top + r];
        int y = y0 + 1 + r;
        bool sel = v->top + r == v->sel;
        bool zero = row->lo95 < row->share / 2; /* it may well be half as much: could be noise */
        vb_bar(b, 0, y, bw, row->share, row->lo95, row->hi95, v->unicode);
        uint8_t attr = sel ? VA_SELECT : (zero ? VA_DIM : VA_NORMAL);
        char samples[32];
        snprintf(samples, sizeof samples, row->samples == floor(row->samples) ? "%.0f" : "%.1f", row->samples);
        char path[600];
        const char *name = lines ? row->name : view_shown_name(v, row->name);
        if (v->group == PROF_BY_FILE && !lines)
            name = view_fit_path(row->name, b->w - (bw + 1 + 28), path, sizeof path);
        int x;
        if (diff) {
            struct baseline_delta d = baseline_compare(row->samples, prof_total(view_current_prof(v)),
                                                       baseline_samples(v->base, row->name), v->base->total, n);
            x = vb_putf(b, bw + 1, y, attr, "%6.2f%% %6.2f%% %9s %6.2f%% %+7.2f%s ", 100 * row->share, 100 * row->ci95,
                     samples, 100 * d.base_share, 100 * d.delta, d.significant ? "*" : " ");
        } else if (spark) {
            x = vb_putf(b, bw + 1, y, attr, "%6.2f%% %6.2f%% %9s  ", 100 * row->share, 100 * row->ci95, samples);
            x = sparkline(v, b, x, y, row->name, sel ? VA_SELECT : VA_BAR);
            x = vb_put(b, x, y, attr, "  ");
        } else {
            x = vb_putf(b, bw + 1, y, attr, "%6.2f%% %6.2f%% %9s  ", 100 * row->share, 100 * row->ci95, samples);
        }
        if (v->group == PROF_BY_FUNCTION && !lines)
            x = view_put_function(v, b, x, y, attr, sel ? VA_SELECT : VA_DIM, row->name);
        else
            x = vb_put(b, x, y, attr, name);
        if (row->inlined && v->group == PROF_BY_FUNCTION && !lines)
            x = vb_putf(b, x, y, sel ? VA_SELECT : VA_DIM, " (inlined)");
        if (row->file && strcmp(row->file, "??") != 0 && v->group == PROF_BY_FUNCTION) /* "??": no DWARF */
            x = vb_putf(b, x, y, sel ? VA_SELECT : VA_DIM, "  %s", view_base_name(row->file));
        if (row->approximate)
            x = vb_putf(b, x, y, VA_WARN, "  ~approx");
        if (lines && v->disasm) {
            uint32_t a = (uint32_t)strtoul(row->name, NULL, 16);
            if (a >= v->disasm_lo && (a - v->disasm_lo) / 2 < v->disasm_n && v->disasm[(a - v->disasm_lo) / 2])
                vb_putf(b, x, y, sel ? VA_SELECT : VA_BOLD, "  %s", v->disasm[(a - v->disasm_lo) / 2]);
        }
        if (sel)
            for (int cx = bw; cx < b->w; cx++)
                b->cells[y * b->w + cx].attr = VA_SELECT;
    }
}

/* Why there is nothing to show yet, as precisely as the input allows: never a bare "waiting". */
static void why_empty(const struct view *v, char *buf, size_t len)
{
    const struct ingest *in = v->in;
    const struct text_stats *t = &in->text.stats;
    if (v->window_mode && prof_total(v->prof) > 0)
        snprintf(buf, len, "no samples in the last window yet");
    else if (in->bytes == 0)
        snprintf(buf, len, "no data from the source yet");
    else if (t->no_base && !in->info.present)
        snprintf(buf, len, "no announce yet: clock, period and code base unknown, %llu stream samples wait for one "
                 "(the firmware repeats it every second; one that announces only at boot needs a restart)",
                 (unsigned long long)t->no_base);
    else if (in->format == DETECT_TEXT && t->log_lines && !t->stream_lines && !t->blocks)
        snprintf(buf, len, "%llu log lines and no samples so far: is the sampler started, and the stream drained "
                 "(or the dump written)?", (unsigned long long)t->log_lines);
    else if (in->format == DETECT_UNKNOWN)
        snprintf(buf, len, "%llu bytes so far: not enough to tell the format yet", (unsigned long long)in->bytes);
    else
        snprintf(buf, len, "no samples yet (%s stream, %llu bytes)", detect_name(in->format),
                 (unsigned long long)in->bytes);
}

void view_render_top(struct view *v, struct vbuf *b, int y0)
{
    const struct prof_row *rows;
    size_t n = view_top_rows(v, &rows);
    if (prof_total(view_current_prof(v)) == 0) {
        char why[400];
        why_empty(v, why, sizeof why);
        vb_wrap(b, y0 + 1, VA_DIM, why);
        return;
    }
    b->h--; /* the table's last line: the legend, once */
    view_render_rows(v, b, y0, rows, n, false);
    b->h++;
    int x = vb_put(b, 0, b->h - 2, VA_BAR, v->unicode ? "\u2588" : "#");
    x = vb_put(b, x, b->h - 2, VA_DIM, " share  ");
    x = vb_put(b, x, b->h - 2, VA_CI, v->unicode ? "\u2591" : "-");
    static const char *const parts[] = {" its 95 % interval", "  \u00b1% half its width", "  dim: may be noise"};
    for (int i = 0; i < 3; i++) /* whole parts only: narrow, the last ones go */
        if (x + (int)strlen(parts[i]) - (i == 1) <= b->w) /* "\u00b1" is two bytes, one column */
            x = vb_put(b, x, b->h - 2, VA_DIM, parts[i]);
        else
            break;
}
