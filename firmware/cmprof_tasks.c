/* The task table (cmprof_tasks.h): tags to stream indexes and names, changed by the kernel's
 * hooks in a bounded number of steps whatever the task count or the churn (cmprof.h states each
 * worst case), read by the stream's drain and printed by the dump. */
#include "cmprof_tasks.h"

#include <stddef.h>

#define T cmprof_tasks
#define DUMP_MODE (!CMPROF_STREAM)

struct cmprof_task_table cmprof_tasks;

#ifdef CMPROF_TAG
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Index i's characters, as the sample loop writes them (version 7, docs/stream.md): none of them a
 * PC's first character ('?' to 'n', '.', '*'): one of 37 below 37, '}' and a base64 char below 101,
 * else '+' and two base64 chars of i - 101. */
uint32_t cmprof_tasks_chars(uint32_t i)
{
    static const char one[] = "0123456789:;<>\"#$%&'(),opqrstuvwxyz{|";
    if (i < 37u)
        return IXC_OF((uint32_t)(uint8_t)one[i], 1u);
    if (i < 37u + 64u)
        return IXC_OF((uint32_t)'}' | (uint32_t)(uint8_t)b64[i - 37u] << 8, 2u);
    i -= 101u;
    return IXC_OF('+' | (uint32_t)(uint8_t)b64[i >> 6] << 8 | (uint32_t)(uint8_t)b64[i & 63u] << 16, 3u);
}
#endif

#define HASH_MASK (CMPROF_TASKS_HASH_SLOTS - 1u)
/* Host tests count the table's steps (CMPROF_PROBE names a counter): create and delete take a few,
 * whatever the task count. */
#ifdef CMPROF_PROBE
#define PROBE_STEP() ((void)CMPROF_PROBE++)
#else
#define PROBE_STEP() ((void)0)
#endif
#ifdef CMPROF_MOVE_PROBE /* ... and the hooks' moves of a cache entry out of line (move_entry) */
#define MOVE_STEP() ((void)CMPROF_MOVE_PROBE++)
#else
#define MOVE_STEP() ((void)0)
#endif

/* A tag's index, or CMPROF_TASKS_NO_SLOT: a probe of the hash (at most half full, so a few steps). */
uint32_t cmprof_tasks_find(uint32_t tag)
{
    for (uint32_t k = cmprof_tasks_home(tag), slot; (slot = T.hash[k]) != 0u; k = (k + 1u) & HASH_MASK) {
        PROBE_STEP();
        if ((uint32_t)(uintptr_t)T.tags[slot - 1u] == tag)
            return slot - 1u;
    }
    return CMPROF_TASKS_NO_SLOT;
}

static void hash_insert(uint32_t i)
{
    uint32_t k = cmprof_tasks_home((uint32_t)(uintptr_t)T.tags[i]);
    while (T.hash[k]) {
        PROBE_STEP();
        k = (k + 1u) & HASH_MASK;
    }
    T.hash[k] = (cmprof_hash_slot_t)(i + 1u);
}

/* Take a tag out of the hash by backward shift: the entries after it in its run move up where
 * their own probe allows, so a deletion leaves no marker behind and no probe grows. */
static void hash_remove(uint32_t tag)
{
    uint32_t k = cmprof_tasks_home(tag), slot;
    while ((slot = T.hash[k]) != 0u && (uint32_t)(uintptr_t)T.tags[slot - 1u] != tag) {
        PROBE_STEP();
        k = (k + 1u) & HASH_MASK;
    }
    if (!slot)
        return;
    for (uint32_t j = (k + 1u) & HASH_MASK; (slot = T.hash[j]) != 0u; j = (j + 1u) & HASH_MASK) {
        PROBE_STEP();
        uint32_t home = cmprof_tasks_home((uint32_t)(uintptr_t)T.tags[slot - 1u]);
        if (((j - home) & HASH_MASK) >= ((j - k) & HASH_MASK)) { /* k lies on its probe: move it */
            T.hash[k] = (cmprof_hash_slot_t)slot;
            k = j;
        }
    }
    T.hash[k] = 0;
}

#if CMPROF_HIST || DUMP_MODE
#define WAITING_BEFORE(p, from) false
#else
/* Whether samples taken before ring position p may still wait to go out: p lies in (sent, stored]
 * ([sent, stored] `from` the line being built: a name due at sent may be in it). A p past the
 * write position is from before a cmprof_start(), which begins the positions at 0 again. */
#define WAITING_BEFORE(p, from) \
    ((p) - cmprof_stream_sent() - !(from) < cmprof_stream_stored() - cmprof_stream_sent() + (from))
#endif

#ifndef CMPROF_STREAM_NAMES_KEPT
#define CMPROF_STREAM_NAMES_KEPT 0 /* 1: names outlive their tasks (Zephyr's adapter keeps them) */
#endif
#define GONE_COPIES (!DUMP_MODE && !CMPROF_STREAM_NAMES_KEPT && !CMPROF_TAG_NAMES)
#if GONE_COPIES
#ifndef CMPROF_GONE_NAMES
#define CMPROF_GONE_NAMES 16u /* deleted tasks' unsent or owed names kept at once (a drain sends them) */
#endif
static char gone_names[CMPROF_GONE_NAMES][CMPROF_DUMP_NAME_LEN + 1u];
static uint16_t gone_owner[CMPROF_GONE_NAMES];
static uint32_t gone_seq[CMPROF_GONE_NAMES]; /* which copy each holds: 1 + its number (0: never used) */
static uint32_t gone_next;

/* The copy `name` is, or CMPROF_GONE_NAMES when it is no copy. */
static uint32_t copy_of(const char *name)
{
    uintptr_t off = (uintptr_t)name - (uintptr_t)gone_names;
    return off < sizeof gone_names ? (uint32_t)(off / sizeof gone_names[0]) : CMPROF_GONE_NAMES;
}
#endif

/* A slot whose name has not gone out yet is given to another task (a control block reused, or a
 * deleted task's slot taken over) before the drain ran: keep the old name, with its place, so
 * that the samples between the two names keep theirs. */
