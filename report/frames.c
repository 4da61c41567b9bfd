/* Frames of a counted place (see frames.h). */
#include "frames.h"

#include <string.h>

size_t frames_of(struct sym_table *syms, const struct prof_sample *s, struct frame *out, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k <= s->n_callers && n < max; k++) {
        uint32_t a = k ? s->callers[k - 1] : s->pc;
        if (k && a == PROF_UNPROVEN_PC) { /* a walk that ended unproven: its mark, never an address (a PC read
                                           * as 0xFFFFFFFF is the sample's own: named as the other exports do) */
            out[n++] = (struct frame){a, PROF_STACK_UNPROVEN, NULL, 0, false};
            continue;
        }
        const struct sym_location *loc = syms ? sym_lookup(syms, a) : NULL;
        if (!loc || !loc->known) {
            out[n++] = (struct frame){a, NULL, NULL, 0, false};
            continue;
        }
        for (uint32_t f = 0; f < loc->n_frames && n < max; f++) {
            const struct sym_frame *fr = sym_frame_at(loc, f);
            out[n++] = (struct frame){a, fr->function, fr->file, fr->line, f + 1 < loc->n_frames};
        }
    }
    return n;
}

uint32_t frames_start_line(struct sym_table *syms, uint32_t addr, const char *function)
{
    const struct sym_location *loc = syms ? sym_lookup(syms, addr) : NULL;
    if (!loc || !loc->known || !loc->symbol)
        return 0;
    const struct sym_location *entry = sym_lookup(syms, loc->symbol_start);
    if (!entry || !entry->known)
        return 0;
    const struct sym_frame *outer = sym_frame_at(entry, entry->n_frames - 1);
    return strcmp(outer->function, function) == 0 ? outer->line : 0;
}
