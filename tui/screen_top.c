/* The top screen: one row per function, line, file or task, with its share and interval. */
#include "view_int.h"

#include "../profile/starved.h"

#include <stdio.h>
#include <string.h>

/* Why there is nothing to show yet, as precisely as the input allows: never a bare "waiting". */
static void why_empty(const struct view *v, char *buf, size_t len)
{
    if (v->window_mode && prof_total(v->prof) > 0)
        snprintf(buf, len, "no samples in the last window yet");
    else
        ingest_waiting(v->in, buf, len);
}

/* Connected a while and still nothing (no samples waiting for an announce either): what starves a
 * drain, or keeps the sampler off. False when that is not the case. */
static bool why_starved(const struct view *v, char *buf, size_t len)
{
    struct ingest_counts c;
    ingest_counts(v->in, &c);
    if (!v->st.state || strncmp(v->st.state, "connected", 9) != 0 || v->st.elapsed < STARVED_AFTER_S ||
        c.samples > 0 || c.no_base || (c.format == DETECT_UNKNOWN && c.bytes > 0))
        return false;
    starved_hint(v->in, v->st.elapsed, (enum starved_from)v->st.starved_from, buf, len);
    return *buf != '\0';
}

/* The table's legend: only what the table had room for (narrow, no bar or interval column: their words
 * named what was not on the screen), its parts whole or not at all. */
static void legend(const struct view *v, struct vbuf *b, unsigned shown)
{
    int x = 0, y = b->h - 2;
    if (shown & VIEW_SHOWN_BAR) {
        x = vb_put(b, 0, y, VA_BAR, v->unicode ? "\u2588" : "#");
        x = vb_put(b, x, y, VA_DIM, " share  ");
        x = vb_put(b, x, y, VA_CI, v->unicode ? "\u2591" : "-");
    }
    const char *const parts[] = {shown & VIEW_SHOWN_BAR ? " its 95 % interval" : NULL,
                                 shown & VIEW_SHOWN_CI ? "\u00b1% half its width" : NULL, "dim: may be noise"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (!parts[i])
            continue;
        const char *sep = i > 0 && x > 0 ? "  " : "";
        if (x + (int)strlen(sep) + vb_columns(parts[i]) > b->w) /* narrow, the last ones go */
            break;
        x = vb_put(b, vb_put(b, x, y, VA_DIM, sep), y, VA_DIM, parts[i]);
    }
}

void view_render_top(struct view *v, struct vbuf *b, int y0)
{
    const struct prof_row *rows;
    size_t n = view_top_rows(v, &rows);
    if (prof_total(view_current_prof(v)) == 0) {
        char why[600];
        why_empty(v, why, sizeof why);
        int y = vb_wrap(b, y0 + 1, VA_DIM, why);
        if (why_starved(v, why, sizeof why))
            vb_wrap(b, y + 1, VA_DIM, why);
        return;
    }
    b->h--; /* the table's last line: the legend, once */
    unsigned shown = view_render_rows(v, b, y0, rows, n, false);
    b->h++;
    if (v->group == PROF_BY_TASK && prof_rows_untagged(rows, n)) /* (the legend's place: why one row) */
        vb_put(b, 0, b->h - 2, VA_DIM, b->w >= 48 ? "no task tags: build the firmware with CMPROF_TAG"
                                                  : "no task tags (CMPROF_TAG)");
    else
        legend(v, b, shown);
}
