/* Text decoder: the lines, and the dump's. Lines are collected in a fixed buffer; stream lines go
 * to stream.c, the rest are dump lines or log lines. A raw block's samples are held until the
 * block closes, because its tags (g lines) follow all of its PCs (p lines). */
#include "text.h"

#include "hex.h"
#include "stream.h"
#include "textline.h"
#include "../base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

enum { BLOCK_NONE, BLOCK_RAW, BLOCK_HIST };

/* The characters that lead a dump's data lines, a blank and hex words after them */
#define DUMP_PCS 'p'  /* a raw block's PCs */
#define DUMP_TAGS 'g' /* ... and their tags, after all of its PCs */
#define DUMP_HIST 'h' /* a histogram block's counts */

void text_init(struct text_decoder *d)
{
    /* all but the names' text (64 KB), read only once its id's name came (name_id_epoch): left
     * unwritten, a decoder that never sees one keeps those pages untouched */
    memset(d, 0, offsetof(struct text_decoder, name_ids));
    memset(d->name_id_len, 0, sizeof *d - offsetof(struct text_decoder, name_id_len)); /* dump_tasks too */
    for (uint32_t i = 0; i < TEXT_TASKS; i++) /* no @task line yet: the index is its tag for now */
        d->task_tags[i] = EV_TAG_PENDING(i);
}

void text_free(struct text_decoder *d)
{
    free(d->pcs);
    free(d->tags);
    dumptasks_free(&d->dump_tasks);
    d->pcs = d->tags = NULL;
    d->n_pcs = d->n_tags = d->cap_pcs = d->cap_tags = 0;
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
            int h = hex_digit_value(s[i++]);
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

static bool push(uint32_t **arr, size_t *n, size_t *cap, const uint32_t *v, size_t k)
{
    if (!grow_array((void **)arr, cap, *n + k, sizeof **arr, 1024))
        return false;
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
        e.pcs.addrs = d->pcs;
        e.pcs.n = d->n_pcs;
        e.offset = d->block_offset;
        ev_emit(sink, &e);
    }
    if (tagged)
        dumptasks_samples(&d->dump_tasks, d->tags, d->n_pcs); /* a full table's tags are named after them */
    struct ev e = ev_blank(EV_PC); /* built once: only PCs change */
    e.offset = d->block_offset;
    e.pc.has_tag = true;
    for (size_t i = 0; tagged && i < d->n_pcs; i++) {
        e.pc.addr = d->pcs[i];
        e.pc.tag = d->tags[i];
        ev_emit(sink, &e);
    }
    d->stats.samples += d->n_pcs;
    d->n_pcs = d->n_tags = 0;
}

static void close_block(struct text_decoder *d, const struct ev_sink *sink)
{
    if (d->block == BLOCK_RAW)
        d->delivered = d->n_pcs;
    if (d->block != BLOCK_NONE && d->announced > d->delivered) {
        d->stats.missing += d->announced - d->delivered;
        if (d->block == BLOCK_HIST)
            d->stats.missing_hist += d->announced - d->delivered;
    }
    d->announced = d->delivered = 0;
    if (d->block == BLOCK_RAW)
        close_raw(d, sink);
    if (d->block != BLOCK_NONE)
        d->stats.blocks++;
    d->block = BLOCK_NONE;
}

static void line_hist_header(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t base, shift, n, out;
    const char *p = s + strlen("prof hist ");
    if (!textline_uint(&p, end, "base=0x", &base, 16) || !textline_uint(&p, end, "shift=", &shift, 10) ||
        !textline_uint(&p, end, "n=", &n, 10) || !textline_uint(&p, end, "out=", &out, 10) || p != end ||
        base > UINT32_MAX || shift > 16u) {
        textline_bad(d);
        return;
    }
    close_block(d, sink);
    d->block = BLOCK_HIST;
    d->hist_base = (uint32_t)base;
    d->hist_shift = (uint32_t)shift;
    d->hist_index = 0;
    d->announced = n;
    d->delivered = out;
    struct ev e = {.type = EV_HIST_HEADER, .offset = d->line_offset,
                   .hist = {.base = (uint32_t)base, .bucket_bytes = 1u << shift, .samples = n, .out = out}};
    ev_emit(sink, &e);
}

static void line_task(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t tag;
    const char *p = s + strlen("task ");
    if (!textline_uint(&p, end, "", &tag, 16) || tag > UINT32_MAX || p == end) {
        textline_bad(d);
        return;
    }
    (void)sink;
    dumptasks_name(&d->dump_tasks, (uint32_t)tag, p, (size_t)(end - p)); /* emitted when the run of them ends */
}

/* "tasks ...": the dump's table said it was full, or that a block had several names (dumptasks.h);
 * false when the line is not one of them. */
