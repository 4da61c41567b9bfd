/* PCSR sampling through OpenOCD's Tcl server (see openocd.h). Every command and every reply ends
 * with the byte 0x1a. Each command is wrapped as `list [catch {...} r] $r`, so a reply is "0 result"
 * or "1 error message", whatever the command printed. */
#include "openocd.h"

#include "net.h"
#include "outq.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEMCR 0xE000EDFCu
#define TRCENA (1u << 24)
#define DWT_CTRL 0xE0001000u
#define ITM_TCR 0xE0000E80u
#define ITM_TER0 0xE0000E00u
#define DBGMCU_CR 0xE0042004u /* STM32's: the target configuration's pre-enable sets its trace pins */
#define SWO_TRACE_PORT 6670
#define SWO_PIN_MAX 2000000u  /* Hz: what an ST-Link V2 takes; J-Link and CMSIS-DAP probes go higher */
#define SWO_LINE_SHARE 100u   /* cycles a sample per (traceclk / pin): PC samples fill half the line */
#define PCSR 0xE000101Cu
#define BURST 64
#define REPLY_TIMEOUT 3.0
#define REPLY_MAX 65536
/* seconds for the whole close (the core resumed, DEMCR put back): twice this, a close on a failure
 * then one at exit, stays inside the 2 s in which the tool must exit after q or a signal */
#define CLOSE_WITHIN 0.8
#define CLOSE_CONNECT 0.25 /* seconds for a second connection to the server, when the close needs one */
#define CLOSE_SCRIPT 0.4   /* ... and for the closing script's reply on it */

/* swo=: OCD_SWO_REGS registers saved before the set-up and put back, in this order, at the close:
 * sampling stops first, trace enable (DEMCR) goes last. TPIU offsets are from its base address. */
static const struct swo_reg {
    uint32_t addr;
    bool tpiu;
} swo_regs[OCD_SWO_REGS] = {
    {DWT_CTRL, false}, {ITM_TCR, false}, {ITM_TER0, false}, {ITM_TER0 + 4, false}, {ITM_TER0 + 8, false},
    {ITM_TER0 + 12, false}, {ITM_TER0 + 16, false}, {ITM_TER0 + 20, false}, {ITM_TER0 + 24, false},
    {ITM_TER0 + 28, false}, {0x004, true} /* CSPSR */, {0x010, true} /* ACPR */, {0x0F0, true} /* SPPR */,
    {0x304, true} /* FFCR */, {DBGMCU_CR, false}, {DEMCR, false}};
enum { SWO_DEMCR = OCD_SWO_REGS - 1, SWO_DWT = 0 };

enum step { O_PROBE, O_ENABLE, O_FIRST, O_BURST,
            S_NAMES, S_BASE, S_SAVE, S_TRCENA, S_CONFIG, S_START, S_ITM, S_TCR, S_DWT, S_STREAM, O_FAILED };

struct ocd_sampler {
    int fd;
    enum step step;
    double deadline, sent_at;
    char what[48];
    char reply[REPLY_MAX];
    size_t reply_len;
    bool awaiting;          /* a command's reply has not come yet */
    bool lost;              /* the connection is gone: nothing more can be sent */
    struct ocd_original *first; /* the caller's: DEMCR as the first connection found it */
    bool restore;           /* first->demcr lacks the TRCENA we set (now or before a drop): put it back */
    struct outq out; /* ITM packets made and not yet handed out */
    struct ocd_stats stats;
    bool hopeless; /* no target behind this server: reconnecting cannot help */
    char failed[300];
    struct sockaddr_storage peer; /* the server's address, for the close's second connection */
    socklen_t peer_len;           /* 0: unknown */
    /* swo= only */
    struct ocd_swo swo;
    char host[200];
    int trace_fd;                 /* the trace: OpenOCD's TCP port or the file it writes; -1 before */
    bool trace_is_file;           /* a regular file: read on a timer, not polled */
    bool touched;                 /* a set-up command went out: the close puts the registers back */
    uint32_t found[OCD_SWO_REGS]; /* as this connection found them */
};

static void fail(struct ocd_sampler *o, const char *why)
{
    if (o->step != O_FAILED)
        snprintf(o->failed, sizeof o->failed, "%s", why);
    o->step = O_FAILED;
}

static double clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Send a whole Tcl command, wrapped so that its reply carries the catch code, before deadline
 * (a server that stops reading must not hold us). False, with the reason in m, when it could not. */
