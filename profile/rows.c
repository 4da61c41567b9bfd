/* Grouping the samples into rows: by function, line, file, task or address, with their shares
 * and confidence intervals, sorted by samples. */
#include "prof_int.h"

#include "../base/grow.h"
#include "../base/path.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy a row name into p->names; returns 1 + its offset (the buffer may move until the rows are final). */
size_t prof_keep_name(struct prof *p, const char *s)
{
    size_t n = strlen(s) + 1;
    if (!grow_array((void **)&p->names, &p->names_cap, p->names_len + n, 1, 4096))
        return 0;
    memcpy(p->names + p->names_len, s, n);
    p->names_len += n;
    return p->names_len - n + 1;
}

const char *prof_group_name(const struct prof *p, const struct group *g)
{
    return g->name_off ? p->names + g->name_off - 1 : (g->row.name ? g->row.name : "??");
}

static size_t group_hash(const void *a, uint64_t b)
{
    return prof_hash_key((uint32_t)(uintptr_t)a ^ (uint32_t)((uintptr_t)a >> 32), (uint32_t)b, true);
}

struct group *prof_group_for(struct prof *p, const void *a, uint64_t b)
{
    if (p->n_groups * 2 >= p->gcap) {
        size_t cap = grow_capacity(p->gcap, (p->n_groups + 1) * 2, 64);
        size_t *idx = malloc(cap * sizeof *idx);
        if (!idx)
            return NULL;
        for (size_t i = 0; i < cap; i++)
            idx[i] = SIZE_MAX;
        for (size_t g = 0; g < p->n_groups; g++) {
            size_t j = group_hash(p->groups[g].key_a, p->groups[g].key_b) & (cap - 1);
            while (idx[j] != SIZE_MAX)
                j = (j + 1) & (cap - 1);
            idx[j] = g;
        }
        free(p->gindex);
        p->gindex = idx;
        p->gcap = cap;
    }
    size_t j = group_hash(a, b) & (p->gcap - 1);
    while (p->gindex[j] != SIZE_MAX) {
        struct group *g = &p->groups[p->gindex[j]];
        if (g->key_a == a && g->key_b == b)
            return g;
        j = (j + 1) & (p->gcap - 1);
    }
    if (!grow_array((void **)&p->groups, &p->cap_groups, p->n_groups + 1, sizeof *p->groups, 32))
        return NULL;
    struct group *g = &p->groups[p->n_groups];
    memset(g, 0, sizeof *g);
    g->key_a = a;
    g->key_b = b;
    p->gindex[j] = p->n_groups++;
    return g;
}

/* The task a sample belongs to: the record its tag named when it came (or, for samples that
 * came before their tag had a name, the tag's first name). */

/* One row per task name (a reused tag's tasks stay apart, a re-created task's records join), per
 * exception, per unnamed tag. */
static struct group *task_group(struct prof *p, const struct entry *e)
{
    const struct task *tk = prof_task_of(p, e);
    if (tk && !prof_in_exception(e)) {
        struct group *g = prof_group_for(p, (const void *)(uintptr_t)3, tk->same);
        if (g)
            g->row.instances = p->tasks[tk->same].instances;
        return g;
    }
    return prof_group_for(p, (const void *)(uintptr_t)(e->has_tag ? 1 : 2), e->tag);
}

