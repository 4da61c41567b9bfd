/* Live streaming: compact, checked text lines from the sample ring (protocol: docs/stream.md).
 *   $<samples>~CC        samples; each is 4 base64 chars, the halfword offset from the code base,
 *                        or '*' and 6 chars for a PC outside the 32 MB window (e.g. 0 or RAM)
 *   %<samples>~CC        the same with a tag: one base64 char (task index) before each sample
 *   #<pairs>~CC          histogram deltas: 3 chars of bucket index, 3 chars of new counts
 *   @<word> ...~CC       announce, task, section names, section statistics, loss count
 * CC is a CRC-12 of everything before the '~', as two base64 chars. */
#include "cmprof.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define LINE_SAMPLES CMPROF_STREAM_LINE
/* Named tags (tasks, and interrupt handlers as they appear), at most at once: 62 fit one index
 * character; more take three ('+' and two), up to 4158. Deleted tasks free their slot. */
#ifndef CMPROF_STREAM_TASKS
#define CMPROF_STREAM_TASKS 62u
#endif
_Static_assert(CMPROF_STREAM_TASKS >= 1u && CMPROF_STREAM_TASKS <= 4158u, "CMPROF_STREAM_TASKS: 1 to 4158");
#define MAX_TASKS CMPROF_STREAM_TASKS
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
    uint32_t last_tag;   /* consecutive samples mostly come from the same task: its index chars */
    uint32_t last_chars; /* 1 or 3, little-endian */
    uint8_t last_len;
    bool last_valid;
    struct cmprof_stream_info info; /* the last announce, repeated by the drain */
    uint32_t announce_every;        /* samples in about one second of target time; 0: no announce yet */
    uint32_t since_announce;        /* samples sent since the last announce */
} stream;

static void send_announce(cmprof_putc_fn putc);
static void send_task(cmprof_putc_fn putc, uint32_t i);

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
    send_announce(putc);
    for (uint32_t i = 0; i < stream.n_tags; i++)
        if (!(stream.gone[i / 8u] & (1u << (i % 8u))))
            send_task(putc, i);
}

/* CRC-12 (polynomial 0x80F, MSB first), a byte at a time: 512 bytes of table buy half the
 * instructions of the nibble-wise loop, and the check is most of a line's cost. */
static const uint16_t crc12_table[256] = {
    0x000, 0x80F, 0x811, 0x01E, 0x82D, 0x022, 0x03C, 0x833,
    0x855, 0x05A, 0x044, 0x84B, 0x078, 0x877, 0x869, 0x066,
    0x8A5, 0x0AA, 0x0B4, 0x8BB, 0x088, 0x887, 0x899, 0x096,
    0x0F0, 0x8FF, 0x8E1, 0x0EE, 0x8DD, 0x0D2, 0x0CC, 0x8C3,
    0x945, 0x14A, 0x154, 0x95B, 0x168, 0x967, 0x979, 0x176,
    0x110, 0x91F, 0x901, 0x10E, 0x93D, 0x132, 0x12C, 0x923,
    0x1E0, 0x9EF, 0x9F1, 0x1FE, 0x9CD, 0x1C2, 0x1DC, 0x9D3,
    0x9B5, 0x1BA, 0x1A4, 0x9AB, 0x198, 0x997, 0x989, 0x186,
    0xA85, 0x28A, 0x294, 0xA9B, 0x2A8, 0xAA7, 0xAB9, 0x2B6,
    0x2D0, 0xADF, 0xAC1, 0x2CE, 0xAFD, 0x2F2, 0x2EC, 0xAE3,
    0x220, 0xA2F, 0xA31, 0x23E, 0xA0D, 0x202, 0x21C, 0xA13,
    0xA75, 0x27A, 0x264, 0xA6B, 0x258, 0xA57, 0xA49, 0x246,
    0x3C0, 0xBCF, 0xBD1, 0x3DE, 0xBED, 0x3E2, 0x3FC, 0xBF3,
    0xB95, 0x39A, 0x384, 0xB8B, 0x3B8, 0xBB7, 0xBA9, 0x3A6,
    0xB65, 0x36A, 0x374, 0xB7B, 0x348, 0xB47, 0xB59, 0x356,
    0x330, 0xB3F, 0xB21, 0x32E, 0xB1D, 0x312, 0x30C, 0xB03,
    0xD05, 0x50A, 0x514, 0xD1B, 0x528, 0xD27, 0xD39, 0x536,
    0x550, 0xD5F, 0xD41, 0x54E, 0xD7D, 0x572, 0x56C, 0xD63,
    0x5A0, 0xDAF, 0xDB1, 0x5BE, 0xD8D, 0x582, 0x59C, 0xD93,
    0xDF5, 0x5FA, 0x5E4, 0xDEB, 0x5D8, 0xDD7, 0xDC9, 0x5C6,
    0x440, 0xC4F, 0xC51, 0x45E, 0xC6D, 0x462, 0x47C, 0xC73,
    0xC15, 0x41A, 0x404, 0xC0B, 0x438, 0xC37, 0xC29, 0x426,
    0xCE5, 0x4EA, 0x4F4, 0xCFB, 0x4C8, 0xCC7, 0xCD9, 0x4D6,
    0x4B0, 0xCBF, 0xCA1, 0x4AE, 0xC9D, 0x492, 0x48C, 0xC83,
    0x780, 0xF8F, 0xF91, 0x79E, 0xFAD, 0x7A2, 0x7BC, 0xFB3,
    0xFD5, 0x7DA, 0x7C4, 0xFCB, 0x7F8, 0xFF7, 0xFE9, 0x7E6,
    0xF25, 0x72A, 0x734, 0xF3B, 0x708, 0xF07, 0xF19, 0x716,
    0x770, 0xF7F, 0xF61, 0x76E, 0xF5D, 0x752, 0x74C, 0xF43,
    0xEC5, 0x6CA, 0x6D4, 0xEDB, 0x6E8, 0xEE7, 0xEF9, 0x6F6,
    0x690, 0xE9F, 0xE81, 0x68E, 0xEBD, 0x6B2, 0x6AC, 0xEA3,
    0x660, 0xE6F, 0xE71, 0x67E, 0xE4D, 0x642, 0x65C, 0xE53,
    0xE35, 0x63A, 0x624, 0xE2B, 0x618, 0xE17, 0xE09, 0x606,
};

