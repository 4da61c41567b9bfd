/* Two tasks sharing one function, on our small preemptive scheduler (sched.c): tasks yield
 * after each round and TIM4 forces a switch now and then. The sampler stores the current task
 * with every sample (build with -DCMPROF_TAG=current_task). */
#include "board.h"
#include "cmprof.h"
#include "work.h"
#include "sched.h"

#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 5000u
#endif

NOP_LOOP(__attribute__((noinline)), hot_a)

NOP_LOOP(__attribute__((noinline)), hot_b)

static void finish(void)
{
    cmprof_stop();
    truth_end();
    for (uint32_t i = 0; i < 2u; i++) {
        board_puts("task ");
        board_puthex((uint32_t)(uintptr_t)&sched_task[i]);
        board_putc(' ');
        board_puts(sched_task[i].name);
        board_putc('\n');
    }
    board_puts("preemptions=");
    board_putdec(sched_preemptions);
    board_putc('\n');
    cmprof_dump(board_putc);
    board_exit(0);
}

static void task_motor(void)
{
    for (;;) {
        hot_a(600);
        if (cmprof_samples() >= SAMPLES)
            finish();
        sched_yield();
    }
}

static void task_link(void)
{
    for (;;) {
        hot_a(300);
        hot_b(100);
        sched_yield();
    }
}

int main(void)
{
    static void (*const entry[SCHED_TASKS])(void) = {task_motor, task_link};
    static const char *const name[SCHED_TASKS] = {"motor", "link"};
    board_init();
    cmprof_start(PERIOD, 0u);
    truth_begin();
    sched_start(entry, name, 50000u);
}
