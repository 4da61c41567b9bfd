/* Text dump decoder. Lines are collected in a fixed buffer; a raw block's samples are held until
 * the block closes, because its tags (g lines) follow all of its PCs (p lines). */
#include "text.h"

#include "hex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_NONE, BLOCK_RAW, BLOCK_HIST };

void text_init(struct text_decoder *d)
{
    memset(d, 0, sizeof *d);
}

void text_free(struct text_decoder *d)
{
    free(d->pcs);
    free(d->tags);
    d->pcs = d->tags = NULL;
    d->n_pcs = d->n_tags = d->cap_pcs = d->cap_tags = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#define ONES SWAR_ONES
#define HIGHS SWAR_HIGHS

/* Eight hex digits at s as a 32-bit value, or false: all eight checked and converted at once. */
static inline __attribute__((always_inline)) bool hex8(const char *s, uint32_t *out)
{
    uint64_t w = hex_chars8(s);
    if ((w & HIGHS) || hex_digits_mask(w) != HIGHS)
        return false;
    *out = hex_value8(w);
    return true;
}

/* Parse "X X X" hex words (1..max_digits each, 1..max_words) after a two-character prefix. */
static size_t parse_hex_words(const char *s, size_t len, unsigned max_digits, uint32_t *out, size_t max_words)
{
    if (max_digits == 8) { /* the dump's own layout, " XXXXXXXX" per word: eight digits a step */
        size_t n = 0, i = 0;
        while (len - i >= 9 && n < max_words && s[i] == ' ' && (len - i == 9 || s[i + 9] == ' ') &&
               hex8(s + i + 1, &out[n])) {
            n++;
            i += 9;
        }
        if (i == len && n)
            return n;
        /* anything else (short words, extra blanks, a bad digit): the general parse decides */
    }
    size_t n = 0, i = 0;
    while (i < len) {
        if (s[i] != ' ')
            return 0;
        while (i < len && s[i] == ' ')
            i++;
        if (i == len)
            break;
        uint32_t v = 0;
        unsigned digits = 0;
        while (i < len && s[i] != ' ') {
            int h = hexval(s[i++]);
            if (h < 0 || ++digits > max_digits)
                return 0;
            v = v << 4 | (uint32_t)h;
        }
        if (n == max_words)
            return 0;
        out[n++] = v;
    }
    return n;
}

static bool parse_uint(const char **p, const char *end, const char *key, uint64_t *out, int base)
{
    size_t k = strlen(key);
    if ((size_t)(end - *p) < k || memcmp(*p, key, k) != 0)
        return false;
    const char *s = *p + k;
    uint64_t v = 0;
    int digits = 0;
    while (s < end && *s != ' ') {
        int h = hexval(*s);
        if (h < 0 || h >= base || ++digits > 20)
            return false;
        v = v * (uint64_t)base + (uint64_t)h;
        s++;
    }
    if (!digits)
        return false;
    while (s < end && *s == ' ')
        s++;
    *p = s;
    *out = v;
    return true;
}

static bool push(uint32_t **arr, size_t *n, size_t *cap, const uint32_t *v, size_t k)
{
    if (*n + k > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        while (c < *n + k)
            c *= 2;
        uint32_t *a = realloc(*arr, c * sizeof *a);
        if (!a)
            return false;
        *arr = a;
        *cap = c;
    }
    memcpy(*arr + *n, v, k * sizeof *v);
    *n += k;
    return true;
}

static void close_raw(struct text_decoder *d, const struct ev_sink *sink)
{
    bool tagged = d->n_tags == d->n_pcs && d->n_tags > 0;
    if (d->n_tags && !tagged)
        d->stats.tag_mismatch++;
    if (!tagged && d->n_pcs) { /* one event for the block: no call per sample */
        struct ev e = ev_blank(EV_PCS);
        e.pcs = d->pcs;
        e.count = d->n_pcs;
        e.offset = d->block_offset;
        ev_emit(sink, &e);
    }
    struct ev e = ev_blank(EV_PC); /* built once: only PCs change */
    e.offset = d->block_offset;
    e.has_tag = true;
    for (size_t i = 0; tagged && i < d->n_pcs; i++) {
        e.addr = d->pcs[i];
        e.tag = d->tags[i];
        ev_emit(sink, &e);
    }
    d->stats.samples += d->n_pcs;
    d->n_pcs = d->n_tags = 0;
}

static void close_block(struct text_decoder *d, const struct ev_sink *sink)
{
    if (d->block == BLOCK_RAW)
        d->delivered = d->n_pcs;
    if (d->block != BLOCK_NONE && d->announced > d->delivered)
        d->stats.missing += d->announced - d->delivered;
    d->announced = d->delivered = 0;
    if (d->block == BLOCK_RAW)
        close_raw(d, sink);
    if (d->block != BLOCK_NONE)
        d->stats.blocks++;
    d->block = BLOCK_NONE;
}

static void bad(struct text_decoder *d)
{
    if (!d->stats.bad_lines++)
        d->stats.first_bad = d->line_offset + 1;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
    size_t k = strlen(prefix);
    return len >= k && memcmp(s, prefix, k) == 0;
}

static void line_hist_header(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t base, shift, n, out;
    const char *p = s + strlen("prof hist ");
    if (!parse_uint(&p, end, "base=0x", &base, 16) || !parse_uint(&p, end, "shift=", &shift, 10) ||
        !parse_uint(&p, end, "n=", &n, 10) || !parse_uint(&p, end, "out=", &out, 10) || p != end ||
        base > UINT32_MAX || shift > 16u) {
        bad(d);
        return;
    }
    close_block(d, sink);
    d->block = BLOCK_HIST;
    d->hist_base = (uint32_t)base;
    d->hist_shift = (uint32_t)shift;
    d->hist_index = 0;
    d->announced = n;
    d->delivered = out;
    struct ev e = {.type = EV_HIST_HEADER, .addr = (uint32_t)base, .size = 1u << shift, .count = n, .value = out,
                   .offset = d->line_offset};
    ev_emit(sink, &e);
}

static void line_sect(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t idx, n, cur, mn, mx, sum;
    const char *p = s + strlen("sect ");
    if (!parse_uint(&p, end, "", &idx, 10) || !parse_uint(&p, end, "n=", &n, 10) ||
        !parse_uint(&p, end, "cur=", &cur, 10) || !parse_uint(&p, end, "min=", &mn, 10) ||
        !parse_uint(&p, end, "max=", &mx, 10) || !parse_uint(&p, end, "sum=", &sum, 10) || p != end) {
        bad(d);
        return;
    }
    struct ev e = {.type = EV_SECTION, .index = (uint32_t)idx, .run = {cur, n, mn, mx, sum},
                   .offset = d->line_offset};
    ev_emit(sink, &e);
}

/* "sectev I K ev=E cur= min= max= sum=": event slot K of section I (Cortex-A/R PMU events). */
static void line_sectev(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t idx, k, ev, cur, mn, mx, sum;
    const char *p = s + strlen("sectev ");
    if (!parse_uint(&p, end, "", &idx, 10) || !parse_uint(&p, end, "", &k, 10) || !parse_uint(&p, end, "ev=", &ev, 10) ||
        !parse_uint(&p, end, "cur=", &cur, 10) || !parse_uint(&p, end, "min=", &mn, 10) ||
        !parse_uint(&p, end, "max=", &mx, 10) || !parse_uint(&p, end, "sum=", &sum, 10) || p != end ||
        idx > UINT32_MAX || k > UINT32_MAX || ev > UINT32_MAX) {
        bad(d);
        return;
    }
    struct ev e = {.type = EV_SECTION_EVENT, .index = (uint32_t)idx, .kind = (uint32_t)k, .tag = (uint32_t)ev,
                   .run = {.current = cur, .min = mn, .max = mx, .sum = sum}, .offset = d->line_offset};
    ev_emit(sink, &e);
}

static void line_task(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t tag;
    const char *p = s + strlen("task ");
    if (!parse_uint(&p, end, "", &tag, 16) || tag > UINT32_MAX || p == end) {
        bad(d);
        return;
    }
    struct ev e = {.type = EV_TASK_NAME, .tag = (uint32_t)tag, .text = p, .text_len = (size_t)(end - p),
                   .offset = d->line_offset};
    ev_emit(sink, &e);
}

/* ---- the live stream (docs/stream.md) ----------------------------------------------------- */

static void line_sect(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink);

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* CRC-12, polynomial 0x80F, MSB first, one nibble at a time: the check of v1 lines ("~CC"). */
static uint16_t crc12(const char *s, size_t n)
{
    static const uint16_t table[16] = {0x000, 0x80F, 0x811, 0x01E, 0x82D, 0x022, 0x03C, 0x833,
                                       0x855, 0x05A, 0x044, 0x84B, 0x078, 0x877, 0x869, 0x066};
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        crc = (uint16_t)(((crc << 4) & 0xFFF) ^ table[((crc >> 8) ^ (c >> 4)) & 0xF]);
        crc = (uint16_t)(((crc << 4) & 0xFFF) ^ table[((crc >> 8) ^ c) & 0xF]);
    }
    return crc;
}

