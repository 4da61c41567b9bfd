/* Counting samples into the profile: PCs in the ELF's code go through the direct index (two
 * array reads), tagged ones through their task's own index (the same, after a check that the tag
 * is the one before's). Baseline in the same run: adding the same PCs
 * into a plain array of counters (the floor for any per-PC count). The profile's time includes
 * moving the counts into its entries once at the end. Two address mixes: random
 * over all the code (cache-hostile), and a hot 64 KB (a typical profile). */
#define _POSIX_C_SOURCE 200809L
#include "../profile/profile.h"
#include "spread.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t rng = 2463534242u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

#define N 20000000u

/* One pass of the N samples in the given mode: 0 the array baseline, 1 the profile untagged, 2
 * tagged, 3 untagged in runs of 64. Returns the seconds it took. */
static double one_pass(struct sym_table *syms, const uint32_t *pcs, int mode, uint32_t lo, uint32_t span)
{
    if (mode == 0) {
        uint32_t *counts = calloc(span / 2 + 1, sizeof *counts);
        double t0 = now();
        for (uint32_t i = 0; i < N; i++)
            counts[(pcs[i] - lo) >> 1]++;
        double t = now() - t0;
        uint64_t sum = 0;
        for (uint32_t h = 0; h <= span / 2; h++)
            sum += counts[h];
        if (sum != N)
            fprintf(stderr, "array baseline lost samples\n");
        free(counts);
        return t;
    }
    struct prof *p = prof_new(syms);
    double t0 = now();
    if (mode == 3) { /* in runs of 64, as ingest gets an ITM capture's PC runs and a dump's blocks */
        for (uint32_t i = 0; i < N; i += 64)
            prof_add_pcs(p, pcs + i, N - i < 64 ? N - i : 64);
    } else {
        for (uint32_t i = 0; i < N; i++)
            prof_add_pc(p, pcs[i], mode == 2, 0x20001000u);
    }
    prof_settle(p); /* the counts reach the profile's entries, as a view's first read makes them */
    double t = now() - t0;
    if (prof_total(p) != N)
        fprintf(stderr, "profile lost samples\n");
    prof_free(p);
    return t;
}

/* Rounds of the four modes in turn: each round's ratios compare passes a second or so apart; the
 * figures are medians over the rounds with their spread. */
enum { ROUNDS = 9 };

static void one_mix(struct sym_table *syms, const uint32_t *pcs, const char *name, uint32_t lo, uint32_t span)
{
    double ns[4][ROUNDS], direct[ROUNDS], runs[ROUNDS], tagged[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int mode = 0; mode < 4; mode++)
            ns[mode][r] = 1e9 * one_pass(syms, pcs, mode, lo, span) / N;
        direct[r] = ns[1][r] / ns[0][r];
        runs[r] = ns[3][r] / ns[0][r];
        tagged[r] = ns[2][r] / ns[1][r];
    }
    char a[128], b[128];
    printf("%s: array %.2f ns/sample;\n", name, spread_of(ns[0], ROUNDS).median);
    printf("  profile, untagged (direct index) %.2f ns/sample, %s the array;\n", spread_of(ns[1], ROUNDS).median,
           spread_text(spread_of(direct, ROUNDS), "%.1f", "x", a, sizeof a));
    printf("  in runs of 64 %.2f ns/sample, %s the array;\n", spread_of(ns[3], ROUNDS).median,
           spread_text(spread_of(runs, ROUNDS), "%.1f", "x", b, sizeof b));
    printf("  tagged (its task's index) %.2f ns/sample, %s the direct index\n", spread_of(ns[2], ROUNDS).median,
           spread_text(spread_of(tagged, ROUNDS), "%.1f", "x", a, sizeof a));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_count ELF\n");
        return 2;
    }
    char err[512];
    struct sym_table *syms = sym_open(argv[1], err, sizeof err);
    uint32_t lo, hi;
    if (!syms || !sym_code_span(syms, &lo, &hi)) {
        fprintf(stderr, "%s\n", syms ? "no code" : err);
        return 1;
    }
    uint32_t *pcs = malloc(N * sizeof *pcs);
    if (!pcs)
        return 1;
    uint32_t span = hi - lo;
    printf("code: %u KB; %u samples; %d rounds of the array and the three profile modes in turn; medians, and "
           "the spread of the per-round ratios\n", span / 1024u, N, ROUNDS);
    static const char *const mixes[] = {"random over all the code", "a hot 64 KB"};
    for (int mix = 0; mix < 2; mix++) {
        uint32_t window = mix ? (span < 65536u ? span : 65536u) : span;
        for (uint32_t i = 0; i < N; i++)
            pcs[i] = (lo + (next() % (window / 2)) * 2u) & ~1u;
        one_mix(syms, pcs, mixes[mix], lo, span);
    }
    free(pcs);
    sym_close(syms);
    return 0;
}
