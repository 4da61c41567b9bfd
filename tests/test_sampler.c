/* Host tests of the sampler's storage, limits, jitter and dump format. Built once per
 * configuration (see tests/run.sh): ring, ring+tag, histogram, jitter, TIM3. The interrupt
 * prologue is ARM assembly and is exercised in QEMU by the scenarios instead (CMPROF_NO_ISR). */
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_regs.h"
#include "check.h"
#include "fake_regs.h"

#include <stdlib.h>
#include <string.h>

/* the library's defaults, for the configurations that do not set them */
#ifndef CMPROF_RING_N
#define CMPROF_RING_N 1024u
#endif
#ifndef CMPROF_HIST_SHIFT
#define CMPROF_HIST_SHIFT 1u
#endif
#ifndef CMPROF_HIST_BINS
#define CMPROF_HIST_BINS 256u
#endif

#ifdef CMPROF_TAG
void *volatile test_tag;
#endif

static char out[1 << 16];
static size_t out_len;

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
    out[out_len] = '\0';
}

static const char *dump(void)
{
    out_len = 0;
    out[0] = '\0';
    cmprof_dump(capture);
    return out;
}

#if CMPROF_TIMER_TIM3
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM3_BASE)) == 1u)
#define PERIOD_REG() CMPROF_REG(CMPROF_TIM_ARR(CMPROF_TIM3_BASE))
#else
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_SYST_CSR) == 7u)
#define PERIOD_REG() CMPROF_REG(CMPROF_SYST_RVR)
#endif

static void test_start_programs_the_timer(void)
{
    fake_regs_clear();
#if CMPROF_TIMER_TIM3
    CMPROF_REG(CMPROF_NVIC_IPR_WORD(CMPROF_TIM3_IRQ)) = 0xFFFFFFFFu;
    cmprof_start(1000u, 0u);
    CHECK(TIMER_RUNNING());
    CHECK(PERIOD_REG() == 999u);
    CHECK(CMPROF_REG(CMPROF_TIM_DIER(CMPROF_TIM3_BASE)) == 1u);
    CHECK((CMPROF_REG(CMPROF_NVIC_ISER0) & (1u << CMPROF_TIM3_IRQ)) != 0u);
    CHECK(CMPROF_REG(CMPROF_NVIC_IPR_WORD(CMPROF_TIM3_IRQ)) == 0xFFFF00FFu); /* only TIM3's byte: 0 */
    CHECK((CMPROF_REG(CMPROF_RCC_APB1ENR) & CMPROF_RCC_APB1ENR_TIM3EN) != 0u);
#else
    CMPROF_REG(CMPROF_SCB_SHPR3) = 0xFFFF0000u; /* SysTick and PendSV least urgent */
    cmprof_start(2013u, 0u);
    CHECK(TIMER_RUNNING());
    CHECK(PERIOD_REG() == 2012u);
    CHECK(CMPROF_REG(CMPROF_SCB_SHPR3) == 0x00FF0000u); /* SysTick most urgent, PendSV untouched */
#endif
    CHECK(cmprof_samples() == 0u);
    cmprof_stop();
    CHECK(!TIMER_RUNNING());
}

static void test_limit_stops_the_timer(void)
{
    fake_regs_clear();
    cmprof_start(100u, 3u);
    cmprof_tick(0x08000100u);
    cmprof_tick(0x08000102u);
    CHECK(TIMER_RUNNING());
    cmprof_tick(0x08000104u);
    CHECK(!TIMER_RUNNING());
    CHECK(cmprof_samples() == 3u);
}

#if CMPROF_JITTER
static uint32_t xorshift(uint32_t r)
{
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    return r;
}

static void test_jitter_varies_the_period(void)
{
    fake_regs_clear();
    cmprof_seed(12345u);
    cmprof_start(1000u, 0u);
    uint32_t r = 12345u, seen_min = UINT32_MAX, seen_max = 0;
    int all_match = 1;
    for (int k = 0; k < 5000; k++) {
        cmprof_tick(0x08000100u);
        r = xorshift(r);
        uint32_t reload = PERIOD_REG();
        all_match &= reload == 999u + (r & CMPROF_JITTER);
        seen_min = reload < seen_min ? reload : seen_min;
        seen_max = reload > seen_max ? reload : seen_max;
    }
    CHECK(all_match);
    CHECK(seen_min >= 999u && seen_max <= 999u + CMPROF_JITTER);
    CHECK(seen_max - seen_min > CMPROF_JITTER / 2u); /* it really spreads */
}

