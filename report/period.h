/* The time between samples, from what the firmware announced: the timer's period plus the
 * mean of its random extra (jitter mask / 2), in the timer's clock. */
#ifndef CMPROF_REPORT_PERIOD_H
#define CMPROF_REPORT_PERIOD_H

#include "../profile/firmware.h"
#include "../profile/profile.h"

/* Nanoseconds per sample; 0 when the stream announced no period or timer clock (dumps, gdb:). */
double period_ns(const struct prof_stream_info *info);
/* Nanoseconds each place prof_each_sample and prof_folded give stands for, per sample counted
 * there: the period, or when those are the stacked samples only (the firmware's evidence comes
 * with 1 sample in 16) the period times all samples over the stacked ones, so that the written
 * times add up to the run's; 0 when the period is unknown. */
double period_ns_written(struct prof *p);
/* The section timers' clock in Hz (the core clock unless announced otherwise); 0 when unknown. */
double period_section_hz(const struct prof_stream_info *info);

#endif
