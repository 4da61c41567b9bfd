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
    symt_funcs_wait(t); /* (libdwarf, here or in a child, only once the symbol table's thread is done) */
    if (t->load->src.isolated && !t->load->src.dead && !t->load->src.child && !isolate_start(t, t->load->path, false))
        t->load->src.isolated = false; /* no child possible: read here, unprotected */
    if (!t->load->src.isolated) {
        if (!t->load->src.reader) {
            char why[160];
            bool has;
            t->load->src.reader = ldw_open(t->load->path, &has, why, sizeof why);
            struct sym_stage scratch = {0}; /* the reader learns the units; the table has its index */
            struct strpool scratch_strings = {0};
            bool indexed = t->load->src.reader && ldw_index(t->load->src.reader, &scratch, &scratch_strings);
            symt_stage_free(&scratch);
            symt_arena_free(&scratch_strings.arena);
            free(scratch_strings.slots);
            if (!indexed)
                return false;
        }
        return ldw_load_units(t->load->src.reader, stage, &t->strings, refs, n);
    }
    return !t->load->src.dead && isolate_fetch(t, stage, refs, n);
}

/* The fast reader for a batch: each unit whose ranges are given in win (sorted by unit) is read
 * over those alone, any other in whole. */
struct windowed {
    struct raw_dwarf *raw;
    const struct unit_range *win;
    size_t n_win;
};

static enum read_result read_windowed(void *ctx, int worker, struct sym_stage *stage, struct strpool *pool,
                                      const struct unit_ref *ref, struct cu_files *files)
{
    const struct windowed *w = ctx;
    size_t a = 0, b = w->n_win;
    while (a < b) { /* the first window of the unit */
        size_t m = a + (b - a) / 2;
        if (w->win[m].unit < ref->id)
            a = m + 1;
        else
            b = m;
    }
    size_t e = a;
    while (e < w->n_win && w->win[e].unit == ref->id)
        e++;
    return raw_read_part(w->raw, worker, stage, pool, ref, files, w->win + a, e - a);
}

static int cmp_window(const void *a, const void *b)
{
    const struct unit_range *x = a, *y = b;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return x->lo < y->lo ? -1 : (x->lo > y->lo);
}

/* Ranges marked RANGE_LOADING for a batch: rids[0..n), room for every range. */
struct marked {
    uint32_t *rids;
    size_t n;
};

static void mark_whole(struct sym_table *t, const uint8_t *whole, struct marked *m);

/* Read units ids[0..n) (those of win[0..n_win) over those windows alone, the others in whole) and
 * merge them; read[k]: unit k was read by the fast reader; false only when out of memory.
 * on_demand: units the index gave addresses for, loaded for the ranges marked RANGE_LOADING (m:
 * those; a unit the fast reader leaves has the rest of its ranges marked there too, as libdwarf
 * reads it in whole). */
static bool read_units(struct sym_table *t, const uint32_t *ids, size_t n, const struct unit_range *win,
                       size_t n_win, bool on_demand, bool *read, struct marked *m)
{
    struct unit_ref *refs = malloc((n + 1) * sizeof *refs);
    bool ok = refs != NULL;
    for (size_t i = 0; ok && i < n; i++)
        refs[i] = (struct unit_ref){ids[i] < t->unit_hdrs.n ? t->unit_hdrs.v[ids[i]] : 0, ids[i], 0};
    if (ok && t->load->src.raw) {
        struct sym_stage stage = {0}, second = {0};
        struct windowed ctx = {t->load->src.raw, win, n_win};
        struct unit_reader fast = {read_windowed, &ctx, symt_core_to_spare() ? 2 : 1};
        ok = symt_read_units(&fast, &stage, &second, &t->strings, refs, n, read) &&
             symt_merge_stage(t, &stage, on_demand) && symt_merge_stage(t, &second, on_demand);
        symt_stage_free(&stage);
        symt_stage_free(&second);
    }
    size_t rest = 0; /* what the fast reader left, for libdwarf (in whole: the caller marked them so) */
    for (size_t i = 0; ok && i < n; i++)
        if (!read[i])
            refs[rest++] = refs[i];
    uint8_t *whole = m && rest ? calloc(t->n_units + 1, 1) : NULL;
    for (size_t i = 0; whole && i < rest; i++)
        whole[refs[i].id] = 1;
    if (whole)
        mark_whole(t, whole, m);
    free(whole);
    if (ok && rest) {
        struct sym_stage stage = {0};
        bool fetched = fetch_libdwarf(t, &stage, refs, rest);
        if (fetched)
            ok = symt_merge_stage(t, &stage, on_demand);
        for (size_t i = 0; i < rest; i++)
            t->load->unit_state[refs[i].id] = fetched && ok ? UNIT_LOADED : UNIT_FAILED;
        if (stage.dwarf_error[0] && !t->load->dwarf_error[0])
            memcpy(t->load->dwarf_error, stage.dwarf_error, sizeof t->load->dwarf_error);
        symt_stage_free(&stage);
    }
    free(refs);
    return ok;
}