static void supersede(uint32_t i)
{
    if (!(T.flags[i] & CMPROF_TASK_UNSENT) || T.name_at[i] == CMPROF_TASKS_STORED())
        return; /* sent already, or no sample can carry the old name */
    if (T.n_superseded == CMPROF_STREAM_SUPERSEDED)
        return;
    struct cmprof_superseded *e = &T.superseded[T.n_superseded++];
    e->at = T.name_at[i];
    e->tag = T.tags[i];
    e->name = T.names[i];
    e->index = (uint16_t)i;
#if GONE_COPIES
    uint32_t k = copy_of(e->name);
    e->copy_seq = k < CMPROF_GONE_NAMES ? gone_seq[k] : 0u;
#endif
}

const char *cmprof_tasks_superseded_name(const struct cmprof_superseded *e)
{
#if GONE_COPIES
    uint32_t k = copy_of(e->name);
    if (k < CMPROF_GONE_NAMES && gone_seq[k] != e->copy_seq)
        return NULL; /* the copy went to a later deletion: the name is unknown, never another's */
#endif
    return e->name;
}

/* Whether deleted slot i must wait before a new task takes it. A task deleted since the last
 * sample sent may have samples waiting: its own (this slot's; and from the line being built, its
 * name may be in the line, which the @task line of a tag never named would overtake) or those of
 * a task with no slot, in a control block the new task may be reusing. Out of line: on the
 * drain's deepest path (learn_tag, cmprof_tasks_register) its frame sits beside supersede's. */
__attribute__((noinline)) static bool slot_waits(uint32_t i)
{
    (void)i;
    return WAITING_BEFORE(T.gone_at[i], T.from_line) ||
           (T.slotless_gone && WAITING_BEFORE(T.slotless_gone_at, false));
}

/* The list of deleted slots: circular, doubly linked, node i + 1 for slot i and node 0 its head,
 * whose links start at 0 in .bss: an empty list. No branch in either change. */
__attribute__((always_inline)) static inline void freed_link(uint32_t i)
{
    uint32_t node = i + 1u, last = T.freed_prev[0];
    T.freed_next[node] = 0;
    T.freed_prev[node] = (uint16_t)last;
    T.freed_next[last] = (uint16_t)node;
    T.freed_prev[0] = (uint16_t)node;
}

__attribute__((always_inline)) static inline void freed_append(uint32_t i)
{
    freed_link(i);
    T.flags[i] |= CMPROF_TASK_FREED;
}

__attribute__((always_inline)) static inline void freed_unlink(uint32_t i)
{
    uint32_t node = i + 1u, next = T.freed_next[node], prev = T.freed_prev[node];
    T.freed_next[prev] = (uint16_t)next;
    T.freed_prev[next] = (uint16_t)prev;
    T.flags[i] &= (uint8_t)~CMPROF_TASK_FREED;
}

#if DUMP_MODE
static void dump_earlier(uint32_t i);
static void dump_renamed(uint32_t i, const char *name);
#else
#define dump_earlier(i) ((void)0)
#define dump_renamed(i, name) ((void)0)
#endif

/* A slot for a new tag: one never used, else the one deleted longest ago once its samples went
 * out, else CMPROF_TASKS_NO_SLOT. No scan: the head of the deleted list, or nothing. A slot taken
 * while its task's samples wait in the ring would put them under its next task's name (the drain
 * looks the tag up then, and a control block reused takes another slot). */
static uint32_t take_slot(void)
{
    if (T.n_tags < CMPROF_TASKS_MAX) {
        T.flags[T.n_tags] = 0;
#ifdef CMPROF_TAG
        T.ixc[T.n_tags] = cmprof_tasks_chars(T.n_tags);
#endif
        return T.n_tags++;
    }
    if (!T.freed_next[0])
        return CMPROF_TASKS_NO_SLOT;
    uint32_t i = T.freed_next[0] - 1u;
    if (slot_waits(i))
        return CMPROF_TASKS_NO_SLOT;
    freed_unlink(i);
    supersede(i);
    dump_earlier(i); /* dump mode: the deleted task's name, for its samples in the ring */
    hash_remove((uint32_t)(uintptr_t)T.tags[i]);
    cmprof_tasks_clear(i, CMPROF_TASK_UNSENT | CMPROF_TASK_OWED); /* the deleted task's samples went out: nothing owed for it any more */
    T.flags[i] &= (uint8_t)~(CMPROF_TASK_GONE | CMPROF_TASK_TAG_SENT | CMPROF_TASK_REUSED |
                            CMPROF_TASK_STASHED); /* a new tag */
    return i;
}

void cmprof_tasks_clear(uint32_t i, uint32_t flags)
{
    T.flags[i] &= (uint8_t)~flags;
#ifdef CMPROF_TAG
    T.ixc[i] = cmprof_tasks_chars(i);
#endif
}

/* A deleted task keeps its slot (its samples still in the ring must find it) until no other slot
 * is left and a new task takes it over; the new name re-maps the index on the wire. */
uint32_t cmprof_tasks_register(const void *tag, const char *name)
{
    T.changes++;
    uint32_t i = cmprof_tasks_find((uint32_t)(uintptr_t)tag);
    if (i != CMPROF_TASKS_NO_SLOT) {
        supersede(i);
        dump_renamed(i, name); /* dump mode: a block of another name before: said, never hidden */
        if (T.flags[i] & CMPROF_TASK_FREED) /* a new task in a deleted one's control block */
            freed_unlink(i);
        T.flags[i] &= (uint8_t)~CMPROF_TASK_GONE;
    } else if ((i = take_slot()) != CMPROF_TASKS_NO_SLOT) {
        T.tags[i] = tag;
        hash_insert(i);
        T.cache_stale = true; /* the sample loop's cached answer may have been "no slot" for this tag */
    } else {
        T.full_pending |= !T.table_full; /* said once now, then with each announce */
        T.names_pending = true;          /* the drain says it with the names */
        T.table_full = true;
    }
    if (i != CMPROF_TASKS_NO_SLOT)
        T.names[i] = name;
    T.changes++;
    return i;
}

