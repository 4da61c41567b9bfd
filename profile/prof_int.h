/* Internal to profile/: the profile's state, shared by the files that count samples (count.c),
 * keep the task table (tasks.c), group samples into rows (rows.c), follow call stacks (calls.c)
 * and diagnose the profile (diagnose.c). Nothing outside profile/ includes it. */
#ifndef CMPROF_PROFILE_PROF_INT_H
#define CMPROF_PROFILE_PROF_INT_H

#include "profile.h"
#include "firmware.h"
#include "pcindex.h"
#include "stacks.h"

#include "../symbols/symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECENT 8192u /* PCs kept in order for the lockstep test */

struct entry {
    uint32_t pc, tag;
    uint32_t task; /* 1 + the task record the tag named when the sample came, 0: none yet */
    bool has_tag, used;
    bool approximate;
    double count;
};

/* One task: a tag with a name. A tag renamed after it had samples (an RTOS reusing a deleted
 * task's control block for a new task) starts a new record, so the old task keeps its samples.
 * Records of one name make one row (a thread deleted and re-created under its name, a pool of
 * same-named workers): `same` points at the name's first record, which counts the tags. */
struct task {
    uint32_t tag;
    char name[48];
    uint32_t same;      /* the record (0-based) whose row this one's samples join */
    uint32_t instances; /* on that record: the distinct tags that had its name */
    bool has_samples;
};

/* The counters of one tag's samples while one task record is current (count.c: count_pc). */
struct tag_lane {
    uint32_t tag, task;
    struct pc_index idx;
};

/* Lanes a profile keeps: a firmware has a few tasks; the samples of tags past these go to the hash,
 * and garbage input cannot make a lane per tag. */
#define TAG_LANES 64u
#define LANE_LEAVES_MAX 1024u /* code spans up to 8 MB: a lane's leaf table stays within 8 KB */
/* Leaves of counters all lanes may hold (16 KB each): every read of the profile scans them, so 64
 * tasks sampled all over a large firmware must not make each refresh of the view scan 64 copies of
 * its code. Past it, new places go to the hash. */
#define LANE_LEAF_BUDGET 512u

struct group {
    const void *key_a; /* interned string or NULL */
    uint64_t key_b;    /* line or tag */
    size_t name_off;   /* 1 + offset of the row's name in p->names, or 0 when row.name is set */
    uint8_t shared;    /* a function's name: 0 not asked yet, 1 no other function's, 2 several functions' (their
                        * samples go to the rows named with their files, sym_function_label; this one is no row) */
    struct prof_row row;
};

struct lockstep {       /* the last lockstep search */
    uint64_t computed_at; /* raw_samples then */
    bool found;
    uint32_t lag, window;
    double rate, expected;
};

