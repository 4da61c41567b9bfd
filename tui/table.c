/* What more than one screen draws: a function's name with its GCC copies noted, the table of rows
 * with their share bars (the top list, the drill-down's address view), the drill-down's title. */
#include "view_int.h"

#include "../report/baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds of copy the ELF has of a source function, from the view's cache (a pass over the
 * symbols the first time a name is asked). */
static unsigned clone_kinds_of(struct view *v, const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h |= 1; /* never 0: 0 marks a free slot */
    const int n = (int)(sizeof v->clones / sizeof *v->clones);
    if (v->n_clones >= n * 3 / 4) { /* full enough to slow the probes: start over */
        memset(v->clones, 0, sizeof v->clones);
        v->n_clones = 0;
    }
    int i = (int)(h % (uint64_t)n);
    while (v->clones[i].hash && v->clones[i].hash != h)
        i = (i + 1) % n;
    if (!v->clones[i].hash) {
        v->clones[i].hash = h;
        v->clones[i].kinds = sym_clone_kinds(v->syms, name);
        v->n_clones++;
    }
    return v->clones[i].kinds;
}

int view_put_function(struct view *v, struct vbuf *b, int x, int y, uint8_t attr, uint8_t note_attr, const char *name)
{
    const char *shown = view_shown_name(v, name);
    if (!v->demangle || v->group != PROF_BY_FUNCTION || shown != name || !v->syms) /* C++ says "[clone ...]" */
        return vb_put(b, x, y, attr, shown);
    unsigned kinds;
    size_t base = sym_clone_split(name, &kinds);
    char note[64];
    if (base) /* a copy's own symbol: its suffix, the number too, as two copies are two rows */
        snprintf(note, sizeof note, "%s", name + base + 1);
    else
        sym_clone_text(clone_kinds_of(v, name), note, sizeof note);
    x = vb_putf(b, x, y, attr, "%.*s", base ? (int)base : (int)strlen(name), name);
    return note[0] ? vb_putf(b, x, y, note_attr, " [%s]", note) : x;
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
        if (row->instances > 1) /* one row per task name: how many tasks had it */
            x = vb_putf(b, x, y, sel ? VA_SELECT : VA_DIM, "  (%u tasks of this name)", (unsigned)row->instances);
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

void view_title(struct view *v, struct vbuf *b, int y, const char *stats, const char *file)
{
    int x = view_put_function(v, b, 0, y, VA_TITLE, VA_TITLE, v->func), room = (int)strlen(stats);
    for (int d = v->depth - 1; d >= 0; d--) { /* the functions drilled through, while the figures fit */
        const char *caller = view_shown_name(v, v->stack[d]);
        if (x + 3 + (int)strlen(caller) + room > b->w)
            break;
        x = vb_putf(b, x, y, VA_TITLE, " \u2190 %s", caller);
    }
    if (x + room <= b->w)
        x = vb_put(b, x, y, VA_TITLE, stats);
    if (file[0] && x + 3 + (int)strlen(file) <= b->w)
        vb_putf(b, x, y, VA_TITLE, "   %s", file);
    vb_fill_attr(b, y, VA_TITLE);
}