#if DUMP_MODE
static char dump_names[CMPROF_TASKS_MAX][CMPROF_DUMP_NAME_LEN + 1u];
/* Earlier names, the newest CMPROF_DUMP_EARLIER kept: a deleted task's when a new block takes its
 * slot (its samples in the ring keep their tag), a block's when it is renamed (a task of another
 * name in a reused control block: the samples of both carry the block). */
#ifndef CMPROF_DUMP_EARLIER
#define CMPROF_DUMP_EARLIER 16u
#endif
static struct {
    const void *tag;
    char name[CMPROF_DUMP_NAME_LEN + 1u];
} dump_old[CMPROF_DUMP_EARLIER];
static uint32_t dump_n_old;    /* earlier names kept so far: beyond CMPROF_DUMP_EARLIER the oldest go */
static uint32_t dump_unnamed;  /* names the full table could not take: their tags go unnamed */

/* No name: "" or "?" (Zephyr's adapter gives "?" to a thread created without one). */
static bool nameless(const char *name)
{
    return !name || !name[0] || (name[0] == '?' && !name[1]);
}

/* The slot's own copy of a name. */
static void copy_dump_name(char *to, const char *name)
{
    uint32_t k = 0;
    for (; name && name[k] && k < CMPROF_DUMP_NAME_LEN; k++)
        to[k] = name[k];
    to[k] = '\0';
}

static const char *keep_name(uint32_t i, const char *name)
{
    copy_dump_name(dump_names[i], name);
    return dump_names[i];
}

/* Slot i's name (the copy) and tag, kept before the slot changes them. */
static void dump_earlier(uint32_t i)
{
    if (nameless(dump_names[i]))
        return; /* never named (Zephyr creates, then names): nothing to keep */
    uint32_t k = dump_n_old++ % CMPROF_DUMP_EARLIER;
    dump_old[k].tag = T.tags[i];
    copy_dump_name(dump_old[k].name, dump_names[i]);
}

/* Whether name is the copy's (as far as a copy goes). */
static bool same_copy_name(const char *copy, const char *name)
{
    uint32_t k = 0;
    while (k < CMPROF_DUMP_NAME_LEN && name[k] && name[k] == copy[k])
        k++;
    return k == CMPROF_DUMP_NAME_LEN || name[k] == copy[k];
}

/* Slot i's block named again: another name than its copy is kept and the slot marked, so the dump
 * says the block's samples are several tasks'. A create with no name (Zephyr's: the name comes
 * right after) leaves the copy as it was until a name comes: the same one (a worker re-created in
 * its block) keeps nothing. */
static void dump_renamed(uint32_t i, const char *name)
{
    T.flags[i] &= (uint8_t)~CMPROF_TASK_STASHED;
    if (nameless(dump_names[i]) || (name && same_copy_name(dump_names[i], name)))
        return; /* the same name, or the first one */
    if (nameless(name)) {
        T.flags[i] |= CMPROF_TASK_STASHED; /* the copy stays: cmprof_stream_task_later */
        return;
    }
    dump_earlier(i);
    T.flags[i] |= CMPROF_TASK_REUSED;
}

static void put_text(cmprof_putc_fn putc, const char *s)
{
    while (*s)
        putc(*s++);
}

static void put_word(cmprof_putc_fn putc, uint32_t v, uint32_t digits)
{
    for (int sh = (int)digits * 4 - 4; sh >= 0; sh -= 4)
        putc("0123456789abcdef"[(v >> sh) & 15u]);
}

static void put_dec(cmprof_putc_fn putc, uint32_t v)
{
    char d[10];
    uint32_t n = 0;
    do
        d[n++] = (char)('0' + v % 10u);
    while ((v /= 10u) != 0u);
    while (n)
        putc(d[--n]);
}

static void put_task(cmprof_putc_fn putc, const void *tag, const char *name)
{
    put_text(putc, "task ");
    put_word(putc, (uint32_t)(uintptr_t)tag, 8);
    putc(' ');
    for (uint32_t k = 0; name[k] && k < CMPROF_DUMP_NAME_LEN; k++)
        putc(name[k]);
    putc('\n');
}

/* "tasks slots=S full=N forgot=K" when the table could not name every tag (N names it had no slot
 * for, K earlier names beyond CMPROF_DUMP_EARLIER), then "tasks reused TAG" for each block that
 * had several names: before the task lines, which a host reads as before. */
static void dump_table_state(cmprof_putc_fn putc)
{
    uint32_t forgot = dump_n_old > CMPROF_DUMP_EARLIER ? dump_n_old - CMPROF_DUMP_EARLIER : 0u;
    if (dump_unnamed || forgot) {
        put_text(putc, "tasks slots=");
        put_dec(putc, CMPROF_TASKS_MAX);
        put_text(putc, " full=");
        put_dec(putc, dump_unnamed);
        put_text(putc, " forgot=");
        put_dec(putc, forgot);
        putc('\n');
    }
    for (uint32_t i = 0; i < T.n_tags; i++)
        if (T.flags[i] & (CMPROF_TASK_REUSED | CMPROF_TASK_STASHED)) {
            put_text(putc, "tasks reused ");
            put_word(putc, (uint32_t)(uintptr_t)T.tags[i], 8);
            putc('\n');
        }
}

/* "task TAG NAME" for every task named (deleted ones included), after cmprof_dump()'s samples:
 * the earlier names kept first, oldest first, then each slot's newest. */
void cmprof_dump_tasks(cmprof_putc_fn putc)
{
    dump_table_state(putc);
    uint32_t first = dump_n_old > CMPROF_DUMP_EARLIER ? dump_n_old - CMPROF_DUMP_EARLIER : 0u;
    for (uint32_t n = first; n < dump_n_old; n++)
        put_task(putc, dump_old[n % CMPROF_DUMP_EARLIER].tag, dump_old[n % CMPROF_DUMP_EARLIER].name);
    for (uint32_t i = 0; i < T.n_tags; i++)
        put_task(putc, T.tags[i], T.names[i] ? T.names[i] : "?");
}
#else
#define keep_name(i, name) (name)
#endif

