/* RTT through a debug server (see rtt.h). One request at a time; each reply moves the conversation on:
 *   GDB server: qSupported -> ? -> [search | the block's header] -> its up-buffer's descriptor -> c,
 *     then each poll: 0x03 -> stop reply -> m offsets -> [m bytes (twice at the wrap) -> M read offset] -> c
 *   OpenOCD Tcl: the same reads and writes as read_memory / write_memory, the core never halted.
 * The control block (SEGGER's layout): "SEGGER RTT" NUL-padded to 16 bytes, int MaxNumUpBuffers, int
 * MaxNumDownBuffers, then 24-byte descriptors: name, buffer, size, write offset, read offset, flags. */
#include "rtt.h"

#include "net.h"
#include "rsp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REPLY_TIMEOUT 2.0  /* seconds a server may take to answer */
#define CLOSE_BUDGET 1.0   /* seconds rtt_close() may take in all */
#define HEADER_SIZE 24u    /* ID, MaxNumUpBuffers, MaxNumDownBuffers */
#define DESC_SIZE 24u
#define CHUNK_RSP_MAX 2048u /* bytes read by one 'm' at most (fewer when the server's packets are short) */
#define CHUNK_TCL 1024u     /* ... by one read_memory (its reply: about five characters a byte) */
#define SIZE_MAX_RTT (1u << 24) /* an up-buffer larger than this is no RTT block we believe */
#define OUT_MAX 65536u
#define TCL_REPLY_MAX (8 * CHUNK_TCL + 256)
#define BUFFERS_MAX 32 /* MaxNumUpBuffers / MaxNumDownBuffers beyond this: not a control block */

enum step {
    T_START, T_SUPPORTED, T_QUERY, T_SEARCH, T_HEADER, T_DESC, T_RUNNING, T_HALTING, T_WAITING, T_OFFSETS, T_DATA, T_WROTE,
    T_FAILED
};

