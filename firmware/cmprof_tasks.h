/* The task table, inside the library (not for applications): which tag (a task's control block)
 * has which index on the stream, under which name, and what the drain still owes the wire. The
 * kernel's hooks (cmprof_stream_task_later, cmprof_stream_task_gone: cmprof.h) change it from
 * inside the kernel; the stream's drain (cmprof_stream.c) reads it to index samples and sends the
 * names it holds; cmprof_dump() prints it in dump mode. Build cmprof_tasks.c with the same options
 * as cmprof_sampler.c and cmprof_stream.c.
 *
 * Concurrency: a hook may preempt the drain (it runs in the kernel's critical section, which the
 * drain does not take). The hooks bump `changes` around each change; a drain lookup that saw it
 * move looks again. New names reach the drain through a single-producer queue (`pending`). */
#ifndef CMPROF_TASKS_H
#define CMPROF_TASKS_H

#include "cmprof.h"

#include <stdbool.h>
#include <stdint.h>

/* Named tags (tasks; interrupt handlers need no slot), at most at once: 62 fit one index
 * character; more take three ('+' and two), up to 4158. Deleted tasks free their slot. The default
 * covers a large RTOS application (about 25 bytes of RAM a task); should it ever fill, the stream
 * says so (@full) and the host reports the samples it could not name. */
#ifndef CMPROF_STREAM_TASKS
#define CMPROF_STREAM_TASKS 254u
#endif
_Static_assert(CMPROF_STREAM_TASKS >= 1u && CMPROF_STREAM_TASKS <= 4158u, "CMPROF_STREAM_TASKS: 1 to 4158");
#define CMPROF_TASKS_MAX CMPROF_STREAM_TASKS
/* Dump mode (built without CMPROF_STREAM): no ring to stream, only the table, whose names are
 * copied (a deleted task's control block, and its name, go back to the heap), for cmprof_dump()
 * to print after the samples. */
#ifndef CMPROF_STREAM
#define CMPROF_STREAM 0
#endif
#ifndef CMPROF_DUMP_NAME_LEN
#define CMPROF_DUMP_NAME_LEN 16u
#endif
/* Slots renamed twice between two drains (a control block reused before its first task's name went
 * out), at most at once: 20 bytes of RAM each. Beyond it a superseded name is lost and its samples
 * show under the slot's previous name (tests/test_stream_order.c checks 9; 8 were too few there). */
#ifndef CMPROF_STREAM_SUPERSEDED
#define CMPROF_STREAM_SUPERSEDED 32u
#endif
#define CMPROF_TASKS_NO_SLOT 0xFFFFu /* a tag with no slot: sent as '/' */
#define CMPROF_TASKS_PENDING 64u     /* names given by kernel hooks between two drains, queued (more: one scan) */
/* per-slot flags */
#define CMPROF_TASK_GONE 1u   /* the task was deleted: its slot may go to a new task */
#define CMPROF_TASK_UNSENT 2u /* named from a kernel hook; the drain has not sent it yet */
#define CMPROF_TASK_FREED 4u  /* in the list of deleted slots */
#define CMPROF_TASK_OWED 8u   /* tagged streams: the drain reached the slot's name (or an older one, in
                                 `owed`) but no sample needed it yet: it goes out before the first that does */
#define CMPROF_TASK_TAG_SENT 16u /* the host has the slot's tag: a name entry need not repeat it */
#define CMPROF_TASK_REUSED 32u   /* dump mode: the slot's block had another name before (its samples merged) */
#define CMPROF_TASK_STASHED 64u  /* dump mode: its block named "" (Zephyr creates, then names): the copy
                                    keeps the block's earlier name until a name comes */
#define CMPROF_IXC_OWED 0x80000000u /* an ixc that is the slot's index, not its chars: a name is owed */
/* the hash: a power of two, at least twice the tasks */
#define CMPROF_TASKS_HASH_BITS                                                                                 \
    (CMPROF_TASKS_MAX <= 64u ? 7 : CMPROF_TASKS_MAX <= 256u ? 9 : CMPROF_TASKS_MAX <= 1024u ? 11 : 13)