#if !CMPROF_TAG_NAMES
void cmprof_stream_task_later(const void *tag, const char *name)
{
    uint32_t i = cmprof_tasks_register(tag, name);
#if DUMP_MODE
    if (i == CMPROF_TASKS_NO_SLOT)
        dump_unnamed++;
    else /* (a block's name until the one after a create with none) */
        T.names[i] = T.flags[i] & CMPROF_TASK_STASHED ? dump_names[i] : keep_name(i, name);
    return;
#endif
    if (i != CMPROF_TASKS_NO_SLOT) {
        uint32_t at = CMPROF_TASKS_STORED();
        T.name_at[i] = at;
        T.flags[i] |= CMPROF_TASK_UNSENT;
        uint32_t tail = T.pending_tail;
        if (tail - T.pending_head < CMPROF_TASKS_PENDING) {
            T.pending[tail % CMPROF_TASKS_PENDING] = (struct cmprof_pending){.at = at, .index = (uint16_t)i};
            __asm__ volatile("" ::: "memory"); /* the entry before the tail: a drain in an interrupt reads it */
            T.pending_tail = tail + 1u;
        } else {
            T.overflow_at = at;
            T.pending_overflow = true;
        }
        T.names_pending = true;
    }
}

#endif

#if GONE_COPIES
/* The kernel frees a deleted task's control block, and the name in it, maybe before the drain
 * sends the name: an unsent one is copied. The oldest copy goes to the next deletion; a name
 * still pointing at it becomes unknown ('?'), never another task's (a superseded entry knows its
 * copy by number: cmprof_tasks_superseded_name). At most CMPROF_DUMP_NAME_LEN characters. */
static const char *keep_gone_name(uint32_t i, const char *name)
{
    uint32_t k = gone_next % CMPROF_GONE_NAMES;
    char *copy = gone_names[k];
    if (T.names[gone_owner[k]] == copy)
        T.names[gone_owner[k]] = NULL;
#ifdef CMPROF_TAG
    if (T.owed[gone_owner[k]] == copy)
        T.owed[gone_owner[k]] = NULL;
#endif
    gone_seq[k] = ++gone_next;
    uint32_t n = 0;
    for (; name && name[n] && n < CMPROF_DUMP_NAME_LEN; n++)
        copy[n] = name[n];
    copy[n] = '\0';
    gone_owner[k] = (uint16_t)i;
    return name ? copy : NULL;
}
#else
#define keep_gone_name(i, name) (name) /* dump mode copies every name at creation; kept names live on */
#endif

#if !CMPROF_TAG_NAMES
void cmprof_stream_task_gone(const void *tag)
{
    T.changes++;
    uint32_t i = cmprof_tasks_find((uint32_t)(uintptr_t)tag);
    if (i == CMPROF_TASKS_NO_SLOT) {
        T.slotless_gone_at = CMPROF_TASKS_STORED();
        T.slotless_gone = true;
    }
    if (i != CMPROF_TASKS_NO_SLOT && !(T.flags[i] & CMPROF_TASK_GONE)) {
        if (T.flags[i] & CMPROF_TASK_UNSENT)
            T.names[i] = keep_gone_name(i, T.names[i]);
#ifdef CMPROF_TAG
        else if (T.flags[i] & CMPROF_TASK_OWED) /* its samples may wait in the ring, the name in freed memory */
            T.owed[i] = keep_gone_name(i, T.owed[i]);
#endif
        T.flags[i] |= CMPROF_TASK_GONE;
        T.gone_at[i] = CMPROF_TASKS_STORED();
        if (!(T.flags[i] & CMPROF_TASK_FREED)) /* each slot at most once in the list */
            freed_append(i);
    }
    T.changes++;
}
#endif

/* A kernel's idle task name, alone or followed by digits (one idle task per core, FreeRTOS's
 * "IDLE1", Zephyr's "idle 01"), is streamed as CMPROF_IDLE_NAME, the name the host shows idle time
 * under; any other name as it is. */
static bool idle_alias(const char *name, const char *idle)
{
    uint32_t k = 0;
    if (!idle || !name)
        return false;
    while (idle[k] && name[k] == idle[k])
        k++;
    if (idle[k])
        return false;
    if (name[k] == ' ')
        k++;
    while (name[k] >= '0' && name[k] <= '9')
        k++;
    return name[k] == '\0';
}

#if CMPROF_TAG_NAMES
struct cmprof_tag_names cmprof_tag_names;
#define N cmprof_tag_names

/* Interrupts off around a hook's change of the cache: the tick, above the kernel's masking, also
 * changes it. A few instructions. */
#if defined(__arm__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
static inline uint32_t irq_off(void)
{
    uint32_t mask;
    __asm volatile("mrs %0, primask\n\tcpsid i" : "=r"(mask)::"memory");
    return mask;
}
static inline void irq_restore(uint32_t mask)
{
    __asm volatile("msr primask, %0" ::"r"(mask) : "memory");
}
#else /* host tests: no interrupts */
static inline uint32_t irq_off(void)
{
    return 0u;
}
static inline void irq_restore(uint32_t mask)
{
    (void)mask;
}
#endif

/* The list of dropped indexes without the old table's FREED flag: in this build an index is in
 * the list exactly while no entry gives it (refs 0) and it was used once. */
__attribute__((always_inline)) static inline void index_append(uint32_t i)
{
    freed_link(i);
    N.n_freed++;
}

__attribute__((always_inline)) static inline void index_unlink(uint32_t i)
{
    uint32_t node = i + 1u, next = T.freed_next[node], prev = T.freed_prev[node];
    T.freed_next[prev] = (uint16_t)next;
    T.freed_prev[next] = (uint16_t)prev;
    N.n_freed--;
}