static bool send_tcl(struct ocd_sampler *o, const char *tcl, double deadline, char *m, size_t mlen)
{
    char buf[1200];
    int n = snprintf(buf, sizeof buf, "list [catch {%s} r] $r\x1a", tcl);
    if (n < 0 || (size_t)n >= sizeof buf) {
        snprintf(m, mlen, "a command too long for its buffer");
        return false;
    }
    for (const char *p = buf; n > 0;) {
        ssize_t w = send(o->fd, p, (size_t)n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            double left = deadline - clock_now();
            struct pollfd pf = {o->fd, POLLOUT, 0};
            if (left <= 0 || poll(&pf, 1, (int)(left * 1000.0) + 1) == 0) {
                snprintf(m, mlen, "OpenOCD stopped reading our commands");
                return false;
            }
            continue;
        }
        if (w <= 0) {
            snprintf(m, mlen, "lost the connection (%s)", w < 0 ? strerror(errno) : "closed");
            o->lost = true;
            return false;
        }
        p += w;
        n -= (int)w;
    }
    o->awaiting = true;
    return true;
}

static void command(struct ocd_sampler *o, enum step next, const char *what, const char *tcl, double now)
{
    snprintf(o->what, sizeof o->what, "%s", what);
    o->step = next;
    o->deadline = now + REPLY_TIMEOUT;
    o->sent_at = now;
    o->reply_len = 0;
    char m[200];
    if (!send_tcl(o, tcl, o->deadline, m, sizeof m))
        fail(o, m);
}

static void burst(struct ocd_sampler *o, double now)
{
    char tcl[300];
    if (o->stats.halting) /* no PCSR: one halt per sample; the resume comes whatever the read did */
        snprintf(tcl, sizeof tcl, "set e [catch {halt 100; lindex [reg pc] 2} p]; resume; if {$e} {error $p}; set p");
    else
        snprintf(tcl, sizeof tcl, "set s {}; for {set i 0} {$i < %d} {incr i} {lappend s [read_memory 0x%08x 32 1]}; set s",
                 BURST, PCSR);
    command(o, o->step == O_FIRST ? O_FIRST : O_BURST, o->stats.halting ? "halt / reg pc" : "a PCSR burst", tcl, now);
}

static void emit(struct ocd_sampler *o, uint32_t pc)
{
    if (pc == 0xFFFFFFFFu) /* halted, or asleep (WFI/WFE): ITM's sleep packet */
        o->stats.sleeps += outq_sleep(&o->out);
    else
        o->stats.samples += outq_pc(&o->out, pc);
}

/* The reply's catch code and its result, braces of a one-element list removed. */
static int split_reply(char *reply, char **result)
{
    if ((reply[0] != '0' && reply[0] != '1') || (reply[1] != ' ' && reply[1] != '\0')) {
        *result = reply;
        return -1;
    }
    char *r = reply + (reply[1] ? 2 : 1);
    size_t n = strlen(r);
    if (n >= 2 && r[0] == '{' && r[n - 1] == '}') {
        r[n - 1] = '\0';
        r++;
    }
    *result = r;
    return reply[0] - '0';
}

/* Values of a Tcl list of numbers ("0x8000120 0x8000124 ..."); returns how many, -1 if malformed. */
static int numbers(const char *s, uint32_t *v, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '{' || *s == '}' || *s == '\n')
            s++;
        if (!*s)
            break;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 0);
        if (end == s || errno || x > 0xFFFFFFFFull || n == max)
            return -1;
        v[n++] = (uint32_t)x;
        s = end;
    }
    return n;
}

/* ---- swo=: the trace set up with OpenOCD's own commands ---- */

static uint32_t swo_addr(const struct ocd_sampler *o, int i)
{
    return swo_regs[i].tpiu ? o->first->swo_base + swo_regs[i].addr : swo_regs[i].addr;
}

/* DWT_CTRL for PC sampling every period cycles: CYCCNT on, POSTPRESET and CYCTAP for the period,
 * SYNCTAP at CYCCNT bit 24, PCSAMPLENA, EXCTRCENA as asked; other fields as they were. */
