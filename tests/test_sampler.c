/* Host tests of the sampler's storage, limits, jitter and dump format. Built once per
 * configuration (see the Makefile): ring, ring+tag, histogram, jitter, and every timer port. The interrupt
 * prologue is ARM assembly and is exercised in QEMU by the scenarios instead (CMPROF_NO_ISR). */
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_port.h"
#include "../firmware/cmprof_regs.h"
#include "check.h"

#include <stdbool.h>
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

/* What "running" and "the period" are for the port under test */
#define SETTLE_TRIGGERS() ((void)0)
/* RAISE(): the timer's interrupt flag as the hardware leaves it before the handler acknowledges */
#if CMPROF_PORT == CMPROF_PORT_STM32_TIM
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM_BASE)) == 1u)
#define PERIOD_REG() (CMPROF_REG(CMPROF_TIM_ARR(CMPROF_TIM_BASE)) + 1u)
#define ACKED() (CMPROF_REG(CMPROF_TIM_SR(CMPROF_TIM_BASE)) == ~1u)
#define RAISE() (CMPROF_REG(CMPROF_TIM_SR(CMPROF_TIM_BASE)) = 1u)
#elif CMPROF_PORT == CMPROF_PORT_CMSDK_TIMER
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_CMSDK_CTRL(CMPROF_CMSDK_BASE)) == 9u)
#define PERIOD_REG() (CMPROF_REG(CMPROF_CMSDK_RELOAD(CMPROF_CMSDK_BASE)) + 1u)
#define ACKED() (CMPROF_REG(CMPROF_CMSDK_INTCLEAR(CMPROF_CMSDK_BASE)) == 1u)
#define RAISE() (CMPROF_REG(CMPROF_CMSDK_INTCLEAR(CMPROF_CMSDK_BASE)) = 0u)
#elif CMPROF_PORT == CMPROF_PORT_CMSDK_DUALTIMER || CMPROF_PORT == CMPROF_PORT_SP804
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_DUAL_CONTROL(CMPROF_DUALTIMER_BASE)) == 0xE2u)
#define PERIOD_REG() ((CMPROF_REG(CMPROF_DUAL_BGLOAD(CMPROF_DUALTIMER_BASE)) ?                               \
                       CMPROF_REG(CMPROF_DUAL_BGLOAD(CMPROF_DUALTIMER_BASE)) :                               \
                       CMPROF_REG(CMPROF_DUAL_LOAD(CMPROF_DUALTIMER_BASE))) + 1u)
#define ACKED() (CMPROF_REG(CMPROF_DUAL_INTCLR(CMPROF_DUALTIMER_BASE)) == 1u)
#define RAISE() (CMPROF_REG(CMPROF_DUAL_INTCLR(CMPROF_DUALTIMER_BASE)) = 0u)
#elif CMPROF_PORT == CMPROF_PORT_NRF_TIMER
#undef SETTLE_TRIGGERS
/* nRF task registers are triggers that read as 0: the fake file keeps what was written, so a test
 * forgets the STOP that cmprof_start() itself triggers before it starts the timer again. */
#define SETTLE_TRIGGERS() (CMPROF_REG(CMPROF_NRF_TASKS_STOP(CMPROF_NRF_BASE)) = 0u)
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_NRF_TASKS_START(CMPROF_NRF_BASE)) == 1u &&                          \
                         CMPROF_REG(CMPROF_NRF_TASKS_STOP(CMPROF_NRF_BASE)) == 0u &&                           \
                         CMPROF_REG(CMPROF_NRF_INTENSET(CMPROF_NRF_BASE)) == CMPROF_NRF_INT_COMPARE0)