/* sum12, the check of v2 lines (docs/stream.md): running sums a and b over the 32-bit
 * little-endian words of the line, the last one padded with zeros; (a + 3b) mod 4095. */
static uint16_t sum12(const char *s, size_t n)
{
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t w = 0;
        for (size_t k = 0; k < 4 && i + k < n; k++)
            w |= (uint32_t)(uint8_t)s[i + k] << (8 * k);
        a += w;
        b += a;
    }
    return (uint16_t)((a + 3 * b) % 4095);
}

/* Whether the line ends in a check mark and two characters: "~CC" (v1) or "!CC" (v2). */
static bool has_check(const char *s, size_t len)
{
    return len >= 4 && (s[len - 3] == '~' || s[len - 3] == '!');
}

/* Length of the checked body, or 0 when the line does not end in a valid check. */
static size_t checked_body(const char *s, size_t len)
{
    if (!has_check(s, len))
        return 0;
    int hi = b64val(s[len - 2]), lo = b64val(s[len - 1]);
    if (hi < 0 || lo < 0)
        return 0;
    uint16_t want = (uint16_t)(hi << 6 | lo);
    uint16_t got = s[len - 3] == '~' ? crc12(s, len - 3) : sum12(s, len - 3);
    return got == want ? len - 3 : 0;
}