/* A unit about to be read for the first time: counted, and its name when the index had none
 * (units indexed from .debug_aranges). */
static void touched(struct sym_table *t, uint32_t u)
{
    if (t->load->unit_state[u] != UNIT_UNLOADED)
        return;
    t->load->units_loaded++;
    if (t->load->src.raw && u < t->cu_names.n && !t->cu_names.v[u])
        t->cu_names.v[u] = raw_unit_name(t->load->src.raw, t->unit_hdrs.v[u], &t->strings);
}

/* Load units ids[0..n) in whole, none read before, and merge them; false only when out of memory.
 * on_demand: as symt_merge_stage's. */
static bool load_units(struct sym_table *t, const uint32_t *ids, size_t n, bool on_demand)
{
    bool *read = calloc(n + 1, sizeof *read);
    for (size_t i = 0; i < n; i++)
        touched(t, ids[i]);
    bool ok = read && read_units(t, ids, n, NULL, 0, on_demand, read, NULL);
    for (size_t i = 0; i < n; i++) {
        t->load->units_fast += read && read[i];
        if (read && read[i])
            t->load->unit_state[ids[i]] = ok ? UNIT_LOADED : UNIT_FAILED;
        else if (!ok)
            t->load->unit_state[ids[i]] = UNIT_FAILED;
    }
    free(read);
    t->load->loads++;
    symt_funcs_wait(t);
    symt_set_warning(t);
    return ok;
}

/* Mark RANGE_LOADING every range still unloaded of the units whose flag is set, adding them to m. */
static void mark_whole(struct sym_table *t, const uint8_t *whole, struct marked *m)
{
    for (size_t i = 0; i < t->unit_ranges.n; i++)
        if (whole[t->unit_ranges.v[i].unit] && t->load->range_state[i] == RANGE_UNLOADED) {
            t->load->range_state[i] = RANGE_LOADING;
            m->rids[m->n++] = (uint32_t)i;
        }
}

enum { WINDOWS_MAX = 2 }; /* a unit is read over at most this many of its ranges at once */

/* Load the unit ranges rids[0..n) (all RANGE_UNLOADED, room for every range in rids): a unit of
 * which they are a small part is read over them alone (its subprograms and line sequences there),
 * any other in whole; merged into the table. False only when out of memory. */