#define CMPROF_TASKS_HASH_SLOTS (1u << CMPROF_TASKS_HASH_BITS)
#if CMPROF_STREAM_TASKS <= 254
typedef uint8_t cmprof_hash_slot_t;
#else
typedef uint16_t cmprof_hash_slot_t;
#endif

/* A tag's home in the hash: the top bits of a multiplicative hash mix best (word-aligned TCBs too). */
static inline uint32_t cmprof_tasks_home(uint32_t tag)
{
    return tag * 2654435761u >> (32 - CMPROF_TASKS_HASH_BITS);
}

/* A task index's characters (1 or 3) little-endian in the low 24 bits, their count on top: one
 * register in the sample loop, stored as a word and stepped over by the count. */
#define IXC_OF(chars, len) ((chars) | (uint32_t)(len) << 24)
#define IXC_LEN(ixc) ((ixc) >> 24)

/* Ring positions: where the samples stand when a name is given or a task deleted. */
#if CMPROF_HIST || !CMPROF_STREAM
#define CMPROF_TASKS_STORED() 0u /* no ring: names go out with the next drain, or the dump */
#else
#define CMPROF_TASKS_STORED() cmprof_stream_stored()
#endif

struct cmprof_superseded { /* an unsent name whose slot a newer name took */
    uint32_t at;
    const void *tag;
    const char *name;
    uint32_t copy_seq; /* the copy's number when `name` is a deleted task's copy (it may be reused) */
    uint16_t index;
};

struct cmprof_task_table {
    const void *tags[CMPROF_TASKS_MAX];
#ifdef CMPROF_TAG
    uint32_t ixc[CMPROF_TASKS_MAX]; /* each slot's index chars, for the sample loop: a load */
#endif
#if defined(CMPROF_TAG_NAMES) && CMPROF_TAG_NAMES
    uint8_t live[CMPROF_TASKS_MAX]; /* (CMPROF_TAG_NAMES) the index was sampled (or its entry gave only
                                       the name's id) since its last repeat: the next round of names
                                       repeats it. Right after ixc: the sample loop reaches both from
                                       one register */
#endif
    const char *names[CMPROF_TASKS_MAX]; /* kept to repeat them with the announce */
#ifdef CMPROF_TAG
    const char *owed[CMPROF_TASKS_MAX]; /* CMPROF_TASK_OWED: the name the wire owes the slot's next sample */
#endif
    uint32_t n_tags;
    cmprof_hash_slot_t hash[CMPROF_TASKS_HASH_SLOTS]; /* open addressing on the tag: 1 + its index, 0 empty */
    volatile uint32_t changes;   /* bumped around each change of the table: a lookup that saw it move
                                    (a kernel hook preempted the drain) looks again */
    volatile bool names_pending; /* the hooks named tasks the drain has not sent */
    volatile bool cache_stale;   /* a tag got a slot: the sample loop's cached "no slot" may be wrong */
    bool from_line;              /* a slot is being taken from inside the sample loop */
    uint8_t flags[CMPROF_TASKS_MAX]; /* CMPROF_TASK_GONE, _UNSENT, _FREED */
    uint32_t name_at[CMPROF_TASKS_MAX]; /* ring position when an unsent name was given: samples from
                                           there on are the new task's, those before the old one's */
    uint32_t gone_at[CMPROF_TASKS_MAX]; /* ring position when the task was deleted: its samples lie before */
    uint32_t slotless_gone_at; /* the same for the last task deleted that had no slot (its samples '/') */
    bool slotless_gone;
    /* deleted slots, a doubly linked list, oldest first: a new task takes the first once no fresh
     * slot is left, and a task created in a deleted one's control block takes it out, both O(1)
     * (node 0 is the list's head, node i + 1 slot i) */
    uint16_t freed_next[CMPROF_TASKS_MAX + 1u], freed_prev[CMPROF_TASKS_MAX + 1u];
    struct cmprof_pending {  /* unsent names in the order given, so the drain finds the next due */
        uint32_t at;         /* without a scan of the table: stale once the slot is sent or */
        uint16_t index;      /* renamed (its name_at moved on) */
    } pending[CMPROF_TASKS_PENDING];
    volatile uint32_t pending_head, pending_tail; /* the drain takes, the kernel hooks add */
    volatile bool pending_overflow;               /* some unsent names are only in the table: scan it */
    volatile uint32_t overflow_at;                /* ... the last of them given at this ring position */
    bool table_full;   /* a tag found no slot: said with every announce (@full) */
    bool full_pending; /* ... and by the next drain */
    struct cmprof_superseded superseded[CMPROF_STREAM_SUPERSEDED];
    uint32_t n_superseded; /* beyond the array a superseded name is lost: its samples show under
                              the slot's previous name */
};
extern struct cmprof_task_table cmprof_tasks;

