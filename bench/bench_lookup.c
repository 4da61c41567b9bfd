/* Steady-state symbol lookups: open an ELF, read the units a list of addresses needs, resolve the
 * addresses once (filling the cache), then time repeated lookups of the same addresses in a
 * shuffled order. Baseline in the same run: the first, uncached pass over the same addresses. */
#define _POSIX_C_SOURCE 200809L
#include "../app/hugeheap.h"
#include "../symbols/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    hugeheap_setup((size_t)HUGEHEAP_RESERVE_MB << 20); /* the heap as the tool sets it up */
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
    char err[512];
    double t0 = now();
    struct sym_table *t = sym_open(argv[1], err, sizeof err);
    if (!t) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    (void)sym_warning(t); /* the symbol table may still be read on a thread: the open ends with it */
    double t_load = now() - t0;
    t0 = now();
    sym_prefetch(t, a, n);
    double t_read = now() - t0;
    uint64_t frames = 0;
    t0 = now();
    for (size_t i = 0; i < n; i++)
        frames += sym_lookup(t, a[i])->n_frames;
    double t_first = now() - t0;
    uint32_t x = 12345u;
    for (size_t i = n - 1; i > 0; i--) { /* shuffle with a fixed seed */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        size_t j = x % (i + 1);
        uint32_t tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
    }
    size_t reps = 50;
    t0 = now();
    for (size_t r = 0; r < reps; r++)
        for (size_t i = 0; i < n; i++)
            frames += sym_lookup(t, a[i])->n_frames;
    double t_steady = now() - t0;
    struct sym_stats st;
    sym_get_stats(t, &st);
    printf("open %.3f s (symbols and the unit index); the units these addresses need read in %.3f s (%zu of %zu "
           "units, %zu by the fast reader; %zu functions, %zu line rows, %zu scopes, %.1f MB of tables)\n", t_load,
           t_read, st.units_loaded, st.units, st.units_fast, st.functions, st.line_rows, st.scopes,
           st.bytes / 1048576.0);
    printf("first pass: %zu lookups in %.3f s = %.2f M/s\n", n, t_first, n / t_first / 1e6);
    printf("steady state (cached): %.1f M lookups/s (%.0fx the first pass), %llu frames\n",
           n * reps / t_steady / 1e6, (t_first / n) / (t_steady / (n * reps)), (unsigned long long)frames);
    sym_close(t);
    free(a);
    return 0;
}
