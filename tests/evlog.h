/* Test helper: records decoder events as text lines, so event streams can be compared. */
#ifndef EVLOG_H
#define EVLOG_H

#include "../decode/event.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct evlog {
    char *buf;
    size_t len, cap;
    size_t count[EV_TABLE_FULL + 1]; /* one per event type: the last type sizes it */
    size_t batches;           /* EV_PCS events, each logged as its EV_PC samples */
};

static inline void evlog_event(void *ctx, const struct ev *e)
{
    struct evlog *l = ctx;
    if (e->type == EV_PCS) { /* the same samples as EV_PC events: logs compare however they came */
        l->batches++;
        struct ev one = {.type = EV_PC, .offset = e->offset};
        for (uint64_t i = 0; i < e->count; i++) {
            one.addr = e->pcs[i];
            evlog_event(ctx, &one);
        }
        return;
    }
    char line[1200];
    int n = snprintf(line, sizeof line,
                     "%d a=%08" PRIx32 " t=%" PRIx32 "/%d s=%" PRIu32 " i=%" PRIu32 " k=%" PRIu32 " v=%" PRIx64
                     " c=%" PRIu64 " %" PRIu64 "/%" PRIu64 "/%" PRIu64 " '%.*s'\n",
                     (int)e->type, e->addr, e->tag, e->has_tag, e->size, e->index, e->kind, e->value, e->count,
                     e->min, e->max, e->sum, (int)(e->text_len > 1000 ? 1000 : e->text_len),
                     e->text ? e->text : "");
    if (l->len + (size_t)n + 1 > l->cap) {
        l->cap = (l->cap + (size_t)n + 1) * 2;
        l->buf = realloc(l->buf, l->cap);
        if (!l->buf)
            abort();
    }
    memcpy(l->buf + l->len, line, (size_t)n + 1);
    l->len += (size_t)n;
    l->count[e->type]++;
}

static inline void evlog_reset(struct evlog *l)
{
    l->len = 0;
    if (l->buf)
        l->buf[0] = '\0';
    memset(l->count, 0, sizeof l->count);
    l->batches = 0;
}

static inline int evlog_equal(const struct evlog *a, const struct evlog *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->buf, b->buf, a->len) == 0);
}

/* Deterministic pseudo-random numbers for tests (xorshift64*). */
static uint64_t test_rng __attribute__((unused)) = 0x9E3779B97F4A7C15ull;
static inline uint32_t rnd32(void)
{
    test_rng ^= test_rng >> 12;
    test_rng ^= test_rng << 25;
    test_rng ^= test_rng >> 27;
    return (uint32_t)((test_rng * 2685821657736338717ull) >> 32);
}

#endif