/* Names read from the tag (CMPROF_TAG_NAMES=1, tagged streams): for kernels whose task names live
 * in the tag's own block at one offset, learnt from the first hook (FreeRTOS's TCB, Zephyr's
 * k_thread: the Zephyr module's stream is built with it). The sampler maps each
 * sample's tag to its stream index in the tick, through a 2-way cache keyed by the tag; a miss (a
 * task's first sample, or its first after its entry was dropped) reads the name from the block,
 * alive as it runs, and takes the index of that name: an index stands for a name, not a control
 * block (the host shows one row per name), so a worker re-created under its name, or a pool of
 * workers of one name, use the index the name has and cost the wire nothing. A name without an
 * index (4 ways a set of names, by the name's hash) takes a new one and copies the name. The host's
 * tag for a named index is CMPROF_INDEX_TAG(index), the value a host that attached late gives it
 * too; a task with no name ('?') keeps an index of its own under its control block's address. The
 * kernel's hooks look at the tag's set of two ways: a create or rename compares the new name with
 * the entry's, if the block has one (the same name keeps it: a worker re-created in its block costs
 * no miss), and drops it otherwise; a delete leaves the entry while spare indexes last (the block's
 * next task's create checks it), then drops it (interrupts off only to drop an entry): no name
 * copy, no scan, no slot search. A create with no name (Zephyr's k_thread_create, named by
 * k_thread_name_set right after) parks the block's entry instead (its key's low bit flipped: the
 * tick passes it by), and the rename takes it back when the name is the entry's (the Zephyr
 * module builds with no create hook and no park instead: cmprof_tasks_key). An index no entry
 * refers to goes back to the pool (its name kept, for its next task) and to another name once the samples taken
 * before went out. Names go out by need (the first sample of an index carries its name), so a task
 * never sampled costs nothing. */
#ifndef CMPROF_TAG_NAMES
#define CMPROF_TAG_NAMES 0
#endif
#if CMPROF_TAG_NAMES
#if !defined(CMPROF_TAG) || !CMPROF_STREAM || CMPROF_HIST
#error "CMPROF_TAG_NAMES needs CMPROF_TAG and CMPROF_STREAM=1 (not histogram mode)"
#endif
#ifndef CMPROF_TASK_NAME_LEN
#define CMPROF_TASK_NAME_LEN 16u /* characters of a name copied (FreeRTOS's configMAX_TASK_NAME_LEN) */
#endif
#define CMPROF_TASK_NAME_WORDS ((CMPROF_TASK_NAME_LEN + 3u) / 4u) /* a copy's words (the miss compares them) */
/* An index's row of `copy`: the name's words and a zero word, or more (the Zephyr module: 8, a power
 * of two, so the rename's compare finds a row with one shifted add, not two) */
