/* The time between samples, from what the firmware announced: the timer's period plus the
 * mean of its random extra (jitter mask / 2), in the timer's clock. */
#ifndef CMPROF_REPORT_PERIOD_H
#define CMPROF_REPORT_PERIOD_H

#include "../profile/firmware.h"

/* Nanoseconds per sample; 0 when the stream announced no period or timer clock (dumps, gdb:). */
double period_ns(const struct prof_stream_info *info);
/* The section timers' clock in Hz (the core clock unless announced otherwise); 0 when unknown. */
double period_section_hz(const struct prof_stream_info *info);

#endif