static int cmp_rows(const void *a, const void *b)
{
    const struct prof_row *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

bool prof_frame_is(struct prof *p, uint32_t addr, const struct sym_frame *fr, const char *function)
{
    size_t n = strlen(fr->function);
    if (strncmp(fr->function, function, n) != 0)
        return false;
    if (!function[n]) /* its name: every function of the name */
        return true;
    /* one of several functions of the name, "name (file)" */
    return function[n] == ' ' && p->syms && strcmp(sym_function_label(p->syms, fr->function, addr), function) == 0;
}

/* The frame of `function` in the inline chain of a sample at addr: with inline frames, any frame
 * (the innermost match), so an inlined call site in the function carries its callees' samples;
 * without, only the containing function. */
static const struct sym_frame *frame_in(struct prof *p, uint32_t addr, const struct sym_location *loc,
                                        bool inline_frames, const char *function)
{
    if (!loc || !loc->known)
        return NULL;
    if (!inline_frames) {
        const struct sym_frame *out = sym_frame_at(loc, loc->n_frames - 1);
        return prof_frame_is(p, addr, out, function) ? out : NULL;
    }
    for (uint32_t k = 0; k < loc->n_frames; k++)
        if (prof_frame_is(p, addr, sym_frame_at(loc, k), function))
            return sym_frame_at(loc, k);
    return NULL;
}

size_t prof_rows(struct prof *p, enum prof_group by, bool inline_frames, const struct prof_row **rows)
{
    return prof_rows_of(p, by, inline_frames, NULL, rows);
}

/* What a new row shows: its name (may point into the caller's buffer), file and line. */
struct row_label {
    const char *name, *file;
    uint32_t line;
};

/* The row a sample falls in when grouped `by` (fr: its frame in the function looked at, or its
 * innermost or outermost one), made when new; NULL when out of memory. */
static struct group *group_of(struct prof *p, const struct entry *e, const struct sym_location *loc,
                              const struct sym_frame *fr, enum prof_group by, char *buf, size_t len,
                              struct row_label *l)
{
    struct group *g = NULL;
    if (p->fold_overhead && (by == PROF_BY_FUNCTION || by == PROF_BY_LINE) && prof_in_profiler(loc) &&
        !prof_idle_poll(p, e, loc)) {
        g = prof_group_for(p, (const void *)(uintptr_t)4, 0);
        l->name = PROF_OVERHEAD_ROW;
    }
    switch (g ? PROF_BY_ADDRESS + 1 : (int)by) {
    case PROF_BY_FUNCTION:
        if (fr && strcmp(fr->function, "??") != 0) {
            /* the function's name; for one of several functions of that name, "name (file)" (asked
             * once a name: nearly every name is a function's own) */
            g = prof_group_for(p, fr->function, 0);
            l->name = fr->function;
            l->file = fr->file;
            if (g && g->shared != 1) {
                if (!g->shared)
                    g->shared = sym_function_label(p->syms, fr->function, e->pc) == fr->function ? 1 : 2;
                if (g->shared == 2) { /* its row's, and its file whatever this address's line */
                    g = prof_group_for(p, l->name = sym_function_label(p->syms, fr->function, e->pc), 0);
                    l->file = sym_function_file(p->syms, e->pc);
                }
            }
            if (g && fr != sym_frame_at(loc, loc->n_frames - 1)) /* not the outermost: an inlined copy */
                g->row.inlined = true;
        } else {
            g = prof_group_for(p, NULL, e->pc); /* unknown: one row per address */
            snprintf(buf, len, "0x%08x", e->pc);
            l->name = buf;
        }
        break;
    case PROF_BY_LINE: {
        /* the line in the function the row is named for: innermost, or the call site in the
         * containing function */
        const struct sym_frame *lf = fr;
        if (lf && strcmp(lf->file, "??") != 0) {
            g = prof_group_for(p, lf->file, lf->line);
            snprintf(buf, len, "%s:%u", path_base(lf->file),
                     lf->line);
            l->name = buf;
            l->file = lf->file;
            l->line = lf->line;
        } else {
            g = prof_group_for(p, NULL, e->pc);
            snprintf(buf, len, "0x%08x", e->pc);
            l->name = buf;
        }
        break;
    }
    case PROF_BY_FILE:
        if (fr && strcmp(fr->file, "??") != 0) {
            g = prof_group_for(p, fr->file, 0);
            l->name = fr->file;
            l->file = fr->file;
        } else {
            g = prof_group_for(p, NULL, 0);
            l->name = "(unknown file)";
        }
        break;
    case PROF_BY_ADDRESS:
        g = prof_group_for(p, NULL, e->pc);
        snprintf(buf, len, "0x%08x", e->pc);
        l->name = buf;
        if (fr) {
            l->file = fr->file;
            l->line = fr->line;
        }
        break;
    case PROF_BY_TASK:
        g = task_group(p, e);
        l->name = prof_task_label(p, e, buf, len);
        break;
    default: /* the folded overhead row, chosen above */
        break;
    }
    return g;
}

/* The groups as rows, with their shares and intervals, most samples first; 0 when out of memory. */
static size_t final_rows(struct prof *p)
{
    if (p->n_groups > p->cap_rows) {
        struct prof_row *r = realloc(p->rows, p->n_groups * sizeof *r);
        if (!r)
            return 0;
        p->rows = r;
        p->cap_rows = p->n_groups;
    }
    const double total = prof_total(p), n_eff = prof_effective_n(p);
    size_t n = 0;
    for (size_t g = 0; g < p->n_groups; g++) {
        if (p->groups[g].shared == 2) /* a name several functions share: their rows have the samples */
            continue;
        struct prof_row *r = &p->rows[n++];
        *r = p->groups[g].row;
        r->name = prof_group_name(p, &p->groups[g]);
        r->share = total > 0 ? r->samples / total : 0;
        prof_wilson95(r->share, n_eff, &r->lo95, &r->hi95);
        r->ci95 = (r->hi95 - r->lo95) / 2.0;
    }
    if (n)
        qsort(p->rows, n, sizeof *p->rows, cmp_rows);
    return n;
}

struct record_sum {
    double count;
    bool approximate;
};

/* Samples added to row g, labelled l when new (its name in buf: kept). */
static void count_in_row(struct prof *p, struct group *g, const struct row_label *l, const char *buf,
                         enum prof_group by, double count, bool approximate)
{
    if (!g)
        return;
    if (g->row.samples == 0 && !g->row.name && !g->name_off) {
        if (l->name == buf || by == PROF_BY_TASK)
            g->name_off = prof_keep_name(p, l->name);
        else
            g->row.name = l->name;
        g->row.file = l->file;
        g->row.line = l->line;
    }
    g->row.samples += count;
    g->row.approximate |= approximate;
}

size_t prof_rows_of(struct prof *p, enum prof_group by, bool inline_frames, const char *function,
                    const struct prof_row **rows)
{
    prof_settle(p);
    p->n_groups = 0;
    p->names_len = 0;
    if (p->gindex)
        for (size_t i = 0; i < p->gcap; i++)
            p->gindex[i] = SIZE_MAX;
    char buf[64];
    if (by == PROF_BY_TASK)
        prof_mark_shared_names(p);
    /* by task: a record's samples summed in an array first, its row found once (under churn a
     * row's records and their entries run to hundreds of thousands) */
    struct record_sum *sums = by == PROF_BY_TASK && !function ? calloc(p->n_tasks, sizeof *sums) : NULL;
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        if (sums && e->task && !prof_in_exception(e)) {
            sums[e->task - 1].count += e->count;
            sums[e->task - 1].approximate |= e->approximate;
            continue;
        }
        const struct sym_location *loc = p->syms && by != PROF_BY_TASK ? sym_lookup(p->syms, e->pc) : NULL;
        const struct sym_frame *fr = function ? frame_in(p, e->pc, loc, inline_frames, function) : NULL;
        if (!function && loc && loc->known)
            fr = inline_frames ? sym_frame_at(loc, 0) : sym_frame_at(loc, loc->n_frames - 1);
        if (function && !fr)
            continue;
        struct row_label l = {0};
        struct group *g = group_of(p, e, loc, fr, by, buf, sizeof buf, &l);
        count_in_row(p, g, &l, buf, by, e->count, e->approximate);
    }
    for (size_t r = 0; sums && r < p->n_tasks; r++)
        if (sums[r].count != 0) {
            const struct entry e = {.tag = p->tasks[r].tag, .has_tag = true, .task = (uint32_t)r + 1};
            struct group *g = task_group(p, &e);
            struct row_label l = {g && g->row.samples == 0 ? prof_task_label(p, &e, buf, sizeof buf) : buf, NULL, 0};
            count_in_row(p, g, &l, buf, by, sums[r].count, sums[r].approximate);
        }
    free(sums);
    size_t n = final_rows(p);
    if (p->n_groups && !n)
        return 0; /* out of memory */
    *rows = p->rows;
    return n;
}

uint32_t prof_top_pc(struct prof *p, bool inline_frames, const char *function, uint32_t line)
{
    prof_settle(p);
    uint32_t best = 0;
    double best_count = 0;
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count <= best_count || !p->syms)
            continue;
        const struct sym_location *loc = sym_lookup(p->syms, e->pc);
        if (!loc || !loc->known)
            continue;
        const struct sym_frame *fr = frame_in(p, e->pc, loc, inline_frames, function);
        if (fr && fr->line == line) {
            best = e->pc;
            best_count = e->count;
        }
    }
    return best;
}