#ifndef CMPROF_TASK_COPY_WORDS
#define CMPROF_TASK_COPY_WORDS (CMPROF_TASK_NAME_WORDS + 1u)
#endif
_Static_assert(CMPROF_TASK_COPY_WORDS > CMPROF_TASK_NAME_WORDS, "CMPROF_TASK_COPY_WORDS: a name's words and a zero word");
#define CMPROF_TASKS_SETS (CMPROF_TASKS_HASH_SLOTS / 2u) /* 2 ways each: twice the indexes in all */
#define CMPROF_TASKS_WORD_NONE 0xFFFFu
#define CMPROF_TASKS_SPARE (CMPROF_TASKS_MAX / 8u + 1u) /* indexes kept spare: below, deleted tasks' entries go */ /* a sample's word with no index: the table was full ('/') */
/* An empty way's key (or one a hook dropped): 0, the key of no block (~tag: no block sits at
 * 0xFFFFFFFF). With CMPROF_TAG_NAME_OFFSET (keys tag ^ the name's first word, no ~: 1 instruction
 * fewer a sample in the tick and 1 a rename) ~0: the key only of a block whose name's first 4
 * bytes are its address's complement, never an ASCII name in RAM below 0x80000000 (a 4th byte of
 * 0x80 or more; a shorter name's is 0). Such a block would take an empty way's word (~(tag ^ word)
 * and an empty 0 had the same hole for a name spelling the address itself: "x@A " at 0x20414078). */
#ifdef CMPROF_TAG_NAME_OFFSET
#define CMPROF_TASKS_EMPTY 0xFFFFFFFFu
#else
#define CMPROF_TASKS_EMPTY 0u
#endif
struct cmprof_tasks_way {
    uint32_t key;  /* cmprof_tasks_key (CMPROF_TASKS_EMPTY: empty, or dropped by a hook) */
    uint32_t word; /* what the ring gets: the index's reuse count << 16 | the index */
};
#define CMPROF_INDEX_TAG(i) (0xFFFFA000u + (uint32_t)(i)) /* a named index's tag on the wire */
/* Names the tick retired: an index that goes to another name while its last name was sampled since
 * the wire last gave it whole (`live`): a host that attached after that has not heard it, so the
 * drain repeats it before the new name's first sample goes out (cmprof_stream.c, repeat_retired).
 * The tick keeps the old name here as it copies the new one over it; a full ring keeps none more
 * (that name's samples then go to "(task unknown)" on such a host, as before). */
#ifndef CMPROF_TASKS_RETIRED
#define CMPROF_TASKS_RETIRED 8u /* retired between two sample lines, at most: 28 bytes of RAM each */
#endif
struct cmprof_retired {
    uint32_t copy[CMPROF_TASK_NAME_WORDS + 1u]; /* the old name, zero-padded (as an index's copy) */
    const void *tag;                            /* the index's tag for it */
    uint32_t index;
};
struct cmprof_tag_names {
    struct cmprof_tasks_way ways[CMPROF_TASKS_SETS][2]; /* [0]: the newer entry */
    uint32_t copy[CMPROF_TASKS_MAX][CMPROF_TASK_COPY_WORDS]; /* each index's name, zero-padded */
    uint16_t gen[CMPROF_TASKS_MAX];   /* each index's reuse count: a word never matches a stale one */
    uint16_t refs[CMPROF_TASKS_MAX];  /* the cache's entries that give the index */
    cmprof_hash_slot_t by_name[CMPROF_TASKS_SETS][4]; /* 1 + the index of a name, by the name's hash: as
                                             many sets as ways, so that 5 names of one set are rare */
    uint8_t name_check[CMPROF_TASKS_MAX];  /* 8 bits of the index's name's hash, besides its set */
    uint16_t name_place[CMPROF_TASKS_MAX]; /* 1 + the index's place in by_name (set * 4 + way), 0: none */
    uint32_t n_freed;       /* indexes in the list of dropped ones */
    uint32_t sweep_left;    /* ways the tick's misses still drop, from `hand` on (a pass of the cache
                               when spare indexes ran short: the entries of deleted tasks go) */
    uint32_t hand;
    uintptr_t name_offset;  /* 1 + the name's place in the tag's block (from the hooks), 0 none yet */
    const char *idle_name;  /* the kernel's idle task name: streamed as CMPROF_IDLE_NAME */
    /* last: the tick's lookup reaches `ways` at the struct's own address */
    struct cmprof_retired retired[CMPROF_TASKS_RETIRED]; /* the tick adds, the drain takes */
    volatile uint32_t retired_head, retired_tail;
};
extern struct cmprof_tag_names cmprof_tag_names;

