/* A dump's task lines, read as a whole (internal to the text decoder, text.c): "task TAG NAME"
 * lines are held until the run of them ends, so that a tag given several names (a control block
 * reused by a task of another name: the samples of both carry it) is named once, with all of them
 * (newest first, the oldest left out beyond 30 characters: "+N more") and "(merged)", never the
 * newest alone; "tasks reused TAG" says so of a block whose earlier names
 * the firmware could not keep. "tasks slots=S full=N forgot=K" says the firmware's table could not
 * name every tag: after the dump's samples, each of their tags no task line named goes under one
 * name that says so (DUMPTASKS_FULL_NAME). A dump without these lines (firmware before them) reads
 * as before: each tag its one name, emitted in the order of its lines. */
#ifndef CMPROF_DECODE_DUMPTASKS_H
#define CMPROF_DECODE_DUMPTASKS_H

#include "event.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DUMPTASKS_NAME_MAX 48u /* the profile's task names: 47 characters */
#define DUMPTASKS_FULL_NAME "(task table full: raise CMPROF_STREAM_TASKS)"

struct dumptasks_rec; /* private */

struct dumptasks {
    struct dumptasks_rec *recs; /* the tags named (or said reused) in this dump, in order */
    size_t n_recs, cap_recs;
    uint32_t *rec_keys, *rec_vals; /* tag -> 1 + its record: open addressing, a power of two of slots */
    size_t rec_slots;
    uint32_t *seen;    /* the tags of this dump's samples (a set, 0 empty), for the full table's */
    size_t n_seen, seen_slots;
    uint32_t last_seen;
    bool dirty;        /* records changed since they were emitted */
    bool full;         /* the firmware said its table could not name every tag */
    bool failed_alloc;
};

/* "task TAG NAME": held. */
void dumptasks_name(struct dumptasks *t, uint32_t tag, const char *name, size_t len);
/* A "tasks ..." line (after "tasks "): true when read; false when malformed. A table-full line's
 * EV_TABLE_FULL goes out at once. Any other line starting "tasks " is not the dump's (*ours false). */
bool dumptasks_line(struct dumptasks *t, const char *s, const char *end, uint64_t offset, bool *ours,
                    const struct ev_sink *sink);
/* Names held: a line of another kind came, emit them now (before the samples an "end" closes). */
static inline bool dumptasks_held(const struct dumptasks *t)
{
    return t->dirty;
}
void dumptasks_emit(struct dumptasks *t, uint64_t offset, const struct ev_sink *sink);
/* The tags of a raw block's samples, as it is emitted. */
void dumptasks_samples(struct dumptasks *t, const uint32_t *tags, size_t n);
/* The dump ended: the names held, then the full table's name for each tag no line named; all
 * forgotten for the next dump. */
void dumptasks_end(struct dumptasks *t, uint64_t offset, const struct ev_sink *sink);
void dumptasks_free(struct dumptasks *t);

#endif
