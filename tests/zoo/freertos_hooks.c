/* The FreeRTOS adapter's macros, expanded the way the kernel's tasks.c expands them (a TCB with
 * pcTaskName, pxCurrentTCB): built for every core by the firmware step of make test, and run on
 * the host by tests/test_freertos.c. The real kernel is not in this repository; it was checked by
 * hand against FreeRTOS-Kernel's tasks.c (see the issue notes). */
#include "FreeRTOSConfig_test.h"

typedef struct tskTaskControlBlock {
    volatile unsigned long *pxTopOfStack;
    char pcTaskName[16];
} TCB_t;

TCB_t *volatile pxCurrentTCB;
void *volatile cmprof_current_task;

void task_created(TCB_t *pxNewTCB)
{
    traceTASK_CREATE(pxNewTCB);
}

void task_switched(void)
{
    traceTASK_SWITCHED_IN();
}

void task_deleted(TCB_t *pxTCB)
{
    traceTASK_DELETE(pxTCB);
}
