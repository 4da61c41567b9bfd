/* Sample counters indexed directly by code address: two array reads per sample, no hashing.
 * It covers one address range (the ELF's code) in leaves of 4096 halfwords, allocated as samples
 * first land in them, so a large range costs only what is sampled. Even addresses only: a Thumb
 * or A32 instruction never starts at an odd one, and odd PCs go to the profile's hash. The
 * profile drains the counters into its entries before it reads them. */
#ifndef CMPROF_PROFILE_PCINDEX_H
#define CMPROF_PROFILE_PCINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCIDX_LEAF_BITS 12u

struct pc_index {
    uint32_t lo;       /* even */
    uint32_t span;     /* bytes covered from lo; 0: no index */
    uint32_t **leaves; /* span / 2 >> PCIDX_LEAF_BITS of them, NULL until used */
    size_t n_leaves;
};

/* Cover [lo, hi); false (and no index) when out of memory or wider than 512 MB. */
bool pcidx_init(struct pc_index *x, uint32_t lo, uint32_t hi);
void pcidx_free(struct pc_index *x);
/* Forget every cell (the profile's slots moved or were freed); leaves stay allocated. */
void pcidx_clear(struct pc_index *x);
/* The cell of an address, allocating its leaf: NULL outside the range, for odd addresses, or
 * when out of memory. A cell is a count. */
uint32_t *pcidx_cell_slow(struct pc_index *x, uint32_t pc);
/* Hand every non-zero cell to take(ctx, pc, count); cells it took (returned true) become 0.
 * Returns whether it took them all. */
bool pcidx_drain(struct pc_index *x, bool (*take)(void *ctx, uint32_t pc, uint32_t count), void *ctx);

/* The cell of pc in an index given by its fields, or NULL (see pcidx_cell). */
static inline uint32_t *pcidx_cell_of(uint32_t lo, uint32_t span, uint32_t *const *leaves, uint32_t pc)
{
    uint32_t off = pc - lo;
    if (off >= span || (off & 1u))
        return NULL;
    uint32_t h = off >> 1;
    uint32_t *leaf = leaves[h >> PCIDX_LEAF_BITS];
    return leaf ? &leaf[h & ((1u << PCIDX_LEAF_BITS) - 1u)] : NULL;
}

/* The cell of an address whose leaf exists, else NULL (then ask pcidx_cell_slow). */
static inline uint32_t *pcidx_cell(const struct pc_index *x, uint32_t pc)
{
    return pcidx_cell_of(x->lo, x->span, x->leaves, pc);
}

/* Count a run of PCs while each has a cell that counts (not UINT32_MAX); returns how many it
 * counted, stopping at the first that needs the slow path. The fields are read once: to the
 * compiler, a store through a cell might change them, and pcidx_cell would reread them after
 * every sample. */
static inline size_t pcidx_count_run(const struct pc_index *x, const uint32_t *pcs, size_t n)
{
    const uint32_t lo = x->lo, span = x->span;
    uint32_t *const *const leaves = x->leaves;
    size_t i = 0;
    for (uint32_t *cell; i < n && (cell = pcidx_cell_of(lo, span, leaves, pcs[i])) && *cell != UINT32_MAX; i++)
        ++*cell;
    return i;
}

#endif
