/* Host tests of the section timers with a fake clock. */
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_regs.h"
#include "check.h"
#include "fake_regs.h"

#include <stdlib.h>
#include <string.h>

static uint32_t fake_now;

static uint32_t fake_clock(void)
{
    return fake_now;
}

static char out[1024];
static size_t out_len;

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
    out[out_len] = '\0';
}

static void run_section(uint32_t i, uint32_t duration)
{
    cmprof_section_start(i);
    fake_now += duration;
    cmprof_section_stop(i);
}

static void test_fresh_section_is_empty(void)
{
    CHECK(cmprof_sections_init(fake_clock) == CMPROF_CLOCK_OK);
    const struct cmprof_section *s = cmprof_section_get(0);
    CHECK(s != NULL);
    CHECK(s->count == 0u && s->max == 0u && s->min == UINT32_MAX && s->sum == 0u);
}

static void test_current_min_max_count_sum(void)
{
    cmprof_sections_init(fake_clock);
    run_section(2, 100);
    run_section(2, 50);
    run_section(2, 300);
    const struct cmprof_section *s = cmprof_section_get(2);
    CHECK(s->current == 300u);
    CHECK(s->min == 50u);
    CHECK(s->max == 300u);
    CHECK(s->count == 3u);
    CHECK(s->sum == 450u);
    CHECK(cmprof_section_get(1)->count == 0u); /* sections are independent */
}

static void test_clock_wrap(void)
{
    cmprof_sections_init(fake_clock);
    fake_now = 0xFFFFFFF0u;
    run_section(0, 0x20u); /* the clock wraps in the middle */
    CHECK(cmprof_section_get(0)->current == 0x20u);
}

static void test_sum_does_not_overflow_32_bits(void)
{
    cmprof_sections_init(fake_clock);
    for (int k = 0; k < 3; k++)
        run_section(0, 0xF0000000u);
    CHECK(cmprof_section_get(0)->sum == 3ull * 0xF0000000u);
}

static void test_invalid_index_is_ignored(void)
{
    cmprof_sections_init(fake_clock);
    cmprof_section_start(CMPROF_SECTIONS);
    cmprof_section_stop(CMPROF_SECTIONS);
    cmprof_section_reset(CMPROF_SECTIONS + 5u);
    CHECK(cmprof_section_get(CMPROF_SECTIONS) == NULL);
}

static void test_reset_one_and_all(void)
{
    cmprof_sections_init(fake_clock);
    run_section(0, 10);
    run_section(1, 20);
    cmprof_section_reset(0);
    CHECK(cmprof_section_get(0)->count == 0u && cmprof_section_get(0)->min == UINT32_MAX);
    CHECK(cmprof_section_get(1)->count == 1u);
    cmprof_section_reset(CMPROF_ALL_SECTIONS);
    CHECK(cmprof_section_get(1)->count == 0u);
}

static void test_dwt_absent(void)
{
    fake_regs_clear(); /* DWT_CTRL reads 0 */
    CHECK(cmprof_sections_init(NULL) == CMPROF_CLOCK_NO_DWT);
    run_section(0, 1000); /* still safe: the zero clock measures nothing */
    CHECK(cmprof_section_get(0)->count == 1u && cmprof_section_get(0)->current == 0u);
}

static void test_dwt_without_cycle_counter(void)
{
    fake_regs_clear();
    CMPROF_REG(CMPROF_DWT_CTRL) = 0x40000000u | CMPROF_DWT_CTRL_NOCYCCNT;
    CHECK(cmprof_sections_init(NULL) == CMPROF_CLOCK_NO_DWT);
}

static void test_dwt_cycle_counter_stuck(void)
{
    fake_regs_clear();
    CMPROF_REG(CMPROF_DWT_CTRL) = 0x40000000u; /* present, but CYCCNT never moves: QEMU */
    CHECK(cmprof_sections_init(NULL) == CMPROF_CLOCK_NOT_RUNNING);
    CHECK((CMPROF_REG(CMPROF_DEMCR) & CMPROF_DEMCR_TRCENA) != 0u);
    CHECK((CMPROF_REG(CMPROF_DWT_CTRL) & CMPROF_DWT_CTRL_CYCCNTENA) != 0u);
}

