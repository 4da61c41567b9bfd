/* libFuzzer target: the live stream's lines with their checks made good. A mutated stream line
 * almost always fails its check and is dropped whole, so fuzz_text and fuzz_ingest rarely reach
 * what comes after it (the "@N" name repeats, "@task", sample tags); here every line of the input
 * that starts like a stream line ('@', '$', '%', '#') gets "!" and its sum12 (docs/stream.md)
 * appended before decoding; one that ends in '^' gets a wrong check instead (a dropped line, which
 * makes the names it may have carried unsure: pending indexes), and one that ends in '`' gets
 * version 1's "~" and CRC-12 (a line of another version than a version 3 announce). The lines then go through the text decoder, whole and split at a point
 * the input chooses (both must give the same events), and through ingest into a profile and every
 * batch report. */
#include "../profile/ingest.h"
#include "every_report.h"
#include "text_digest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The v2 check of a line's body: sums of its 32-bit little-endian words, zero padded. */
static unsigned check_of(const uint8_t *s, size_t n)
{
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t word = 0;
        for (size_t k = i; k < n && k < i + 4; k++)
            word |= (uint32_t)s[k] << (8 * (k - i));
        a += word;
        b += a;
    }
    return (unsigned)((a + 3 * b) % 4095);
}

/* Version 1's check: CRC-12, polynomial 0x80F, MSB first. */
static unsigned crc12_of(const uint8_t *s, size_t n)
{
    unsigned crc = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = 7; bit >= 0; bit--) {
            unsigned top = (crc >> 11) ^ ((s[i] >> bit) & 1u);
            crc = ((crc << 1) & 0xFFFu) ^ (top ? 0x80Fu : 0u);
        }
    return crc;
}

/* The input with each stream-like line's check appended; *out_len its length. */
static uint8_t *with_checks(const uint8_t *data, size_t size, size_t *out_len)
{
    uint8_t *out = malloc(size + (size + 1) * 3 + 1);
    if (!out)
        abort();
    size_t n = 0;
    for (size_t start = 0; start < size;) {
        const uint8_t *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) : size;
        memcpy(out + n, data + start, end - start);
        uint8_t first = data[start];
        if (end > start && (first == '@' || first == '$' || first == '%' || first == '#')) {
            uint8_t last = data[end - 1];
            size_t body = end - start - (last == '^' || last == '`');
            unsigned c = last == '`' ? crc12_of(data + start, body) : check_of(data + start, body);
            if (last == '^')
                c = (c + 1) % 4095; /* a line whose check fails: dropped */
            out[n + body] = last == '`' ? '~' : '!';
            out[n + body + 1] = (uint8_t)b64[c >> 6];
            out[n + body + 2] = (uint8_t)b64[c & 63];
            n += body + 3;
        } else {
            n += end - start;
        }
        if (nl)
            out[n++] = '\n';
        start = end + 1;
    }
    *out_len = n;
    return out;
}

static void profile_and_report(const uint8_t *data, size_t size, uint8_t mode)
{
    struct prof *p = prof_new(NULL);
    struct ingest *in = p ? ingest_new(p, &(struct ingest_options){.format = DETECT_TEXT, .tpiu_id = 1}) : NULL;
    if (!in)
        abort();
    ingest_feed(in, data, size);
    ingest_finish(in);
    every_report(p, in, mode);
    ingest_free(in);
    prof_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t n;
    uint8_t *text = with_checks(data + 1, size - 1, &n);
    size_t cut = n ? (size_t)data[0] * 257u % n : 0;
    struct digest whole = text_digest(text, n, n), split = text_digest(text, n, cut);
    if (whole.h != split.h || whole.n != split.n)
        abort(); /* chunk invariance broken */
    profile_and_report(text, n, data[0]);
    free(text);
    return 0;
}
