/* Each report writer's cost on one capture, as a ratio to the CSV writer's: the capture is read
 * once, then every round runs each writer once, in turn, into /dev/null (interleaved rounds: see
 * bench/interleave.py). A first round, not counted, reads the DWARF every writer then finds cached.
 * Usage: bench_writers CAPTURE ELF ROUNDS */
#define _POSIX_C_SOURCE 200809L
#include "../app/batch.h"
#include "../profile/ingest.h"
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

static const struct {
    const char *name;
    enum report_format out;
} writers[] = {{"csv", OUT_CSV}, {"table", OUT_TABLE}, {"json", OUT_JSON}, {"folded", OUT_FOLDED},
               {"speedscope", OUT_SPEEDSCOPE}, {"pprof", OUT_PPROF}, {"callgrind", OUT_CALLGRIND},
               {"lcov", OUT_LCOV}, {"trace", OUT_TRACE}};
#define N_WRITERS (sizeof writers / sizeof *writers)

int main(int argc, char **argv)
{
    int rounds = argc == 4 ? atoi(argv[3]) : 0;
    if (rounds < 1 || rounds > SPREAD_MAX) {
        fprintf(stderr, "usage: bench_writers CAPTURE ELF ROUNDS (1..%d)\n", SPREAD_MAX);
        return 2;
    }
    char err[512];
    struct sym_table *syms = sym_open(argv[2], err, sizeof err);
    FILE *cap = fopen(argv[1], "rb"), *null = fopen("/dev/null", "w");
    struct prof *p = syms ? prof_new(syms) : NULL;
    struct ingest *in = p ? ingest_new(p, &(struct ingest_options){.format = DETECT_UNKNOWN, .tpiu_id = 1}) : NULL;
    if (!syms || !cap || !null || !in) {
        fprintf(stderr, "bench_writers: %s\n", syms ? "cannot open the capture" : err);
        return 1;
    }
    static uint8_t buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, cap)) > 0)
        ingest_feed(in, buf, got);
    ingest_finish(in);
    struct batch_options o = {.source = argv[1], .elf = argv[2], .by = PROF_BY_FUNCTION, .inline_frames = true};
    static double t[N_WRITERS][SPREAD_MAX], ratio[SPREAD_MAX];
    for (int r = -1; r < rounds; r++)
        for (size_t w = 0; w < N_WRITERS; w++) {
            o.output = writers[w].out;
            double t0 = now();
            batch_report(&o, p, in, "", null, err, sizeof err);
            fflush(null);
            if (r >= 0)
                t[w][r] = now() - t0;
        }
    printf("%.0f samples, %d rounds of the %zu writers in turn into /dev/null; medians, and the spread of the "
           "per-round ratios to csv:\n", prof_total(p), rounds, N_WRITERS);
    for (size_t w = 0; w < N_WRITERS; w++) {
        for (int r = 0; r < rounds; r++)
            ratio[r] = t[w][r] / t[0][r];
        char a[160];
        struct spread s = spread_of(t[w], (size_t)rounds);
        printf("  %-11s %8.3f ms  %s\n", writers[w].name, 1e3 * s.median,
               spread_text(spread_of(ratio, (size_t)rounds), "%.2f", "x", a, sizeof a));
    }
    ingest_free(in);
    prof_free(p);
    sym_close(syms);
    fclose(cap);
    fclose(null);
    return 0;
}
