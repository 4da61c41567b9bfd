/* Cost per sample: the same work with the sampler off and on. The truth plugin counts the
 * handler's instructions exactly; the firmware also prints the difference of the two spans. */
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
    hot_a(250000u);
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
