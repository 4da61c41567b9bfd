/* Compilation units on demand: the unit index, and loading the units an address needs, each batch
 * read by the reader that suits it and merged into the table (merge.c). */
#include "units.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading units on demand -------------------------------------------------------------- */

/* libdwarf, for the units the fast reader leaves (or all of them, without it): in this process,
 * or in the child, started the first time it is needed. */
static bool fetch_libdwarf(struct sym_table *t, struct sym_stage *stage, const struct unit_ref *refs, size_t n)
{
    symt_symbols_wait(t); /* (libdwarf, here or in a child, only once the symbol table's thread is done) */
    if (t->src.isolated && !t->src.dead && !t->src.child && !isolate_start(t, t->path, false))
        t->src.isolated = false; /* no child possible: read here, unprotected */
    if (!t->src.isolated) {
        if (!t->src.reader) {
            char why[160];
            bool has;
            t->src.reader = ldw_open(t->path, &has, why, sizeof why);
            struct sym_stage scratch = {0}; /* the reader learns the units; the table has its index */
            struct strpool scratch_strings = {0};
            bool indexed = t->src.reader && ldw_index(t->src.reader, &scratch, &scratch_strings);
            symt_stage_free(&scratch);
            symt_arena_free(&scratch_strings.arena);
            free(scratch_strings.slots);
            if (!indexed)
                return false;
        }
        return ldw_load_units(t->src.reader, stage, &t->strings, refs, n);
    }
    return !t->src.dead && isolate_fetch(t, stage, refs, n);
}

/* Load units ids[0..n) (all unloaded) and merge them; false only when out of memory. on_demand:
 * as merge_stage's. */
static bool load_units(struct sym_table *t, const uint32_t *ids, size_t n, bool on_demand)
{
    struct unit_ref *refs = malloc((n + 1) * sizeof *refs);
    bool *read = calloc(n + 1, sizeof *read);
    bool ok = refs && read;
    for (size_t i = 0; ok && i < n; i++)
        refs[i] = (struct unit_ref){ids[i] < t->unit_hdrs.n ? t->unit_hdrs.v[ids[i]] : 0, ids[i], 0};
    if (ok && t->src.raw) {
        struct sym_stage stage = {0}, second = {0};
        struct unit_reader fast = {raw_read, t->src.raw, 2};
        ok = symt_read_units(&fast, &stage, &second, &t->strings, refs, n, read) &&
             symt_merge_stage(t, &stage, on_demand) && symt_merge_stage(t, &second, on_demand);
        symt_stage_free(&stage);
        symt_stage_free(&second);
    }
    size_t rest = 0; /* what the fast reader left, for libdwarf */
    for (size_t i = 0; ok && i < n; i++)
        if (!read[i])
            refs[rest++] = refs[i];
    if (ok && rest) {
        struct sym_stage stage = {0};
        bool fetched = fetch_libdwarf(t, &stage, refs, rest);
        if (fetched)
            ok = symt_merge_stage(t, &stage, on_demand);
        for (size_t i = 0; i < rest; i++)
            t->unit_state[refs[i].id] = fetched && ok ? UNIT_LOADED : UNIT_FAILED;
        if (stage.dwarf_error[0] && !t->dwarf_error[0])
            memcpy(t->dwarf_error, stage.dwarf_error, sizeof t->dwarf_error);
        symt_stage_free(&stage);
    }
    for (size_t i = 0; i < n; i++)
        if (read && read[i]) {
            t->unit_state[ids[i]] = ok ? UNIT_LOADED : UNIT_FAILED;
            t->units_fast++;
        }
        else if (!ok)
            t->unit_state[ids[i]] = UNIT_FAILED;
    t->units_loaded += n;
    for (size_t i = 0; t->src.raw && i < n; i++) /* units indexed from .debug_aranges: their names now */
        if (ids[i] < t->cu_names.n && !t->cu_names.v[ids[i]])
            t->cu_names.v[ids[i]] = raw_unit_name(t->src.raw, t->unit_hdrs.v[ids[i]], &t->strings);
    free(refs);
    free(read);
    symt_symbols_wait(t);
    symt_set_warning(t);
    return ok;
}

bool symt_units_ready(struct sym_table *t)
{
    if (t->n_units && !(t->unit_state = calloc(t->n_units, 1)))
        return false;
    /* stable, by lo alone: a radix sort (one range per function, tens of thousands on big ELFs) */
    if (!symt_sort_by_u32(t->unit_ranges.v, t->unit_ranges.n, sizeof *t->unit_ranges.v,
                          offsetof(struct unit_range, lo)))
        return false;
    t->unit_max_hi = symt_running_max(t->unit_ranges.v, t->unit_ranges.n, sizeof *t->unit_ranges.v,
                                 offsetof(struct unit_range, hi));
    if (!t->unit_max_hi)
        return false;
    /* a unit that states no addresses could hold any: it is read now */
    bool *ranged = calloc(t->n_units + 1, sizeof *ranged);
    uint32_t *ids = calloc(t->n_units + 1, sizeof *ids);
    size_t n = 0;
    bool ok = ranged && ids;
    for (size_t i = 0; ok && i < t->unit_ranges.n; i++)
        ranged[t->unit_ranges.v[i].unit] = true;
    for (size_t u = 0; ok && u < t->n_units; u++)
        if (!ranged[u])
            ids[n++] = (uint32_t)u;
    ok = ok && (n == 0 || load_units(t, ids, n, false));
    free(ranged);
    free(ids);
    return ok;
}

