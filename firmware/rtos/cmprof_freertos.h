/* cmprof for FreeRTOS: samples tagged with the running task, task names streamed as tasks are
 * created, slots freed as they are deleted, through the kernel's documented trace macros.
 *
 * Recipe:
 *   1. At the end of FreeRTOSConfig.h:   #include "rtos/cmprof_freertos.h"   (cmprof/firmware on
 *      the include path). Nothing else in the kernel or the application changes.
 *   2. Build cmprof_sampler.c and cmprof_stream.c with -DCMPROF_STREAM=1
 *      -DCMPROF_TAG=cmprof_current_task, and define `void *volatile cmprof_current_task;` once.
 *   3. Give the sampler a timer the RTOS does not use (FreeRTOS ticks with SysTick): e.g.
 *      -DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER on MPS2, CMPROF_PORT_STM32_TIM on STM32,
 *      CMPROF_PORT_NRF_TIMER on nRF5x; put its handler (cmprof.h lists the names) in your vector
 *      table if it is a const array.
 *   4. Priority: the port sets the timer to 0, the most urgent, above
 *      configMAX_SYSCALL_INTERRUPT_PRIORITY; the sampler calls no FreeRTOS function, so that is
 *      allowed, and it sees inside critical sections that mask with BASEPRI (not PRIMASK ones).
 *   5. Call cmprof_stream_announce() once and cmprof_stream_drain() from the idle hook or a
 *      low-priority task. Names registered by traceTASK_CREATE go out on the next drain. The
 *      drain needs at most 256 bytes of stack (docs/stream.md), within the idle task's default.
 *      The name table holds CMPROF_STREAM_TASKS tasks (default 254); a full one is reported.
 * Interrupt time is charged to the interrupt (ISR rows in the task view), never to the task it
 * interrupted. The kernel's idle task (configIDLE_TASK_NAME, with its core number on SMP builds)
 * is named "idle", the name the host shows idle time under. */
#ifndef CMPROF_FREERTOS_H
#define CMPROF_FREERTOS_H

#include "../cmprof.h"

extern void *volatile cmprof_current_task;

/* Kernels older than configIDLE_TASK_NAME call the idle task "IDLE"; FreeRTOS.h, which comes
 * after this file, keeps a name the application set. */
#ifndef configIDLE_TASK_NAME
#define configIDLE_TASK_NAME "IDLE"
#endif

/* The name a new task is streamed under: the idle task name, alone or followed by digits (one idle
 * task per core), becomes "idle". Runs at task creation only. */
static inline const char *cmprof_freertos_name(const char *name, const char *idle_name)
{
    unsigned i = 0;
    while (idle_name[i] && name[i] == idle_name[i])
        i++;
    if (idle_name[i])
        return name;
    while (name[i] >= '0' && name[i] <= '9')
        i++;
    return name[i] ? name : CMPROF_IDLE_NAME;
}

/* pxCurrentTCB is the kernel's own variable, visible where these macros expand (tasks.c). */
#define traceTASK_SWITCHED_IN() (cmprof_current_task = (void *)pxCurrentTCB)
#define traceTASK_CREATE(pxNewTCB)                                                                       \
    cmprof_stream_task_later((pxNewTCB), cmprof_freertos_name((pxNewTCB)->pcTaskName, configIDLE_TASK_NAME))
#define traceTASK_DELETE(pxTCB) cmprof_stream_task_gone(pxTCB)

#endif
