/* Byte sources for cmprof-top: a capture file (replayed as fast as possible or paced), stdin,
 * a serial port (libserialport), a pty or other character device (termios), or a TCP server
 * (a probe's SWO port, QEMU's -serial tcp). Live sources reconnect by themselves; the caller
 * polls src_fd() and calls src_read() when it is readable, or src_tick() now and then. Each kind is
 * a transport behind one ops table (transport.h), registered in source.c. */
#ifndef CMPROF_SOURCE_H
#define CMPROF_SOURCE_H

#include "gdb.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum src_kind { SRC_FILE, SRC_STDIN, SRC_SERIAL, SRC_TTY, SRC_TCP, SRC_GDB, SRC_OPENOCD, SRC_RTT };
enum src_state { SRC_CONNECTED, SRC_RECONNECTING, SRC_END };

struct source;

/* spec: a path, "-" for stdin, "tcp:HOST:PORT", "gdb:HOST:PORT" / "gdb:/dev/ttyACM0" (halting
 * samples through a GDB server), or "openocd:HOST[:PORT]" (DWT_PCSR read through OpenOCD's Tcl
 * server; with ",swo=CLOCK[,...]" the SWO trace set up through it instead, see openocd.h); the last
 * two deliver ITM PC-sample packets; "rtt:HOST:PORT" (a GDB server) or "rtt:openocd:HOST[:PORT]"
 * reads the firmware's stream out of its RTT buffer (source/rtt.h). baud: for serial ports (0:
 * 115200). rate: bytes per second for replaying a file, halts per second for a GDB server (0: the
 * core halted about 10 % of the time; negative: as fast as possible), polls per second for rtt:
 * (0: every 10 ms; negative: as fast as the server answers). Returns NULL with a
 * one-line reason in err when the source cannot be used at all (a live source that is merely
 * absent starts in SRC_RECONNECTING instead), and *malformed true when that is the spec's form (a
 * port that is no port, an unknown kind "usb:x" that is no file either): a usage error. */
struct source *src_open(const char *spec, int baud, double rate, char *err, size_t errlen, bool *malformed);

/* What a spec would be, asked before (or without) opening it, from the transport that would take it. */
enum { SRC_TAKES_TASK_VAR = 1, SRC_TAKES_UNWIND = 2, SRC_TAKES_RTT_BLOCK = 4 };
unsigned src_spec_takes(const char *spec);        /* the settings it uses (SRC_TAKES_...) */
const char *src_spec_packets_by(const char *spec); /* as src_packets_by(): NULL when the firmware makes them */
const char *src_spec_path(const char *spec);       /* the file or device it reads ("-" for stdin); NULL: none */
bool src_spec_sends_itm(const char *spec);         /* a probe's ITM packets (gdb: without a task or stacks) */
void src_close(struct source *s);

/* The descriptor to poll for input, or -1 while there is none (reconnecting, end, or a paced
 * file waiting for its next slot: call src_read() after src_wait_ms()). */
int src_fd(const struct source *s);
/* Milliseconds until the source wants attention without input (pacing, reconnect), or -1. */
int src_wait_ms(const struct source *s, double now);

/* Read what is there (never blocks). Returns the bytes read; 0 when nothing is available now.
 * A closed or failed live source moves to SRC_RECONNECTING; a file or stdin to SRC_END. */
ssize_t src_read(struct source *s, uint8_t *buf, size_t n, double now);
/* Reconnect attempts for a live source that went away. */
void src_tick(struct source *s, double now);

enum src_state src_state(const struct source *s);
enum src_kind src_kind(const struct source *s);
const char *src_name(const struct source *s);     /* "/dev/ttyUSB0 115200 8N1", "tcp:...", a path */
const char *src_message(const struct source *s);  /* why it is reconnecting, "" otherwise */
const char *src_last_failure(const struct source *s); /* why it last went away, even if back since; "" if never */
/* While connected but its protocol's handshake has not finished (a server that took the connection and
 * did not answer yet): what did not come, as "the GDB server never finished its handshake"; "" otherwise. */
const char *src_handshake(const struct source *s);
/* Why it went away when that was a failure (a lost connection, a server's error, a read error) and
 * it is not back; "" after its normal end (a file's end, a TCP stream its server closed, the
 * target's program ended) or while all is well. */
const char *src_failure(const struct source *s);
/* What a sampling source measures about itself, e.g. "812 halts/s, core halted 23 %"; "" if nothing. */
const char *src_detail(struct source *s, double now);
/* A halting source's achieved rate (halts per second) and intrusion (the share of wall time the
 * core spent halted by us); 0 when it is no halting source or has too few samples yet. */
int src_halting(const struct source *s, double *rate, double *halted_share);
/* What made a sampling source's ITM packets, SRC_BY_PCSR or SRC_BY_HALTS; NULL when they are
 * the target's own (a stream, or the SWO trace an openocd: source with swo= set up). */
#define SRC_BY_HALTS "gdb-halting"
#define SRC_BY_PCSR "openocd-pcsr"
const char *src_packets_by(const struct source *s);
uint64_t src_bytes(const struct source *s);
unsigned src_reconnects(const struct source *s);

/* Every failure of the run (each time the source went away by a failure, whether it came back or
 * not): how many, the first one's reason, the distinct reasons (the first SRC_REASONS) and how often
 * each came, and the seconds spent away after them. */
#define SRC_REASONS 8
struct src_failures {
    unsigned count, reconnects;
    double lost_s;
    const char *first;          /* "" when none */
    size_t n_reasons;
    const char *reason[SRC_REASONS];
    unsigned times[SRC_REASONS];
    unsigned returns;     /* times it went away and came back, failure or not: gaps in the profile */
    double away_s;        /* seconds away in those */
    const char *gone_why; /* why it last went away ("" never) */
};
void src_get_failures(const struct source *s, double now, struct src_failures *out);

/* Job control: before the process stops (Ctrl-Z), a gdb: or openocd: source lets go of the target
 * (resumed, detached, DEMCR as found); src_tick() reconnects once the process continues (a server
 * gone by then is a failure). Other sources are left as they are. */
void src_suspend(struct source *s, double now);

/* For gdb: sources: read the variable at addr (a task pointer, e.g. pxCurrentTCB) with each sample as
 * its task tag, and the task's name name_offset bytes into what it points to (-1: no names). The
 * samples then come as dump text with tags, not ITM. Returns 0 for any other source. */
int src_set_task_var(struct source *s, uint32_t addr, int name_offset);
/* rtt: only: the control block's address (the ELF's _SEGGER_RTT) instead of a search; 0 otherwise. */
int src_set_rtt_block(struct source *s, uint32_t addr);
/* gdb: only: walk each sample's stack up to depth callers with fn (gdb_set_unwind); 0 otherwise. */
int src_set_unwind(struct source *s, unsigned depth, gdb_unwind_fn fn, void *ctx);

/* --list-ports: one line per serial port with its description. Returns the number found. */
int src_list_ports(FILE *out);

#endif
