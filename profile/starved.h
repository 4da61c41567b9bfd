/* Why a connected firmware sends no samples: a drain that never runs looks, from the host, like a
 * silent line or one with log lines only. The likely causes, in words, for the live view and batch. */
#ifndef CMPROF_STARVED_H
#define CMPROF_STARVED_H

#include "ingest.h"

#include <stddef.h>

/* Seconds of a connection without samples before the live view names the causes. */
#define STARVED_AFTER_S 3.0

/* Where the samples come from, which decides what can keep them away. */
enum starved_from {
    STARVED_FIRMWARE, /* the firmware's own stream (a port, a socket, a capture): its drain */
    STARVED_TRACE,    /* an SWO trace (ITM, TPIU, orbflow frames, a trace port set up by the host) */
    STARVED_PROBE,    /* samples the host takes itself (halting, PCSR reads): no hint */
};

/* What the input shows so far and the likely causes, when it has no sample: "" when it has one.
 * seconds: how long the source has been connected without a sample (negative: a capture file). A
 * firmware-stream source whose bytes are a hardware trace format is taken as a trace. */
void starved_hint(const struct ingest *in, double seconds, enum starved_from from, char *buf, size_t len);
/* A stream that stopped: connected, no sample for quiet_s seconds since the last one (at last_s
 * seconds into the run), and the likely causes. */
void starved_stalled(double quiet_s, double last_s, char *buf, size_t len);
/* The same in one short line, for a header. */
void starved_stalled_short(double quiet_s, double last_s, char *buf, size_t len);

#endif
