/* PCSR sampling through OpenOCD's Tcl server (see openocd.h). Every command and every reply ends
 * with the byte 0x1a. Each command is wrapped as `list [catch {...} r] $r`, so a reply is "0 result"
 * or "1 error message", whatever the command printed. */
#include "openocd.h"

#include "net.h"
#include "outq.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEMCR 0xE000EDFCu
#define TRCENA (1u << 24)
#define PCSR 0xE000101Cu
#define BURST 64
#define REPLY_TIMEOUT 3.0
#define REPLY_MAX 65536

enum step { O_PROBE, O_ENABLE, O_FIRST, O_BURST, O_FAILED };

struct ocd_sampler {
    int fd;
    enum step step;
    double deadline, sent_at;
    char what[48];
    char reply[REPLY_MAX];
    size_t reply_len;
    bool overflow;
    uint32_t demcr;         /* as found */
    bool demcr_changed;
    struct outq out; /* ITM packets made and not yet handed out */
    struct ocd_stats stats;
    bool hopeless; /* no target behind this server: reconnecting cannot help */
    char failed[300];
};

static void fail(struct ocd_sampler *o, const char *why)
{
    if (o->step != O_FAILED)
        snprintf(o->failed, sizeof o->failed, "%s", why);
    o->step = O_FAILED;
}

static void command(struct ocd_sampler *o, enum step next, const char *what, const char *tcl, double now)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "list [catch {%s} r] $r\x1a", tcl);
    snprintf(o->what, sizeof o->what, "%s", what);
    o->step = next;
    o->deadline = now + REPLY_TIMEOUT;
    o->sent_at = now;
    o->reply_len = 0;
    o->overflow = false;
    for (const char *p = buf; n > 0;) {
        ssize_t w = send(o->fd, p, (size_t)n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd pf = {o->fd, POLLOUT, 0};
            poll(&pf, 1, 1000);
            continue;
        }
        if (w <= 0) {
            char m[200];
            snprintf(m, sizeof m, "lost the connection (%s)", w < 0 ? strerror(errno) : "closed");
            fail(o, m);
            return;
        }
        p += w;
        n -= (int)w;
    }
}

static void burst(struct ocd_sampler *o, double now)
{
    char tcl[300];
    if (o->stats.halting) /* no PCSR: one halt per sample */
        snprintf(tcl, sizeof tcl, "halt 100; set p [lindex [reg pc] 2]; resume; set p");
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

static void on_reply(struct ocd_sampler *o, double now)
{
    char *r, m[290];
    int code = split_reply(o->reply, &r);
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
        o->demcr = v[0];
        if (!(v[0] & TRCENA)) { /* DWT needs trace enabled; put it back at the end */
            char tcl[80];
            snprintf(tcl, sizeof tcl, "write_memory 0x%08x 32 0x%08x", DEMCR, v[0] | TRCENA);
            o->demcr_changed = true;
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

struct ocd_sampler *ocd_open(const char *where, double now, char *err, size_t errlen)
{
    char host[200], port[16] = "6666";
    const char *colon = strrchr(where, ':');
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || p < 1 || p > 65535 || colon == where) {
            snprintf(err, errlen, "use openocd:HOST or openocd:HOST:PORT (a port from 1 to 65535)");
            return NULL;
        }
        snprintf(port, sizeof port, "%ld", p);
        snprintf(host, sizeof host, "%.*s", (int)(colon - where), where);
    } else {
        snprintf(host, sizeof host, "%s", where[0] ? where : "localhost");
    }
    int fd = net_connect(host, port, true, NULL, err, errlen);
    if (fd < 0)
        return NULL;
    struct ocd_sampler *o = calloc(1, sizeof *o);
    if (!o) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->fd = fd;
    char tcl[64];
    snprintf(tcl, sizeof tcl, "read_memory 0x%08x 32 1", DEMCR);
    command(o, O_PROBE, "reading DEMCR", tcl, now);
    return o;
}

int ocd_fd(const struct ocd_sampler *o)
{
    return o->step == O_FAILED ? -1 : o->fd;
}

int ocd_wait_ms(const struct ocd_sampler *o, double now)
{
    if (o->step == O_FAILED)
        return 0;
    double dt = o->deadline - now;
    return dt <= 0 ? 0 : (int)(dt * 1000.0) + 1;
}

size_t ocd_step(struct ocd_sampler *o, uint8_t *buf, size_t n, double now)
{
    uint8_t in[4096];
    ssize_t got = -1;
    /* replies are read only while a whole burst's samples still fit: what the caller has not taken
     * yet stays here, the next reply waits in the socket */
    for (int k = 0; k < 16 && o->step != O_FAILED && outq_room(&o->out) >= BURST * 5 + 16 &&
                    (got = read(o->fd, in, sizeof in)) > 0;
         k++)
        for (ssize_t i = 0; i < got && o->step != O_FAILED; i++) {
            if (in[i] != 0x1a) {
                if (o->reply_len + 1 < sizeof o->reply)
                    o->reply[o->reply_len++] = (char)in[i];
                else
                    o->overflow = true;
                continue;
            }
            o->reply[o->reply_len] = '\0';
            if (o->overflow)
                fail(o, "a reply from OpenOCD was too long");
            else
                on_reply(o, now);
        }
    if (got == 0 && o->step != O_FAILED)
        fail(o, "OpenOCD closed the connection");
    else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && o->step != O_FAILED) {
        char m[200];
        snprintf(m, sizeof m, "lost the connection (%s)", strerror(errno));
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

void ocd_close(struct ocd_sampler *o)
{
    if (!o)
        return;
    if (o->demcr_changed && !strstr(o->failed, "connection")) {
        /* the burst in flight first, then DEMCR as it was */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
        char tcl[80];
        snprintf(tcl, sizeof tcl, "write_memory 0x%08x 32 0x%08x", DEMCR, o->demcr);
        enum step was = o->step;
        if (was == O_FAILED)
            o->step = O_BURST; /* so command() may still send */
        command(o, O_BURST, "restoring DEMCR", tcl, now);
        int replies = was == O_FAILED ? 1 : 2;
        for (int seen = 0; seen < replies;) {
            struct pollfd pf = {o->fd, POLLIN, 0};
            uint8_t in[4096];
            if (poll(&pf, 1, 1000) <= 0)
                break;
            ssize_t got = read(o->fd, in, sizeof in);
            if (got <= 0)
                break;
            for (ssize_t i = 0; i < got; i++)
                seen += in[i] == 0x1a;
        }
    }
    close(o->fd);
    free(o);
}
