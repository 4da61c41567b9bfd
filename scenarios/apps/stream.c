/* Live streaming: the three loops, sampled with jitter, streamed as checked lines while they run.
 *   DRAIN_EVERY=k   drain once every k loop iterations, one line at a time (k large: the ring
 *                   overflows and the loss counter must say so)
 *   STREAM_WRITE=1  lines go out whole through a write() (as to a DMA UART or RTT), not putc
 *   STARVE_EVERY=k  every k loop iterations a burst of STARVE_N iterations of hot_busy runs without
 *                   a drain (as a thread above the drain's priority that does not sleep): the ring
 *                   fills exactly while it runs, so what is lost is never a random subset */
#include "board.h"
#include "cmprof.h"
#include "work.h"

#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 10000u
#endif
#ifndef DRAIN_EVERY
#define DRAIN_EVERY 1u
#endif
#ifndef STREAM_WRITE
#define STREAM_WRITE 0
#endif
#ifndef STARVE_EVERY
#define STARVE_EVERY 0u
#endif
#ifndef STARVE_N
#define STARVE_N 250000u
#endif

#if STREAM_WRITE
/* The board's whole-line output: here the UART a byte at a time, where a DMA transfer would go. */
__attribute__((noinline)) static void board_write(const char *buf, uint32_t len)
{
    while (len--)
        board_putc(*buf++);
}
#endif

#ifdef BOARD_r5 /* Cortex-R5 on vexpress-a15: code in its SRAM */
#define CODE_BASE 0x2E000000u
#define BUILD_ID cmprof_build_id_note
#elif defined(BOARD_virt) /* Cortex-A on QEMU virt: RAM from 0x40000000, the build-id from cmprof_build_id.ld */
#define CODE_BASE 0x40000000u
#define BUILD_ID cmprof_build_id_note
#else
#define CODE_BASE 0x08000000u
#define BUILD_ID __build_id
extern const uint32_t __build_id[];
#endif

#ifdef CMPROF_TAG
/* three tasks, each running one of the loops: the tagged stream's per-sample cost */
void *volatile current_task;
static char task_a[] = "task_a", task_b[] = "task_b", task_c[] = "task_c";
#if STARVE_EVERY
static char task_busy[] = "busy";
#endif
#define RUN_AS(task) (current_task = (task))
#else
#define RUN_AS(task) ((void)0)
#endif

NOP_LOOP(__attribute__((noinline)), hot_a)

NOP_LOOP(__attribute__((noinline)), hot_b)

NOP_LOOP(__attribute__((noinline)), hot_c)

NOP_LOOP(__attribute__((noinline, used)), hot_busy)

int main(void)
{
    board_init();
    board_puts("boot: stream scenario\n");
    const struct cmprof_stream_info info = {.clock_hz = 168000000u, .timer_hz = 168000000u, .period = PERIOD,
                                            .jitter = CMPROF_JITTER, .code_base = CODE_BASE,
                                            .build_id_note = BUILD_ID,
#if STREAM_WRITE
                                            .write = board_write
#endif
    };
    cmprof_stream_announce(board_putc, &info);
#ifdef CMPROF_TAG
    cmprof_stream_task(board_putc, task_a, task_a);
    cmprof_stream_task(board_putc, task_b, task_b);
    cmprof_stream_task(board_putc, task_c, task_c);
#if STARVE_EVERY
    cmprof_stream_task(board_putc, task_busy, task_busy);
#endif
#endif
    cmprof_start(PERIOD, SAMPLES);
    truth_begin();
    uint32_t k = 0;
    while (cmprof_samples() < SAMPLES) {
        RUN_AS(task_a);
        hot_a(700);
        RUN_AS(task_b);
        hot_b(200);
        RUN_AS(task_c);
        hot_c(100);
#if STARVE_EVERY
        if (k % STARVE_EVERY == STARVE_EVERY - 1u) {
            RUN_AS(task_busy);
            hot_busy(STARVE_N);
        }
#endif
        if (++k % DRAIN_EVERY == 0u)
            cmprof_stream_drain(board_putc, DRAIN_EVERY == 1u ? 8u : 1u);
    }
    truth_end();
    cmprof_stream_flush(board_putc);
    board_puts("taken=");
    board_putdec(cmprof_samples());
#if !CMPROF_HIST
    board_puts(" lost=");
    board_putdec(cmprof_stream_lost());
#endif
    board_putc('\n');
    board_exit(0);
}