struct rtt_reader {
    int fd;
    bool tcl;            /* OpenOCD's Tcl port; else a GDB server */
    enum step step;
    double interval;     /* seconds between polls */
    double deadline;     /* a reply is due by then */
    double next_poll;    /* while waiting (or running): when to poll */
    double halt_sent, resumed_at;
    double poll_start;   /* when the poll under way began */
    struct rsp_decoder rsp;
    size_t chunk;        /* bytes one read asks for */
    char last[256];      /* the last RSP packet sent, resent on '-' */
    size_t last_len;
    int resends;
    char what[48];
    char tcl_reply[TCL_REPLY_MAX];
    size_t tcl_len;
    bool have_block;
    uint32_t block, desc, buf, size, wr, rd;
    uint32_t search_at;  /* the search's next address */
    uint32_t want;       /* bytes asked for by the read under way */
    uint8_t data[CHUNK_RSP_MAX + 8];
    size_t data_len;
    uint8_t out[OUT_MAX];
    size_t out_len;
    struct rtt_stats stats;
    bool exited;
    double now; /* of the rtt_step() under way */
    char failed[300];
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(struct rtt_reader *r, const char *why)
{
    if (r->step != T_FAILED)
        snprintf(r->failed, sizeof r->failed, "%s", why);
    r->step = T_FAILED;
}

/* Everything or a failure; a server that stops reading for a second is one. */
static bool send_all(struct rtt_reader *r, const char *p, size_t n)
{
    double until = mono_now() + 1.0;
    while (n) {
        ssize_t w = send(r->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {r->fd, POLLOUT, 0};
            double left = until - mono_now();
            if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) <= 0) {
                fail(r, "the server does not take what we send");
                return false;
            }
            continue;
        }
        if (w <= 0) {
            char m[200];
            snprintf(m, sizeof m, "lost the connection (%s)", w < 0 ? strerror(errno) : "closed");
            fail(r, m);
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* A request to the server, its reply due within REPLY_TIMEOUT: an RSP packet, or a Tcl command
 * wrapped so that its reply starts with the catch code. */
static void request(struct rtt_reader *r, enum step next, const char *what, const char *payload, double now)
{
    snprintf(r->what, sizeof r->what, "%s", what);
    r->step = next;
    r->deadline = now + REPLY_TIMEOUT;
    if (r->tcl) {
        char cmd[300];
        int n = snprintf(cmd, sizeof cmd, "list [catch {%s} r] $r\x1a", payload);
        r->tcl_len = 0;
        send_all(r, cmd, (size_t)n);
        return;
    }
    r->last_len = rsp_frame(r->last, sizeof r->last, payload, strlen(payload));
    r->resends = 0;
    send_all(r, r->last, r->last_len);
}

static void read_mem(struct rtt_reader *r, enum step next, const char *what, uint32_t addr, uint32_t len, double now)
{
    char q[80];
    if (r->tcl)
        snprintf(q, sizeof q, "read_memory 0x%08x 8 %u", (unsigned)addr, (unsigned)len);
    else
        snprintf(q, sizeof q, "m%x,%x", (unsigned)addr, (unsigned)len);
    r->want = len;
    request(r, next, what, q, now);
}

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The read offset back to the target, so that its writer sees the room. */
static void write_rd(struct rtt_reader *r, double now)
{
    char q[80];
    uint32_t a = r->desc + 16u, v = r->rd;
    if (r->tcl)
        snprintf(q, sizeof q, "write_memory 0x%08x 32 0x%08x", (unsigned)a, (unsigned)v);
    else
        snprintf(q, sizeof q, "M%x,4:%02x%02x%02x%02x", (unsigned)a, (unsigned)(v & 0xFFu), (unsigned)(v >> 8 & 0xFFu),
                 (unsigned)(v >> 16 & 0xFFu), (unsigned)(v >> 24));
    request(r, T_WROTE, "writing the read offset", q, now);
}

/* The poll is over: a GDB server's core runs again, and the next poll waits its turn. */
static void poll_done(struct rtt_reader *r, double now)
{
    r->stats.polls++;
    if (!r->stats.first)
        r->stats.first = now;
    r->stats.last = now;
    /* every interval from the last poll's start, so the poll's own time does not stretch the period;
     * but the core runs half an interval at least, however long a poll took (a slow server) */
    double due = r->poll_start + r->interval, least = now + r->interval / 2;
    r->next_poll = due > least ? due : least;
    if (r->tcl) {
        r->step = T_WAITING;
        return;
    }
    r->stats.halted_s += now - r->halt_sent;
    r->resumed_at = now;
    request(r, T_RUNNING, "continue", "c", now);
}

static void start_poll(struct rtt_reader *r, double now)
{
    if (r->tcl)
        r->poll_start = now; /* (through a GDB server: when the halt was asked for) */
    read_mem(r, T_OFFSETS, "reading the up-buffer's offsets", r->desc + 12u, 8u, now);
}

/* What may be read now: up to the write offset or the buffer's end, a chunk, and what out holds. */
static uint32_t readable(const struct rtt_reader *r)
{
    uint32_t n = r->wr >= r->rd ? r->wr - r->rd : r->size - r->rd;
    if (n > r->chunk)
        n = (uint32_t)r->chunk;
    if (n > OUT_MAX - r->out_len)
        n = (uint32_t)(OUT_MAX - r->out_len);
    return n;
}

static void got_offsets(struct rtt_reader *r, double now)
{
    char m[200];
    uint32_t wr = le32(r->data), rd = le32(r->data + 4);
    if (wr >= r->size || rd >= r->size) {
        snprintf(m, sizeof m, "the RTT block at 0x%08x has offsets past its buffer (write %u, read %u, size %u): "
                 "overwritten, or the target reset?", (unsigned)r->block, (unsigned)wr, (unsigned)rd, (unsigned)r->size);
        fail(r, m);
        return;
    }
    r->wr = wr;
    r->rd = rd;
    uint32_t used = (wr + r->size - rd) % r->size;
    if (used > r->stats.most)
        r->stats.most = used;
    uint32_t n = readable(r);
    if (n)
        read_mem(r, T_DATA, "reading the up-buffer", r->buf + r->rd, n, now);
    else
        poll_done(r, now);
}

static void got_data(struct rtt_reader *r, double now)
{
    memcpy(r->out + r->out_len, r->data, r->data_len);
    r->out_len += r->data_len;
    r->stats.bytes += r->data_len;
    r->rd = (uint32_t)((r->rd + r->data_len) % r->size);
    uint32_t n = r->rd != r->wr ? readable(r) : 0;
    if (n) /* at the wrap: the rest from the buffer's start, then one write of the offset */
        read_mem(r, T_DATA, "reading the up-buffer", r->buf + r->rd, n, now);
    else
        write_rd(r, now);
}

/* The control block's ID in what was read: its offset, or -1. */
static long find_id(const uint8_t *d, size_t n)
{
    static const char id[] = "SEGGER RTT";
    for (size_t i = 0; i + sizeof id <= n; i++)
        if (memcmp(d + i, id, sizeof id) == 0)
            return (long)i;
    return -1;
}

static void search_next(struct rtt_reader *r, double now)
{
    char m[200];
    if (r->search_at >= RTT_SEARCH_BASE + RTT_SEARCH_SIZE) {
        snprintf(m, sizeof m, "no RTT control block (\"SEGGER RTT\") in 0x%08x-0x%08x: is the firmware built with "
                 "cmprof_rtt.c and cmprof_rtt_init() called? (or give the ELF that has _SEGGER_RTT)",
                 RTT_SEARCH_BASE, RTT_SEARCH_BASE + RTT_SEARCH_SIZE - 1u);
        fail(r, m);
        return;
    }
    uint32_t n = (uint32_t)r->chunk;
    if (r->search_at + n > RTT_SEARCH_BASE + RTT_SEARCH_SIZE)
        n = RTT_SEARCH_BASE + RTT_SEARCH_SIZE - r->search_at;
    read_mem(r, T_SEARCH, "searching RAM for the RTT block", r->search_at, n, now);
}

static void got_search(struct rtt_reader *r, double now)
{
    long at = find_id(r->data, r->data_len);
    if (at >= 0) {
        r->block = r->search_at + (uint32_t)at;
        read_mem(r, T_HEADER, "reading the RTT block", r->block, HEADER_SIZE, now);
        return;
    }
    /* the next piece overlaps this one by the ID's length, so an ID across the seam is found */
    r->search_at += r->data_len > 16 ? (uint32_t)r->data_len - 16u : (uint32_t)r->chunk;
    search_next(r, now);
}

static void got_header(struct rtt_reader *r, double now)
{
    char m[200];
    int32_t up = (int32_t)le32(r->data + 16), down = (int32_t)le32(r->data + 20);
    if (memcmp(r->data, "SEGGER RTT", 11) != 0 || up < 1 || up > BUFFERS_MAX || down < 0 || down > BUFFERS_MAX) {
        snprintf(m, sizeof m, "no RTT control block at 0x%08x (no \"SEGGER RTT\" ID, or %d up- and %d down-buffers): "
                 "not initialised yet, or another build's ELF?", (unsigned)r->block, (int)up, (int)down);
        fail(r, m);
        return;
    }
    r->desc = r->block + HEADER_SIZE; /* up-buffer 0: the firmware's stream */
    read_mem(r, T_DESC, "reading the up-buffer's descriptor", r->desc, DESC_SIZE, now);
}

static void got_desc(struct rtt_reader *r, double now)
{
    char m[200];
    r->buf = le32(r->data + 4);
    r->size = le32(r->data + 8);
    if (r->size < 2 || r->size > SIZE_MAX_RTT || !r->buf) {
        snprintf(m, sizeof m, "the RTT block at 0x%08x has no usable up-buffer 0 (at 0x%08x, %u bytes)",
                 (unsigned)r->block, (unsigned)r->buf, (unsigned)r->size);
        fail(r, m);
        return;
    }
    r->stats.block = r->block;
    r->stats.size = r->size;
    if (r->tcl) {
        start_poll(r, now);
        return;
    }
    r->halt_sent = now; /* halted since the connection: counted as a poll's halt */
    poll_done(r, now);
    r->stats.polls--; /* that was no poll */
}

static void locate(struct rtt_reader *r, double now)
{
    if (r->have_block) {
        read_mem(r, T_HEADER, "reading the RTT block", r->block, HEADER_SIZE, now);
    } else {
        r->search_at = RTT_SEARCH_BASE;
        search_next(r, now);
    }
}

/* The bytes of a memory read's reply: RSP hex, or a Tcl list of numbers. */
static bool take_bytes(struct rtt_reader *r, const char *d, size_t len)
{
    r->data_len = 0;
    if (r->tcl) {
        for (const char *p = d + strspn(d, " {}\n\r\t"); *p && r->data_len < r->want;) {
            char *end;
            errno = 0;
            unsigned long v = strtoul(p, &end, 0);
            if (end == p || errno || v > 255)
                break;
            r->data[r->data_len++] = (uint8_t)v;
            p = end + strspn(end, " {}\n\r\t");
        }
    } else {
        for (size_t i = 0; d[0] != 'E' && i + 1 < len && r->data_len < r->want; i += 2) {
            int hi = rsp_hex(d[i]), lo = rsp_hex(d[i + 1]);
            if (hi < 0 || lo < 0)
                break;
            r->data[r->data_len++] = (uint8_t)(hi << 4 | lo);
        }
    }
    return r->data_len == r->want;
}

/* "S05", "T02thread:01;": the target stopped. "W00", "X09": its program ended. */
static bool is_stop(const char *d)
{
    return (d[0] == 'S' || d[0] == 'T') && rsp_hex(d[1]) >= 0 && rsp_hex(d[2]) >= 0;
}

static bool is_exit(const char *d)
{
    return (d[0] == 'W' || d[0] == 'X') && rsp_hex(d[1]) >= 0 && rsp_hex(d[2]) >= 0;
}

/* A memory read's reply, for the step that asked for it. */
static void got_memory(struct rtt_reader *r, const char *d, size_t len, double now)
{
    char m[300];
    if (!take_bytes(r, d, len) && r->step == T_SEARCH && r->search_at > RTT_SEARCH_BASE) {
        snprintf(m, sizeof m, "no RTT control block (\"SEGGER RTT\") in 0x%08x-0x%08x, where the readable RAM ends: "
                 "is the firmware built with cmprof_rtt.c and cmprof_rtt_init() called? (or give the ELF that has "
                 "_SEGGER_RTT)", RTT_SEARCH_BASE, (unsigned)r->search_at - 1u);
        fail(r, m);
        return;
    }
    if (r->data_len != r->want) {
        snprintf(m, sizeof m, "the server refused %s (%u bytes): '%.40s'", r->what, (unsigned)r->want, d);
        fail(r, m);
        return;
    }
    switch (r->step) {
    case T_SEARCH:
        got_search(r, now);
        break;
    case T_HEADER:
        got_header(r, now);
        break;
    case T_DESC:
        got_desc(r, now);
        break;
    case T_OFFSETS:
        got_offsets(r, now);
        break;
    default:
        got_data(r, now);
        break;
    }
}

/* Every reply, by the step under way. */
static void on_reply(struct rtt_reader *r, const char *d, size_t len, double now)
{
    char m[200];
    switch (r->step) {
    case T_SUPPORTED: {
        const char *ps = strstr(d, "PacketSize=");
        unsigned long size = ps ? strtoul(ps + 11, NULL, 16) : 0;
        r->chunk = size > 64 ? (size - 16) / 2 : 256;
        if (r->chunk > CHUNK_RSP_MAX)
            r->chunk = CHUNK_RSP_MAX;
        request(r, T_QUERY, "'?'", "?", now);
        return;
    }
    case T_QUERY:
    case T_HALTING:
        if (!is_stop(d)) {
            snprintf(m, sizeof m, "unexpected answer to %s: '%.40s'", r->what, d);
            fail(r, m);
        } else if (r->step == T_QUERY) {
            locate(r, now);
        } else {
            start_poll(r, now);
        }
        return;
    case T_WROTE:
        if (!r->tcl && strcmp(d, "OK") != 0) { /* (Tcl: its catch code said whether it worked) */
            snprintf(m, sizeof m, "the server would not write the read offset: '%.40s'", d);
            fail(r, m);
            return;
        }
        poll_done(r, now);
        return;
    case T_RUNNING: /* it stopped on its own (a breakpoint, a fault): poll now, it is halted anyway */
        r->stats.running_s += now - r->resumed_at;
        r->halt_sent = now;
        start_poll(r, now);
        return;
    case T_WAITING:
    case T_FAILED:
        return;
    default:
        got_memory(r, d, len, now);
    }
}

static void on_packet(void *ctx, const char *d, size_t len)
{
    struct rtt_reader *r = ctx;
    if (r->rsp.notification)
        return;
    if (is_exit(d)) {
        char m[80];
        snprintf(m, sizeof m, "the target %s %d", d[0] == 'W' ? "exited with status" : "was killed by signal",
                 rsp_hex(d[1]) << 4 | rsp_hex(d[2]));
        fail(r, m);
        r->exited = true;
        return;
    }
    send_all(r, "+", 1);
    if (d[0] == 'O' && len > 1 && d[1] != 'K') /* console output */
        return;
    if (is_stop(d) && r->step != T_QUERY && r->step != T_HALTING && r->step != T_RUNNING)
        return; /* QEMU stops a running guest when we connect, and says so on its own */
    on_reply(r, d, len, r->now);
}

static void on_ack(void *ctx, bool positive)
{
    struct rtt_reader *r = ctx;
    if (positive || r->step == T_FAILED || !r->last_len)
        return;
    if (++r->resends > 3)
        fail(r, "the server refused our packets (bad checksum, 3 times)");
    else
        send_all(r, r->last, r->last_len);
}

/* A Tcl reply (up to its 0x1a): "0 result" or "1 error". */
static void on_tcl(struct rtt_reader *r, double now)
{
    char m[200];
    r->tcl_reply[r->tcl_len] = '\0';
    const char *d = r->tcl_reply;
    if ((d[0] != '0' && d[0] != '1') || (d[1] != ' ' && d[1] != '\0')) {
        snprintf(m, sizeof m, "unexpected answer from OpenOCD to %s: '%.60s'", r->what, d);
        fail(r, m);
        return;
    }
    if (d[0] == '1') {
        snprintf(m, sizeof m, "OpenOCD refused %s: %.120s", r->what, d + 2);
        fail(r, m);
        return;
    }
    const char *res = d[1] ? d + 2 : d + 1;
    on_reply(r, res, strlen(res), now);
}

static void feed(struct rtt_reader *r, const uint8_t *in, size_t n, double now)
{
    if (!r->tcl) {
        const struct rsp_sink sink = {on_packet, on_ack, r};
        rsp_feed(&r->rsp, in, n, &sink);
        return;
    }
    for (size_t i = 0; i < n && r->step != T_FAILED; i++) {
        if (in[i] == 0x1a) {
            on_tcl(r, now);
            r->tcl_len = 0;
        } else if (r->tcl_len + 1 < sizeof r->tcl_reply) {
            r->tcl_reply[r->tcl_len++] = (char)in[i];
        } else {
            fail(r, "a reply from OpenOCD was too long");
        }
    }
}

size_t rtt_step(struct rtt_reader *r, uint8_t *buf, size_t n, double now)
{
    ssize_t got = -1;
    /* replies are read only while a whole read's bytes fit in out */
    r->now = now;
    if (r->step == T_START)
        locate(r, now);
    for (int k = 0; k < 16 && r->step != T_FAILED && OUT_MAX - r->out_len >= r->chunk; k++) {
        uint8_t in[8192];
        got = read(r->fd, in, sizeof in);
        if (got <= 0)
            break;
        feed(r, in, (size_t)got, now);
    }
    if (got == 0 && r->step != T_FAILED)
        fail(r, "the server closed the connection");
    else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && r->step != T_FAILED) {
        char m[200];
        snprintf(m, sizeof m, "lost the connection (%s)", strerror(errno));
        fail(r, m);
    }
    /* the bytes go out once the core runs again: the caller's work on them must not keep it halted */
    size_t k = 0;
    if (r->step == T_RUNNING || r->step == T_WAITING || r->step == T_FAILED) {
        k = r->out_len < n ? r->out_len : n;
        memcpy(buf, r->out, k);
        memmove(r->out, r->out + k, r->out_len - k);
        r->out_len -= k;
    }
    if (r->step == T_RUNNING && now >= r->next_poll) { /* a bare 0x03 stops it; the stop reply comes back */
        r->stats.running_s += now - r->resumed_at;
        r->halt_sent = r->poll_start = now;
        r->step = T_HALTING;
        r->deadline = now + REPLY_TIMEOUT;
        snprintf(r->what, sizeof r->what, "the interrupt (0x03)");
        send_all(r, "\x03", 1);
    } else if (r->step == T_WAITING && now >= r->next_poll) {
        start_poll(r, now);
    } else if (r->step != T_RUNNING && r->step != T_WAITING && r->step != T_FAILED && now > r->deadline) {
        char m[200];
        snprintf(m, sizeof m, "no answer to %s within %.0f s", r->what, REPLY_TIMEOUT);
        fail(r, m);
    }
    return k;
}

static int connect_to(const char *where, bool tcl, char *err, size_t errlen)
{
    char host[200], port[16];
    const char *colon = strrchr(where, ':');
    long p = colon ? net_port(colon + 1) : tcl ? 6666 : 0;
    if ((colon && colon == where) || !p || (colon && (size_t)(colon - where) >= sizeof host)) {
        snprintf(err, errlen, "use rtt:HOST:PORT (a GDB server) or rtt:openocd:HOST[:PORT] (OpenOCD's Tcl port), "
                 "a port from 1 to 65535");
        return -1;
    }
    snprintf(host, sizeof host, "%.*s", colon ? (int)(colon - where) : (int)strlen(where), where);
    snprintf(port, sizeof port, "%ld", p);
    return net_connect(host[0] ? host : "localhost", port, true, NULL, err, errlen);
}

struct rtt_reader *rtt_open(const char *where, double rate, double now, char *err, size_t errlen)
{
    bool tcl = strncmp(where, "openocd:", 8) == 0;
    int fd = connect_to(tcl ? where + 8 : where, tcl, err, errlen);
    if (fd < 0)
        return NULL;
    struct rtt_reader *r = rtt_open_fd(fd, tcl, rate, now);
    if (!r) {
        close(fd);
        snprintf(err, errlen, "out of memory");
    }
    return r;
}

struct rtt_reader *rtt_open_fd(int fd, bool tcl, double rate, double now)
{
    struct rtt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    r->fd = fd;
    r->tcl = tcl;
    r->interval = rate > 0 ? 1.0 / rate : rate < 0 ? 0 : RTT_POLL_DEFAULT;
    r->stats.halting = !tcl;
    rsp_init(&r->rsp);
    if (tcl) {
        r->chunk = CHUNK_TCL;
        r->step = T_START; /* nothing to ask first: the block is located at the first step */
        return r;
    }
    r->chunk = 256;
    send_all(r, "+", 1);
    request(r, T_SUPPORTED, "qSupported", "qSupported:multiprocess-;swbreak+;hwbreak+", now);
    return r;
}

void rtt_set_block(struct rtt_reader *r, uint32_t addr)
{
    r->have_block = true;
    r->block = addr;
}

int rtt_fd(const struct rtt_reader *r)
{
    return r->step == T_RUNNING || r->step == T_WAITING || r->step == T_FAILED || r->step == T_START ? -1 : r->fd;
}

int rtt_wait_ms(const struct rtt_reader *r, double now)
{
    double due = r->step == T_RUNNING || r->step == T_WAITING ? r->next_poll
                 : r->step == T_FAILED || r->step == T_START ? now
                                                             : r->deadline;
    double dt = due - now;
    return dt <= 0 ? 0 : dt > 3600 ? 3600000 : (int)(dt * 1000.0) + 1;
}

const char *rtt_failed(const struct rtt_reader *r)
{
    return r->step == T_FAILED ? r->failed : NULL;
}

bool rtt_exited(const struct rtt_reader *r)
{
    return r->exited;
}

void rtt_get_stats(const struct rtt_reader *r, struct rtt_stats *out)
{
    *out = r->stats;
}

/* What rtt_close() waits for: a stop reply, or "OK" to the detach. */
struct close_wait {
    struct rtt_reader *r;
    bool want_stop, got;
};

static void close_packet(void *ctx, const char *d, size_t len)
{
    struct close_wait *w = ctx;
    (void)len;
    if (w->r->rsp.notification)
        return;
    send_all(w->r, "+", 1);
    if (w->want_stop ? is_stop(d) : strcmp(d, "OK") == 0)
        w->got = true;
}

static bool await_reply(struct rtt_reader *r, struct close_wait *w, double until)
{
    const struct rsp_sink sink = {close_packet, NULL, w};
    while (!w->got) {
        double left = until - mono_now();
        struct pollfd p = {r->fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            return false;
        uint8_t in[4096];
        ssize_t got = read(r->fd, in, sizeof in);
        if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR)))
            return false;
        if (got > 0)
            rsp_feed(&r->rsp, in, (size_t)got, &sink);
    }
    return true;
}

