/* The profile's direct PC index: range, odd addresses, lazily allocated leaves, clearing. */
#include "../profile/pcindex.h"
#include "check.h"

#include <stdlib.h>

static void test_cells_inside_the_range_only(void)
{
    struct pc_index x;
    CHECK(pcidx_init(&x, 0x08000001u, 0x08100000u)); /* lo rounds down to even */
    CHECK(x.lo == 0x08000000u && x.span == 0x100000u && x.n_leaves == 0x80000u / 4096u);
    CHECK(pcidx_cell(&x, 0x08000100u) == NULL);          /* no leaf yet */
    uint32_t *c = pcidx_cell_slow(&x, 0x08000100u);
    CHECK(c && *c == 0);
    *c = 7;
    CHECK(pcidx_cell(&x, 0x08000100u) == c && *pcidx_cell(&x, 0x08000100u) == 7);
    CHECK(pcidx_cell(&x, 0x08000102u) != c);             /* neighbours are their own cells */
    CHECK(pcidx_cell_slow(&x, 0x08000101u) == NULL);     /* odd: never a cell */
    CHECK(pcidx_cell_slow(&x, 0x07FFFFFEu) == NULL);     /* below, above, far away */
    CHECK(pcidx_cell_slow(&x, 0x08100000u) == NULL);
    CHECK(pcidx_cell_slow(&x, 0x20000000u) == NULL);
    CHECK(pcidx_cell_slow(&x, 0x080FFFFEu) != NULL);     /* the last halfword */
    pcidx_clear(&x);
    CHECK(*pcidx_cell(&x, 0x08000100u) == 0);           /* cleared, leaf kept */
    pcidx_free(&x);
    CHECK(x.leaves == NULL && pcidx_cell(&x, 0x08000100u) == NULL); /* a freed index answers nothing */
}

static void test_refuses_what_it_cannot_cover(void)
{
    struct pc_index x;
    CHECK(!pcidx_init(&x, 0x10000000u, 0x10000000u));    /* empty */
    CHECK(!pcidx_init(&x, 0x20000000u, 0x10000000u));    /* backwards */
    CHECK(!pcidx_init(&x, 0x00000000u, 0xF0000000u));    /* wider than 512 MB */
    CHECK(x.span == 0 && pcidx_cell(&x, 0x10000000u) == NULL);
    CHECK(pcidx_init(&x, 0x00000000u, 512u << 20));
    pcidx_free(&x);
}

/* Counting through the cells gives what a plain array gives, over random PCs. */
static void test_counts_like_an_array(void)
{
    struct pc_index x;
    enum { SPAN = 1 << 20 };
    CHECK(pcidx_init(&x, 0x00400000u, 0x00400000u + SPAN));
    static uint32_t want[SPAN / 2];
    uint32_t rng = 99u, bad = 0;
    for (int i = 0; i < 200000; i++) {
        rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
        uint32_t pc = 0x00400000u + (rng % (SPAN / 2)) * 2u;
        uint32_t *c = pcidx_cell(&x, pc);
        if (!c)
            c = pcidx_cell_slow(&x, pc);
        if (!c) {
            bad++;
            continue;
        }
        ++*c;
        want[(pc - 0x00400000u) / 2]++;
    }
    for (uint32_t h = 0; h < SPAN / 2; h++) {
        uint32_t *c = pcidx_cell(&x, 0x00400000u + 2 * h);
        bad += (c ? *c : 0) != want[h];
    }
    CHECK(bad == 0);
    pcidx_free(&x);
}

/* A run is counted up to the first PC the fast path cannot take: one outside the range, an odd
 * one, one whose leaf is not there yet, or one whose cell is marked UINT32_MAX (the profile's "not
 * here"). Each counted PC is one more in its cell, as one by one. */
static void test_runs_stop_where_the_slow_path_starts(void)
{
    struct pc_index x;
    CHECK(pcidx_init(&x, 0x08000000u, 0x08100000u));
    CHECK(pcidx_cell_slow(&x, 0x08000000u) && pcidx_cell_slow(&x, 0x08002000u)); /* two leaves */
    *pcidx_cell(&x, 0x08000010u) = UINT32_MAX;
    const uint32_t run[] = {0x08000002u, 0x08000002u, 0x08002002u, 0x08000004u};
    CHECK(pcidx_count_run(&x, run, 4) == 4);
    CHECK(*pcidx_cell(&x, 0x08000002u) == 2 && *pcidx_cell(&x, 0x08002002u) == 1 && *pcidx_cell(&x, 0x08000004u) == 1);
    const uint32_t stops[][3] = {
        {0x08000006u, 0x08200000u, 0x08000006u}, /* outside the range */
        {0x08000006u, 0x08000007u, 0x08000006u}, /* odd */
        {0x08000006u, 0x08004000u, 0x08000006u}, /* no leaf yet */
        {0x08000006u, 0x08000010u, 0x08000006u}, /* marked */
    };
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++)
        CHECK(pcidx_count_run(&x, stops[k], 3) == 1);
    CHECK(*pcidx_cell(&x, 0x08000006u) == 4 && *pcidx_cell(&x, 0x08000010u) == UINT32_MAX);
    CHECK(pcidx_count_run(&x, run, 0) == 0);
    pcidx_free(&x);
    struct pc_index none = {0}; /* no index (the profile without an ELF): nothing on the fast path */
    CHECK(pcidx_count_run(&none, run, 4) == 0);
}

int main(void)
{
    RUN_TEST(test_cells_inside_the_range_only);
    RUN_TEST(test_refuses_what_it_cannot_cover);
    RUN_TEST(test_counts_like_an_array);
    RUN_TEST(test_runs_stop_where_the_slow_path_starts);
    return check_summary();
}
