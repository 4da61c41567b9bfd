/* One function called from two places with known weights, with no cmprof code: call stacks through
 * a GDB server. caller_a calls work() 7 times a round and caller_b 3 times, with the same
 * iterations, so 70 % of work()'s instructions run under caller_a and 30 % under caller_b; the
 * callers' own loops are a few instructions a call.
 *   ROUNDS   rounds of caller_a(), caller_b()
 *   SCALE    (default 1) times work()'s iterations a call: longer stays under each caller */
#include "board.h"
#include "work.h"

#ifndef ROUNDS
#define ROUNDS 4000u
#endif
#ifndef SCALE
#define SCALE 1u
#endif

NOP_LOOP(__attribute__((noinline)), work)

/* counted after the calls, so that no call is a tail call (a tail call's frame is gone) */
static volatile uint32_t rounds_a, rounds_b;

__attribute__((noinline)) void caller_a(void)
{
    for (uint32_t i = 0; i < 7u; i++)
        work(100 * SCALE);
    rounds_a++;
}

__attribute__((noinline)) void caller_b(void)
{
    for (uint32_t i = 0; i < 3u; i++)
        work(100 * SCALE);
    rounds_b++;
}

int main(void)
{
    board_init();
    board_puts("boot: callers firmware, no sampler\n");
    truth_begin();
    for (uint32_t k = 0; k < ROUNDS; k++) {
        caller_a();
        caller_b();
    }
    truth_end();
    board_puts("done\n");
    board_exit(0);
}
