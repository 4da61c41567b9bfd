/* What source.c asks of a transport (a file, a serial port, a TCP stream, a GDB server, OpenOCD,
 * RTT ...): a constructor that checks the spec and makes the transport's own state, and a few
 * operations on that state. source.c keeps everything they share (reconnecting, the failures of the
 * run, the byte count) and the registry: the table of transports src_open() walks by prefix. Adding
 * one: docs/architecture.md, "Transports". Types only: no code lives behind this header. */
#ifndef CMPROF_SOURCE_TRANSPORT_H
#define CMPROF_SOURCE_TRANSPORT_H

#include "gdb.h"
#include "source.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRC_SPEC_MAX 256 /* a spec as kept for reconnecting (longer ones are cut) */

/* What src_open() was given. */
struct src_params {
    const char *spec; /* as given */
    const char *kept; /* cut to SRC_SPEC_MAX - 1 characters: what a live transport connects with */
    int baud;         /* serial ports: > 0 */
    double rate;      /* see src_open() */
    bool *malformed;  /* make() sets it when the spec's form is wrong (not when what it names is absent) */
};

/* Settings the caller gives after src_open(), kept by source.c across reconnects (SRC_TAKES_...: source.h). */
struct src_settings {
    unsigned given; /* which of the below were given (SRC_TAKES_...) */
    uint32_t task_addr;
    int task_name_offset;
    unsigned stack_depth;
    gdb_unwind_fn unwind;
    void *unwind_ctx;
    uint32_t rtt_block;
};

/* How a read ended the connection; why[0] is 0 while it goes on. */
struct src_gone {
    char why[300];
    bool failure; /* an error, not the transport's normal end (a file's end, a server that closed) */
    bool final;   /* it will not pass: no reconnecting (the target's program ended, no target) */
};

struct transport {
    const char *prefix;                         /* the specs it takes start with this ... */
    bool (*claims)(const struct src_params *p); /* ... and this agrees (NULL: every one) */
    enum src_kind kind;
    /* The constructor: checks the spec, makes the state (not connected yet) and writes the source's
     * name; NULL with a one-line reason in err. It may hand over to another transport by setting
     * *self (a path: a file, a serial port or a terminal). The state may keep set: it outlives it. */
    void *(*make)(const struct src_params *p, const struct src_settings *set, const struct transport **self, char *name,
                  size_t namelen, char *err, size_t errlen);
    /* Connect, or again after a loss; false with why, and *permanent when retrying cannot help.
     * NULL: make() opened it for good; it never reconnects, and its loss is the source's end. */
    bool (*connect)(void *t, double now, char *why, size_t whylen, bool *permanent);
    void (*disconnect)(void *t);               /* let go (the target running), keep the figures; may come twice */
    void (*destroy)(void *t);                  /* after disconnect() */
    int (*fd)(const void *t);                  /* to poll while connected; -1: the timer drives it */
    int (*wait_ms)(const void *t, double now); /* while connected; NULL: never without input */
    /* Read what is there (never blocks); a loss is told in gone, with 0 bytes. */
    size_t (*read)(void *t, uint8_t *buf, size_t n, double now, struct src_gone *gone);
    void (*detail)(const void *t, char *text, size_t n);               /* src_detail(); NULL: "" */
    /* src_handshake(): what has not come yet on the connection made, before which it is not connected in
     * the user's sense ("the GDB server has not finished its handshake"); NULL or "": nothing to wait for */
    const char *(*handshake)(const void *t);
    int (*halting)(const void *t, double *rate, double *halted_share); /* src_halting(); NULL: 0 */
    unsigned takes;                                                    /* the settings it uses (SRC_TAKES_...) */
    void (*apply)(void *t, unsigned which);                            /* settings given while it may be connected */
    const char *packets_by;                                            /* src_packets_by() */
    bool holds_target; /* a debug probe: src_suspend() lets go of the target */
    /* src_spec_path(): the file or device a spec of its reads (the spec itself for a path); NULL: none */
    const char *(*path_of)(const char *spec);
    bool sends_itm; /* src_spec_sends_itm(): its bytes are ITM packets unless the format is given */
};

#endif
