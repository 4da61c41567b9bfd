/* cmprof for FreeRTOS: samples tagged with the running task, task names streamed as tasks are
 * created, slots freed as they are deleted, through the kernel's documented trace macros. Checked
 * on the real kernel (V11.3.0, ARM_CM3 port, heap_4) in QEMU by scenarios/frtos/: 110 tasks plus
 * hundreds created and deleted, every task named, per-task shares within their intervals.
 *
 * Recipe:
 *   1. The last line of FreeRTOSConfig.h (after a trace recorder's header, if you have one, see
 *      "Trace recorders" below):   #include "rtos/cmprof_freertos.h"   (cmprof/firmware on the
 *      include path). Nothing else in the kernel changes.
 *   2. Build cmprof_sampler.c, cmprof_stream.c and cmprof_tasks.c with -DCMPROF_STREAM=1
 *      -DCMPROF_TAG=cmprof_current_task -DCMPROF_TAG_NAMES=1 -DCMPROF_STREAM_LINE=32
 *      -DCMPROF_JITTER=MASK, and define
 *      `void *volatile cmprof_current_task;` once. CMPROF_TAG_NAMES=1: the sampler reads each
 *      task's name from its TCB (pcTaskName) at the task's first sample and the create and delete
 *      hooks only drop the TCB's entry of its cache (a few instructions, no copy, no search: cmprof.h,
 *      cmprof_stream_task_new); without it the hooks keep the older table (a slot and a queue entry
 *      per create). 32 samples a line (16 by default) halve the
 *      drain's work per line: about 6 instructions a sample less at 100+ tasks. The jitter MASK
 *      (2^k - 1, wider than the base period given to cmprof_start, and equal to the announce's
 *      .jitter) keeps the samples out of step with the kernel's tick: with a constant period
 *      FreeRTOS's own demo showed SysTick's handler never sampled at all.
 *   3. Give the sampler a timer the RTOS does not use (FreeRTOS ticks with SysTick): e.g.
 *      -DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER on MPS2, CMPROF_PORT_STM32_TIM on STM32,
 *      CMPROF_PORT_NRF_TIMER on nRF5x; put its handler (cmprof.h lists the names) in your vector
 *      table if it is a const array.
 *   4. Priority: the port sets the timer to 0, the most urgent, above
 *      configMAX_SYSCALL_INTERRUPT_PRIORITY; the sampler calls no FreeRTOS function, so that is
 *      allowed, and it sees inside critical sections that mask with BASEPRI (not PRIMASK ones:
 *      the ARM_CM0 port's, for one; that time lands on the instruction after they end).
 *   5. Start sampling once the scheduler runs, from a task: the first lines of a start-up task, or
 *      vApplicationDaemonTaskStartupHook() (called only with configUSE_DAEMON_TASK_STARTUP_HOOK 1:
 *      without it the host gets the announce and no sample, and says so). cmprof_current_task is set by the first switch, inside
 *      vTaskStartScheduler(): samples taken before it (cmprof_start() in main) carry tag 0, which
 *      no task has, and show as a row "0x00000000" with an "unnamed tasks" diagnostic.
 *   6. configUSE_IDLE_HOOK 1, and in vApplicationIdleHook(): cmprof_stream_announce() on the first
 *      call, cmprof_stream_drain() on every call (with less than a line waiting it returns in a
 *      few instructions; configIDLE_SHOULD_YIELD 1, the default, is fine). Names registered by
 *      traceTASK_CREATE go out on the next drain. If tasks print on the same UART, give the stream
 *      a `.write` (struct cmprof_stream_info) that writes its line whole between vTaskSuspendAll()
 *      and xTaskResumeAll(), and print your log lines whole the same way: lines never interleave.
 *      The idle hook drains only while the idle task runs: under a load that never leaves it time,
 *      the ring fills and (from the start) not even the announce goes out. Where that can happen,
 *      drain from a task of your own instead, at a priority above the busy tasks: announce, then
 *      loop on cmprof_stream_drain() and vTaskDelay() of a few ticks; it always runs, and takes
 *      only its own work from them.
 *   7. Build with -Wl,--build-id -L cmprof/firmware -Wl,-T,cmprof_build_id.ld (before your own -T)
 *      and pass .build_id_note = cmprof_build_id_note, so the host checks the ELF is the firmware.
 *
 * The sampling period. The drain only runs when the idle task does, so the idle share bounds the
 * sample rate as much as the line does. With f samples/s, B bytes on the wire a sample (every line
 * the stream sends counted: samples, names, announces), a UART at R baud (R/10 bytes/s), an idle
 * share I of a core running F instructions/s and C instructions of library work a sample:
 *      f <= R / (10 B)               the line
 *      f <= I F / C                  the idle time, with a UART write that does not wait (DMA, FIFO
 *                                    interrupt)
 *      f <= I R / (10 B)             the idle time, with a putc that waits for each byte
 * and period = timer_hz / f. Measured on FreeRTOS's own full demo (about 90 tasks, kernel V11.3.0)
 * built with this recipe's options, no task churn: 3.95 bytes a tagged sample in the sample lines,
 * B = 4.32 with every line, and C = 114.9 instructions (idle polls apart); with 1,000 tasks created
 * a second under unique names, B = 6.46 and C = 235.2 (docs/performance.md, "FreeRTOS's own full
 * demo", the run of bb1f041 with CMPROF_TAG_NAMES=1: bench/field/measure.py, QEMU counting
 * instructions). Worked figure: 115,200 baud, B = 4.32: the line carries 2,666 samples/s; at 3 %
 * idle on a 100 MHz part, a non-waiting write allows 26,000/s, so the line sets f = 2,666 (a mean
 * period of 37,500 at a 100 MHz timer: the period is base + 0..MASK, so base 5,000 with
 * CMPROF_JITTER 65535, mean 37,767); a waiting
 * putc allows only 0.03 x 115,200 / 43.2 = 80 samples/s (period 1,250,000). Above these, the ring
 * fills: the reservoir (CMPROF_RESERVOIR_N, cmprof.h) keeps a uniform subsample of the samples it
 * cannot take, sent with their weight, so the shares stay unbiased; built without it they are
 * dropped, counted, and the host bounds the bias (they are the tasks' that run while the idle
 * task waits). CMPROF_RING_N must hold the samples of
 * the longest stretch without idle time (f x that stretch).
 *
 * The idle stack. The drain needs at most 256 bytes (248 tagged: tests/stack_check.py, from
 * -fstack-usage), plus the idle hook's own frame and your putc or write. The scenario runs with
 * configMINIMAL_STACK_SIZE 128 (512 bytes, FreeRTOS's usual figure) and configCHECK_FOR_STACK_OVERFLOW
 * 2; 180 to 200 bytes of it stay unused. Use the overflow check while you try it out.
 *
 * Dump mode (no live stream: collect, then print once): build cmprof_sampler.c and
 * cmprof_tasks.c WITHOUT CMPROF_STREAM (or with 0) and with CMPROF_TAG=cmprof_current_task, keep
 * this header; the hooks then keep a copy of every task's name (CMPROF_DUMP_NAME_LEN characters,
 * default 16; deleted tasks included while the table has room: CMPROF_STREAM_TASKS, 254 by
 * default, about 30 bytes of RAM each, then the longest-deleted give way; a control block reused
 * by a new task carries the newest name, as a dump cannot tell them apart in time) and
 * cmprof_dump() prints them ("task TAG NAME" lines) after the samples. No announce, no drain: stop
 * with cmprof_stop() (or a sample limit), then cmprof_dump(putc) from any task.
 *
 * Trace recorders (Percepio TraceRecorder, SEGGER SystemView...) define traceTASK_SWITCHED_IN,
 * traceTASK_CREATE and traceTASK_DELETE themselves. A C macro cannot call a definition it
 * replaces, so this header never redefines one: where a hook is free it takes it; where it is
 * taken, your definition must call the matching hook below, and you say so with
 * `#define CMPROF_FREERTOS_CHAINED 1` before including this header. Without it the build stops
 * with an #error naming the macro. After the recorder's header, in FreeRTOSConfig.h:
 *      #undef traceTASK_SWITCHED_IN
 *      #define traceTASK_SWITCHED_IN() do { <the recorder's body>; CMPROF_FREERTOS_SWITCHED_IN(); } while (0)
 *      ... the same for traceTASK_CREATE(pxNewTCB) / CMPROF_FREERTOS_CREATE(pxNewTCB) and
 *      traceTASK_DELETE(pxTCB) / CMPROF_FREERTOS_DELETE(pxTCB) ...
 *      #define CMPROF_FREERTOS_CHAINED 1
 *      #include "rtos/cmprof_freertos.h"
 * (the recorder's body is in its FreeRTOS port header, e.g. trcKernelPort.h or
 * SEGGER_SYSVIEW_FreeRTOS.h). The hooks are expressions of a few instructions: no order matters.
 * The other order, a recorder's header after this one (recorders #undef the kernel's macros and
 * define their own), would lose cmprof's hooks without a word; it stops tasks.c's build instead,
 * one error naming each hook lost (checked through portSETUP_TCB, below).
 *
 * Interrupt time is charged to the interrupt (ISR rows in the task view), never to the task it
 * interrupted. The kernel's idle task (configIDLE_TASK_NAME, with its core number on SMP builds)
 * is named "idle", the name the host shows idle time under. The name table holds
 * CMPROF_STREAM_TASKS tasks at once (default 254; deleted tasks free their slot); a full one is
 * said on the stream. */
