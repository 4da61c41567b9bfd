/* Compilation units on demand: the unit index, loading the units an address needs, and merging
 * each loaded batch into the table's sorted arrays without re-sorting what is already there. */
#include "units.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_seq(const void *a, const void *b)
{
    const struct seq *x = a, *y = b;
    return x->lo < y->lo ? -1 : (x->lo > y->lo);
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    return x->depth < y->depth ? -1 : (x->depth > y->depth);
}

/* Code the linker discarded (--gc-sections) keeps its DWARF, with its address relocated to a
 * tombstone: 0 (ld), or -1/-2 (lld). On parts whose flash starts at 0 such ranges lie over real
 * code, so DWARF must not outvote the symbol table there: a subprogram range must start inside an
 * ELF function symbol, and neither it nor a line sequence may start at a tombstone where no
 * function symbol starts. Without a symbol table there is nothing to check against. */
static bool tombstone(const struct sym_table *t, uint32_t lo)
{
    if (lo != 0 && lo < 0xFFFFFFFEu)
        return false;
    const struct func *f = symt_func_for(t, lo);
    return !(f && f->lo == lo);
}

static void drop_discarded(const struct sym_table *t, struct sym_stage *stage)
{
    symt_symbols_wait(t);
    if (t->funcs.n == 0)
        return;
    size_t k = 0;
    for (size_t i = 0; i < stage->subs.n; i++)
        if (!tombstone(t, stage->subs.v[i].lo) && symt_func_for(t, stage->subs.v[i].lo))
            stage->subs.v[k++] = stage->subs.v[i];
    stage->subs.n = k;
    k = 0;
    for (size_t i = 0; i < stage->seqs.n; i++)
        if (!tombstone(t, stage->seqs.v[i].lo))
            stage->seqs.v[k++] = stage->seqs.v[i];
    stage->seqs.n = k;
}

/* The first stretch of unit u's stated addresses (its index ranges, joined where they meet) that
 * overlaps [lo, hi), cut to [lo, hi) into *from, *to; false when none does. */
static bool unit_stretch(const struct sym_table *t, uint32_t u, uint32_t lo, uint32_t hi, uint32_t *from, uint32_t *to)
{
    const struct unit_range *v = t->unit_ranges.v;
    size_t n = t->unit_ranges.n;
    long last = LAST_LE(v, n, lo, lo);
    bool found = false;
    *from = lo;
    *to = lo;
    for (long i = last; i >= 0 && t->unit_max_hi[i] > lo; i--) /* a range of u over lo */
        if (v[i].unit == u && v[i].hi > *to) {
            *to = v[i].hi;
            found = true;
        }
    /* else the first range of u that starts inside; then on through every range that meets it */
    for (size_t j = (size_t)(last + 1); j < n && v[j].lo < hi && (!found || v[j].lo <= *to) && *to < hi; j++) {
        if (v[j].unit != u || (found && v[j].hi <= *to))
            continue;
        if (!found)
            *from = v[j].lo;
        *to = v[j].hi;
        found = true;
    }
    *to = *to < hi ? *to : hi;
    return found;
}

/* A unit loaded on demand counts only over the addresses the unit index says it covers: it is
 * loaded for those alone, so a line sequence or subprogram that runs past them (assembler DWARF
 * whose Thumb low_pc puts its end a byte into the next function, a literal pool after a naked
 * function's range) would answer for an address only when some other address had loaded its unit
 * first. The part of a range after a gap in the unit's coverage is left out (never seen: a
 * sequence or subprogram lies in one function). */
static void clip_to_units(const struct sym_table *t, struct sym_stage *stage)
{
    size_t k = 0;
    for (size_t i = 0; i < stage->subs.n; i++) {
        struct range r = stage->subs.v[i];
        if (unit_stretch(t, stage->scopes.v[r.scope].cu, r.lo, r.hi, &r.lo, &r.hi))
            stage->subs.v[k++] = r;
    }
    stage->subs.n = k;
    k = 0;
    for (size_t i = 0; i < stage->seqs.n; i++) {
        struct seq q = stage->seqs.v[i];
        if (unit_stretch(t, q.cu, q.lo, q.hi, &q.lo, &q.hi)) /* (rows before lo stay, never found) */
            stage->seqs.v[k++] = q;
    }
    stage->seqs.n = k;
}

/* Merge two arrays sorted by cmp into a new one (old elements first among equals); NULL when out
 * of memory. */
