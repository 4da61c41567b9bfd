/* TPIU deframing speed on a long formatter capture (bench by hand, not in make bench): CPU ms per MB.
 * argv: case, MB. Case 0: ITM on source 1 and ETM-like bytes on 2 (tests/tpiu_gen.h), --tpiu-id 1; case 1:
 * the same stream with a wrong --tpiu-id (3: every block is a candidate for tpiu.c's re-reading); case 2:
 * one source after 300 bytes of line noise. One capture of 5,000 samples fed again and again.
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Idecode -o /tmp/bench_tpiu bench/bench_tpiu.c decode/tpiu.c decode/itm.c
 * Versions compared in interleaved rounds (each round runs every version once per case), medians of
 * the per-round ratios: build each tree's decode/ into its own binary and loop over them. */
#include "../decode/itm.h"
#include "../decode/tpiu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint32_t seed = 12345;
static inline uint32_t rnd32(void)
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 1;
}
#include "../tests/tpiu_gen.h"

static uint64_t passed;

static void count(void *ctx, const uint8_t *b, size_t n)
{
    (void)ctx;
    (void)b;
    passed += n;
}

static uint8_t buf[1u << 22];
static struct tpiu_decoder d;

int main(int argc, char **argv)
{
    int which = argc > 2 ? atoi(argv[1]) : 0;
    size_t mb = argc > 2 ? (size_t)atoi(argv[2]) : 10, n = 0, fed = 0;
    one_source = which == 2;
    if (which == 2)
        for (; n < 300; n++)
            buf[n] = (uint8_t)rnd32();
    n += pack_frames(items, make_items(5000), buf + n) - 16; /* (the last frame, padded with the null source, left out) */
    struct byte_sink s = {count, NULL, NULL};
    tpiu_init(&d, which == 1 ? 3 : 1);
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    while (fed < mb << 20) {
        size_t from = fed == 0 || which != 2 ? 0 : 300 + 16 * 40; /* the noise and the ID's frame once */
        tpiu_feed(&d, buf + from, n - from, &s);
        fed += n - from;
    }
    tpiu_finish(&d, &s);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double t = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("%.3f ms/MB, %llu bytes passed on\n", 1e3 * t / ((double)fed / (1 << 20)), (unsigned long long)passed);
    return 0;
}