/* Whether dropped index i may go to a new tag: its samples went out. */
static bool index_free(uint32_t i)
{
    uint32_t sent = cmprof_stream_sent(); /* once: WAITING_BEFORE calls it twice */
    return T.gone_at[i] - sent - 1u >= CMPROF_TASKS_STORED() - sent;
}

/* An index for a new tag: one never used, else the one dropped longest ago once its samples went
 * out, else none (the table is full). */
static uint32_t take_index(void)
{
    if (T.n_tags < CMPROF_TASKS_MAX)
        return T.n_tags++;
    uint32_t i = T.freed_next[0] - 1u;
    if (!T.freed_next[0] || !index_free(i))
        return CMPROF_TASKS_NO_SLOT;
    index_unlink(i);
    return i;
}

/* A name as the miss compares it: the characters a copy keeps, zero-padded to whole words, so
 * that it is read, hashed, compared with a copy and copied a word at a time. */
#define NAME_WORDS CMPROF_TASK_NAME_WORDS
#if defined(__GNUC__) /* GCC and clang: the few words' loops unrolled, even at -Os */
#define UNROLL_WORDS _Pragma("GCC unroll 8")
#else
#define UNROLL_WORDS
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "CMPROF_TAG_NAMES reads names a word at a time, little-endian (every Cortex-M build but BE8)"
#endif
struct name_words {
    uint32_t w[NAME_WORDS];
};
/* A word of a name at any byte address (ARMv7-M loads it in one instruction; ARMv6-M by bytes). */
typedef uint32_t __attribute__((aligned(1), may_alias)) name_word_t;
#define ZERO_BYTES(w) CMPROF_ZERO_BYTES(w) /* (cmprof_tasks.h) */
/* the bytes a name's last word keeps when CMPROF_TASK_NAME_LEN is no multiple of 4 */
#define LAST_WORD_KEEP (CMPROF_TASK_NAME_LEN % 4u ? (1u << 8u * (CMPROF_TASK_NAME_LEN % 4u)) - 1u : ~0u)
/* Names the miss gives, zero-padded to a copy's words (their words read in place). */
static const char unnamed_text[4u * NAME_WORDS + 4u] = "?";
static const char idle_text[4u * NAME_WORDS + 4u] = CMPROF_IDLE_NAME;

/* The name at p, up to its end or CMPROF_TASK_NAME_LEN characters, in words (0 past its end: the
 * word that holds the end masked by its first zero byte, the rest not read); returns a hash of
 * them (a multiply and a rotate a word read), before mix(). A 3-character name: one word, about 15
 * instructions. */
__attribute__((always_inline)) static inline uint32_t read_words(struct name_words *out, const char *p)
{
    uint32_t h = 0, k = 0;
    UNROLL_WORDS
    while (k < NAME_WORDS) {
        uint32_t w = ((const name_word_t *)p)[k];
        if (k == NAME_WORDS - 1u)
            w &= LAST_WORD_KEEP;
        uint32_t zero = ZERO_BYTES(w);
        w &= ((zero & -zero) >> 7) - 1u; /* the bytes before the first zero (all when none) */
        out->w[k++] = w;
        h = (h ^ w) * 0x9E3779B1u;
        h = h << 13 | h >> 19;
        if (zero)
            break;
    }
    UNROLL_WORDS
    for (; k < NAME_WORDS; k++)
        out->w[k] = 0;
    return h;
}

/* MurmurHash3's finalizer: names of a pattern ("w00" to "w99") spread over the sets no worse than
 * a hash by character did. */
static inline uint32_t mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    return h ^ h >> 16;
}

/* The set of by_name a name's hash belongs to; the hash's low 8 bits are its check. */
#define NAME_SET(h) (N.by_name[(h) >> (33 - CMPROF_TASKS_HASH_BITS)])

/* Whether index i's copy is the name. */
static bool same_copy(uint32_t i, const struct name_words *name)
{
    uint32_t differ = 0;
    UNROLL_WORDS
    for (uint32_t k = 0; k < NAME_WORDS; k++)
        differ |= N.copy[i][k] ^ name->w[k];
    return differ == 0u;
}

/* Whether index i's copy is the name at p, read as read_words does, a word at a time up to the one
 * that holds its end (the copy, equal there, ends there too: its later words are 0). A word equal
 * as read needs no mask (FreeRTOS zeroes a TCB: its name's bytes past the end are 0). */
__attribute__((always_inline)) static inline bool copy_is(uint32_t i, const char *p)
{
    uint32_t(*copies)[CMPROF_TASK_COPY_WORDS] = N.copy;
    __asm__("" : "+r"(copies)); /* its own address: GCC would add the copies' offset to the ways' */
    const uint32_t *copy = copies[i];
    UNROLL_WORDS
    for (uint32_t k = 0; k < NAME_WORDS; k++) {
        uint32_t w = ((const name_word_t *)p)[k];
        if (k == NAME_WORDS - 1u)
            w &= LAST_WORD_KEEP;
        uint32_t zero = ZERO_BYTES(w);
        if (w != copy[k])
            return zero && (w & (((zero & -zero) >> 7) - 1u)) == copy[k];
        if (zero)
            return true;
    }
    return true;
}

/* Index i's copy of a name (every character a copy keeps: no earlier name's left behind; the word
 * after them stays 0, the end of a name as long as a copy goes). */
static void copy_name(uint32_t i, const struct name_words *name)
{
    UNROLL_WORDS
    for (uint32_t k = 0; k < NAME_WORDS; k++)
        N.copy[i][k] = name->w[k];
}

/* The index of a name, or CMPROF_TASKS_NO_SLOT. */
static uint32_t named_index(const cmprof_hash_slot_t *set, const struct name_words *name, uint8_t check)
{
    for (uint32_t k = 0; k < 4u; k++) /* the names compared only where 8 more bits of hash agree */
        if (set[k] && N.name_check[set[k] - 1u] == check && same_copy(set[k] - 1u, name))
            return set[k] - 1u;
    return CMPROF_TASKS_NO_SLOT;
}

