/* A dump's task lines, read as a whole (dumptasks.h). */
#include "dumptasks.h"

#include "textline.h"
#include "../base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MERGED " (merged)"
#define MORE_ROOM 8u /* "+N more" */

struct dumptasks_rec {
    uint32_t tag;
    bool reused;     /* "tasks reused": the block had names the firmware could not keep */
    bool emitted;    /* its name went out as it is now */
    uint32_t names;  /* names it was given (one after another, each other than the last) */
    uint32_t more;   /* ... of them not in `shown` (no room: the oldest go) */
    char last[DUMPTASKS_NAME_MAX];
    char shown[DUMPTASKS_NAME_MAX]; /* the names, newest first, joined by '+' */
    uint8_t seg[DUMPTASKS_NAME_MAX / 2]; /* each one's length, newest first */
    uint32_t n_seg;
};

/* The room for names in a merged one: the rest is " (merged)" and "+N more". */
#define SHOWN_ROOM (DUMPTASKS_NAME_MAX - 1u - (sizeof MERGED - 1u) - MORE_ROOM)

static uint32_t mix(uint32_t tag)
{
    return tag * 2654435761u;
}

/* The slot of tag in an open-addressing table of uint32 keys (0 empty; a tag 0 is kept as ~0u). */
static size_t slot_of(const uint32_t *keys, size_t slots, uint32_t key)
{
    size_t k = mix(key) & (slots - 1);
    while (keys[k] && keys[k] != key)
        k = (k + 1) & (slots - 1);
    return k;
}

/* Room for one more key in a table at most half full: doubled and rehashed. */
static bool room_for(uint32_t **keys, uint32_t **vals, size_t *slots, size_t used)
{
    if ((used + 1) * 2 <= *slots)
        return true;
    size_t n = *slots ? *slots * 2 : 64;
    uint32_t *k = calloc(n, sizeof *k), *v = vals ? calloc(n, sizeof *v) : NULL;
    if (!k || (vals && !v)) {
        free(k);
        free(v);
        return false;
    }
    for (size_t i = 0; i < *slots; i++)
        if ((*keys)[i]) {
            size_t j = slot_of(k, n, (*keys)[i]);
            k[j] = (*keys)[i];
            if (vals)
                v[j] = (*vals)[i];
        }
    free(*keys);
    *keys = k;
    if (vals) {
        free(*vals);
        *vals = v;
    }
    *slots = n;
    return true;
}

/* The record of tag, made when new (else NULL); NULL too when out of memory. */
static struct dumptasks_rec *rec_of(struct dumptasks *t, uint32_t tag, bool make)
{
    uint32_t key = tag ? tag : ~0u;
    if (t->rec_slots) {
        size_t k = slot_of(t->rec_keys, t->rec_slots, key);
        if (t->rec_keys[k])
            return &t->recs[t->rec_vals[k] - 1];
    }
    if (!make || !room_for(&t->rec_keys, &t->rec_vals, &t->rec_slots, t->n_recs) ||
        !grow_array((void **)&t->recs, &t->cap_recs, t->n_recs + 1, sizeof *t->recs, 64)) {
        t->failed_alloc |= make;
        return NULL;
    }
    size_t k = slot_of(t->rec_keys, t->rec_slots, key);
    t->rec_keys[k] = key;
    t->rec_vals[k] = (uint32_t)++t->n_recs;
    struct dumptasks_rec *r = &t->recs[t->n_recs - 1];
    memset(r, 0, sizeof *r);
    r->tag = tag;
    return r;
}

void dumptasks_name(struct dumptasks *t, uint32_t tag, const char *name, size_t len)
{
    struct dumptasks_rec *r = rec_of(t, tag, true);
    if (!r)
        return;
    char want[DUMPTASKS_NAME_MAX];
    snprintf(want, sizeof want, "%.*s", (int)len, name);
    if (r->names && strcmp(r->last, want) == 0)
        return; /* the same name again */
    size_t w = strlen(want) < SHOWN_ROOM ? strlen(want) : SHOWN_ROOM, have = strlen(r->shown);
    while (r->n_seg && have + 1 + w > SHOWN_ROOM) { /* the oldest shown make room */
        r->n_seg--;
        have -= r->seg[r->n_seg] + (r->n_seg ? 1u : 0u); /* and its '+' */
        r->shown[have] = '\0';
        r->more++;
    }
    size_t at = w + (r->n_seg ? 1u : 0u);
    memmove(r->shown + at, r->shown, have + 1);
    memcpy(r->shown, want, w);
    if (r->n_seg)
        r->shown[w] = '+';
    memmove(r->seg + 1, r->seg, r->n_seg * sizeof *r->seg);
    r->seg[0] = (uint8_t)w;
    r->n_seg++;
    memcpy(r->last, want, sizeof want);
    r->names++;
    r->emitted = false;
    t->dirty = true;
}