static void *merge_sorted(const void *a, size_t na, const void *b, size_t nb, size_t elem,
                          int (*cmp)(const void *, const void *))
{
    char *out = malloc((na + nb + 1) * elem), *o = out;
    const char *x = a, *y = b, *xe = na ? x + na * elem : x, *ye = nb ? y + nb * elem : y; /* NULL + 0 is undefined */
    if (!out)
        return NULL;
    while (x < xe && y < ye) {
        const char **from = cmp(y, x) < 0 ? &y : &x;
        memcpy(o, *from, elem);
        *from += elem;
        o += elem;
    }
    if (x < xe) /* memcpy from a NULL array, even of 0 bytes, is undefined */
        memcpy(o, x, (size_t)(xe - x));
    o += xe - x;
    if (y < ye)
        memcpy(o, y, (size_t)(ye - y));
    return out;
}

/* The running maximum of hi over a sorted array: how far back a lookup must look. */
static uint32_t *running_max(const void *arr, size_t n, size_t elem, size_t hi_at)
{
    uint32_t *m = malloc((n + 1) * sizeof *m);
    if (!m)
        return NULL;
    uint32_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t hi;
        memcpy(&hi, (const char *)arr + i * elem + hi_at, sizeof hi);
        run = hi > run ? hi : run;
        m[i] = run;
    }
    return m;
}

struct any_vec {
    void *v;
    size_t n, cap;
};

/* Append vector b to a; when a is empty, b's memory is taken over instead of copied. */
static bool append_vec(struct any_vec *a, struct any_vec *b, size_t elem)
{
    if (a->n == 0) {
        free(a->v);
        *a = *b;
        memset(b, 0, sizeof *b);
        return true;
    }
    if (b->n == 0)
        return true;
    if (!symt_vec_grow(&a->v, &a->cap, a->n + b->n, elem))
        return false;
    memcpy((char *)a->v + a->n * elem, b->v, b->n * elem);
    a->n += b->n;
    return true;
}
#define append(a, b, elem) append_vec((struct any_vec *)(a), (struct any_vec *)(b), (elem))

/* Compilers emit rows, and mostly functions, in address order already: a check is cheaper than
 * a sort. (glibc's qsort is a stable merge sort, so equal elements end in the same order.) */
static void sort_unless_sorted(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *p = v;
    size_t k = 1;
    while (k < n && cmp(p + (k - 1) * size, p + k * size) <= 0)
        k++;
    if (k < n)
        symt_sort(v, n, size, cmp);
}

/* A sequence's rows by address, stably: rows at one address keep their line table's order (the
 * last of them answers). A radix sort, or rows inserted one by one without memory for it. */
static void sort_rows(struct row *v, size_t n)
{
    size_t k = 1;
    while (k < n && v[k - 1].addr <= v[k].addr)
        k++;
    if (k >= n || symt_sort_by_u32(v, n, sizeof *v, offsetof(struct row, addr)))
        return;
    for (size_t i = k; i < n; i++) {
        struct row r = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1].addr > r.addr; j--)
            v[j] = v[j - 1];
        v[j] = r;
    }
}

/* Ranges in cmp_range's order, which a stable radix sort gives key by key from the least
 * significant (depth, then hi descending, then lo): tens of thousands of inline ranges, in DIE
 * order, cost the merge sort more than reading them. Falls back to the merge sort without memory. */
static void sort_ranges(struct range *v, size_t n)
{
    size_t k = 1;
    while (k < n && cmp_range(&v[k - 1], &v[k]) <= 0)
        k++;
    if (k >= n)
        return;
    bool ok = symt_sort_by_u32(v, n, sizeof *v, offsetof(struct range, depth));
    for (size_t i = 0; i < n; i++)
        v[i].hi = ~v[i].hi; /* descending hi as an ascending key, undone below */
    ok = ok && symt_sort_by_u32(v, n, sizeof *v, offsetof(struct range, hi));
    for (size_t i = 0; i < n; i++)
        v[i].hi = ~v[i].hi;
    ok = ok && symt_sort_by_u32(v, n, sizeof *v, offsetof(struct range, lo));
    if (!ok)
        symt_sort(v, n, sizeof *v, cmp_range);
}

/* n ranges in cmp_range's order, stably: inserted one by one when few. */
static void sort_few_ranges(struct range *v, size_t n)
{
    if (n > 24) {
        sort_ranges(v, n);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        struct range r = v[i];
        size_t j = i;
        for (; j > 0 && cmp_range(&v[j - 1], &r) > 0; j--)
            v[j] = v[j - 1];
        v[j] = r;
    }
}

