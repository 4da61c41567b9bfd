/* Halting PC sampling through a GDB server (see gdb.h). The conversation, one request at a time:
 *   qSupported -> [QStartNoAckMode] -> qXfer:features:read:target.xml (and its includes, to
 *   number the registers) -> ? -> c, then for each sample: 0x03 -> stop reply -> p<pc> -> c.
 * In all-stop mode any byte sent while the target runs stops it, so nothing else is sent then. */
#include "gdb.h"

#include "net.h"
#include "outq.h"
#include "rsp.h"
#include "../base/path.h"
#include "../base/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define REPLY_TIMEOUT 2.0    /* seconds a server may take to answer a request */
#define CLOSE_BUDGET 1.0     /* seconds gdb_close() may take in all, whatever the server does */
#define MAX_WAIT_FAST 0.0005 /* as fast as possible: random waits of 0-0.5 ms between samples */
#define GENTLE_SHARE 0.10    /* by default: the core halted at most this share of the time */
#define GENTLE_FIRST 0.01    /* ... and the mean wait before the cost of a halt is known */
#define XML_MAX (1 << 20)    /* bytes of target description, includes and all */
#define SLOW_HALT 0.05       /* a halt this long on average (under 2 halts/s at the default pace): the server is slow */
#define VERIFY_WAIT 0.05     /* the least wait for the interrupt's answer after a stop reply nobody asked for */
#define VERIFY_MAX 0.5       /* ... and the most */
#define GDB_SIGINT 2         /* a stop reply's signal: stopped by our interrupt */
#define GDB_SIGTRAP 5        /* ... by a breakpoint, or halted (what '?' says of a halted target) */
#define SHORT_WAIT 0.002     /* waits shorter than this are slept in gdb_step(), not polled */
#define ANNEXES 8
#define DHCSR_EVERY 1.0      /* seconds between reads of the core's reset flag (DHCSR.S_RESET_ST) */
#define DHCSR_ADDR 0xE000EDF0u
#define DHCSR_DEBUGEN 1u     /* C_DEBUGEN: set whenever a debugger is attached; 0: not a real DHCSR */
#define DHCSR_RESET_ST (1u << 25) /* the core was reset since the last read (cleared by reading) */
#define SAMPLE_TEXT_MAX (200 + 9 * GDB_STACK_DEPTH_MAX) /* one sample as dump text, its stack line and all */
#define REGNUM_MAX 65535     /* register numbers past this in a target description are not believed */
#define XPSR_LEGACY 25       /* cpsr/xpsr's number when the server describes no registers (GDB's old layout) */
#define ISR_TAG 0xFFFFFE00u  /* a sample in exception handler n is tagged ISR_TAG | n, as the firmware does */
#define IPSR_MASK 0x1FFu     /* xPSR's exception number: 0 in thread mode */
#define LATE_READ_MAX (16u << 20) /* bytes read past a reply's deadline while more kept waiting */

enum step {
    G_SUPPORTED, G_NOACK, G_SCAN, G_ATTACH, G_XML, G_QUERY, G_QEMU, G_VECTORS, G_FOUND_PC, G_RUNNING, G_HALTING, G_READING, G_DHCSR,
    G_XPSR, G_TAG, G_NAME, G_REGS, G_STACK, G_PSP, G_PSP_STACK, G_FPCCR, G_VERIFY, G_SYNC, G_SYNC_STOP, G_FAILED
};
#define STACK_READ 512    /* bytes of stack read for the unwinder in one 'm' request */
#define STACK_MAX 16384   /* ... and in all, for one sample: more is read only while the walk needs it */
#define NAMED_MAX 1024 /* tags whose names were read: a power of two */
/* ARMv8-M: a Secure context's frame with FP state holds S16-S31 too when FPCCR.TS is set; the
 * unwinder asks for FPCCR (at this address) when a frame's size depends on it, read again after
 * FPCCR_STALE seconds (Secure boot code sets TS, usually once) */
#define FPCCR_ADDR 0xE000EF34u
#define FPCCR_TS (1u << 26)
#define FPCCR_STALE 1.0

struct gdb_sampler {
    int fd;
    bool stamped; /* a socket that stamps what it receives (SO_TIMESTAMPNS) */
    double arrived; /* when the last read's bytes reached the host (the kernel's stamp), else when read */
    enum step step;
    struct rsp_decoder rsp;
    bool noack, xfer_features;
    bool caller_waits; /* gdb_caller_waits(): no short sleep in gdb_step() */
    bool probe;         /* a Black Magic Probe on a serial port: scan and attach first */
    double rate;
    double deadline;    /* a reply is due by then */
    uint64_t bytes_in;  /* read from the server, in all */
    uint64_t late_from; /* bytes_in when a deadline was first found passed with bytes waiting... */
    bool late;          /* ...once it was */
    double next_halt;   /* while running: when to interrupt */
    double halt_sent;   /* when the 0x03 went out */
    double halt_cost;   /* seconds halted per sample, a moving average (0: none yet) */
    double forgiven;    /* running time in excess that the default pace will not spend on halts */
    struct gdb_pace before; /* the default pace's account of the conversations before (gdb_set_pace) */
    /* resets while sampled: the reset handler's entry (vector table at 0) sampled again after the
     * program had left it, or the core's sticky reset flag */
    uint32_t reset_entry;      /* 0: unknown */
    bool left_entry;           /* a sample elsewhere since the last one at the entry */
    int dhcsr;                 /* 0: not read yet, 1: read (the next S_RESET_ST is news), -1: not there */
    double dhcsr_due;
    double resumed_at;  /* when the last 'c' went out */
    uint32_t rnd;
    char last[512];     /* the last packet sent, resent on '-' */
    size_t last_len;
    int resends;
    int bad_in_a_row;   /* replies that failed their checksum since the last good one */
    /* after a '-' of ours the server resends its last packet, which need not be the one that failed (QEMU's
     * stop reply at connect failed, the answer after it did not: the answer came twice). So the answer
     * taken after a '-' is followed by a marker request, and until the marker's answer (anything but that
     * answer again) the rest is dropped; then the request that was due goes out. */
    bool nak_sent;      /* a '-' went out since the last answer taken */
    bool sync_due;      /* ... and an answer was taken since: the next request waits behind a marker */
    uint64_t dup_hash;  /* the answer taken (FNV-1a of it): what a resend would repeat */
    size_t dup_len;
    char held[512];      /* the request that waits for the marker, framed */
    size_t held_len;
    enum step held_step;
    char held_what[64];
    char what[64];      /* the request awaiting its reply, for messages */
    struct rsp_stats asked;    /* the decoder's counts when it went out: what the server did since */
    /* the target description: annexes to read, and what they said */
    char annex[ANNEXES][64];
    int n_annex, cur_annex;
    size_t annex_start; /* where the current annex begins in xml */
    char *xml;
    size_t xml_len;
    int pc_regnum, xpsr_regnum, psp_regnum;
    uint32_t psp_return; /* the EXC_RETURN that sent the main stack's walk to the process stack; 0: none */
    /* --task-var: a variable read while halted gives each sample's task */
    bool has_task;
    uint32_t task_addr, pc, tag;
    int name_offset;            /* of the name inside what the variable points to; -1: none */
    uint32_t named[NAMED_MAX];  /* tags whose names went out (open addressing, 0: empty) */
    char name[17];              /* the sample's task name to send with it, "" for none */
    /* --stack-depth: registers and the stack read while halted, walked by the caller's unwinder */
    unsigned stack_depth;
    bool text_out;              /* samples go out as dump text (tags or stacks asked for) */
    gdb_unwind_fn unwind;
    void *unwind_ctx;
    uint32_t regs[16];
    uint8_t stack[STACK_MAX];
    uint32_t stack_base; /* the address stack[0] was read from */
    size_t stack_len;
    bool stack_short;    /* the walk wanted a word past what was read */
    bool stack_end;      /* the server gave less than asked: there is no more to read */
    int fpccr_known;     /* 0: not read (or stale), 1: read, -1: the server cannot read it */
    uint32_t fpccr;
    double fpccr_at;     /* when it was read */
    bool fpccr_wanted;   /* the walk asked for it while not read */
    enum step fpccr_then; /* the walk's step, to go on with once read */
    uint32_t callers[GDB_STACK_DEPTH_MAX]; /* walked so far: the main stack's part, then the process stack's */
    size_t n_callers, n_main; /* ... and how many of them the main stack gave */
    struct outq out; /* made and not yet handed out: ITM packets, or dump text with tags */
    struct gdb_stats stats;
    double now; /* of the gdb_step() under way */
    /* the target found halted at attach (see got_query): no stop announced, and '?' said SIGTRAP */
    bool announced;      /* a stop reply (or a packet that failed its checksum) before the first answer */
    bool found_halted;
    bool found_known;    /* gdb_found_before(): an earlier conversation's finding holds */
    /* an interrupt met a halted core (a stop of its own, verified: no answer); a server may keep it and stop
     * the next resume with it at once (OpenOCD clears its ctrl_c only when it halts a running core) */
    bool int_kept;
    bool exited; /* the target's program ended ('W' or 'X'): nothing more to sample */
    bool refused_for_good; /* the server's answer would be the same on every connection */
    char failed[300];
    double close_by; /* gdb_close() under way: every wait ends by then (monotonic clock) */
};

