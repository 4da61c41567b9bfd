/* Live streaming: compact, checked text lines from the sample ring (protocol: docs/stream.md).
 *   $<samples>!CC        samples; each is 3 chars '?' + 6 bits, the halfword offset from the code
 *                        base within 512 KB, or '.' and 4 such chars within 32 MB, or '*' and 6
 *                        base64 chars for any other PC (e.g. 0 or RAM)
 *   %<samples>!CC        the same with a tag before the line's first sample and before each sample
 *                        whose tag differs from the one before it: its task index (1 to 3 chars),
 *                        '-' and 2 chars for an exception number, '/' for a tag with no slot
 *   #<pairs>!CC          histogram deltas: 3 chars of bucket index, 3 chars of new counts
 *   @<word> ...!CC       announce, task, section names, section statistics, loss count
 *   @N<entries>!CC       names repeated for a host that attached late, several to a line: each
 *                        the index, 6 chars of tag, 1 of the name's length, then the name
 * CC is the sum12 check of everything before the '!', as two base64 chars. */
#include "cmprof.h"
#include "cmprof_tasks.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define LINE_SAMPLES CMPROF_STREAM_LINE
_Static_assert(LINE_SAMPLES >= 1u && LINE_SAMPLES <= 64u, "CMPROF_STREAM_LINE: 1 to 64 (the host's limit)");
#if CMPROF_STREAM /* dump mode (no CMPROF_STREAM) needs no stream: cmprof_tasks.c names the tags */
#define MAX_TASKS CMPROF_TASKS_MAX
#define SUPERSEDED_MAX CMPROF_STREAM_SUPERSEDED
#define NO_SLOT CMPROF_TASKS_NO_SLOT
#define ESCAPE_INDEX 62u
#define TASK_NAME_MAX 24u /* characters of a task name sent; keeps the drain's stack small */
/* Name traffic (@task lines) may take one byte in NAME_SHARE of all the bytes sent, plus a burst
 * of NAME_BURST bytes: 1/11 is about 9 %, whatever the task count or the losses. */
#define NAME_SHARE 11
#define NAME_BURST 64
#define NAME_DEBT 1024
#define LOST_EVERY 32u /* lines' worth of samples between two @lost reports (flush reports at once) */
#define TURNS_MAX 8u /* repeats owed by new names sent on credit (see repeat_affordable) */
#define TURNS_LINE 4u /* turns that make a line of repeats go, short of credit */
/* A round of repeats is spread over ROUND_PACE seconds of samples (round_every each): table position
 * j of a round of N goes no sooner than j N-ths of the way. A host that attached during a round has
 * every name by the next round's same position: within ROUND_PACE seconds and a line, inside the 5 s
 * of issue 30, where rounds at the names' whole share went in 1.4 to 2.7 s and began every second.
 * The share still bounds them (a round then takes longer, as before). A round's first ROUND_BATCH
 * positions go at once (a table of 8 or fewer as before). Only with CMPROF_TAG_NAMES: without it a
 * '=' entry often refers to a name by its id, which a late host waits for the index's repeat to
 * learn, and paced rounds left it short of names (FreeRTOS's full demo, 1,000 creations a second
 * under 100 names: 2.18 % of a late host's samples unnamed 5 s on, none at the whole share). */
#if CMPROF_TAG_NAMES
#define ROUND_PACE 4u
#else
#define ROUND_PACE 0u
#endif
#define ROUND_BATCH 8u /* positions that make a line of repeats go (each line's framing paid for several) */
#define GONE CMPROF_TASK_GONE
#define UNSENT CMPROF_TASK_UNSENT
#define PENDING_N CMPROF_TASKS_PENDING
#define OWED CMPROF_TASK_OWED
#define TAG_SENT CMPROF_TASK_TAG_SENT
/* Names by need (tagged sample lines): a name due at its ring position is only owed, and goes out
 * right before the first sample that carries its index; a task never sampled costs no bytes. */
#if defined(CMPROF_TAG) && !CMPROF_HIST
#define LAZY_NAMES 1
#else
#define LAZY_NAMES 0
#endif

/* The per-sample loops, compiled for speed whatever the application's -Os: with -Os GCC keeps the
 * loop's pointers on the stack (about 4 instructions a sample). Clang has no such attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define HOT_LOOP __attribute__((optimize("O2")))
#else
#define HOT_LOOP
#endif

/* A word's copy, inline even where the application builds with -ffreestanding (FreeRTOS's demos
 * do: -fno-builtin makes memcpy a call, about 20 instructions for 4 bytes, on every sample). */
#define COPY4(dst, src) __builtin_memcpy((dst), (src), 4)

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct {
    uint32_t code_base;
    uint32_t lost_sent;
    int32_t credit;              /* name traffic's budget in bytes times NAME_SHARE (see send) */
    uint32_t round_next, round_end; /* the names repeated in this round (one per announce at most): a trickle */
    bool round_overran;             /* an announce came while this round went on: it takes over a second */
    bool round_unpaced;             /* the round a new stream begins with (no ROUND_PACE: its host has no name) */
    uint32_t since_lost;            /* samples sent since the last @lost */
    uint32_t turns; /* repeats that may go on debt, one per new name sent while a round goes on */
    uint32_t last_tag;  /* consecutive samples mostly come from the same task: its index chars, */
    uint32_t last_ixc;  /* as IXC_OF packs them */
    bool last_valid;
    struct cmprof_stream_info info; /* the last announce, repeated by the drain */
    uint32_t announce_every;        /* samples in about one second of target time; 0: no announce yet */
    uint32_t round_every, round_at; /* samples taken in a second (uncapped), and when the round began */
    uint32_t since_announce;        /* samples sent since the last announce */
    uint32_t group_left;            /* samples of a reservoir's group still to send, in '&' lines */
    uint32_t group_taken, group_kept; /* what the group stands for, and its size */
} stream;

static uint32_t line_number; /* of the next sample line, 12 bits on the wire (version 7) */

/* Version 7's page cache (docs/stream.md): the 32 code pages (64 halfwords, 128 bytes, each) of
 * the samples sent last, each at slot (page mod 32). A sample in a page the host has at its slot
 * goes out as that slot's char and one char of offset: 2 chars where a PC takes 3. The host keeps
 * the same from the lines it reads; both start afresh every PAGE_EPOCH lines (the line's number
 * says which), so a host that attached late, or lost a line, reads again within PAGE_EPOCH lines. */
#define PAGE_SLOTS 32u
#define PAGE_EPOCH 8u /* lines (the line number's low bits 0: a new epoch) */
#define PAGE_HIT 'O'  /* slot k's char: 'O' + k ('O' to 'n') */
#define PAGE_NONE 0xFFFFFFFFu /* a key no page has (pages are 18 bits) */
static uint32_t page_key[PAGE_SLOTS] __attribute__((aligned(32)));

#if CMPROF_TAG_NAMES
/* Version 8's numbered names (put_numbered): the name each refers to. Version 9: the last name
 * written out that ends in two digits or more, so that names of their own (u000123) number against
 * each other across the application's other names. */
#define NUM_WORDS (TASK_NAME_MAX / 4u)
struct num_ref {
    uint32_t text[NUM_WORDS + 1u]; /* the name (its first len chars count; a word's room past them) */
    uint32_t len;             /* 0: none */
};
static struct num_ref epoch_ref; /* the last name ending in 2 digits a '=' entry wrote out since the
                                    page epoch began */
static struct num_ref repeat_ref; /* the last name ending in 2 digits the "@N" line being built wrote
                                     out, numbered */
static const char *repeat_text;   /* ... where it is: in the line, or repeat_ref's text */
static uint32_t repeat_len_ref;   /* ... its length (0: none yet in the line) */
static uint32_t repeat_prev;      /* the index of the "@N" line's entry before (version 9's '.') */
static struct { /* retired names that go inside their index's next '=' entry (put_retired_in) */
    uint16_t index;
    uint16_t chars;
} retired_in[CMPROF_TASKS_RETIRED];
static uint32_t n_retired_in;
#endif

#if CMPROF_TAG_NAMES
/* The indexes a '=' entry named whole in this page epoch (DEFS_MAX a line at most). A host places a
 * line's samples only once it read the line's epoch from its first line (the page cache), so it read
 * those entries: their names' samples in the epoch need no repeat. At the epoch's end their live marks
 * go (set by those samples, or left by a round), so that only samples in a later epoch make a name
 * live: a worker that lives and dies within the epoch of its entry is repeated neither by a round
 * nor as it retires. */
static uint16_t epoch_named[PAGE_EPOCH * 8u];
static uint32_t n_epoch_named;

static void epoch_unmark(void)
{
    for (uint32_t k = 0; k < n_epoch_named; k++)
        cmprof_tasks.live[epoch_named[k]] = 0;
    n_epoch_named = 0;
}
#endif

/* A line with number `number` begins: every PAGE_EPOCH lines the pages start afresh. */
__attribute__((unused)) static void page_line(uint32_t number) /* (histogram mode sends no sample line) */
{
    if (number % PAGE_EPOCH)
        return;
#if CMPROF_TAG_NAMES
    epoch_ref.len = 0; /* numbered names (version 8) start afresh with the pages */
    epoch_unmark();
#endif
    struct eight {
        uint32_t w[8];
    };
    static const struct eight none = {{PAGE_NONE, PAGE_NONE, PAGE_NONE, PAGE_NONE, PAGE_NONE, PAGE_NONE, PAGE_NONE,
                                       PAGE_NONE}};
    struct eight *keys = (struct eight *)(void *)page_key; /* copied 8 words at a time (LDM, STM): no loop */
    keys[0] = keys[1] = keys[2] = keys[3] = none;
}

/* The name each index stands for on the host, as its last '=' entry gave it: 1 + the id, and the
 * id's takeover count then (name_ids' `taken`, its low bits) above it (0: not known that way). An
 * entry that would only say it again (a worker re-created, in its predecessor's control block,
 * under its name: the same tag, the same name) is left out; an id another name took over since is
 * no longer the index's name, even when the index's new name is the id's now. 16 bits an index, as
 * a 16 KB part's RAM allows: the count is kept modulo 2^(15 - log2(ids)), 256 at the default 128
 * ids, so an index left unsaid that long while its id changed hands exactly that often is the one
 * case an entry is wrongly left out. */
static uint16_t host_name_id[MAX_TASKS];
#define HOST_NAME_ID_SHIFT (__builtin_ctz(CMPROF_STREAM_NAME_IDS) + 1) /* the bits of 1 + an id */
#if CMPROF_TAG_NAMES
/* The tag the host has for each index (~tag: 0 none). The tick reuses indexes for other tags, so
 * the drain keeps this itself where a flag of the table's would go stale. */
static uint32_t host_tag_not[MAX_TASKS];
/* A named index's tag, CMPROF_INDEX_TAG(i), is the one a host gives an index whose tag it never
 * had: no entry needs to send it, unless the host may have had a block's tag for the index (a task
 * with no name had it: host_block_tag, never cleared, as a host keeps its tags across announces). */
static uint8_t host_block_tag[MAX_TASKS];
#define HOST_HAS_TAG(i, tag)                                                                             \
    (host_tag_not[i] == ~(uint32_t)(uintptr_t)(tag) ||                                                   \
     ((uint32_t)(uintptr_t)(tag) == CMPROF_INDEX_TAG(i) && !host_block_tag[i]))
#define HOST_GETS_TAG(i, tag)                                                                            \
    (host_tag_not[i] = ~(uint32_t)(uintptr_t)(tag),                                                      \
     host_block_tag[i] |= (uint32_t)(uintptr_t)(tag) != CMPROF_INDEX_TAG(i))