static bool line_tasks(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    bool ours;
    if (!dumptasks_line(&d->dump_tasks, s + strlen("tasks "), end, d->line_offset, &ours, sink))
        textline_bad(d);
    return ours;
}

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
    if (dumptasks_held(&d->dump_tasks) && !textline_starts(s, len, "task ") && !textline_starts(s, len, "tasks "))
        dumptasks_emit(&d->dump_tasks, d->line_offset, sink); /* the names before the samples "end" closes */
    if (stream_line(d, s, len, sink)) {
        /* handled */
    } else if (len == 1 && (s[0] == DUMP_PCS || s[0] == DUMP_TAGS || s[0] == DUMP_HIST)) {
        textline_bad(d); /* a dump line that lost its values */
    } else if (textline_starts(s, len, "p ")) {
        size_t n = parse_hex_words(s + 1, len - 1, 8, words, 16);
        if (!n) {
            textline_bad(d);
            return;
        }
        raw_pcs(d, words, n, sink);
    } else if (textline_starts(s, len, "g ")) {
        size_t n = parse_hex_words(s + 1, len - 1, 8, words, 16);
        if (!n)
            textline_bad(d);
        else
            raw_tags(d, words, n);
    } else if (textline_starts(s, len, "h ")) {
        size_t n = parse_hex_words(s + 1, len - 1, 4, words, 16);
        if (!n) {
            textline_bad(d);
        } else if (d->block != BLOCK_HIST) {
            d->stats.orphan_lines++;
        } else {
            for (size_t i = 0; i < n; i++, d->hist_index++) {
                if (!words[i])
                    continue;
                struct ev e = ev_blank(EV_BUCKET);
                e.bucket.addr = d->hist_base + (d->hist_index << d->hist_shift);
                e.bucket.bytes = 1u << d->hist_shift;
                e.bucket.samples = words[i];
                e.offset = d->line_offset;
                d->delivered += words[i];
                d->stats.buckets++;
                ev_emit(sink, &e);
            }
        }
    } else if (len == 3 && memcmp(s, "end", 3) == 0) {
        close_block(d, sink);
        dumptasks_end(&d->dump_tasks, d->line_offset, sink);
    } else if (textline_starts(s, len, "prof raw n=")) {
        uint64_t n, taken = 0;
        const char *p = s + strlen("prof raw ");
        /* taken=: samples the firmware took, when its ring kept fewer (the oldest are gone) */
        if (!textline_uint(&p, end, "n=", &n, 10) || (p != end && !textline_uint(&p, end, "taken=", &taken, 10)) ||
            p != end) {
            textline_bad(d);
            return;
        }
        if (taken > n)
            d->stats.not_kept += taken - n;
        close_block(d, sink);
        d->block = BLOCK_RAW;
        d->block_offset = d->line_offset;
        d->announced = n;
    } else if (textline_starts(s, len, "prof hist ")) {
        line_hist_header(d, s, end, sink);
    } else if (textline_starts(s, len, "target ")) {
        /* what the firmware runs on, in the announce's words ("midr=410fc090") */
        struct ev e = {.type = EV_TARGET, .offset = d->line_offset, .target = {s + 7, len - 7}};
        ev_emit(sink, &e);
    } else if (textline_starts(s, len, "sect ")) {
        textline_section(d, s, end, sink);
    } else if (textline_starts(s, len, "sectev ")) {
        textline_section_event(d, s, end, sink);
    } else if (textline_starts(s, len, "task ")) {
        line_task(d, s, end, sink);
    } else if (textline_starts(s, len, "tasks ") && line_tasks(d, s, end, sink)) {
        /* handled */
    } else if (textline_starts(s, len, "sw ")) { /* a sample's stack evidence: after its block */
        uint32_t w[TEXTLINE_STACK_WORDS];
        size_t n = parse_hex_words(s + 2, len - 2, 8, w, TEXTLINE_STACK_WORDS);
        close_block(d, sink); /* its samples first: it counts back from the last */
        if (!n)
            textline_bad(d);
        else
            textline_stack_words(d, w, n, sink);
    } else if (textline_starts(s, len, "stack ")) { /* "stack PC CALLER...": after its sample's block */
        uint32_t frames[TEXT_STACK_MAX + 1];
        size_t n = parse_hex_words(s + 5, len - 5, 8, frames, TEXT_STACK_MAX + 1);
        if (!n) {
            textline_bad(d);
            return;
        }
        close_block(d, sink); /* its sample first */
        struct ev e = {.type = EV_STACK, .offset = d->line_offset,
                       .stack = {.pc = frames[0], .callers = frames + 1, .n = n - 1}};
        ev_emit(sink, &e);
    } else if (!stream_unglue(d, s, len, sink) && !stream_lost_names(d, s, len, sink)) {
        struct ev e = {.type = EV_LOG, .offset = d->line_offset, .log = {s, len}};
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

/* A line that may be cut at either end of a read (its start before we attached, its end after we
 * stopped): decoded; if it does not decode, it is not counted malformed and true is returned. */
static bool line_or_cut(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    uint64_t bad = d->stats.bad_lines, first_bad = d->stats.first_bad, checks = d->stats.bad_checks;
    line(d, s, len, sink);
    if (d->stats.bad_lines == bad)
        return false;
    d->stats.bad_lines = bad;
    d->stats.first_bad = first_bad;
    d->stats.bad_checks = checks;
    return true;
}

static void end_line(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    if (d->line_too_long) {
        d->stats.long_lines++;
    } else if (d->joined_mid_line && !d->first_line_done) {
        /* attached to a live source mid-line: the first line is the tail of one we never saw */
        uint64_t glued = d->stats.glued;
        bool cut = line_or_cut(d, s, len, sink);
        if (d->stats.glued > glued) { /* a stream line after the tail we joined in: the cut, not a glue */
            d->stats.glued = glued;
            d->stats.partial_first++;
        }
        d->stats.partial_first += cut;
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
    while (end - p >= 11 && (p[0] == DUMP_PCS || p[0] == DUMP_TAGS) && p[1] == ' ') {
        bool is_pc = p[0] == DUMP_PCS;
        uint32_t words[16], *out = words;
        if (dumptasks_held(&d->dump_tasks)) /* as end_line does: the names before this line's samples */
            dumptasks_emit(&d->dump_tasks, d->stats.bytes, sink);
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

/* An editor's byte order mark before the first line (UTF-8's, or UTF-16's whose zero bytes go as
 * NULs): not the line's. Matched a byte at a time, so a feed split inside it reads the same; bytes
 * that only began one go back to the line. Returns the bytes of buf taken. */
static size_t skip_mark(struct text_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink)
{
    size_t took = 0;
    while (!d->mark_over && took < len) {
        d->mark_held[d->mark_len] = buf[took];
        int whole;
        const struct bom *mark = bom_match(d->mark_held, d->mark_len + 1u, &whole);
        if (mark && whole) {
            d->mark_over = true;
            d->stats.bytes += mark->len;
        }
        if (!mark) { /* no mark: what was held is the line's, then this byte */
            d->mark_over = true;
            text_feed(d, d->mark_held, d->mark_len, sink);
            return took;
        }
        d->mark_len++;
        took++;
    }
    return took;
}

void text_feed(struct text_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink)
{
    const uint8_t *p = buf, *end = buf + len;
    p += skip_mark(d, buf, len, sink);
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

void text_rejoin(struct text_decoder *d)
{
    d->line_len = 0;
    d->line_too_long = false;
    d->joined_mid_line = true;
    d->first_line_done = false;
}

void text_finish(struct text_decoder *d, const struct ev_sink *sink)
{
    if (!d->mark_over) { /* the input ended inside what began a mark: its bytes are the line's */
        d->mark_over = true;
        text_feed(d, d->mark_held, d->mark_len, sink);
    }
    /* The last line has no end when reading stops (a --duration, q, the port gone, a capture or a
     * recording cut there): decoded if whole, else the cut (a file and its replay read alike). */
    if (d->line_len && !d->line_too_long && line_or_cut(d, d->line, d->line_len, sink)) {
        d->stats.partial_last++;
        d->stats.partial_last_bytes += d->line_len;
    }
    else if (d->line_too_long)
        d->stats.long_lines++;
    d->line_len = 0;
    d->line_too_long = false;
    d->stats.unended += d->block != BLOCK_NONE; /* a dump cut short: its tags, names or stacks may be gone */
    if (dumptasks_held(&d->dump_tasks))
        dumptasks_emit(&d->dump_tasks, d->stats.bytes, sink);
    close_block(d, sink);
    dumptasks_end(&d->dump_tasks, d->stats.bytes, sink);
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
    int n = snprintf(buf, len, "%llu lines, %llu malformed", (unsigned long long)st->lines,
                     (unsigned long long)st->bad_lines);
    if (st->other_version_lines && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", %llu of stream version %u under a version %u announce",
                      (unsigned long long)st->other_version_lines, (unsigned)st->other_version,
                      (unsigned)st->announced_version);
    if (st->refused_announces && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", %llu announce%s refused (%s=%llu)",
                 (unsigned long long)st->refused_announces, st->refused_announces == 1 ? "" : "s",
                 st->refused_field ? st->refused_field : "?", (unsigned long long)st->refused_value);
}

