/* The annotate screen (key a in the drill-down), as perf annotate reads: the function's
 * instructions from the ELF (disassembled by objdump) under the source lines they come from, each
 * with its share of the function and of all samples, and a skid mark where an instruction
 * follows one that re-enables interrupts. */
#include "draw.h"
#include "view_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void view_free_annotate(struct view *v)
{
    for (int i = 0; i < v->annot_n; i++)
        free(v->annot[i].text);
    free(v->annot);
    v->annot = NULL;
    v->annot_n = 0;
}

static bool push_row(struct view *v, int *cap, uint32_t addr, uint32_t line, const char *text)
{
    if (v->annot_n == *cap) {
        int n = *cap ? *cap * 2 : 256;
        struct annot_row *r = realloc(v->annot, (size_t)n * sizeof *r);
        if (!r)
            return false;
        v->annot = r;
        *cap = n;
    }
    char *copy = strdup(text);
    if (!copy)
        return false;
    v->annot[v->annot_n++] = (struct annot_row){addr, line, copy};
    return true;
}

/* The function's address range: its ELF symbol when the samples lie inside one of that name,
 * else (an inlined function, spread over its callers) the span of its sampled addresses. */
static bool function_range(struct view *v, uint32_t *lo, uint32_t *hi)
{
    const struct prof_row *ar;
    size_t na = prof_rows_of(v->prof, PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
    *lo = UINT32_MAX;
    *hi = 0;
    for (size_t i = 0; i < na; i++) {
        uint32_t a = (uint32_t)strtoul(ar[i].name, NULL, 16);
        *lo = a < *lo ? a : *lo;
        *hi = a > *hi ? a : *hi;
    }
    if (!na)
        return false;
    uint32_t flo, fhi;
    const struct sym_location *l = v->syms ? sym_lookup(v->syms, *lo) : NULL;
    if (l && l->symbol && strcmp(view_shown_name(v, l->symbol), view_shown_name(v, v->func)) == 0 &&
        sym_function_from(v->syms, *lo, &flo, &fhi) && flo <= *lo && *hi < fhi) {
        *lo = flo;
        *hi = fhi;
    } else {
        *hi += 4;
    }
    *lo &= ~1u;
    if (*hi - *lo > 65536)
        *hi = *lo + 65536; /* objdump's output for one screen: a huge function is cut */
    return true;
}

void view_build_annotate(struct view *v)
{
    view_free_annotate(v);
    uint32_t lo, hi;
    if (!function_range(v, &lo, &hi))
        return;
    view_load_disasm(v, lo, hi);
    int cap = 0;
    const char *prev_file = NULL;
    uint32_t prev_line = 0;
    for (uint32_t i = 0; i < v->disasm_n; i++) {
        if (!v->disasm[i])
            continue;
        uint32_t addr = v->disasm_lo + 2 * i;
        const struct sym_location *l = v->syms ? sym_lookup(v->syms, addr) : NULL;
        const char *file = l && l->known ? sym_frame_at(l, 0)->file : "??";
        uint32_t line = l && l->known ? sym_frame_at(l, 0)->line : 0;
        if (file != prev_file || line != prev_line) { /* the source line these instructions come from */
            char text[1200];
            bool here = v->n_src_lines && line >= 1 && (int)line <= v->n_src_lines &&
                        strcmp(view_base_name(file), view_base_name(v->src_path)) == 0;
            if (here)
                snprintf(text, sizeof text, "%s", v->src_lines[line - 1]);
            else
                snprintf(text, sizeof text, "%s:%u", view_base_name(file), line);
            if (!push_row(v, &cap, 0, line, text))
                return;
            prev_file = file;
            prev_line = line;
        }
        if (!push_row(v, &cap, addr, line, v->disasm[i]))
            return;
    }
}

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
        if (!row->addr) { /* a source line: the instructions below come from it */
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