#define PERIOD_REG() CMPROF_REG(CMPROF_NRF_CC0(CMPROF_NRF_BASE))
#define ACKED() (CMPROF_REG(CMPROF_NRF_EVENTS_COMPARE0(CMPROF_NRF_BASE)) == 0u)
#define RAISE() (CMPROF_REG(CMPROF_NRF_EVENTS_COMPARE0(CMPROF_NRF_BASE)) = 1u)
#elif CMPROF_PORT == CMPROF_PORT_RP2040_ALARM
#define RP_BIT (1u << CMPROF_RP2040_ALARM)
#define RP_ALARM CMPROF_REG(CMPROF_RP2040_ALARM_REG(CMPROF_RP2040_ALARM))
#define RP_NOW CMPROF_REG(CMPROF_RP2040_TIMERAWL)
/* An alarm fires when the counter reaches it: each tick happens at the time last armed. */
#define cmprof_tick(pc) (RP_NOW = RP_ALARM, cmprof_tick(pc))
#define TIMER_RUNNING() ((CMPROF_REG(CMPROF_RP2040_INTE) & RP_BIT) != 0u)
#define PERIOD_REG() (RP_ALARM - RP_NOW)
#define ACKED() (CMPROF_REG(CMPROF_RP2040_INTR) == RP_BIT) /* write 1 to clear */
#define RAISE() (CMPROF_REG(CMPROF_RP2040_INTR) = 0u)
#elif CMPROF_PORT == CMPROF_PORT_USER
static uint32_t user_period, user_running, user_acks;
void cmprof_user_timer_start(uint32_t period)
{
    user_period = period;
    user_running = 1;
}
void cmprof_user_timer_stop(void)
{
    user_running = 0;
}
void cmprof_user_timer_period(uint32_t period)
{
    user_period = period;
}
void cmprof_user_timer_ack(void)
{
    user_acks++;
}
#define TIMER_RUNNING() (user_running == 1u)
#define PERIOD_REG() user_period
#define ACKED() (user_acks > 0u)
#define RAISE() (user_acks = 0u)
#elif CMPROF_PORT == CMPROF_PORT_NONE
#define PERIOD_REG() 0u
#define ACKED() 1
#define RAISE() ((void)0)
#else
#define TIMER_RUNNING() (CMPROF_REG(CMPROF_SYST_CSR) == 7u)
#define PERIOD_REG() (CMPROF_REG(CMPROF_SYST_RVR) + 1u)
#define ACKED() 1 /* SysTick's flag clears itself */
#define RAISE() ((void)0)
#endif

#ifndef TIMER_RUNNING
/* Whether the sampler still counts: with no timer of its own, a tick after the limit is ignored. */
static bool counts_ticks(void)
{
    uint32_t before = cmprof_samples();
    cmprof_tick(0x08000200u);
    bool counted = cmprof_samples() != before;
    return counted;
}
#endif

static void test_start_programs_the_timer(void)
{
    fake_regs_clear();
#if CMPROF_PORT == CMPROF_PORT_SYSTICK
    CMPROF_REG(CMPROF_SCB_SHPR3) = 0xFFFF0000u; /* SysTick and PendSV least urgent */
    cmprof_start(2013u, 0u);
    CHECK(TIMER_RUNNING());
    CHECK(PERIOD_REG() == 2013u);
    CHECK(CMPROF_REG(CMPROF_SCB_SHPR3) == 0x00FF0000u); /* SysTick most urgent, PendSV untouched */
#elif CMPROF_PORT == CMPROF_PORT_NONE
    cmprof_start(2013u, 0u);
    CHECK(fake_regs_used() == 0u); /* not one register */
#elif CMPROF_PORT == CMPROF_PORT_USER
    cmprof_start(2013u, 0u);
    CHECK(TIMER_RUNNING() && PERIOD_REG() == 2013u && fake_regs_used() == 0u);
#elif CMPROF_PORT == CMPROF_PORT_SP804
    cmprof_start(2013u, 0u);
    CHECK(TIMER_RUNNING() && PERIOD_REG() == 2013u);
    for (uint32_t a = 0xE000E100u; a < 0xE000E500u; a += 4u) /* Cortex-A/R: the GIC is the user's, no NVIC */
        CHECK(!fake_reg_seen(a));
    CHECK(fake_reg_seen(0x1C110008u)); /* Versatile Express TIMER01's timer 1, by default */
#else
    CMPROF_REG(CMPROF_NVIC_IPR_WORD(CMPROF_PORT_IRQ)) = 0xFFFFFFFFu;
    cmprof_start(2013u, 0u);
    SETTLE_TRIGGERS();
    CHECK(TIMER_RUNNING());
    CHECK(PERIOD_REG() == 2013u);
    CHECK((CMPROF_REG(CMPROF_NVIC_ISER(CMPROF_PORT_IRQ)) & (1u << (CMPROF_PORT_IRQ & 31u))) != 0u);
    CHECK(CMPROF_REG(CMPROF_NVIC_IPR_WORD(CMPROF_PORT_IRQ)) ==
          ~(0xFFu << CMPROF_NVIC_IPR_SHIFT(CMPROF_PORT_IRQ))); /* only this line's byte: 0 */
#if CMPROF_PORT == CMPROF_PORT_STM32_TIM
    CHECK((CMPROF_REG(CMPROF_RCC_APB1ENR) & (1u << (CMPROF_STM32_TIM - 2))) != 0u);
    CHECK(CMPROF_REG(CMPROF_TIM_DIER(CMPROF_TIM_BASE)) == 1u);
#endif
#endif
    CHECK(cmprof_samples() == 0u);
    RAISE();
    CHECK(!ACKED() || CMPROF_PORT == CMPROF_PORT_SYSTICK || CMPROF_PORT == CMPROF_PORT_NONE);
    cmprof_tick(0x08000100u);
    CHECK(ACKED());
    cmprof_stop();
#ifdef TIMER_RUNNING
    CHECK(!TIMER_RUNNING());
#else
    CHECK(!counts_ticks());
#endif
}