static uint32_t dwt_ctrl(uint32_t was, uint32_t period, bool exceptions)
{
    bool tap = period > 1024; /* POSTCNT counts on CYCCNT bit 10 (1024 cycles) instead of bit 6 (64) */
    uint32_t preset = period / (tap ? 1024u : 64u) - 1u;
    uint32_t fields = 0x1Eu | 1u << 9 | 3u << 10 | 1u << 12 | 1u << 16;
    return (was & ~fields) | 1u | preset << 1 | (uint32_t)tap << 9 | 1u << 10 | 1u << 12 |
           (uint32_t)exceptions << 16;
}

/* "0x1 - 0x2 ...": a number, or "-" where the read failed; false if malformed or not n values. */
static bool saved_values(const char *s, uint32_t *v, bool *readable, int n)
{
    for (int i = 0; i < n; i++) {
        while (*s == ' ' || *s == '{' || *s == '}')
            s++;
        readable[i] = *s != '-';
        v[i] = 0;
        if (!readable[i]) {
            s++;
            continue;
        }
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 0);
        if (end == s || errno || x > 0xFFFFFFFFull)
            return false;
        v[i] = (uint32_t)x;
        s = end;
    }
    while (*s == ' ' || *s == '}')
        s++;
    return *s == '\0';
}

/* The script that reads every register to save, "-" for one that cannot be read. */
static void save_script(const struct ocd_sampler *o, char *tcl, size_t len)
{
    int n = snprintf(tcl, len, "set s {}; foreach a {");
    for (int i = 0; i < OCD_SWO_REGS; i++)
        n += snprintf(tcl + n, len - (size_t)n, "%s0x%08x", i ? " " : "", swo_addr(o, i));
    snprintf(tcl + n, len - (size_t)n, "} {if {[catch {read_memory $a 32 1} v]} {set v -}; lappend s $v}; set s");
}

/* The close's script: the trace capture stopped, then each saved register that differs now written
 * back with its first value, in swo_regs' order. */
static int restore_script(const struct ocd_sampler *o, char *tcl, size_t len)
{
    int n = snprintf(tcl, len, "catch {%s disable}; foreach {a v} {", o->swo.tpiu);
    for (int i = 0; i < OCD_SWO_REGS; i++)
        if (o->first->swo_readable[i])
            n += snprintf(tcl + n, len - (size_t)n, "0x%08x 0x%08x ", swo_addr(o, i), o->first->swo_value[i]);
    n += snprintf(tcl + n, len - (size_t)n,
                  "} {if {![catch {read_memory $a 32 1} n] && $n != $v} {catch {mww $a $v}}}");
    return n;
}

/* The trace OpenOCD writes to a file or pipe: opened before `enable` (OpenOCD's open of a pipe would
 * wait for a reader), at its end (OpenOCD appends). */
