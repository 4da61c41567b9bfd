/* libFuzzer target: the live stream's lines with their checks made good. A mutated stream line
 * almost always fails its check and is dropped whole, so fuzz_text and fuzz_ingest rarely reach
 * what comes after it (the "@N" name repeats, "@task", sample tags); here every line of the input
 * that starts like a stream line ('@', '$', '%', '#') gets "!" and its sum12 (docs/stream.md)
 * appended before decoding. The lines then go through the text decoder, whole and split at a point
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
            unsigned c = check_of(data + start, end - start);
            out[n + end - start] = '!';
            out[n + end - start + 1] = (uint8_t)b64[c >> 6];
            out[n + end - start + 2] = (uint8_t)b64[c & 63];
            n += 3;
        }
        n += end - start;
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
    struct ingest *in = malloc(sizeof *in);
    if (!p || !in)
        abort();
    ingest_init(in, p, DETECT_TEXT, 1, false);
    ingest_feed(in, data, size);
    ingest_finish(in);
    every_report(p, in, mode);
    ingest_free(in);
    free(in);
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
