/* Steady-state symbol lookups: open an ELF, read the units a list of addresses needs, resolve the
 * addresses once (filling the cache), then time repeated lookups of the same addresses in a
 * shuffled order. Baseline in the same round: the first, uncached pass over the same addresses.
 * Each round opens the ELF afresh; the figures are medians over the rounds with their spread. */
#define _POSIX_C_SOURCE 200809L
#include "../symbols/symbols.h"
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

enum { ROUNDS = 11, REPS = 20 /* cached passes a round */ };

struct round {
    double *load, *read, *first, *steady; /* ms; M lookups/s */
    struct sym_stats *st;
};

/* Open the ELF, read the units the addresses need, one uncached pass in their order, then REPS
 * cached passes in the shuffled order. */
static bool one_round(const char *path, const uint32_t *a, const uint32_t *shuffled, size_t n, const struct round *o,
                      uint64_t *frames)
{
    char err[512];
    double t0 = now();
    struct sym_table *t = sym_open(path, err, sizeof err);
    if (!t) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    (void)sym_warning(t); /* the symbol table may still be read on a thread: the open ends with it */
    *o->load = 1e3 * (now() - t0);
    t0 = now();
    sym_prefetch(t, a, n);
    *o->read = 1e3 * (now() - t0);
    t0 = now();
    for (size_t i = 0; i < n; i++)
        *frames += sym_lookup(t, a[i])->n_frames;
    *o->first = n / (now() - t0) / 1e6;
    t0 = now();
    for (size_t r = 0; r < REPS; r++)
        for (size_t i = 0; i < n; i++)
            *frames += sym_lookup(t, shuffled[i])->n_frames;
    *o->steady = n * REPS / (now() - t0) / 1e6;
    sym_get_stats(t, o->st);
    sym_close(t);
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_lookup ELF ADDRFILE\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f)
        return 1;
    size_t n = 0, cap = 1024;
    uint32_t *a = malloc(cap * sizeof *a);
    unsigned v;
    while (a && fscanf(f, "%x", &v) == 1) {
        if (n == cap && !(a = realloc(a, (cap *= 2) * sizeof *a)))
            return 1;
        a[n++] = v;
    }
    fclose(f);
    uint32_t *shuffled = malloc(n * sizeof *shuffled);
    if (!shuffled || n == 0)
        return 1;
    memcpy(shuffled, a, n * sizeof *a);
    uint32_t x = 12345u;
    for (size_t i = n - 1; i > 0; i--) { /* shuffle with a fixed seed */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        size_t j = x % (i + 1);
        uint32_t tmp = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = tmp;
    }
    double load[ROUNDS], read[ROUNDS], first[ROUNDS], steady[ROUNDS], gain[ROUNDS];
    struct sym_stats st;
    uint64_t frames = 0;
    for (int r = 0; r < ROUNDS; r++)
        if (!one_round(argv[1], a, shuffled, n, &(struct round){&load[r], &read[r], &first[r], &steady[r], &st},
                       &frames))
            return 1;
    for (int r = 0; r < ROUNDS; r++)
        gain[r] = steady[r] / first[r];
    char t1[128], t2[128], t3[128];
    printf("%d rounds, each opening the ELF afresh; medians, and the spread over the rounds\n", ROUNDS);
    printf("open (symbols and the unit index): %s; the units these addresses need (%zu of %zu units, %zu by the "
           "fast reader; %zu functions, %zu line rows, %zu scopes, %.1f MB of tables) read in %s\n",
           spread_text(spread_of(load, ROUNDS), "%.1f", " ms", t1, sizeof t1), st.units_loaded, st.units,
           st.units_fast, st.functions, st.line_rows, st.scopes, st.bytes / 1048576.0,
           spread_text(spread_of(read, ROUNDS), "%.1f", " ms", t2, sizeof t2));
    printf("first pass: %zu lookups, %s\n", n, spread_text(spread_of(first, ROUNDS), "%.2f", " M/s", t1, sizeof t1));
    printf("steady state (cached): %s, %s the first pass in the same round, %llu frames\n",
           spread_text(spread_of(steady, ROUNDS), "%.1f", " M lookups/s", t2, sizeof t2),
           spread_text(spread_of(gain, ROUNDS), "%.0f", "x", t3, sizeof t3), (unsigned long long)frames);
    free(shuffled);
    free(a);
    return 0;
}
