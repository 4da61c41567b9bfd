/* cmprof's sample: three workers take 10, 20 and 30 % of the CPU (each spins for its share of every
 * 100 ms), the 30 % one inside a section timer, and the application keeps a thread-switch hook of
 * its own beside cmprof's. Profile it with cmprof-top (docs/zephyr.md): by thread, work10, work20
 * and work30 near 10, 20 and 30 %, idle most of the rest; the section "work30 burst" near 30 ms. */
#include <zephyr/kernel.h>
#include <zephyr/sys/atomic.h>

#include <cmprof.h>
#include <rtos/cmprof_zephyr.h>

#define PERIOD_MS 100

/* The application's own tracing hook: cmprof runs first and then calls it. */
static atomic_t switches;

void sys_trace_thread_switched_in_user(void)
{
    atomic_inc(&switches);
}

/* Spin until `ms` of this period have passed on the kernel's clock. */
#define SPIN_FOR(ms)                                                                               \
    do {                                                                                           \
        uint32_t start_ = k_cycle_get_32(), need_ = (uint32_t)((uint64_t)(ms) *                    \
                                                   sys_clock_hw_cycles_per_sec() / 1000u);          \
        while (k_cycle_get_32() - start_ < need_)                                                  \
            for (volatile int i_ = 0; i_ < 200; i_++)                                              \
                ;                                                                                  \
    } while (0)

static __noinline void work_10(void)
{
    SPIN_FOR(PERIOD_MS / 10);
}

static __noinline void work_20(void)
{
    SPIN_FOR(PERIOD_MS / 5);
}

static __noinline void work_30(void)
{
    cmprof_section_start(0);
    SPIN_FOR(PERIOD_MS * 3 / 10);
    cmprof_section_stop(0);
}

static void worker(void *work, void *b, void *c)
{
    ARG_UNUSED(b);
    ARG_UNUSED(c);
    int64_t next = k_uptime_get();
    for (;;) {
        ((void (*)(void))work)();
        next += PERIOD_MS;
        k_sleep(K_TIMEOUT_ABS_MS(next));
    }
}

K_THREAD_DEFINE(work10, 1024, worker, work_10, NULL, NULL, 5, 0, 0);
K_THREAD_DEFINE(work20, 1024, worker, work_20, NULL, NULL, 5, 0, 0);
K_THREAD_DEFINE(work30, 1024, worker, work_30, NULL, NULL, 5, 0, 0);

int main(void)
{
    cmprof_zephyr_section_name(0, "work30 burst");
    k_msleep(2000);
    printk("cmprof sample: the application's own switch hook ran %ld times\n", (long)atomic_get(&switches));
    return 0;
}
