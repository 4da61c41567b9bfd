/* FreeRTOSConfig.h of the FreeRTOS scenario (scenarios/frtos/frtos.c): QEMU mps2-an385, Cortex-M3 at
 * 25 MHz, the kernel's GCC ARM_CM3 port (or ARM_CM0 / ARM_CM4F for the build-only checks) with heap_4.
 * The last lines apply cmprof's recipe exactly as firmware/rtos/cmprof_freertos.h gives it. */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include <stdint.h>

#define configUSE_PREEMPTION 1
#define configUSE_TIME_SLICING 1
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 0
#define configCPU_CLOCK_HZ 25000000u
#define configTICK_RATE_HZ 10000u /* 100,000 instructions a tick with -icount shift=0 */
#define configMAX_PRIORITIES 5
#define configMINIMAL_STACK_SIZE 128 /* words: the idle task's 512 bytes, FreeRTOS's usual default */
#define configMAX_TASK_NAME_LEN 16
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS
#define configIDLE_SHOULD_YIELD 1 /* the default: the idle task drains once, then yields */
#define configUSE_MUTEXES 1
#define configUSE_COUNTING_SEMAPHORES 1
#define configUSE_IDLE_HOOK 1
#define configUSE_TICK_HOOK 0
#define configUSE_MALLOC_FAILED_HOOK 1
#define configCHECK_FOR_STACK_OVERFLOW 2
#define configSUPPORT_DYNAMIC_ALLOCATION 1
#define configSUPPORT_STATIC_ALLOCATION 0
#ifdef CHURN_POOL /* a pool of churning workers (frtos.c): 1 KB each besides */
#define configTOTAL_HEAP_SIZE (160u * 1024u + CHURN_POOL * 1024u)
#else
#define configTOTAL_HEAP_SIZE (160u * 1024u)
#endif
#define configUSE_TRACE_FACILITY 1 /* uxTaskNumber: the scenario's truth marker per task */
#define configUSE_TIMERS 0
#define configCHECK_HANDLER_INSTALLATION 0 /* PendSV and SysTick go through the truth markers */
#define configENABLE_BACKWARD_COMPATIBILITY 0
#define configENABLE_MPU 0 /* the ARM_CM0 port asks */

/* NVIC priorities, upper bits: the kernel at the least urgent; FromISR calls from 0xA0 down. The
 * sampler's timer runs at 0, above all of it. */
#define configKERNEL_INTERRUPT_PRIORITY 0xFFu
#define configMAX_SYSCALL_INTERRUPT_PRIORITY 0xA0u
#define configMAX_API_CALL_INTERRUPT_PRIORITY configMAX_SYSCALL_INTERRUPT_PRIORITY

#define INCLUDE_vTaskDelete 1
#define INCLUDE_vTaskDelay 1
#define INCLUDE_vTaskSuspend 1
#define INCLUDE_xTaskGetIdleTaskHandle 1
#define INCLUDE_uxTaskGetStackHighWaterMark 1

void frtos_assert_failed(const char *file, int line);
#define configASSERT(x)                                                                                      \
    do {                                                                                                     \
        if (!(x))                                                                                            \
            frtos_assert_failed(__FILE__, __LINE__);                                                         \
    } while (0)

/* The scenario's truth (not part of the recipe): after each switch, the marker stub of the task
 * that runs next (its uxTaskNumber) tells the QEMU plugin who runs the following instructions. */
void truth_task_in(uint32_t id);
#define traceRETURN_vTaskSwitchContext() truth_task_in((uint32_t)pxCurrentTCB->uxTaskNumber)
#define traceSTARTING_SCHEDULER(handles) truth_task_in((uint32_t)pxCurrentTCB->uxTaskNumber)

#ifdef FRTOS_RECORDER
#include "recorder.h" /* a stand-in trace recorder that takes the task hooks first */
#ifndef FRTOS_UNCHAINED /* (the build that must stop at cmprof's #error) */
/* cmprof's hooks chained after the recorder's, as the header's "Trace recorders" says */
#undef traceTASK_SWITCHED_IN
#undef traceTASK_CREATE
#undef traceTASK_DELETE
#define traceTASK_SWITCHED_IN()                                                                              \
    do {                                                                                                     \
        recorder_task_switched_in((void *)pxCurrentTCB);                                                     \
        CMPROF_FREERTOS_SWITCHED_IN();                                                                       \
    } while (0)
#define traceTASK_CREATE(pxNewTCB)                                                                           \
    do {                                                                                                     \
        recorder_task_create((void *)(pxNewTCB));                                                            \
        CMPROF_FREERTOS_CREATE(pxNewTCB);                                                                    \
    } while (0)
#define traceTASK_DELETE(pxTCB)                                                                              \
    do {                                                                                                     \
        recorder_task_delete((void *)(pxTCB));                                                               \
        CMPROF_FREERTOS_DELETE(pxTCB);                                                                       \
    } while (0)
#define CMPROF_FREERTOS_CHAINED 1
#endif
#endif

/* ---- cmprof (the recipe: its last line) ---- */
#include "rtos/cmprof_freertos.h"

#endif