/* Index i goes to another name: its name's place in by_name is free. */
static void unname_index(uint32_t i)
{
    if (N.name_place[i]) {
        uint32_t at = N.name_place[i] - 1u;
        N.by_name[at >> 2][at & 3u] = 0;
        N.name_place[i] = 0;
    }
}

/* Index i stands for its name from now on: a free way of the set, else one whose index no entry
 * gives (it keeps its name, no longer found by it), else the last way (its index keeps its tasks;
 * the name's next task takes another index: more entries on the wire, never a wrong name). A free
 * way first: a name between two of its tasks keeps its place, and its index, while the set has room. */
static void place_name(cmprof_hash_slot_t *set, uint32_t i)
{
    uint32_t k = 0;
    while (k < 3u && set[k])
        k++;
    if (set[k])
        for (k = 0; k < 3u && N.refs[set[k] - 1u];)
            k++;
    if (set[k])
        N.name_place[set[k] - 1u] = 0;
    set[k] = (cmprof_hash_slot_t)(i + 1u);
    N.name_place[i] = (uint16_t)((uint32_t)(set - N.by_name[0]) + k + 1u); /* set - by_name[0]: 4 a set */
}

/* An entry that gave index i is gone: with the last one the index is no task's, and goes to the end
 * of the list of dropped indexes (oldest first), for a new name once the samples taken before now
 * went out. */
static void release_index(uint32_t i)
{
    if (!--N.refs[i]) {
        T.gone_at[i] = CMPROF_TASKS_STORED();
        index_append(i);
    }
}

/* Index i goes to another name while its last one was sampled since the wire gave it whole: the
 * old name (its copy, its tag) is kept for the drain to repeat (cmprof_tasks.h). Not a task with no
 * name ('?', under its block's address): a host shows its samples unnamed either way. */
__attribute__((noinline)) static void retire_name(uint32_t i)
{
    uint32_t tail = N.retired_tail;
    if (tail - N.retired_head >= CMPROF_TASKS_RETIRED || (uint32_t)(uintptr_t)T.tags[i] != CMPROF_INDEX_TAG(i))
        return;
    struct cmprof_retired *r = &N.retired[tail % CMPROF_TASKS_RETIRED];
    UNROLL_WORDS
    for (uint32_t k = 0; k <= NAME_WORDS; k++)
        r->copy[k] = N.copy[i][k];
    r->tag = T.tags[i];
    r->index = i;
    __asm__ volatile("" ::: "memory"); /* the entry before the tail: the drain reads it */
    N.retired_tail = tail + 1u;
}

/* The block's name in words, and its hash: the kernel's idle task's as CMPROF_IDLE_NAME, a task
 * with no name (or a block before the hooks said where names sit) as "?" (*named false). */
static uint32_t block_name(struct name_words *words, const void *block, bool *named)
{
    const char *name = (const char *)block + N.name_offset - 1u;
    *named = block && N.name_offset - 1u < 4096u && name[0];
    if (!*named)
        name = unnamed_text;
    const char *idle = N.idle_name;
    if (__builtin_expect(*named && idle && name[0] == idle[0], 0) && idle_alias(name, idle))
        name = idle_text;
    return mix(read_words(words, name));
}

/* Whether spare indexes (never used, or dropped) ran short; on the way there, one pass of the cache
 * begins: the tick's next misses drop every entry they pass (a deleted task's, which its block's
 * next task would have checked, or a live one's, whose task misses once more). */
static bool cmprof_tasks_short; /* spare indexes below CMPROF_TASKS_SPARE: deleted tasks' entries go
                                   (apart from the table: the delete hook's one load) */

__attribute__((always_inline)) static inline void count_spares(void) /* (a call cost a third of it) */
{
    bool short_now = CMPROF_TASKS_MAX - T.n_tags + N.n_freed < CMPROF_TASKS_SPARE;
    if (short_now && !cmprof_tasks_short)
        N.sweep_left = 2u * CMPROF_TASKS_SETS;
    cmprof_tasks_short = short_now;
}

/* Up to 16 ways of the pass, in the tick (nothing else changes the cache there). */
__attribute__((noinline)) static void sweep(void)
{
    for (uint32_t k = 0; k < 16u && N.sweep_left; k++, N.sweep_left--) {
        struct cmprof_tasks_way *way = &N.ways[0][0] + N.hand;
        N.hand = (N.hand + 1u) & (2u * CMPROF_TASKS_SETS - 1u);
        if (way->key != CMPROF_TASKS_EMPTY) {
            way->key = CMPROF_TASKS_EMPTY;
            release_index(way->word & 0xFFFFu);
        }
    }
}

/* The tick's miss (cmprof_tasks_word): the index of the task's name (read now), or a new one. The
 * new entry takes the first way; a live entry there moves to the second, whose own entry is
 * dropped (that task, if it runs again, finds its name's index again). Bounded: no loop but the
 * name's words (read, hashed, compared, copied) and the 4 ways of its set. */
__attribute__((noinline)) uint32_t cmprof_tasks_miss(const void *block)
{
    uint32_t tag = (uint32_t)(uintptr_t)block;
    struct cmprof_tasks_way *w = N.ways[cmprof_tasks_set(tag)];
    if (__builtin_expect(N.sweep_left != 0u, 0))
        sweep();
    bool named; /* a task with no name keeps an index of its own */
    struct name_words words;
    uint32_t h = block_name(&words, block, &named);
    uint8_t check = (uint8_t)h;
    cmprof_hash_slot_t *set = NAME_SET(h);
    uint32_t i = named ? named_index(set, &words, check) : CMPROF_TASKS_NO_SLOT;
    if (i != CMPROF_TASKS_NO_SLOT) {
        if (!N.refs[i]) { /* back from the dropped ones: its name, and its chars as they were */
            index_unlink(i);
            count_spares();
        }
    } else if ((i = take_index()) != CMPROF_TASKS_NO_SLOT) {
        count_spares();
        if (__builtin_expect(T.live[i] != 0u, 0))
            retire_name(i);
        unname_index(i);
        copy_name(i, &words);
        N.name_check[i] = check;
        N.gen[i]++;
        T.ixc[i] = CMPROF_IXC_OWED | i; /* its first sample sent carries its name */
        T.tags[i] = named ? (const void *)(uintptr_t)CMPROF_INDEX_TAG(i) : block;
        T.names[i] = T.owed[i] = (const char *)N.copy[i];
        if (named)
            place_name(set, i);
    } else {
        if (!T.table_full) {
            T.table_full = true;
            T.full_pending = true;
            T.names_pending = true;
        }
        count_spares();
        return CMPROF_TASKS_WORD_NONE;
    }
    N.refs[i]++; /* first: the entry evicted below may give the same index (a block of the name) */
    if (w[0].key != CMPROF_TASKS_EMPTY) { /* live: it moves to the second way */
        if (w[1].key != CMPROF_TASKS_EMPTY)
            release_index(w[1].word & 0xFFFFu);
        w[1] = w[0];
    }
    w[0].key = cmprof_tasks_key(block);
    w[0].word = (uint32_t)N.gen[i] << 16 | i;
    return w[0].word;
}

