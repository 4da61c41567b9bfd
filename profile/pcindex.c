/* Direct code-address index for the profile's counting (see pcindex.h). */
#include "pcindex.h"

#include <stdlib.h>
#include <string.h>

#define LEAF_CELLS (1u << PCIDX_LEAF_BITS)

bool pcidx_init(struct pc_index *x, uint32_t lo, uint32_t hi)
{
    memset(x, 0, sizeof *x);
    lo &= ~1u;
    if (hi <= lo || hi - lo > (512u << 20))
        return false;
    size_t halfwords = ((size_t)(hi - lo) + 1u) / 2u;
    size_t n = (halfwords + LEAF_CELLS - 1u) / LEAF_CELLS;
    x->leaves = calloc(n, sizeof *x->leaves);
    if (!x->leaves)
        return false;
    x->lo = lo;
    x->span = hi - lo;
    x->n_leaves = n;
    return true;
}

void pcidx_free(struct pc_index *x)
{
    for (size_t i = 0; i < x->n_leaves; i++)
        free(x->leaves[i]);
    free(x->leaves);
    memset(x, 0, sizeof *x);
}

void pcidx_clear(struct pc_index *x)
{
    for (size_t i = 0; i < x->n_leaves; i++)
        if (x->leaves[i])
            memset(x->leaves[i], 0, LEAF_CELLS * sizeof **x->leaves);
}

uint32_t *pcidx_cell_slow(struct pc_index *x, uint32_t pc)
{
    uint32_t off = pc - x->lo;
    if (off >= x->span || (off & 1u))
        return NULL;
    uint32_t h = off >> 1;
    uint32_t **leaf = &x->leaves[h >> PCIDX_LEAF_BITS];
    if (!*leaf && !(*leaf = calloc(LEAF_CELLS, sizeof **leaf)))
        return NULL;
    return &(*leaf)[h & (LEAF_CELLS - 1u)];
}

bool pcidx_drain(struct pc_index *x, bool (*take)(void *ctx, uint32_t pc, uint32_t count), void *ctx)
{
    bool all = true;
    for (size_t i = 0; i < x->n_leaves; i++) {
        uint32_t *leaf = x->leaves[i];
        if (!leaf)
            continue;
        for (uint32_t k = 0; k < LEAF_CELLS; k++)
            if (leaf[k]) {
                if (take(ctx, x->lo + 2u * (uint32_t)(i * LEAF_CELLS + k), leaf[k]))
                    leaf[k] = 0;
                else
                    all = false;
            }
    }
    return all;
}