/* A task index: one base64 char for 0..61 (and 63, '/', from firmware before issue 30), or '+'
 * and two more for 62..4157. Returns the index, or -1 when malformed. */
static int task_index(const char *s, size_t len, size_t *i)
{
    if (*i >= len)
        return -1;
    int c = b64val(s[(*i)++]);
    if (c != 62)
        return c;
    if (*i + 2 > len)
        return -1;
    int hi = b64val(s[*i]), lo = b64val(s[*i + 1]);
    *i += 2;
    return hi < 0 || lo < 0 ? -1 : 62 + (hi << 6 | lo);
}

/* The tag before a sample: a task index, "-" and two chars of an exception number (its handler's
 * tag, CMPROF_ISR_TAG), or "/": a tag the firmware had no slot for. False when malformed. */
static bool sample_tag(struct text_decoder *d, const char *s, size_t len, size_t *i, uint32_t *tag)
{
    if (*i < len && s[*i] == '-') {
        int hi = *i + 3 <= len ? b64val(s[*i + 1]) : -1, lo = *i + 3 <= len ? b64val(s[*i + 2]) : -1;
        if (hi < 0 || hi > 7 || lo < 0 || (hi << 6 | lo) < 2) /* exceptions 2..511 */
            return false;
        *tag = 0xFFFFFE00u | (uint32_t)(hi << 6 | lo);
        *i += 3;
    } else if (*i < len && s[*i] == '/' && !d->slash_named) {
        *tag = EV_TAG_UNSENT;
        (*i)++;
    } else {
        int t = task_index(s, len, i);
        if (t < 0)
            return false;
        *tag = d->task_tags[t];
    }
    return *i < len;
}

static void stream_samples(struct text_decoder *d, const char *s, size_t len, bool tagged,
                           const struct ev_sink *sink)
{
    /* validate the whole line before emitting anything from it */
    uint32_t pcs[64], tags[64];
    size_t n = 0, i = 1;
    while (i < len) {
        if (n == 64)
            goto bad;
        uint32_t tag = 0;
        if (tagged && !sample_tag(d, s, len, &i, &tag))
            goto bad;
        uint32_t v = 0;
        if (s[i] == '*') { /* a full 32-bit PC */
            if (i + 7 > len)
                goto bad;
            for (size_t k = 1; k <= 6; k++) {
                int c = b64val(s[i + k]);
                if (c < 0)
                    goto bad;
                v = v << 6 | (uint32_t)c;
            }
            i += 7;
        } else {
            if (i + 4 > len)
                goto bad;
            for (size_t k = 0; k < 4; k++) {
                int c = b64val(s[i + k]);
                if (c < 0)
                    goto bad;
                v = v << 6 | (uint32_t)c;
            }
            v = d->code_base + (v << 1);
            i += 4;
        }
        pcs[n] = v;
        tags[n++] = tag;
    }
    if (!d->have_base) {
        d->stats.no_base += n;
        return;
    }
    struct ev e = ev_blank(EV_PC);
    e.has_tag = tagged;
    e.offset = d->line_offset;
    for (size_t k = 0; k < n; k++) {
        e.addr = pcs[k];
        e.tag = tags[k];
        d->stats.unsent_tags += tagged && tags[k] == EV_TAG_UNSENT;
        ev_emit(sink, &e);
    }
    d->stats.samples += n;
    return;
bad:
    bad(d);
}