/* Send a line and close it with its check, computed on the way out: one pass over the bytes. */
static void send(cmprof_putc_fn putc, const char *line, size_t n)
{
    uint32_t crc = 0;
    for (const char *p = line, *end = line + n; p < end; p++) {
        char c = *p;
        crc = ((crc & 0xFu) << 8) ^ crc12_table[((crc >> 4) ^ (uint8_t)c) & 0xFFu];
        putc(c);
    }
    putc('~');
    putc(b64[crc >> 6]);
    putc(b64[crc & 63u]);
    putc('\n');
}

/* Copy s, stopping where the line must still fit "~CC\n" (lines are at least LINE_ROOM long). */
#define LINE_ROOM 160u
static size_t put_text(char *b, size_t n, const char *s)
{
    while (*s && n < LINE_ROOM - 4u)
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
    send_announce(putc);
}

static void send_announce(cmprof_putc_fn putc)
{
    const struct cmprof_stream_info *info = &stream.info;
    stream.since_announce = 0;
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@cmprof v=1");
    stream.code_base = info->code_base & ~1u;
    n = put_field(line, n, "clk=", info->clock_hz);
    n = put_field(line, n, "tclk=", info->timer_hz);
    n = put_field(line, n, "period=", info->period);
    n = put_field(line, n, "jitter=", info->jitter);
    if (info->section_hz)
        n = put_field(line, n, "sclk=", info->section_hz);
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
        stream.gone[i / 8u] &= (uint8_t)~(1u << (i % 8u)); /* a new task in a freed TCB */
    } else {
        if (stream.n_tags < MAX_TASKS)
            stream.n_tags++;
        else if (free_slot < MAX_TASKS)
            i = free_slot;
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
    if (i < MAX_TASKS)
        send_task(putc, i);
}