/* A clock that moves on by a fixed step at each read, as a cycle counter moves on by the
 * instructions between two reads: the step is the measurement's own cost. */
static uint32_t steps_per_read, slow_reads;

static uint32_t stepping_clock(void)
{
    uint32_t now = fake_now;
    fake_now += steps_per_read;
    if (slow_reads) { /* a read made slow once (an interrupt, a cache miss): never the cost */
        slow_reads--;
        fake_now += 1000u;
    }
    return now;
}

static void test_own_cost_calibrated_out(void)
{
    steps_per_read = 7u;
    slow_reads = 3u; /* the first calibration runs are slow: the least is kept */
    cmprof_sections_init(stepping_clock);
    CHECK(cmprof_section_get(0)->count == 0u); /* the calibration's runs leave nothing behind */
    run_section(1, 100);
    run_section(1, 0);
    const struct cmprof_section *s = cmprof_section_get(1);
    CHECK(s->min == 0u && s->max == 100u && s->sum == 100u && s->count == 2u);
    steps_per_read = 0u;
}

static void test_dump_lines(void)
{
    cmprof_sections_init(fake_clock);
    run_section(0, 7);
    run_section(0, 9);
    run_section(3, 4000000000u);
    out_len = 0;
    out[0] = '\0';
    cmprof_sections_dump(capture);
    CHECK(strcmp(out, "sect 0 n=2 cur=9 min=7 max=9 sum=16\n"
                      "sect 3 n=1 cur=4000000000 min=4000000000 max=4000000000 sum=4000000000\n") == 0);
}

/* A run past the clock's range (2^32 ticks), polled every 2^31 - 1 ticks: exact in sum, counted in
 * long_runs, current and max saturated; a run just under the range stays exact; the dump says long=. */
static void test_run_past_the_clock_range(void)
{
    CHECK(cmprof_sections_init(fake_clock) == CMPROF_CLOCK_OK);
    const uint64_t length = 3ull * 0x100000000ull + 12345u;
    cmprof_section_start(2);
    for (uint64_t left = length; left;) {
        uint32_t step = left > 0x7fffffffu ? 0x7fffffffu : (uint32_t)left;
        fake_now += step;
        left -= step;
        if (left)
            cmprof_sections_poll();
    }
    cmprof_section_stop(2);
    const struct cmprof_section *s = cmprof_section_get(2);
    CHECK(s->count == 1u && s->long_runs == 1u && s->sum == length);
    CHECK(s->current == UINT32_MAX && s->max == UINT32_MAX);
    cmprof_section_start(3); /* under the range, polled in its upper half: exact */
    fake_now += 0x80000000u;
    cmprof_sections_poll();
    fake_now += 0x7ffffff0u;
    cmprof_section_stop(3);
    s = cmprof_section_get(3);
    CHECK(s->long_runs == 0u && s->current == 0xfffffff0u && s->sum == 0xfffffff0u);
    cmprof_section_start(4); /* never polled: its length modulo 2^32, as documented */
    fake_now += 0x100000000ull + 7u;
    cmprof_section_stop(4);
    CHECK(cmprof_section_get(4)->current == 7u && cmprof_section_get(4)->long_runs == 0u);
    out_len = 0;
    cmprof_sections_dump(capture);
    CHECK(strstr(out, "sect 2 n=1 cur=4294967295 min=4294967295 max=4294967295 sum=12884914233 long=1\n") != NULL);
    CHECK(strstr(out, "sect 3 n=1 cur=4294967280 min=4294967280 max=4294967280 sum=4294967280\n") != NULL);
}

int main(void)
{
    RUN_TEST(test_fresh_section_is_empty);
    RUN_TEST(test_current_min_max_count_sum);
    RUN_TEST(test_clock_wrap);
    RUN_TEST(test_sum_does_not_overflow_32_bits);
    RUN_TEST(test_invalid_index_is_ignored);
    RUN_TEST(test_reset_one_and_all);
    RUN_TEST(test_dwt_absent);
    RUN_TEST(test_dwt_without_cycle_counter);
    RUN_TEST(test_dwt_cycle_counter_stuck);
    RUN_TEST(test_own_cost_calibrated_out);
    RUN_TEST(test_dump_lines);
    RUN_TEST(test_run_past_the_clock_range);
    return check_summary();
}