#else
#define HOST_HAS_TAG(i, tag) ((cmprof_tasks.flags[i] & TAG_SENT) && (tag) == cmprof_tasks.tags[i])
#define HOST_GETS_TAG(i, tag) ((void)((tag) == cmprof_tasks.tags[i] && (cmprof_tasks.flags[i] |= TAG_SENT)))
#endif

#if defined(CMPROF_TAG) && !CMPROF_TAG_NAMES
/* Wire indexes in first-sample order. The hooks give a task its slot when it is created, in
 * creation order (FreeRTOS's full demo creates about 84 tasks before it runs); its samples would
 * carry that slot's index, and past the 37th most of them take 2 characters. A slot's index on the
 * wire is given instead the first time its name goes out (names go by need: with its first sample
 * sent), so the tasks sampled first, the busy ones, take the 1-character indexes (the tick does
 * the same with CMPROF_TAG_NAMES). A slot keeps its wire index for good (its next tasks use it, as
 * they used the slot's): a permutation of the slots, no pool to free, and the host sees only
 * indexes. 1 + the index, 0: none yet. */
static cmprof_hash_slot_t wire_of[MAX_TASKS];
static uint32_t wire_next;

static uint32_t wire_index(uint32_t i)
{
    if (!wire_of[i])
        wire_of[i] = (cmprof_hash_slot_t)++wire_next;
    return wire_of[i] - 1u;
}

/* Slot i's name goes out now (cmprof_tasks_clear gave it the slot's chars): its samples carry its
 * wire index from here on. */
static void wire_chars(uint32_t i)
{
    cmprof_tasks.ixc[i] = cmprof_tasks_chars(wire_index(i));
}
#else
#define wire_index(i) (i) /* CMPROF_TAG_NAMES: the tick gives indexes at first samples already */
#define wire_chars(i) ((void)(i))
#endif

static void send_announce(cmprof_putc_fn putc);
static void send_task(cmprof_putc_fn putc, uint32_t i);
static void send_task_as(cmprof_putc_fn putc, uint32_t i, const void *tag, const char *name);
static void repeat_names(cmprof_putc_fn putc);

/* Once about a second's worth of samples went out (and after the first loss), announce again and
 * start another round of names: a host that attached late, or lost a line, has the clock and the
 * code base within a second, and the names as fast as their share of the line allows. */
static void reannounce_after(cmprof_putc_fn putc, uint32_t samples, bool first_loss)
{
    if (!stream.announce_every)
        return;
    stream.since_announce += samples;
    if (stream.since_announce < stream.announce_every && !first_loss)
        return;
    send_announce(putc);
}

/* Name ids (name_id): bumped with each round of repeats. Each name goes whole once a round, so a
 * host that attached late learns the ids within a round. */
static uint8_t names_round;

static void start_round(void)
{
    names_round++;

    stream.round_at = cmprof_samples();
    stream.round_unpaced = false;
    stream.round_next = 0;
    stream.round_end = cmprof_tasks.n_tags;
    stream.round_overran = false;
}

static void cap_credit(void)
{
    if (stream.credit > NAME_BURST * NAME_SHARE)
        stream.credit = NAME_BURST * NAME_SHARE; /* send() only adds: the cap is applied where it counts */
}

/* The line check, sum12 (docs/stream.md): over the line's m 32-bit little-endian words, a + 3b mod
 * 4095, with a the sum of the words and b the sum of a's running totals. That is one weighted sum,
 * word k (from 1) weighing 3(m - k + 1) + 1: a long multiply-accumulate (UMLAL) and a subtraction a
 * word where two running sums took five instructions. It still catches every single-bit error
 * (2^j is prime to 4095, and no weight is a multiple of 3). `line` has LINE_TAIL spare bytes after n. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the sum12 words are little-endian");
#define LINE_TAIL 4u /* room a line buffer keeps after its text: "!CC\n" (and sum12's padding) */
#ifndef CMPROF_SUM_RUNNING /* 1: the two running sums (a host test checks them on any machine) */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define CMPROF_SUM_RUNNING 1
#else
#define CMPROF_SUM_RUNNING 0
#endif
#endif
#if CMPROF_SUM_RUNNING
/* No long multiply on these cores: the two running sums, a word going into the first as (low 24
 * bits) + (top 8 bits), equal mod 4095 (2^24 = 1), so that it fits 32 bits for any line. */
#define SUM_START(words) uint32_t a = 0; uint64_t b = 0
#define SUM_WORD(w) (a += ((w) & 0xFFFFFFu) + ((w) >> 24), b += a)
#define SUM_TOTAL() (a + 3u * b)
#define SUM_PAIRS(p, end) do { \
        for (; p < end; p += 4) { \
            uint32_t w; \
            COPY4(&w, p); \
            SUM_WORD(w); \
        } \
    } while (0)
#else
#define SUM_START(words) uint64_t t = 0; uint32_t weight = 3u * (uint32_t)(words) + 1u
#define SUM_WORD(w) (t += (uint64_t)(w) * weight, weight -= 3u)
#define SUM_TOTAL() t
/* Two words a pass, each into its own sum (one UMLAL each): one sum lets GCC multiply both first
 * and add after, two instructions more. */
#define SUM_PAIRS(p, end) do { \
        uint64_t t2 = 0; \
        for (uint32_t weight2 = weight - 3u; p < end; p += 8, weight -= 6u, weight2 -= 6u) { \
            uint32_t w0, w1; \
            COPY4(&w0, p); \
            COPY4(&w1, p + 4); \
            t += (uint64_t)w0 * weight; \
            t2 += (uint64_t)w1 * weight2; \
        } \
        t += t2; \
    } while (0)
#endif

static uint32_t sum_fold(uint64_t x) /* x under 2^50 for the longest line */
{
    uint32_t y = (uint32_t)(x & 0xFFFFFFu) + (uint32_t)(x >> 24); /* 2^24 = 1 mod 4095 */
    y = (y & 0xFFFu) + (y >> 12);
    y = (y & 0xFFFu) + (y >> 12);
    y = (y & 0xFFFu) + (y >> 12);
    return y >= 4095u ? y - 4095u : y;
}

static void put_tail(char *t, uint32_t check)
{
    t[0] = '!';
    t[1] = b64[check >> 6];
    t[2] = b64[check & 63u];
    t[3] = '\n';
}

/* Send a line and close it with its check: whole through the user's write(), or a byte at a
 * time. `line` has LINE_TAIL spare bytes after n. */
HOT_LOOP static void send(cmprof_putc_fn putc, char *line, size_t n)
{
    SUM_START((n + 3u) >> 2); /* locals, not a struct: they stay in registers */
    stream.credit += (int32_t)n + 4; /* each byte sent earns names 1 / NAME_SHARE of a byte */
    line[n] = line[n + 1u] = line[n + 2u] = 0; /* pads the last word */
    const char *p = line, *end = line + n, *whole = line + (n & ~(size_t)3u);
    if (stream.info.write) {
        if ((n + 3u) & 4u) { /* an odd number of words: one, then pairs */
            uint32_t w;
            COPY4(&w, p);
            SUM_WORD(w);
            p += 4;
        }
        SUM_PAIRS(p, end);
        put_tail(line + n, sum_fold(SUM_TOTAL()));
        stream.info.write(line, (uint32_t)n + 4u);
        return;
    }
    /* one pass: each word is summed as its four bytes go out (the loop costs about half of
     * summing first and sending after) */
    for (; p < whole; p += 4) {
        putc(p[0]); /* the bytes are loaded again after the calls: no word kept across them */
        putc(p[1]);
        putc(p[2]);
        putc(p[3]);
        uint32_t w;
        COPY4(&w, p);
        SUM_WORD(w);
    }
    if (p < end) {
        uint32_t w;
        COPY4(&w, p);
        SUM_WORD(w);
        do
            putc(*p++);
        while (p < end);
    }
    char tail[4];
    put_tail(tail, sum_fold(SUM_TOTAL()));
    putc(tail[0]);
    putc(tail[1]);
    putc(tail[2]);
    putc(tail[3]);
}

/* Copy s, stopping where a LINE_ROOM line must still fit its tail (the shorter task, loss and
 * @full lines copy only their own short constants with it; names go through put_text_upto). */
#define LINE_ROOM 224u

/* The architecture the library was built for, for the announce. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'A'
#define ARCH_PROFILE "-A"
#elif defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'R'
#define ARCH_PROFILE "-R"
#else
#define ARCH_PROFILE "-M"
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define ARCH_LABEL "ARMv8-M.main"
#elif defined(__ARM_ARCH_8M_BASE__)
#define ARCH_LABEL "ARMv8-M.base"
#elif defined(__ARM_ARCH_7EM__)
#define ARCH_LABEL "ARMv7E-M"
#elif defined(__ARM_ARCH_6M__)
#define ARCH_LABEL "ARMv6-M"
#elif defined(__ARM_ARCH) && __ARM_ARCH == 8
#define ARCH_LABEL "ARMv8" ARCH_PROFILE
#elif defined(__ARM_ARCH) && __ARM_ARCH == 7
#define ARCH_LABEL "ARMv7" ARCH_PROFILE
#else
#define ARCH_LABEL "host" /* the host tests */
#endif
static size_t put_text_upto(char *b, size_t n, const char *s, size_t end)
{
    while (*s && n < end)
        b[n++] = *s++;
    return n;
}

static size_t put_text(char *b, size_t n, const char *s)
{
    return put_text_upto(b, n, s, LINE_ROOM - LINE_TAIL);
}

static size_t put_dec(char *b, size_t n, uint64_t v)
{
    char t[20];
    unsigned k = 0;
    while (v > 0xFFFFFFFFu) { /* 64-bit division only for the digits that need it */
        t[k++] = (char)('0' + (unsigned)(v % 10u));
        v /= 10u;
    }
    uint32_t w = (uint32_t)v; /* the rest in 32 bits: no __aeabi_uldivmod per digit */
    do {
        t[k++] = (char)('0' + w % 10u);
        w /= 10u;
    } while (w);
    while (k)
        b[n++] = t[--k];
    return n;
}

static size_t put_hex(char *b, size_t n, uint32_t v, unsigned digits)
{
    while (digits--)
        b[n++] = "0123456789abcdef"[(v >> (4u * digits)) & 0xFu];
    return n;
}

static size_t put_field(char *b, size_t n, const char *key, uint64_t v)
{
    b[n++] = ' ';
    n = put_text(b, n, key);
    return put_dec(b, n, v);
}

static void forget_names_sent(void);

void cmprof_stream_announce(cmprof_putc_fn putc, const struct cmprof_stream_info *info)
{
    stream.info = *info;
    /* samples per second: the timer's clock over the mean period (period + jitter / 2) */
    uint32_t mean = info->period + info->jitter / 2u;
    uint32_t every = mean ? info->timer_hz / mean : 0u;
    /* and at least every 2048 samples (about 2.5 % of the bytes): a target slower than its clock
     * (an emulator) must not keep a late host waiting long for names it missed */
    stream.announce_every = every && every < 2048u ? every : 2048u;
    /* a new round of names at most once a second of the target's time, counted in samples taken
     * (lost ones too), and at least every 16384 samples (a target slower than its clock): the
     * announces every 2048 samples need not each repeat every name */
    stream.round_every = every && every < 16384u ? every : 16384u;
    stream.round_at = cmprof_samples() - every; /* this announce begins one */
    stream.credit = 0; /* the pacing of names and loss reports starts over: the same calls give the same bytes */
    stream.since_lost = 0;
    stream.round_next = stream.round_end = 0; /* and a new round of names */
    stream.turns = 0;
    forget_names_sent(); /* a stream begins: its host has no name ids and no tags yet */
    line_number = 0; /* and no pages: its first sample line starts an epoch */
    send_announce(putc);
    /* a new host has none of the names given before: those of tasks that run on (their '=' entries
     * went to an earlier host) go at the share's pace, not spread over ROUND_PACE seconds */
    stream.round_unpaced = true;
}

