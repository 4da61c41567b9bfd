/* cmprof in a Zephyr application: connects the sampling timer's vector, starts the sampler and
 * drains it from a thread (CONFIG_CMPROF_DRAIN_PRIORITY, the lowest application priority by
 * default), whole lines at a time on the UART
 * chosen as cmprof,uart (default zephyr,console), beside printk on the same UART. */
#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <zephyr/linker/linker-defs.h>
#include <zephyr/init.h>
#include <zephyr/sys/atomic.h>
#include <zephyr/sys/printk-hooks.h>

#include "cmprof.h"
#include "rtos/cmprof_zephyr.h"
#if defined(CONFIG_CMPROF_TIMER_COUNTER)
#include "cmprof_counter.h"
#endif

#if DT_HAS_CHOSEN(cmprof_uart)
#define CMPROF_UART_NODE DT_CHOSEN(cmprof_uart)
#else
#define CMPROF_UART_NODE DT_CHOSEN(zephyr_console)
#endif
static const struct device *const cmprof_uart = DEVICE_DT_GET(CMPROF_UART_NODE);

#if CONFIG_CMPROF_TIMER_HZ
#define CMPROF_TIMER_CLOCK CONFIG_CMPROF_TIMER_HZ
#else
#define CMPROF_TIMER_CLOCK CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC
#endif

/* The vector: reads the stacked PC and xPSR from the stack the frame is on (EXC_RETURN bit 2) and
 * tail-calls the tick, as the library's own handlers do: 7 instructions a sample, FreeRTOS's. The
 * idle thread's samples, taken right after arch_cpu_idle's cpsie i, are charged to arch_cpu_idle
 * by the host (it finds that resume point in the ELF): the tick pays nothing for them (6 a sample
 * when the tick did it). Connected direct, without Zephyr's interrupt wrapper, which would hide
 * EXC_RETURN and cost a dozen instructions more per sample; at the most urgent priority, above the
 * kernel's interrupt locks (IRQ_ZERO_LATENCY; ARMv6-M has no such level: its locks mask every
 * interrupt). */
#if !defined(CONFIG_CMPROF_TIMER_COUNTER)
void cmprof_zephyr_isr(void);
#if defined(CMPROF_THREAD_ENTRY) && CMPROF_THREAD_ENTRY
/* ARMv7-M: a frame on PSP is a thread's (Zephyr's handlers run on MSP), so its sample goes to
 * cmprof_tick_thread with no xPSR to load and no exception number to test: 5 instructions here and
 * none for the mode in the tick, where the library's prologue took 7 and the tick 2 (samples on MSP,
 * an interrupt's, take that path, 1 more for the branch). */
#if !defined(__ARM_ARCH_7M__) && !defined(__ARM_ARCH_7EM__)
#error "CMPROF_THREAD_ENTRY: the vector below is ARMv7-M's (zephyr/CMakeLists.txt sets it for that only)"
#endif
void cmprof_tick_thread(uint32_t pc);
__attribute__((naked)) void cmprof_zephyr_isr(void)
{
    __asm volatile("tst   lr, #4        \n" /* EXC_RETURN bit 2: the frame is on PSP */
                   "beq   1f            \n"
                   "mrs   r0, psp       \n"
                   "ldr   r0, [r0, #24] \n" /* word 6 of the frame: the interrupted PC */
                   "b     cmprof_tick_thread \n"
                   "1: mrs r0, msp      \n"
                   "ldr   r1, [r0, #28] \n" /* the stacked xPSR: its exception number */
                   "ldr   r0, [r0, #24] \n"
                   "b     cmprof_tick_frame \n");
}
#else
CMPROF_DEFINE_ISR(cmprof_zephyr_isr)
#endif
#endif
#if defined(CONFIG_ZERO_LATENCY_IRQS)
#define CMPROF_IRQ_FLAGS IRQ_ZERO_LATENCY
#else
#define CMPROF_IRQ_FLAGS 0
#endif

/* printk and cmprof share the UART: a cmprof line starts on a fresh line, and no thread can print
 * in the middle of one (the scheduler is locked while it goes out; an ISR's printk still can,
 * and then that one line fails its check on the host and is counted, never misread). */