static double uniform(struct gdb_sampler *g)
{
    g->rnd ^= g->rnd << 13;
    g->rnd ^= g->rnd >> 17;
    g->rnd ^= g->rnd << 5;
    return (double)(g->rnd >> 8) / (double)(1u << 24);
}

/* The sampler is done: the stretch under way ends here and is counted (a program that exits while it
 * runs ran until then: left out, the share ended on the halt before, 98 % said for 25 %). */
static void fail(struct gdb_sampler *g, const char *why)
{
    if (g->step != G_FAILED) {
        snprintf(g->failed, sizeof g->failed, "%s", why);
        struct gdb_stats now;
        gdb_get_stats(g, &now);
        g->stats = now;
    }
    g->step = G_FAILED;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool send_raw(struct gdb_sampler *g, const char *bytes, size_t n)
{
    while (n) {
        ssize_t w = send(g->fd, bytes, n, MSG_NOSIGNAL); /* a closed socket is an error, not a signal */
        if (w < 0 && errno == ENOTSOCK)
            w = write(g->fd, bytes, n); /* a serial port (Black Magic Probe) */
        if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd p = {g->fd, POLLOUT, 0};
            double left = g->close_by > 0 ? g->close_by - mono_now() : 1.0; /* closing: its deadline */
            if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0) {
                fail(g, "the server does not take what we send");
                return false;
            }
            continue;
        }
        if (w <= 0) {
            char m[200];
            snprintf(m, sizeof m, "lost the connection (%s)", w < 0 ? strerror(errno) : "closed");
            fail(g, m);
            return false;
        }
        bytes += w;
        n -= (size_t)w;
    }
    return true;
}

/* A reply is due by now + REPLY_TIMEOUT; what the server sends from now on is its answer. */
static void awaiting(struct gdb_sampler *g, enum step next, double now)
{
    g->step = next;
    g->deadline = now + REPLY_TIMEOUT;
    g->late = false;
    g->asked = g->rsp.stats;
}

/* Whether a passed deadline's verdict waits: the server's bytes are still unread (a loaded host ran us
 * late, and the answer may sit behind the console output queued before it), and fewer than
 * LATE_READ_MAX were read since the deadline was found passed (a server that floods and never answers
 * is given up all the same, a few milliseconds later). */
static bool answer_may_be_waiting(struct gdb_sampler *g)
{
    int waiting = 0;
    if (ioctl(g->fd, FIONREAD, &waiting) != 0 || waiting <= 0)
        return false;
    if (!g->late) {
        g->late = true;
        g->late_from = g->bytes_in;
    }
    return g->bytes_in - g->late_from < LATE_READ_MAX;
}

/* No reply came in time: what the server sent instead, if anything (a packet with a bad checksum
 * is an answer, and so is a '-'). */
static void no_reply(struct gdb_sampler *g)
{
    const struct rsp_stats *now = &g->rsp.stats, *then = &g->asked;
    struct {
        unsigned long long count;
        const char *one, *many;
    } said[] = {{now->bad_checksums - then->bad_checksums, "a packet that failed its checksum",
                 "packets that failed their checksum"},
                {now->too_long - then->too_long, "a packet too long to take", "packets too long to take"},
                {now->packets - then->packets, "a packet that was no reply to it", "packets that were no reply to it"},
                {now->junk - then->junk, "a byte outside packets", "bytes outside packets"},
                {now->nacks - then->nacks, "a '-' (our packet refused)", "'-' (our packet refused)"}};
    char m[100];
    size_t n = 0;
    for (size_t k = 0; k < sizeof said / sizeof said[0] && n < sizeof m; k++) {
        if (!said[k].count)
            continue;
        int w = said[k].count == 1 ? snprintf(m + n, sizeof m - n, "%s%s", n ? ", " : "", said[k].one)
                                   : snprintf(m + n, sizeof m - n, "%s%llu %s", n ? ", " : "", said[k].count,
                                              said[k].many);
        n += w > 0 ? (size_t)w : 0;
    }
    char why[sizeof g->failed];
    if (!n) {
        snprintf(why, sizeof why, "no answer to %.45s within %.0f s%s", g->what, REPLY_TIMEOUT,
                 !g->noack && now->acks != then->acks ? " (the request was acknowledged, '+')" : "");
        fail(g, why);
        return;
    }
    bool resend = said[0].count && !g->noack, unacked = !g->noack && now->acks == 0;
    snprintf(why, sizeof why, "no good reply to %.45s within %.0f s: the server sent %.100s%s%s", g->what, REPLY_TIMEOUT, m,
             resend ? " (asked again with '-', it did not resend)" : "",
             unacked ? "; it never acknowledged a packet of ours ('+')" : "");
    fail(g, why);
}

static void send_marker(struct gdb_sampler *g, double now)
{
    const char *marker = g->dup_len ? "vMustReplyEmpty" : "?";
    g->sync_due = false;
    g->last_len = rsp_frame(g->last, sizeof g->last, marker, strlen(marker));
    g->resends = 0;
    snprintf(g->what, sizeof g->what, "%s (after a resend)", marker);
    awaiting(g, g->dup_len ? G_SYNC : G_SYNC_STOP, now);
    send_raw(g, g->last, g->last_len);
}

/* Send a request and expect its reply by now + REPLY_TIMEOUT. After a resend asked for with '-', a
 * marker goes first (see sync_due): vMustReplyEmpty, which every server answers with an empty packet
 * (GDB's own probe), or '?' when the answer a resend would repeat was itself empty. */
static void request(struct gdb_sampler *g, enum step next, const char *payload, double now)
{
    size_t n = rsp_frame(g->last, sizeof g->last, payload, strlen(payload));
    if (!n) {
        fail(g, "request too long");
        return;
    }
    g->last_len = n;
    g->resends = 0;
    snprintf(g->what, sizeof g->what, "%.40s%s", payload, strlen(payload) > 40 ? "..." : "");
    if (g->sync_due) {
        memcpy(g->held, g->last, n);
        g->held_len = n;
        g->held_step = next;
        memcpy(g->held_what, g->what, sizeof g->what);
        send_marker(g, now);
        return;
    }
    awaiting(g, next, now);
    send_raw(g, g->last, n);
}

/* While a marker's answer is awaited: whether d is the answer taken after our '-' again (the resend). */
static bool is_resend(const struct gdb_sampler *g, const char *d, size_t len)
{
    return (g->step == G_SYNC || g->step == G_SYNC_STOP) && len == g->dup_len && fnv1a64(d, len) == g->dup_hash;
}

/* The marker's answer is anything but the answer a resend would repeat: the server is in step again,
 * and the request that waited goes out (a resume's running starts only now). */
static void got_sync(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    if (is_resend(g, d, len))
        return; /* dropped */
    if (g->sync_due) { /* this answer was asked for again too: one more marker, the request still held */
        send_marker(g, now);
        return;
    }
    memcpy(g->last, g->held, g->held_len);
    g->last_len = g->held_len;
    g->resends = 0;
    memcpy(g->what, g->held_what, sizeof g->what);
    awaiting(g, g->held_step, now);
    if (g->held_step == G_RUNNING)
        g->resumed_at = now;
    send_raw(g, g->last, g->last_len);
}

static void read_annex(struct gdb_sampler *g, size_t offset, double now)
{
    char q[160];
    snprintf(q, sizeof q, "qXfer:features:read:%s:%zx,%x", g->annex[g->cur_annex], offset, 4000);
    request(g, G_XML, q, now);
}

/* The default pace, as a deadline: the core runs until the running time so far is (1 - share) /
 * share times the halted time so far, then a random stretch of mean (1 - share) / share times the
 * average halt; so halting takes about GENTLE_SHARE of the time, however slow the server is. All
 * the time owed is paid at once, however long the last halt took (on a loaded host the interrupt's
 * answer alone can take a hundred times the average): paying half at each halt left the core
 * halted over 12 % of 4 s runs beside a CPU hog. Running in excess (we woke late) shortens the
 * next waits, but by at most three mean stretches: a long stall is not paid back by halting flat
 * out. */