static uint32_t b64_3(const char *s, bool *ok)
{
    int a = b64val(s[0]), b = b64val(s[1]), c = b64val(s[2]);
    *ok = a >= 0 && b >= 0 && c >= 0;
    return (uint32_t)a << 12 | (uint32_t)b << 6 | (uint32_t)c;
}

/* '#' lines: pairs of (bucket index, new samples), 3 base64 chars each. */
static void stream_hist(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if ((len - 1) % 6 != 0 || len < 7 || !d->have_hist) {
        if (!d->have_hist && (len - 1) % 6 == 0)
            d->stats.no_base++;
        else
            bad(d);
        return;
    }
    for (size_t i = 1; i < len; i += 6) { /* validate first: a line is used whole or not at all */
        bool ok1, ok2;
        uint32_t idx = b64_3(s + i, &ok1);
        b64_3(s + i + 3, &ok2);
        if (!ok1 || !ok2 || idx > d->hist_sbins) {
            bad(d);
            return;
        }
    }
    for (size_t i = 1; i < len; i += 6) {
        bool ok;
        uint32_t idx = b64_3(s + i, &ok), delta = b64_3(s + i + 3, &ok);
        if (idx == d->hist_sbins) {
            d->stats.hist_out += delta;
            continue;
        }
        struct ev e = ev_blank(EV_BUCKET);
        e.addr = d->hist_sbase + (idx << d->hist_sshift);
        e.size = 1u << d->hist_sshift;
        e.count = delta;
        e.offset = d->line_offset;
        d->stats.buckets++;
        ev_emit(sink, &e);
    }
}

static bool field_u64(const char *s, const char *end, const char *key, uint64_t *out, int base)
{
    const char *p = s;
    size_t k = strlen(key);
    while (p + k <= end) { /* find " key" */
        if ((p == s || p[-1] == ' ') && memcmp(p, key, k) == 0) {
            const char *q = p + k;
            return parse_uint(&q, end, "", out, base);
        }
        p++;
    }
    return false;
}