static printk_hook_fn_t printk_next;
static volatile bool printk_mid_line;

static int printk_tap(int c)
{
    printk_mid_line = c != '\n';
    return printk_next(c);
}

static void tap_printk(void)
{
    printk_next = __printk_get_hook();
    if (printk_next != NULL && DT_SAME_NODE(CMPROF_UART_NODE, DT_CHOSEN(zephyr_console)))
        __printk_hook_install(printk_tap);
}

static void line_begin(void)
{
    k_sched_lock();
    if (printk_mid_line) {
        uart_poll_out(cmprof_uart, '\n');
        printk_mid_line = false;
    }
}

/* Section timers for the application (cmprof.h's cmprof_section_start/stop): on the DWT cycle
 * counter where it runs, else on the kernel's cycle counter. Ready before main(). */
static uint32_t section_hz; /* 0: the core clock (DWT) */

static uint32_t kernel_cycles(void)
{
    return k_cycle_get_32();
}

static int cmprof_sections_setup(void)
{
    if (cmprof_sections_init(NULL) != CMPROF_CLOCK_OK) {
        (void)cmprof_sections_init(kernel_cycles);
        section_hz = (uint32_t)sys_clock_hw_cycles_per_sec();
    }
    return 0;
}
SYS_INIT(cmprof_sections_setup, APPLICATION, 0);

#if defined(CONFIG_CMPROF_TRANSPORT_STREAM)

/* The name cache's ways made empty before the kernel makes its first thread (cmprof_zephyr.h) */
static int cmprof_names_early(void)
{
    cmprof_zephyr_names_early();
    return 0;
}
SYS_INIT(cmprof_names_early, PRE_KERNEL_1, 0);

/* A line, a byte at a time into the driver's poll_out, taken from its API once: uart_poll_out()
 * loads the API and its function again at every byte (the drain is a kernel thread, so no system
 * call is skipped). A byte costs its load, the device's argument and the call (3 instructions); the
 * loop's test (the pointer against the line's end: a compare and a branch) comes once in 32 bytes,
 * and the rest of a line (len % 32) enters the loop part-way (Duff's device): about 3.1 a byte in
 * all (16-byte passes counted down took 4 a pass). The driver's own work a byte is the same call as
 * before. */
static void write_line(const char *buf, uint32_t len)
{
    void (*const poll_out)(const struct device *, unsigned char) =
        ((const struct uart_driver_api *)cmprof_uart->api)->poll_out;
    const struct device *const uart = cmprof_uart;
    const unsigned char *p = (const unsigned char *)buf, *end = p + len;
    __asm__("" : "+r"(end)); /* the end kept in a register (GCC would add it up again each pass) */
    line_begin();
    if (len != 0u) {
        switch (len % 32u) { /* the first pass sends len % 32 bytes (32 when none), each later one 32 */
        case 0u:
            do {
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 31u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 30u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 29u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 28u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 27u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 26u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 25u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 24u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 23u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 22u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 21u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 20u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 19u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 18u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 17u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 16u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 15u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 14u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 13u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 12u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 11u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 10u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 9u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 8u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 7u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 6u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 5u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 4u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 3u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 2u:
                poll_out(uart, *p++);
                __attribute__((fallthrough));
            case 1u:
                poll_out(uart, *p++);
            } while (p != end);
        }
    }
    k_sched_unlock();
}

/* Names the application gave its sections, sent by the drain (the stream's lines are its own). */
static const char *volatile section_names[CMPROF_SECTIONS];
static atomic_t section_names_new;

void cmprof_zephyr_section_name(uint32_t index, const char *name)
{
    if (index >= CMPROF_SECTIONS)
        return;
    section_names[index] = name;
    atomic_or(&section_names_new, (atomic_val_t)BIT(index));
}

