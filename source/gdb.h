/* Halting PC sampling through a GDB server (QEMU's gdbstub, OpenOCD, pyOCD, J-Link GDB Server,
 * Black Magic Probe): interrupt, read the PC, continue, at random intervals. Samples come out as
 * ITM PC-sample packets, so the rest of cmprof-top reads them like an SWO capture. Non-blocking:
 * the caller polls gdb_fd() and calls gdb_step() when it is readable or gdb_wait_ms() ran out. */
#ifndef CMPROF_SOURCE_GDB_H
#define CMPROF_SOURCE_GDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gdb_sampler;

/* Connect to where ("HOST:PORT", or a serial device path such as /dev/ttyACM0) and start the
 * handshake. rate: halts per second on average; 0: gentle, paced to keep the core halted about 10 %
 * of the time (from the measured cost of a halt); negative: as fast as the server answers. NULL
 * with a one-line reason in err when it cannot connect. */
struct gdb_sampler *gdb_open(const char *where, double rate, double now, char *err, size_t errlen);
/* The same over a descriptor already connected to the server (a socket, or a serial port when
 * probe: a Black Magic Probe, scanned and attached first); it is closed by gdb_close(). NULL when
 * out of memory (fd left open). For tests and the fuzzer, which talk through a socketpair. */
struct gdb_sampler *gdb_open_fd(int fd, bool probe, double rate, double now);
/* A conversation before this one (the link dropped, the tool was stopped and went on) found the target
 * halted mid-way or not (gdb_stats.found_halted, found_pc): this one keeps that finding, whatever the
 * target looks like now (a link that dropped while we held it halted leaves it halted). */
void gdb_found_before(struct gdb_sampler *g, bool halted, uint32_t pc);
/* A caller on a clock of its own (a simulation) does every wait itself: gdb_wait_ms() counts to the
 * halt, and gdb_step() never sleeps the last 2 ms on the host's clock. */
void gdb_caller_waits(struct gdb_sampler *g);
/* Whether a serial GDB server's path may be one: a terminal or character device, or nothing yet (it
 * may be plugged in later). false with a one-line reason for a regular file or a directory. */
bool gdb_serial_ok(const char *path, char *err, size_t errlen);
/* Leave the target running and detach (waits a second at most for the server), then free; a target found
 * halted mid-way when attached (gdb_stats.found_halted) is left halted instead, not detached. */
void gdb_close(struct gdb_sampler *g);

/* The handshake (qSupported ... the vector table's read) done: the server answers, samples can come. */
bool gdb_ready(const struct gdb_sampler *g);
int gdb_fd(const struct gdb_sampler *g);                 /* -1: nothing to read now, the timer runs */
int gdb_wait_ms(const struct gdb_sampler *g, double now); /* until a halt or a timeout is due; -1: none */
/* Read what the server sent and send what is due; returns the ITM bytes written to buf. After a
 * failure (lost connection, no reply in time, a refusal) it returns 0 and gdb_failed() says why. */
size_t gdb_step(struct gdb_sampler *g, uint8_t *buf, size_t n, double now);
const char *gdb_failed(const struct gdb_sampler *g);      /* NULL while all is well */
/* Read a task variable at addr (e.g. pxCurrentTCB) with each sample: samples then come out as the
 * firmware's dump text with tags, and a task's name is read once, name_offset bytes into what the
 * variable points to (up to 16 characters; -1: no names). */
void gdb_set_task_var(struct gdb_sampler *g, uint32_t addr, int name_offset);
/* Walk each sample's call stack (up to depth callers) while the core is halted: r0-r15 ('g') and
 * the stack's first bytes ('m') are read, and fn turns them into call sites. fn sets *psp_return to
 * the EXC_RETURN value when the walk reached code interrupted on the process stack (0 otherwise):
 * PSP ('p', by the target description) and the frame that value describes are read, and the walk
 * goes on from there. Samples then come as dump text with a
 * "stack" line. */
#define GDB_STACK_DEPTH_MAX 64 /* callers a sample's stack may have (a dump text "stack" line's most) */
typedef size_t (*gdb_unwind_fn)(void *ctx, const uint32_t regs[16],
                                bool (*read32)(void *rctx, uint32_t addr, uint32_t *value), void *rctx,
                                uint32_t *out, size_t max, uint32_t *psp_return);
void gdb_set_unwind(struct gdb_sampler *g, unsigned depth, gdb_unwind_fn fn, void *ctx);
/* Nothing a reconnect could change: the target's program ended, or the server's target description is
 * over the limit. */
bool gdb_final(const struct gdb_sampler *g);

struct gdb_stats {
    uint64_t samples;
    double halted_s, running_s; /* wall time with the core stopped by us, and not */
    double longest_halt_s;      /* the longest single halt: what a watchdog or a deadline meets */
    double longest_stop_s;      /* the longest wait from an interrupt to its stop reply: the server's part */
    double first_sample, last_sample;
    uint64_t self_stops;        /* the target stopped without being asked (a breakpoint, a fault) */
    uint64_t false_stops;       /* stop replies while it ran that were none: the interrupt after found it running */
    uint64_t resets;            /* the target reset while sampled (a watchdog running in debug, a fault) */
    uint64_t unsolicited;       /* stop replies the server sent on its own, outside any sample */
    uint64_t frames;            /* callers found by the unwinder, over all samples */
    bool found_halted;          /* halted when attached, not at its reset handler: halted again at the end */
    uint32_t found_pc;          /* ... where (0: unknown) */
    bool stacks_refused;        /* the server would not read the registers ('g'): no stacks */
    int pc_regnum;              /* from the target description (-1: assumed 15) */
    double rate;                /* the rate asked for (gdb_open's) */
    bool noack;
};
void gdb_get_stats(const struct gdb_sampler *g, struct gdb_stats *out);
/* The default pace's account (rate 0): what a new conversation after a reconnect takes on with
 * gdb_set_pace(), so that the halts still owe the running a slow halt left (a fresh pace forgot it:
 * halted 35 % of a run where one 1 s halt came just before the link dropped). */
struct gdb_pace {
    double halted_s, running_s; /* over every conversation so far */
    double forgiven;            /* running in excess not spent on halts */
    double halt_cost;           /* the average halt (0: none yet) */
};
void gdb_get_pace(const struct gdb_sampler *g, struct gdb_pace *out);
void gdb_set_pace(struct gdb_sampler *g, const struct gdb_pace *before);
/* Adds to text (a NUL-terminated line of size n) what the user should know about the target from
 * st, each clause after "; ": that the server is what limits the samples (its halts too slow for the
 * rate asked), stop replies that were none, stops of its own, that it reset while sampled, and the fix. */
void gdb_advice(const struct gdb_stats *st, char *text, size_t n);

#endif
