/* Live streaming: compact, checked text lines from the sample ring (protocol: docs/stream.md).
 *   $<samples>!CC        samples; each is 4 base64 chars, the halfword offset from the code base,
 *                        or '*' and 6 chars for a PC outside the 32 MB window (e.g. 0 or RAM)
 *   %<samples>!CC        the same with a tag: one base64 char (task index) before each sample
 *   #<pairs>!CC          histogram deltas: 3 chars of bucket index, 3 chars of new counts
 *   @<word> ...!CC       announce, task, section names, section statistics, loss count
 * CC is the sum12 check of everything before the '!', as two base64 chars. */
#include "cmprof.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define LINE_SAMPLES CMPROF_STREAM_LINE
_Static_assert(LINE_SAMPLES >= 1u && LINE_SAMPLES <= 64u, "CMPROF_STREAM_LINE: 1 to 64 (the host's limit)");
/* Named tags (tasks, and interrupt handlers as they appear), at most at once: 62 fit one index
 * character; more take three ('+' and two), up to 4158. Deleted tasks free their slot. */
#ifndef CMPROF_STREAM_TASKS
#define CMPROF_STREAM_TASKS 62u
#endif
_Static_assert(CMPROF_STREAM_TASKS >= 1u && CMPROF_STREAM_TASKS <= 4158u, "CMPROF_STREAM_TASKS: 1 to 4158");
#define MAX_TASKS CMPROF_STREAM_TASKS
#define SUPERSEDED_MAX 8u /* slots renamed twice between two drains, at most at once */
#define UNKNOWN_TAG 63u
#define ESCAPE_INDEX 62u
/* the hash: a power of two, at least twice the tasks */
#define TAG_SLOTS (MAX_TASKS <= 64u ? 128u : MAX_TASKS <= 256u ? 512u : MAX_TASKS <= 1024u ? 2048u : 8192u)
#if CMPROF_STREAM_TASKS <= 254
typedef uint8_t tag_slot_t;
#else
typedef uint16_t tag_slot_t;
#endif