static bool open_trace_file(struct ocd_sampler *o, char *m, size_t mlen)
{
    struct stat st;
    /* a pipe opened for writing too never reads as ended (nor polls as hung up) between OpenOCD's opens */
    bool pipe = stat(o->swo.trace_file, &st) == 0 && S_ISFIFO(st.st_mode);
    int fd = open(o->swo.trace_file, (pipe ? O_RDWR : O_RDONLY | O_CREAT) | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(m, mlen, "cannot open the trace file %s (%s)", o->swo.trace_file, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    o->trace_is_file = S_ISREG(st.st_mode);
    if (o->trace_is_file)
        lseek(fd, 0, SEEK_END);
    o->trace_fd = fd;
    return true;
}

static bool open_trace_port(struct ocd_sampler *o, char *m, size_t mlen)
{
    char port[16], why[200];
    snprintf(port, sizeof port, "%u", o->swo.trace_port);
    o->trace_fd = net_connect(o->host, port, false, NULL, why, sizeof why);
    if (o->trace_fd < 0)
        snprintf(m, mlen, "no trace from OpenOCD's port %.60s:%u (%.120s)", o->host, o->swo.trace_port, why);
    return o->trace_fd >= 0;
}

static void ask_base(struct ocd_sampler *o, double now)
{
    char tcl[100];
    snprintf(tcl, sizeof tcl, "%s cget -baseaddr", o->swo.tpiu);
    command(o, S_BASE, "asking the TPIU's address", tcl, now);
}

/* Each set-up step's reply, then the next step's command. */
static void on_swo_reply(struct ocd_sampler *o, int code, char *r, double now)
{
    char tcl[1100], m[290];
    if (code != 0) {
        if (o->step == S_NAMES && strstr(r, "invalid command name")) {
            snprintf(m, sizeof m, "this OpenOCD has no tpiu command: swo= needs OpenOCD 0.12 or later");
            o->hopeless = true;
        } else
            snprintf(m, sizeof m, "OpenOCD refused %s: %.180s", o->what, r);
        fail(o, m);
        return;
    }
    switch (o->step) {
    case S_NAMES:
        if (!*r || strchr(r, ' ') || strlen(r) >= sizeof o->swo.tpiu) {
            snprintf(m, sizeof m, "OpenOCD has %s TPIU/SWO object%s%.100s: name one with tpiu=NAME", *r ? "more than one" : "no",
                     *r ? " (" : " (its target configuration makes one as CHIP.tpiu)", *r ? r : "");
            if (*r)
                snprintf(m + strlen(m), sizeof m - strlen(m), ")");
            o->hopeless = true;
            fail(o, m);
            return;
        }
        snprintf(o->swo.tpiu, sizeof o->swo.tpiu, "%s", r);
        ask_base(o, now);
        return;
    case S_BASE: {
        uint32_t base;
        if (numbers(r, &base, 1) != 1) {
            snprintf(m, sizeof m, "unexpected answer for %s's address: '%.100s'", o->swo.tpiu, r);
            fail(o, m);
            return;
        }
        if (o->first->swo_known && o->first->swo_base != base) {
            fail(o, "the TPIU's address changed since the first connection");
            return;
        }
        o->first->swo_base = base;
        save_script(o, tcl, sizeof tcl);
        command(o, S_SAVE, "reading the trace registers", tcl, now);
        return;
    }
    case S_SAVE: {
        bool readable[OCD_SWO_REGS];
        if (!saved_values(r, o->found, readable, OCD_SWO_REGS)) {
            snprintf(m, sizeof m, "unexpected answer reading the trace registers: '%.100s'", r);
            fail(o, m);
            return;
        }
        if (!readable[SWO_DEMCR] || !readable[SWO_DWT]) {
            snprintf(m, sizeof m, "OpenOCD has no target to read (DEMCR, DWT_CTRL): start it with the probe "
                     "and target configuration, without noinit");
            o->hopeless = true;
            fail(o, m);
            return;
        }
        if (!o->first->swo_known) { /* later connections may find our own settings, left by a drop */
            o->first->swo_known = true;
            memcpy(o->first->swo_value, o->found, sizeof o->found);
            memcpy(o->first->swo_readable, readable, sizeof readable);
        }
        o->touched = true;
        if (!o->swo.trace_file[0] || open_trace_file(o, m, sizeof m)) {
            snprintf(tcl, sizeof tcl, "mww 0x%08x 0x%08x", DEMCR, o->found[SWO_DEMCR] | TRCENA);
            command(o, S_TRCENA, "enabling trace (DEMCR.TRCENA)", tcl, now);
        } else
            fail(o, m);
        return;
    }
    case S_TRCENA: {
        char out[220];
        if (o->swo.trace_file[0])
            snprintf(out, sizeof out, "%s", o->swo.trace_file);
        else
            snprintf(out, sizeof out, ":%u", o->swo.trace_port);
        snprintf(tcl, sizeof tcl, "%s configure -protocol uart -traceclk %u -pin-freq %u -output %s", o->swo.tpiu,
                 o->swo.traceclk, o->swo.pin, out);
        command(o, S_CONFIG, "configuring the TPIU", tcl, now);
        return;
    }
    case S_CONFIG:
        snprintf(tcl, sizeof tcl, "%s enable", o->swo.tpiu);
        command(o, S_START, "enabling the TPIU", tcl, now);
        return;
    case S_START:
        command(o, S_ITM, "enabling ITM", "itm port 0 on", now);
        return;
    case S_ITM: /* ITMENA, SYNCENA, DWTENA, trace bus ID 1: OpenOCD's own leaves out the syncs */
        snprintf(tcl, sizeof tcl, "mww 0x%08x 0x%08x", ITM_TCR, 0x0001000Du);
        command(o, S_TCR, "enabling ITM's DWT packets", tcl, now);
        return;
    case S_TCR:
        snprintf(tcl, sizeof tcl, "mww 0x%08x 0x%08x", DWT_CTRL, dwt_ctrl(o->found[SWO_DWT], o->swo.period, o->swo.exceptions));
        command(o, S_DWT, "starting DWT PC sampling", tcl, now);
        return;
    case S_DWT:
        if (!o->swo.trace_file[0] && !open_trace_port(o, m, sizeof m)) {
            fail(o, m);
            return;
        }
        o->step = S_STREAM;
        o->deadline = 1e300; /* no reply awaited while the trace runs */
        o->stats.first = now;
        return;
    default:
        return;
    }
}

static void on_reply(struct ocd_sampler *o, double now)
{
    char *r, m[290];
    int code = split_reply(o->reply, &r);
    if (o->step >= S_NAMES) {
        on_swo_reply(o, code, r, now);
        return;
    }
    if (code != 0) {
        if (strstr(r, "invalid command name")) {
            snprintf(m, sizeof m, "OpenOCD has no target to read (%s): start it with the probe and target "
                     "configuration, without noinit", o->what);
            o->hopeless = true;
        }
        else
            snprintf(m, sizeof m, "OpenOCD refused %s: %.180s", o->what, r);
        fail(o, m);
        return;
    }
    uint32_t v[BURST];
    int n = numbers(r, v, BURST);
    switch (o->step) {
    case O_PROBE:
        if (n != 1) {
            snprintf(m, sizeof m, "unexpected answer reading DEMCR: '%.100s'", r);
            fail(o, m);
            return;
        }
        if (!o->first->known) { /* later connections may find our own TRCENA, left by a drop */
            o->first->known = true;
            o->first->demcr = v[0];
        }
        o->restore = !(o->first->demcr & TRCENA); /* we set it, now or on an earlier connection */
        if (!(v[0] & TRCENA)) { /* DWT needs trace enabled; put it back at the end */
            char tcl[80];
            snprintf(tcl, sizeof tcl, "write_memory 0x%08x 32 0x%08x", DEMCR, v[0] | TRCENA);
            command(o, O_ENABLE, "enabling DWT (DEMCR.TRCENA)", tcl, now);
            return;
        }
        __attribute__((fallthrough));
    case O_ENABLE:
        o->step = O_FIRST;
        burst(o, now);
        return;
    case O_FIRST:
    case O_BURST:
        if (n < 1) {
            snprintf(m, sizeof m, "unexpected answer to %s: '%.100s'", o->what, r);
            fail(o, m);
            return;
        }
        if (o->step == O_FIRST && !o->stats.halting) {
            bool all_zero = true;
            for (int i = 0; i < n; i++)
                all_zero &= v[i] == 0;
            if (all_zero) { /* no PCSR on this core: halt for each sample instead */
                o->stats.halting = true;
                burst(o, now);
                return;
            }
        }
        o->stats.bursts++;
        o->stats.burst_s += now - o->sent_at;
        if (!o->stats.first)
            o->stats.first = now;
        o->stats.last = now;
        for (int i = 0; i < n; i++)
            if (v[i] != 0)
                emit(o, v[i]);
        o->step = O_BURST;
        burst(o, now);
        return;
    default:
        return;
    }
}

/* "168M", "2000k", "8000000": Hz; 0 if malformed or past 4 GHz. */
static uint32_t hertz(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        return 0;
    v *= *end == 'M' ? 1e6 : *end == 'k' ? 1e3 : 1.0;
    if (*end == 'M' || *end == 'k')
        end++;
    return *end || v < 1 || v >= 4294967295.0 || v != (double)(uint32_t)v ? 0 : (uint32_t)v;
}

/* No Tcl specials: the value goes into a command as one word. */
static bool plain_word(const char *s)
{
    return *s && !s[strcspn(s, " \t\n;$[]{}\"\\")];
}

/* One ",NAME=VALUE" option into swo; false with the reason in err. */
static bool swo_option(const char *opt, struct ocd_swo *swo, char *err, size_t errlen)
{
    const char *eq = strchr(opt, '='), *v = eq ? eq + 1 : "";
    size_t name = eq ? (size_t)(eq - opt) : strlen(opt);
    char *end;
    if (name == 3 && strncmp(opt, "swo", 3) == 0 && (swo->traceclk = hertz(v)))
        return true;
    if (name == 3 && strncmp(opt, "pin", 3) == 0 && (swo->pin_max = hertz(v)))
        return true;
    if (name == 3 && !eq && strncmp(opt, "exc", 3) == 0)
        return swo->exceptions = true;
    if (name == 4 && strncmp(opt, "tpiu", 4) == 0 && plain_word(v) && strlen(v) < sizeof swo->tpiu) {
        snprintf(swo->tpiu, sizeof swo->tpiu, "%s", v);
        return true;
    }
    if (name == 6 && strncmp(opt, "period", 6) == 0) {
        unsigned long p = strtoul(v, &end, 10);
        if (*v && !*end && ((p >= 64 && p <= 1024 && p % 64 == 0) || (p > 1024 && p <= 16384 && p % 1024 == 0))) {
            swo->period = (uint32_t)p;
            return true;
        }
        snprintf(err, errlen, "period=%s: DWT samples every 64 to 1024 cycles in steps of 64, or 2048 to 16384 in "
                 "steps of 1024", v);
        return false;
    }
    if (name == 5 && strncmp(opt, "trace", 5) == 0) {
        if (v[0] == '/' && plain_word(v) && strlen(v) < sizeof swo->trace_file) {
            snprintf(swo->trace_file, sizeof swo->trace_file, "%s", v);
            return true;
        }
        if (net_port(v)) {
            swo->trace_port = (unsigned)net_port(v);
            return true;
        }
    }
    snprintf(err, errlen, "option '%.*s': use swo=CLOCK (the trace clock in Hz, e.g. 168M), pin=HZ, period=CYCLES, "
             "exc, tpiu=NAME, trace=PORT or trace=/PATH", (int)strcspn(opt, ","), opt);
    return false;
}

/* Whether the ",NAME..." option at opt names one given before it, from first (the options' first ','):
 * swo=2M,swo=3M kept the last silently. */
static bool given_before(const char *first, const char *opt)
{
    size_t name = strcspn(opt + 1, "=,");
    for (const char *p = first; p < opt; p += 1 + strcspn(p + 1, ","))
        if (strcspn(p + 1, "=,") == name && strncmp(p + 1, opt + 1, name) == 0)
            return true;
    return false;
}

/* The SWO pin rate: the trace clock divided by the smallest whole number that keeps it at most
 * pin_max; and the sampling period that fills about half the line with PC samples. */
static void swo_rates(struct ocd_swo *swo)
{
    uint32_t div = (swo->traceclk + swo->pin_max - 1) / swo->pin_max;
    swo->pin = swo->traceclk / (div ? div : 1);
    if (swo->period)
        return;
    uint64_t want = (uint64_t)SWO_LINE_SHARE * swo->traceclk / swo->pin; /* 5-byte packets of 10 bits */
    swo->period = want <= 1024 ? (uint32_t)((want + 63) / 64 * 64) : (uint32_t)((want + 1023) / 1024 * 1024);
    if (swo->period < 64)
        swo->period = 64;
    if (swo->period > 16384)
        swo->period = 16384;
}

bool ocd_parse(const char *where, char *host, size_t hostlen, char *port, size_t portlen, struct ocd_swo *swo,
               char *err, size_t errlen)
{
    memset(swo, 0, sizeof *swo);
    swo->pin_max = SWO_PIN_MAX;
    swo->trace_port = SWO_TRACE_PORT;
    size_t addr = strcspn(where, ",");
    char a[220];
    snprintf(a, sizeof a, "%.*s", (int)(addr < sizeof a ? addr : sizeof a - 1), where);
    snprintf(port, portlen, "6666");
    const char *colon = strrchr(a, ':');
    if (colon) {
        long p = net_port(colon + 1);
        if (!p || colon == a) {
            snprintf(err, errlen, "use openocd:HOST or openocd:HOST:PORT (OpenOCD's Tcl port, 6666 by default), "
                     "then ,swo=CLOCK to set up SWO");
            return false;
        }
        snprintf(port, portlen, "%ld", p);
        snprintf(host, hostlen, "%.*s", (int)(colon - a), a);
    } else {
        snprintf(host, hostlen, "%s", a[0] ? a : "localhost");
    }
    for (const char *opt = where + addr; *opt == ',';) {
        char one[300];
        size_t len = strcspn(opt + 1, ",");
        snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), opt + 1);
        if (given_before(where + addr, opt)) {
            snprintf(err, errlen, "option '%.*s' given twice: give it once", (int)strcspn(one, "="), one);
            return false;
        }
        if (!swo_option(one, swo, err, errlen))
            return false;
        opt += 1 + len;
    }
    if (!swo->traceclk && (swo->tpiu[0] || swo->period || swo->exceptions || swo->trace_file[0] ||
                           swo->trace_port != SWO_TRACE_PORT || swo->pin_max != SWO_PIN_MAX)) {
        snprintf(err, errlen, "SWO options need swo=CLOCK, the trace clock in Hz (usually the core clock, e.g. 168M)");
        return false;
    }
    if (swo->traceclk)
        swo_rates(swo);
    return true;
}

