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

#define LINE_SAMPLES 16u
#define MAX_TASKS 62u
#define UNKNOWN_TAG 63u

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct {
    uint32_t code_base;
    uint32_t lost_sent;
    const void *tags[MAX_TASKS];
    const char *names[MAX_TASKS]; /* kept to repeat them with the announce */
    uint32_t n_tags;
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
        send_task(putc, i);
}

/* CRC-12 (polynomial 0x80F), one nibble at a time. */
static uint16_t crc12(uint16_t crc, const char *s, size_t n)
{
    static const uint16_t table[16] = {0x000, 0x80F, 0x811, 0x01E, 0x82D, 0x022, 0x03C, 0x833,
                                       0x855, 0x05A, 0x044, 0x84B, 0x078, 0x877, 0x869, 0x066};
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        crc = (uint16_t)(((crc << 4) & 0xFFF) ^ table[((crc >> 8) ^ (c >> 4)) & 0xF]);
        crc = (uint16_t)(((crc << 4) & 0xFFF) ^ table[((crc >> 8) ^ c) & 0xF]);
    }
    return crc;
}

/* Close a line with its check and send it. */
static void send(cmprof_putc_fn putc, char *line, size_t n)
{
    uint16_t crc = crc12(0, line, n);
    line[n++] = '~';
    line[n++] = b64[crc >> 6];
    line[n++] = b64[crc & 63u];
    line[n++] = '\n';
    for (size_t i = 0; i < n; i++)
        putc(line[i]);
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
    do {
        t[k++] = (char)('0' + (unsigned)(v % 10u));
        v /= 10u;
    } while (v);
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
    stream.announce_every = every ? every : 1000u;
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

void cmprof_stream_task(cmprof_putc_fn putc, const void *tag, const char *name)
{
    uint32_t i = 0;
    while (i < stream.n_tags && stream.tags[i] != tag)
        i++;
    if (i == stream.n_tags) {
        if (stream.n_tags == MAX_TASKS)
            return;
        stream.tags[stream.n_tags++] = tag;
    }
    stream.names[i] = name;
    send_task(putc, i);
}

static void send_task(cmprof_putc_fn putc, uint32_t i)
{
    char line[LINE_ROOM];
    size_t n = put_text(line, 0, "@task ");
    line[n++] = b64[i];
    line[n++] = ' ';
    n = put_hex(line, n, (uint32_t)(uintptr_t)stream.tags[i], 8);
    line[n++] = ' ';
    n = put_text(line, n, stream.names[i] ? stream.names[i] : "?");
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
    uint32_t sent = 0;
    int done = 0;
    while (max_lines-- && !done)
        sent += send_hist(putc, &done);
    reannounce_after(putc, sent, false);
    return sent;
}

void cmprof_stream_flush(cmprof_putc_fn putc)
{
    for (int pass = 0; pass < 2; pass++) { /* finish the pass under way, then one whole pass */
        int done = 0;
        while (!done)
            send_hist(putc, &done);
    }
}
#else
static uint32_t tag_index(uint32_t tag)
{
    for (uint32_t i = 0; i < stream.n_tags; i++)
        if ((uint32_t)(uintptr_t)stream.tags[i] == tag)
            return i;
    return UNKNOWN_TAG;
}

static size_t put_sample(char *b, size_t n, uint32_t pc)
{
    uint32_t off = pc - stream.code_base;
    if ((pc & 1u) == 0u && off < (1u << 25)) {
        uint32_t v = off >> 1; /* 24 bits */
        b[n++] = b64[(v >> 18) & 63u];
        b[n++] = b64[(v >> 12) & 63u];
        b[n++] = b64[(v >> 6) & 63u];
        b[n++] = b64[v & 63u];
    } else {
        b[n++] = '*'; /* the full 32 bits, in 6 chars */
        for (int s = 30; s >= 0; s -= 6)
            b[n++] = b64[(pc >> s) & 63u];
    }
    return n;
}

static uint32_t send_samples(cmprof_putc_fn putc, uint32_t max)
{
    uint32_t pcs[LINE_SAMPLES], tags[LINE_SAMPLES];
    uint32_t k = cmprof_stream_take(pcs, tags, max);
    if (!k)
        return 0;
    char line[1u + LINE_SAMPLES * 8u + 4u]; /* '%', tag + '*' + 6 chars each, "~CC\n" */
#ifdef CMPROF_TAG
    const bool tagged = true;
#else
    const bool tagged = false;
#endif
    size_t n = 0;
    line[n++] = tagged ? '%' : '$';
    for (uint32_t i = 0; i < k; i++) {
        if (tagged)
            line[n++] = b64[tag_index(tags[i])];
        n = put_sample(line, n, pcs[i]);
    }
    send(putc, line, n);
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

uint32_t cmprof_stream_drain(cmprof_putc_fn putc, uint32_t max_lines)
{
    uint32_t sent = 0;
    while (max_lines-- && cmprof_stream_pending() >= LINE_SAMPLES)
        sent += send_samples(putc, LINE_SAMPLES);
    reannounce_after(putc, sent, send_lost(putc));
    return sent;
}

void cmprof_stream_flush(cmprof_putc_fn putc)
{
    while (send_samples(putc, LINE_SAMPLES)) {
    }
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