static bool load_ranges(struct sym_table *t, uint32_t *rids, size_t n)
{
    uint32_t *want = calloc(t->n_units + 1, sizeof *want), *ids = malloc((t->n_units + 1) * sizeof *ids);
    uint8_t *whole = calloc(t->n_units + 1, 1);
    struct unit_range *win = malloc((n + 1) * sizeof *win);
    bool *read = calloc(t->n_units + 1, sizeof *read);
    struct marked m = {rids, n};
    size_t n_ids = 0, n_win = 0, n_whole = 0;
    bool ok = want && ids && whole && win && read;
    for (size_t k = 0; ok && k < n; k++) {
        uint32_t u = t->unit_ranges.v[rids[k]].unit;
        t->load->range_state[rids[k]] = RANGE_LOADING;
        if (!want[u]++)
            ids[n_ids++] = u;
    }
    /* windows cost a pass over the unit's top DIEs and line program up to the last of them: for
     * more than a couple of functions, a good part of a unit, a unit read in part before (a unit
     * is read at most twice), or without the fast reader, the unit is read in whole */
    for (size_t k = 0; ok && k < n_ids; k++) {
        uint32_t u = ids[k];
        whole[u] = !t->load->src.raw || want[u] > WINDOWS_MAX || 4 * want[u] >= t->load->unit_left[u] ||
                   t->load->unit_state[u] == UNIT_PART;
        n_whole += whole[u];
    }
    for (size_t k = 0; ok && k < n; k++)
        if (!whole[t->unit_ranges.v[rids[k]].unit])
            win[n_win++] = t->unit_ranges.v[rids[k]];
    if (ok && n_whole)
        mark_whole(t, whole, &m);
    if (ok && n_win > 1)
        qsort(win, n_win, sizeof *win, cmp_window);
    for (size_t k = 0; ok && k < n_ids; k++)
        touched(t, ids[k]);
    for (size_t k = 0; ok && k < n_ids; k++)
        whole[ids[k]] = t->load->unit_state[ids[k]] == UNIT_UNLOADED; /* (now: read before?) */
    ok = ok && read_units(t, ids, n_ids, win, n_win, true, read, &m);
    for (size_t k = 0; k < m.n; k++) {
        t->load->range_state[rids[k]] = RANGE_LOADED;
        t->load->unit_left[t->unit_ranges.v[rids[k]].unit]--;
    }
    t->load->ranges_loaded += m.n;
    for (size_t k = 0; whole && k < n_ids; k++) {
        uint32_t u = ids[k];
        t->load->units_fast += read[k] && whole[u];
        if (!ok || t->load->unit_state[u] == UNIT_FAILED)
            t->load->unit_state[u] = UNIT_FAILED;
        else
            t->load->unit_state[u] = t->load->unit_left[u] ? UNIT_PART : UNIT_LOADED;
    }
    free(want);
    free(ids);
    free(whole);
    free(win);
    free(read);
    t->load->loads++;
    symt_funcs_wait(t);
    symt_set_warning(t);
    return ok;
}

bool symt_units_ready(struct sym_table *t)
{
    if (t->n_units && !(t->load->unit_state = calloc(t->n_units, 1)))
        return false;
    /* stable, by lo alone: a radix sort (one range per function, tens of thousands on big ELFs) */
    if (!symt_sort_by_u32(t->unit_ranges.v, t->unit_ranges.n, sizeof *t->unit_ranges.v,
                          offsetof(struct unit_range, lo)))
        return false;
    t->unit_max_hi = symt_running_max(t->unit_ranges.v, t->unit_ranges.n, sizeof *t->unit_ranges.v,
                                 offsetof(struct unit_range, hi));
    t->load->range_state = calloc(t->unit_ranges.n + 1, 1);
    t->load->unit_left = calloc(t->n_units + 1, sizeof *t->load->unit_left);
    if (!t->unit_max_hi || !t->load->range_state || !t->load->unit_left)
        return false;
    for (size_t i = 0; i < t->unit_ranges.n; i++)
        t->load->unit_left[t->unit_ranges.v[i].unit]++;
    /* a unit that states no addresses could hold any: it is read now */
    uint32_t *ids = calloc(t->n_units + 1, sizeof *ids);
    size_t n = 0;
    for (size_t u = 0; ids && u < t->n_units; u++)
        if (!t->load->unit_left[u])
            ids[n++] = (uint32_t)u;
    bool ok = ids && (n == 0 || load_units(t, ids, n, false));
    free(ids);
    return ok;
}

/* Add the unloaded ranges of the unit index that cover addr to rids (room for cap), each once:
 * mark (one byte per range) remembers them across many addresses; without it (one address, a few
 * ranges) rids is searched. False when rids had no room for them all. */
