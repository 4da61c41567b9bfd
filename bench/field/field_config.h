/* bench/field: the lines measure.py adds at the end of FreeRTOS's full demo's FreeRTOSConfig.h
 * (CORTEX_MPS2_QEMU_IAR_GCC), after its trcRecorder.h: README's FreeRTOS recipe as
 * docs/firmware.md applies it to this demo (the pitfalls it lists), then the truth's hooks. */
#ifndef FIELD_CONFIG_H
#define FIELD_CONFIG_H

/* The recipe: the idle hook announces and drains; the daemon task's start-up hook starts sampling
 * (the demo defines the hook but never sets the switch). */
#undef configUSE_IDLE_HOOK
#define configUSE_IDLE_HOOK 1
#define configUSE_DAEMON_TASK_STARTUP_HOOK 1

/* The harness: 100 more workers need room (each 128 words of stack and its TCB) beside the
 * demo's 100 KB; PendSV and SysTick go through the truth's markers (field.c), not straight to
 * the port's handlers, which the port would otherwise refuse. */
#undef configTOTAL_HEAP_SIZE
#define configTOTAL_HEAP_SIZE ((size_t)(512 * 1024))
#define configCHECK_HANDLER_INSTALLATION 0

#ifndef __IASMARM__
void field_idle(void);  /* from vApplicationIdleHook */
void field_start(void); /* from vApplicationDaemonTaskStartupHook */
void field_write(const char *buf, uint32_t len); /* the stream's .write, also printf's */
void field_truth_created(unsigned long id, const char *name);
void field_truth_task_in(unsigned long id);

/* The truth: the task that runs after each switch, by the kernel's number of its control block
 * (uxTCBNumber: every creation and deletion advances it, so no two tasks share one). */
#define traceRETURN_vTaskSwitchContext() field_truth_task_in(pxCurrentTCB->uxTCBNumber)

/* The recipe's chaining with TraceRecorder v4.10.2 in streaming mode (docs/firmware.md,
 * "Copying TraceRecorder's hook bodies when chaining"), plus the truth's name of each task. */
#undef traceTASK_SWITCHED_IN
#define traceTASK_SWITCHED_IN() do { xTraceTaskSwitch(pxCurrentTCB, pxCurrentTCB->uxPriority); \
    CMPROF_FREERTOS_SWITCHED_IN(); } while (0)
#undef traceTASK_CREATE
#define traceTASK_CREATE(pxNewTCB) do { if ((pxNewTCB) != 0) { xTraceTaskRegisterWithoutHandle( \
    (void *)(pxNewTCB), (pxNewTCB)->pcTaskName, (pxNewTCB)->uxPriority); \
    CMPROF_FREERTOS_CREATE(pxNewTCB); \
    field_truth_created((pxNewTCB)->uxTCBNumber, (pxNewTCB)->pcTaskName); } } while (0)
#undef traceTASK_DELETE
#define traceTASK_DELETE(pxTCB) do { (void)xTraceTaskUnregisterWithoutHandle(pxTCB, (pxTCB)->uxPriority); \
    CMPROF_FREERTOS_DELETE(pxTCB); } while (0)
#define CMPROF_FREERTOS_CHAINED 1
#include "rtos/cmprof_freertos.h"
#endif

#endif