/* "@full tasks=N": a tag found no slot, its samples go out as '/'. */
static void send_full(cmprof_putc_fn putc)
{
    char line[24];
    size_t n = put_text(line, 0, "@full tasks=");
    /* 4 digits at most, known at build time: no 64-bit put_dec, no library call on this deep path */
    if (MAX_TASKS >= 1000u)
        line[n++] = (char)('0' + MAX_TASKS / 1000u);
    if (MAX_TASKS >= 100u)
        line[n++] = (char)('0' + MAX_TASKS / 100u % 10u);
    if (MAX_TASKS >= 10u)
        line[n++] = (char)('0' + MAX_TASKS / 10u % 10u);
    line[n++] = (char)('0' + MAX_TASKS % 10u);
    send(putc, line, n);
    cmprof_tasks.full_pending = false;
}

/* The announce, then a new round of names (repeat_names) and the table's state. The line is
 * static, not on the stack: the drain's stack stays small (an idle hook's is). */
/* Repeated names go several to a line, "@N" then per task its index, its tag in 6 chars, its
 * name's length in one and the name: about half the bytes of an @task line each. The line is
 * static: the drain's stack stays small; the announce uses it too, between two rounds of repeats. */
static char repeat_line[LINE_ROOM];
static size_t repeat_len;
static void flush_repeats(cmprof_putc_fn putc);

static void send_announce(cmprof_putc_fn putc)
{
    const struct cmprof_stream_info *info = &stream.info;
    stream.since_announce = 0;
    cap_credit();
    if (cmprof_samples() - stream.round_at < stream.round_every) {
        /* the round began less than a second ago: it goes on */
    } else if (stream.round_next >= stream.round_end) {
        start_round();
    } else {
        stream.round_overran = true; /* a round under way goes on to its end, the next at once */
    }
    flush_repeats(putc); /* (a no-op: repeats go out whole within repeat_names) */
    char *line = repeat_line; /* its buffer, free now: RAM for version 7's page cache on 16 KB parts */
    size_t n = put_text(line, 0, "@cmprof v=9"); /* 9: numbered across other names; 8: numbered names; 7: a page cache, 2-char hits (6: a tag only where it changes; 5: names by id) */
    stream.code_base = info->code_base & ~1u;
    n = put_field(line, n, "clk=", info->clock_hz);
    n = put_field(line, n, "tclk=", info->timer_hz);
    n = put_field(line, n, "period=", info->period);
    n = put_field(line, n, "jitter=", info->jitter);
    if (info->section_hz)
        n = put_field(line, n, "sclk=", info->section_hz);
    n = put_text(line, n, " arch=" ARCH_LABEL " timer=");
    n = put_text(line, n, cmprof_timer_label);
    n = put_text(line, n, " base=");
    n = put_hex(line, n, stream.code_base, 8);
    if (info->build_id_note) {
        /* ELF note: namesz, descsz, type, "GNU\0", then descsz bytes of id */
        const uint32_t *note = info->build_id_note;
        uint32_t namesz = note[0], descsz = note[1];
        const uint8_t *desc = (const uint8_t *)(note + 3) + ((namesz + 3u) & ~3u);
        if (descsz > 20u)
            descsz = 20u;
        n = put_text(line, n, " bid=");
        for (uint32_t i = 0; i < descsz; i++)
            n = put_hex(line, n, desc[i], 2);
    }
    send(putc, line, n);
    if (cmprof_tasks.table_full)
        send_full(putc);
#if CMPROF_HIST
    uint32_t base, shift, bins;
    cmprof_stream_hist_layout(&base, &shift, &bins);
    n = put_text(line, 0, "@hist base=");
    n = put_hex(line, n, base, 8);
    n = put_field(line, n, "shift=", shift);
    n = put_field(line, n, "bins=", bins);
    send(putc, line, n);
#endif
}

void cmprof_stream_task(cmprof_putc_fn putc, const void *tag, const char *name)
{
#if CMPROF_TAG_NAMES /* read from the block at the task's next sample, sent with it */
    (void)putc;
    cmprof_stream_task_later(tag, name);
    return;
#endif
    uint32_t i = cmprof_tasks_register(tag, name);
    if (i != NO_SLOT) {
        cmprof_tasks_clear(i, UNSENT | OWED); /* this name supersedes it, sent now */
        wire_chars(i);
        send_task(putc, i);
    }
}

/* Slot i's index on the wire (its wire index): one character below 62, else '+' and two more; NO_SLOT is
 * '/'. */
__attribute__((always_inline)) static inline size_t put_index(char *b, size_t n, uint32_t i)
{
    if (i == NO_SLOT) {
        b[n++] = '/';
        return n;
    }
    i = wire_index(i);
    if (i < ESCAPE_INDEX) {
        b[n++] = b64[i];
        return n;
    }
    uint32_t v = i - ESCAPE_INDEX;
    b[n++] = b64[ESCAPE_INDEX];
    b[n++] = b64[(v >> 6) & 63u];
    b[n++] = b64[v & 63u];
    return n;
}

/* "@task I TAG ": the start of a task line, sent for every task created: unrolled, no loops. */
static size_t put_task_head(char *line, uint32_t i, const void *tag)
{
    __builtin_memcpy(line, "@task ", 6);
    if (i != NO_SLOT)
        host_name_id[i] = 0;
    size_t n = put_index(line, 6, i);
    line[n] = ' ';
    uint32_t v = (uint32_t)(uintptr_t)tag;
    const char *hex = "0123456789abcdef";
    line[n + 1] = hex[v >> 28];
    line[n + 2] = hex[(v >> 24) & 15u];
    line[n + 3] = hex[(v >> 20) & 15u];
    line[n + 4] = hex[(v >> 16) & 15u];
    line[n + 5] = hex[(v >> 12) & 15u];
    line[n + 6] = hex[(v >> 8) & 15u];
    line[n + 7] = hex[(v >> 4) & 15u];
    line[n + 8] = hex[v & 15u];
    line[n + 9] = ' ';
    return n + 10u;
}

/* n bytes of names went out: their cost comes out of the names' share of the line, with a debt
 * of at most NAME_DEBT bytes (the names of a whole application created at start-up must not hold
 * the repeats back for long). */
static void spend_on_names(size_t n)
{
    int32_t credit = stream.credit < NAME_BURST * NAME_SHARE ? stream.credit : NAME_BURST * NAME_SHARE;
    credit -= NAME_SHARE * (int32_t)n;
    stream.credit = credit > -NAME_DEBT * NAME_SHARE ? credit : -NAME_DEBT * NAME_SHARE;
}

/* A new task's name went out in n bytes: paid from the names' share, and while a round of repeats
 * goes on it lets one repeat go too (churn never starves the repeats). */
static void new_name_sent(size_t n)
{
    spend_on_names(n);
    if (stream.round_next < stream.round_end && stream.turns < TURNS_MAX)
        stream.turns++;
}

static void send_task_as(cmprof_putc_fn putc, uint32_t i, const void *tag, const char *name)
{
    char line[6u + 3u + 1u + 8u + 1u + TASK_NAME_MAX + LINE_TAIL];
    size_t n = put_task_head(line, i, tag);
    n = put_text_upto(line, n, name ? name : "?", sizeof line - LINE_TAIL);
    send(putc, line, n);
    new_name_sent(n + LINE_TAIL);
}

static void send_task(cmprof_putc_fn putc, uint32_t i)
{
    send_task_as(putc, i, cmprof_tasks.tags[i], cmprof_tasks.names[i]);
}

static void flush_repeats(cmprof_putc_fn putc)
{
    if (!repeat_len)
        return;
    send(putc, repeat_line, repeat_len);
    spend_on_names(repeat_len + LINE_TAIL);
    repeat_len = 0;
}

/* The place of the lowest nonzero byte of a nonzero little-endian word x (a flag of a zero byte,
 * the first byte where two words differ). */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__) /* no CLZ there: no library call either */
#define LOW_BYTE(x) ((((x) & -(x)) > 0xFFu) + (((x) & -(x)) > 0xFFFFu) + (((x) & -(x)) > 0xFFFFFFu))
#else
#define LOW_BYTE(x) ((uint32_t)__builtin_ctz(x) >> 3)
#endif

/* The leading chars a and b share, at most limit: compared a word at a time, so both need a word's
 * room past limit (a name's copy and a line's buffer have it). */
__attribute__((always_inline)) static inline uint32_t shared_chars(const char *a, const char *b, uint32_t limit)
{
    uint32_t shared = 0;
    while (shared < limit) {
        uint32_t x, y;
        COPY4(&x, a + shared);
        COPY4(&y, b + shared);
        if (x != y) {
            shared += LOW_BYTE(x ^ y);
            break;
        }
        shared += 4u;
    }
    return shared < limit ? shared : limit;
}

/* Name ids (version 5): the host keeps each name it was sent under an id, and a name entry whose
 * name the host has under its id refers to it in two chars. A cache of the names sent, each at
 * the id its hash gives (a new name there takes the id over, and goes out whole). The host's ids
 * mirror it: every name goes out whole before an entry refers to it. */
#ifndef CMPROF_STREAM_NAME_IDS
#define CMPROF_STREAM_NAME_IDS 128u /* 24 bytes of RAM each */
#endif
_Static_assert(CMPROF_STREAM_NAME_IDS >= 1u && CMPROF_STREAM_NAME_IDS <= 1024u &&
                   (CMPROF_STREAM_NAME_IDS & (CMPROF_STREAM_NAME_IDS - 1u)) == 0u,
               "CMPROF_STREAM_NAME_IDS: a power of two, 1 to 1024");
#define NAME_ID_KEPT 16u /* characters compared besides the hash and the length */
#define DEF_TAG 0x800u   /* a '=' entry's head: its tag follows */
#define DEF_NAME 0x400u  /* ... its name follows, the id's (new) name */
#define ID_WORDS (NAME_ID_KEPT / 4u)
static struct {
    uint32_t key; /* the name's hash, the round it went whole in on top, bit 0 set (0: no name yet) */
    uint16_t taken; /* names that took the id over so far (host_name_id) */
    uint8_t len;
    uint32_t text[ID_WORDS]; /* its first NAME_ID_KEPT chars (with CMPROF_TAG_NAMES zero-padded words) */
} name_ids[CMPROF_STREAM_NAME_IDS];

#if CMPROF_TAG_NAMES
/* A name entry's name is an index's copy (cmprof_tasks.h): whole zero-padded words, aligned, so
 * that it is hashed, compared and copied a word at a time (a 7-character name: 2 words hashed and
 * 4 compared where FNV-1a and byte loops took about 120 instructions). */
#define ID_TEXT_WORDS (ID_WORDS < CMPROF_TASK_NAME_WORDS ? ID_WORDS : CMPROF_TASK_NAME_WORDS)
static uint32_t name_hash(const char *s, size_t len)
{
    const uint32_t *w = (const uint32_t *)(const void *)s;
    uint32_t h = 0;
    for (size_t k = 0; k < len; k += 4u)
        h = (h ^ w[k / 4u]) * 0x9E3779B1u;
    h ^= h >> 16; /* MurmurHash3's finalizer: every char reaches the id's low bits */
    h *= 0x85EBCA6Bu;
    return h ^ h >> 13;
}