static double gentle_wait(struct gdb_sampler *g)
{
    const double ratio = (1.0 - GENTLE_SHARE) / GENTLE_SHARE, stretch = g->halt_cost * ratio;
    double owed = (g->before.halted_s + g->stats.halted_s) * ratio -
                  (g->before.running_s + g->stats.running_s - g->forgiven);
    if (g->halt_cost <= 0) /* (the first halt's time is owed, but its cost is no average yet: sampled()) */
        return (owed > 0 ? owed : 0) + 2.0 * GENTLE_FIRST * uniform(g);
    if (owed < -3.0 * stretch) { /* more than the longest random stretch ahead */
        g->forgiven += -3.0 * stretch - owed;
        owed = -3.0 * stretch;
    }
    double wait = owed + 2.0 * stretch * uniform(g);
    return wait > MAX_WAIT_FAST / 2 ? wait : MAX_WAIT_FAST / 2;
}

/* Let the target run until the next sample is due. */
/* How long a stop reply to an interrupt may take: twice the average halt (more than its stop reply's part),
 * VERIFY_WAIT to VERIFY_MAX. */
static double verify_wait(const struct gdb_sampler *g)
{
    double wait = 2.0 * g->halt_cost;
    return wait < VERIFY_WAIT ? VERIFY_WAIT : wait < VERIFY_MAX ? wait : VERIFY_MAX;
}

static void resume(struct gdb_sampler *g, double now)
{
    request(g, G_RUNNING, "c", now);
    g->resumed_at = now;
    if (g->rate == 0) {
        g->next_halt = now + gentle_wait(g); /* random already */
    } else {
        double mean = g->rate > 0 ? 1.0 / g->rate : MAX_WAIT_FAST / 2;
        /* a random interval, never the same one: a fixed one aliases with the program's loops. With
         * --rate it runs from the last halt, so the round trips do not slow the rate asked for. */
        double from = g->rate > 0 && g->halt_sent > 0 ? g->halt_sent : now;
        g->next_halt = from + 2.0 * mean * uniform(g);
        if (g->next_halt < now)
            g->next_halt = now;
    }
    /* a kept interrupt stops this resume at once: its stop reply is awaited before one more goes out (which
     * would meet the core halted, be kept in turn, and every resume after would be stopped at once) */
    if (g->int_kept && g->next_halt < now + verify_wait(g))
        g->next_halt = now + verify_wait(g);
}

/* A sample as the firmware's dump text: a block of one with its task (its name line before it the
 * first time), then its call stack when one was walked. The text decoder reads all of it. */
