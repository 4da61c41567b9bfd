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
#include <zephyr/sys/printk-hooks.h>

#include "cmprof.h"
#include "rtos/cmprof_zephyr.h"

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
 * tail-calls the sampler, as the library's own handlers do. Connected direct, without Zephyr's
 * interrupt wrapper, which would hide EXC_RETURN and cost a dozen instructions more per sample. */
void cmprof_zephyr_isr(void);
CMPROF_DEFINE_ISR(cmprof_zephyr_isr)

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

#if defined(CONFIG_CMPROF_TRANSPORT_STREAM)

static void write_line(const char *buf, uint32_t len)
{
    line_begin();
    for (uint32_t i = 0; i < len; i++)
        uart_poll_out(cmprof_uart, (unsigned char)buf[i]);
    k_sched_unlock();
}

static void run(void)
{
    const struct cmprof_stream_info info = { /* copied by the announce */
        .clock_hz = CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC,
        .timer_hz = CMPROF_TIMER_CLOCK,
        .period = CONFIG_CMPROF_PERIOD,
        .jitter = CONFIG_CMPROF_JITTER,
        .code_base = (uint32_t)(uintptr_t)__rom_region_start,
        .write = write_line,
    };
    cmprof_stream_announce(NULL, &info);
    cmprof_start(CONFIG_CMPROF_PERIOD, 0u);
    for (;;) {
        cmprof_stream_drain(NULL, CONFIG_CMPROF_RING_SIZE / CMPROF_STREAM_LINE);
        k_msleep(CONFIG_CMPROF_DRAIN_MS);
    }
}

#else /* CONFIG_CMPROF_TRANSPORT_DUMP */

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

static void run(void)
{
    cmprof_start(CONFIG_CMPROF_PERIOD, CONFIG_CMPROF_DUMP_SAMPLES);
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
#ifdef CMPROF_ZEPHYR_IRQ
    /* priority 0 here; cmprof_start() then raises the line to the hardware's most urgent level,
     * above the kernel's interrupt lock, so samples land inside critical sections too */
    IRQ_DIRECT_CONNECT(CMPROF_ZEPHYR_IRQ, 0, cmprof_zephyr_isr, 0);
#endif
    run();
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