#ifndef CMPROF_FREERTOS_H
#define CMPROF_FREERTOS_H

#include "../cmprof.h"

extern void *volatile cmprof_current_task;

/* Kernels older than configIDLE_TASK_NAME call the idle task "IDLE"; FreeRTOS.h, which comes
 * after this file, keeps a name the application set. */
#ifndef configIDLE_TASK_NAME
#define configIDLE_TASK_NAME "IDLE"
#endif

/* The hooks, for the kernel's trace macros (pxCurrentTCB is the kernel's own variable, visible
 * where these expand: tasks.c). */
#define CMPROF_FREERTOS_SWITCHED_IN() ((void)(cmprof_current_task = (void *)pxCurrentTCB))
/* With stack evidence (CMPROF_STACKS), each new task's exit trap is handed to the scan (no call
 * left it, so the scan would drop it and the task's stacks would end unproven). */
#if defined(CMPROF_STACKS) && CMPROF_STACKS
#define CMPROF_FREERTOS_ROOT(pxNewTCB) cmprof_stack_task_root((const void *)(pxNewTCB)->pxTopOfStack),
#else
#define CMPROF_FREERTOS_ROOT(pxNewTCB)
#endif
#define CMPROF_FREERTOS_CREATE(pxNewTCB)                                                                 \
    (CMPROF_FREERTOS_ROOT(pxNewTCB)                                                                      \
     cmprof_stream_task_new((pxNewTCB), (pxNewTCB)->pcTaskName, configIDLE_TASK_NAME))