static bool name_kept(uint32_t id, const char *s, size_t len)
{
    const uint32_t *w = (const uint32_t *)(const void *)s;
    uint32_t differ = 0;
    (void)len;
    for (uint32_t k = 0; k < ID_TEXT_WORDS; k++) /* past a short copy's words: 0 in both */
        differ |= name_ids[id].text[k] ^ w[k];
    return differ == 0u;
}

static void keep_name(uint32_t id, const char *s, size_t len)
{
    const uint32_t *w = (const uint32_t *)(const void *)s;
    (void)len;
    for (uint32_t k = 0; k < ID_TEXT_WORDS; k++)
        name_ids[id].text[k] = w[k];
}
#else
static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t k = 0; k < len; k++)
        h = (h ^ (uint8_t)s[k]) * 16777619u;
    return h;
}

static bool name_kept(uint32_t id, const char *s, size_t len)
{
    const char *text = (const char *)name_ids[id].text;
    size_t kept = len < NAME_ID_KEPT ? len : NAME_ID_KEPT, k = 0;
    while (k < kept && text[k] == s[k]) /* short: a loop, no library call */
        k++;
    return k == kept;
}

static void keep_name(uint32_t id, const char *s, size_t len)
{
    char *text = (char *)name_ids[id].text;
    for (size_t k = 0; k < len && k < NAME_ID_KEPT; k++)
        text[k] = s[k];
}
#endif

/* The id of the name at s (len chars), with NAME_FRESH when the host does not have it there (the
 * entry sends it whole, and the id is the name's from then on). */
#define NAME_FRESH 0x80000000u /* name_id: the host does not have the name there */
__attribute__((noinline)) static uint32_t name_id(const char *s, size_t len)
{
    uint32_t h = name_hash(s, len);
    uint32_t id = h & (CMPROF_STREAM_NAME_IDS - 1u), key = (h ^ (uint32_t)names_round << 24) | 1u;
    if (name_ids[id].key == key && name_ids[id].len == len && name_kept(id, s, len))
        return id;
    name_ids[id].key = key;
    name_ids[id].taken++;
    name_ids[id].len = (uint8_t)len;
    keep_name(id, s, len);
    return id | NAME_FRESH;
}

static void forget_names_sent(void)
{
    memset(name_ids, 0, sizeof name_ids);
    memset(host_name_id, 0, sizeof host_name_id);
#if CMPROF_TAG_NAMES
    memset(host_tag_not, 0, sizeof host_tag_not);
    /* and no samples: an index is `live` (repeated in the next round, or before it goes to another
     * name) once samples sent from now on carry it; names retired before went with samples before */
    memset(cmprof_tasks.live, 0, sizeof cmprof_tasks.live);
    cmprof_tag_names.retired_head = cmprof_tag_names.retired_tail;
    n_retired_in = 0; /* (their samples went before: a new host needs them not) */
#endif
#if !CMPROF_TAG_NAMES /* (there the tick owns the flags) */
    for (uint32_t i = 0; i < cmprof_tasks.n_tags; i++)
        cmprof_tasks.flags[i] &= (uint8_t)~TAG_SENT;
#endif
}

__attribute__((always_inline)) static inline size_t put_tag6(char *b, size_t n, const void *tag)
{
    uint32_t v = (uint32_t)(uintptr_t)tag;
    b[n] = b64[v >> 30];
    b[n + 1] = b64[(v >> 24) & 63u];
    b[n + 2] = b64[(v >> 18) & 63u];
    b[n + 3] = b64[(v >> 12) & 63u];
    b[n + 4] = b64[(v >> 6) & 63u];
    b[n + 5] = b64[v & 63u];
    return n + 6u;
}

#if CMPROF_TAG_NAMES
/* An index's copy of its name (cmprof_tasks.h: zero-padded words) at b + n a word at a time, up to
 * the word that holds its end; returns the end. The bytes past it up to that word's end are the
 * copy's zeros, inside the room an entry keeps (ENTRY_MAX: TASK_NAME_MAX chars of name). */
#define COPY_WORDS (CMPROF_TASK_NAME_WORDS < TASK_NAME_MAX / 4u ? CMPROF_TASK_NAME_WORDS : TASK_NAME_MAX / 4u)
static size_t put_copy(char *b, size_t n, const char *name)
{
    const uint32_t *w = (const uint32_t *)(const void *)name;
    for (uint32_t k = 0; k < COPY_WORDS; k++) {
        uint32_t x = w[k], zero = (x - 0x01010101u) & ~x & 0x80808080u; /* 0x80 in its zero bytes */
        COPY4(b + n + 4u * k, &x);
        if (zero) /* the lowest flag is the end (bytes above a zero may be flagged too) */
            return n + 4u * k + LOW_BYTE(zero);
    }
    return n + 4u * COPY_WORDS;
}
#endif

/* Version 8's numbered names: a name that is an earlier one's with another trailing number (what
 * sprintf("u%06u", n) makes: the way firmware names tasks of their own) goes as the difference of
 * the two numbers in 2 chars, the first one no base64 char (so a host tells it from a length or a
 * head): the earlier name is, in a sample line, the last name a '=' entry of the page epoch wrote
 * out (whole, front-coded or numbered: both sides start afresh where the page cache does, so a host
 * that can place the line's samples has it), in an "@N" line the entry before it in the line. The
 * host adds the difference to the earlier name's trailing number (its last digits, at most 9) and
 * writes it in as many digits. The firmware never reads a number whole: two names of one length
 * that differ only in their last NUM_DIGITS chars or fewer, digits in both, differ by those chars'
 * values. */
#if CMPROF_TAG_NAMES
#define NUM_SPAN 832 /* a difference of -832..831: 26 x 64 values */
/* Differing chars read at most: 4 where a difference of up to 831 crosses a thousand (u000981 to
 * u001005; 3 sent such names whole, and a retired name 500 to 700 numbers back as an "@N" line of
 * its own: FreeRTOS's full demo at 1,000 unique names a second), 5 for ten thousands. The host
 * reads a trailing number of up to 9 digits. */
#define NUM_DIGITS 5u
static const char num_chars[] = "#$%&'()*,-.:;<>?@[]^_`{|}~"; /* 26: no base64 char, no '!', '=' or quote */
_Static_assert(sizeof num_chars - 1u == 2u * NUM_SPAN / 64u, "num_chars: the span's leads");

/* The 2 chars of a numbered name (the low byte first), or 0 when the name at s (len chars, a word's
 * room past them, as r's text has) is no numbered form of r's. The chars before the last k are the
 * same in both: the difference of the two numbers is the last k chars' (each a digit in both),
 * read in one pass over both names. */
static uint32_t num_code_at(const char *t, const char *s, uint32_t len)
{
    uint32_t same = shared_chars(s, t, len);
    uint32_t k = same < len ? len - same : 1u; /* the same name: its last char, a digit, plus 0 */
    if (k > NUM_DIGITS)
        return 0;
    int32_t diff = 0;
    for (uint32_t j = len - k; j < len; j++) {
        uint32_t a = (uint32_t)(uint8_t)s[j] - '0', b = (uint32_t)(uint8_t)t[j] - '0';
        if (a > 9u || b > 9u)
            return 0;
        diff = diff * 10 + (int32_t)a - (int32_t)b;
    }
    uint32_t code = (uint32_t)(diff + NUM_SPAN);
    if (code >= 2u * (uint32_t)NUM_SPAN)
        return 0;
    return (uint32_t)(uint8_t)num_chars[code >> 6] | (uint32_t)(uint8_t)b64[code & 63u] << 8;
}

/* Whether the name at s (len chars) ends in two digits: a numbered name's reference (version 9). A
 * numbered name itself does (its last chars are digits, or the reference's). */
static inline bool ends_in_digits(const char *s, uint32_t len)
{
    return len >= 2u && (uint32_t)(uint8_t)s[len - 1u] - '0' <= 9u && (uint32_t)(uint8_t)s[len - 2u] - '0' <= 9u;
}

/* The name at s (len chars) is r's from now on. */
static void num_keep(struct num_ref *r, const char *s, uint32_t len)
{
    for (uint32_t k = 0; k < NUM_WORDS && 4u * k < len; k++)
        COPY4(&r->text[k], s + 4u * k);
    r->len = len;
}
#endif

/* A name entry of an "@N" line: the index, the tag in 6 chars (big-endian base64) or '=' for the
 * index's own (CMPROF_INDEX_TAG: a named index's, version 7), the name's length in one char, the
 * name: whole, for a host that attached late. */
#define ENTRY_MAX (3u + 6u + 2u + 1u + TASK_NAME_MAX) /* and a '=' entry's head */
static size_t put_entry(char *b, size_t n, uint32_t i, const void *tag, const char *name)
{
    const char *at = b + n;
    host_name_id[i] = 0; /* the host has this name for the index, under no id of ours */
#if CMPROF_TAG_NAMES
    bool own = (uint32_t)(uintptr_t)tag == CMPROF_INDEX_TAG(i);
    if (at == repeat_line + 2)
        repeat_prev = NO_SLOT;
    if (own && i == repeat_prev + 1u) { /* version 9: the index after the entry before's, its own tag */
        b[n++] = '.';
    } else {
        n = put_index(b, n, i);
        if (own) /* 1 char where 6 said the same: rounds go faster */
            b[n++] = '=';
        else
            n = put_tag6(b, n, tag);
    }
    repeat_prev = i;
#else
    n = put_index(b, n, i);
    n = put_tag6(b, n, tag);
#endif
#if CMPROF_TAG_NAMES
    size_t end = put_copy(b, n + 1, name); /* an index's copy, or a retired one: words */
#else
    size_t end = put_text_upto(b, n + 1, name ? name : "?", n + 1 + TASK_NAME_MAX);
#endif
    HOST_GETS_TAG(i, tag);
    uint32_t len = (uint32_t)(end - n - 1u);
#if CMPROF_TAG_NAMES /* (the other builds' drains keep their stack: no numbered entry there) */
    if (at == repeat_line + 2)
        repeat_len_ref = 0; /* the line's first entry: whole */
    uint32_t code = repeat_len_ref == len && len ? num_code_at(repeat_text, b + n + 1, len) : 0u;
    if (code) { /* version 8: the line's entry before it, with another number (a copy: its chars go) */
        num_keep(&repeat_ref, b + n + 1, len);
        repeat_text = (const char *)repeat_ref.text;
        COPY4(b + n, &code);
        return n + 2u;
    }
    if (ends_in_digits(b + n + 1, len)) { /* whole: the line keeps it */
        repeat_text = b + n + 1;
        repeat_len_ref = len;
    }
#else
    (void)at;
#endif
    b[n] = b64[len];
    return end;
}


/* A '=' entry inside a sample line: a head of 2 chars (DEF_TAG, DEF_NAME, the name's id), the tag
 * in 6 chars unless the host has it for this index (a control block reused), the name's length and
 * the name unless the host has it under its id (a worker re-created, a pool of workers of one
 * name): 3 bytes for a name sent before. Its index is the tag of the sample after it. */
static bool def_whole; /* the last '=' entry sent its name whole */
/* Version 7: the last name a '=' entry of the line being formatted sent whole, where it sits in
 * the line's buffer (front_len 0: none yet in this line). A new name that shares FRONT_MIN or more
 * leading chars with it goes as the shared count (FRONT_CODED + count, where a length would be) and
 * the rest's length and chars: a host that has the line has what it refers to, whenever it
 * attached (unique worker names u000001, u000002...). No copy: a compare loop a new name. */
