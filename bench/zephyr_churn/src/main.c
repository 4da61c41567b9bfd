/* The churn of docs/performance.md's Zephyr rows: two steady threads (a busy one and a periodic
 * one) and a pool of 100 workers that the manager (main) aborts and re-creates round the pool,
 * CHURN_HZ times a second,
 * each named with k_thread_name_set: one of 100 names (w00..w99, the worker's place; or, with
 * CHURN_UNIQUE 2, worker_00..worker_99: 9 characters that share their first word) or, with
 * CHURN_UNIQUE 1, a name of its own (u + a count). A worker spins a little, then sleeps, so a share
 * of them is sampled between two creations. The rate, the names and the run's length are constants
 * in the ELF (churn_config) that measure.py sets in a copy, so that one build serves every row; the
 * run ends with a semihosting exit (QEMU: -semihosting-config enable=on). */
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#ifndef CHURN_PAD
#define CHURN_PAD 0
#endif
#if CHURN_PAD
/* CHURN_PAD bytes of nops, the file's first code: every function after them moves (CMakeLists.txt) */
#define CHURN_STR(x) #x
#define CHURN_XSTR(x) CHURN_STR(x)
__attribute__((used, naked)) static void churn_pad(void)
{
    __asm__(".rept " CHURN_XSTR(CHURN_PAD / 2) "\n\tnop\n\t.endr");
}
#endif

#define WORKERS 100
#define WORKER_STACK 512

static struct k_thread workers[WORKERS];
static K_THREAD_STACK_ARRAY_DEFINE(worker_stacks, WORKERS, WORKER_STACK);
static volatile uint32_t sink;

/* creations a second (0: none, at most 1,000), the names (0: w00..w99, 1: unique, 2: worker_00..worker_99),
 * milliseconds to run */
volatile const uint32_t churn_config[3] = {1000u, 0u, 6500u};
#define CHURN_HZ churn_config[0]
#define CHURN_UNIQUE churn_config[1]
#define CHURN_RUN_MS churn_config[2]

static void semihosting_exit(void)
{
    static const uint32_t args[2] = {0x20026u, 0u}; /* ADP_Stopped_ApplicationExit */
    register uint32_t r0 __asm__("r0") = 0x20u;      /* SYS_EXIT_EXTENDED */
    register const uint32_t *r1 __asm__("r1") = args;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
}

static void spin(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        sink += i;
}

static void worker(void *a, void *b, void *c)
{
    ARG_UNUSED(b);
    ARG_UNUSED(c);
    uint32_t n = 400u + 16u * (uint32_t)(uintptr_t)a; /* about a quarter of the CPU in all */
    for (;;) {
        spin(n);
        k_msleep(100); /* (each sleep walks the kernel's timeout list: 100 of them) */
    }
}

static void steady_busy(void *a, void *b, void *c)
{
    ARG_UNUSED(a);
    ARG_UNUSED(b);
    ARG_UNUSED(c);
    for (;;) {
        spin(8000u); /* about a quarter of the CPU */
        k_msleep(5);
    }
}

static void steady_tick(void *a, void *b, void *c)
{
    ARG_UNUSED(a);
    ARG_UNUSED(b);
    ARG_UNUSED(c);
    for (;;) {
        spin(3000u);
        k_msleep(10);
    }
}

K_THREAD_DEFINE(busy, 768, steady_busy, NULL, NULL, NULL, 8, 0, 0);
K_THREAD_DEFINE(ticker, 768, steady_tick, NULL, NULL, NULL, 6, 0, 0);

static void start_worker(uint32_t k, uint32_t count)
{
    char name[12];
    if (CHURN_UNIQUE == 1u)
        snprintk(name, sizeof name, "u%06u", count);
    else if (CHURN_UNIQUE == 2u)
        snprintk(name, sizeof name, "worker_%02u", k); /* 100 names of 9 characters, one first word */
    else
        snprintk(name, sizeof name, "w%02u", k);
    k_tid_t t = k_thread_create(&workers[k], worker_stacks[k], WORKER_STACK, worker, (void *)(uintptr_t)k,
                                NULL, NULL, 7, 0, K_FOREVER);
    k_thread_name_set(t, name);
    k_thread_start(t);
}

int main(void)
{
    uint32_t count = 0;
#if CHURN_PAD
    __asm__ volatile("" : : "r"(churn_pad)); /* (kept by the link: it drops unreferenced sections) */
#endif
    for (uint32_t k = 0; k < WORKERS; k++)
        start_worker(k, count++);
    printk("churn: %d workers, %u creations a second, %s names\n", WORKERS, CHURN_HZ,
           CHURN_UNIQUE == 1u ? "unique" : CHURN_UNIQUE == 2u ? "100 long" : "100");
    /* CHURN_HZ creations a second: one every 1000 / CHURN_HZ ms of a periodic timer (1 ms ticks;
     * k_msleep(1) would wait 2 ticks) */
    static struct k_timer pace;
    k_timer_init(&pace, NULL, NULL);
    k_timer_start(&pace, K_MSEC(CHURN_HZ ? 1000 / CHURN_HZ : 100), K_MSEC(CHURN_HZ ? 1000 / CHURN_HZ : 100));
    for (uint32_t k = 0; k_uptime_get() < CHURN_RUN_MS; k = (k + 1u) % WORKERS) {
        k_timer_status_sync(&pace);
        if (CHURN_HZ == 0)
            continue;
        k_thread_abort(&workers[k]);
        start_worker(k, count++);
    }
    printk("churn: %u creations\n", count);
    semihosting_exit();
    return 0;
}