/* A block's parked entry: its key with the low bit flipped, which no block's tag has (blocks are
 * word-aligned), so the tick passes it by. A task created without a name (Zephyr's k_thread_create:
 * k_thread_name_set names it right after) parks its block's entry rather than drop it: its samples
 * before the rename miss and go under '?', and the rename takes the entry back when the name is the
 * index's (a worker re-created under its name: no drop, no miss, nothing sent). */
#define PARKED(key) ((key) ^ 1u)

/* The block's entry, w[0] or w[1], from key `from` to key `to` while it still gives `word` (else,
 * and with `to` 0, it is dropped), interrupts off: the tick may have moved it to the second way, or
 * evicted it, since the look. */
__attribute__((noinline)) static void move_entry(struct cmprof_tasks_way *w, uint32_t from, uint32_t to, uint32_t word)
{
    MOVE_STEP();
    uint32_t mask = irq_off();
    struct cmprof_tasks_way *e = w[0].key == from ? &w[0] : w[1].key == from ? &w[1] : NULL;
    if (e) {
        e->key = e->word == word ? to : CMPROF_TASKS_EMPTY;
        if (e->key == CMPROF_TASKS_EMPTY)
            release_index(e->word & 0xFFFFu);
    }
    irq_restore(mask);
}

/* The block's entry from key `from` to key `to`, its word kept, interrupts off: the tick may have
 * moved it to the second way, or dropped it, since the look (then there is nothing to move). No
 * look at the word: a park makes whatever entry the block has parked, and a parked entry's word
 * never changes (the tick makes no parked entry), so the entry taken back is the one compared. A
 * park and its return, a worker re-created under its name, take this way, not move_entry's. */
__attribute__((always_inline)) static inline void rekey(struct cmprof_tasks_way *w, uint32_t from, uint32_t to)
{
    uint32_t mask = irq_off();
    if (w[0].key == from)
        w[0].key = to;
    else if (w[1].key == from)
        w[1].key = to;
    irq_restore(mask);
}

#ifdef CMPROF_TAG_NAME_OFFSET
static bool ways_emptied;
void cmprof_tasks_empty_ways(void)
{
    if (ways_emptied)
        return;
    ways_emptied = true;
    for (struct cmprof_tasks_way *w = N.ways[0]; w < N.ways[CMPROF_TASKS_SETS]; w += 4) /* two sets a step */
        w[0].key = w[1].key = w[2].key = w[3].key = CMPROF_TASKS_EMPTY;
}
#endif

/* Where names sit in blocks, from the first hook that gives a name inside its block (4 KB): the
 * miss reads every later name there (FreeRTOS's pcTaskName). Kept plus 1: 0, as it starts, is
 * none yet. The kernel's idle task name with it (a kernel gives the same one to every create;
 * the first create comes before any rename). */
__attribute__((noinline)) static void learn_offset(const void *block, const char *name, const char *idle_name)
{
    uintptr_t offset = (uintptr_t)name - (uintptr_t)block;
#ifdef CMPROF_TAG_NAME_OFFSET
    cmprof_tasks_empty_ways(); /* (where the kernel gave no earlier call) */
#endif
    N.idle_name = idle_name;
    if (offset < 4096u)
        N.name_offset = offset + 1u;
}

/* The kernel's hooks. A task created or renamed in block `tag` (its name at `name`, inside the
 * block): the block's entry checked against the name. Most blocks have none (never sampled): a
 * look at the set's two ways. A tick after the look adds no entry for the tag unless its task
 * runs, and then it reads the name the hook was given. Where names sit is learnt off the path of a
 * block whose entry keeps its name (a worker re-created in its block, the common case under churn):
 * an entry's name that is the new one is a name the miss read from its place (or a "?" read before,
 * the same as a name "?": learnt at the next create). */
#ifdef CMPROF_TAG_NAME_OFFSET
/* Names in the key (cmprof_tasks_key: the Zephyr module). The kernel calls no hook at a create: it
 * empties the new thread's name, so the block's entries, keyed by their name's first word, no longer
 * match, and the thread's first sample misses and reads its name (a thread sampled before its
 * rename goes under "?", as a parked entry did). Where names sit is given once
 * (cmprof_stream_task_new, before sampling starts). */

/* A rename whose key no entry has: the block's entries left by its earlier names (one that gives the
 * block's own unnamed index, or whose key is the block's with its index's first word; an idle
 * thread's never is: its copy is CMPROF_IDLE_NAME) are dropped, as the create hook dropped them,
 * each with interrupts off: the tick may have moved them since the look. */
__attribute__((noinline)) static void drop_stale(struct cmprof_tasks_way *w, const void *block)
{
    MOVE_STEP();
    uint32_t tag = (uint32_t)(uintptr_t)block;
    UNROLL_WORDS
    for (uint32_t k = 0; k < 2u; k++) { /* (a way at a time: the masked stretch stays a drop's) */
        uint32_t mask = irq_off(), i = w[k].word & 0xFFFFu;
        if (w[k].key != CMPROF_TASKS_EMPTY && (T.tags[i] == block || w[k].key == (tag ^ N.copy[i][0]))) {
            w[k].key = CMPROF_TASKS_EMPTY;
            release_index(i);
        }
        irq_restore(mask);
    }
}