struct ocd_sampler *ocd_open(const char *where, double now, struct ocd_original *first, char *err, size_t errlen)
{
    char host[200], port[16];
    struct ocd_swo swo;
    if (!ocd_parse(where, host, sizeof host, port, sizeof port, &swo, err, errlen))
        return NULL;
    int fd = net_connect(host, port, true, NULL, err, errlen);
    if (fd < 0)
        return NULL;
    if (!swo.traceclk)
        return ocd_open_fd(fd, now, first, err, errlen);
    struct ocd_sampler *o = calloc(1, sizeof *o);
    if (!o) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->fd = fd;
    o->first = first;
    o->swo = swo;
    o->trace_fd = -1;
    o->stats.swo = true;
    o->stats.pin = swo.pin;
    o->stats.period = swo.period;
    snprintf(o->host, sizeof o->host, "%s", host);
    o->peer_len = sizeof o->peer;
    if (getpeername(fd, (struct sockaddr *)&o->peer, &o->peer_len) != 0)
        o->peer_len = 0;
    if (swo.tpiu[0])
        ask_base(o, now);
    else
        command(o, S_NAMES, "listing the TPIU/SWO objects", "tpiu names", now);
    return o;
}

struct ocd_sampler *ocd_open_fd(int fd, double now, struct ocd_original *first, char *err, size_t errlen)
{
    struct ocd_sampler *o = calloc(1, sizeof *o);
    if (!o) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->fd = fd;
    o->first = first;
    o->trace_fd = -1;
    o->peer_len = sizeof o->peer;
    if (getpeername(fd, (struct sockaddr *)&o->peer, &o->peer_len) != 0)
        o->peer_len = 0;
    char tcl[64];
    snprintf(tcl, sizeof tcl, "read_memory 0x%08x 32 1", DEMCR);
    command(o, O_PROBE, "reading DEMCR", tcl, now);
    return o;
}

