/* Sampling through Zephyr's counter API (zephyr/cmprof_counter.c): the module's timer on boards with
 * no CMSDK timer, when CONFIG_CMPROF_TIMER_COUNTER=y. */
#ifndef CMPROF_COUNTER_H
#define CMPROF_COUNTER_H

#include <stdint.h>

/* The counter's timing for the stream's announce: clock, sampling period and jitter mask in its
 * ticks (the period from CONFIG_CMPROF_SAMPLE_HZ; the jitter CONFIG_CMPROF_JITTER narrowed to less
 * than the period). Raises the counter's interrupt to the most urgent priority. Returns 0, or a
 * negative errno when the counter is not ready or too slow for the rate. */
int cmprof_zephyr_counter_setup(uint32_t *hz, uint32_t *period, uint32_t *jitter);

#endif