#define FRONT_MIN 2u
#define FRONT_CODED 32u /* a name's length char from 32 on: front-coded (names are at most 24 chars) */
static const char *front_ref;
static uint32_t front_len;

/* A new name's length char before its len chars at b + 1, or, when it shares FRONT_MIN or more
 * leading chars with the line's last whole name, the shared count, the rest's length and the rest
 * moved up. Returns its end. Out of line: put_def's frame stays small (the drain's stack). */
__attribute__((noinline)) static char *put_name7(char *b, uint32_t len)
{
    uint32_t shared = shared_chars(b + 1, front_ref, len < front_len ? len : front_len);
    if (shared < FRONT_MIN) { /* whole: the line's next names refer to it */
        b[0] = b64[len];
        front_ref = b + 1;
        front_len = len;
        return b + 1 + len;
    }
    b[0] = b64[FRONT_CODED + shared]; /* the shared count, the rest's length, the rest */
    b[1] = b64[len - shared];
    for (uint32_t k = 0; k < len - shared; k++)
        b[2u + k] = b[1u + shared + k];
    return b + 2 + (len - shared);
}

#if CMPROF_TAG_NAMES
/* Version 8: a '=' entry of 2 chars in place of its head, the epoch's last name with another
 * number (num_code_at's `code`); the name (s: the index's copy) is the epoch's last from now on.
 * The host has it by no id: nothing left out for the index later. A host that can place the
 * entry's sample has the name (def_whole). */
static size_t put_numbered(char *b, size_t head, uint32_t i, const char *s, uint32_t len, uint32_t code)
{
    const uint32_t *copy = (const uint32_t *)(const void *)s; /* the index's copy: whole words, */
#if defined(__GNUC__)                                          /* zero past its chars */
#pragma GCC unroll 8
#endif
    for (uint32_t k = 0; k < COPY_WORDS; k++)
        epoch_ref.text[k] = copy[k];
    epoch_ref.len = len;
    host_name_id[i] = 0;
    def_whole = true;
    COPY4(b + head, &code);
    return head + 2u;
}
#endif

static size_t put_def_entry(char *b, size_t n, uint32_t i, const void *tag, const char *name)
{
    /* version 7: no index; the sample right after the entry has it as its tag (an owed name goes
     * right before the sample that needs it, and that sample writes its tag) */
    size_t head = n;
    uint32_t flags = 0;
    n += 2u;
    bool has_tag = HOST_HAS_TAG(i, tag);
    if (!has_tag) {
        flags = DEF_TAG;
        n = put_tag6(b, n, tag);
        HOST_GETS_TAG(i, tag);
    }
#if CMPROF_TAG_NAMES
    /* first, no hash for a new number: read in the index's copy (zero-padded words, one past its
     * chars), not copied into the line (the entry writes no name); its length is the epoch's name's
     * when its char there ends it (or both are as long as an entry's name goes) */
    uint32_t ref = epoch_ref.len;
    if (has_tag && ref && (ref == 4u * COPY_WORDS || !name[ref])) {
        uint32_t code = num_code_at((const char *)epoch_ref.text, name, ref);
        if (code)
            return put_numbered(b, head, i, name, ref, code);
    }
    size_t end = put_copy(b, n + 1, name);
    uint32_t len = (uint32_t)(end - n - 1u);
    uint32_t id = name_id(name, len); /* the index's copy: whole words */
#else
    size_t end = put_text_upto(b, n + 1, name ? name : "?", n + 1 + TASK_NAME_MAX);
    uint32_t len = (uint32_t)(end - n - 1u);
    /* no numbered name: a slot's entry that only says its name again is left out by its id (a worker
     * re-created in its block), and a numbered one would say it again whenever the id changed hands */
    uint32_t id = name_id(b + n + 1, len);
#endif
    flags |= id & ~NAME_FRESH;
    def_whole = (id & NAME_FRESH) != 0;
    if (id & NAME_FRESH) {
        flags |= DEF_NAME;
#if CMPROF_TAG_NAMES
        if (ends_in_digits(b + n + 1, len))
            num_keep(&epoch_ref, b + n + 1, len); /* before put_name7 moves its chars */
#endif
        n = put_name7(b + n, len) - b;
    }
    uint16_t named = (uint16_t)((id & ~NAME_FRESH) + 1u + ((uint32_t)name_ids[id & ~NAME_FRESH].taken << HOST_NAME_ID_SHIFT));
    if (!(flags & (DEF_TAG | DEF_NAME)) && host_name_id[i] == named)
        return 0; /* the host has this tag and this name for the index: nothing to say */
    host_name_id[i] = named;
    b[head] = b64[flags >> 6];
    b[head + 1] = b64[flags & 63u];
    return n;
}

static void repeat_add(cmprof_putc_fn putc, uint32_t i)
{
    if (repeat_len + ENTRY_MAX > LINE_ROOM - LINE_TAIL)
        flush_repeats(putc);
    size_t n = repeat_len;
    if (!n) {
        repeat_line[n++] = '@';
        repeat_line[n++] = 'N';
    }
#if CMPROF_TAG_NAMES
    uint32_t gen = cmprof_tag_names.gen[i];
#endif
    size_t end = put_entry(repeat_line, n, i, cmprof_tasks.tags[i], cmprof_tasks.names[i]);
#if CMPROF_TAG_NAMES
    if (gen != cmprof_tag_names.gen[i]) { /* the tick took the index for another tag meanwhile */
        host_tag_not[i] = 0;
        repeat_len_ref = 0;     /* the entry is not sent: the next refers to none, and writes */
        repeat_prev = NO_SLOT;  /* its index */
        return;
    }
#endif
    repeat_len = end;
}

#if CMPROF_TAG_NAMES
/* The names the tick retired (cmprof_tasks.h: an index gone to another name while its last name was
 * sampled since the wire gave it whole), repeated before the line that may carry the new name's
 * first sample: a host that attached late hears every name it has samples of, even where the index
 * goes to another name long before a round of repeats reaches it (names of their own, created
 * fast). One repeat at most for each index that goes to another name, paid from the names' share
 * (their debt, as a new name's). */
/* Version 8: a retired name whose index's new name is still owed, and that is that new name with
 * another number, goes inside the new name's '=' entry ("=" NUM B64 after its '=': 3 bytes where an
 * "@N" entry took about 10 and often a line of its own), right before it: the host applies it as
 * an "@N" entry of the index, then the entry. At most CMPROF_TASKS_RETIRED wait so, each its index
 * and its 2 chars. */
#define RETIRED_IN 3u /* the bytes one takes in a '=' entry */

/* The 2 chars of retired name r as its index's new name (the index's copy) with another number, or
 * 0 when it is none. */
/* The length of a name in a copy's zero-padded words (its end: the first zero byte), a word at a
 * time. */
static uint32_t copy_len(const uint32_t *w)
{
    uint32_t k = 0, zero;
    while (!(zero = (w[k] - 0x01010101u) & ~w[k] & 0x80808080u) && k < CMPROF_TASK_NAME_WORDS)
        k++;
    return zero ? 4u * k + LOW_BYTE(zero) : 4u * CMPROF_TASK_NAME_WORDS;
}

static uint32_t retired_code(const struct cmprof_retired *r)
{
    const uint32_t *now = cmprof_tag_names.copy[r->index]; /* the index's new name */
    uint32_t len = copy_len(now);
    return len && len == copy_len(r->copy) ? num_code_at((const char *)now, (const char *)r->copy, len) : 0u;
}

__attribute__((noinline)) static void repeat_retired(cmprof_putc_fn putc)
{
    for (uint32_t head = cmprof_tag_names.retired_head; head != cmprof_tag_names.retired_tail;
         cmprof_tag_names.retired_head = ++head) {
        const struct cmprof_retired *r = &cmprof_tag_names.retired[head % CMPROF_TASKS_RETIRED];
        uint32_t code;
        if ((int32_t)cmprof_tasks.ixc[r->index] < 0 && n_retired_in < CMPROF_TASKS_RETIRED &&
            (code = retired_code(r)) != 0u) { /* its new name not sent yet: with it */
            retired_in[n_retired_in].index = (uint16_t)r->index;
            retired_in[n_retired_in++].chars = (uint16_t)code;
            continue;
        }
        if (repeat_len + ENTRY_MAX > LINE_ROOM - LINE_TAIL)
            flush_repeats(putc);
        if (!repeat_len) {
            repeat_line[repeat_len++] = '@';
            repeat_line[repeat_len++] = 'N';
        }
        uint16_t named = host_name_id[r->index]; /* (put_entry's: the index's new name is to come) */
        repeat_len = put_entry(repeat_line, repeat_len, r->index, r->tag, (const char *)r->copy);
        host_name_id[r->index] = named;
    }
    flush_repeats(putc);
}

/* The '=' entry at b (end at e) of index i with i's retired name inside it, if one waits. */
static char *put_retired_in(char *b, char *e, uint32_t i)
{
    for (uint32_t k = 0; k < n_retired_in; k++) {
        if (retired_in[k].index != i)
            continue;
        for (char *p = e; p-- > b + 1;) /* the entry after its '=' moves up 3 */
            p[RETIRED_IN] = *p;
        b[1] = '=';
        __builtin_memcpy(b + 2, &retired_in[k].chars, 2);
        retired_in[k] = retired_in[--n_retired_in];
        return e + RETIRED_IN;
    }
    return e;
}
#endif

/* Whether a repeat may go now: on the names' share of the line, or on a turn a new name gave the
 * repeats (new names and repeats share the credit: churn never starves the repeats). */
static bool repeat_affordable(void)
{
    if (stream.credit > NAME_SHARE * (int32_t)repeat_len)
        return true;
    if (!stream.turns)
        return false;
    stream.turns--;
    return true;
}

/* The round of repeated names for a late host goes through the table in its order (a task's
 * repeats come about a round apart), within the names' share of the line: never all names at
 * once, so the line keeps carrying samples whatever the task count. Drains call it only while a
 * round is under way (round_next < round_end): one compare otherwise. */
/* The table positions of this round that may go by now (ROUND_PACE: position j + ROUND_BATCH at j
 * N-ths of the way, the first ROUND_BATCH at once), at most round_end. */
static uint32_t round_due(void)
{
    if (!ROUND_PACE || stream.round_unpaced)
        return stream.round_end;
    uint32_t span = ROUND_PACE * stream.round_every, elapsed = cmprof_samples() - stream.round_at;
    /* (round_end at most CMPROF_TASKS_MAX, span at most 4 x 16384: the product fits 32 bits) */
    uint32_t due = elapsed >= span ? stream.round_end : stream.round_end * elapsed / span + ROUND_BATCH;
    return due < stream.round_end ? due : stream.round_end;
}