static void emit_text(struct gdb_sampler *g, uint32_t pc, const uint32_t *callers, size_t n_callers)
{
    char line[SAMPLE_TEXT_MAX];
    int n = 0;
    if (g->has_task && g->name[0])
        n = snprintf(line, sizeof line, "task %08x %s\n", (unsigned)g->tag, g->name);
    n += snprintf(line + n, sizeof line - (size_t)n, "prof raw n=1\np %08x\n", (unsigned)pc);
    if (g->has_task)
        n += snprintf(line + n, sizeof line - (size_t)n, "g %08x\n", (unsigned)g->tag);
    n += snprintf(line + n, sizeof line - (size_t)n, "end\n");
    if (g->stack_depth) {
        n += snprintf(line + n, sizeof line - (size_t)n, "stack %08x", (unsigned)pc);
        for (size_t k = 0; k < n_callers && n < (int)sizeof line - 12; k++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %08x", (unsigned)callers[k]);
        n += snprintf(line + n, sizeof line - (size_t)n, "\n");
    }
    if (n > 0 && n < (int)sizeof line)
        outq_bytes(&g->out, line, (size_t)n); /* room was checked before the reply was read */
}

static void sampled(struct gdb_sampler *g, double now);

/* The sample's PC (and task) are known: walk its stack first when asked to, then send it. */
static void sample_known(struct gdb_sampler *g, double now)
{
    if (g->stack_depth && g->unwind) {
        request(g, G_REGS, "g", now);
        return;
    }
    if (g->has_task || g->text_out)
        emit_text(g, g->pc, NULL, 0);
    else
        outq_pc(&g->out, g->pc);
    sampled(g, now);
}

/* The walk is over: the sample goes out with the callers found. */
static void stack_walked(struct gdb_sampler *g, double now)
{
    emit_text(g, g->pc, g->callers, g->n_callers);
    g->stats.frames += g->n_callers;
    sampled(g, now);
}

/* The stack snapshot's words, for the unwinder. */
static bool read_stack(void *ctx, uint32_t addr, uint32_t *value)
{
    struct gdb_sampler *g = ctx;
    uint32_t base = g->stack_base;
    if (addr == FPCCR_ADDR) { /* not stack: a register the frame rule needs (FPCCR.TS) */
        if (g->fpccr_known > 0 && g->now - g->fpccr_at < FPCCR_STALE) {
            *value = g->fpccr;
            return true;
        }
        g->fpccr_wanted |= g->fpccr_known >= 0;
        return false;
    }
    if (addr < base || addr - base > g->stack_len || g->stack_len - (addr - base) < 4) {
        g->stack_short |= addr >= base && addr - base < STACK_MAX - 4; /* more stack would help */
        return false;
    }
    const uint8_t *b = g->stack + (addr - base);
    *value = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

/* Whether the tag's name still has to be read (and marks it as read). */
static bool first_time(struct gdb_sampler *g, uint32_t tag)
{
    uint32_t key = tag ? tag : 1u; /* 0 marks an empty slot */
    for (uint32_t k = (key * 2654435761u) >> 22, n = 0; n < NAMED_MAX; k = (k + 1) & (NAMED_MAX - 1), n++) {
        if (g->named[k] == key)
            return false;
        if (!g->named[k]) {
            g->named[k] = key;
            return true;
        }
    }
    return false; /* full: the rest stay nameless */
}

static bool hex_le32(const char *d, size_t len, uint32_t *out)
{
    uint32_t v = 0;
    if (len < 8)
        return false;
    for (int k = 0; k < 8; k++) { /* target bytes in order: little-endian, high nibble first */
        int h = rsp_hex(d[k]);
        if (h < 0)
            return false;
        v |= (uint32_t)h << (8 * (k / 2) + (k % 2 ? 0 : 4));
    }
    *out = v;
    return true;
}

/* Registers are numbered in document order; a regnum="N" restarts the count at N. A number past
 * REGNUM_MAX (or no number) ends the numbering: the registers from there on stay unknown. */
static void number_registers(struct gdb_sampler *g)
{
    long next = 0;
    for (const char *p = g->xml; p && (p = strstr(p, "<reg ")) != NULL; p += 5) {
        const char *end = strchr(p, '>');
        if (!end)
            break;
        const char *rn = strstr(p, "regnum=\"");
        if (rn && rn < end) {
            char *stop;
            errno = 0;
            next = strtol(rn + 8, &stop, 10);
            if (stop == rn + 8 || errno || next < 0 || next > REGNUM_MAX)
                break;
        }
        if (next > REGNUM_MAX)
            break;
        const char *nm = strstr(p, "name=\"");
        if (nm && nm < end) {
            if (strncmp(nm + 6, "pc\"", 3) == 0)
                g->pc_regnum = (int)next;
            else if (strncmp(nm + 6, "xpsr\"", 5) == 0)
                g->xpsr_regnum = (int)next;
            else if (strncmp(nm + 6, "psp\"", 4) == 0)
                g->psp_regnum = (int)next;
        }
        next++;
    }
}

static void queue_includes(struct gdb_sampler *g, const char *text, size_t len)
{
    for (const char *p = text; p < text + len && (p = strstr(p, "href=\"")) != NULL; p += 6) {
        const char *q = strchr(p + 6, '"');
        if (!q || q - (p + 6) >= 63 || g->n_annex >= ANNEXES)
            break;
        snprintf(g->annex[g->n_annex++], sizeof g->annex[0], "%.*s", (int)(q - (p + 6)), p + 6);
    }
}

/* A piece of the target description, kept NUL-terminated; past XML_MAX in all it is refused. */
static bool add_xml(struct gdb_sampler *g, const char *d, size_t len)
{
    char m[120];
    if (g->xml_len + len >= XML_MAX) {
        snprintf(m, sizeof m, "the target description (target.xml and its includes) is over %d KiB",
                 XML_MAX / 1024);
        fail(g, m);
        g->refused_for_good = true; /* a reconnect would read the same megabyte again */
        return false;
    }
    char *x = realloc(g->xml, g->xml_len + len + 1);
    if (!x) {
        fail(g, "out of memory for the target description");
        return false;
    }
    memcpy(x + g->xml_len, d, len);
    g->xml = x;
    g->xml_len += len;
    g->xml[g->xml_len] = '\0';
    return true;
}

/* The registers' numbers from the target description when the server offers it, then '?'. */
static void describe_target(struct gdb_sampler *g, double now)
{
    if (g->xfer_features) {
        snprintf(g->annex[0], sizeof g->annex[0], "target.xml");
        g->n_annex = 1;
        g->cur_annex = 0;
        read_annex(g, 0, now);
    } else {
        g->xpsr_regnum = XPSR_LEGACY;
        request(g, G_QUERY, "?", now);
    }
}

/* Two hex digits at d (NUL-terminated: nothing past a non-hex byte is read). */
static bool hex2(const char *d)
{
    return rsp_hex(d[0]) >= 0 && rsp_hex(d[1]) >= 0;
}

/* "S05", "T02thread:01;": the target stopped. */
static bool is_stop_reply(const char *d)
{
    return (d[0] == 'S' || d[0] == 'T') && hex2(d + 1);
}

/* The two hex digits after a stop or exit reply's letter: its signal, or the exit status. */
static int reply_code(const char *d)
{
    return rsp_hex(d[1]) << 4 | rsp_hex(d[2]);
}

/* "W00", "X09": the target's program exited, or was killed by a signal. */
static bool is_exit(const char *d)
{
    return (d[0] == 'W' || d[0] == 'X') && hex2(d + 1);
}

/* "O" and hex: the target's console output, never a reply ("OK" is one). */
static bool is_console(const char *d, size_t len)
{
    return d[0] == 'O' && len > 1 && d[1] != 'K';
}

/* A sample is out: the core may run again. */
static void sampled(struct gdb_sampler *g, double now)
{
    g->stats.samples++;
    if (!g->stats.first_sample)
        g->stats.first_sample = now;
    g->stats.last_sample = now;
    g->stats.halted_s += now - g->halt_sent;
    double cost = now - g->halt_sent; /* from the stop request to the resume */
    if (cost > g->stats.longest_halt_s)
        g->stats.longest_halt_s = cost;
    /* a slow halt moves the average as one of 4 times the average: the default pace pays it back
     * whole anyway, and an average it inflated made the mean stretch too long for dozens of samples,
     * each stretch's excess taken back by halting flat out (a 5 s halt among 10 ms ones: 42 halts in
     * a row, each under 2 ms after the last) */
    if (g->halt_cost > 0 && cost > 4.0 * g->halt_cost)
        cost = 4.0 * g->halt_cost;
    /* the run's first halt is owed (halted_s) but starts no average: it often holds the server's own
     * waking up (5 s once, then 10 ms halts: an average of 5 s made every stretch 45 s, for minutes) */
    if (g->halt_cost > 0 || g->stats.samples > 1)
        g->halt_cost = g->halt_cost > 0 ? g->halt_cost + (cost - g->halt_cost) / 16 : cost;
    resume(g, now);
}

/* Ask for the stack from sp on, in STACK_READ pieces while the walk needs more. */
static void read_stack_from(struct gdb_sampler *g, enum step next, uint32_t sp, double now)
{
    char m[40];
    g->stack_base = sp;
    g->stack_len = 0;
    snprintf(m, sizeof m, "m%x,%x", (unsigned)sp, STACK_READ);
    request(g, next, m, now);
}

/* The stack piece the server sent, after those before it (an error or a short piece: the end). */
static void take_stack(struct gdb_sampler *g, const char *d, size_t len)
{
    size_t before = g->stack_len;
    for (size_t i = 0; d[0] != 'E' && i + 1 < len && g->stack_len < STACK_MAX; i += 2) {
        int hi = rsp_hex(d[i]), lo = rsp_hex(d[i + 1]);
        if (hi < 0 || lo < 0)
            break;
        g->stack[g->stack_len++] = (uint8_t)(hi << 4 | lo);
    }
    g->stack_end = g->stack_len - before < STACK_READ;
}

/* The callers on the process stack, from the frame the exception stacked at PSP (r0-r3, r12, lr,
 * pc, xpsr), after the main stack's n_main. */
static bool walk_process_stack(struct gdb_sampler *g, size_t want)
{
    /* ARMv8-M without DCRS stacks 40 bytes of callee state first; FP state (EXC_RETURN bit 4
     * clear) 72 bytes after the basic frame; xPSR's bit 9 an alignment word */
    uint32_t f[8], ret = g->psp_return, psp = g->regs[13], at = psp + ((ret & 0x20u) ? 0u : 40u), next_psp, fpccr;
    /* ... and S16-S31 (64 more) in a Secure context's FP frame (EXC_RETURN bit 6) with FPCCR.TS set */
    uint32_t fp = (ret & 0x10u) ? 0u
                  : (ret & 0x40u) && read_stack(g, FPCCR_ADDR, &fpccr) && (fpccr & FPCCR_TS) ? 136u : 72u;
    bool ok = true;
    g->n_callers = g->n_main;
    for (unsigned k = 0; k < 8 && ok; k++)
        ok = read_stack(g, at + 4u * k, &f[k]);
    if (!ok || !(f[6] & ~1u) || g->n_callers >= want)
        return false;
    uint32_t regs[16] = {f[0], f[1], f[2], f[3], 0, 0, 0, 0, 0, 0, 0, 0, f[4],
                         at + 32u + ((f[7] & (1u << 9)) ? 4u : 0u) + fp, f[5], f[6] & ~1u};
    /* r4-r11 as the halted core has them: the handler's own saves are not put back, so a frame
     * pointer (r7) the handler changed misleads the walk, which then stops */
    memcpy(regs + 4, g->regs + 4, 8 * sizeof regs[4]);
    g->callers[g->n_callers++] = f[6] & ~1u;
    g->n_callers += g->unwind(g->unwind_ctx, regs, read_stack, g, g->callers + g->n_callers, want - g->n_callers,
                              &next_psp);
    return true;
}

/* Walk what was read of the stack; read more of it while the walk stops for the lack of it (each
 * walk starts over: the unwinder is cheap next to a round trip), then the process stack's part. */
static void walk_stack(struct gdb_sampler *g, double now)
{
    size_t want = g->stack_depth < GDB_STACK_DEPTH_MAX ? g->stack_depth : GDB_STACK_DEPTH_MAX;
    g->stack_short = g->fpccr_wanted = false;
    if (g->step == G_PSP_STACK)
        walk_process_stack(g, want);
    else
        g->n_callers = g->n_main = g->unwind(g->unwind_ctx, g->regs, read_stack, g, g->callers, want, &g->psp_return);
    if (g->fpccr_wanted) { /* a frame's size depends on FPCCR.TS: read it, then walk again */
        char m[40];
        g->fpccr_then = g->step;
        snprintf(m, sizeof m, "m%x,4", FPCCR_ADDR);
        request(g, G_FPCCR, m, now);
        return;
    }
    if (g->stack_short && g->n_callers < want && !g->stack_end && g->stack_len < STACK_MAX) {
        char m[40];
        snprintf(m, sizeof m, "m%x,%x", (unsigned)(g->stack_base + g->stack_len), STACK_READ);
        request(g, g->step, m, now);
        return;
    }
    if (g->step != G_PSP_STACK && g->psp_return && g->psp_regnum >= 0 && g->n_callers < want) {
        char m[40];
        snprintf(m, sizeof m, "p%x", g->psp_regnum);
        request(g, G_PSP, m, now);
        return;
    }
    stack_walked(g, now);
}

/* The task variable: what the halted core was running. */
static void read_task(struct gdb_sampler *g, double now)
{
    char m[40];
    snprintf(m, sizeof m, "m%x,4", (unsigned)g->task_addr);
    request(g, G_TAG, m, now);
}

/* The PC is in: with --task-var, xPSR next (a halt in a handler is the handler's, never the
 * interrupted task's), then the task variable, while the core is still halted; or the sample. */
static void pc_known(struct gdb_sampler *g, double now)
{
    g->name[0] = '\0';
    if (g->has_task && g->xpsr_regnum >= 0) {
        char m[40];
        snprintf(m, sizeof m, "p%x", g->xpsr_regnum);
        request(g, G_XPSR, m, now);
        return;
    }
    if (g->has_task)
        read_task(g, now);
    else
        sample_known(g, now);
}

/* The replies, one function per step of the protocol: each is the answer to the request that
 * step sent, and sends the next request (or resumes the core, or fails). */

static void got_noack(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (g->step == G_NOACK && strcmp(d, "OK") == 0)
        g->noack = true;
    if (g->probe) /* "monitor swdp_scan", hex-encoded; its report comes as 'O' packets */
        request(g, G_SCAN, "qRcmd,737764705f7363616e", now);
    else
        describe_target(g, now);
}

/* qSupported: no-ack mode first when the server has it. */
static void got_supported(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    g->xfer_features = strstr(d, "qXfer:features:read+") != NULL;
    if (strstr(d, "QStartNoAckMode+"))
        request(g, G_NOACK, "QStartNoAckMode", now);
    else
        got_noack(g, d, len, now); /* no no-ack mode: on as if it had refused */
}

static void got_scan(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (d[0] == 'E') {
        char m[200];
        snprintf(m, sizeof m, "the probe's scan failed ('%.40s'): is the target powered and wired?", d);
        fail(g, m);
        return;
    }
    request(g, G_ATTACH, "vAttach;1", now);
}

/* A stop reply was due: true when it came, else the sampler fails, quoting what came instead. */
static bool stopped(struct gdb_sampler *g, const char *d, const char *before, const char *after)
{
    if (is_stop_reply(d))
        return true;
    char m[200];
    snprintf(m, sizeof m, "%s'%.40s'%s", before, d, after);
    fail(g, m);
    return false;
}

static void got_attach(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (stopped(g, d, "the probe found no target to attach to (", ")"))
        describe_target(g, now);
}

/* A piece of the target description: the rest of this annex, the next annex, or the registers. */
static void got_xml(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    bool more = d[0] == 'm';
    if ((d[0] == 'm' || d[0] == 'l') && !add_xml(g, d + 1, len - 1))
        return;
    if (d[0] == 'l') /* the whole annex is in: what it includes comes next */
        queue_includes(g, g->xml + g->annex_start, g->xml_len - g->annex_start);
    if (more && len > 1) {
        read_annex(g, g->xml_len - g->annex_start, now);
        return;
    }
    g->annex_start = g->xml_len;
    if (++g->cur_annex < g->n_annex) {
        read_annex(g, 0, now);
        return;
    }
    number_registers(g);
    request(g, G_QUERY, "?", now);
}

/* The PC's register asked for (its number from the target description, else r15), its answer taken at next. */
static void request_pc(struct gdb_sampler *g, enum step next, double now)
{
    char m[40];
    snprintf(m, sizeof m, "p%x", g->pc_regnum >= 0 ? g->pc_regnum : 15);
    request(g, next, m, now);
}

/* Whether the target was halted before we came, which only QEMU's gdbstub tells: it stops a running
 * guest when a client connects and says so with a stop reply before any request, and says nothing
 * of one that was halted already (-S, or a client before us that stopped it and left). Many servers
 * answer '?' with SIGTRAP whatever happened, and a probe's server halts the target on attach itself:
 * there it is taken as running, as before. So a '?' answering SIGTRAP with no stop announced is asked
 * whether the server is QEMU (qqemu.sstepbits, its own query); if so, the PC (read after the vector
 * table) tells where it was halted: at the reset handler it waits to be started (-S) and is started;
 * elsewhere it was stopped mid-way (a breakpoint, a debugger's halt) and is halted again when we let
 * go (gdb_close), never left running. */
static void got_query(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (!stopped(g, d, "unexpected answer to '?': ", ""))
        return;
    if (!g->found_known && !g->probe && !g->announced && reply_code(d) == GDB_SIGTRAP) {
        request(g, G_QEMU, "qqemu.sstepbits", now);
        return;
    }
    request(g, G_VECTORS, "m0,8", now); /* the reset handler's address, to know a reset by */
}

/* QEMU answers its own query with the single-step flags it has ("ENABLE=1,NOIRQ=2,NOTIMER=4"); any
 * other server with nothing (an unknown packet) or an error. */
static void got_qemu(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    g->found_halted = !g->announced && len > 7 && strncmp(d, "ENABLE=", 7) == 0;
    request(g, G_VECTORS, "m0,8", now);
}

static void got_vectors(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    uint32_t v[2];
    if (hex_le32(d, len, &v[0]) && hex_le32(d + 8, len - 8, &v[1]) && (v[1] & 1u) && v[1] > 1u)
        g->reset_entry = v[1] & ~1u; /* Thumb code: the address has bit 0 set */
    if (g->found_halted && !g->found_known) {
        request_pc(g, G_FOUND_PC, now);
        return;
    }
    resume(g, now);
}

/* A stop reply during the handshake that answered nothing (or a packet that failed its checksum): the
 * server stopped a running target, or the '?' answer taken was not the answer (a stop reply of its own
 * came first): either way the target is taken as running, as before the found-halted rule. */
static void was_announced(struct gdb_sampler *g)
{
    g->announced = true;
    if (!g->found_known)
        g->found_halted = false;
}

/* Where the target found halted was halted (see got_query). */
static void got_found_pc(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    uint32_t pc = 0;
    bool known = len == 8 && hex_le32(d, len, &pc);
    g->found_halted = !g->announced && (!known || !g->reset_entry || pc != g->reset_entry);
    g->stats.found_halted = g->found_halted;
    g->stats.found_pc = known ? pc : 0;
    resume(g, now);
}

/* The core is halted: read its PC. */
static void read_pc(struct gdb_sampler *g, double now)
{
    request_pc(g, G_READING, now);
}

/* Our interrupt's stop reply came: the longest wait for one is a figure of the run. */
static void stop_answered(struct gdb_sampler *g, double now)
{
    if (now - g->halt_sent > g->stats.longest_stop_s)
        g->stats.longest_stop_s = now - g->halt_sent;
}

/* The core stopped: read its PC. */
static void got_halted(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (!stopped(g, d, "unexpected answer to the interrupt: ", ""))
        return;
    stop_answered(g, now);
    g->int_kept = false; /* an interrupt met a running core: none is kept */
    read_pc(g, now);
}

/* A stop reply while the target runs, not asked for: a breakpoint or a fault stopped it, or the server
 * says so of its own (a stale or made-up stop, a reply meant for someone else) while the core runs on,
 * and registers read then would be a running core's. So the interrupt goes out first (a server takes
 * requests in turn: what is read after it is read halted), and its answer says which: stopped by it
 * (SIGINT, signal 2), the core was running; another signal, or no answer (a halted core ignores 0x03)
 * within twice the average halt (VERIFY_WAIT to VERIFY_MAX), it had stopped. Sampled either way. */
static void got_running(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (!is_stop_reply(d))
        return;
    double at = g->arrived > g->resumed_at && g->arrived < now ? g->arrived : now; /* (it reached us then) */
    g->stats.running_s += at - g->resumed_at; /* it ran until then: left out, the share said 26 % for 17 % */
    g->halt_sent = at;
    if (g->int_kept && reply_code(d) == GDB_SIGINT) { /* the kept interrupt's stop */
        g->int_kept = false;
        read_pc(g, now);
        return;
    }
    awaiting(g, G_VERIFY, now);
    g->deadline = now + verify_wait(g);
    snprintf(g->what, sizeof g->what, "the interrupt (0x03) after a stop reply");
    send_raw(g, "\x03", 1);
}

/* The interrupt's answer after a stop reply nobody asked for (see got_running). */
static void got_verify(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)len;
    if (!stopped(g, d, "unexpected answer to the interrupt: ", ""))
        return;
    bool by_us = reply_code(d) == GDB_SIGINT;
    g->stats.false_stops += by_us;
    g->stats.self_stops += !by_us;
    if (by_us)
        stop_answered(g, now);
    read_pc(g, now);
}

static void got_pc(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    uint32_t pc;
    char m[200];
    int regnum = g->pc_regnum >= 0 ? g->pc_regnum : 15;
    if (len != 8 && hex_le32(d, len, &pc)) { /* the PC is 32 bits: any other size is another register */
        snprintf(m, sizeof m, "the server answered the PC (register %d) with %zu hex digits, not 8: '%.40s'",
                 regnum, len, d);
        fail(g, m);
        return;
    }
    if (!hex_le32(d, len, &pc)) {
        snprintf(m, sizeof m, "the server would not read the PC (register %d): '%.40s'", regnum, d);
        fail(g, m);
        return;
    }
    g->pc = pc;
    if (g->reset_entry && pc == g->reset_entry && g->left_entry)
        g->stats.resets++; /* back at the first instruction after reset: nothing else gets there */
    g->left_entry = pc != g->reset_entry;
    if (g->dhcsr >= 0 && now >= g->dhcsr_due) {
        snprintf(m, sizeof m, "m%x,4", DHCSR_ADDR);
        request(g, G_DHCSR, m, now);
        return;
    }
    pc_known(g, now);
}

static void got_dhcsr(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    uint32_t v;
    if (!hex_le32(d, len, &v) || !(v & DHCSR_DEBUGEN)) {
        g->dhcsr = -1; /* unreadable, or not the real register (QEMU reads 0) */
    } else {
        g->stats.resets += g->dhcsr > 0 && (v & DHCSR_RESET_ST); /* the first read: since power-on */
        g->dhcsr = 1;
    }
    g->dhcsr_due = now + DHCSR_EVERY;
    pc_known(g, now);
}

/* xPSR: in a handler (its exception number, 2 and up) the sample is the handler's, tagged as the
 * firmware's sampler tags it; in thread mode the task variable says whose. A server that will not
 * read xPSR is not asked again: its samples go to the task. */
static void got_xpsr(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    uint32_t v;
    if (!hex_le32(d, len, &v)) {
        g->xpsr_regnum = -1;
        read_task(g, now);
        return;
    }
    if ((v & IPSR_MASK) < 2) { /* thread mode (1, reset, is never an active exception) */
        read_task(g, now);
        return;
    }
    g->tag = ISR_TAG | (v & IPSR_MASK);
    sample_known(g, now);
}

/* The task variable: the task's name next, the first time this task is seen. */
static void got_tag(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    char m[200];
    if (!hex_le32(d, len, &g->tag)) {
        snprintf(m, sizeof m, "the server would not read the task variable at 0x%08x: '%.40s'",
                 (unsigned)g->task_addr, d);
        fail(g, m);
        return;
    }
    if (g->name_offset >= 0 && first_time(g, g->tag)) {
        snprintf(m, sizeof m, "m%x,10", (unsigned)(g->tag + (uint32_t)g->name_offset));
        request(g, G_NAME, m, now);
        return;
    }
    sample_known(g, now);
}

static void got_name(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    size_t k = 0;
    for (size_t i = 0; i + 1 < len && k < 16; i += 2) { /* hex bytes up to the first NUL */
        int hi = rsp_hex(d[i]), lo = rsp_hex(d[i + 1]);
        if (hi < 0 || lo < 0 || d[0] == 'E')
            break;
        int c = hi << 4 | lo;
        if (c == 0)
            break;
        g->name[k++] = c > 32 && c < 127 ? (char)c : '_'; /* one word, printable: the dump's task line */
    }
    g->name[k] = '\0';
    if (!k)
        snprintf(g->name, sizeof g->name, "?");
    sample_known(g, now);
}

/* r0..r15 lead every ARM register set: the stack from sp on next. */
static void got_regs(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    for (int k = 0; k < 16; k++)
        if ((size_t)(8 * k + 8) > len || !hex_le32(d + 8 * k, 8, &g->regs[k])) {
            /* no registers from this server: the samples go on without their stacks */
            g->stack_depth = 0;
            g->stats.stacks_refused = true;
            emit_text(g, g->pc, NULL, 0);
            sampled(g, now);
            return;
        }
    read_stack_from(g, G_STACK, g->regs[13], now);
}

static void got_stack(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    take_stack(g, d, len);
    walk_stack(g, now);
}

static void got_fpccr(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    g->fpccr_known = hex_le32(d, len, &g->fpccr) ? 1 : -1; /* unreadable: frames as with TS clear */
    g->fpccr_at = now;
    g->step = g->fpccr_then;
    walk_stack(g, now);
}

static void got_psp(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    if (!hex_le32(d, len, &g->regs[13])) { /* no PSP: the stack ends at the exception */
        stack_walked(g, now);
        return;
    }
    read_stack_from(g, G_PSP_STACK, g->regs[13], now);
}

static void got_nothing(struct gdb_sampler *g, const char *d, size_t len, double now)
{
    (void)g, (void)d, (void)len, (void)now;
}

static void (*const replies[])(struct gdb_sampler *g, const char *d, size_t len, double now) = {
    [G_SUPPORTED] = got_supported, [G_NOACK] = got_noack,   [G_SCAN] = got_scan,       [G_ATTACH] = got_attach,
    [G_XML] = got_xml,             [G_QUERY] = got_query,   [G_QEMU] = got_qemu,       [G_VECTORS] = got_vectors, [G_FOUND_PC] = got_found_pc,
    [G_RUNNING] = got_running,
    [G_HALTING] = got_halted,      [G_READING] = got_pc,    [G_DHCSR] = got_dhcsr,     [G_XPSR] = got_xpsr,
    [G_TAG] = got_tag,
    [G_NAME] = got_name,           [G_REGS] = got_regs,     [G_STACK] = got_stack,     [G_PSP] = got_psp,
    [G_PSP_STACK] = got_stack,     [G_FPCCR] = got_fpccr,   [G_VERIFY] = got_verify,   [G_SYNC] = got_sync,
    [G_SYNC_STOP] = got_sync,
    [G_FAILED] = got_nothing,
};

/* The steps whose request a stop reply answers; at any other, one is news the server sent on its
 * own (QEMU stops a running guest when GDB connects, and says so before any request). */
static bool wants_stop(enum step step)
{
    return step == G_ATTACH || step == G_QUERY || step == G_HALTING || step == G_RUNNING || step == G_VERIFY ||
           step == G_SYNC_STOP;
}

/* The program ended: nothing more to sample, and the run says why. */
static void target_exited(struct gdb_sampler *g, const char *d)
{
    char m[80];
    snprintf(m, sizeof m, "the target %s %d", d[0] == 'W' ? "exited with status" : "was killed by signal",
             reply_code(d));
    fail(g, m);
    g->exited = true;
}

/* Every packet the server sends: console output, a stop reply nobody asked for and an exit may come
 * at any time (before the first request, between a request and its answer); the rest answers the
 * request of the step under way. */
static void on_packet(void *ctx, const char *d, size_t len)
{
    struct gdb_sampler *g = ctx;
    if (g->rsp.notification) /* non-stop mode's, never asked for here: not acknowledged */
        return;
    if (is_exit(d)) /* first: the acknowledgement may meet a connection the server already closed */
        target_exited(g, d);
    if (!g->noack)
        send_raw(g, "+", 1);
    if (g->exited || is_console(d, len))
        return;
    if (is_stop_reply(d) && !wants_stop(g->step) && g->step < G_RUNNING)
        was_announced(g);
    if (is_stop_reply(d) && !wants_stop(g->step)) {
        g->stats.unsolicited++;
        return;
    }
    if (g->nak_sent && g->step != G_FAILED && !is_resend(g, d, len)) {
        /* the answer taken after a '-' (a marker's too): a resend of it may follow (see sync_due) */
        g->nak_sent = false;
        g->sync_due = true;
        g->dup_hash = fnv1a64(d, len);
        g->dup_len = len;
    }
    replies[g->step](g, d, len, g->now);
}

static void on_ack(void *ctx, bool positive)
{
    struct gdb_sampler *g = ctx;
    if (positive || g->noack || g->step == G_FAILED || !g->last_len)
        return;
    if (++g->resends > 3) {
        fail(g, "the server refused our packets (bad checksum, 3 times)");
        return;
    }
    send_raw(g, g->last, g->last_len);
}

static int connect_tcp(const char *where, char *err, size_t errlen)
{
    char host[200];
    const char *colon = strrchr(where, ':');
    if (!colon || colon == where || (size_t)(colon - where) >= sizeof host || !net_port(colon + 1)) {
        snprintf(err, errlen, "use gdb:HOST:PORT (a port from 1 to 65535) or gdb:/dev/ttyACM0");
        return -1;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - where), where);
    return net_connect(host, colon + 1, true, NULL, err, errlen);
}