/* Give each subprogram range of the stage (sorted) the inline ranges that lie inside it and belong
 * to it (their root scope is its scope), appended to t->inlines in cmp_range's order. The inline
 * ranges are first put in buckets by root scope, in their DIE order, and each subprogram range's
 * share is sorted alone: a few ranges each, where one sort of them all took three radix passes. */
static bool group_inlines(struct sym_table *t, struct sym_stage *stage, uint32_t scope_base)
{
    size_t n_scopes = stage->scopes.n, n_inl = stage->inlines.n;
    uint32_t *root = malloc((n_scopes + 1) * sizeof *root);
    uint32_t *chain = malloc((n_scopes + 1) * sizeof *chain); /* a scope and its parents */
    uint32_t *first = calloc(n_scopes + 2, sizeof *first); /* bucket r: by_root[first[r] .. first[r + 1]) */
    uint32_t *by_root = malloc((n_inl + 1) * sizeof *by_root);
    bool ok = root && chain && first && by_root;
    for (size_t s = 0; ok && s < n_scopes; s++) { /* a parent comes before its children, as in the DIEs */
        int32_t p = stage->scopes.v[s].parent;
        if (!(ok = p < (int64_t)s)) /* (both readers and the DWARF child's reply ensure it: no cycle) */
            break;
        root[s] = p < 0 ? (uint32_t)s : root[p];
        chain[s] = p < 0 ? 1 : chain[p] + 1;
    }
    for (size_t i = 0; ok && i < n_inl; i++)
        first[root[stage->inlines.v[i].scope] + 2]++;
    for (size_t r = 2; ok && r < n_scopes + 2; r++)
        first[r] += first[r - 1];
    for (size_t i = 0; ok && i < n_inl; i++) /* (first[r + 1] is bucket r's next place meanwhile) */
        by_root[first[root[stage->inlines.v[i].scope] + 1]++] = (uint32_t)i;
    for (size_t s = 0; ok && s < stage->subs.n; s++) {
        struct range *sub = &stage->subs.v[s];
        sub->in_first = (uint32_t)t->inlines.n;
        for (uint32_t k = first[sub->scope]; k < first[sub->scope + 1] && ok; k++) {
            struct range r = stage->inlines.v[by_root[k]];
            if (r.lo < sub->lo || r.lo >= sub->hi || r.hi > sub->hi)
                continue;
            r.chain = chain[r.scope];
            r.scope += scope_base;
            ok = VEC_PUSH(t->inlines, r);
        }
        sub->in_n = (uint32_t)t->inlines.n - sub->in_first;
        if (sub->in_n > 1) /* (and so t->inlines.v is no NULL) */
            sort_few_ranges(t->inlines.v + sub->in_first, sub->in_n);
        for (uint32_t k = 0, reach = 0; k < sub->in_n; k++) {
            struct range *r = &t->inlines.v[sub->in_first + k];
            reach = r->hi > reach ? r->hi : reach;
            r->reach = reach;
        }
        sub->scope += scope_base;
    }
    free(root);
    free(chain);
    free(first);
    free(by_root);
    return ok;
}

/* Move a loaded batch of units (stage: scope parents and row indexes relative to the stage) into
 * t: sort the batch, then merge it into the sorted arrays. Its rows stay where they are (the
 * table keeps the block; sequences point into it), as they are most of a unit. on_demand: units the
 * index gave addresses for, loaded for those (clip_to_units). */
