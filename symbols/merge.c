/* A loaded batch of units (a stage) merged into the table's sorted arrays without re-sorting what
 * is already there: code the linker discarded dropped, ranges clipped to what the unit index says,
 * inline ranges grouped under their subprogram ranges. */
#include "units.h"

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
    symt_funcs_wait(t);
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

/* The first stretch of the addresses unit u is read for (its index ranges marked RANGE_LOADING,
 * joined where they meet) that overlaps [lo, hi), cut to [lo, hi) into *from, *to; false when none
 * does. */
static bool unit_stretch(const struct sym_table *t, uint32_t u, uint32_t lo, uint32_t hi, uint32_t *from, uint32_t *to)
{
    const struct unit_range *v = t->unit_ranges.v;
    size_t n = t->unit_ranges.n;
    long last = LAST_LE(v, n, lo, lo);
    bool found = false;
    *from = lo;
    *to = lo;
    for (long i = last; i >= 0 && t->unit_max_hi[i] > lo; i--) /* a range of u over lo */
        if (v[i].unit == u && t->load->range_state[i] == RANGE_LOADING && v[i].hi > *to) {
            *to = v[i].hi;
            found = true;
        }
    /* else the first range of u that starts inside; then on through every range that meets it */
    for (size_t j = (size_t)(last + 1); j < n && v[j].lo < hi && (!found || v[j].lo <= *to) && *to < hi; j++) {
        if (v[j].unit != u || t->load->range_state[j] != RANGE_LOADING || (found && v[j].hi <= *to))
            continue;
        if (!found)
            *from = v[j].lo;
        *to = v[j].hi;
        found = true;
    }
    *to = *to < hi ? *to : hi;
    return found;
}

/* A unit loaded on demand counts only over the addresses the unit index says it covers, and of
 * those only over the ranges it is read for now (a unit is read a function at a time when a few
 * of its functions are needed; a range read later gets its own copy of what lies over it): it is
 * loaded for those alone, so a line sequence or subprogram that runs past them (assembler DWARF
 * whose Thumb low_pc puts its end a byte into the next function, a literal pool after a naked
 * function's range) would answer for an address only when some other address had loaded its unit
 * first. A subprogram's range past a gap in what is read now is left out (a subprogram lies in one
 * function); a line sequence gets a piece for each stretch it meets. False when out of memory. */
static bool clip_to_units(const struct sym_table *t, struct sym_stage *stage)
{
    size_t k = 0;
    for (size_t i = 0; i < stage->subs.n; i++) {
        struct range r = stage->subs.v[i];
        if (unit_stretch(t, stage->scopes.v[r.scope].cu, r.lo, r.hi, &r.lo, &r.hi))
            stage->subs.v[k++] = r;
    }
    stage->subs.n = k;
    /* a sequence may span several functions (one for a unit's whole .text without -ffunction-sections):
     * a piece for each stretch read now, the rows shared; a function read before leaves a gap */
    struct seq *pieces = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < stage->seqs.n; i++) {
        struct seq q = stage->seqs.v[i];
        for (uint32_t at = q.lo, from, to; at < q.hi && unit_stretch(t, q.cu, at, q.hi, &from, &to) && to > at;
             at = to) {
            if (!symt_vec_grow((void **)&pieces, &cap, n + 1, sizeof *pieces)) {
                free(pieces);
                return false;
            }
            pieces[n] = q; /* (rows before from stay, never found) */
            pieces[n].lo = from;
            pieces[n++].hi = to;
        }
    }
    free(stage->seqs.v);
    stage->seqs.v = pieces;
    stage->seqs.n = n;
    stage->seqs.cap = cap;
    return true;
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
bool symt_merge_stage(struct sym_table *t, struct sym_stage *stage, bool on_demand)
{
    if (!stage->rows.n && !stage->seqs.n && !stage->scopes.n && !stage->subs.n && !stage->inlines.n)
        return true; /* (a second thread that had no unit to read) */
    uint32_t scope_base = (uint32_t)t->scopes.n, file_base = (uint32_t)t->files.n;
    if (stage->files.n >= UINT32_MAX - t->files.n)
        return false;
    drop_discarded(t, stage);
    if (on_demand && !clip_to_units(t, stage))
        return false;
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
    t->sub_max_hi = symt_running_max(t->subs.v, t->subs.n, sizeof *t->subs.v, offsetof(struct range, hi));
    t->seq_max_hi = symt_running_max(t->seqs.v, t->seqs.n, sizeof *t->seqs.v, offsetof(struct seq, hi));
    return t->sub_max_hi && t->seq_max_hi;
}
