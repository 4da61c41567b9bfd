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

/* An event's payload in the log's fixed columns: where each type's named fields are printed, so
 * that one line format serves every type (a=addr t=tag/has_tag s=size i=index k=kind v=value c=count
 * min/max/sum, then the text). */
struct ev_columns {
    uint32_t addr, tag, size, index, kind;
    int has_tag;
    uint64_t value, count, min, max, sum;
    const char *text;
    size_t text_len;
};

static inline void evlog_run_columns(struct ev_columns *c, const struct ev_run *r)
{
    c->value = r->current;
    c->count = r->count;
    c->min = r->min;
    c->max = r->max;
    c->sum = r->sum;
}

static inline struct ev_columns evlog_columns(const struct ev *e)
{
    struct ev_columns c = {0};
    switch (e->type) {
    case EV_PC:
        c = (struct ev_columns){.addr = e->pc.addr, .tag = e->pc.tag, .has_tag = e->pc.has_tag,
                                .value = e->pc.taken, .count = e->pc.kept};
        break;
    case EV_PCS:
        c.count = e->pcs.n;
        break;
    case EV_BUCKET:
        c = (struct ev_columns){.addr = e->bucket.addr, .size = e->bucket.bytes, .count = e->bucket.samples};
        break;
    case EV_HIST_HEADER:
        c = (struct ev_columns){.addr = e->hist.base, .size = e->hist.bucket_bytes, .count = e->hist.samples,
                                .value = e->hist.out};
        break;
    case EV_TASK_NAME:
        c = (struct ev_columns){.tag = e->task_name.tag, .value = e->task_name.pending, .text = e->task_name.name,
                                .text_len = e->task_name.name_len};
        break;
    case EV_SECTION:
        c.index = e->section.index;
        evlog_run_columns(&c, &e->section.run);
        break;
    case EV_LOG:
        c = (struct ev_columns){.text = e->log.line, .text_len = e->log.len};
        break;
    case EV_SOFTWARE:
        c = (struct ev_columns){.index = e->software.port, .size = e->software.bytes, .value = e->software.value};
        break;
    case EV_TIMESTAMP:
        c = (struct ev_columns){.index = e->timestamp.relation, .size = e->timestamp.bytes, .value = e->timestamp.delta};
        break;
    case EV_GLOBAL_TS:
        c = (struct ev_columns){.index = e->global_ts.which, .size = e->global_ts.bytes, .value = e->global_ts.bits};
        break;
    case EV_EXTENSION:
        c = (struct ev_columns){.index = e->extension.sh, .size = e->extension.bytes, .value = e->extension.info};
        break;
    case EV_EXCEPTION:
        c = (struct ev_columns){.index = e->exception.number, .size = e->exception.bytes,
                                .value = e->exception.function};
        break;
    case EV_EVENT_COUNTER:
        c = (struct ev_columns){.size = e->counter.bytes, .value = e->counter.wraps};
        break;
    case EV_DATA_TRACE:
        c = (struct ev_columns){.index = e->data.comparator, .kind = e->data.what, .size = e->data.bytes,
                                .value = e->data.value};
        break;
    case EV_STREAM_INFO:
        c = (struct ev_columns){.value = e->info.clock_hz, .count = e->info.period, .min = e->info.timer_hz,
                                .max = e->info.section_hz,
                                .sum = e->info.jitter | (uint64_t)e->info.code_base << 32,
                                .text = e->info.build_id, .text_len = e->info.build_id_len};
        break;
    case EV_LOST:
        c.count = e->lost.samples;
        break;
    case EV_SECTION_NAME:
        c = (struct ev_columns){.index = e->section_name.index, .text = e->section_name.name,
                                .text_len = e->section_name.name_len};
        break;
    case EV_SECTION_EVENT:
        c = (struct ev_columns){.index = e->section_event.section, .kind = e->section_event.slot,
                                .tag = e->section_event.pmu_event};
        evlog_run_columns(&c, &e->section_event.run);
        break;
    case EV_STACK:
        c = (struct ev_columns){.addr = e->stack.pc, .count = e->stack.n};
        break;
    case EV_TARGET:
        c = (struct ev_columns){.text = e->target.text, .text_len = e->target.len};
        break;
    case EV_TASK_UNKNOWN:
        c = (struct ev_columns){.tag = e->task_unknown.tag, .index = e->task_unknown.index,
                                .count = e->task_unknown.samples};
        break;
    case EV_STACK_WORDS:
        c = (struct ev_columns){.addr = e->stack_words.pc, .index = e->stack_words.back, .value = e->stack_words.lr,
                                .size = e->stack_words.scanned, .count = e->stack_words.n};
        break;
    case EV_STACK_DROPPED:
        c.count = e->stack_dropped.records;
        break;
    case EV_TABLE_FULL:
        c.count = e->table_full.slots;
        break;
    default: /* EV_SLEEP, EV_OVERFLOW, EV_SYNC, EV_NAMES_UNSURE: no payload */
        break;
    }
    return c;
}

static inline void evlog_event(void *ctx, const struct ev *e)
{
    struct evlog *l = ctx;
    if (e->type == EV_PCS) { /* the same samples as EV_PC events: logs compare however they came */
        l->batches++;
        struct ev one = {.type = EV_PC, .offset = e->offset};
        for (uint64_t i = 0; i < e->pcs.n; i++) {
            one.pc.addr = e->pcs.addrs[i];
            evlog_event(ctx, &one);
        }
        return;
    }
    struct ev_columns c = evlog_columns(e);
    char line[1200];
    int n = snprintf(line, sizeof line,
                     "%d a=%08" PRIx32 " t=%" PRIx32 "/%d s=%" PRIu32 " i=%" PRIu32 " k=%" PRIu32 " v=%" PRIx64
                     " c=%" PRIu64 " %" PRIu64 "/%" PRIu64 "/%" PRIu64 " '%.*s'\n",
                     (int)e->type, c.addr, c.tag, c.has_tag, c.size, c.index, c.kind, c.value, c.count,
                     c.min, c.max, c.sum, (int)(c.text_len > 1000 ? 1000 : c.text_len),
                     c.text ? c.text : "");
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