/* Character device majors of serial lines: ttyS (from minor 64: below are the virtual consoles),
 * the pseudo-terminals' slaves (136-143), ttyACM (166), ttyUSB (188), ttyAMA and other SoC UARTs (204).
 * Any other major is a serial line only when sysfs files it under the tty class. */
static bool serial_major(unsigned maj, unsigned min)
{
    return (maj == 4 && min >= 64) || (maj >= 136 && maj <= 143) || maj == 166 || maj == 188 || maj == 204;
}

static bool tty_class(unsigned maj, unsigned min)
{
    char link[64], target[256];
    snprintf(link, sizeof link, "/sys/dev/char/%u:%u/subsystem", maj, min);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return false;
    target[n] = '\0';
    return strcmp(path_base(target), "tty") == 0;
}

/* What a serial GDB server's path is, from stat() alone, before anything opens it (opening alone can
 * start a device: a watchdog): NULL for a serial line, else what it is instead. The controlling
 * terminal, the console and the virtual consoles (majors 4 below 64, and 5) are terminals but never
 * a probe. */
static const char *not_serial(const struct stat *st)
{
    if (!S_ISCHR(st->st_mode))
        return S_ISDIR(st->st_mode)    ? "a directory"
               : S_ISREG(st->st_mode)  ? "a regular file"
               : S_ISFIFO(st->st_mode) ? "a FIFO"
               : S_ISSOCK(st->st_mode) ? "a socket (a GDB server on TCP is gdb:HOST:PORT)"
               : S_ISBLK(st->st_mode)  ? "a block device"
                                       : "no device";
    unsigned maj = major(st->st_rdev), min = minor(st->st_rdev);
    if (maj == 5 || (maj == 4 && min < 64))
        return "this machine's console or controlling terminal";
    if (serial_major(maj, min) || tty_class(maj, min))
        return NULL;
    return "a character device that is no terminal";
}

