/* Cost per sample: the same work with the sampler off and on. The truth plugin counts the
 * handler's instructions exactly; the firmware also prints the difference of the two spans.
 *   PEND_IRQ=n   the timer does not interrupt in QEMU (its STM32 timers): pend IRQ n by software
 *                every PERIOD loop iterations instead, so the port's own handler still runs */
#include "board.h"
#include "cmprof.h"
#include "work.h"

#ifndef PERIOD
#define PERIOD 1691u
#endif

void *volatile cost_tag; /* the tag a CMPROF_TAG=cost_tag build stores */

NOP_LOOP(__attribute__((noinline)), hot_a)

int main(void)
{
    board_init();
    uint32_t t0 = board_clock();
    hot_a(250000u);
    uint32_t off = board_clock() - t0;
    cmprof_start(PERIOD, 0u);
    t0 = board_clock();
    truth_begin();
#ifdef PEND_IRQ
    for (uint32_t done = 0; done < 250000u; done += PERIOD) {
        hot_a(PERIOD);
        *(volatile uint32_t *)(0xE000E200u + 4u * (PEND_IRQ / 32u)) = 1u << (PEND_IRQ % 32u); /* NVIC_ISPR */
    }
#else
    hot_a(250000u);
#endif
    truth_end();
    uint32_t on = board_clock() - t0;
    cmprof_stop();
    uint32_t n = cmprof_samples();
    board_puts("cost off=");
    board_putdec(off);
    board_puts(" on=");
    board_putdec(on);
    board_puts(" samples=");
    board_putdec(n);
    board_putc('\n');
    board_exit(0);
}
