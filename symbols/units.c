/* Compilation units on demand: the unit index, loading the units an address needs, and merging
 * each loaded batch into the table's sorted arrays without re-sorting what is already there. */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_row_in_seq(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

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

static int cmp_unit_range(const void *a, const void *b)
{
    const struct unit_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : (x->lo > y->lo);
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

static void drop_discarded(const struct sym_table *t, struct sym_table *stage)
{
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

/* Give each subprogram range of the stage the inline ranges that lie inside it and belong to it
 * (their root scope is its scope), appended to t->inlines. Stage ranges are sorted. */
static bool group_inlines(struct sym_table *t, struct sym_table *stage, uint32_t scope_base)
{
    for (size_t s = 0; s < stage->subs.n; s++) {
        struct range *sub = &stage->subs.v[s];
        sub->in_first = (uint32_t)t->inlines.n;
        long i = LAST_LE(stage->inlines.v, stage->inlines.n, sub->lo, lo) + 1;
        while (i > 0 && stage->inlines.v[i - 1].lo >= sub->lo)
            i--;
        for (size_t j = (size_t)i; j < stage->inlines.n && stage->inlines.v[j].lo < sub->hi; j++) {
            struct range r = stage->inlines.v[j];
            uint32_t root = r.scope;
            while (stage->scopes.v[root].parent >= 0)
                root = (uint32_t)stage->scopes.v[root].parent;
            if (root != sub->scope || r.hi > sub->hi)
                continue;
            r.scope += scope_base;
            if (!VEC_PUSH(t->inlines, r))
                return false;
        }
        sub->in_n = (uint32_t)t->inlines.n - sub->in_first;
        sub->scope += scope_base;
    }
    return true;
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

/* Move a loaded batch of units (stage: scope parents and row indexes relative to the stage) into
 * t: sort the batch, then merge it into the sorted arrays. */
static bool merge_stage(struct sym_table *t, struct sym_table *stage)
{
    uint32_t row_base = (uint32_t)t->rows.n, scope_base = (uint32_t)t->scopes.n;
    drop_discarded(t, stage);
    for (size_t i = 0; i < stage->seqs.n; i++) {
        struct seq *s = &stage->seqs.v[i];
        const struct row *r = stage->rows.v + s->first;
        size_t k = 1;
        while (k < s->n && cmp_row_in_seq(&r[k - 1], &r[k]) <= 0)
            k++;
        if (k < s->n) /* line programs nearly always emit rows in order already */
            symt_sort(stage->rows.v + s->first, s->n, sizeof *stage->rows.v, cmp_row_in_seq);
        s->first += row_base;
    }
    symt_sort(stage->seqs.v, stage->seqs.n, sizeof *stage->seqs.v, cmp_seq);
    symt_sort(stage->subs.v, stage->subs.n, sizeof *stage->subs.v, cmp_range);
    symt_sort(stage->inlines.v, stage->inlines.n, sizeof *stage->inlines.v, cmp_range);
    if (!group_inlines(t, stage, scope_base))
        return false;
    for (size_t i = 0; i < stage->scopes.n; i++)
        if (stage->scopes.v[i].parent >= 0)
            stage->scopes.v[i].parent += (int32_t)scope_base;
    if (!append(&t->rows, &stage->rows, sizeof *t->rows.v) || !append(&t->scopes, &stage->scopes, sizeof *t->scopes.v))
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

void symt_stage_free(struct sym_table *stage)
{
    free(stage->rows.v);
    free(stage->seqs.v);
    free(stage->scopes.v);
    free(stage->subs.v);
    free(stage->inlines.v);
    free(stage->cu_names.v);
    free(stage->unit_ranges.v);
    memset(stage, 0, sizeof *stage);
}

/* Load units ids[0..n) (all unloaded) and merge them; false only when out of memory. */
static bool load_units(struct sym_table *t, const uint32_t *ids, size_t n)
{
    struct sym_table stage = {0};
    bool fetched = t->reader ? dwarf_load_units(t->reader, &stage, &t->strings, ids, n)
                             : !t->dwarf_dead && isolate_fetch(t, &stage, ids, n);
    bool ok = true;
    if (fetched)
        ok = merge_stage(t, &stage);
    for (size_t i = 0; i < n; i++)
        t->unit_state[ids[i]] = fetched && ok ? UNIT_LOADED : UNIT_FAILED;
    t->units_loaded += n;
    if (stage.dwarf_error[0] && !t->dwarf_error[0])
        memcpy(t->dwarf_error, stage.dwarf_error, sizeof t->dwarf_error);
    symt_stage_free(&stage);
    symt_set_warning(t);
    return ok;
}

bool symt_units_ready(struct sym_table *t)
{
    if (t->n_units && !(t->unit_state = calloc(t->n_units, 1)))
        return false;
    symt_sort(t->unit_ranges.v, t->unit_ranges.n, sizeof *t->unit_ranges.v, cmp_unit_range);
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
    ok = ok && (n == 0 || load_units(t, ids, n));
    free(ranged);
    free(ids);
    return ok;
}

/* Add the unloaded units that cover addr to ids (each once: mark is per unit). */
static void units_covering(const struct sym_table *t, uint32_t addr, uint8_t *mark, uint32_t *ids, size_t *n)
{
    long i = LAST_LE(t->unit_ranges.v, t->unit_ranges.n, addr, lo);
    for (; i >= 0 && t->unit_max_hi[i] > addr; i--) {
        const struct unit_range *r = &t->unit_ranges.v[i];
        if (addr < r->hi && t->unit_state[r->unit] == UNIT_UNLOADED && !mark[r->unit]) {
            mark[r->unit] = 1;
            ids[(*n)++] = r->unit;
        }
    }
}

static void require_all(struct sym_table *t, const uint32_t *addrs, size_t n_addrs)
{
    if (!t->n_units || t->units_loaded == t->n_units)
        return;
    uint8_t *mark = calloc(t->n_units, 1);
    uint32_t *ids = malloc(t->n_units * sizeof *ids);
    size_t n = 0;
    if (mark && ids) {
        for (size_t k = 0; k < n_addrs; k++)
            units_covering(t, addrs[k] & ~1u, mark, ids, &n);
        if (n)
            load_units(t, ids, n);
    }
    free(mark);
    free(ids);
}

void symt_require(struct sym_table *t, uint32_t addr)
{
    require_all(t, &addr, 1);
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
        load_units(t, ids, n);
    free(ids);
}

void symt_set_warning(struct sym_table *t)
{
    const char *path = t->path ? t->path : "the ELF";
    if (t->dwarf_error[0])
        snprintf(t->warning, sizeof t->warning, "%s: %s", path, t->dwarf_error);
    else if (t->funcs.n == 0 && !t->has_dwarf)
        snprintf(t->warning, sizeof t->warning, "%s has no symbols and no DWARF: addresses stay raw", path);
    else if (!t->has_dwarf)
        snprintf(t->warning, sizeof t->warning, "%s has no DWARF: functions only, no lines or inline chains", path);
    else if (t->funcs.n == 0)
        snprintf(t->warning, sizeof t->warning, "%s has no symbol table: names come from DWARF only", path);
    else
        t->warning[0] = '\0';
}