static bool merge_stage(struct sym_table *t, struct sym_stage *stage, bool on_demand)
{
    if (!stage->rows.n && !stage->seqs.n && !stage->scopes.n && !stage->subs.n && !stage->inlines.n)
        return true; /* (a second thread that had no unit to read) */
    uint32_t scope_base = (uint32_t)t->scopes.n, file_base = (uint32_t)t->files.n;
    if (stage->files.n >= UINT32_MAX - t->files.n)
        return false;
    drop_discarded(t, stage);
    if (on_demand)
        clip_to_units(t, stage);
    for (size_t i = 0; i < stage->seqs.n; i++) {
        struct seq *s = &stage->seqs.v[i];
        if (!s->in_order) /* (a second pass over the rows, cold by now, was a third of the merge) */
            sort_rows(stage->rows.v + s->first, s->n);
        s->rows = stage->rows.v + s->first;
        s->file_base = file_base;
    }
    if (!append(&t->files, &stage->files, sizeof *t->files.v))
        return false;
    if (stage->rows.n) {
        if (!VEC_PUSH(t->row_blocks, stage->rows.v))
            return false;
        t->n_rows += stage->rows.n;
        t->row_bytes += stage->rows.cap * sizeof *stage->rows.v;
        stage->rows.v = NULL;
        stage->rows.n = stage->rows.cap = 0;
    }
    sort_unless_sorted(stage->seqs.v, stage->seqs.n, sizeof *stage->seqs.v, cmp_seq);
    sort_ranges(stage->subs.v, stage->subs.n);
    if (!group_inlines(t, stage, scope_base))
        return false;
    for (size_t i = 0; i < stage->scopes.n; i++)
        if (stage->scopes.v[i].parent >= 0)
            stage->scopes.v[i].parent += (int32_t)scope_base;
    if (!append(&t->scopes, &stage->scopes, sizeof *t->scopes.v))
        return false;
    struct range *subs = merge_sorted(t->subs.v, t->subs.n, stage->subs.v, stage->subs.n, sizeof *subs, cmp_range);
    struct seq *seqs = merge_sorted(t->seqs.v, t->seqs.n, stage->seqs.v, stage->seqs.n, sizeof *seqs, cmp_seq);
    if (!subs || !seqs) {
        free(subs);
        free(seqs);
        return false;
    }
    free(t->subs.v);
    t->subs.v = subs;
    t->subs.n += stage->subs.n;
    t->subs.cap = t->subs.n + 1;
    free(t->seqs.v);
    t->seqs.v = seqs;
    t->seqs.n += stage->seqs.n;
    t->seqs.cap = t->seqs.n + 1;
    free(t->sub_max_hi);
    free(t->seq_max_hi);
    t->sub_max_hi = running_max(t->subs.v, t->subs.n, sizeof *t->subs.v, offsetof(struct range, hi));
    t->seq_max_hi = running_max(t->seqs.v, t->seqs.n, sizeof *t->seqs.v, offsetof(struct seq, hi));
    return t->sub_max_hi && t->seq_max_hi;
}

/* ---- loading units on demand -------------------------------------------------------------- */

/* libdwarf, for the units the fast reader leaves (or all of them, without it): in this process,
 * or in the child, started the first time it is needed. */
static bool fetch_libdwarf(struct sym_table *t, struct sym_stage *stage, const struct unit_ref *refs, size_t n)
{
    symt_symbols_wait(t); /* (libdwarf, here or in a child, only once the symbol table's thread is done) */
    if (t->isolated && !t->dwarf_dead && !t->dwarf_child && !isolate_start(t, t->path, false))
        t->isolated = false; /* no child possible: read here, unprotected */
    if (!t->isolated) {
        if (!t->reader) {
            char why[160];
            bool has;
            t->reader = ldw_open(t->path, &has, why, sizeof why);
            struct sym_stage scratch = {0}; /* the reader learns the units; the table has its index */
            struct strpool scratch_strings = {0};
            bool indexed = t->reader && ldw_index(t->reader, &scratch, &scratch_strings);
            symt_stage_free(&scratch);
            symt_arena_free(&scratch_strings.arena);
            free(scratch_strings.slots);
            if (!indexed)
                return false;
        }
        return ldw_load_units(t->reader, stage, &t->strings, refs, n);
    }
    return !t->dwarf_dead && isolate_fetch(t, stage, refs, n);
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
    if (ok && t->raw) {
        struct sym_stage stage = {0}, second = {0};
        struct unit_reader fast = {raw_read, t->raw, 2};
        ok = symt_read_units(&fast, &stage, &second, &t->strings, refs, n, read) && merge_stage(t, &stage, on_demand) &&
             merge_stage(t, &second, on_demand);
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
            ok = merge_stage(t, &stage, on_demand);
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
    for (size_t i = 0; t->raw && i < n; i++) /* units indexed from .debug_aranges: their names now */
        if (ids[i] < t->cu_names.n && !t->cu_names.v[ids[i]])
            t->cu_names.v[ids[i]] = raw_unit_name(t->raw, t->unit_hdrs.v[ids[i]], &t->strings);
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
    t->unit_max_hi = running_max(t->unit_ranges.v, t->unit_ranges.n, sizeof *t->unit_ranges.v,
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
