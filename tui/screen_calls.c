/* The call screen (key c): who calls the selected function and what it calls, from the samples'
 * call stacks (the firmware sampler's stack evidence, CMPROF_STACKS=1, or a gdb: source's walks
 * while the core is halted), each with its share and 95 % interval. Enter follows a row to that
 * function's own callers and callees (rows.c). */
#include "view_int.h"

#include <stdio.h>

/* One list, its rows numbered from first_index for the selection; *count: how many it has.
 * Returns the next free row. */
static int list(struct view *v, struct vbuf *b, int y, int bottom, bool up, int first_index, size_t *count)
{
    struct prof *p = view_current_prof(v);
    const struct prof_call *c;
    double total;
    size_t n = prof_calls(p, v->calls_func, up, &c, &total);
    *count = n;
    const char *fn = view_shown_name(v, v->calls_func);
    if (up) { /* the title names the function: a narrow screen says less, not half */
        char full[400], brief[64];
        snprintf(full, sizeof full, "called by (%.0f samples with %s on their stack)", total, fn);
        snprintf(brief, sizeof brief, "called by (%.0f samples)", total);
        vb_put_fit(b, 0, y++, VA_BOLD, (const char *const[]){full, brief}, 2);
    } else
        vb_putf(b, 0, y++, VA_BOLD, "%s calls", fn);
    /* the name comes last and matters most: as the screen narrows the bar goes first, then the
     * interval (at 40 columns they left no room for it) */
    int bar = b->w >= 100 ? 24 : b->w >= 70 ? 12 : 0;
    for (size_t k = 0; k < n && y < bottom; k++, y++) {
        int idx = first_index + (int)k;
        uint8_t attr = idx == v->sel ? VA_SELECT : VA_NORMAL;
        if (bar)
            vb_bar(b, 0, y, bar, c[k].share, c[k].lo95, c[k].hi95, v->unicode);
        int x = b->w >= 50 ? vb_putf(b, bar, y, attr, " %6.2f%% [%5.1f-%5.1f] %8.0f  ", 100 * c[k].share,
                                     100 * c[k].lo95, 100 * c[k].hi95, c[k].samples)
                           : vb_putf(b, bar, y, attr, " %6.2f%% %8.0f  ", 100 * c[k].share, c[k].samples);
        view_put_function(v, b, x, y, attr, idx == v->sel ? VA_SELECT : VA_DIM, c[k].name);
    }
    if (!n && y < bottom)
        vb_put(b, 2, y++, VA_DIM, "-");
    return y + 1;
}

void view_render_calls(struct view *v, struct vbuf *b, int y0)
{
    struct prof *p = view_current_prof(v);
    view_put_function(v, b, vb_put(b, 0, y0, VA_TITLE, "calls of "), y0, VA_TITLE, VA_TITLE, v->calls_func);
    vb_fill_attr(b, y0, VA_TITLE);
    if (!prof_has_stacks(p)) {
        char why[300] = "";
        if (v->in) /* a stream: whether its firmware sent stack evidence, and why none was used */
            ingest_stacks_note(v->in, why, sizeof why);
        /* word-wrapped: its advice (how to get stacks) comes last, and one line cut at the width lost it */
        vb_wrap(b, y0 + 1, VA_DIM, *why ? why : "no call stacks: they come from the firmware sampler's stack evidence "
                                               "(CMPROF_STACKS=1) or from a gdb: source, walked while the core is "
                                               "halted (--stack-depth N, default 16)");
        return;
    }
    size_t up, down;
    int bottom = b->h - 2;
    int y = list(v, b, y0 + 1, bottom, true, 0, &up); /* the callers' count numbers the callees */
    if (y < bottom)
        list(v, b, y, bottom, false, (int)up, &down);
}