#define CMPROF_FREERTOS_DELETE(pxTCB) cmprof_stream_task_gone(pxTCB)

/* cmprof's hooks are object-like names of the macros above, so that CMPROF_FREERTOS_OURS(hook)
 * tells them (1) from any other definition (0: a function-like macro's bare name is not expanded). */
#define CMPROF_FREERTOS_PASTE(a, b) a##b
#define CMPROF_FREERTOS_OURS(hook) CMPROF_FREERTOS_PASTE(CMPROF_FREERTOS_OURS_, hook)
#define CMPROF_FREERTOS_OURS_CMPROF_FREERTOS_SWITCHED_IN 1
#define CMPROF_FREERTOS_OURS_CMPROF_FREERTOS_CREATE 1
#define CMPROF_FREERTOS_OURS_CMPROF_FREERTOS_DELETE 1
#define CMPROF_FREERTOS_OURS_traceTASK_SWITCHED_IN 0
#define CMPROF_FREERTOS_OURS_traceTASK_CREATE 0
#define CMPROF_FREERTOS_OURS_traceTASK_DELETE 0

#ifndef traceTASK_SWITCHED_IN
#define traceTASK_SWITCHED_IN CMPROF_FREERTOS_SWITCHED_IN
#define CMPROF_FREERTOS_KEPT_SWITCHED_IN 0
#elif !defined(CMPROF_FREERTOS_CHAINED)
#error "traceTASK_SWITCHED_IN is defined already (a trace recorder?): call CMPROF_FREERTOS_SWITCHED_IN() from it and #define CMPROF_FREERTOS_CHAINED 1 (rtos/cmprof_freertos.h, 'Trace recorders')"
#else
#define CMPROF_FREERTOS_KEPT_SWITCHED_IN 1 /* yours, chained */
#endif
#ifndef traceTASK_CREATE
#define traceTASK_CREATE CMPROF_FREERTOS_CREATE
#define CMPROF_FREERTOS_KEPT_CREATE 0
#elif !defined(CMPROF_FREERTOS_CHAINED)
#error "traceTASK_CREATE is defined already (a trace recorder?): call CMPROF_FREERTOS_CREATE(pxNewTCB) from it and #define CMPROF_FREERTOS_CHAINED 1 (rtos/cmprof_freertos.h, 'Trace recorders')"
#else
#define CMPROF_FREERTOS_KEPT_CREATE 1
#endif
#ifndef traceTASK_DELETE
#define traceTASK_DELETE CMPROF_FREERTOS_DELETE
#define CMPROF_FREERTOS_KEPT_DELETE 0
#elif !defined(CMPROF_FREERTOS_CHAINED)
#error "traceTASK_DELETE is defined already (a trace recorder?): call CMPROF_FREERTOS_DELETE(pxTCB) from it and #define CMPROF_FREERTOS_CHAINED 1 (rtos/cmprof_freertos.h, 'Trace recorders')"
#else
#define CMPROF_FREERTOS_KEPT_DELETE 1
#endif

