/* PC sampling without halting, through OpenOCD's Tcl server (port 6666): the core's DWT_PCSR
 * (0xE000101C) read in bursts while it runs, after DWT is enabled (DEMCR.TRCENA, restored at
 * the end). A PCSR of 0xFFFFFFFF means the core is halted or asleep: a sleep sample. A PCSR that
 * reads 0 is not implemented (ARMv6-M, some parts): then each sample halts the core instead
 * (halt, reg pc, resume: the resume is sent even when the read fails). Samples come out as ITM packets, like the GDB sampler's.
 * With ",swo=CLOCK" (ocd_parse) nothing is read per sample: the SWO trace is set up through OpenOCD's
 * own commands and the trace OpenOCD serves is passed on as it comes (ITM from DWT's PC sampling). */
#ifndef CMPROF_SOURCE_OPENOCD_H
#define CMPROF_SOURCE_OPENOCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ocd_sampler;

/* The registers a swo= run saves and puts back (listed in openocd.c). */
#define OCD_SWO_REGS 16

/* DEMCR as the first connection found it. The caller keeps it across reconnects, zeroed before the
 * first: a later connection may find the TRCENA we set before a drop, which is not the original. */
struct ocd_original {
    bool known;
    uint32_t demcr;
    bool swo_known;                    /* swo=: the registers below were read */
    uint32_t swo_base;                 /* the TPIU's base address */
    uint32_t swo_value[OCD_SWO_REGS];
    bool swo_readable[OCD_SWO_REGS];   /* false: not there on this part (a vendor register) */
};

/* A spec's SWO options; traceclk 0 means PCSR sampling (no swo=). */
struct ocd_swo {
    uint32_t traceclk;   /* Hz: the TPIU's trace clock, usually the core clock */
    uint32_t pin_max;    /* Hz: the fastest SWO pin rate to use (pin=, default 2 MHz) */
    uint32_t pin;        /* Hz: the rate chosen, traceclk divided by a whole number */
    uint32_t period;     /* core cycles between PC samples (period=, default from the line's room) */
    bool exceptions;     /* exc: DWT exception trace too */
    char tpiu[64];       /* tpiu=NAME; "": the one OpenOCD's target configuration made */
    unsigned trace_port; /* trace=PORT: the TCP port OpenOCD serves the trace on (default 6670) */
    char trace_file[200];/* trace=/PATH: OpenOCD writes the trace to this file or pipe instead */
};
/* Splits where into host, port and SWO options; false with a one-line reason in err. */
bool ocd_parse(const char *where, char *host, size_t hostlen, char *port, size_t portlen, struct ocd_swo *swo,
               char *err, size_t errlen);

/* where: "HOST", "HOST:PORT" (default port 6666), then optionally ",swo=CLOCK" and more options
 * (ocd_parse): with swo=, the sampler sets up the SWO trace itself with OpenOCD's commands (TPIU in
 * UART mode, ITM, DWT PC sampling), passes on the trace OpenOCD serves and puts every register it
 * changed back at the close. NULL with a reason in err when it cannot connect. first is read and
 * filled in by the sampler and must outlive it. */
struct ocd_sampler *ocd_open(const char *where, double now, struct ocd_original *first, char *err, size_t errlen);
/* The same on a connected socket (made non-blocking by the caller), which the sampler then owns. */
struct ocd_sampler *ocd_open_fd(int fd, double now, struct ocd_original *first, char *err, size_t errlen);
/* Resume the core if we were halting it, put DEMCR back as first found (swo=: stop the TPIU and put
 * every saved trace register back as first found), then free: within 0.8 s, whatever the server does. */
void ocd_close(struct ocd_sampler *o);

int ocd_fd(const struct ocd_sampler *o);
int ocd_wait_ms(const struct ocd_sampler *o, double now);
/* Read replies and send what is due; returns the ITM bytes written to buf. */
size_t ocd_step(struct ocd_sampler *o, uint8_t *buf, size_t n, double now);
const char *ocd_failed(const struct ocd_sampler *o); /* NULL while all is well */
bool ocd_hopeless(const struct ocd_sampler *o);     /* the failure will not pass: no target there */

struct ocd_stats {
    uint64_t samples, sleeps; /* PCs, and reads of 0xFFFFFFFF */
    uint64_t bursts;
    double burst_s;           /* wall time spent waiting for bursts */
    double first, last;       /* of the first and last burst's reply */
    bool halting;             /* PCSR is not implemented: halting fallback */
    bool swo;                 /* swo=: the trace runs, set up by us */
    uint32_t pin, period;     /* swo=: the pin rate (Hz) and the cycles between PC samples */
    uint64_t trace_bytes;     /* swo=: bytes of trace passed on */
};
void ocd_get_stats(const struct ocd_sampler *o, struct ocd_stats *out);

#endif
