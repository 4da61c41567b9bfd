/* Two tasks on our scheduler (sched.c) with no cmprof code, for per-task profiling through a
 * GDB server: cmprof-top reads current_task while the core is halted (--task-var current_task)
 * and each task's name from its control block (--task-name-offset 4). motor runs hot_a, link
 * runs hot_b and hot_c, so the truth per task is the truth per function; the loops share one
 * body, so wall-time shares under QEMU are instruction shares.
 *   ROUNDS   rounds of motor before the end
 *   COOP     switch by a plain call (sched_pass), not through PendSV
 *   SCALE    (default 1) times the loop iterations between switches: fewer calls and switches, which
 *            cost QEMU more host time than loop instructions and so draw more wall-clock halts */
#include "board.h"
#include "sched.h"
#include "work.h"

#include <stddef.h>

#ifndef SCALE
#define SCALE 1u
#endif
#ifndef ROUNDS
#define ROUNDS 1000u
#endif

_Static_assert(offsetof(struct task, name) == 4, "the scenario passes --task-name-offset 4");

#ifdef COOP
#define YIELD() sched_pass()
#else
#define YIELD() sched_yield()
#endif

NOP_LOOP(__attribute__((noinline)), hot_a)

NOP_LOOP(__attribute__((noinline)), hot_b)

NOP_LOOP(__attribute__((noinline)), hot_c)

static void task_motor(void)
{
    for (uint32_t k = 0;; k++) {
        hot_a(600 * SCALE);
        if (k == ROUNDS) {
            truth_end();
            board_puts("done\n");
            board_exit(0);
        }
        YIELD();
    }
}

static void task_link(void)
{
    for (;;) {
        hot_b(300 * SCALE);
        hot_c(100 * SCALE);
        YIELD();
    }
}

int main(void)
{
    static void (*const entry[SCHED_TASKS])(void) = {task_motor, task_link};
    static const char *const name[SCHED_TASKS] = {"motor", "link"};
    board_init();
    board_puts("boot: two tasks, no sampler\n");
    truth_begin();
#ifdef COOP
    sched_start_coop(entry, name);
#else
    sched_start(entry, name, 50000u);
#endif
}
