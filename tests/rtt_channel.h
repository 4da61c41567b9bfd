/* The application's own RTT channel that tests/test_rtt.c plays (built as test_rtt_external): what a
 * user's SEGGER_RTT.h declares, for cmprof_rtt.c's CMPROF_RTT_EXTERNAL hook. */
#ifndef RTT_CHANNEL_H
#define RTT_CHANNEL_H

#include <stdint.h>

unsigned test_channel_write(const char *buf, uint32_t len);
unsigned test_channel_room(void);

#endif
