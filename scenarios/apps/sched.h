/* A small preemptive scheduler for the scenarios: PendSV switches contexts on PSP, tasks yield
 * when they like, and TIM4 forces a switch now and then. Round robin over SCHED_TASKS tasks.
 * A cooperative mode switches by a plain call instead (sched_start_coop, sched_pass): no exception,
 * no peripheral access, for the halting scenarios (QEMU's host time around an exception biases
 * where wall-clock halts land; see scenarios/REPORT.md, section 10b). */
#ifndef SCHED_H
#define SCHED_H

#include <stdint.h>

#define SCHED_TASKS 2

struct task {
    uint32_t *sp; /* saved PSP: r4-r11 below the hardware frame */
    char name[16];  /* inline, as FreeRTOS keeps pcTaskName: a debugger reads it from the TCB */
    uint32_t stack[256];
};

extern struct task sched_task[SCHED_TASKS];
extern void *volatile current_task; /* the sampler's tag (CMPROF_TAG=current_task) */
extern volatile uint32_t sched_preemptions;

void sched_yield(void);
/* Set up the tasks and the time slice (TIM4 ticks at 1 GHz in QEMU), then run the first task.
 * The caller's stack becomes an idle "boot" context that is never resumed. */
__attribute__((noreturn)) void sched_start(void (*const entry[SCHED_TASKS])(void), const char *const name[SCHED_TASKS],
                                           uint32_t slice);

/* Cooperative: the tasks run on the main stack and switch only when they call sched_pass(). */
void sched_pass(void);
__attribute__((noreturn)) void sched_start_coop(void (*const entry[SCHED_TASKS])(void),
                                                const char *const name[SCHED_TASKS]);

#endif