bool gdb_serial_ok(const char *path, char *err, size_t errlen)
{
    struct stat st;
    const char *what;
    if (stat(path, &st) != 0 || !(what = not_serial(&st)))
        return true; /* absent: it may be plugged in later */
    snprintf(err, errlen, "gdb:%s is %s: not a serial port (a terminal such as /dev/ttyACM0)", path, what);
    return false;
}

/* A serial GDB server (Black Magic Probe) is a terminal: anything else is refused before it is opened
 * (by its type and device number) and again once open (the same file, and a terminal to the kernel:
 * tcgetattr), before a byte is written; nothing is ever created. */
static int open_serial_gdb(const char *path, char *err, size_t errlen)
{
    struct stat before, st;
    struct termios t;
    const char *what;
    if (stat(path, &before) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if ((what = not_serial(&before)) != NULL) {
        snprintf(err, errlen, "%s: not a serial port", what);
        return -1;
    }
    int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_rdev != before.st_rdev || st.st_ino != before.st_ino ||
        tcgetattr(fd, &t) != 0) {
        snprintf(err, errlen, "not a serial port (no terminal once opened)");
        close(fd);
        return -1;
    }
    cfmakeraw(&t); /* USB CDC ignores the speed; raw bytes matter */
    t.c_cflag |= CLOCAL | CREAD;
    tcsetattr(fd, TCSANOW, &t);
    return fd;
}

