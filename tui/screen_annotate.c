/* The annotate screen (key a in the drill-down), as perf annotate reads: the function's
 * instructions from the ELF (disassembled by objdump) under the source lines they come from, each
 * with its share of the function and of all samples, and a skid mark where an instruction
 * follows one that re-enables interrupts. */
#include "view_int.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp_addr_row(const void *a, const void *b)
{
    uint32_t x = ((const uint32_t *)a)[0], y = ((const uint32_t *)b)[0];
    return x < y ? -1 : x > y;
}

void view_render_annotate(struct view *v, struct vbuf *b, int y0)
{
    const struct prof_row *ar;
    size_t na = prof_rows_of(view_current_prof(v), PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
    uint32_t(*counts)[2] = malloc((na + 1) * sizeof *counts); /* address, samples: sorted for lookups */
    double fsum = 0, total = prof_total(view_current_prof(v));
    for (size_t i = 0; counts && i < na; i++) {
        counts[i][0] = (uint32_t)strtoul(ar[i].name, NULL, 16);
        counts[i][1] = (uint32_t)ar[i].samples;
        fsum += ar[i].samples;
    }
    if (counts)
        qsort(counts, na, sizeof *counts, cmp_addr_row);
    char stats[80];
    snprintf(stats, sizeof stats, "   annotate: %.0f samples, %.2f%% of all", fsum, total ? 100 * fsum / total : 0);
    view_title(v, b, y0, stats, "");
    int list_h = b->h - 1 - (y0 + 1) - 1;
    if (!v->annot_n) {
        vb_put(b, 0, y0 + 1, VA_WARN,
               na ? "no instructions: arm-none-eabi-objdump did not disassemble this range" : "no samples in this function");
        free(counts);
        return;
    }
    view_clamp_scroll(v, v->annot_n, list_h);
    int bw = b->w >= 100 ? 10 : 5;
    for (int r = 0; r < list_h && v->top + r < v->annot_n; r++) {
        const struct annot_row *row = &v->annot[v->top + r];
        int y = y0 + 1 + r;
        bool sel = v->top + r == v->sel;
        if (row->heading) { /* another symbol of the function (f.cold after f): its name */
            vb_putf(b, bw + 17, y, sel ? VA_SELECT : VA_TITLE, "<%s>", row->text);
        } else if (!row->addr) { /* a source line: the instructions below come from it */
            vb_putf(b, bw + 17, y, sel ? VA_SELECT : VA_BOLD, "%5u  %s", row->line, row->text);
        } else {
            uint32_t key[2] = {row->addr, 0};
            const uint32_t *hit = counts ? bsearch(key, counts, na, sizeof *counts, cmp_addr_row) : NULL;
            double samples = hit ? hit[1] : 0;
            if (samples > 0) {
                vb_bar(b, 0, y, bw, fsum ? samples / fsum : 0, 0, 0, v->unicode);
                vb_putf(b, bw, y, sel ? VA_SELECT : VA_BOLD, " %6.2f%% %6.2f%%", fsum ? 100 * samples / fsum : 0,
                        total ? 100 * samples / total : 0);
            }
            int x = vb_putf(b, bw + 17, y, sel ? VA_SELECT : (samples > 0 ? VA_NORMAL : VA_DIM), "  %08x: %s",
                            row->addr, row->text);
            const char *cause = samples > 0 ? prof_skid_cause(view_current_prof(v), row->addr) : NULL;
            if (cause) /* the samples here include time before it, with interrupts disabled */
                vb_putf(b, x, y, VA_WARN, "  \u25c0 skid: after '%s'", cause);
        }
        if (sel)
            for (int cx = bw; cx < b->w; cx++)
                b->cells[y * b->w + cx].attr = VA_SELECT;
    }
    vb_putf(b, 0, b->h - 2, VA_DIM, "%%: of this function's samples, then of all; %d rows; a: source lines",
            v->annot_n);
    free(counts);
}