static bool ranges_covering(const struct sym_table *t, uint32_t addr, uint8_t *mark, uint32_t *rids, size_t *n,
                            size_t cap, long *hint)
{
    long i = hint ? (*hint = LAST_LE_FROM(t->unit_ranges.v, t->unit_ranges.n, addr, lo, *hint))
                  : LAST_LE(t->unit_ranges.v, t->unit_ranges.n, addr, lo);
    for (; i >= 0 && t->unit_max_hi[i] > addr; i--) {
        const struct unit_range *r = &t->unit_ranges.v[i];
        if (addr >= r->hi || t->load->range_state[i] != RANGE_UNLOADED || t->load->unit_state[r->unit] == UNIT_FAILED)
            continue;
        bool seen = false;
        if (mark) {
            seen = mark[i] != 0;
            mark[i] = 1;
        }
        for (size_t k = 0; !mark && k < *n && !seen; k++)
            seen = rids[k] == (uint32_t)i;
        if (seen)
            continue;
        if (*n == cap)
            return false;
        rids[(*n)++] = (uint32_t)i;
    }
    return true;
}

/* Does no unit range after ranges[0..i] start at or below x? (ranges sorted by start) */
static bool none_starts_by(const struct sym_table *t, long i, uint32_t x)
{
    return (size_t)(i + 1) >= t->unit_ranges.n || t->unit_ranges.v[i + 1].lo > x;
}

static bool all_read(const struct sym_table *t)
{
    return !t->n_units || t->load->ranges_loaded == t->unit_ranges.n;
}

bool symt_units_between(const struct sym_table *t, uint32_t a, uint32_t b, long *hint)
{
    if (all_read(t))
        return true;
    /* a range over an address in (a, b) that does not cover a starts in (a, b) */
    return none_starts_by(t, *hint = LAST_LE_FROM(t->unit_ranges.v, t->unit_ranges.n, a, lo, *hint), b - 1);
}

static bool require_all(struct sym_table *t, const uint32_t *addrs, size_t n_addrs)
{
    if (all_read(t))
        return true;
    size_t n_ranges = t->unit_ranges.n;
    uint8_t *mark = calloc(n_ranges + 1, 1);
    uint32_t *rids = malloc((n_ranges + 1) * sizeof *rids);
    size_t n = 0;
    bool ok = mark && rids;
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
                ranges_covering(t, addr, mark, rids, &n, n_ranges, &hint); /* each range once: never full */
        }
        if (n)
            load_ranges(t, rids, n);
    }
    free(mark);
    free(rids);
    return ok;
}

bool symt_require_many(struct sym_table *t, const uint32_t *addrs, size_t n)
{
    return require_all(t, addrs, n);
}

bool symt_unit_covers(const struct sym_table *t, uint32_t addr)
{
    long i = LAST_LE(t->unit_ranges.v, t->unit_ranges.n, addr, lo);
    for (; i >= 0 && t->unit_max_hi[i] > addr; i--)
        if (addr < t->unit_ranges.v[i].hi)
            return true;
    return false;
}

/* One address, on every first lookup of it: no allocation when its ranges are read already. */
void symt_require(struct sym_table *t, uint32_t addr)
{
    if (all_read(t))
        return;
    uint32_t rids[16];
    size_t n = 0;
    if (!ranges_covering(t, addr & ~1u, NULL, rids, &n, sizeof rids / sizeof rids[0], NULL) || n)
        require_all(t, &addr, 1); /* (load_ranges needs room for every range of the units it reads) */
}

void sym_prefetch(struct sym_table *t, const uint32_t *addrs, size_t n)
{
    require_all(t, addrs, n);
}

void sym_read_all(struct sym_table *t)
{
    uint32_t *rids = malloc((t->unit_ranges.n + 1) * sizeof *rids);
    size_t n = 0;
    for (size_t i = 0; rids && i < t->unit_ranges.n; i++)
        if (t->load->range_state[i] == RANGE_UNLOADED && t->load->unit_state[t->unit_ranges.v[i].unit] != UNIT_FAILED)
            rids[n++] = (uint32_t)i;
    if (n)
        load_ranges(t, rids, n);
    free(rids);
}