static void stream_control(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    const char *end = s + len;
    uint64_t v, w;
    const char *p;
    if (starts(s, len, "@cmprof ")) {
        uint64_t ver = 0, clk = 0, tclk = 0, sclk = 0, period = 0, jitter = 0, base = 0;
        if (!field_u64(s, end, "v=", &ver, 10) || (ver != 1 && ver != 2) || !field_u64(s, end, "base=", &base, 16) ||
            base > UINT32_MAX) {
            bad(d);
            return;
        }
        field_u64(s, end, "clk=", &clk, 10);
        field_u64(s, end, "tclk=", &tclk, 10);
        field_u64(s, end, "sclk=", &sclk, 10);
        field_u64(s, end, "period=", &period, 10);
        field_u64(s, end, "jitter=", &jitter, 10);
        const char *bid = NULL;
        size_t bid_len = 0;
        for (p = s; p + 5 <= end; p++)
            if (memcmp(p, " bid=", 5) == 0) {
                bid = p + 5;
                bid_len = (size_t)(end - bid);
                for (size_t k = 0; k < bid_len; k++)
                    if (bid[k] == ' ') {
                        bid_len = k;
                        break;
                    }
            }
        d->have_base = true;
        d->code_base = (uint32_t)base;
        for (p = s; p + 6 <= end; p++) /* " arch=A timer=T", as the firmware writes it */
            if (memcmp(p, " arch=", 6) == 0) {
                const char *t = p + 1, *te = t;
                for (int spaces = 0; te < end && !(*te == ' ' && ++spaces == 2); te++) {
                }
                struct ev target = {.type = EV_TARGET, .text = t, .text_len = (size_t)(te - t), .offset = d->line_offset};
                ev_emit(sink, &target);
                break;
            }
        struct ev e = {.type = EV_STREAM_INFO,
                       .info = {.clock_hz = clk, .period = period, .timer_hz = tclk, .section_hz = sclk,
                                .jitter = (uint32_t)jitter, .code_base = (uint32_t)base},
                       .text = bid ? bid : "", .text_len = bid_len, .offset = d->line_offset};
        ev_emit(sink, &e);
    } else if (starts(s, len, "@hist ")) {
        uint64_t base = 0, shift = 0, bins = 0;
        if (!field_u64(s, end, "base=", &base, 16) || !field_u64(s, end, "shift=", &shift, 10) ||
            !field_u64(s, end, "bins=", &bins, 10) || base > UINT32_MAX || shift < 1 || shift > 16 ||
            bins == 0 || bins >= (1u << 18)) {
            bad(d);
            return;
        }
        d->have_hist = true;
        d->hist_sbase = (uint32_t)base;
        d->hist_sshift = (uint32_t)shift;
        d->hist_sbins = (uint32_t)bins;
        struct ev e = {.type = EV_HIST_HEADER, .addr = (uint32_t)base, .size = 1u << shift, .offset = d->line_offset};
        ev_emit(sink, &e);
    } else if (starts(s, len, "@task ")) {
        size_t i = 6;
        int t = task_index(s, len, &i);
        if (t < 0 || i + 10 > len || s[i] != ' ' || s[i + 9] != ' ') {
            bad(d);
            return;
        }
        p = s + i + 1;
        if (!parse_uint(&p, s + i + 9, "", &v, 16) || v > UINT32_MAX) {
            bad(d);
            return;
        }
        d->task_tags[t] = (uint32_t)v;
        d->slash_named |= s[6] == '/'; /* not "+AB", index 63 written in full */
        struct ev e = {.type = EV_TASK_NAME, .tag = (uint32_t)v, .text = s + i + 10, .text_len = len - i - 10,
                       .offset = d->line_offset};
        ev_emit(sink, &e);
    } else if (starts(s, len, "@secname ")) {
        p = s + 9;
        if (!parse_uint(&p, end, "", &v, 10) || p == end) {
            bad(d);
            return;
        }
        struct ev e = {.type = EV_SECTION_NAME, .index = (uint32_t)v, .text = p, .text_len = (size_t)(end - p),
                       .offset = d->line_offset};
        ev_emit(sink, &e);
    } else if (starts(s, len, "@sect ")) {
        line_sect(d, s + 1, end, sink); /* the same fields as a dump's "sect" line */
    } else if (starts(s, len, "@sectev ")) {
        line_sectev(d, s + 1, end, sink);
    } else if (starts(s, len, "@lost ")) {
        p = s + 6;
        if (!parse_uint(&p, end, "", &w, 10) || p != end) {
            bad(d);
            return;
        }
        struct ev e = {.type = EV_LOST, .count = w, .offset = d->line_offset};
        ev_emit(sink, &e);
    } else if (starts(s, len, "@full ")) {
        p = s + 6;
        if (!parse_uint(&p, end, "tasks=", &w, 10) || p != end) {
            bad(d);
            return;
        }
        struct ev e = {.type = EV_TABLE_FULL, .count = w, .offset = d->line_offset};
        ev_emit(sink, &e);
    } else {
        bad(d);
    }
}

static bool stream_line(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if (len < 2 || (s[0] != '$' && s[0] != '%' && s[0] != '@' && s[0] != '#'))
        return false;
    if ((s[0] == '@' || s[0] == '#') && !(len > 4 && has_check(s, len)))
        return false; /* an ordinary log line that happens to start with '@' or '#' */
    size_t body = checked_body(s, len);
    d->stats.stream_lines++;
    if (!body) {
        d->stats.bad_checks++;
        bad(d);
        return true;
    }
    if (s[0] == '@')
        stream_control(d, s, body, sink);
    else if (s[0] == '#')
        stream_hist(d, s, body, sink);
    else
        stream_samples(d, s, body, s[0] == '%', sink);
    return true;
}

/* On a shared UART the drain may send a stream line while the application is half-way through a
 * log line: "temp=2$AAB...~Xy". A log line whose tail, from a stream marker on, passes the
 * stream check is cut there: the head is the log, the tail the stream line. Returns whether it
 * cut. (A line that ends in "~" or "!" and two check characters is rare text; the check does the
 * rest.) */
static bool unglue(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if (len < 6 || !has_check(s, len))
        return false;
    for (size_t k = 1; k + 4 < len; k++) {
        char c = s[k];
        if ((c != '$' && c != '%' && c != '@' && c != '#') || !checked_body(s + k, len - k))
            continue;
        struct ev e = {.type = EV_LOG, .text = s, .text_len = k, .offset = d->line_offset};
        d->stats.log_lines++;
        d->stats.glued++;
        ev_emit(sink, &e);
        d->line_offset += k;
        stream_line(d, s + k, len - k, sink);
        return true;
    }
    return false;
}