/* A rename's rest, once cmprof_tasks_rename_done (inline) found work. With no entry under the new
 * name's key (`look`: 1 + the set, from that look: not looked for again), the block's earlier ones
 * go (drop_stale). Else the entry under the key holds another name ("worker_1" after "worker_2" in
 * one block: compared there, not again here) and is dropped; an entry the tick made under the key
 * since that look (a thread that renamed itself, sampled in between) goes too: a miss more, never
 * a wrong name. */
void cmprof_tasks_renamed(const void *block, uintptr_t look)
{
    if (look != CMPROF_TASKS_RENAME_OTHER) {
        drop_stale((struct cmprof_tasks_way *)(look - 1u), block);
        return;
    }
    uint32_t tag = (uint32_t)(uintptr_t)block, key = cmprof_tasks_key(block);
    struct cmprof_tasks_way *w = N.ways[cmprof_tasks_set(tag)];
    struct cmprof_tasks_way *e = w[0].key == key ? &w[0] : w[1].key == key ? &w[1] : NULL;
    if (e)
        move_entry(w, key, CMPROF_TASKS_EMPTY, e->word);
}

__attribute__((always_inline)) static inline void block_named(const void *block, const char *name,
                                                              const char *idle_name)
{
    if (__builtin_expect(idle_name != NULL, 0))
        learn_offset(block, name, idle_name);
    else
        cmprof_tasks_rename(block, name);
}
#else
/* The rare part: where names sit learnt (a create before any); the block's entry dropped (a name
 * other than its index's), or parked before where names sit was learnt; a parked entry dropped (its
 * name is not the new one). move_entry looks again, interrupts off. Out of line: the look and the
 * compare keep the hook's arguments in the scratch registers, no frame to build. */
__attribute__((noinline)) static void block_renamed(const void *block, const char *name, const char *idle_name,
                                                   struct cmprof_tasks_way *w)
{
    uint32_t tag = (uint32_t)(uintptr_t)block;
    if (idle_name && !N.name_offset) /* a create (a rename gives no idle name) */
        learn_offset(block, name, idle_name);
    struct cmprof_tasks_way *e = w[0].key == ~tag ? &w[0] : w[1].key == ~tag ? &w[1] : NULL;
    if (e)
        move_entry(w, ~tag, name[0] ? 0u : PARKED(~tag), e->word);
    else if (w[0].key == PARKED(~tag) || w[1].key == PARKED(~tag))
        move_entry(w, PARKED(~tag), 0u, (w[0].key == PARKED(~tag) ? w[0] : w[1]).word);
}

/* The hooks' common path: the block's entry, if it has one, checked against the name. A create with
 * no name (Zephyr's k_thread_create) parks it, and the rename right after takes it back when the
 * name is its index's, each in one masked look (rekey); anything else goes out of line. */
__attribute__((always_inline)) static inline void block_named(const void *block, const char *name,
                                                              const char *idle_name)
{
    uint32_t tag = (uint32_t)(uintptr_t)block;
    struct cmprof_tasks_way *w = N.ways[cmprof_tasks_set(tag)];
    __asm__("" : "+r"(w)); /* the set's address once: GCC would index the first way's key apart */
    uint32_t k0 = w[0].key, k1 = w[1].key;
    if (k0 == ~tag || k1 == ~tag) {
        if (!name[0] && N.name_offset) { /* (a copy is never empty: "" is no index's name) */
            rekey(w, ~tag, PARKED(~tag));
            return;
        }
        uint32_t word = (k0 == ~tag ? w[0] : w[1]).word;
        if (copy_is(word & 0xFFFFu, name))
            return;
        if (__builtin_expect(N.name_offset != 0u, 1)) { /* another name: the entry goes, in one masked look */
            move_entry(w, ~tag, 0u, word);
            return;
        }
    } else if (k0 == PARKED(~tag) || k1 == PARKED(~tag)) {
        if (name[0] && copy_is((k0 == PARKED(~tag) ? w[0] : w[1]).word & 0xFFFFu, name)) {
            rekey(w, PARKED(~tag), ~tag);
            return;
        }
    } else if (__builtin_expect(!idle_name || N.name_offset, 1)) {
        return; /* no entry, none parked, and where names sit known (or a rename) */
    }
    block_renamed(block, name, idle_name, w);
}
#endif

void cmprof_stream_task_new(const void *tag, const char *name, const char *idle_name)
{
    block_named(tag, name, idle_name);
}

/* (a rename says nothing of the idle task's name: the one the kernel gave stays) */
void cmprof_stream_task_later(const void *tag, const char *name)
{
    block_named(tag, name, NULL);
}

/* A deleted task's entry stays while spare indexes last: no task runs in its block until the
 * kernel creates one there, whose hook checks the entry (the same name keeps it: a worker
 * re-created in its block costs nothing, neither here nor in the tick). Its index stays the
 * entry's meanwhile; once spare indexes run short (count_spares) the hook drops it, as the index
 * may be wanted for another name (its samples keep it until they went out). */
__attribute__((noinline)) static void gone_short(const void *tag)
{
    uint32_t t = (uint32_t)(uintptr_t)tag, key = cmprof_tasks_key(tag);
    struct cmprof_tasks_way *w = N.ways[cmprof_tasks_set(t)];
    if (w[0].key == key || w[1].key == key)
        move_entry(w, key, CMPROF_TASKS_EMPTY, 0u);
}

void cmprof_stream_task_gone(const void *tag)
{
    if (__builtin_expect(cmprof_tasks_short, 0))
        gone_short(tag);
}
#else
void cmprof_stream_task_new(const void *tag, const char *name, const char *idle_name)
{
    cmprof_stream_task_later(tag, idle_alias(name, idle_name) ? CMPROF_IDLE_NAME : name);
}
#endif
