/* Test helper: decoded PCs matched in order against those sent, for decoders fed damaged streams. */
#ifndef PC_MATCH_H
#define PC_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How many of got[] match sent[] in order, each at most `ahead` past the last match; *stray: those that
 * match none (read from the bytes of two packets, or of a slipped frame); wrong[g] (when given) marks them. */
static size_t pcs_in_order(const uint32_t *sent, size_t n_sent, const uint32_t *got, size_t n_got, size_t ahead,
                           size_t *stray, bool *wrong)
{
    size_t w = 0, m = 0;
    *stray = 0;
    for (size_t g = 0; g < n_got; g++) {
        size_t k = w;
        while (k < n_sent && k < w + ahead && sent[k] != got[g])
            k++;
        bool found = k < n_sent && sent[k] == got[g];
        if (wrong)
            wrong[g] = !found;
        m += found;
        *stray += !found;
        w = found ? k + 1 : w;
    }
    return m;
}

#endif