/* A GDB server's target is never left halted: stopped (it listens only then), detached, which lets
 * it run, and resumed if the detach is not confirmed; each wait within the budget. */
static void let_run(struct rtt_reader *r)
{
    double start = mono_now(), end = start + CLOSE_BUDGET;
    struct close_wait stop = {r, true, false}, detach = {r, false, false};
    if (r->step == T_RUNNING) {
        send_all(r, "\x03", 1);
        await_reply(r, &stop, start + CLOSE_BUDGET / 2);
    } else {
        stop.want_stop = r->step == T_HALTING || r->step == T_QUERY;
        await_reply(r, &stop, start + CLOSE_BUDGET / 4); /* the reply in flight, if any */
    }
    r->step = T_WAITING; /* not failed: send_all may write again */
    char frame[16];
    size_t n = rsp_frame(frame, sizeof frame, "D", 1);
    send_all(r, frame, n);
    if (!await_reply(r, &detach, end)) {
        n = rsp_frame(frame, sizeof frame, "c", 1);
        send_all(r, frame, n);
    }
    /* the last packet must reach the server before the socket goes (unread input would reset it) */
    if (shutdown(r->fd, SHUT_WR) == 0) {
        char junk[4096];
        double until = mono_now() + 0.2;
        for (double left; (left = until - mono_now()) > 0;) {
            struct pollfd p = {r->fd, POLLIN, 0};
            if (poll(&p, 1, (int)(left * 1000) + 1) <= 0 || read(r->fd, junk, sizeof junk) <= 0)
                break;
        }
    }
}

void rtt_close(struct rtt_reader *r)
{
    if (!r)
        return;
    bool lost = r->step == T_FAILED && strstr(r->failed, "connection") != NULL;
    if (!r->tcl && r->fd >= 0 && !r->exited && !lost)
        let_run(r);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}
