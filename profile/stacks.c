/* Distinct call stacks and their sample counts (see stacks.h): the frames of all stacks in one
 * array, the stacks in another, found again through an open-addressing hash. */
#include "stacks.h"

#include "../base/grow.h"
#include "../base/hash.h"

#include <stdlib.h>
#include <string.h>

struct rec {
    uint32_t pc, task, tag;
    bool has_tag;
    size_t first, n; /* its callers in frames[] */
    uint64_t hash;
    double count;
};

struct stacks {
    struct rec *recs;
    size_t n_recs, cap_recs;
    uint32_t *frames;
    size_t n_frames, cap_frames;
    size_t *index; /* 1 + record, 0: empty; a power of two, at most half full */
    size_t cap_index;
    double samples;
};

struct stacks *stacks_new(void)
{
    return calloc(1, sizeof(struct stacks));
}

void stacks_free(struct stacks *s)
{
    if (!s)
        return;
    free(s->recs);
    free(s->frames);
    free(s->index);
    free(s);
}

void stacks_reset(struct stacks *s)
{
    s->n_recs = s->n_frames = 0;
    s->samples = 0;
    if (s->index)
        memset(s->index, 0, s->cap_index * sizeof *s->index);
}

static uint64_t hash_of(const struct stack *st)
{
    uint64_t h = FNV1A64_BASIS ^ st->pc ^ ((uint64_t)st->task << 32) ^ ((uint64_t)st->tag << 7);
    for (size_t i = 0; i < st->n; i++)
        h = fnv1a64_step(h, st->callers[i]); /* a word at a time */
    return fnv1a64_step(h, st->has_tag);
}

static bool same(const struct stacks *s, const struct rec *r, const struct stack *st, uint64_t h)
{
    return r->hash == h && r->pc == st->pc && r->n == st->n && r->task == st->task && r->tag == st->tag &&
           r->has_tag == st->has_tag &&
           (!st->n || memcmp(s->frames + r->first, st->callers, st->n * sizeof *st->callers) == 0);
}

static bool grow_index(struct stacks *s)
{
    size_t cap = grow_capacity(s->cap_index, (s->n_recs + 1) * 2, 256);
    size_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return false;
    for (size_t i = 0; i < s->n_recs; i++) {
        size_t k = (size_t)s->recs[i].hash & (cap - 1);
        while (idx[k])
            k = (k + 1) & (cap - 1);
        idx[k] = i + 1;
    }
    free(s->index);
    s->index = idx;
    s->cap_index = cap;
    return true;
}

bool stacks_add(struct stacks *s, const struct stack *st)
{
    if ((s->n_recs + 1) * 2 > s->cap_index && !grow_index(s))
        return false;
    uint64_t h = hash_of(st);
    size_t k = (size_t)h & (s->cap_index - 1);
    for (; s->index[k]; k = (k + 1) & (s->cap_index - 1)) {
        struct rec *r = &s->recs[s->index[k] - 1];
        if (same(s, r, st, h)) {
            r->count += st->count;
            s->samples += st->count;
            return true;
        }
    }
    if (!grow_array((void **)&s->recs, &s->cap_recs, s->n_recs + 1, sizeof *s->recs, 64) ||
        !grow_array((void **)&s->frames, &s->cap_frames, s->n_frames + st->n, sizeof *s->frames, 256))
        return false;
    if (st->n)
        memcpy(s->frames + s->n_frames, st->callers, st->n * sizeof *st->callers);
    s->recs[s->n_recs] = (struct rec){st->pc, st->task, st->tag, st->has_tag, s->n_frames, st->n, h, st->count};
    s->n_frames += st->n;
    s->index[k] = ++s->n_recs;
    s->samples += st->count;
    return true;
}

size_t stacks_distinct(const struct stacks *s)
{
    return s ? s->n_recs : 0;
}

double stacks_samples(const struct stacks *s)
{
    return s ? s->samples : 0;
}

void stacks_get(const struct stacks *s, size_t i, struct stack *out)
{
    const struct rec *r = &s->recs[i];
    /* (no caller kept yet: frames is NULL, and NULL + 0 is undefined) */
    *out = (struct stack){r->pc, r->n ? s->frames + r->first : NULL, r->n, r->task, r->tag, r->has_tag, r->count};
}