struct gdb_sampler *gdb_open(const char *where, double rate, double now, char *err, size_t errlen)
{
    int fd = where[0] == '/' ? open_serial_gdb(where, err, errlen) : connect_tcp(where, err, errlen);
    if (fd < 0)
        return NULL;
    struct gdb_sampler *g = gdb_open_fd(fd, where[0] == '/', rate, now);
    if (!g) {
        close(fd);
        snprintf(err, errlen, "out of memory");
    }
    return g;
}

struct gdb_sampler *gdb_open_fd(int fd, bool probe, double rate, double now)
{
    struct gdb_sampler *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); /* a serial port: the socket already is */
    g->fd = fd;
    int one = 1; /* (a serial port is no socket: read as before) */
    g->stamped = setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0;
    g->probe = probe;
    g->rate = rate;
    g->rnd = 2463534242u;
    g->pc_regnum = g->xpsr_regnum = g->psp_regnum = -1;
    rsp_init(&g->rsp);
    send_raw(g, "+", 1); /* what GDB sends first: harmless, and wakes some probes */
    request(g, G_SUPPORTED, "qSupported:multiprocess-;swbreak+;hwbreak+;xmlRegisters=arm", now);
    return g;
}

bool gdb_ready(const struct gdb_sampler *g)
{
    enum step step = g->step == G_SYNC || g->step == G_SYNC_STOP ? g->held_step : g->step;
    return step >= G_RUNNING && step < G_SYNC; /* the steps after the handshake's */
}

int gdb_fd(const struct gdb_sampler *g)
{
    return g->step == G_RUNNING || g->step == G_FAILED ? -1 : g->fd;
}

void gdb_found_before(struct gdb_sampler *g, bool halted, uint32_t pc)
{
    g->found_known = true;
    g->found_halted = g->stats.found_halted = halted;
    g->stats.found_pc = pc;
}

void gdb_caller_waits(struct gdb_sampler *g)
{
    g->caller_waits = true;
}

int gdb_wait_ms(const struct gdb_sampler *g, double now)
{
    double due = g->step == G_RUNNING ? g->next_halt - (g->caller_waits ? 0 : SHORT_WAIT)
               : g->step == G_FAILED ? now : g->deadline;
    double dt = due - now;
    return dt <= 0 ? 0 : dt > 3600 ? 3600000 : (int)(dt * 1000.0) + 1; /* --rate 1e-9: no int overflow */
}

/* A read, and how long ago its bytes reached the host (*age; 0 when not stamped): a loaded host runs
 * the tool late, and a stop reply the target sent of its own ended its running when it arrived,
 * not when read (beside CPU hogs, read 0.2-3 s late: the halted share said 14.2 % for 17.3 %). */
static ssize_t read_aged(struct gdb_sampler *g, void *buf, size_t n, double *age)
{
    *age = 0;
    if (!g->stamped)
        return read(g->fd, buf, n);
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes, .msg_controllen = sizeof ctl.bytes};
    ssize_t got = recvmsg(g->fd, &m, 0);
    for (struct cmsghdr *c = got > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
        struct timespec at, real;
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS || clock_gettime(CLOCK_REALTIME, &real))
            continue;
        memcpy(&at, CMSG_DATA(c), sizeof at);
        double a = (double)(real.tv_sec - at.tv_sec) + (double)(real.tv_nsec - at.tv_nsec) * 1e-9;
        *age = a > 0 && a < 60 ? a : 0; /* (a clock set meanwhile: not trusted) */
    }
    return got;
}

size_t gdb_step(struct gdb_sampler *g, uint8_t *buf, size_t n, double now)
{
    const struct rsp_sink sink = {on_packet, on_ack, g};
    g->now = now;
    if (g->step != G_FAILED) {
        uint8_t in[4096];
        ssize_t got = -1;
        double age;
        /* a bounded read: a server that floods must not keep us from the timeouts below */
        /* replies are read only while a sample's output (a name line and a block) surely fits */
        for (int k = 0; k < 16 && g->step != G_FAILED && outq_room(&g->out) >= SAMPLE_TEXT_MAX &&
                        (got = read_aged(g, in, sizeof in, &age)) > 0;
             k++) {
            g->arrived = now - age;
            uint64_t bad = g->rsp.stats.bad_checksums, good = g->rsp.stats.packets;
            g->bytes_in += (uint64_t)got;
            rsp_feed(&g->rsp, in, (size_t)got, &sink);
            g->bad_in_a_row = g->rsp.stats.packets != good ? 0 : g->bad_in_a_row;
            if (g->rsp.stats.bad_checksums != bad && g->step != G_FAILED) {
                g->bad_in_a_row += (int)(g->rsp.stats.bad_checksums - bad);
                if (g->step < G_RUNNING) /* it may have been a stop reply: taken as one */
                    was_announced(g);
                if (g->bad_in_a_row > 3)
                    fail(g, "the server's replies keep failing their checksum");
                else if (!g->noack && send_raw(g, "-", 1)) /* ask for it again */
                    g->nak_sent = true;
            }
        }
        if (got == 0)
            fail(g, "the server closed the connection");
        else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            char m[200];
            snprintf(m, sizeof m, "lost the connection (%s)", strerror(errno));
            fail(g, m);
        }
    }
    if (g->step == G_RUNNING && !g->caller_waits && now < g->next_halt && g->next_halt - now < SHORT_WAIT) {
        /* poll() counts in milliseconds: sleep the last stretch here, to the microsecond */
        double dt = g->next_halt - now, before = mono_now();
        struct timespec ts = {0, (long)(dt * 1e9)};
        nanosleep(&ts, NULL);
        /* not next_halt: a loaded host oversleeps, and that is running; what was slept, on the
         * caller's clock (taking the monotonic clock's reading as it is moved a caller on another
         * clock, a simulation or the fuzz target, hours back or ahead: a share of -137,000 %) */
        now = g->now = now + (mono_now() - before);
    }
    if (g->step == G_RUNNING && now >= g->next_halt) {
        /* interrupt: a bare 0x03, no packet; the stop reply comes back */
        g->stats.running_s += now - g->resumed_at;
        g->halt_sent = now;
        g->int_kept = false; /* no stop came of one kept: the server keeps none */
        awaiting(g, G_HALTING, now);
        snprintf(g->what, sizeof g->what, "the interrupt (0x03)");
        send_raw(g, "\x03", 1);
    } else if (g->step != G_RUNNING && g->step != G_FAILED && now > g->deadline && answer_may_be_waiting(g)) {
        /* read on first: the next step comes at once (gdb_wait_ms: the deadline passed) */
    } else if (g->step == G_VERIFY && now > g->deadline) {
        g->stats.self_stops++; /* no answer to the interrupt: the core had stopped on its own */
        g->int_kept = true;
        read_pc(g, now);
    } else if (g->step != G_RUNNING && g->step != G_FAILED && now > g->deadline) {
        no_reply(g);
    }
    return outq_take(&g->out, buf, n);
}

void gdb_set_unwind(struct gdb_sampler *g, unsigned depth, gdb_unwind_fn fn, void *ctx)
{
    g->stack_depth = depth;
    g->text_out |= depth > 0;
    g->unwind = fn;
    g->unwind_ctx = ctx;
}

void gdb_set_task_var(struct gdb_sampler *g, uint32_t addr, int name_offset)
{
    g->has_task = true;
    g->task_addr = addr;
    g->name_offset = name_offset;
}

const char *gdb_failed(const struct gdb_sampler *g)
{
    return g->step == G_FAILED ? g->failed : NULL;
}