/* A header included after this one (a trace recorder's, which #undefs the kernel's trace macros
 * and defines its own) would replace the hooks above without a word, and the kernel would build
 * with no cmprof hook at all. That is checked where every header is done: in tasks.c, through the
 * port macro the kernel expands there once as it adds a task, right after traceTASK_CREATE, and
 * that trace recorders leave alone: portSETUP_TCB(pxTCB) (the kernel's default does nothing; no
 * GCC Cortex-M port defines it), taken here when free. A compile-time check, no code: a hook
 * redefined later stops tasks.c's build with an error naming it. */
#define CMPROF_FREERTOS_LATE(hook) \
    "cmprof: " #hook " was redefined after rtos/cmprof_freertos.h (a trace recorder header included later?), " \
    "so the cmprof hook is lost: include rtos/cmprof_freertos.h after it, with the hooks chained " \
    "(see Trace recorders in rtos/cmprof_freertos.h)"
#define CMPROF_FREERTOS_CHECK_HOOKS()                                                                      \
    ((void)sizeof(struct {                                                                                 \
        _Static_assert(CMPROF_FREERTOS_OURS(traceTASK_SWITCHED_IN) || CMPROF_FREERTOS_KEPT_SWITCHED_IN,     \
                       CMPROF_FREERTOS_LATE(traceTASK_SWITCHED_IN));                                       \
        _Static_assert(CMPROF_FREERTOS_OURS(traceTASK_CREATE) || CMPROF_FREERTOS_KEPT_CREATE,               \
                       CMPROF_FREERTOS_LATE(traceTASK_CREATE));                                            \
        _Static_assert(CMPROF_FREERTOS_OURS(traceTASK_DELETE) || CMPROF_FREERTOS_KEPT_DELETE,               \
                       CMPROF_FREERTOS_LATE(traceTASK_DELETE));                                            \
        int cmprof_hooks_checked;                                                                          \
    }))
#ifndef portSETUP_TCB
#define portSETUP_TCB(pxTCB) (CMPROF_FREERTOS_CHECK_HOOKS(), (void)(pxTCB))
#endif

#endif
