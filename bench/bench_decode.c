/* Decoder throughput on large in-memory streams with a realistic packet mix. Baseline in the
 * same run: a loop that adds up every byte, one at a time. It is no ceiling: GCC -O2 does not
 * vectorise it, and the ITM decoder, which takes a 5-byte PC packet in one step, outruns it. */
#define _POSIX_C_SOURCE 200809L
#include "../decode/itm.h"
#include "../decode/text.h"
#include "spread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t pcs_seen;

static void count(void *ctx, const struct ev *e)
{
    (void)ctx;
    pcs_seen += e->type == EV_PC ? 1 : e->type == EV_PCS ? e->pcs.n : 0;
}

static uint32_t rng = 2463534242u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* ITM: PC samples with software writes, timestamps, sleep and exception packets, syncs. */
static size_t make_itm(uint8_t *s, size_t cap)
{
    size_t n = 0;
    static const uint8_t sync[] = {0, 0, 0, 0, 0, 0x80};
    memcpy(s, sync, 6);
    n = 6;
    for (uint32_t k = 0; n + 32 < cap; k++) {
        uint32_t pc = 0x08000100u + 2u * (next() % 4096u);
        s[n++] = 0x17;
        memcpy(s + n, &pc, 4);
        n += 4;
        if (k % 7 == 3) {
            s[n++] = 0x01;
            s[n++] = (uint8_t)('A' + k % 26);
        }
        if (k % 50 == 10) {
            s[n++] = 0x0B;
            memcpy(s + n, &k, 4);
            n += 4;
        }
        if (k % 64 == 20) {
            s[n++] = 0x15;
            s[n++] = 0x00;
        }
        if (k % 100 == 30) {
            s[n++] = 0xC0;
            s[n++] = 0x85;
            s[n++] = 0x12;
        }
        if (k % 100 == 60) {
            s[n++] = 0x0E;
            s[n++] = 0x0F;
            s[n++] = 0x10;
        }
        if (k % 1000 == 999) {
            memcpy(s + n, sync, 6);
            n += 6;
        }
    }
    return n;
}

/* Text: dump blocks of 10000 samples with tags, a log line between blocks. */
static size_t make_text(uint8_t *s, size_t cap)
{
    size_t n = 0;
    while (n + 200000 < cap) {
        n += (size_t)sprintf((char *)s + n, "app: tick %u\nprof raw n=8192\n", next() % 1000u);
        for (int i = 0; i < 8192; i++)
            n += (size_t)sprintf((char *)s + n, "%s%08x%s", i % 8 ? " " : "p ", 0x08000100u + 2u * (next() % 4096u),
                                 i % 8 == 7 ? "\r\n" : "");
        for (int i = 0; i < 8192; i++)
            n += (size_t)sprintf((char *)s + n, "%s%08x%s", i % 8 ? " " : "g ", 0x20000100u + 0x100u * (i & 1),
                                 i % 8 == 7 ? "\n" : "");
        n += (size_t)sprintf((char *)s + n, "end\n");
    }
    return n;
}

/* Rounds of the three loops in turn (read-only, ITM, text): each round's ratios compare runs a
 * fraction of a second apart, and the figures are medians over the rounds with their spread. */
enum { ROUNDS = 21 };

static volatile uint64_t sink_sum;

static double run_read(const uint8_t *s, size_t n)
{
    double t0 = now();
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    sink_sum = sum;
    return now() - t0;
}

static double run_itm(const uint8_t *s, size_t n)
{
    struct itm_decoder d;
    struct ev_sink sink = {count, NULL};
    itm_init(&d, false);
    d.batch_pcs = true; /* as the tool's ingest runs it */
    pcs_seen = 0;
    double t0 = now();
    for (size_t off = 0; off < n; off += 65536)
        itm_feed(&d, s + off, n - off < 65536 ? n - off : 65536, &sink);
    double t = now() - t0;
    if (d.stats.errors)
        fprintf(stderr, "bench: itm errors %llu\n", (unsigned long long)d.stats.errors);
    return t;
}

static double run_text(const uint8_t *s, size_t n)
{
    struct text_decoder d;
    struct ev_sink sink = {count, NULL};
    text_init(&d);
    pcs_seen = 0;
    double t0 = now();
    for (size_t off = 0; off < n; off += 65536)
        text_feed(&d, s + off, n - off < 65536 ? n - off : 65536, &sink);
    text_finish(&d, &sink);
    double t = now() - t0;
    if (d.stats.bad_lines)
        fprintf(stderr, "bench: text bad lines %llu\n", (unsigned long long)d.stats.bad_lines);
    text_free(&d);
    return t;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 64;
    size_t cap = mb << 20;
    uint8_t *itm = malloc(cap), *text = malloc(cap);
    if (!itm || !text)
        return 1;
    size_t n_itm = make_itm(itm, cap), n_text = make_text(text, cap);
    double mbs = 1048576.0, read[ROUNDS], itm_mbs[ROUNDS], text_mbs[ROUNDS], itm_share[ROUNDS], text_share[ROUNDS];
    uint64_t itm_pcs = 0, text_pcs = 0;
    for (int r = 0; r < ROUNDS; r++) {
        read[r] = n_itm / run_read(itm, n_itm) / mbs;
        itm_mbs[r] = n_itm / run_itm(itm, n_itm) / mbs;
        itm_pcs = pcs_seen;
        text_mbs[r] = n_text / run_text(text, n_text) / mbs;
        text_pcs = pcs_seen;
        itm_share[r] = 100 * itm_mbs[r] / read[r];
        text_share[r] = 100 * text_mbs[r] / read[r];
    }
    char a[128], b[128];
    printf("%d rounds of the three loops in turn; medians, and the spread over the rounds\n", ROUNDS);
    printf("read-only baseline: %s\n", spread_text(spread_of(read, ROUNDS), "%.0f", " MB/s", a, sizeof a));
    printf("itm decode: %.1f MB, %llu samples: %s, %s of the read-only loop in the same round\n", n_itm / mbs,
           (unsigned long long)itm_pcs, spread_text(spread_of(itm_mbs, ROUNDS), "%.0f", " MB/s", a, sizeof a),
           spread_text(spread_of(itm_share, ROUNDS), "%.0f", " %", b, sizeof b));
    printf("text decode: %.1f MB, %llu samples: %s, %s of the read-only loop in the same round\n", n_text / mbs,
           (unsigned long long)text_pcs, spread_text(spread_of(text_mbs, ROUNDS), "%.0f", " MB/s", a, sizeof a),
           spread_text(spread_of(text_share, ROUNDS), "%.0f", " %", b, sizeof b));
    free(itm);
    free(text);
    return 0;
}