#if CMPROF_HIST
#define RING_STORED() 0u /* no ring: names go out with the next drain */
#else
#define RING_STORED() cmprof_stream_stored()
#endif

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
    for (uint32_t i = 0; i < stream.n_tags; i++)
        if (stream.unsent[i / 8u] & (1u << (i % 8u))) {
            uint32_t ahead = stream.name_at[i] - upto;
            if (ahead == 0u || ahead > 0x80000000u) { /* due: at upto or before it */
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

static void send_task(cmprof_putc_fn putc, uint32_t i)
{
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@task ");
    n = put_index(line, n, i);
    line[n++] = ' ';
    n = put_hex(line, n, (uint32_t)(uintptr_t)stream.tags[i], 8);
    line[n++] = ' ';
    uint32_t tag = (uint32_t)(uintptr_t)stream.tags[i];
    if (stream.names[i]) {
        n = put_text(line, n, stream.names[i]);
    } else if (CMPROF_IS_ISR_TAG(tag)) { /* "ISR 15": the host names the handler from the ELF */
        n = put_text(line, n, "ISR ");
        n = put_dec(line, n, tag & 0x1FFu);
    } else {
        line[n++] = '?';
    }
    send(putc, line, n);
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
    char line[1u + HIST_PAIRS * 6u + 4u]; /* '#', pairs, "~CC\n" */
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

/* The characters of a tag's index (1 or 3, little-endian in a word), kept for the next sample:
 * consecutive samples mostly come from the same task, so the common case is a compare. */
__attribute__((noinline)) static void learn_tag(cmprof_putc_fn putc, uint32_t tag)
{
    uint32_t index = tag_index(tag);
    if (index == UNKNOWN_TAG && CMPROF_IS_ISR_TAG(tag) && stream.n_tags < MAX_TASKS) {
        /* the first sample in an exception handler: name it before the line that uses it */
        cmprof_stream_task(putc, (const void *)(uintptr_t)tag, NULL);
        index = tag_index(tag);
    }
    char chars[3] = {0, 0, 0};
    stream.last_len = (uint8_t)put_index(chars, 0, index);
    stream.last_chars = (uint32_t)(uint8_t)chars[0] | (uint32_t)(uint8_t)chars[1] << 8 |
                        (uint32_t)(uint8_t)chars[2] << 16;
    stream.last_tag = tag;
    stream.last_valid = true;
}
#endif

/* One line of up to max samples, formatted straight from the ring. Locals, not the stream's
 * fields, in the loop: stores through a char pointer would make the compiler reload them. */
static uint32_t send_samples(cmprof_putc_fn putc, uint32_t max)
{
    char line[1u + LINE_SAMPLES * 10u + 4u]; /* '%', tag (up to 3) + '*' + 6 chars each, "~CC\n" */
#ifdef CMPROF_TAG
    line[0] = '%';
#else
    line[0] = '$';
#endif
    char *b = line + 1;
    const char *enc = b64;
    const uint32_t base = stream.code_base;
    uint32_t k = 0;
    while (k < max) {
        const uint32_t *pcs, *tags;
        uint32_t m = cmprof_stream_peek(k, &pcs, &tags, max - k);
        if (!m)
            break;
#ifdef CMPROF_TAG
        if (!stream.last_valid)
            learn_tag(putc, tags[0]);
        uint32_t last_tag = stream.last_tag, chars = stream.last_chars, len = stream.last_len;
#else
        (void)tags;
#endif
        for (uint32_t i = 0; i < m; i++) {
#ifdef CMPROF_TAG
            if (tags[i] != last_tag) {
                /* another task: its first probe of the hash, here; anything else out of line */
                uint32_t tag = tags[i], slot = stream.tag_slots[tag_slot(tag)];
                if (slot && slot <= ESCAPE_INDEX && (uint32_t)(uintptr_t)stream.tags[slot - 1u] == tag) {
                    chars = (uint8_t)enc[slot - 1u];
                    len = 1u;
                } else {
                    learn_tag(putc, tag);
                    chars = stream.last_chars;
                    len = stream.last_len;
                }
                last_tag = tag;
            }
            if (len == 1u) {
                *b++ = (char)chars;
            } else {
                memcpy(b, &chars, 3);
                b += 3;
            }
#endif
            uint32_t pc = pcs[i], off = pc - base;
            if ((pc & 1u) == 0u && off < (1u << 25)) { /* 24 bits of halfword offset, in 4 chars */
                uint32_t v = off >> 1;
                uint32_t w = (uint32_t)(uint8_t)enc[v >> 18] | (uint32_t)(uint8_t)enc[(v >> 12) & 63u] << 8 |
                             (uint32_t)(uint8_t)enc[(v >> 6) & 63u] << 16 | (uint32_t)(uint8_t)enc[v & 63u] << 24;
                memcpy(b, &w, 4);
                b += 4;
            } else { /* '*' and the full 32 bits, in 6 chars */
                *b++ = '*';
                for (int sh = 30; sh >= 0; sh -= 6)
                    *b++ = enc[(pc >> sh) & 63u];
            }
        }
        k += m;
#ifdef CMPROF_TAG
        stream.last_tag = last_tag;
        stream.last_chars = chars;
        stream.last_len = (uint8_t)len;
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
    uint32_t room = send_due_names(putc, cmprof_stream_sent());
    return send_samples(putc, room < LINE_SAMPLES ? room : LINE_SAMPLES);
}

uint32_t cmprof_stream_drain_lines(cmprof_putc_fn putc, uint32_t max_lines)
{
    uint32_t sent = 0;
    while (max_lines-- && cmprof_stream_pending() >= LINE_SAMPLES)
        sent += send_line(putc);
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
    }
}