bool gdb_final(const struct gdb_sampler *g)
{
    return g->exited || g->refused_for_good;
}

/* The figures so far, with the stretch under way at the last step: the core running since the
 * last sample (without it, a share read after a long halt ends on that halt and leaves out the
 * running that pays for it), or halted by us since the interrupt. */
void gdb_get_stats(const struct gdb_sampler *g, struct gdb_stats *out)
{
    *out = g->stats;
    if (g->step == G_RUNNING && g->resumed_at > 0 && g->now > g->resumed_at)
        out->running_s += g->now - g->resumed_at;
    else if (g->step != G_FAILED && g->resumed_at > 0 && g->halt_sent > g->resumed_at && g->now > g->halt_sent) {
        out->halted_s += g->now - g->halt_sent; /* a halt under way counts, the longest too */
        if (g->now - g->halt_sent > out->longest_halt_s)
            out->longest_halt_s = g->now - g->halt_sent;
    }
    out->pc_regnum = g->pc_regnum;
    out->noack = g->noack;
    out->rate = g->rate;
}

/* One more clause of advice after what text holds, "; " between. */
static void advise(char *text, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void advise(char *text, size_t n, const char *fmt, ...)
{
    size_t len = strlen(text);
    if (len + 2 >= n)
        return;
    if (len) {
        memcpy(text + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + len, n - len, fmt, ap);
    va_end(ap);
}

/* The server is what limits the samples: its halts are so slow that the rate asked (or the default
 * pace's, at most GENTLE_SHARE of the time halted) is out of reach. Said with the figures that show
 * it: the average halt and the longest wait for a stop reply. */
static void advise_slow(const struct gdb_stats *st, char *text, size_t n)
{
    double span = st->halted_s + st->running_s;
    double mean = st->samples ? st->halted_s / (double)st->samples : st->longest_halt_s;
    if (span <= 0 || mean <= 0)
        return;
    double got = (double)st->samples / span, reach = st->rate > 0 ? 1.0 / mean : GENTLE_SHARE / mean;
    char asked[80];
    if (st->rate > 0 && got < 0.5 * st->rate && mean > 0.5 / st->rate)
        snprintf(asked, sizeof asked, "where --rate asked %g", st->rate);
    else if (st->rate < 0 && mean > SLOW_HALT)
        snprintf(asked, sizeof asked, "flat out (--rate max)");
    else if (st->rate == 0 && mean > SLOW_HALT)
        snprintf(asked, sizeof asked, "at the default pace (the core halted %.0f %% of the time)", 100.0 * GENTLE_SHARE);
    else
        return;
    if (st->rate < 0)
        reach = 1.0 / mean;
    if (!st->samples) {
        advise(text, n, "the GDB server has not stopped the core %.0f ms after the interrupt: it is what limits the "
               "samples (a slow probe or link?)", 1000.0 * st->longest_halt_s);
        return;
    }
    advise(text, n, "the GDB server limits the samples: a halt takes %.0f ms on average (the server took up to %.0f ms "
           "to stop the core), so about %.2g halts/s %s: a slow probe or link (a proxy without TCP_NODELAY?)",
           1000.0 * mean, 1000.0 * st->longest_stop_s, reach, asked);
}

void gdb_get_pace(const struct gdb_sampler *g, struct gdb_pace *out)
{
    struct gdb_stats st;
    gdb_get_stats(g, &st);
    *out = (struct gdb_pace){g->before.halted_s + st.halted_s, g->before.running_s + st.running_s, g->forgiven,
                             g->halt_cost};
}

void gdb_set_pace(struct gdb_sampler *g, const struct gdb_pace *before)
{
    g->before = *before;
    g->before.forgiven = 0; /* (kept in g->forgiven, which the pace moves) */
    g->forgiven = before->forgiven;
    g->halt_cost = before->halt_cost;
}

void gdb_advice(const struct gdb_stats *st, char *text, size_t n)
{
    advise_slow(st, text, n);
    if (st->false_stops)
        advise(text, n, "the server sent %llu stop repl%s while the target ran that %s none (the interrupt sent after "
               "found it running): not taken for a stop", (unsigned long long)st->false_stops,
               st->false_stops == 1 ? "y" : "ies", st->false_stops == 1 ? "was" : "were");
    if (st->self_stops)
        advise(text, n, "the target stopped on its own %llu time%s (a breakpoint, a fault): sampled where it stopped, "
               "and resumed", (unsigned long long)st->self_stops, st->self_stops == 1 ? "" : "s");
    if (st->found_halted)
        advise(text, n, "the target was halted when cmprof attached (at 0x%08x, not where it starts: a breakpoint, a "
               "debugger's halt?): it runs while sampled and is halted again when cmprof lets go", (unsigned)st->found_pc);
    if (st->resets)
        advise(text, n, "the target reset %llu time%s while sampled: a watchdog that runs while "
               "the core is halted? freeze it in debug (STM32: DBGMCU DBG_IWDG_STOP/DBG_WWDG_STOP), or a fault",
               (unsigned long long)st->resets, st->resets == 1 ? "" : "s");
}

/* What gdb_close() waits for: the first stop reply, or the first reply that is none of the packets
 * a server sends on its own (console output, a stop reply, an exit); acknowledged, and copied before
 * the decoder reuses its buffer. */
struct close_wait {
    struct gdb_sampler *g;
    bool want_stop, got;
    char reply[16];
};

static void close_packet(void *ctx, const char *d, size_t len)
{
    struct close_wait *w = ctx;
    if (w->g->rsp.notification)
        return;
    if (!w->g->noack)
        send_raw(w->g, "+", 1);
    if (w->got || is_console(d, len) || is_exit(d) || (w->want_stop != is_stop_reply(d)))
        return;
    w->got = true;
    snprintf(w->reply, sizeof w->reply, "%.*s", (int)(len < 15 ? len : 15), d);
}

/* Read until that reply came or `until` (on the monotonic clock) passed, whatever the server sends:
 * a flood, a trickle or nothing. */
static bool await_reply(struct gdb_sampler *g, double until, struct close_wait *w)
{
    const struct rsp_sink sink = {close_packet, NULL, w};
    while (!w->got) {
        double left = until - mono_now();
        struct pollfd p = {g->fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            return false;
        uint8_t in[512];
        ssize_t got = read(g->fd, in, sizeof in);
        if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR)))
            return false;
        if (got > 0)
            rsp_feed(&g->rsp, in, (size_t)got, &sink);
    }
    return true;
}

static void send_packet(struct gdb_sampler *g, const char *payload)
{
    char frame[32];
    size_t n = rsp_frame(frame, sizeof frame, payload, strlen(payload));
    send_raw(g, frame, n);
}

/* Stop a running target (it listens only then), detach, which lets it run, and if the detach is
 * not confirmed, resume it: each step within its share of CLOSE_BUDGET, the whole within it. */
/* Let the last packets reach the server before the socket goes: closing a socket with unread input
 * (a console flood) sends a reset, and the server may drop the 'D' or 'c' still in its queue. So
 * the sending side is shut first and what the server still sends is read until it closes, or until
 * `until`. A serial line has no such reset: nothing to do there. */
static void drain_before_close(int fd, double until)
{
    if (shutdown(fd, SHUT_WR) != 0)
        return; /* not a socket */
    char junk[4096];
    for (double left; (left = until - mono_now()) > 0;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            return;
        ssize_t n = read(fd, junk, sizeof junk);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return;
    }
}

void gdb_close(struct gdb_sampler *g)
{
    if (!g)
        return;
    if (g->fd >= 0 && !g->exited && !(g->step == G_FAILED && strstr(g->failed, "connection"))) {
        double start = mono_now();
        struct close_wait stop = {g, true, false, ""}, detach = {g, false, false, ""};
        g->close_by = start + CLOSE_BUDGET;
        if (g->step == G_RUNNING) {
            send_raw(g, "\x03", 1);
            await_reply(g, start + CLOSE_BUDGET / 2, &stop);
        } else if (g->step != G_FAILED) {
            stop.want_stop = wants_stop(g->step);
            await_reply(g, start + CLOSE_BUDGET / 2, &stop); /* the reply in flight */
        }
        g->step = G_QUERY; /* not failed: send_raw may still write */
        if (!g->found_halted) { /* a detach lets it run; found halted mid-way, it stays halted: no detach */
            send_packet(g, "D");
            if (!await_reply(g, g->close_by, &detach) || strcmp(detach.reply, "OK") != 0)
                send_packet(g, "c"); /* no detach: at least let it run */
        }
        double now = mono_now();
        drain_before_close(g->fd, (now < g->close_by ? now : g->close_by) + 0.2); /* 0.2 s past the budget at most */
    }
    if (g->fd >= 0)
        close(g->fd);
    free(g->xml);
    free(g);
}