/* A block's set: its address from 8 bytes up (heaps align blocks to 8) plus itself 9 bits down
 * (blocks a multiple of 512 bytes apart spread too): two instructions in the tick, no multiply. On
 * FreeRTOS's full demo its 81 tasks' blocks spread over the sets as a multiplicative hash spreads
 * them (no set of 3); a bare XOR of the bits 8 apart put 3 busy tasks in one set twice and
 * tripled the misses. */
static inline uint32_t cmprof_tasks_set(uint32_t tag)
{
    return ((tag + (tag >> 9)) >> 3) & (CMPROF_TASKS_SETS - 1u);
}

/* A block's key in the cache: ~tag. With CMPROF_TAG_NAME_OFFSET (the Zephyr module: where a
 * k_thread keeps its name, known at build time) the block and its name's first word, tag ^ word:
 * a block whose name changes leaves its entry behind, so no hook runs at a create (the kernel
 * empties the new thread's name first) and a rename has only a name of the same first word to
 * check (none for a name of 3 characters or fewer: its first word is all of it). Two instructions
 * a sample in the tick (the word's load and the XOR). */
typedef uint32_t __attribute__((aligned(1), may_alias)) cmprof_name_word_t;
__attribute__((always_inline)) static inline uint32_t cmprof_tasks_key(const void *block)
{
#ifdef CMPROF_TAG_NAME_OFFSET
    return (uint32_t)(uintptr_t)block ^ *(const cmprof_name_word_t *)((const char *)block + CMPROF_TAG_NAME_OFFSET);
#else
    return ~(uint32_t)(uintptr_t)block;
#endif
}

/* The tick's part (cmprof_sampler.c): the ring's word for a task tag. */
uint32_t cmprof_tasks_miss(const void *block);
__attribute__((always_inline)) static inline uint32_t cmprof_tasks_word(const void *block)
{
    uint32_t tag = (uint32_t)(uintptr_t)block, key = cmprof_tasks_key(block);
    const struct cmprof_tasks_way *w = cmprof_tag_names.ways[cmprof_tasks_set(tag)];
    __asm__("" : "+r"(w)); /* the set's address once (GCC would index the first key apart) */
    if (__builtin_expect(w[0].key == key, 1)) /* the usual hit falls through */
        return w[0].word;
    return w[1].key == key ? w[1].word : cmprof_tasks_miss(block);
}

/* 0x80 in each byte of w that is 0 (and maybe in bytes above the first such: only the lowest counts) */
#define CMPROF_ZERO_BYTES(w) (((w) - 0x01010101u) & ~(w) & 0x80808080u)

#ifdef CMPROF_TAG_NAME_OFFSET
/* A rename of block `block`, its name at `name` (cmprof_stream_task_later; inline in the Zephyr
 * module's trace point): most renames have nothing to do. An entry under the new name's key whose
 * index's copy is the name (a worker re-created under its name; a name within its first word, 3
 * characters or fewer, is its key's: nothing to compare) keeps it, and a set with no entry holds
 * none of the block's. The rest goes out of line (cmprof_tasks_renamed: a name other than the
 * entry's drops it, or with no entry under the key the block's entries of earlier names go). */
void cmprof_tasks_renamed(const void *block, uintptr_t look);
/* Every way's key CMPROF_TASKS_EMPTY (the ways start zeroed), once: before the kernel's first rename
 * (a rename before finds every set taken and drops nothing: about 60 instructions, not 25), at the
 * latest from cmprof_stream_task_new, before the first sample (about 1,000 instructions at 128 indexes) */