/* A "p" line's PCs, parsed. */
static void raw_pcs(struct text_decoder *d, const uint32_t *words, size_t n, const struct ev_sink *sink)
{
    if (d->block == BLOCK_HIST)
        close_block(d, sink);
    if (d->block == BLOCK_NONE) { /* capture began mid-block: keep the samples */
        d->block = BLOCK_RAW;
        d->block_offset = d->line_offset;
    }
    if (d->n_tags) { /* p after g: a new headless block */
        close_block(d, sink);
        d->block = BLOCK_RAW;
        d->block_offset = d->line_offset;
    }
    if (!push(&d->pcs, &d->n_pcs, &d->cap_pcs, words, n))
        d->failed_alloc = true;
}

/* A "g" line's tags, parsed. */
static void raw_tags(struct text_decoder *d, const uint32_t *words, size_t n)
{
    if (d->block != BLOCK_RAW)
        d->stats.orphan_lines++;
    else if (!push(&d->tags, &d->n_tags, &d->cap_tags, words, n))
        d->failed_alloc = true;
}

static void line(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    uint32_t words[16];
    const char *end = s + len;
    while (len && s[len - 1] == ' ')
        end = s + --len;
    if (len == 0)
        return;
    d->stats.lines++;
    if (stream_line(d, s, len, sink)) {
        /* handled */
    } else if (len == 1 && (s[0] == 'p' || s[0] == 'g' || s[0] == 'h')) {
        bad(d); /* a dump line that lost its values */
    } else if (starts(s, len, "p ")) {
        size_t n = parse_hex_words(s + 1, len - 1, 8, words, 16);
        if (!n) {
            bad(d);
            return;
        }
        raw_pcs(d, words, n, sink);
    } else if (starts(s, len, "g ")) {
        size_t n = parse_hex_words(s + 1, len - 1, 8, words, 16);
        if (!n)
            bad(d);
        else
            raw_tags(d, words, n);
    } else if (starts(s, len, "h ")) {
        size_t n = parse_hex_words(s + 1, len - 1, 4, words, 16);
        if (!n) {
            bad(d);
        } else if (d->block != BLOCK_HIST) {
            d->stats.orphan_lines++;
        } else {
            for (size_t i = 0; i < n; i++, d->hist_index++) {
                if (!words[i])
                    continue;
                struct ev e = ev_blank(EV_BUCKET);
                e.addr = d->hist_base + (d->hist_index << d->hist_shift);
                e.size = 1u << d->hist_shift;
                e.count = words[i];
                e.offset = d->line_offset;
                d->delivered += words[i];
                d->stats.buckets++;
                ev_emit(sink, &e);
            }
        }
    } else if (len == 3 && memcmp(s, "end", 3) == 0) {
        close_block(d, sink);
    } else if (starts(s, len, "prof raw n=")) {
        uint64_t n, taken = 0;
        const char *p = s + strlen("prof raw ");
        /* taken=: samples the firmware took, when its ring kept fewer (the oldest are gone) */
        if (!parse_uint(&p, end, "n=", &n, 10) || (p != end && !parse_uint(&p, end, "taken=", &taken, 10)) ||
            p != end) {
            bad(d);
            return;
        }
        if (taken > n)
            d->stats.not_kept += taken - n;
        close_block(d, sink);
        d->block = BLOCK_RAW;
        d->block_offset = d->line_offset;
        d->announced = n;
    } else if (starts(s, len, "prof hist ")) {
        line_hist_header(d, s, end, sink);
    } else if (starts(s, len, "sect ")) {
        line_sect(d, s, end, sink);
    } else if (starts(s, len, "sectev ")) {
        line_sectev(d, s, end, sink);
    } else if (starts(s, len, "task ")) {
        line_task(d, s, end, sink);
    } else if (starts(s, len, "stack ")) { /* "stack PC CALLER...": after its sample's block */
        uint32_t frames[TEXT_STACK_MAX + 1];
        size_t n = parse_hex_words(s + 5, len - 5, 8, frames, TEXT_STACK_MAX + 1);
        if (!n) {
            bad(d);
            return;
        }
        close_block(d, sink); /* its sample first */
        struct ev e = {.type = EV_STACK, .addr = frames[0], .pcs = frames + 1, .count = n - 1,
                       .offset = d->line_offset};
        ev_emit(sink, &e);
    } else if (!unglue(d, s, len, sink)) {
        struct ev e = {.type = EV_LOG, .text = s, .text_len = len, .offset = d->line_offset};
        d->stats.log_lines++;
        ev_emit(sink, &e);
    }
}

