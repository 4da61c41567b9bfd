/* symt_sort_by_u32, the symbol table's radix sort: against a plain stable sort, on the key spans
 * and record sizes its callers give it (addresses in a little code, whole 32-bit keys, equal keys). */
#include "../symbols/table.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* A record of each size the sort moves in its own way: 8 (address, index), 24 (struct func) and
 * any other (here 12). The key sits at offset 4 in each, with the record's first position beside
 * it: equal keys must keep their order. */
struct rec8 {
    uint32_t pos, key;
};
struct rec12 {
    uint32_t pos, key, pad;
};
struct rec24 {
    uint32_t pos, key, pad[4];
};

static uint64_t rng = 0x9E3779B97F4A7C15ull; /* fixed seed: the same keys every run */

static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* A stable insertion sort by key, for reference (small n). */
static void reference_sort(unsigned char *v, size_t n, size_t size)
{
    unsigned char tmp[64];
    for (size_t i = 1; i < n; i++) {
        memcpy(tmp, v + i * size, size);
        uint32_t k;
        memcpy(&k, tmp + 4, 4);
        size_t j = i;
        for (; j > 0; j--) {
            uint32_t kj;
            memcpy(&kj, v + (j - 1) * size + 4, 4);
            if (kj <= k)
                break;
            memcpy(v + j * size, v + (j - 1) * size, size);
        }
        memcpy(v + j * size, tmp, size);
    }
}

/* n records of the given size, keys lo + (random below span), sorted both ways: equal bytes. */
static bool sorts_like_reference(size_t n, size_t size, uint32_t lo, uint32_t span)
{
    unsigned char *a = calloc(n + 1, size), *b = calloc(n + 1, size);
    bool same = a && b;
    for (size_t i = 0; same && i < n; i++) {
        uint32_t pos = (uint32_t)i, key = lo + (span ? next_u32() % span : next_u32());
        memcpy(a + i * size, &pos, 4);
        memcpy(a + i * size + 4, &key, 4);
    }
    if (same) {
        memcpy(b, a, n * size);
        same = symt_sort_by_u32(a, n, size, 4);
        reference_sort(b, n, size);
        same = same && memcmp(a, b, n * size) == 0;
    }
    free(a);
    free(b);
    return same;
}

static void test_addresses_in_a_little_code(void)
{
    /* a batch of lookups in 160 KB of code: 18 bits differ, at 0x08000000 */
    CHECK(sorts_like_reference(6000, sizeof(struct rec8), 0x08000000u, 160u << 10));
    CHECK(sorts_like_reference(800, sizeof(struct rec8), 0x08000000u, 160u << 10));
    CHECK(sorts_like_reference(5000, sizeof(struct rec24), 0x08000000u, 0x364000u));
    CHECK(sorts_like_reference(3000, sizeof(struct rec12), 0x20000000u, 4096u));
}

static void test_whole_keys(void)
{
    /* every bit differs: three passes of 11 bits (four of 8 for the 4 records below), the top key
     * 0xFFFFFFFF included */
    CHECK(sorts_like_reference(5000, sizeof(struct rec8), 0, 0));
    CHECK(sorts_like_reference(2000, sizeof(struct rec24), 0, 0));
    struct rec8 v[4] = {{0, 0xFFFFFFFFu}, {1, 0}, {2, 0xFFFFFFFFu}, {3, 0x80000000u}};
    CHECK(symt_sort_by_u32(v, 4, sizeof *v, offsetof(struct rec8, key)));
    CHECK(v[0].pos == 1 && v[1].pos == 3 && v[2].pos == 0 && v[3].pos == 2);
}

static void test_few_distinct_keys(void)
{
    /* keys one apart (one bit differs), and many equal keys: their order kept */
    CHECK(sorts_like_reference(3000, sizeof(struct rec8), 100, 2));
    CHECK(sorts_like_reference(3000, sizeof(struct rec24), 0x08000000u, 3));
    CHECK(sorts_like_reference(4000, sizeof(struct rec12), 7, 1)); /* all equal: in order already */
}

/* A long ascending run that holds the lowest and the highest keys, then the rest: the span must
 * count the run's keys, not only those after it. */
static void test_run_then_rest(void)
{
    struct rec8 v[600];
    for (uint32_t i = 0; i < 500; i++)
        v[i] = (struct rec8){i, i == 499 ? 0xFFFFFFF0u : i * 1000u};
    for (uint32_t i = 500; i < 600; i++)
        v[i] = (struct rec8){i, 1000u + (i * 7919u) % 400000u};
    struct rec8 ref[600];
    memcpy(ref, v, sizeof v);
    reference_sort((unsigned char *)ref, 600, sizeof *ref);
    CHECK(symt_sort_by_u32(v, 600, sizeof *v, offsetof(struct rec8, key)));
    CHECK(memcmp(v, ref, sizeof v) == 0);
}

static void test_in_order_and_tiny(void)
{
    struct rec8 v[3] = {{0, 5}, {1, 5}, {2, 9}};
    CHECK(symt_sort_by_u32(v, 3, sizeof *v, offsetof(struct rec8, key)));
    CHECK(v[0].pos == 0 && v[1].pos == 1 && v[2].pos == 2);
    CHECK(symt_sort_by_u32(v, 0, sizeof *v, offsetof(struct rec8, key)));
    struct rec8 two[2] = {{0, 9}, {1, 8}};
    CHECK(symt_sort_by_u32(two, 2, sizeof *two, offsetof(struct rec8, key)));
    CHECK(two[0].pos == 1 && two[1].pos == 0);
}

int main(void)
{
    RUN_TEST(test_addresses_in_a_little_code);
    RUN_TEST(test_whole_keys);
    RUN_TEST(test_few_distinct_keys);
    RUN_TEST(test_run_then_rest);
    RUN_TEST(test_in_order_and_tiny);
    return check_summary();
}