__attribute__((noinline)) static void repeat_names(cmprof_putc_fn putc)
{
    cap_credit();
    /* slots taken since the round began are in it: a task created just after a round began, its
     * name missed by a late host, would otherwise wait for the whole of the next round */
    stream.round_end = cmprof_tasks.n_tags;
    if (stream.credit < NAME_BURST * NAME_SHARE && stream.turns < TURNS_LINE)
        return; /* a line's worth of credit first, or of turns: each line's check and "@N" paid for
                   several names (a turn a line: 6 bytes of framing a repeat under churn) */
    uint32_t upto = round_due();
    if (upto < stream.round_end && upto < stream.round_next + ROUND_BATCH)
        return; /* a few positions' worth of the round's time first, as of credit */
    for (uint32_t steps = 0; stream.round_next < upto && steps < 16u; steps++) {
        uint32_t i = stream.round_next;
#if CMPROF_TAG_NAMES /* an index in use, or sampled since its last repeat, whose name went out (owed:
                       never needed yet): a host that attached late has them all after a round */
        bool due = (cmprof_tag_names.refs[i] || cmprof_tasks.live[i]) && (int32_t)cmprof_tasks.ixc[i] >= 0;
#else
        bool due = !(cmprof_tasks.flags[i] & (GONE | UNSENT | OWED)); /* owed: never needed yet */
#endif
        if (due && !repeat_affordable())
            break;
        stream.round_next++;
        if (due)
            repeat_add(putc, i);
#if CMPROF_TAG_NAMES
        cmprof_tasks.live[i] = 0;
#endif
    }
    flush_repeats(putc);
    if (stream.round_next >= stream.round_end)
        stream.turns = 0; /* nothing waits: no debt for later */
    if (stream.round_next >= stream.round_end && stream.round_overran)
        start_round(); /* a round longer than a second: the next follows at once */
}

/* The samples from ring position `upto` that may go out before a name given at `at` is due; 0
 * when it is due (at `upto` or before it: positions wrap, so "before" is the far half). */
static uint32_t until_due(uint32_t at, uint32_t upto)
{
    uint32_t ahead = at - upto;
    return ahead <= 0x80000000u ? ahead : 0u;
}

/* Where the names of new tasks go: inside a sample line, each entry after '=' right before the
 * samples that may carry it (no line of their own, no line cut short), or an "@N" line when no
 * sample follows. */
struct name_out {
    char *b;         /* the next byte */
    const char *end; /* entries end before it */
    bool in_samples; /* '=' before each entry */
};

/* Whether another entry fits. Checked before a slot's UNSENT flag is cleared: a kernel hook that
 * names the slot again after the clear sets it anew, and that name goes next time. */
static bool def_fits(const struct name_out *o)
{
    return o->b + 1 + ENTRY_MAX <= o->end;
}

static void put_def(struct name_out *o, uint32_t i, const void *tag, const char *name)
{
    char *start = o->b;
    size_t n = 0;
    if (o->in_samples)
        start[n++] = '=';
    n = o->in_samples ? put_def_entry(start, n, i, tag, name) : put_entry(start, n, i, tag, name);
    if (!n)
        return; /* it would say what the host has */
    o->b = start + n;
    new_name_sent(n);
}

#if LAZY_NAMES
/* From here on slot i's samples carry `name`: owed until one of them goes out. The sample loop's
 * cached index may be the slot's: it looks again. */
static void owe_name(uint32_t i, const char *name)
{
    cmprof_tasks.owed[i] = name;
    cmprof_tasks.flags[i] |= OWED;
    if (stream.last_ixc == cmprof_tasks.ixc[i]) /* the loop's cached index may be this one */
        stream.last_valid = false;
    cmprof_tasks.ixc[i] = CMPROF_IXC_OWED | i;
}
#endif

/* Slot i's unsent name, if due at ring position `upto` (its superseded names were due before it):
 * true when put. Otherwise *room becomes the samples from `upto` that may go out before it (if
 * fewer), or 0 when `o` has no room for it. */
__attribute__((always_inline)) static inline bool def_if_due(struct name_out *o, uint32_t i, uint32_t upto,
                                                         uint32_t *room)
{
    uint32_t ahead = until_due(cmprof_tasks.name_at[i], upto);
    if (ahead) {
        cmprof_tasks.names_pending = true;
        *room = ahead < *room ? ahead : *room;
        return false;
    }
    if (!LAZY_NAMES && !def_fits(o)) {
        cmprof_tasks.names_pending = true;
        *room = 0;
        return false;
    }
    cmprof_tasks.flags[i] &= (uint8_t)~UNSENT;
#if LAZY_NAMES
    owe_name(i, cmprof_tasks.names[i]);
#else
    put_def(o, i, cmprof_tasks.tags[i], cmprof_tasks.names[i]); /* even if gone since: its samples may be in the ring */
#endif
    return true;
}

/* Superseded names go first: each is older than its slot's current name. False: no room left. */
static bool defs_superseded(struct name_out *o, uint32_t upto, uint32_t *room)
{
    uint32_t kept = 0;
    bool full = false;
    for (uint32_t k = 0; k < cmprof_tasks.n_superseded; k++) {
        const struct cmprof_superseded *e = &cmprof_tasks.superseded[k]; /* not a copy: the drain's stack is small */
        uint32_t ahead = until_due(e->at, upto);
        bool due = !ahead;
        if (due && !full && (LAZY_NAMES || def_fits(o))) {
#if LAZY_NAMES
            owe_name(e->index, cmprof_tasks_superseded_name(e)); /* its tag is the slot's: the same block */
#else
            put_def(o, e->index, e->tag, cmprof_tasks_superseded_name(e));
#endif
            continue;
        }
        full |= due;
        cmprof_tasks.superseded[kept++] = *e; /* kept <= k */
        cmprof_tasks.names_pending = true;
        if (!due)
            *room = ahead < *room ? ahead : *room;
    }
    cmprof_tasks.n_superseded = kept;
    return !full;
}

/* The queue of new names is in ring order: the first name not yet due ends it. */
static uint32_t due_queue(struct name_out *o, uint32_t upto, uint32_t room)
{
    for (uint32_t head = cmprof_tasks.pending_head; head != cmprof_tasks.pending_tail;
         cmprof_tasks.pending_head = ++head) {
        const struct cmprof_pending *e = &cmprof_tasks.pending[head % PENDING_N];
        if (!(cmprof_tasks.flags[e->index] & UNSENT) || cmprof_tasks.name_at[e->index] != e->at)
            continue; /* sent already, or renamed: a later entry has it */
        if (!def_if_due(o, e->index, upto, &room))
            return room; /* not due yet (nor any after it), or no room */
    }
    return room;
}

/* The rare cases first: the @full notice, superseded names, a queue that overflowed (the table
 * then says what is unsent). */
__attribute__((noinline)) static uint32_t due_names_rare(cmprof_putc_fn putc, struct name_out *o, uint32_t upto)
{
    if (cmprof_tasks.full_pending)
        send_full(putc);
    uint32_t room = UINT32_MAX;
    if (!defs_superseded(o, upto, &room))
        return 0;
    if (cmprof_tasks.pending_overflow) {
        cmprof_tasks.pending_overflow = false;
        if (!LAZY_NAMES) /* owed, not sent: the names queued and not due yet stay in the queue */
            cmprof_tasks.pending_head = cmprof_tasks.pending_tail;
        uint32_t scan_room = UINT32_MAX;
        for (uint32_t i = 0; i < cmprof_tasks.n_tags && scan_room; i++)
            if (cmprof_tasks.flags[i] & UNSENT)
                def_if_due(o, i, upto, &scan_room);
        /* scan again while a name the queue dropped is not due yet, or one found no room: names
         * queued after the overflow, not due yet, are found in the queue */
        if (until_due(cmprof_tasks.overflow_at, upto) || (!LAZY_NAMES && scan_room != UINT32_MAX))
            cmprof_tasks.pending_overflow = true;
        room = scan_room < room ? scan_room : room;
        if (!room)
            return 0;
    }
    return due_queue(o, upto, room);
}

/* Names registered from the kernel's hooks go out before the samples that may use them, and
 * after the samples of the task whose tag (a reused control block) they take over: put those
 * given at ring position `upto` or before. Returns how many samples from `upto` on may go out
 * before the next unsent name is due (UINT32_MAX: none is pending), or 0 when `o` has no room
 * for the next due one (the line ends; the rest go at the start of the next). */
static uint32_t due_names(cmprof_putc_fn putc, struct name_out *o, uint32_t upto)
{
    if (!cmprof_tasks.names_pending)
        return UINT32_MAX;
    cmprof_tasks.names_pending = false;
#if CMPROF_TAG_NAMES /* names go with their index's first sample: only the @full notice waits here */
    (void)o;
    (void)upto;
    if (cmprof_tasks.full_pending)
        send_full(putc);
    return UINT32_MAX;
#endif
    if (cmprof_tasks.full_pending || cmprof_tasks.n_superseded || cmprof_tasks.pending_overflow)
        return due_names_rare(putc, o, upto);
    return due_queue(o, upto, UINT32_MAX);
}

/* Names due at `upto` with no sample line to carry them: "@N" lines. The line is the repeats'
 * (empty outside repeat_names). */
static uint32_t send_due_names(cmprof_putc_fn putc, uint32_t upto)
{
    for (;;) {
        struct name_out o = {repeat_line + 2, repeat_line + LINE_ROOM - LINE_TAIL, false};
        uint32_t room = due_names(putc, &o, upto);
        if (o.b > repeat_line + 2) {
            repeat_line[0] = '@';
            repeat_line[1] = 'N';
            send(putc, repeat_line, (size_t)(o.b - repeat_line));
            spend_on_names(2u + LINE_TAIL);
        }
        if (room)
            return room;
    }
}

void cmprof_stream_section_name(cmprof_putc_fn putc, uint32_t index, const char *name)
{
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@secname");
    n = put_field(line, n, "", index);
    line[n++] = ' ';
    n = put_text(line, n, name);
    send(putc, line, n);
}

#if CMPROF_HIST
#define HIST_PAIRS 12u

static void put3(char *b, size_t *n, uint32_t v)
{
    b[(*n)++] = b64[(v >> 12) & 63u];
    b[(*n)++] = b64[(v >> 6) & 63u];
    b[(*n)++] = b64[v & 63u];
}

/* One line of changed buckets; returns the samples it carries. *pass_done: a full pass ended. */
static uint32_t send_hist(cmprof_putc_fn putc, int *pass_done)
{
    uint32_t idx[HIST_PAIRS], delta[HIST_PAIRS];
    uint32_t k = cmprof_stream_hist_take(idx, delta, HIST_PAIRS, pass_done), sum = 0;
    if (!k)
        return 0;
    static char line[1u + HIST_PAIRS * 6u + LINE_TAIL]; /* '#', pairs, tail; static: a small drain stack */
    size_t n = 0;
    line[n++] = '#';
    for (uint32_t i = 0; i < k; i++) {
        put3(line, &n, idx[i]);
        put3(line, &n, delta[i]);
        sum += delta[i];
    }
    send(putc, line, n);
    return sum;
}

uint32_t cmprof_stream_drain(cmprof_putc_fn putc, uint32_t max_lines)
{
    send_due_names(putc, CMPROF_TASKS_STORED()); /* no ring: every name is due */
    uint32_t sent = 0;
    int done = 0;
    while (max_lines-- && !done)
        sent += send_hist(putc, &done);
    reannounce_after(putc, sent, false);
    if (stream.round_next < stream.round_end)
        repeat_names(putc);
    return sent;
}

void cmprof_stream_flush(cmprof_putc_fn putc)
{
    send_due_names(putc, CMPROF_TASKS_STORED());
    for (int pass = 0; pass < 2; pass++) { /* finish the pass under way, then one whole pass */
        int done = 0;
        while (!done)
            send_hist(putc, &done);
    }
}
#else
#ifdef CMPROF_TAG
#if !CMPROF_TAG_NAMES /* the tick names every tag (cmprof_tasks.h) */
/* "@task I TAG ?": a tag sampled before any name (e.g. 0 before the scheduler ran), which the
 * host shows under its value. A line of its own, small: it is sent from inside the sample loop. */