/* Bytes that end or interrupt a line: '\n', '\r' and NUL. Eight bytes a step: a word of ordinary
 * text costs a few operations, not a branch per byte. */
static const uint8_t *find_special(const uint8_t *p, const uint8_t *end)
{
    while (end - p >= 8) {
        uint64_t w, a, b;
        memcpy(&w, p, 8);
        a = w ^ (ONES * '\n');
        b = w ^ (ONES * '\r');
        if ((((a - ONES) & ~a) | ((b - ONES) & ~b) | ((w - ONES) & ~w)) & HIGHS)
            break; /* one of them is in this word: find it below */
        p += 8;
    }
    while (p < end && *p != '\n' && *p != '\r' && *p != '\0')
        p++;
    return p;
}

/* Ordinary bytes of the line being collected (across feeds, or around a NUL). */
static void collect(struct text_decoder *d, const uint8_t *p, size_t n)
{
    if (!n)
        return;
    if (d->line_len == 0)
        d->line_offset = d->stats.bytes;
    size_t room = TEXT_LINE_MAX - d->line_len, k = n < room ? n : room;
    memcpy(d->line + d->line_len, p, k);
    d->line_len += k;
    if (k < n)
        d->line_too_long = true;
}

static void end_line(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if (d->line_too_long) {
        d->stats.long_lines++;
    } else if (d->joined_mid_line && !d->first_line_done) {
        /* attached to a live source mid-line: the first line is the tail of one we never saw */
        uint64_t bad = d->stats.bad_lines, first_bad = d->stats.first_bad, checks = d->stats.bad_checks;
        line(d, s, len, sink);
        if (d->stats.bad_lines > bad) {
            d->stats.bad_lines = bad;
            d->stats.first_bad = first_bad;
            d->stats.bad_checks = checks;
            d->stats.partial_first++;
        }
    } else {
        line(d, s, len, sink);
    }
    d->first_line_done = true;
    d->line_len = 0;
    d->line_too_long = false;
}

typedef uint8_t bytes16 __attribute__((vector_size(16)));

/* Whether the 72 bytes at s are eight words " XXXXXXXX", the firmware's own line (a blank every
 * nine bytes, hex digits between): checked sixteen bytes at a time, in five overlapping loads. */
static bool eight_words(const uint8_t *s)
{
#define B 0xFF /* a blank's place */
    static const bytes16 blanks[5] = {
        {B, 0, 0, 0, 0, 0, 0, 0, 0, B, 0, 0, 0, 0, 0, 0}, {0, 0, B, 0, 0, 0, 0, 0, 0, 0, 0, B, 0, 0, 0, 0},
        {0, 0, 0, 0, B, 0, 0, 0, 0, 0, 0, 0, 0, B, 0, 0}, {0, 0, 0, 0, 0, 0, B, 0, 0, 0, 0, 0, 0, 0, 0, B},
        {0, 0, 0, 0, 0, 0, 0, B, 0, 0, 0, 0, 0, 0, 0, 0}};
#undef B
    static const size_t at[5] = {0, 16, 32, 48, 56};
    bytes16 all = ~(bytes16){0};
    for (int k = 0; k < 5; k++) {
        bytes16 v;
        memcpy(&v, s + at[k], 16);
        bytes16 lower = v | 0x20;
        bytes16 hex = (bytes16)((bytes16)(v - '0') < 10) | (bytes16)((bytes16)(lower - 'a') < 6);
        bytes16 space = (bytes16)(v == ' ');
        all &= (hex & ~blanks[k]) | (space & blanks[k]);
    }
    uint64_t h[2];
    memcpy(h, &all, 16);
    return (h[0] & h[1]) == ~0ull;
}

/* The bulk of a dump: a run of "p " and "g " lines of 1..16 words " XXXXXXXX", each ended by '\n',
 * '\r' or "\r\n", read at p in one pass that finds each line's end while parsing it (the general
 * path scans for the end, then parses). Handles them exactly as line() would and returns the bytes
 * used; stops before a line of any other shape, which then takes the general path. */
