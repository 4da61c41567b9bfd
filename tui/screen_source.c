/* The drill-down screen: a function's own source lines with their shares, or its instructions
 * when the source is not at hand (drill.c loads them). */
#include "view_int.h"

#include <stdio.h>
#include <string.h>

static void chain_line(struct view *v, struct vbuf *b, int y, uint32_t pc)
{
    const struct sym_location *loc = pc && v->syms ? sym_lookup(v->syms, pc) : NULL;
    if (!loc || !loc->known)
        return;
    int x = vb_putf(b, 0, y, VA_BOLD, "at 0x%08x: ", pc);
    for (uint32_t k = 0; k < loc->n_frames; k++)
        x = vb_putf(b, x, y, VA_NORMAL, "%s%s (%s:%u)", k ? " \u2190 " : "", /* named as the list names it */
                    sym_shown_name(v->syms, sym_frame_at(loc, k)->function, v->demangle),
                    path_base(sym_frame_at(loc, k)->file), sym_frame_at(loc, k)->line);
}

void view_render_source(struct view *v, struct vbuf *b, int y0)
{
    struct prof *cur = view_current_prof(v); /* the window's counts under w, as in the list */
    const struct prof_row *rows;
    size_t n = prof_rows_of(cur, PROF_BY_LINE, v->inline_frames, v->func, &rows);
    double fsum = 0;
    for (size_t i = 0; i < n; i++)
        fsum += rows[i].samples;
    double total = prof_total(cur);
    char stats[80];
    snprintf(stats, sizeof stats, "   %.0f samples, %.2f%%", fsum, total ? 100 * fsum / total : 0);
    view_title(v, b, y0, stats, v->n_src_lines ? path_base(v->src_path) : "");
    int list_h = b->h - 1 - (y0 + 1) - 3;
    if (!v->n_src_lines) { /* address view */
        vb_put(b, 0, y0 + 1, VA_WARN, v->src_missing);
        const struct prof_row *ar;
        size_t na = prof_rows_of(cur, PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
        view_render_rows(v, b, y0 + 2, ar, na, true);
        return;
    }
    view_clamp_scroll(v, v->src_n, list_h);
    int bw = b->w >= 80 ? 10 : b->w >= 60 ? 5 : 0; /* narrow, the bar gives way to the source text */
    for (int r = 0; r < list_h && v->top + r < v->src_n; r++) {
        int line = v->src_first + v->top + r + 1, y = y0 + 1 + r;
        double samples = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i].line == (uint32_t)line && rows[i].file && strcmp(path_base(rows[i].file), path_base(v->src_path)) == 0)
                samples += rows[i].samples;
        bool sel = v->top + r == v->sel;
        if (samples > 0) { /* the share within the function, its bar, and the share of all samples */
            vb_bar(b, 0, y, bw, fsum ? samples / fsum : 0, 0, 0, v->unicode);
            vb_putf(b, bw, y, sel ? VA_SELECT : VA_BOLD, " %6.2f%% %6.2f%%", fsum ? 100 * samples / fsum : 0,
                 total ? 100 * samples / total : 0);
        }
        vb_putf(b, bw + 17, y, sel ? VA_SELECT : (samples > 0 ? VA_BOLD : VA_DIM), "%5d  %s", line,
             v->src_lines[line - 1]);
        if (sel)
            for (int cx = bw; cx < b->w; cx++)
                b->cells[y * b->w + cx].attr = VA_SELECT;
    }
    vb_putf(b, 0, b->h - 4, VA_DIM, "%%: of this function's samples, then of all; lines %d-%d of %s",
         v->src_first + 1, v->src_first + v->src_n, path_base(v->src_path));
    uint32_t pc = prof_top_pc(cur, v->inline_frames, v->func, (uint32_t)(v->src_first + v->sel) + 1);
    vb_put(b, 0, b->h - 3, VA_TITLE, "inline chain of the selected line:");
    if (pc)
        chain_line(v, b, b->h - 2, pc);
    else
        vb_put(b, 0, b->h - 2, VA_DIM, "no samples on this line");
}