/* Add the unloaded units that cover addr to ids (room for cap), each once: mark (one byte per
 * unit) remembers them across many addresses; without it (one address, a few units) ids is
 * searched. False when ids had no room for them all. */
static bool units_covering(const struct sym_table *t, uint32_t addr, uint8_t *mark, uint32_t *ids, size_t *n,
                           size_t cap, long *hint)
{
    long i = hint ? (*hint = LAST_LE_FROM(t->unit_ranges.v, t->unit_ranges.n, addr, lo, *hint))
                  : LAST_LE(t->unit_ranges.v, t->unit_ranges.n, addr, lo);
    for (; i >= 0 && t->unit_max_hi[i] > addr; i--) {
        const struct unit_range *r = &t->unit_ranges.v[i];
        if (addr >= r->hi || t->unit_state[r->unit] != UNIT_UNLOADED)
            continue;
        bool seen = false;
        if (mark) {
            seen = mark[r->unit] != 0;
            mark[r->unit] = 1;
        }
        for (size_t k = 0; !mark && k < *n && !seen; k++)
            seen = ids[k] == r->unit;
        if (seen)
            continue;
        if (*n == cap)
            return false;
        ids[(*n)++] = r->unit;
    }
    return true;
}

/* Does no unit range after ranges[0..i] start at or below x? (ranges sorted by start) */
static bool none_starts_by(const struct sym_table *t, long i, uint32_t x)
{
    return (size_t)(i + 1) >= t->unit_ranges.n || t->unit_ranges.v[i + 1].lo > x;
}

bool symt_units_between(const struct sym_table *t, uint32_t a, uint32_t b, long *hint)
{
    if (!t->n_units || t->units_loaded == t->n_units)
        return true;
    /* a range over an address in (a, b) that does not cover a starts in (a, b) */
    return none_starts_by(t, *hint = LAST_LE_FROM(t->unit_ranges.v, t->unit_ranges.n, a, lo, *hint), b - 1);
}

static bool require_all(struct sym_table *t, const uint32_t *addrs, size_t n_addrs)
{
    if (!t->n_units || t->units_loaded == t->n_units)
        return true;
    uint8_t *mark = calloc(t->n_units, 1);
    uint32_t *ids = malloc(t->n_units * sizeof *ids);
    size_t n = 0;
    bool ok = mark && ids;
    if (ok) {
        long hint = -1; /* addresses often come sorted: each search starts where the last ended */
        uint32_t prev = 0;
        for (size_t k = 0; k < n_addrs; k++) {
            uint32_t addr = addrs[k] & ~1u;
            /* above the last address but below the next range's start: covered by no range that did
             * not cover the last one, so nothing new to read */
            bool same = hint >= 0 && addr >= prev && none_starts_by(t, hint, addr);
            prev = addr;
            if (!same)
                units_covering(t, addr, mark, ids, &n, t->n_units, &hint); /* each unit once: never full */
        }
        if (n)
            load_units(t, ids, n, true);
    }
    free(mark);
    free(ids);
    return ok;
}

bool symt_require_many(struct sym_table *t, const uint32_t *addrs, size_t n)
{
    return require_all(t, addrs, n);
}

/* One address, on every first lookup of it: no allocation when its units are read already. */
void symt_require(struct sym_table *t, uint32_t addr)
{
    if (!t->n_units || t->units_loaded == t->n_units)
        return;
    uint32_t ids[16];
    size_t n = 0;
    if (!units_covering(t, addr & ~1u, NULL, ids, &n, sizeof ids / sizeof ids[0], NULL))
        require_all(t, &addr, 1); /* more units over one address than fit here (damaged DWARF) */
    else if (n)
        load_units(t, ids, n, true);
}

void sym_prefetch(struct sym_table *t, const uint32_t *addrs, size_t n)
{
    require_all(t, addrs, n);
}

void sym_read_all(struct sym_table *t)
{
    uint32_t *ids = malloc((t->n_units + 1) * sizeof *ids);
    size_t n = 0;
    for (size_t u = 0; ids && u < t->n_units; u++)
        if (t->unit_state[u] == UNIT_UNLOADED)
            ids[n++] = (uint32_t)u;
    if (n)
        load_units(t, ids, n, true);
    free(ids);
}