static size_t dump_lines(struct text_decoder *d, const uint8_t *p, const uint8_t *end, const struct ev_sink *sink)
{
    const uint8_t *const start = p;
    while (end - p >= 11 && (p[0] == 'p' || p[0] == 'g') && p[1] == ' ') {
        bool is_pc = p[0] == 'p';
        uint32_t words[16], *out = words;
        /* a line that only appends to the open block is parsed straight into it */
        if (d->block == BLOCK_RAW && is_pc && !d->n_tags && d->n_pcs + 16 <= d->cap_pcs)
            out = d->pcs + d->n_pcs;
        else if (d->block == BLOCK_RAW && !is_pc && d->n_tags + 16 <= d->cap_tags)
            out = d->tags + d->n_tags;
        size_t room = (size_t)(end - p);
        const uint8_t *w = p + 1; /* at the blank before a word */
        size_t n = 0;
        if (room >= 2 + 9 * 8 && (p[73] == '\n' || p[73] == '\r') && eight_words(w)) {
            for (; n < 8; n++)
                out[n] = hex_value8(hex_chars8(w + 9 * n + 1));
            w += 9 * 8;
        } else {
            /* the blank before the last word this line may have: its 16th, or the buffer's end */
            const uint8_t *const stop = room >= 2 + 9 * 16 ? p + 1 + 9 * 15 : end - 10;
            do {
                if (w > stop || !hex8((const char *)w + 1, &out[n]))
                    return (size_t)(p - start);
                n++;
                w += 9;
            } while (*w == ' ');
            if (*w != '\n' && *w != '\r')
                return (size_t)(p - start);
        }
        d->line_offset = d->stats.bytes;
        d->stats.lines++;
        if (out != words)
            *(is_pc ? &d->n_pcs : &d->n_tags) += n;
        else if (is_pc)
            raw_pcs(d, words, n, sink);
        else
            raw_tags(d, words, n);
        d->first_line_done = true;
        if (*w == '\r' && w + 1 < end && w[1] == '\n')
            w++; /* the empty line between CR and LF: nothing to do */
        d->stats.bytes += (size_t)(w + 1 - p);
        p = w + 1;
    }
    return (size_t)(p - start);
}

void text_feed(struct text_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink)
{
    const uint8_t *p = buf, *end = buf + len;
    /* a line may be taken whole from the buffer when none is half collected; the first line of
     * a source joined mid-line is not (end_line forgives its errors) */
    while (p < end) {
        if (d->line_len == 0 && !d->line_too_long && (d->first_line_done || !d->joined_mid_line)) {
            size_t used = dump_lines(d, p, end, sink);
            if (used) {
                p += used;
                continue;
            }
        }
        const uint8_t *q = find_special(p, end);
        size_t n = (size_t)(q - p);
        if (q < end && *q != '\0' && d->line_len == 0 && !d->line_too_long) {
            /* a whole line inside this buffer: read in place, not copied */
            if (n) {
                d->line_offset = d->stats.bytes;
                d->line_too_long = n > TEXT_LINE_MAX;
                end_line(d, (const char *)p, n, sink);
            } else {
                d->first_line_done = true; /* an empty line: the next one starts at its beginning */
            }
            d->stats.bytes += n + 1;
            p = q + 1;
            continue;
        }
        collect(d, p, n);
        d->stats.bytes += n;
        if (q == end)
            break;
        d->stats.bytes++;
        if (*q == '\0') /* noise on a UART at reset: dropped and counted, the line survives */
            d->stats.nul_bytes++;
        else
            end_line(d, d->line, d->line_len, sink);
        p = q + 1;
    }
}

void text_finish(struct text_decoder *d, const struct ev_sink *sink)
{
    if (d->line_len && !d->line_too_long)
        line(d, d->line, d->line_len, sink);
    else if (d->line_too_long)
        d->stats.long_lines++;
    d->line_len = 0;
    d->line_too_long = false;
    close_block(d, sink);
}

size_t text_counters(const struct text_stats *st, struct dec_counter *out)
{
    const struct dec_counter c[] = {
        {"text_bad_lines", st->bad_lines},     {"text_long_lines", st->long_lines},
        {"text_tag_mismatch", st->tag_mismatch}, {"text_orphan_lines", st->orphan_lines},
        {"text_bad_checks", st->bad_checks},   {"text_glued", st->glued},
        {"hist_out", st->hist_out},            {"log_lines", st->log_lines},
    };
    memcpy(out, c, sizeof c);
    return sizeof c / sizeof c[0];
}

void text_describe(const struct text_stats *st, char *buf, size_t len)
{
    snprintf(buf, len, "%llu lines, %llu malformed", (unsigned long long)st->lines,
             (unsigned long long)st->bad_lines);
}