#if CMPROF_PORT == CMPROF_PORT_RP2040_ALARM
/* A one-shot alarm: each period counts from the last alarm's time (a slow handler does not stretch
 * the periods), but an alarm already past when armed would wait 2^32 us: then from now. The stop
 * disarms it. */
static void test_rp2040_alarm_rearms(void)
{
    fake_regs_clear();
    RP_NOW = 0xFFFFF000u; /* the counter's low word wraps during the test */
    cmprof_start(1000u, 0u);
    CHECK(RP_ALARM == 0xFFFFF000u + 1000u);
    uint32_t before = RP_ALARM;
    RP_NOW = before + 300u; /* the handler runs 300 us late */
    (cmprof_tick)(0x08000100u);
    CHECK(RP_ALARM - before >= 1000u && RP_ALARM - before <= 1000u + CMPROF_JITTER); /* from the alarm, not now */
    before = RP_ALARM;
    RP_NOW = before + 5000u; /* later than a whole period: the next alarm from now */
    (cmprof_tick)(0x08000100u);
    CHECK(RP_ALARM - RP_NOW >= 1000u && RP_ALARM - RP_NOW <= 1000u + CMPROF_JITTER);
    cmprof_stop();
    CHECK(CMPROF_REG(CMPROF_RP2040_ARMED) == RP_BIT && !TIMER_RUNNING());
}
#endif

/* Issue 7: with any port but SysTick, no SysTick register and no SHPR3 is ever read or written. */
static void test_systick_untouched(void)
{
#if CMPROF_PORT != CMPROF_PORT_SYSTICK
    fake_regs_clear();
    cmprof_start(500u, 4u);
    for (int i = 0; i < 10; i++)
        cmprof_tick(0x08000100u + 2u * (uint32_t)i);
    cmprof_stop();
    for (uint32_t a = CMPROF_SYST_CSR; a <= 0xE000E01Cu; a += 4)
        CHECK(!fake_reg_seen(a));
    CHECK(!fake_reg_seen(CMPROF_SCB_SHPR3));
#endif
}

static void test_limit_stops_the_timer(void)
{
    fake_regs_clear();
    cmprof_start(100u, 3u);
    SETTLE_TRIGGERS();
    cmprof_tick(0x08000100u);
    cmprof_tick(0x08000102u);
#ifdef TIMER_RUNNING
    CHECK(TIMER_RUNNING());
#endif
    cmprof_tick(0x08000104u);
#if defined(CMPROF_LIMIT) && !CMPROF_LIMIT
    /* built with no limit (the Zephyr module's stream): sampling goes on until cmprof_stop() */
    cmprof_tick(0x08000106u);
#ifdef TIMER_RUNNING
    CHECK(TIMER_RUNNING());
#endif
    CHECK(cmprof_samples() == 4u);
    cmprof_stop();
#else
#ifdef TIMER_RUNNING
    CHECK(!TIMER_RUNNING());
#else
    CHECK(!counts_ticks());
#endif
    CHECK(cmprof_samples() == 3u);
#endif
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
        all_match &= reload == 1000u + (r & CMPROF_JITTER);
        seen_min = reload < seen_min ? reload : seen_min;
        seen_max = reload > seen_max ? reload : seen_max;
    }
    CHECK(all_match);
    CHECK(seen_min >= 1000u && seen_max <= 1000u + CMPROF_JITTER);
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

#ifdef CMPROF_TAG
/* Issue 7: a sample that interrupted an exception handler carries the exception, not the task. */
static void test_interrupt_time_is_not_the_tasks(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    test_tag = (void *)(uintptr_t)0x20000100u;
    cmprof_tick_frame(0x08000100u, 0x01000000u); /* thread mode: IPSR 0 */
    cmprof_tick_frame(0x08000200u, 0x01000016u); /* in IRQ 6 (exception 22) */
    cmprof_tick_frame(0x08000300u, 0x2100000Fu); /* in SysTick (exception 15) */
    cmprof_tick(0x08000400u);                    /* no frame: the task, as before */
    const char *expect = "prof raw n=4\n"
                         "p 08000100 08000200 08000300 08000400\n"
                         "g 20000100 fffffe16 fffffe0f 20000100\n"
                         "end\n";
    CHECK(strcmp(dump(), expect) == 0);
    CHECK(CMPROF_ISR_TAG(22) == 0xFFFFFE16u && CMPROF_IS_ISR_TAG(0xFFFFFE16u) && !CMPROF_IS_ISR_TAG(0x20000100u));
}