int ocd_fd(const struct ocd_sampler *o)
{
    if (o->step == S_STREAM) /* a regular file is read on a timer (checking the Tcl socket for a close) */
        return o->trace_is_file ? -1 : o->trace_fd;
    return o->step == O_FAILED ? -1 : o->fd;
}

int ocd_wait_ms(const struct ocd_sampler *o, double now)
{
    if (o->step == S_STREAM)
        return o->trace_is_file ? 20 : 500;
    if (o->step == O_FAILED)
        return 0;
    double dt = o->deadline - now;
    return dt <= 0 ? 0 : (int)(dt * 1000.0) + 1;
}

/* swo=: the trace as it comes, for the ITM/TPIU decoders; a closed Tcl or trace connection fails. */
static size_t stream_step(struct ocd_sampler *o, uint8_t *buf, size_t n, double now)
{
    uint8_t junk[256];
    ssize_t tcl = read(o->fd, junk, sizeof junk); /* nothing is expected there: only a close matters */
    ssize_t got = read(o->trace_fd, buf, n);
    char m[200];
    if (tcl == 0 || (tcl < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        o->lost = true;
        fail(o, "OpenOCD closed the connection");
    } else if (got == 0 && !o->swo.trace_file[0]) {
        snprintf(m, sizeof m, "OpenOCD closed its trace port %u", o->swo.trace_port);
        fail(o, m);
    } else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        snprintf(m, sizeof m, "lost the trace (%s)", strerror(errno));
        fail(o, m);
    }
    if (got <= 0)
        return 0;
    o->stats.trace_bytes += (uint64_t)got;
    o->stats.last = now;
    return (size_t)got;
}