static void send_unnamed(cmprof_putc_fn putc, uint32_t i)
{
    char *line = repeat_line; /* free while samples are formatted: the drain's stack stays small */
    size_t n = put_task_head(line, i, cmprof_tasks.tags[i]);
    line[n++] = '?';
    send(putc, line, n);
    spend_on_names(n + LINE_TAIL);
}

/* The output of the line being formatted, for the sample loop's rare paths (a tag never named):
 * not an argument, so the loop keeps one more register for itself. */
static cmprof_putc_fn line_putc;

/* A tag's index; a tag never named gets a slot now, named "?" before the line that uses it. */
static uint32_t tag_index(cmprof_putc_fn putc, uint32_t tag)
{
    uint32_t index, seen;
    do { /* a kernel hook may change the table under the probe: look again if it did */
        seen = cmprof_tasks.changes;
        index = cmprof_tasks_find(tag);
    } while (seen != cmprof_tasks.changes);
    if (index != NO_SLOT)
        return index;
    cmprof_tasks.from_line = true;
    index = cmprof_tasks_register((const void *)(uintptr_t)tag, NULL);
    cmprof_tasks.from_line = false;
    if (index != NO_SLOT) {
        cmprof_tasks_clear(index, UNSENT | OWED);
        wire_chars(index);
        send_unnamed(putc, index);
    }
    return index;
}
#endif


/* The index characters of a tag, kept for the next sample: consecutive samples mostly come from
 * the same task, so the common case is a compare. */
/* An exception's chars: '-' and its number (interrupt handlers take no slot: tasks have them all). */
__attribute__((always_inline)) static inline uint32_t isr_chars(uint32_t tag)
{
    uint32_t n = tag & 511u;
    if (n < 64u) /* version 7: '-' and one base64 char for exceptions below 64 (IRQs 0..47) */
        return IXC_OF((uint32_t)'-' | (uint32_t)(uint8_t)b64[n] << 8, 2u);
    return IXC_OF((uint32_t)'~' | (uint32_t)(uint8_t)b64[n >> 6] << 8 | (uint32_t)(uint8_t)b64[n & 63u] << 16, 3u);
}

#if CMPROF_TAG_NAMES
/* A ring word's chars: the tick gave it its index (cmprof_tasks.h), or an exception's tag, or none. */
__attribute__((always_inline)) static inline uint32_t word_chars(uint32_t word)
{
    uint32_t i = word & 0xFFFFu;
    if (i < MAX_TASKS) {
        cmprof_tasks.live[i] = 1; /* sampled: repeated in the next round of names */
        return cmprof_tasks.ixc[i];
    }
    return CMPROF_IS_ISR_TAG(word) ? isr_chars(word) : IXC_OF('/', 1u);
}

__attribute__((noinline)) static uint32_t learn_tag(uint32_t tag)
{
    stream.last_ixc = word_chars(tag);
    stream.last_tag = tag;
    stream.last_valid = true;
    return stream.last_ixc;
}
#else
__attribute__((noinline)) static uint32_t learn_tag(uint32_t tag)
{
    uint32_t index = CMPROF_IS_ISR_TAG(tag) ? NO_SLOT : tag_index(line_putc, tag);
    stream.last_ixc = CMPROF_IS_ISR_TAG(tag)  ? isr_chars(tag)
                      : index == NO_SLOT      ? IXC_OF('/', 1u)
                                              : cmprof_tasks.ixc[index];
    stream.last_tag = tag;
    stream.last_valid = true;
    return stream.last_ixc;
}
#endif
#endif

#if defined(CMPROF_TAG) && !CMPROF_TAG_NAMES
/* A tag the sample loop's first probe of the hash did not place: a task further along its probe, an
 * interrupt handler (the common cases, without learn_tag's care), or learn_tag. */
__attribute__((noinline)) static uint32_t other_tag(uint32_t tag)
{
    if (CMPROF_IS_ISR_TAG(tag))
        return isr_chars(tag);
    uint32_t index = cmprof_tasks_find(tag); /* the first probe missed it: look further along */
    return index == NO_SLOT ? learn_tag(tag) : cmprof_tasks.ixc[index];
}
#endif

/* A PC's 16 bits of halfword offset as 3 chars, high first, in the low three bytes of a
 * little-endian word (the fourth is junk the next item overwrites): '?' + the top 4 bits ('?' to
 * 'N'), then '?' + 6 bits twice. On Thumb-2 six instructions: a shift, two field extracts with an OR each, one add
 * for all (its constant is an immediate there). ARMv6-M: shifts, ANDs and ORs, no division. */
#define PC_CHARS_ADD 0x3F3F3F3Fu /* '?' in every byte (an immediate on Thumb-2) */
static inline uint32_t pc_chars(uint32_t v)
{
#if defined(__thumb2__)
    uint32_t w, t;
    __asm__("lsr %0, %2, #12\n\t"
            "ubfx %1, %2, #6, #6\n\t"
            "orr %0, %0, %1, lsl #8\n\t"
            "and %1, %2, #63\n\t"
            "orr %0, %0, %1, lsl #16\n\t"
            "add %0, %0, %3"
            : "=&r"(w), "=&r"(t)
            : "r"(v), "i"(PC_CHARS_ADD));
    return w;
#else
    return (v >> 12 | ((v >> 6) & 63u) << 8 | (v & 63u) << 16) + PC_CHARS_ADD;
#endif
}

#define SAMPLE_MAX 10u /* bytes of a sample at most: a tag ('+' and 2) and a full PC ('*' and 6) (and a
                          word's store of 3 PC chars writes one byte more: LINE_TAIL has room) */
#if LAZY_NAMES
static uint32_t owed_room; /* owed names the line being formatted may still carry (DEFS_MAX) */
static uint32_t owed_cut; /* samples put_samples left for the next line: no room for a name they owe */
static const uint32_t *owed_end; /* the end of the samples put_samples formats */
static uint32_t owed_ixc;         /* the index chars of the slot whose name put_owed put */

/* The name slot i (ixc: CMPROF_IXC_OWED | i) owes, as a '=' entry at b, before its sample; NULL
 * when the line carries DEFS_MAX already (the line ends, the next begins with it): the line's
 * buffer keeps room for that many besides its samples at their longest. */
__attribute__((noinline, cold)) static char *put_owed(char *b, uint32_t ixc, uint32_t word)
{
    uint32_t i = ixc & ~CMPROF_IXC_OWED;
    (void)word;
#if CMPROF_TAG_NAMES
    if (word >> 16 != cmprof_tag_names.gen[i]) { /* the index's task before (the tick gave it to the */
        owed_ixc = cmprof_tasks_chars(i);       /* block's next one): its name went out already */
        return b;
    }
#endif
    if (!owed_room)
        return NULL;
    owed_room--;
    struct name_out o = {b, b + 1 + ENTRY_MAX, true};
    put_def(&o, i, cmprof_tasks.tags[i], cmprof_tasks.owed[i]);
#if CMPROF_TAG_NAMES
    if (n_retired_in && o.b != b)
        o.b = put_retired_in(b, o.b, i);
    cmprof_tasks.live[i] = !def_whole; /* whole: this sample's entry names it; an id: a host that
                                             missed the id's name needs a repeat */
    if (def_whole && n_epoch_named < sizeof epoch_named / sizeof *epoch_named)
        epoch_named[n_epoch_named++] = (uint16_t)i;
    cmprof_tasks.ixc[i] = cmprof_tasks_chars(i); /* the tick owns the flags of a live index */
#else
    cmprof_tasks_clear(i, OWED);
    wire_chars(i);
#endif
    owed_ixc = cmprof_tasks.ixc[i]; /* only the drain marks a slot owed: these are its chars */
    return o.b;
}

/* The line ends before a sample whose name does not fit: the next line starts afresh. */
__attribute__((noinline, cold)) static char *owed_stop(char *b, const uint32_t *pcs)
{
    owed_cut = (uint32_t)(owed_end - pcs);
    stream.last_valid = false;
    return b;
}
#endif

/* A PC past 128 KB of code, its page not in the cache: '.' and its 24 bits of halfword offset as 4
 * such chars ('?' + 6 bits), the page kept, or '*' and the
 * full 32 bits in base64 (outside 32 MB, below the base, or odd). `v` is the rotated offset. */
__attribute__((noinline)) static char *put_far_pc(char *b, uint32_t pc, uint32_t v)
{
    if (v < (1u << 24)) { /* (the loop found its page not at its slot) */
        page_key[(v >> 6) & (PAGE_SLOTS - 1u)] = v >> 6;
        *b++ = '.';
        for (int sh = 18; sh >= 0; sh -= 6)
            *b++ = (char)('?' + ((v >> sh) & 63u));
        return b;
    }
    *b++ = '*';
    for (int sh = 30; sh >= 0; sh -= 6)
        *b++ = b64[(pc >> sh) & 63u];
    return b;
}

/* The n samples (pcs, tags: n in a row in the ring), formatted straight into b; returns the end.
 * Each PC in a page the host has at its slot goes out as 2 chars (the slot's and the offset's);
 * any other as 3 ('.' and 4 past 128 KB, '*' and 6 outside 32 MB or odd). A tag goes out where it
 * differs from the sample's before it, and at the first of these samples: each line reads alone
 * (but for its pages), and after a name given between two runs of samples (a reused control block
 * may have another index now) the index is said again. Locals, not the stream's fields, in the
 * loop: stores through a char pointer would make the compiler reload them. */
__attribute__((noinline)) HOT_LOOP static char *put_samples(char *b, const uint32_t *pcs, const uint32_t *tags,
                                                            uint32_t n)
{
    const uint32_t base = stream.code_base;
    const uint32_t *end = pcs + n;
    uint32_t *keys = page_key;
    __asm__("" : "+r"(keys)); /* in a register: GCC would load the address again every sample */
#if CMPROF_TAG_NAMES
    const uint32_t *ixcs = cmprof_tasks.ixc; /* the same; and the live marks beside them */
    __asm__("" : "+r"(ixcs));
#define LIVE_FROM_IXC (offsetof(struct cmprof_task_table, live) - offsetof(struct cmprof_task_table, ixc))
#endif
#ifdef CMPROF_TAG
    uint32_t last_tag = stream.last_tag;
    if (cmprof_tasks.cache_stale) { /* a tag got a slot: the cached answer may have been "no slot" */
        cmprof_tasks.cache_stale = false;
        stream.last_valid = false;
    }
    owed_end = end;
    uint32_t ixc = stream.last_valid ? stream.last_ixc : learn_tag((last_tag = tags[0]));
    if ((int32_t)ixc < 0) {
        char *named = put_owed(b, ixc, *tags);
        if (!named)
            return owed_stop(b, pcs);
        b = named;
        ixc = owed_ixc;
    }
    if (*tags == last_tag) { /* (another tag goes out in the loop) */
        COPY4(b, &ixc);
        b += IXC_LEN(ixc);
    }
#else
    (void)tags;
#endif
    do {
#ifdef CMPROF_TAG
        if (*tags != last_tag) {
            /* another task: its first probe of the hash, here; anything else out of line */
            last_tag = *tags;
#if CMPROF_TAG_NAMES
            uint32_t i = last_tag & 0xFFFFu;
            if (i < MAX_TASKS) {
                ixc = ixcs[i];
                ((uint8_t *)ixcs + LIVE_FROM_IXC)[i] = (uint8_t)IXC_LEN(ixc); /* sampled: repeated in the next round of names (as
                    word_chars); never 0 (1 to 3, or OWED's top byte), and the loop needs it next */
            } else {
                ixc = word_chars(last_tag);
            }
#else
            uint32_t slot = cmprof_tasks.hash[cmprof_tasks_home(last_tag)];
            if (slot && (uint32_t)(uintptr_t)cmprof_tasks.tags[slot - 1u] == last_tag)
                ixc = cmprof_tasks.ixc[slot - 1u];
            else
                ixc = other_tag(last_tag);
#endif
            if (__builtin_expect((int32_t)ixc < 0, 0)) { /* a name owed (CMPROF_IXC_OWED): put before it */
                char *named = put_owed(b, ixc, *tags);
                if (!named)
                    return owed_stop(b, pcs);
                b = named;
                ixc = owed_ixc;
            }
            COPY4(b, &ixc);
            b += IXC_LEN(ixc);
        }
        tags++;
#endif
        uint32_t pc = *pcs, off = pc - base;
        uint32_t v = off >> 1 | off << 31; /* rotated: an odd PC (base is even) fails the range tests */
        uint32_t page = v >> 6, slot = page & (PAGE_SLOTS - 1u);
        if (keys[slot] == page) { /* the host has the page: its slot's char and the offset's (no range
                                     test: the cache holds pages of PCs below 32 MB only) */
            uint32_t t = slot;
#if defined(__thumb2__)
            __asm__("bfi %0, %1, #8, #6" : "+r"(t) : "r"(v)); /* GCC takes 3 for it */
#else
            t |= (v & 63u) << 8;
#endif
            t += PAGE_HIT | '?' << 8;
            __builtin_memcpy(b, &t, 2);
            b += 2;
        } else if (__builtin_expect(v < (1u << 16), 1)) { /* 16 bits of halfword offset in 3 chars */
            keys[slot] = page;
            uint32_t w = pc_chars(v);
            COPY4(b, &w);
            b += 3;
        } else {
            b = put_far_pc(b, pc, v);
        }
    } while (++pcs < end);
#ifdef CMPROF_TAG
    stream.last_tag = last_tag;
    stream.last_ixc = ixc;
    stream.last_valid = true;
#endif
    return b;
}