void cmprof_tasks_empty_ways(void);
#define CMPROF_TASKS_RENAME_OTHER 2u /* `look`: the entry under the key gives another name */
/* whether the rename has nothing to do; else *look says what cmprof_tasks_renamed does: with no entry
 * under the key, 1 + the set's address (no second look there: the set's entries of the block's
 * earlier names go), or CMPROF_TASKS_RENAME_OTHER (it looks again: that entry goes) */
__attribute__((always_inline)) static inline bool cmprof_tasks_rename_done(const void *block, const char *name,
                                                                           uintptr_t *look)
{
    uint32_t tag = (uint32_t)(uintptr_t)block, key = cmprof_tasks_key(block);
    const struct cmprof_tasks_way *w = cmprof_tag_names.ways[cmprof_tasks_set(tag)];
    __asm__("" : "+r"(w)); /* the set's address once */
    const struct cmprof_tasks_way *e = &w[0];
    if (e->key != key && (++e)->key != key) {
        __asm__("" : "+r"(w)); /* the keys read again: fewer registers live, none saved */
        *look = (uintptr_t)w + 1u;
        return (w[0].key & w[1].key) == CMPROF_TASKS_EMPTY;
    }
    /* The kernel zero-pads a name, and an index's copy is zero-padded: equal words up to one whose
     * fourth byte is 0 are equal names (the first word is the key's). */
    const cmprof_name_word_t *p = (const cmprof_name_word_t *)name;
    __asm__("" ::: "memory"); /* its first word read again: one register fewer to keep, none to save */
    *look = CMPROF_TASKS_RENAME_OTHER;
    if (p[0] >> 24 == 0u)
        return true;
    const uint32_t *copy = cmprof_tag_names.copy[e->word & 0xFFFFu];
    uint32_t k = 1;
    if (CMPROF_TASK_NAME_WORDS > 3u) {
        /* up to 11 characters: words 1 and 2 compared with no end looked for in between (both
         * names are zero-padded there: the kernel's strncpy, the index's copy): 10 instructions, not 12 */
        if (p[1] != copy[1] || p[2] != copy[2])
            return false;
        if (p[2] >> 24 == 0u)
            return true;
        k = 3;
    }
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
    for (; k < CMPROF_TASK_NAME_WORDS; k++) {
        uint32_t a = p[k];
        if (k == CMPROF_TASK_NAME_WORDS - 1u && CMPROF_TASK_NAME_LEN % 4u)
            a &= (1u << 8u * (CMPROF_TASK_NAME_LEN % 4u)) - 1u; /* the characters a copy keeps */
        if (a != copy[k])
            return false;
        if (a >> 24 == 0u)
            return true;
    }
    return true;
}

__attribute__((always_inline)) static inline void cmprof_tasks_rename(const void *block, const char *name)
{
    uintptr_t look;
    if (!cmprof_tasks_rename_done(block, name, &look))
        cmprof_tasks_renamed(block, look);
}
#endif
#endif

/* A tag's index, or CMPROF_TASKS_NO_SLOT: a probe of the hash. */
uint32_t cmprof_tasks_find(uint32_t tag);
/* Register a tag and its name; its index, or CMPROF_TASKS_NO_SLOT when the table is full. */
uint32_t cmprof_tasks_register(const void *tag, const char *name);
/* Index i's characters on the wire (IXC_OF). */
uint32_t cmprof_tasks_chars(uint32_t i);
/* Clear slot i's CMPROF_TASK_UNSENT and/or _OWED (its name went out, or goes out now); an owed
 * slot's index chars come back. */
void cmprof_tasks_clear(uint32_t i, uint32_t flags);
/* A superseded entry's name, or NULL when the copy it pointed at went to a later deletion. */
const char *cmprof_tasks_superseded_name(const struct cmprof_superseded *e);

#endif
