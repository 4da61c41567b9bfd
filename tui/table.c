/* What more than one screen draws: a function's name with its GCC copies noted, the table of rows
 * with their share bars (the top list, the drill-down's address view), the drill-down's title. */
#include "view_int.h"

#include "../report/baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int view_put_function(struct view *v, struct vbuf *b, int x, int y, uint8_t attr, uint8_t note_attr, const char *name)
{
    const char *shown = view_shown_name(v, name), *note = strrchr(shown, '[');
    size_t n = strlen(shown);
    if (shown == name || !note || note == shown || note[-1] != ' ' || shown[n - 1] != ']')
        return vb_put(b, x, y, attr, shown);
    x = vb_putf(b, x, y, attr, "%.*s", (int)(note - 1 - shown), shown); /* the copy's note dimmed */
    return vb_putf(b, x, y, note_attr, "%s", note - 1);
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

/* The columns the top list shows at a width, in the order drawn; narrow terminals lose them in a
 * stated order (the bar, then the interval, then samples, then the baseline's) before the name
 * gets fewer than NAME_MIN columns. */
#define NAME_MIN 20
struct columns {
    int bw;                /* the bar's width, 0: no bar */
    bool ci, samples, base, change, spark;
    int name_x;            /* where the name starts */
};

static int columns_width(const struct columns *c)
{
    int x = (c->bw ? c->bw + 1 : 0) + 8 + (c->ci ? 8 : 0) + (c->samples ? 10 : 0) + (c->base ? 8 : 0) +
            (c->change ? 9 : 0);
    return x + (c->base || c->change ? 0 : 1) + (c->spark ? SPARK + 2 : 0);
}

static struct columns columns_at(const struct view *v, int w, bool lines, bool diff)
{
    struct columns c = {w >= 100 ? 24 : (w >= 90 ? 16 : 10), true, true, diff, diff, false, 0};
    /* wide terminals: each row's share second by second, the last minute as a sparkline */
    c.spark = !lines && !diff && w >= 110 && view_history((struct view *)v)->len > 1;
    bool *drop[] = {NULL, &c.ci, &c.samples, &c.base, &c.change}; /* NULL: the bar */
    for (size_t i = 0; i < sizeof drop / sizeof *drop && w - columns_width(&c) < NAME_MIN; i++) {
        if (drop[i])
            *drop[i] = false;
        else
            c.bw = 0;
    }
    c.name_x = columns_width(&c);
    return c;
}

/* A column's title, right-aligned to end at column `end`, with the sort's arrow before it when the
 * list is sorted by it. */
static void column_title(struct view *v, struct vbuf *b, int end, int y, const char *title, int sort)
{
    const char *arrow = view_sort_descending(v) ? "\u25bc" : "\u25b2"; /* v ^ without UTF-8 (view.c) */
    bool sorted = v->sort == sort;
    char text[32];
    snprintf(text, sizeof text, "%s%s", sorted ? arrow : "", title);
    vb_put(b, end - vb_columns(text), y, sorted ? VA_KEY : VA_TITLE, text);
}

static void render_titles(struct view *v, struct vbuf *b, int y0, const struct columns *c, bool lines)
{
    vb_fill_attr(b, y0, VA_TITLE);
    if (c->bw)
        vb_put(b, 0, y0, VA_TITLE, "SHARE \u00b195%");
    int x = c->bw ? c->bw + 1 : 0;
    column_title(v, b, x + 7, y0, "%", VS_SHARE);
    x += 8;
    if (c->ci)
        column_title(v, b, x + 7, y0, "\u00b1%", VS_CI), x += 8;
    if (c->samples)
        column_title(v, b, x + 9, y0, "SAMPLES", -1), x += 10;
    if (c->base)
        column_title(v, b, x + 7, y0, "BASE%", VS_BASE), x += 8;
    if (c->change)
        column_title(v, b, x + 8, y0, "CHANGE", VS_CHANGE), x += 9;
    if (c->spark)
        vb_put(b, x + 1, y0, VA_TITLE, "LAST 60 s");
    bool by_name = v->sort == VS_NAME;
    int nx = vb_put(b, c->name_x, y0, by_name ? VA_KEY : VA_TITLE, lines ? "LINE" : "NAME");
    if (by_name)
        vb_put(b, nx, y0, VA_KEY, view_sort_descending(v) ? " \u25bc" : " \u25b2");
}

/* A row's figures in the columns shown; returns where the name goes. */
static int render_figures(struct view *v, struct vbuf *b, int y, const struct columns *c, const struct prof_row *row,
                          size_t n, uint8_t attr, bool sel)
{
    char samples[32];
    snprintf(samples, sizeof samples, row->samples == floor(row->samples) ? "%.0f" : "%.1f", row->samples);
    int x = vb_putf(b, c->bw ? c->bw + 1 : 0, y, attr, "%6.2f%% ", 100 * row->share);
    if (c->ci)
        x = vb_putf(b, x, y, attr, "%6.2f%% ", 100 * row->ci95);
    if (c->samples)
        x = vb_putf(b, x, y, attr, "%9s ", samples);
    if (c->base || c->change) {
        struct baseline_delta d = baseline_compare(row->samples, prof_total(view_current_prof(v)),
                                                   baseline_samples(v->base, row->name), v->base->total, n);
        if (c->base)
            x = vb_putf(b, x, y, attr, "%6.2f%% ", 100 * d.base_share);
        if (c->change)
            x = vb_putf(b, x, y, attr, "%+7.2f%s ", 100 * d.delta, d.significant ? "*" : " ");
        return x;
    }
    x = vb_put(b, x, y, attr, " ");
    if (c->spark) {
        x = sparkline(v, b, x, y, row->name, sel ? VA_SELECT : VA_BAR);
        x = vb_put(b, x, y, attr, "  ");
    }
    return x;
}

/* A row's file after its name: whole, or cut short with a mark when most of it fits, else left out (a cut
 * to a stump, "board_putc  de" at 40 columns, said nothing); returns the next x. */
static int file_note(const struct view *v, struct vbuf *b, int x, int y, uint8_t attr, const char *file)
{
    int room = b->w - x - 2, n = (int)strlen(file);
    bool ascii = true;
    for (const char *c = file; *c; c++)
        ascii &= (unsigned char)*c < 0x80;
    if (vb_columns(file) <= room)
        return vb_putf(b, x, y, attr, "  %s", file);
    if (ascii && room >= 8 && 3 * room >= 2 * n) /* most of it: its start, and the mark of the cut */
        return vb_putf(b, x, y, attr, "  %.*s%s", room - 1, file, v->unicode ? "\u2026" : "~");
    return x;
}

unsigned view_render_rows(struct view *v, struct vbuf *b, int y0, const struct prof_row *rows, size_t n, bool lines)
{
    bool diff = view_baseline(v) && !lines; /* by address never matches a baseline's grouping */
    struct columns c = columns_at(v, b->w, lines, diff);
    render_titles(v, b, y0, &c, lines);
    int rows_h = b->h - 1 - (y0 + 1);
    view_clamp_scroll(v, (int)n, rows_h);
    for (int r = 0; r < rows_h && (size_t)(v->top + r) < n; r++) {
        const struct prof_row *row = &rows[v->top + r];
        int y = y0 + 1 + r;
        bool sel = v->top + r == v->sel;
        bool zero = row->lo95 < row->share / 2; /* it may well be half as much: could be noise */
        if (c.bw)
            vb_bar(b, 0, y, c.bw, row->share, row->lo95, row->hi95, v->unicode);
        uint8_t attr = sel ? VA_SELECT : (zero ? VA_DIM : VA_NORMAL);
        char path[600];
        const char *name = lines ? row->name : view_shown_name(v, row->name);
        if (v->group == PROF_BY_FILE && !lines)
            name = view_fit_path(row->name, b->w - c.name_x, path, sizeof path);
        int x = render_figures(v, b, y, &c, row, n, attr, sel);
        if (v->group == PROF_BY_FUNCTION && !lines)
            x = view_put_function(v, b, x, y, attr, sel ? VA_SELECT : VA_DIM, row->name);
        else
            x = vb_put(b, x, y, attr, name);
        if (row->inlined && v->group == PROF_BY_FUNCTION && !lines)
            x = vb_putf(b, x, y, sel ? VA_SELECT : VA_DIM, " (inlined)");
        if (row->instances > 1) /* one row per task name: the task handles (tags) it had: a pool of workers, a task re-created in another block */
            x = vb_putf(b, x, y, sel ? VA_SELECT : VA_DIM, "  (%u task handles)", (unsigned)row->instances);
        const char *file = row->file && strcmp(row->file, "??") != 0 ? path_base(row->file) : NULL; /* "??": no DWARF */
        if (file && v->group == PROF_BY_FUNCTION)
            x = file_note(v, b, x, y, sel ? VA_SELECT : VA_DIM, file);
        if (row->approximate)
            x = vb_putf(b, x, y, VA_WARN, "  ~approx");
        if (lines && v->disasm) {
            uint32_t a = (uint32_t)strtoul(row->name, NULL, 16);
            if (a >= v->disasm_lo && (a - v->disasm_lo) / 2 < v->disasm_n && v->disasm[(a - v->disasm_lo) / 2])
                vb_putf(b, x, y, sel ? VA_SELECT : VA_BOLD, "  %s", v->disasm[(a - v->disasm_lo) / 2]);
        }
        if (sel)
            for (int cx = c.bw; cx < b->w; cx++)
                b->cells[y * b->w + cx].attr = VA_SELECT;
    }
    return (c.bw ? VIEW_SHOWN_BAR : 0u) | (c.ci ? VIEW_SHOWN_CI : 0u);
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