#if defined(CMPROF_THREAD_ENTRY) && CMPROF_THREAD_ENTRY
/* The Zephyr module's vector sends a sample whose frame is on PSP (thread mode) to
 * cmprof_tick_thread: the task's tag, as cmprof_tick_frame gives it with IPSR 0, and the same
 * count and ring as every sample. */
void cmprof_tick_thread(uint32_t pc);
static void test_thread_entry(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    test_tag = (void *)(uintptr_t)0x20000100u;
    cmprof_tick_thread(0x08000100u);
    cmprof_tick_frame(0x08000200u, 0x01000016u);
    test_tag = (void *)(uintptr_t)0x20000200u;
    cmprof_tick_thread(0x08000300u);
    const char *expect = "prof raw n=3\n"
                         "p 08000100 08000200 08000300\n"
                         "g 20000100 fffffe16 20000200\n"
                         "end\n";
    CHECK(strcmp(dump(), expect) == 0);
    CHECK(cmprof_samples() == 3u);
}
#endif
#endif

static void test_ring_keeps_the_newest(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    for (uint32_t k = 0; k < CMPROF_RING_N + 5u; k++)
        cmprof_tick(k * 2u);
    const char *d = dump();
    char first[64];
    snprintf(first, sizeof first, "prof raw n=%u taken=%u\np %08x ", (unsigned)CMPROF_RING_N,
             (unsigned)CMPROF_RING_N + 5u, 5u * 2u); /* and says how many it could not keep */
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

#ifdef CMPROF_DUMP_EARLIER
/* A dump's table of 2 slots (tag_full): a third task finds no slot, a deleted task's slot goes to
 * another block, a deleted task's block to a task of another name. The dump says the table was full
 * (its samples would show as raw blocks, blamed on a missed hook), names the deleted task whose slot
 * went (its samples keep its tag), and says which block carried two names (merged samples), each
 * before the task lines. Before: only "task 20000100 omega" and "task 20000400 delta". */
static void test_dump_says_full_and_reused(void)
{
    fake_regs_clear();
    cmprof_start(100u, 0u);
    cmprof_stream_task_new((void *)(uintptr_t)0x20000100u, "alpha", "IDLE");
    cmprof_stream_task_new((void *)(uintptr_t)0x20000200u, "beta", "IDLE");
    cmprof_stream_task_new((void *)(uintptr_t)0x20000300u, "gamma", "IDLE"); /* no slot left */
    cmprof_stream_task_gone((void *)(uintptr_t)0x20000200u);
    cmprof_stream_task_new((void *)(uintptr_t)0x20000400u, "delta", "IDLE"); /* beta's slot */
    cmprof_stream_task_gone((void *)(uintptr_t)0x20000100u);
    cmprof_stream_task_new((void *)(uintptr_t)0x20000100u, "omega", "IDLE"); /* alpha's block */
    cmprof_stream_task_later((void *)(uintptr_t)0x20000400u, "delta"); /* the same name again: nothing */
    const char *expect = "prof raw n=0\n"
                         "tasks slots=2 full=1 forgot=0\n"
                         "tasks reused 20000100\n"
                         "task 20000200 beta\n"
                         "task 20000100 alpha\n"
                         "task 20000100 omega\n"
                         "task 20000400 delta\n"
                         "end\n";
    CHECK(strcmp(dump(), expect) == 0);
    /* a third earlier name: the oldest goes, and the dump counts it */
    cmprof_stream_task_later((void *)(uintptr_t)0x20000400u, "epsilon");
    const char *d = dump();
    CHECK(strstr(d, "tasks slots=2 full=1 forgot=1\n") != NULL);
    CHECK(strstr(d, "task 20000200 beta\n") == NULL && strstr(d, "task 20000400 delta\ntask 20000100 omega") != NULL);
}
#endif

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
    RUN_TEST(test_systick_untouched);
#if CMPROF_PORT == CMPROF_PORT_RP2040_ALARM
    RUN_TEST(test_rp2040_alarm_rearms);
#endif
#ifdef CMPROF_TAG
    RUN_TEST(test_interrupt_time_is_not_the_tasks);
#if defined(CMPROF_THREAD_ENTRY) && CMPROF_THREAD_ENTRY
    RUN_TEST(test_thread_entry);
#endif
#endif
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
#ifdef CMPROF_DUMP_EARLIER
    RUN_TEST(test_dump_says_full_and_reused); /* last: its tasks stay in the table */
#endif
#endif
    return check_summary();
}