struct prof {
    struct sym_table *syms;
    struct lockstep lockstep;
    struct entry *map;
    size_t cap, used;
    struct pc_index direct; /* untagged samples in the ELF's code, counted by address ... */
    struct tag_lane *lanes; /* ... tagged ones too, an index per (tag, task record) ... */
    size_t n_lanes, last_lane; /* (last_lane: 1 + the lane of the sample before, 0: none) */
    size_t lane_leaves;     /* leaves the lanes hold, up to LANE_LEAF_BUDGET */
    bool direct_pending;    /* ... and not yet moved into their entries (settle) */
    double bucket_total;  /* samples from histogram buckets; the total adds raw_samples */
    uint32_t bucket_at, bucket_bytes; /* the last bucket's address and size: where the buckets lie (the spread
                                       * samples' entries are grouped back into buckets by them) */
    uint64_t raw_samples; /* PC samples, not buckets; the last RECENT of them in order in recent */
    uint64_t sleep;
    uint32_t *recent;     /* a ring of the last RECENT PCs, at order_count % RECENT; NULL when shared: */
    const struct prof *order_from; /* ... then the PCs are the last ones of this profile's ring */
    uint64_t order_count; /* PCs ever written to recent (prof_reset keeps it: the ring is shared) */
    struct task *tasks;
    size_t n_tasks, cap_tasks;
    uint32_t *task_index;   /* open addressing, tag -> 1 + its current record; 0: empty */
    size_t task_index_cap;
    uint32_t *name_index;   /* open addressing, (tag, name) -> 1 + its record; 0: empty, UINT32_MAX: gone */
    size_t name_index_cap, name_index_used; /* (used: slots not empty, gone ones too) */
    uint32_t *pending_task; /* stream index -> 1 + the record its first name made (EV_TAG_PENDING) */
    uint32_t last_tag, last_task; /* consecutive samples mostly come from one task */
    bool last_valid, shared_stale;
    bool fold_overhead; /* function and line rows: the library's code as one row */
    size_t unnamed_entries; /* entries of tags that had no name yet */
    uint8_t stream_id[32];
    size_t stream_id_len;
    uint64_t table_full; /* slots of the firmware's task table, when it said the table was full */
    uint64_t lost;       /* samples the firmware took but could not keep (prof_samples_lost) */
    double weight_extra, weight_sq_extra; /* weighted samples: their weights less 1, and squares less 1 */
    /* grouping results */
    struct group *groups;
    size_t n_groups, cap_groups;
    size_t *gindex;     /* open-addressing index into groups */
    size_t gcap;
    struct prof_row *rows;
    size_t cap_rows;
    char *names;        /* "0x%08x" names and task names for rows */
    size_t names_len, names_cap;
    struct stacks *stacks;       /* samples' call stacks, from a halting source */
    struct prof_call *calls;     /* prof_calls() results */
    size_t cap_calls;
    struct codemap *codemap;     /* the ELF's instruction starts, made when first needed */
    bool codemap_tried;
    enum prof_sampler sampler;   /* who took the samples (prof_set_sampler): the lockstep advice's */
    struct prof_stream_info info; /* the firmware's announce (firmware.c): prof_reset keeps it ... */
    struct prof_section section[PROF_SECTIONS]; /* ... and its sections' figures */
};

/* The hash of a sample's key, for the entries' and the rows' open addressing. The task record is
 * left out: a sample's record may be filled in later, in place. */
static inline size_t prof_hash_key(uint32_t pc, uint32_t tag, bool has_tag)
{
    uint64_t k = ((uint64_t)pc << 32 | tag) ^ (has_tag ? 0x9E3779B97F4A7C15ull : 0);
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

/* The function at an address, or NULL. */
static inline const char *prof_function_at(struct prof *p, uint32_t addr)
{
    if (!p->syms)
        return NULL;
    const struct sym_location *l = sym_lookup(p->syms, addr);
    return l && l->known && l->symbol ? l->symbol : NULL;
}

/* count.c: 1 + the current record of a tag, 0 when it has none; make record r (0-based) the
 * current one of its tag. */
uint32_t prof_current_task(struct prof *p, uint32_t tag);
bool prof_set_current_task(struct prof *p, uint32_t r);
/* The entries of tag counted while it had no record (a tag's first name, a pending index named) go
 * under record task (1-based), placed again in the entries' hash, which holds each entry's record;
 * how many, or -1 when out of memory (they stay unnamed). */
long prof_name_entries(struct prof *p, uint32_t tag, uint32_t task);

/* profile.c: whether a location is the library's own code (firmware/cmprof_*.c). */
bool prof_in_profiler(const struct sym_location *l);
/* The drain's quick exit taken in an idle task: idle time, not overhead (prof_overhead). */
bool prof_idle_poll(const struct prof *p, const struct entry *e, const struct sym_location *l);

/* tasks.c: the names rows show for tasks, and which records share one (struct task: same). */
void prof_mark_shared_names(struct prof *p);
/* The task a sample belongs to: the record its tag named when it came (or, for samples that came
 * before their tag had a name, the tag's first name). */
const struct task *prof_task_of(const struct prof *p, const struct entry *e);
/* A sample taken in an exception handler: its tag is CMPROF_ISR_TAG(exception number). */
bool prof_in_exception(const struct entry *e);
/* A task the firmware named "?": it sampled the tag before any name came. */
bool prof_nameless(const struct task *tk);
/* The task row's name of a sample: in buf, or a string that outlives the call. */
const char *prof_task_label(const struct prof *p, const struct entry *e, char *buf, size_t len);

/* rows.c: rows keyed by (a, b), and their names. */
size_t prof_keep_name(struct prof *p, const char *s);
const char *prof_group_name(const struct prof *p, const struct group *g);
struct group *prof_group_for(struct prof *p, const void *a, uint64_t b);

#endif