size_t ocd_step(struct ocd_sampler *o, uint8_t *buf, size_t n, double now)
{
    if (o->step == S_STREAM)
        return stream_step(o, buf, n, now);
    uint8_t in[4096];
    ssize_t got = -1;
    /* replies are read only while a whole burst's samples still fit: what the caller has not taken
     * yet stays here, the next reply waits in the socket */
    for (int k = 0; k < 16 && o->step != O_FAILED && outq_room(&o->out) >= BURST * 5 + 16 &&
                    (got = read(o->fd, in, sizeof in)) > 0;
         k++)
        for (ssize_t i = 0; i < got && o->step != O_FAILED; i++) {
            if (in[i] != 0x1a && o->reply_len + 1 < sizeof o->reply) {
                o->reply[o->reply_len++] = (char)in[i];
                continue;
            }
            if (in[i] != 0x1a) { /* at once: a flood without 0x1a must not wait for the timeout */
                fail(o, "a reply from OpenOCD was too long (64 KB without its 0x1a end)");
                break;
            }
            o->reply[o->reply_len] = '\0';
            o->awaiting = false;
            on_reply(o, now);
        }
    if (got == 0) {
        o->lost = true;
        fail(o, "OpenOCD closed the connection");
    } else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        char m[200];
        snprintf(m, sizeof m, "lost the connection (%s)", strerror(errno));
        o->lost = true;
        fail(o, m);
    }
    if (o->step != O_FAILED && now > o->deadline) {
        char m[200];
        snprintf(m, sizeof m, "no answer to %s within %.0f s", o->what, REPLY_TIMEOUT);
        fail(o, m);
    }
    return outq_take(&o->out, buf, n);
}