static uint32_t tag_slot(uint32_t tag)
{
    return ((tag >> 2) * 2654435761u >> 16) & (TAG_SLOTS - 1u); /* TCBs are word aligned */
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct {
    uint32_t code_base;
    uint32_t lost_sent;
    const void *tags[MAX_TASKS];
    const char *names[MAX_TASKS]; /* kept to repeat them with the announce */
    uint32_t n_tags;
    tag_slot_t tag_slots[TAG_SLOTS]; /* open addressing on the tag: 1 + its index, 0 for empty */
    uint32_t slots_used;             /* live and stale (deleted tasks') slots: rebuilt at 3/4 */
    volatile bool names_pending;     /* cmprof_stream_task_later() named tasks the drain has not sent */
    uint8_t unsent[(MAX_TASKS + 7u) / 8u];
    uint32_t name_at[MAX_TASKS]; /* ring position when an unsent name was given: samples from
                                    there on are the new task's, those before the old one's */
    uint8_t gone[(MAX_TASKS + 7u) / 8u]; /* deleted tasks: kept until a new task needs the slot */
    struct superseded {                  /* unsent names whose slot a newer name took */
        uint32_t at;
        const void *tag;
        const char *name;
        uint16_t index;
    } superseded[SUPERSEDED_MAX];
    uint32_t n_superseded; /* beyond SUPERSEDED_MAX, a superseded name is lost: its samples show
                              under the slot's previous name */
    uint32_t last_tag;  /* consecutive samples mostly come from the same task: its index chars, */
    uint32_t last_ixc;  /* as IXC_OF packs them */
    bool last_valid;
    struct cmprof_stream_info info; /* the last announce, repeated by the drain */
    uint32_t announce_every;        /* samples in about one second of target time; 0: no announce yet */
    uint32_t since_announce;        /* samples sent since the last announce */
} stream;

static void send_announce(cmprof_putc_fn putc);
static void announce_all(cmprof_putc_fn putc);
static void send_task(cmprof_putc_fn putc, uint32_t i);
static void send_task_as(cmprof_putc_fn putc, uint32_t i, const void *tag, const char *name);

/* Once about a second's worth of samples went out (and after a loss), say it all again: a host
 * that attached late, or lost a line, has the clock, the code base and the task names within a
 * second. */
static void reannounce_after(cmprof_putc_fn putc, uint32_t samples, bool lost_some)
{
    if (!stream.announce_every)
        return;
    stream.since_announce += samples;
    if (stream.since_announce < stream.announce_every && !lost_some)
        return;
    announce_all(putc);
}

/* The announce and every task name the stream knows, the interrupt handlers' among them. */
static void announce_all(cmprof_putc_fn putc)
{
    send_announce(putc);
    for (uint32_t i = 0; i < stream.n_tags; i++)
        if (!(stream.gone[i / 8u] & (1u << (i % 8u))))
            send_task(putc, i);
}

/* The line check, sum12 (docs/stream.md): two running sums over the line's 32-bit little-endian
 * words, folded mod 4095. A word costs a load and four adds, where a CRC costs a table lookup per
 * byte, and it still catches every single-bit error (2^j is prime to 4095, and the second sum's
 * weight 1 + 3k never is a multiple of 3). `line` has LINE_TAIL spare bytes after n. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the sum12 words are little-endian");
#define LINE_TAIL 4u /* room a line buffer keeps after its text: "!CC\n" (and sum12's padding) */
/* A word goes into the first sum as (low 24 bits) + (top 8 bits), equal mod 4095 (2^24 = 1): the
 * first sum then fits 32 bits for any line, and only the second needs 64. */
#define SUM_WORD(a, b, w) ((a) += ((w) & 0xFFFFFFu) + ((w) >> 24), (b) += (a))

static uint32_t sum_fold(uint32_t a, uint64_t b)
{
    uint64_t x = a + 3u * b; /* under 2^48 for the longest line */
    uint32_t y = (uint32_t)(x & 0xFFFFFFu) + (uint32_t)(x >> 24); /* 2^24 = 1 mod 4095 */
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
static void send(cmprof_putc_fn putc, char *line, size_t n)
{
    uint32_t a = 0; /* locals, not a struct: they stay in registers */
    uint64_t b = 0;
    line[n] = line[n + 1u] = line[n + 2u] = 0; /* pads the last word */
    const char *p = line, *end = line + n, *whole = line + (n & ~(size_t)3u);
    if (stream.info.write) {
        for (; p < end; p += 4) {
            uint32_t w;
            memcpy(&w, p, 4);
            SUM_WORD(a, b, w);
        }
        put_tail(line + n, sum_fold(a, b));
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
        memcpy(&w, p, 4);
        SUM_WORD(a, b, w);
    }
    if (p < end) {
        uint32_t w;
        memcpy(&w, p, 4);
        SUM_WORD(a, b, w);
        do
            putc(*p++);
        while (p < end);
    }
    char tail[4];
    put_tail(tail, sum_fold(a, b));
    putc(tail[0]);
    putc(tail[1]);
    putc(tail[2]);
    putc(tail[3]);
}

/* Copy s, stopping where the line must still fit its tail (lines are at least LINE_ROOM long). */
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
static size_t put_text(char *b, size_t n, const char *s)
{
    while (*s && n < LINE_ROOM - LINE_TAIL)
        b[n++] = *s++;
    return n;
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

void cmprof_stream_announce(cmprof_putc_fn putc, const struct cmprof_stream_info *info)
{
    stream.info = *info;
    /* samples per second: the timer's clock over the mean period (period + jitter / 2) */
    uint32_t mean = info->period + info->jitter / 2u;
    uint32_t every = mean ? info->timer_hz / mean : 0u;
    /* and at least every 2048 samples (about 2.5 % of the bytes): a target slower than its clock
     * (an emulator) must not keep a late host waiting long for names it missed */
    stream.announce_every = every && every < 2048u ? every : 2048u;
    /* all of it, not the announce alone: an application that announces again on its own (more
     * often than the drain's repeat, which it then holds back) must not leave a late host without
     * the names only the drain knows, the interrupt handlers' */
    announce_all(putc);
}

static void send_announce(cmprof_putc_fn putc)
{
    const struct cmprof_stream_info *info = &stream.info;
    stream.since_announce = 0;
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@cmprof v=2");
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

static void hash_insert(uint32_t i)
{
    uint32_t k = tag_slot((uint32_t)(uintptr_t)stream.tags[i]);
    while (stream.tag_slots[k])
        k = (k + 1u) & (TAG_SLOTS - 1u);
    stream.tag_slots[k] = (tag_slot_t)(i + 1u);
    stream.slots_used++;
}

/* Deleted tasks leave stale slots (a probe must pass them); start over from the live ones. */
static void hash_rebuild(void)
{
    for (uint32_t k = 0; k < TAG_SLOTS; k++)
        stream.tag_slots[k] = 0;
    stream.slots_used = 0;
    for (uint32_t i = 0; i < stream.n_tags; i++)
        hash_insert(i);
}

#if CMPROF_HIST
#define RING_STORED() 0u /* no ring: names go out with the next drain */
#else
#define RING_STORED() cmprof_stream_stored()
#endif

static bool unsent(uint32_t i)
{
    return stream.unsent[i / 8u] & (1u << (i % 8u));
}

/* A slot whose name has not gone out yet is given to another task (a control block reused, or a
 * deleted task's slot taken over) before the drain ran: keep the old name, with its place, so
 * that the samples between the two names keep theirs. */
static void supersede(uint32_t i)
{
    if (!unsent(i) || stream.name_at[i] == RING_STORED())
        return; /* sent already, or no sample can carry the old name */
    if (stream.n_superseded == SUPERSEDED_MAX)
        return;
    struct superseded *e = &stream.superseded[stream.n_superseded++];
    e->at = stream.name_at[i];
    e->tag = stream.tags[i];
    e->name = stream.names[i];
    e->index = (uint16_t)i;
}

/* Register a tag and its name; returns its index, or MAX_TASKS when the table is full. A deleted
 * task keeps its slot (its samples still in the ring must find it) until the table is full and a
 * new task takes the slot over; the new @task line re-maps the index. */
static uint32_t register_task(const void *tag, const char *name)
{
    uint32_t i = 0, free_slot = MAX_TASKS;
    for (; i < stream.n_tags && stream.tags[i] != tag; i++)
        if ((stream.gone[i / 8u] & (1u << (i % 8u))) && free_slot == MAX_TASKS)
            free_slot = i;
    if (i < stream.n_tags) {
        supersede(i);
        stream.gone[i / 8u] &= (uint8_t)~(1u << (i % 8u)); /* a new task in a freed TCB */
    } else {
        if (stream.n_tags < MAX_TASKS)
            stream.n_tags++;
        else if (free_slot < MAX_TASKS)
            supersede(i = free_slot);
        else
            return MAX_TASKS;
        stream.gone[i / 8u] &= (uint8_t)~(1u << (i % 8u));
        stream.tags[i] = tag;
        if ((stream.slots_used + 1u) * 4u > TAG_SLOTS * 3u)
            hash_rebuild();
        hash_insert(i);
        stream.last_valid = false; /* the cached answer may have been "unknown" for this tag */
    }
    stream.names[i] = name;
    return i;
}

void cmprof_stream_task(cmprof_putc_fn putc, const void *tag, const char *name)
{
    uint32_t i = register_task(tag, name);
    if (i < MAX_TASKS) {
        stream.unsent[i / 8u] &= (uint8_t)~(1u << (i % 8u)); /* this name supersedes it, sent now */
        send_task(putc, i);
    }
}

void cmprof_stream_task_later(const void *tag, const char *name)
{
    uint32_t i = register_task(tag, name);
    if (i < MAX_TASKS) {
        stream.name_at[i] = RING_STORED();
        stream.unsent[i / 8u] |= (uint8_t)(1u << (i % 8u));
        stream.names_pending = true;
    }
}

/* Names registered from the kernel's hooks go out before the samples that may use them, and
 * after the samples of the task whose tag (a reused control block) they take over: send those
 * given at ring position `upto` or before. Returns how many samples from `upto` on may go out
 * before the next unsent name is due (UINT32_MAX: none is pending). */
static uint32_t send_due_names(cmprof_putc_fn putc, uint32_t upto)
{
    if (!stream.names_pending)
        return UINT32_MAX;
    stream.names_pending = false;
    uint32_t room = UINT32_MAX;
    /* superseded names first: each is older than its slot's current name */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < stream.n_superseded; k++) {
        struct superseded e = stream.superseded[k];
        uint32_t ahead = e.at - upto;
        if (ahead == 0u || ahead > 0x80000000u) { /* due: at upto or before it */
            send_task_as(putc, e.index, e.tag, e.name);
        } else {
            stream.superseded[kept++] = e;
            stream.names_pending = true;
            room = ahead < room ? ahead : room;
        }
    }
    stream.n_superseded = kept;
    for (uint32_t i = 0; i < stream.n_tags; i++)
        if (unsent(i)) {
            uint32_t ahead = stream.name_at[i] - upto;
            if (ahead == 0u || ahead > 0x80000000u) { /* its superseded names were due before it */
                stream.unsent[i / 8u] &= (uint8_t)~(1u << (i % 8u));
                send_task(putc, i); /* even if gone since: its samples may be in the ring */
            } else {
                stream.names_pending = true;
                room = ahead < room ? ahead : room;
            }
        }
    return room;
}

void cmprof_stream_task_gone(const void *tag)
{
    for (uint32_t i = 0; i < stream.n_tags; i++)
        if (stream.tags[i] == tag)
            stream.gone[i / 8u] |= (uint8_t)(1u << (i % 8u));
}

/* A task index: one character below 62, else '+' and two more. */
__attribute__((always_inline)) static inline size_t put_index(char *b, size_t n, uint32_t i)
{
    if (i < ESCAPE_INDEX || i == UNKNOWN_TAG) {
        b[n++] = b64[i];
        return n;
    }
    uint32_t v = i - ESCAPE_INDEX;
    b[n++] = b64[ESCAPE_INDEX];
    b[n++] = b64[(v >> 6) & 63u];
    b[n++] = b64[v & 63u];
    return n;
}

static void send_task_as(cmprof_putc_fn putc, uint32_t i, const void *tag_ptr, const char *name)
{
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@task ");
    n = put_index(line, n, i);
    line[n++] = ' ';
    uint32_t tag = (uint32_t)(uintptr_t)tag_ptr;
    n = put_hex(line, n, tag, 8);
    line[n++] = ' ';
    if (name) {
        n = put_text(line, n, name);
    } else if (CMPROF_IS_ISR_TAG(tag)) { /* "ISR 15": the host names the handler from the ELF */
        n = put_text(line, n, "ISR ");
        n = put_dec(line, n, tag & 0x1FFu);
    } else {
        line[n++] = '?';
    }
    send(putc, line, n);
}

static void send_task(cmprof_putc_fn putc, uint32_t i)
{
    send_task_as(putc, i, stream.tags[i], stream.names[i]);
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
    char line[1u + HIST_PAIRS * 6u + LINE_TAIL]; /* '#', pairs, tail */
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
    send_due_names(putc, RING_STORED()); /* no ring: every name is due */
    uint32_t sent = 0;
    int done = 0;
    while (max_lines-- && !done)
        sent += send_hist(putc, &done);
    reannounce_after(putc, sent, false);
    return sent;
}

void cmprof_stream_flush(cmprof_putc_fn putc)
{
    send_due_names(putc, RING_STORED());
    for (int pass = 0; pass < 2; pass++) { /* finish the pass under way, then one whole pass */
        int done = 0;
        while (!done)
            send_hist(putc, &done);
    }
}
#else
#ifdef CMPROF_TAG
/* A tag's index: a probe of the hash (never more than MAX_TASKS steps). */
static uint32_t tag_index(uint32_t tag)
{
    for (uint32_t k = tag_slot(tag), slot; (slot = stream.tag_slots[k]) != 0u; k = (k + 1u) & (TAG_SLOTS - 1u))
        if ((uint32_t)(uintptr_t)stream.tags[slot - 1u] == tag)
            return slot - 1u;
    return UNKNOWN_TAG;
}

/* A task index's characters (1 or 3) little-endian in the low 24 bits, their count on top: one
 * register in the sample loop, stored as a word and stepped over by the count (the PC's chars
 * overwrite the rest). */
#define IXC_OF(chars, len) ((chars) | (uint32_t)(len) << 24)
#define IXC_LEN(ixc) ((ixc) >> 24)

/* The index characters of a tag, kept for the next sample: consecutive samples mostly come from
 * the same task, so the common case is a compare. */
__attribute__((noinline)) static uint32_t learn_tag(cmprof_putc_fn putc, uint32_t tag)
{
    uint32_t index = tag_index(tag);
    if (index == UNKNOWN_TAG && CMPROF_IS_ISR_TAG(tag) && stream.n_tags < MAX_TASKS) {
        /* the first sample in an exception handler: name it before the line that uses it */
        cmprof_stream_task(putc, (const void *)(uintptr_t)tag, NULL);
        index = tag_index(tag);
    }
    char chars[3] = {0, 0, 0};
    size_t len = put_index(chars, 0, index);
    stream.last_ixc = IXC_OF((uint32_t)(uint8_t)chars[0] | (uint32_t)(uint8_t)chars[1] << 8 |
                                 (uint32_t)(uint8_t)chars[2] << 16, len);
    stream.last_tag = tag;
    stream.last_valid = true;
    return stream.last_ixc;
}
#endif

/* One line of up to max samples, formatted straight from the ring. Locals, not the stream's
 * fields, in the loop: stores through a char pointer would make the compiler reload them. */
static uint32_t send_samples(cmprof_putc_fn putc, uint32_t max)
{
    char line[1u + LINE_SAMPLES * 10u + LINE_TAIL]; /* '%', tag (up to 3) + '*' + 6 chars each, tail */
#ifdef CMPROF_TAG
    line[0] = '%';
#else
    line[0] = '$';
#endif
    char *b = line + 1;
    const char *enc = b64;
    __asm__("" : "+r"(enc)); /* a plain register: table loads index it directly */
    const uint32_t base = stream.code_base;
    uint32_t k = 0;
    while (k < max) {
        const uint32_t *peek_pcs, *peek_tags;
        uint32_t m = cmprof_stream_peek(k, &peek_pcs, &peek_tags, max - k);
        if (!m)
            break;
        const uint32_t *pcs = peek_pcs, *end = peek_pcs + m; /* copies that can live in registers */
#ifdef CMPROF_TAG
        const uint32_t *tags = peek_tags;
        uint32_t last_tag = stream.last_tag;
        uint32_t ixc = stream.last_valid ? stream.last_ixc : learn_tag(putc, (last_tag = tags[0]));
#else
        (void)peek_tags;
#endif
        do {
#ifdef CMPROF_TAG
            uint32_t tag = *tags++;
            if (tag != last_tag) {
                /* another task: its first probe of the hash, here; anything else out of line */
                uint32_t slot = stream.tag_slots[tag_slot(tag)];
                if (slot && slot <= ESCAPE_INDEX && (uint32_t)(uintptr_t)stream.tags[slot - 1u] == tag)
                    ixc = IXC_OF((uint8_t)enc[slot - 1u], 1u);
                else
                    ixc = learn_tag(putc, tag);
                last_tag = tag;
            }
            memcpy(b, &ixc, 4);
            b += IXC_LEN(ixc);
#endif
            uint32_t pc = *pcs, off = pc - base;
            uint32_t v = off >> 1 | off << 31; /* rotated: an odd PC (base is even) fails the range test */
            if (v < (1u << 24)) { /* 24 bits of halfword offset, in 4 chars */
                uint32_t w = (uint32_t)(uint8_t)enc[v >> 18] | (uint32_t)(uint8_t)enc[(v >> 12) & 63u] << 8 |
                             (uint32_t)(uint8_t)enc[(v >> 6) & 63u] << 16 | (uint32_t)(uint8_t)enc[v & 63u] << 24;
                memcpy(b, &w, 4);
                b += 4;
            } else { /* '*' and the full 32 bits, in 6 chars */
                *b++ = '*';
                for (int sh = 30; sh >= 0; sh -= 6)
                    *b++ = enc[(pc >> sh) & 63u];
            }
        } while (++pcs < end);
        k += m;
#ifdef CMPROF_TAG
        stream.last_tag = last_tag;
        stream.last_ixc = ixc;
        stream.last_valid = true;
#endif
    }
    if (!k)
        return 0;
    send(putc, line, (size_t)(b - line));
    cmprof_stream_release(k);
    return k;
}

/* Returns whether the loss count changed. */
static bool send_lost(cmprof_putc_fn putc)
{
    uint32_t lost = cmprof_stream_lost();
    if (lost == stream.lost_sent)
        return false;
    stream.lost_sent = lost;
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@lost");
    n = put_field(line, n, "", lost);
    send(putc, line, n);
    return true;
}

/* One line of up to LINE_SAMPLES samples, cut short where a task name is due. */
static uint32_t send_line(cmprof_putc_fn putc)
{
    uint32_t room = stream.names_pending ? send_due_names(putc, cmprof_stream_sent()) : UINT32_MAX;
    return send_samples(putc, room < LINE_SAMPLES ? room : LINE_SAMPLES);
}

uint32_t cmprof_stream_drain_lines(cmprof_putc_fn putc, uint32_t max_lines)
{
    uint32_t sent = 0;
    while (max_lines-- && cmprof_stream_pending() >= LINE_SAMPLES)
        sent += send_line(putc);
    if (stream.names_pending)
        send_due_names(putc, cmprof_stream_sent());
    reannounce_after(putc, sent, send_lost(putc));
    return sent;
}


void cmprof_stream_flush(cmprof_putc_fn putc)
{
    while (send_line(putc)) {
    }
    send_due_names(putc, cmprof_stream_stored());
    send_lost(putc);
}
#endif

void cmprof_stream_sections(cmprof_putc_fn putc)
{
    for (uint32_t i = 0; i < CMPROF_SECTIONS; i++) {
        const struct cmprof_section *s = cmprof_section_get(i);
        if (!s || s->count == 0u)
            continue;
        char line[LINE_ROOM];
        size_t n = put_text(line, 0, "@sect");
        n = put_field(line, n, "", i);
        n = put_field(line, n, "n=", s->count);
        n = put_field(line, n, "cur=", s->current);
        n = put_field(line, n, "min=", s->min);
        n = put_field(line, n, "max=", s->max);
        n = put_field(line, n, "sum=", s->sum);
        send(putc, line, n);
#if CMPROF_SECTION_EVENTS
        for (unsigned k = 0; k < cmprof_section_events(); k++) {
            const struct cmprof_stat *e = &s->events[k];
            n = put_text(line, 0, "@sectev");
            n = put_field(line, n, "", i);
            n = put_field(line, n, "", k);
            n = put_field(line, n, "ev=", cmprof_section_event(k));
            n = put_field(line, n, "cur=", e->current);
            n = put_field(line, n, "min=", e->min);
            n = put_field(line, n, "max=", e->max);
            n = put_field(line, n, "sum=", e->sum);
            send(putc, line, n);
        }
#endif
    }
}
