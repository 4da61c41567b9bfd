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
#include <time.h>
#include <unistd.h>

#define DEMCR 0xE000EDFCu
#define TRCENA (1u << 24)
#define PCSR 0xE000101Cu
#define BURST 64
#define REPLY_TIMEOUT 3.0
#define REPLY_MAX 65536
/* seconds for the whole close (the core resumed, DEMCR put back): twice this, a close on a failure
 * then one at exit, stays inside the 2 s in which the tool must exit after q or a signal */
#define CLOSE_WITHIN 0.8
#define CLOSE_CONNECT 0.25 /* seconds for a second connection to the server, when the close needs one */
#define CLOSE_SCRIPT 0.4   /* ... and for the closing script's reply on it */

enum step { O_PROBE, O_ENABLE, O_FIRST, O_BURST, O_FAILED };

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
    char buf[512];
    int n = snprintf(buf, sizeof buf, "list [catch {%s} r] $r\x1a", tcl);
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

struct ocd_sampler *ocd_open(const char *where, double now, struct ocd_original *first, char *err, size_t errlen)
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
    return fd < 0 ? NULL : ocd_open_fd(fd, now, first, err, errlen);
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
    char tcl[160];
    int n = 0;
    if (o->stats.halting) /* the core runs again first, whatever comes after */
        n += snprintf(tcl + n, sizeof tcl - (size_t)n, "catch {resume}; ");
    if (o->restore)
        n += snprintf(tcl + n, sizeof tcl - (size_t)n, "write_memory 0x%08x 32 0x%08x", DEMCR, o->first->demcr);
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