/* New section names, then, once a second (`stats`), every section's statistics. */
static void send_sections(bool stats)
{
    /* (a pass with no new name, nearly every one, looks at no section: 48 instructions a pass
     * before, 2.4 a sample) */
    uint32_t fresh = atomic_get(&section_names_new) ? (uint32_t)atomic_set(&section_names_new, 0) : 0u;
    for (; fresh != 0u; fresh &= fresh - 1u) {
        uint32_t i = (uint32_t)__builtin_ctz(fresh);
        cmprof_stream_section_name(NULL, i, section_names[i]);
    }
    if (stats)
        cmprof_stream_sections(NULL);
}

/* The drain's sleep after a pass, in microseconds: until DRAIN_LINES lines can be full, at most
 * CONFIG_CMPROF_DRAIN_MS. A pass costs about 120 instructions besides its lines (the stream's look
 * at the ring, its loss and announce checks, the thread's loop): woken every 20 ms at 1 kHz, a pass
 * found 0.6 lines on average (254 passes, 171 lines), 5.7 instructions a sample in bench/zephyr_churn
 * without churn; now 126 passes, 4.7. The stream says for how many more samples no line can be full
 * (cmprof_stream_quiet_to, set at each look at the ring: `left` is 1 to CMPROF_STREAM_LINE then,
 * else a line waits); `sample_us` is the timer's mean period. Not 3 lines: at 2 kHz their 48 ms
 * held enough indexes of names still in the ring that 1,000 new thread names a second filled the
 * 128 entries (16 samples unnamed); 2 lines (32 ms there, 65 ms at the default 1 kHz) did not. The
 * names the tick retires meanwhile wait in a ring sized for that (zephyr/CMakeLists.txt:
 * CMPROF_TASKS_RETIRED; with 8, a line's, 3-line passes left a late host samples unnamed). A ring
 * of 64 samples (the least configure takes with the stream) would be full at the wake: the sleep is
 * for half the ring at most. */
#define DRAIN_LINES 2u
static uint32_t drain_wait_us(uint32_t left, uint32_t sample_us)
{
    uint32_t most = CONFIG_CMPROF_DRAIN_MS * 1000u;
    if (left == 0u || left > CMPROF_STREAM_LINE)
        left = 1u; /* a line is full or nearly */
    uint32_t samples = left + (DRAIN_LINES - 1u) * CMPROF_STREAM_LINE;
    if (samples > CONFIG_CMPROF_RING_SIZE / 2u)
        samples = CONFIG_CMPROF_RING_SIZE / 2u; /* a small ring: half of it, the rest for the wake's lateness */
    return sample_us < most / samples ? samples * sample_us : most;
}

/* The sleep after a pass (drain_wait_us), and the rest of it when the kernel's clock ran ahead of
 * the sampling timer's: then two lines are not there yet at the wake, and a pass would send one
 * (in QEMU, -icount shift=5,sleep=off, the no-churn bench woke after 26 samples where 34 were
 * planned: 124 passes for 170 lines). A look at the ring, and the samples still missing slept, once,
 * within CONFIG_CMPROF_DRAIN_MS in all. */
static void drain_sleep(uint32_t sample_us)
{
    uint32_t us = drain_wait_us(cmprof_stream_quiet_to + 1u - cmprof_samples(), sample_us);
    k_usleep((int32_t)us);
    uint32_t want = DRAIN_LINES * CMPROF_STREAM_LINE, most = CONFIG_CMPROF_DRAIN_MS * 1000u;
    if (want > CONFIG_CMPROF_RING_SIZE / 2u)
        want = CONFIG_CMPROF_RING_SIZE / 2u;
    uint32_t have = cmprof_stream_pending();
    if (have < want && us < most) {
        uint32_t more = (want - have) * sample_us;
        k_usleep((int32_t)(more < most - us ? more : most - us));
    }
}

