/* A stand-in for a trace recorder's FreeRTOS port header (as Percepio's trcKernelPort.h or SEGGER's
 * SEGGER_SYSVIEW_FreeRTOS.h do): it takes the kernel's task hooks for itself. The FreeRTOS
 * scenario's recorder build includes it and chains cmprof's hooks (FreeRTOSConfig.h). */
#ifndef RECORDER_H
#define RECORDER_H

void recorder_task_switched_in(void *tcb);
void recorder_task_switched_out(void *tcb);
void recorder_task_create(void *tcb);
void recorder_task_delete(void *tcb);

#define traceTASK_SWITCHED_IN() recorder_task_switched_in((void *)pxCurrentTCB)
#define traceTASK_SWITCHED_OUT() recorder_task_switched_out((void *)pxCurrentTCB)
#define traceTASK_CREATE(pxNewTCB) recorder_task_create((void *)(pxNewTCB))
#define traceTASK_DELETE(pxTCB) recorder_task_delete((void *)(pxTCB))

#endif