bool dumptasks_line(struct dumptasks *t, const char *s, const char *end, uint64_t offset, bool *ours,
                    const struct ev_sink *sink)
{
    uint64_t slots, full, forgot, tag;
    const char *p = s;
    *ours = true;
    if (textline_uint(&p, end, "reused ", &tag, 16)) {
        struct dumptasks_rec *r = p == end && tag <= UINT32_MAX ? rec_of(t, (uint32_t)tag, true) : NULL;
        if (!r)
            return t->failed_alloc;
        r->reused = true;
        r->emitted = false;
        t->dirty = true;
        return true;
    }
    if ((size_t)(end - s) < 6 || memcmp(s, "slots=", 6) != 0) {
        *ours = false;
        return true;
    }
    /* the firmware's table has 1..4158 slots */
    if (!textline_uint(&p, end, "slots=", &slots, 10) || !textline_uint(&p, end, "full=", &full, 10) ||
        !textline_uint(&p, end, "forgot=", &forgot, 10) ||
        p != end || slots == 0 || slots > 4158u)
        return false;
    if (full || forgot) {
        t->full = true;
        struct ev e = {.type = EV_TABLE_FULL, .offset = offset, .table_full = {.slots = slots}};
        ev_emit(sink, &e);
    }
    return true;
}

void dumptasks_emit(struct dumptasks *t, uint64_t offset, const struct ev_sink *sink)
{
    for (size_t i = 0; i < t->n_recs; i++) {
        struct dumptasks_rec *r = &t->recs[i];
        if (r->emitted || !r->names)
            continue;
        char buf[DUMPTASKS_NAME_MAX + 48]; /* (the shown names leave room: the name fits 47) */
        const char *name = r->last;
        if (r->names > 1 || r->reused) { /* one block, several tasks: all of their names, never the last alone */
            char more[24] = "";
            if (r->more)
                snprintf(more, sizeof more, "+%u more", (unsigned)r->more);
            snprintf(buf, sizeof buf, "%s%s%s" MERGED, r->shown, more, r->names == 1 ? "+?" : "");
            name = buf;
        }
        struct ev e = {.type = EV_TASK_NAME, .offset = offset, .task_name = {.tag = r->tag, .name = name,
                                                                            .name_len = strlen(name)}};
        ev_emit(sink, &e);
        r->emitted = true;
    }
    t->dirty = false;
}

void dumptasks_samples(struct dumptasks *t, const uint32_t *tags, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (tags[i] == t->last_seen || !tags[i])
            continue;
        t->last_seen = tags[i];
        if (t->seen_slots && t->seen[slot_of(t->seen, t->seen_slots, tags[i])])
            continue;
        if (!room_for(&t->seen, NULL, &t->seen_slots, t->n_seen)) {
            t->failed_alloc = true;
            return;
        }
        t->seen[slot_of(t->seen, t->seen_slots, tags[i])] = tags[i];
        t->n_seen++;
    }
}

/* An interrupt handler's tag (CMPROF_ISR_TAG), or one a stream gives (pending, unsent): never a block. */
static bool block_tag(uint32_t tag)
{
    return tag && (tag & 0xFFFFFE00u) != 0xFFFFFE00u && !ev_tag_pending(tag) && tag < 0xFFFFC000u;
}

void dumptasks_end(struct dumptasks *t, uint64_t offset, const struct ev_sink *sink)
{
    if (t->dirty)
        dumptasks_emit(t, offset, sink);
    for (size_t i = 0; t->full && i < t->seen_slots; i++) {
        uint32_t tag = t->seen[i];
        if (!block_tag(tag) || rec_of(t, tag, false))
            continue;
        struct ev e = {.type = EV_TASK_NAME, .offset = offset,
                       .task_name = {.tag = tag, .name = DUMPTASKS_FULL_NAME, .name_len = strlen(DUMPTASKS_FULL_NAME)}};
        ev_emit(sink, &e);
    }
    if (t->rec_slots)
        memset(t->rec_keys, 0, t->rec_slots * sizeof *t->rec_keys);
    if (t->seen_slots)
        memset(t->seen, 0, t->seen_slots * sizeof *t->seen);
    t->n_recs = t->n_seen = 0;
    t->last_seen = 0;
    t->full = false;
}

void dumptasks_free(struct dumptasks *t)
{
    free(t->recs);
    free(t->rec_keys);
    free(t->rec_vals);
    free(t->seen);
    memset(t, 0, sizeof *t);
}