static void run(uint32_t timer_hz, uint32_t period, uint32_t jitter)
{
    const struct cmprof_stream_info info = { /* copied by the announce */
        .clock_hz = CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC,
        .timer_hz = timer_hz,
        .period = period,
        .jitter = jitter,
        .code_base = (uint32_t)(uintptr_t)__rom_region_start,
        .section_hz = section_hz,
        .write = write_line,
    };
    cmprof_stream_announce(NULL, &info);
    /* a sample's mean time (one 64-bit division, before sampling starts) */
    uint64_t us = ((uint64_t)period + jitter / 2u) * 1000000u / (timer_hz ? timer_hz : 1u);
    const uint32_t sample_us = us > 0u ? (uint32_t)(us < 1000000u ? us : 1000000u) : 1u;
    const uint32_t second = 1000000u / sample_us; /* samples */
    cmprof_start(period, 0u);
    for (uint32_t stats_at = 0;;) {
        cmprof_stream_drain(NULL, CONFIG_CMPROF_RING_SIZE / CMPROF_STREAM_LINE);
        bool stats = cmprof_samples() - stats_at >= second;
        if (stats)
            stats_at = cmprof_samples();
        send_sections(stats);
        drain_sleep(sample_us);
    }
}

#else /* CONFIG_CMPROF_TRANSPORT_DUMP */

void cmprof_zephyr_section_name(uint32_t index, const char *name)
{
    ARG_UNUSED(index);
    ARG_UNUSED(name); /* a dump carries no sections */
}

/* cmprof_dump() writes a character at a time: hold the scheduler for each whole line. */
static void dump_putc(char c)
{
    static bool in_line;
    if (!in_line) {
        line_begin();
        in_line = true;
    }
    uart_poll_out(cmprof_uart, (unsigned char)c);
    if (c == '\n') {
        in_line = false;
        k_sched_unlock();
    }
}

static void run(uint32_t timer_hz, uint32_t period, uint32_t jitter)
{
    ARG_UNUSED(timer_hz);
    ARG_UNUSED(jitter);
    cmprof_start(period, CONFIG_CMPROF_DUMP_SAMPLES);
    while (cmprof_samples() < CONFIG_CMPROF_DUMP_SAMPLES)
        k_msleep(CONFIG_CMPROF_DRAIN_MS);
    cmprof_stop();
    cmprof_dump(dump_putc);
}

#endif

static void cmprof_thread(void *a, void *b, void *c)
{
    ARG_UNUSED(a);
    ARG_UNUSED(b);
    ARG_UNUSED(c);
    if (!device_is_ready(cmprof_uart))
        return;
    tap_printk();
    cmprof_zephyr_names_start();
    uint32_t timer_hz = CMPROF_TIMER_CLOCK, period = CONFIG_CMPROF_PERIOD, jitter = CONFIG_CMPROF_JITTER;
#if defined(CONFIG_CMPROF_TIMER_COUNTER)
    int err = cmprof_zephyr_counter_setup(&timer_hz, &period, &jitter);
    if (err) {
        printk("cmprof: the counter " DT_NODE_FULL_NAME(CMPROF_ZEPHYR_COUNTER) " cannot sample (%s)\n",
               err == -ERANGE ? "slower than twice CONFIG_CMPROF_SAMPLE_HZ" : "not ready");
        return;
    }
#elif defined(CMPROF_ZEPHYR_IRQ)
    IRQ_DIRECT_CONNECT(CMPROF_ZEPHYR_IRQ, 0, cmprof_zephyr_isr, CMPROF_IRQ_FLAGS);
    irq_enable(CMPROF_ZEPHYR_IRQ);
#endif
    run(timer_hz, period, jitter);
}

/* CONFIG_CMPROF_DRAIN_PRIORITY 255: the lowest application priority; else as given (Kconfig's help:
 * a thread that never sleeps above the drain starves it). */
#if CONFIG_CMPROF_DRAIN_PRIORITY == 255
#define CMPROF_DRAIN_PRIORITY K_LOWEST_APPLICATION_THREAD_PRIO
#else
#define CMPROF_DRAIN_PRIORITY CONFIG_CMPROF_DRAIN_PRIORITY
#endif
K_THREAD_DEFINE(cmprof_drain, CONFIG_CMPROF_THREAD_STACK_SIZE, cmprof_thread, NULL, NULL, NULL,
                CMPROF_DRAIN_PRIORITY, 0, CONFIG_CMPROF_START_DELAY_MS);