const char *ocd_failed(const struct ocd_sampler *o)
{
    return o->step == O_FAILED ? o->failed : NULL;
}

bool ocd_hopeless(const struct ocd_sampler *o)
{
    return o->hopeless;
}

void ocd_get_stats(const struct ocd_sampler *o, struct ocd_stats *out)
{
    *out = o->stats;
}

/* Send the closing script on fd and wait for its reply, after the `replies - 1` still awaited
 * there; the socket is given up at the deadline whatever the server does (trickles, stays silent,
 * sends garbage). True when the script's reply came. */
static bool finish(int fd, const char *tcl, int replies, double deadline)
{
    struct ocd_sampler tmp = {.fd = fd}; /* send_tcl() needs only the socket */
    char m[200];
    if (!send_tcl(&tmp, tcl, deadline, m, sizeof m))
        return false;
    for (double left; replies > 0 && (left = deadline - clock_now()) > 0;) {
        struct pollfd pf = {fd, POLLIN, 0};
        uint8_t in[4096];
        if (poll(&pf, 1, (int)(left * 1000.0) + 1) <= 0)
            return false;
        ssize_t got = read(fd, in, sizeof in);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return false;
        for (ssize_t i = 0; i < got; i++)
            replies -= in[i] == 0x1a;
    }
    return replies <= 0;
}

/* A second connection to the same server, made by deadline, or -1. OpenOCD answers each connection
 * in order: a reply still coming on the first (a slow or trickling one) would hold the closing
 * script behind it, and a lost connection cannot carry it at all. */
static int second_connection(const struct ocd_sampler *o, double deadline)
{
    if (!o->peer_len)
        return -1;
    int fd = socket(o->peer.ss_family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1, e = 0;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)&o->peer, o->peer_len) != 0) {
        struct pollfd pf = {fd, POLLOUT, 0};
        double left = deadline - clock_now();
        socklen_t len = sizeof e;
        if (errno != EINPROGRESS || left <= 0 || poll(&pf, 1, (int)(left * 1000.0) + 1) <= 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0 || e != 0) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

void ocd_close(struct ocd_sampler *o)
{
    if (!o)
        return;
    char tcl[1100];
    int n = 0;
    if (o->stats.halting) /* the core runs again first, whatever comes after */
        n += snprintf(tcl + n, sizeof tcl - (size_t)n, "catch {resume}; ");
    if (o->restore)
        n += snprintf(tcl + n, sizeof tcl - (size_t)n, "write_memory 0x%08x 32 0x%08x", DEMCR, o->first->demcr);
    if (o->touched && o->first->swo_known)
        n = restore_script(o, tcl, sizeof tcl);
    if (o->trace_fd >= 0)
        close(o->trace_fd);
    double start = clock_now(), end = start + CLOSE_WITHIN;
    bool done = n == 0;
    if (!done && (o->awaiting || o->lost)) { /* each step with its own deadline */
        int fd = second_connection(o, start + CLOSE_CONNECT);
        if (fd >= 0) {
            double by = clock_now() + CLOSE_SCRIPT;
            done = finish(fd, tcl, 1, by < end ? by : end);
            close(fd);
        }
    }
    if (!done && !o->lost) /* behind the reply still awaited, if any */
        finish(o->fd, tcl, o->awaiting ? 2 : 1, end);
    close(o->fd);
    free(o);
}
