/* A minimal stand-in for a trace recorder's FreeRTOS header (Percepio TraceRecorder is not in this
 * repository): as TraceRecorder's trcKernelPort.h does, it #undefs the kernel's task trace macros
 * and defines its own, whatever a header before it defined. tests/test_frtos_builds.py includes it
 * before and after cmprof's header (early/ and late/FreeRTOSConfig.h). */
#ifndef TRC_RECORDER_STANDIN_H
#define TRC_RECORDER_STANDIN_H

void trc_task_switched_in(void *tcb);
void trc_task_switched_out(void *tcb);
void trc_task_create(void *tcb);
void trc_task_delete(void *tcb);

#undef traceTASK_SWITCHED_IN
#define traceTASK_SWITCHED_IN() trc_task_switched_in((void *)pxCurrentTCB)
#undef traceTASK_SWITCHED_OUT
#define traceTASK_SWITCHED_OUT() trc_task_switched_out((void *)pxCurrentTCB)
#undef traceTASK_CREATE
#define traceTASK_CREATE(pxNewTCB)                                                                          \
    if ((pxNewTCB) != NULL) {                                                                              \
        trc_task_create((void *)(pxNewTCB));                                                               \
    }
#undef traceTASK_DELETE
#define traceTASK_DELETE(pxTaskToDelete) trc_task_delete((void *)(pxTaskToDelete))

#endif
