/* A trace recorder's header first (the stand-in ../trcRecorder.h), its task hooks chained with
 * cmprof's as rtos/cmprof_freertos.h's "Trace recorders" says, then the FreeRTOS scenario's
 * configuration, which ends with cmprof's header: the kernel builds with both tools' hooks. */
#ifndef EARLY_RECORDER_CONFIG_H
#define EARLY_RECORDER_CONFIG_H
#include <stddef.h>
#include "../trcRecorder.h"
#undef traceTASK_SWITCHED_IN
#undef traceTASK_CREATE
#undef traceTASK_DELETE
#define traceTASK_SWITCHED_IN()                                                                              \
    do {                                                                                                     \
        trc_task_switched_in((void *)pxCurrentTCB);                                                          \
        CMPROF_FREERTOS_SWITCHED_IN();                                                                       \
    } while (0)
#define traceTASK_CREATE(pxNewTCB)                                                                           \
    do {                                                                                                     \
        trc_task_create((void *)(pxNewTCB));                                                                 \
        CMPROF_FREERTOS_CREATE(pxNewTCB);                                                                    \
    } while (0)
#define traceTASK_DELETE(pxTCB)                                                                              \
    do {                                                                                                     \
        trc_task_delete((void *)(pxTCB));                                                                    \
        CMPROF_FREERTOS_DELETE(pxTCB);                                                                       \
    } while (0)
#define CMPROF_FREERTOS_CHAINED 1
#include "../../../scenarios/frtos/FreeRTOSConfig.h"
#endif
