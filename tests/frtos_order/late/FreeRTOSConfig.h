/* The FreeRTOS scenario's configuration, which ends with cmprof's header, and then a trace
 * recorder's header (the stand-in ../trcRecorder.h, which #undefs and redefines the task hooks):
 * the order a user gets who appends the recorder's include to a config that has cmprof's already.
 * The kernel must not build: cmprof's hooks would be lost without a word. */
#ifndef LATE_RECORDER_CONFIG_H
#define LATE_RECORDER_CONFIG_H
#include "../../../scenarios/frtos/FreeRTOSConfig.h"
#include "../trcRecorder.h"
#endif