/* The loss count when it changed, at most once in LOST_EVERY lines unless `now`: a ring that
 * overflows on every line must not spend the line on reports. Returns whether this was the
 * first loss reported. */
static bool send_lost(cmprof_putc_fn putc, bool now)
{
    uint32_t lost = cmprof_stream_lost();
    if (lost == stream.lost_sent || (!now && stream.since_lost < LOST_EVERY * LINE_SAMPLES && stream.lost_sent))
        return false;
    bool first = stream.lost_sent == 0u;
    stream.lost_sent = lost;
    stream.since_lost = 0;
    char line[32];
    size_t n = put_text(line, 0, "@lost");
    n = put_field(line, n, "", lost);
    send(putc, line, n);
    return first;
}

/* The samples from `upto` that may go before the next name is due, when that is quick to tell
 * (only new names wait, in the queue); 0 when one may be due: due_names looks. */
static uint32_t name_room(uint32_t upto)
{
    if (cmprof_tasks.n_superseded || cmprof_tasks.pending_overflow || cmprof_tasks.full_pending ||
        cmprof_tasks.pending_head == cmprof_tasks.pending_tail)
        return 0;
    /* the head entry may be stale: then due_names skips it, a segment later */
    return until_due(cmprof_tasks.pending[cmprof_tasks.pending_head % PENDING_N].at, upto);
}

#define GROUP_HEAD 8u  /* '&', what the group stands for (5 chars), its size (2), before the '%' or '$' */

/* At a reservoir's mark (cmprof.h): its two entries taken, the group's samples go out next, in '&'
 * lines. */
__attribute__((noinline)) static void group_start(void)
{
    uint32_t pcs[2], tags[2];
    cmprof_stream_take(pcs, tags, 2u);
    cmprof_stream_mark_sent(); /* the sampler may put the next group in */
    stream.group_kept = stream.group_left = pcs[0] - CMPROF_RESERVOIR_MARK;
    stream.group_taken = pcs[1];
}

/* The most samples the line at `upto` may carry: up to the next reservoir mark (starting the group
 * when the mark is at `upto`), or the rest of the group under way. */
static uint32_t before_mark(uint32_t upto, uint32_t want)
{
    uint32_t at;
    if (!stream.group_left && cmprof_stream_mark(&at)) {
        if (at != upto)
            return at - upto < want ? at - upto : want;
        group_start();
        want = cmprof_stream_pending() < want ? cmprof_stream_pending() : want;
    }
    if (stream.group_left)
        return want < stream.group_left ? want : stream.group_left;
    return want;
}

static char *group_head(char *b)
{
    for (int sh = 24; sh >= 0; sh -= 6)
        *b++ = b64[(stream.group_taken >> sh) & 63u];
    *b++ = b64[(stream.group_kept >> 6) & 63u];
    *b++ = b64[stream.group_kept & 63u];
    return b;
}
#define DEFS_MAX 8u /* names a sample line carries at most (more: the next line) */
#if CMPROF_TAG_NAMES
_Static_assert(sizeof epoch_named / sizeof *epoch_named >= PAGE_EPOCH * DEFS_MAX, "epoch_named: an epoch's entries");
#endif
#if CMPROF_TAG_NAMES
#define DEFS_ROOM (DEFS_MAX * (1u + ENTRY_MAX + RETIRED_IN))
#else
#define DEFS_ROOM (DEFS_MAX * (1u + ENTRY_MAX))
#endif
_Static_assert(1u + 64u * SAMPLE_MAX + DEFS_ROOM + LINE_TAIL <= 1024u, "a line within the host's 1024 bytes");

/* One line of up to LINE_SAMPLES samples, each new task's name inside it right before the samples
 * that may carry it. Returns the samples sent; the line may carry names only. */
static uint32_t send_line(cmprof_putc_fn putc)
{
    /* only samples stored before the names were looked at: a task created since (a kernel hook
     * preempting the drain) has its name due at or after them */
    uint32_t stored = cmprof_stream_pending(), upto = cmprof_stream_sent();
    uint32_t want = before_mark(upto, stored < LINE_SAMPLES ? stored : LINE_SAMPLES), k = 0;
    bool group = stream.group_left != 0u;
    upto = cmprof_stream_sent(); /* past a mark just taken */
    /* static: the drain's stack stays small, and the drain is the ring's single consumer */
    static char line[GROUP_HEAD + 1u + LINE_SAMPLES * SAMPLE_MAX + DEFS_ROOM + LINE_TAIL];
    char *start = group ? line : line + GROUP_HEAD, *b = start;
    if (group) {
        *b++ = '&';
        b = group_head(b);
    }
#ifdef CMPROF_TAG
    *b++ = '%';
#else
    *b++ = '$';
#endif
    /* the line's number, 12 bits as 2 chars '?' + 6 bits: the host tells a line it missed, and
     * where its pages start afresh */
    uint32_t number = line_number & 4095u, chars = (number >> 6 | (number & 63u) << 8) + 0x3F3Fu;
    __builtin_memcpy(b, &chars, 2);
    b += 2;
    page_line(number);
#if CMPROF_TAG_NAMES
    if (cmprof_tag_names.retired_head != cmprof_tag_names.retired_tail)
        repeat_retired(putc); /* (a sample line's own buffer is apart: repeat_line is free here) */
#endif
    front_len = 0; /* each line's first name goes whole: front-coded names refer only within a line */
    char *first = b;
#if defined(CMPROF_TAG) && !CMPROF_TAG_NAMES
    line_putc = putc;
#endif
#if LAZY_NAMES
    owed_room = DEFS_MAX;
#endif
    while (k < want) {
        uint32_t m = want - k;
        if (cmprof_tasks.names_pending) {
            uint32_t room = name_room(upto + k);
            if (!room) {
                struct name_out o = {b, line + sizeof line - LINE_TAIL - m * SAMPLE_MAX, true};
                room = due_names(putc, &o, upto + k);
                b = o.b;
            }
            m = room < m ? room : m;
            if (!m)
                break; /* no room for the next name: it opens the next line */
        }
        const uint32_t *pcs, *tags;
        m = cmprof_stream_peek(k, &pcs, &tags, m); /* where the ring wraps, fewer */
        b = put_samples(b, pcs, tags, m);
        k += m;
#if LAZY_NAMES
        if (owed_cut) { /* a name owed did not fit: it opens the next line */
            k -= owed_cut;
            owed_cut = 0;
            break;
        }
#endif
    }
    if (b == first)
        return 0;
    send(putc, start, (size_t)(b - start));
    line_number++;
#if CMPROF_STACKS /* the stack evidence of its samples, each in a line of its own (cmprof_stack.c) */
    static char stack_text[CMPROF_STACK_LINE_MAX + LINE_TAIL];
    for (uint32_t sn; (sn = cmprof_stack_line(stack_text, upto, k, stream.code_base)) != 0u;)
        send(putc, stack_text, sn);
#endif
    cmprof_stream_release(k);
    stream.group_left -= group ? k : 0u;
    return k;
}

uint32_t cmprof_stream_quiet_to = UINT32_MAX; /* before the first look: look */

/* After a look at the ring: the last sample count at which no line can be full. With p pending at
 * count n, each sample adding at most one, that is n + LINE_SAMPLES - p - 1. A reservoir's group goes
 * in several at once (cmprof.h), once a full ring has room: while the samples taken since the last
 * look did not each go into the ring as one (kept back, lost, or a group put in; or none came
 * since such a look), every poll looks. n is read before the ring, so a sample between the two is
 * counted in both. */
static void set_quiet(void)
{
    static uint32_t look_n, look_stored;
    static bool irregular;
    uint32_t n = cmprof_samples(), stored = cmprof_stream_stored(), p = stored - cmprof_stream_sent();
    irregular = stored - look_stored != n - look_n || (n == look_n && irregular);
    look_n = n;
    look_stored = stored;
    cmprof_stream_quiet_to = p < LINE_SAMPLES && !irregular ? n + (LINE_SAMPLES - p - 1u) : n - 1u;
}

__attribute__((noinline)) uint32_t cmprof_stream_drain_lines(cmprof_putc_fn putc, uint32_t max_lines)
{
    uint32_t sent = 0;
    while (max_lines-- && cmprof_stream_pending() >= LINE_SAMPLES)
        sent += send_line(putc);
    set_quiet();
    if (cmprof_tasks.names_pending)
        send_due_names(putc, cmprof_stream_sent());
    stream.since_lost += sent;
    reannounce_after(putc, sent, send_lost(putc, false));
    if (stream.round_next < stream.round_end)
        repeat_names(putc);
    return sent;
}

/* The quick exit: the main loop or the idle hook calls the drain far more often than a line fills,
 * so then it costs a call and a few instructions (cmprof_stream_quiet). */
uint32_t cmprof_stream_drain(cmprof_putc_fn putc, uint32_t max_lines)
{
    if (cmprof_stream_quiet())
        return 0;
    return cmprof_stream_drain_lines(putc, max_lines);
}

void cmprof_stream_flush(cmprof_putc_fn putc)
{
    do {
        while (cmprof_stream_pending()) /* each line sends samples, or names due before them */
            send_line(putc);
        cmprof_stream_reservoir_close(); /* a stopped sampler's last group goes into the ring */
    } while (cmprof_stream_pending());
    send_due_names(putc, cmprof_stream_stored());
    send_lost(putc, true);
}
#endif

void cmprof_stream_line(cmprof_putc_fn putc, char *line, uint32_t n)
{
    send(putc, line, n);
}

#endif /* CMPROF_STREAM */