static void test_seed_zero_is_replaced(void)
{
    fake_regs_clear();
    cmprof_seed(0u);
    cmprof_start(1000u, 0u);
    cmprof_tick(0x08000100u);
    uint32_t a = PERIOD_REG();
    cmprof_tick(0x08000100u);
    uint32_t b = PERIOD_REG();
    CHECK(a != b || a != 999u); /* a zero xorshift state would stay zero forever */
}
#endif

#if CMPROF_HIST
static void test_hist_counts_and_out_of_range(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    uint32_t base = CMPROF_HIST_BASE, size = 1u << CMPROF_HIST_SHIFT;
    cmprof_tick(base);
    cmprof_tick(base + size - 2u);             /* same bucket */
    cmprof_tick(base + size);                  /* next bucket */
    cmprof_tick(base - 2u);                    /* below: out */
    cmprof_tick(base + CMPROF_HIST_BINS * size); /* above: out */
    CHECK(cmprof_samples() == 5u);
    const char *d = dump();
    char head[128];
    snprintf(head, sizeof head, "prof hist base=0x%08x shift=%u n=5 out=2\nh 0002 0001 0000", (unsigned)base,
             (unsigned)CMPROF_HIST_SHIFT);
    CHECK(strncmp(d, head, strlen(head)) == 0);
    CHECK(strstr(d, "\nend\n") != NULL);
}

static void test_hist_saturates(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    for (uint32_t k = 0; k < 70000u; k++)
        cmprof_tick(CMPROF_HIST_BASE);
    const char *d = dump();
    CHECK(strstr(d, "\nh ffff 0000") != NULL); /* stuck at 0xFFFF, never wrapped to a small count */
}

static void test_hist_restart_clears(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    cmprof_tick(CMPROF_HIST_BASE);
    cmprof_tick(0u);
    cmprof_start(100u, 0u);
    const char *d = dump();
    CHECK(strstr(d, "n=0 out=0\nh 0000 0000") != NULL);
}

static void test_hist_dump_layout(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    const char *d = dump();
    size_t h_lines = 0;
    for (const char *p = d; (p = strstr(p, "\nh ")) != NULL; p++)
        h_lines++;
    CHECK(h_lines == (CMPROF_HIST_BINS + 15u) / 16u);
}
#else
static void test_ring_dump_format(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    for (uint32_t k = 0; k < 10u; k++) {
#ifdef CMPROF_TAG
        test_tag = (void *)(uintptr_t)(0x20000100u + (k & 1u) * 0x100u);
#endif
        cmprof_tick(0x08000100u + 2u * k);
    }
    const char *expect = "prof raw n=10\n"
                         "p 08000100 08000102 08000104 08000106 08000108 0800010a 0800010c 0800010e\n"
                         "p 08000110 08000112\n"
#ifdef CMPROF_TAG
                         "g 20000100 20000200 20000100 20000200 20000100 20000200 20000100 20000200\n"
                         "g 20000100 20000200\n"
#endif
                         "end\n";
    CHECK(strcmp(dump(), expect) == 0);
}

static void test_ring_keeps_the_newest(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    for (uint32_t k = 0; k < CMPROF_RING_N + 5u; k++)
        cmprof_tick(k * 2u);
    const char *d = dump();
    char first[64];
    snprintf(first, sizeof first, "prof raw n=%u\np %08x ", (unsigned)CMPROF_RING_N, 5u * 2u);
    CHECK(strncmp(d, first, strlen(first)) == 0);
    char last[32]; /* the newest sample closes the p lines (g lines may follow) */
    snprintf(last, sizeof last, " %08x\n%c", (unsigned)((CMPROF_RING_N + 4u) * 2u),
#ifdef CMPROF_TAG
             'g'
#else
             'e'
#endif
    );
    CHECK(strstr(d, last) != NULL);
    CHECK(cmprof_samples() == CMPROF_RING_N + 5u);
}

static void test_empty_dump(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    CHECK(strcmp(dump(), "prof raw n=0\nend\n") == 0);
}
#endif

int main(void)
{
    RUN_TEST(test_start_programs_the_timer);
    RUN_TEST(test_limit_stops_the_timer);
#if CMPROF_JITTER
    RUN_TEST(test_jitter_varies_the_period);
    RUN_TEST(test_seed_zero_is_replaced);
#endif
#if CMPROF_HIST
    RUN_TEST(test_hist_counts_and_out_of_range);
    RUN_TEST(test_hist_saturates);
    RUN_TEST(test_hist_restart_clears);
    RUN_TEST(test_hist_dump_layout);
#else
    RUN_TEST(test_ring_dump_format);
    RUN_TEST(test_ring_keeps_the_newest);
    RUN_TEST(test_empty_dump);
#endif
    return check_summary();
}
