/* The transports that talk to a debug server (see transport.h): gdb:, openocd: (PCSR sampling, and
 * with ",swo=" the SWO trace it sets up, an entry of its own) and rtt:. */
#ifndef CMPROF_SOURCE_PROBES_H
#define CMPROF_SOURCE_PROBES_H

#include "transport.h"

extern const struct transport tr_gdb, tr_openocd, tr_openocd_swo, tr_rtt;

#endif
