/* Sources: files, stdin, serial ports, ptys, TCP; non-blocking, with reconnects. */
#include "source.h"

#include "gdb.h"
#include "net.h"
#include "openocd.h"
#include "rtt.h"

#include <errno.h>
#include <fcntl.h>
#include <libserialport.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define RECONNECT_EVERY 0.5 /* seconds between attempts */

struct source {
    enum src_kind kind;
    enum src_state state;
    char spec[256];
    char name[300];
    char message[600];
    int fd;
    int baud;
    double rate;          /* bytes/s for paced file replay */
    double started;       /* pacing origin */
    uint64_t bytes;
    unsigned reconnects;
    double next_attempt;
    struct sp_port *port; /* libserialport */
    int stdin_flags;      /* stdin's file flags before we made it non-blocking */
    char host[200], service[16];
    bool permanent;       /* the last connect failed for good: retrying cannot help */
    struct gdb_sampler *gdb; /* SRC_GDB: the conversation with the server */
    struct gdb_stats gdb_stats; /* of the last conversation, kept after it ends */
    struct ocd_sampler *ocd;    /* SRC_OPENOCD */
    struct ocd_original ocd_first; /* SRC_OPENOCD: DEMCR as the first connection found it */
    bool has_task;              /* SRC_GDB: --task-var, applied at each connect */
    unsigned stack_depth;       /* SRC_GDB: --stack-depth and its unwinder, likewise */
    gdb_unwind_fn unwind;
    void *unwind_ctx;
    uint32_t task_addr;
    int task_name_offset;
    struct ocd_stats ocd_stats;
    struct rtt_reader *rtt;     /* SRC_RTT */
    struct rtt_stats rtt_stats; /* of the last conversation */
    bool has_rtt_block;         /* SRC_RTT: the ELF's _SEGGER_RTT, applied at each connect */
    uint32_t rtt_block;
    char detail[400];
    char last_failure[600]; /* why the source last went away; kept across reconnects */
    bool failing;           /* it went away by a failure, not by its normal end, and is not back */
    /* every failure of the run, kept whether the source came back or not */
    unsigned failures;
    char first_failure[600]; /* the first one: later ones are often its echo (a refused reconnect) */
    char reason[SRC_REASONS][200];
    unsigned reason_times[SRC_REASONS];
    size_t n_reasons;
    double down_since;      /* when a failure sent it away, while it is away; 0 otherwise */
    double lost_s;          /* seconds away after failures, up to the last reconnect */
    bool suspended;         /* away for a stop of the process (Ctrl-Z), not by a failure */
};

/* Errors that waiting does not cure: the device is there but not ours, or not a terminal. */
static bool permanent_errno(int e)
{
    return e == EACCES || e == EPERM || e == ENOTTY || e == EISDIR || e == EINVAL;
}

static void set_message(struct source *s, const char *what)
{
    snprintf(s->message, sizeof s->message, "%s: %s", s->spec, what);
}

static int nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static speed_t termios_speed(int baud)
{
    switch (baud) {
    case 9600:
        return B9600;
    case 19200:
        return B19200;
    case 38400:
        return B38400;
    case 57600:
        return B57600;
    case 230400:
        return B230400;
    case 460800:
        return B460800;
    case 921600:
        return B921600;
    default:
        return B115200;
    }
}

/* A pty or another character device that libserialport does not know. */
static bool open_tty(struct source *s)
{
    int fd = open(s->spec, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        s->permanent = permanent_errno(errno);
        set_message(s, strerror(errno));
        return false;
    }
    struct termios t;
    if (tcgetattr(fd, &t) == 0) {
        cfmakeraw(&t);
        cfsetispeed(&t, termios_speed(s->baud));
        cfsetospeed(&t, termios_speed(s->baud));
        t.c_cflag |= CLOCAL | CREAD;
        tcsetattr(fd, TCSANOW, &t);
    }
    s->fd = fd;
    return true;
}

/* A character device that is no terminal (/dev/null, /dev/zero) is read like a file. One that we
 * may not open is left to open_tty(), which reports why. */
static bool is_terminal(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return true;
    bool tty = isatty(fd) != 0;
    close(fd);
    return tty;
}

static bool open_serial(struct source *s)
{
    struct sp_port *port;
    if (sp_get_port_by_name(s->spec, &port) != SP_OK) {
        set_message(s, "no such serial port");
        return false;
    }
    if (sp_open(port, SP_MODE_READ) != SP_OK) {
        s->permanent = permanent_errno(sp_last_error_code());
        char *m = sp_last_error_message();
        set_message(s, m ? m : "cannot open");
        sp_free_error_message(m);
        sp_free_port(port);
        return false;
    }
    sp_set_baudrate(port, s->baud);
    sp_set_bits(port, 8);
    sp_set_parity(port, SP_PARITY_NONE);
    sp_set_stopbits(port, 1);
    sp_set_flowcontrol(port, SP_FLOWCONTROL_NONE);
    int fd = -1;
    sp_get_port_handle(port, &fd);
    nonblocking(fd);
    s->port = port;
    s->fd = fd;
    return true;
}

static bool open_tcp(struct source *s)
{
    char err[300];
    int fd = net_connect(s->host, s->service, false, &s->permanent, err, sizeof err);
    if (fd < 0) {
        set_message(s, err);
        return false;
    }
    s->fd = fd;
    return true;
}

static bool open_gdb(struct source *s, double now)
{
    char err[300];
    s->gdb = gdb_open(s->spec + 4, s->rate, now, err, sizeof err);
    if (!s->gdb)
        set_message(s, err);
    else if (s->has_task)
        gdb_set_task_var(s->gdb, s->task_addr, s->task_name_offset);
    if (s->gdb && s->unwind)
        gdb_set_unwind(s->gdb, s->stack_depth, s->unwind, s->unwind_ctx);
    return s->gdb != NULL;
}

static double clock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static bool open_ocd(struct source *s, double now)
{
    char err[300];
    s->ocd = ocd_open(s->spec + 8, now, &s->ocd_first, err, sizeof err);
    if (!s->ocd)
        set_message(s, err);
    return s->ocd != NULL;
}

static bool open_rtt(struct source *s, double now)
{
    char err[300];
    s->rtt = rtt_open(s->spec + 4, s->rate, now, err, sizeof err);
    if (!s->rtt)
        set_message(s, err);
    else if (s->has_rtt_block)
        rtt_set_block(s->rtt, s->rtt_block);
    return s->rtt != NULL;
}

static bool connect_live(struct source *s)
{
    switch (s->kind) {
    case SRC_RTT:
        return open_rtt(s, clock_now());
    case SRC_GDB:
        return open_gdb(s, clock_now());
    case SRC_OPENOCD:
        return open_ocd(s, clock_now());
    case SRC_SERIAL:
        return open_serial(s);
    case SRC_TTY:
        return open_tty(s);
    case SRC_TCP:
        return open_tcp(s);
    default:
        return false;
    }
}

static void disconnect(struct source *s)
{
    if (s->gdb) {
        gdb_get_stats(s->gdb, &s->gdb_stats);
        gdb_close(s->gdb); /* leaves the target running */
        s->gdb = NULL;
        s->fd = -1;
        return;
    }
    if (s->rtt) {
        rtt_get_stats(s->rtt, &s->rtt_stats);
        rtt_close(s->rtt); /* the target running */
        s->rtt = NULL;
        s->fd = -1;
        return;
    }
    if (s->ocd) {
        ocd_get_stats(s->ocd, &s->ocd_stats);
        ocd_close(s->ocd); /* DEMCR as it was */
        s->ocd = NULL;
        s->fd = -1;
        return;
    }
    if (s->port) {
        sp_close(s->port);
        sp_free_port(s->port);
        s->port = NULL;
    } else if (s->fd >= 0 && s->kind != SRC_STDIN) {
        close(s->fd);
    }
    s->fd = -1;
}

struct source *src_open(const char *spec, int baud, double rate, char *err, size_t errlen)
{
    struct source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(s->spec, sizeof s->spec, "%s", spec);
    s->fd = -1;
    s->baud = baud > 0 ? baud : 115200;
    s->rate = rate;
    if (strcmp(spec, "-") == 0) {
        s->kind = SRC_STDIN;
        s->fd = STDIN_FILENO;
        s->stdin_flags = fcntl(s->fd, F_GETFL);
        nonblocking(s->fd); /* shared with the shell: put back in src_close() */
        snprintf(s->name, sizeof s->name, "stdin");
        return s;
    }
    if (strncmp(spec, "gdb:", 4) == 0) {
        const char *where = spec + 4, *colon = strrchr(where, ':');
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : 0;
        if (where[0] != '/' && (!colon || colon == where || !colon[1] || *end || port < 1 || port > 65535)) {
            snprintf(err, errlen, "source '%s': use gdb:HOST:PORT (a GDB server, port 1 to 65535) or "
                     "gdb:/dev/ttyACM0 (a Black Magic Probe)", spec);
            free(s);
            return NULL;
        }
        if (where[0] == '/' && !gdb_serial_ok(where, err, errlen)) { /* never written to: refused at once */
            free(s);
            return NULL;
        }
        s->kind = SRC_GDB;
        snprintf(s->name, sizeof s->name, "%s", spec);
    } else if (strncmp(spec, "rtt:", 4) == 0) {
        const char *where = spec + 4 + (strncmp(spec + 4, "openocd:", 8) == 0 ? 8 : 0), *colon = strrchr(where, ':');
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : where == spec + 4 ? 0 : 6666;
        if ((colon && (colon == where || !colon[1] || *end)) || port < 1 || port > 65535) {
            snprintf(err, errlen, "source '%s': use rtt:HOST:PORT (a GDB server) or rtt:openocd:HOST[:PORT] "
                     "(OpenOCD's Tcl port, 6666 by default)", spec);
            free(s);
            return NULL;
        }
        s->kind = SRC_RTT;
        snprintf(s->name, sizeof s->name, "%s", spec);
    } else if (strncmp(spec, "openocd:", 8) == 0) {
        char host[200], port[16], why[300];
        struct ocd_swo swo;
        if (!ocd_parse(spec + 8, host, sizeof host, port, sizeof port, &swo, why, sizeof why)) {
            snprintf(err, errlen, "source '%s': %s", spec, why);
            free(s);
            return NULL;
        }
        s->kind = SRC_OPENOCD;
        snprintf(s->name, sizeof s->name, "%s", spec);
    } else if (strncmp(spec, "tcp:", 4) == 0) {
        /* tcp:HOST:PORT, with an IPv6 address in brackets: tcp:[::1]:3443 */
        const char *host = spec + 4, *host_end, *colon;
        if (*host == '[') {
            host_end = strchr(host, ']');
            colon = host_end && host_end[1] == ':' ? host_end + 1 : NULL;
            host++;
        } else {
            colon = strrchr(host, ':');
            host_end = colon;
        }
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : 0;
        if (!colon || host_end == host || (size_t)(host_end - host) >= sizeof s->host || !colon[1] || *end ||
            port < 1 || port > 65535) {
            snprintf(err, errlen, "source '%s': use tcp:HOST:PORT with a port from 1 to 65535 (tcp:[::1]:PORT for IPv6)",
                     spec);
            free(s);
            return NULL;
        }
        memcpy(s->host, host, (size_t)(host_end - host));
        snprintf(s->service, sizeof s->service, "%ld", port);
        s->kind = SRC_TCP;
        snprintf(s->name, sizeof s->name, "%s", spec);
    } else {
        struct stat st;
        if (stat(spec, &st) != 0) {
            snprintf(err, errlen, "cannot open source '%s': %s%s", spec, strerror(errno),
                     strncmp(spec, "/dev/", 5) == 0 ? " (the serial ports there: cmprof-top --list-ports)" : "");
            free(s);
            return NULL;
        }
        if (S_ISCHR(st.st_mode) && is_terminal(spec)) {
            struct sp_port *probe;
            s->kind = sp_get_port_by_name(spec, &probe) == SP_OK ? SRC_SERIAL : SRC_TTY;
            if (s->kind == SRC_SERIAL)
                sp_free_port(probe);
            snprintf(s->name, sizeof s->name, "%s %d 8N1", spec, s->baud);
        } else { /* a file, a fifo, or a device that is no terminal (/dev/null): read to its end */
            s->kind = SRC_FILE;
            s->fd = open(spec, O_RDONLY | O_NONBLOCK);
            if (s->fd < 0) {
                snprintf(err, errlen, "cannot open source '%s': %s", spec, strerror(errno));
                free(s);
                return NULL;
            }
            snprintf(s->name, sizeof s->name, "%s", spec);
            return s;
        }
    }
    if (!connect_live(s)) {
        if (s->permanent) {
            snprintf(err, errlen, "cannot open source %s", s->message);
            free(s);
            return NULL;
        }
        s->state = SRC_RECONNECTING; /* absent for now: keep trying */
        s->next_attempt = 0;
    }
    return s;
}

void src_close(struct source *s)
{
    if (!s)
        return;
    if (s->kind == SRC_STDIN && s->stdin_flags >= 0)
        fcntl(STDIN_FILENO, F_SETFL, s->stdin_flags);
    disconnect(s);
    free(s);
}

int src_fd(const struct source *s)
{
    if (s->state != SRC_CONNECTED)
        return -1;
    if (s->kind == SRC_GDB)
        return gdb_fd(s->gdb); /* -1 while the target runs: the timer says when to halt it */
    if (s->kind == SRC_OPENOCD)
        return ocd_fd(s->ocd);
    if (s->kind == SRC_RTT)
        return rtt_fd(s->rtt);
    if (s->kind == SRC_FILE && s->rate > 0)
        return -1; /* paced: the timer drives it */
    return s->fd;
}

int src_wait_ms(const struct source *s, double now)
{
    if (s->state == SRC_RECONNECTING) {
        double dt = s->next_attempt - now;
        return dt <= 0 ? 0 : (int)(dt * 1000) + 1;
    }
    if (s->state == SRC_CONNECTED && s->kind == SRC_FILE && s->rate > 0)
        return 10;
    if (s->state == SRC_CONNECTED && s->kind == SRC_GDB)
        return gdb_wait_ms(s->gdb, now);
    if (s->state == SRC_CONNECTED && s->kind == SRC_OPENOCD)
        return ocd_wait_ms(s->ocd, now);
    if (s->state == SRC_CONNECTED && s->kind == SRC_RTT)
        return rtt_wait_ms(s->rtt, now);
    return -1;
}

/* failure: an error, not the source's normal end (a file's end, a stream its server closed). */
static void count_failure(struct source *s, const char *why, double now)
{
    if (!s->failures++)
        snprintf(s->first_failure, sizeof s->first_failure, "%s", why);
    size_t i = 0;
    while (i < s->n_reasons && strncmp(s->reason[i], why, sizeof s->reason[i] - 1) != 0)
        i++;
    if (i == s->n_reasons && i < SRC_REASONS)
        snprintf(s->reason[s->n_reasons++], sizeof s->reason[i], "%s", why);
    if (i < SRC_REASONS)
        s->reason_times[i]++;
    if (s->down_since == 0)
        s->down_since = now > 0 ? now : 1e-9;
}

static void went_away(struct source *s, const char *why, bool failure, double now)
{
    snprintf(s->last_failure, sizeof s->last_failure, "%s", why);
    s->failing = failure;
    if (failure)
        count_failure(s, why, now);
    disconnect(s);
    if (s->kind == SRC_FILE || s->kind == SRC_STDIN) {
        s->state = SRC_END;
        return;
    }
    set_message(s, why);
    s->state = SRC_RECONNECTING;
    s->next_attempt = now + RECONNECT_EVERY;
}

/* After a sampler's step: its bytes are counted; a failure, once nothing is left to hand out,
 * sends the source away, for good when it will not pass (the program ended, no target). The
 * program's end is kept as the run's failure too: a run it cut short names it ("the target exited
 * with status 0"), never ends as if whole. */
static ssize_t sampled(struct source *s, size_t got, const char *why, bool final, double now)
{
    s->bytes += got;
    if (why && !got) {
        char m[300];
        snprintf(m, sizeof m, "%s", why); /* the sampler and its message go with went_away() */
        went_away(s, m, true, now);
        if (final)
            s->state = SRC_END;
    }
    return (ssize_t)got;
}

ssize_t src_read(struct source *s, uint8_t *buf, size_t n, double now)
{
    if (s->state != SRC_CONNECTED)
        return 0;
    if (s->kind == SRC_OPENOCD) {
        size_t got = ocd_step(s->ocd, buf, n, now);
        return sampled(s, got, ocd_failed(s->ocd), ocd_hopeless(s->ocd), now);
    }
    if (s->kind == SRC_RTT) {
        size_t got = rtt_step(s->rtt, buf, n, now);
        return sampled(s, got, rtt_failed(s->rtt), rtt_exited(s->rtt), now);
    }
    if (s->kind == SRC_GDB) {
        size_t got = gdb_step(s->gdb, buf, n, now);
        return sampled(s, got, gdb_failed(s->gdb), gdb_exited(s->gdb), now);
    }
    if (s->kind == SRC_FILE && s->rate > 0) {
        if (s->started == 0)
            s->started = now;
        double allowed = (now - s->started) * s->rate - (double)s->bytes;
        if (allowed < 1)
            return 0;
        if ((double)n > allowed)
            n = (size_t)allowed;
    }
    ssize_t got = read(s->fd, buf, n);
    if (got > 0) {
        s->bytes += (uint64_t)got;
        return got;
    }
    if (got == 0) {
        bool device = s->kind == SRC_SERIAL || s->kind == SRC_TTY; /* a port does not end by itself */
        went_away(s, s->kind == SRC_TCP ? "connection closed" : "end of input", device, now);
        return 0;
    }
    int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR)
        return 0;
    /* EIO: a pty's other end closed (its end), or a USB serial device left (a failure) */
    went_away(s, strerror(e), !(s->kind == SRC_TTY && e == EIO), now);
    return 0;
}

void src_tick(struct source *s, double now)
{
    if (s->state != SRC_RECONNECTING || now < s->next_attempt)
        return;
    if (connect_live(s)) {
        s->state = SRC_CONNECTED;
        s->reconnects++;
        s->message[0] = '\0';
        s->failing = false;
        if (s->down_since > 0)
            s->lost_s += now - s->down_since;
        s->down_since = 0;
        s->suspended = false;
    } else if (s->suspended) { /* back from a stop, and the server is gone: that is a failure */
        char why[600];
        snprintf(why, sizeof why, "not back after the process was stopped: %.500s", s->message);
        s->suspended = false;
        snprintf(s->last_failure, sizeof s->last_failure, "%s", why);
        s->failing = true;
        count_failure(s, why, now);
        s->next_attempt = now + RECONNECT_EVERY;
    } else {
        s->next_attempt = now + RECONNECT_EVERY;
    }
}

void src_suspend(struct source *s, double now)
{
    if (s->state != SRC_CONNECTED || (s->kind != SRC_GDB && s->kind != SRC_OPENOCD && s->kind != SRC_RTT))
        return;
    disconnect(s); /* the target running, DEMCR as it was, the server free */
    set_message(s, "stopped (Ctrl-Z): the target runs until the process continues");
    s->state = SRC_RECONNECTING;
    s->suspended = true;
    s->next_attempt = now; /* at once when continued */
}

void src_get_failures(const struct source *s, double now, struct src_failures *out)
{
    memset(out, 0, sizeof *out);
    out->count = s->failures;
    out->reconnects = s->reconnects;
    out->lost_s = s->lost_s + (s->down_since > 0 && now > s->down_since ? now - s->down_since : 0);
    out->first = s->first_failure;
    out->n_reasons = s->n_reasons;
    for (size_t i = 0; i < s->n_reasons; i++) {
        out->reason[i] = s->reason[i];
        out->times[i] = s->reason_times[i];
    }
}

enum src_state src_state(const struct source *s)
{
    return s->state;
}

enum src_kind src_kind(const struct source *s)
{
    return s->kind;
}

const char *src_name(const struct source *s)
{
    return s->name;
}

const char *src_message(const struct source *s)
{
    return s->message;
}

const char *src_last_failure(const struct source *s)
{
    return s->last_failure;
}

const char *src_failure(const struct source *s)
{
    return s->failing && s->state != SRC_CONNECTED ? s->last_failure : "";
}

static int rtt_halting(const struct source *s, double *rate, double *halted_share)
{
    struct rtt_stats st = s->rtt_stats;
    if (s->rtt)
        rtt_get_stats(s->rtt, &st);
    double wall = st.last - st.first;
    if (!st.halting || st.polls < 2 || wall <= 0 || st.halted_s + st.running_s <= 0)
        return 0;
    *rate = (double)(st.polls - 1) / wall;
    *halted_share = st.halted_s / (st.halted_s + st.running_s);
    return 1;
}

int src_halting(const struct source *s, double *rate, double *halted_share)
{
    if (s->kind == SRC_RTT)
        return rtt_halting(s, rate, halted_share);
    if (s->kind != SRC_GDB)
        return 0;
    struct gdb_stats st = s->gdb_stats;
    if (s->gdb)
        gdb_get_stats(s->gdb, &st);
    double wall = st.last_sample - st.first_sample;
    if (st.samples < 2 || wall <= 0 || st.halted_s + st.running_s <= 0)
        return 0;
    *rate = (double)(st.samples - 1) / wall;
    *halted_share = st.halted_s / (st.halted_s + st.running_s);
    return 1;
}

/* "RTT 98 polls/s, 41.3 KB/s, core halted 2.1 %, buffer at most 12 % full" */
static void rtt_detail(struct source *s)
{
    struct rtt_stats st = s->rtt_stats;
    if (s->rtt)
        rtt_get_stats(s->rtt, &st);
    double wall = st.last - st.first;
    if (st.polls < 2 || wall <= 0)
        return;
    int n = snprintf(s->detail, sizeof s->detail, "RTT %.0f polls/s, %.1f KB/s", (double)(st.polls - 1) / wall,
                     (double)st.bytes / wall / 1000.0);
    if (st.halting && st.halted_s + st.running_s > 0)
        n += snprintf(s->detail + n, sizeof s->detail - (size_t)n, ", core halted %.1f %%",
                      100.0 * st.halted_s / (st.halted_s + st.running_s));
    snprintf(s->detail + n, sizeof s->detail - (size_t)n, ", buffer at most %.0f %% full",
             st.size ? 100.0 * st.most / st.size : 0.0);
}

const char *src_detail(struct source *s, double now)
{
    double rate, halted;
    s->detail[0] = '\0';
    if (s->kind == SRC_RTT) {
        rtt_detail(s);
        return s->detail;
    }
    if (src_halting(s, &rate, &halted))
        snprintf(s->detail, sizeof s->detail, "%.0f halts/s, core halted %.1f %%", rate, 100.0 * halted);
    if (s->kind == SRC_GDB) { /* a reset while sampled, and its fix */
        struct gdb_stats st = s->gdb_stats;
        if (s->gdb)
            gdb_get_stats(s->gdb, &st);
        gdb_advice(&st, s->detail, sizeof s->detail);
    }
    if (s->kind == SRC_OPENOCD) {
        struct ocd_stats st = s->ocd_stats;
        if (s->ocd)
            ocd_get_stats(s->ocd, &st);
        double wall = st.last - st.first;
        if (st.swo)
            snprintf(s->detail, sizeof s->detail, "SWO %.3g MHz, a PC sample every %u cycles, %.1f KB/s", st.pin / 1e6,
                     st.period, wall > 0 ? (double)st.trace_bytes / wall / 1000.0 : 0.0);
        /* a fast server's replies can all come in one read, stamped with one time: no rate then */
        if (st.bursts > 1 && wall > 0)
            snprintf(s->detail, sizeof s->detail, "%s %.0f samples/s, %.1f ms a burst",
                     st.halting ? "no PCSR: halting," : "PCSR", (double)(st.samples + st.sleeps) / wall,
                     1000.0 * st.burst_s / (double)st.bursts);
        else if (st.bursts > 1)
            snprintf(s->detail, sizeof s->detail, "%s %llu bursts, too quick to time, %.1f ms a burst",
                     st.halting ? "no PCSR: halting," : "PCSR", (unsigned long long)st.bursts,
                     1000.0 * st.burst_s / (double)st.bursts);
    }
    (void)now;
    return s->detail;
}

const char *src_packets_by(const struct source *s)
{
    if (s->kind == SRC_OPENOCD)
        return strstr(s->spec, ",swo=") ? NULL : "openocd-pcsr";
    return s->kind == SRC_GDB ? "gdb-halting" : NULL;
}

uint64_t src_bytes(const struct source *s)
{
    return s->bytes;
}

unsigned src_reconnects(const struct source *s)
{
    return s->reconnects;
}

int src_set_unwind(struct source *s, unsigned depth, gdb_unwind_fn fn, void *ctx)
{
    if (s->kind != SRC_GDB)
        return 0;
    s->stack_depth = depth;
    s->unwind = fn;
    s->unwind_ctx = ctx;
    if (s->gdb)
        gdb_set_unwind(s->gdb, depth, fn, ctx);
    return 1;
}

int src_set_rtt_block(struct source *s, uint32_t addr)
{
    if (s->kind != SRC_RTT)
        return 0;
    s->has_rtt_block = true;
    s->rtt_block = addr;
    if (s->rtt)
        rtt_set_block(s->rtt, addr);
    return 1;
}

int src_set_task_var(struct source *s, uint32_t addr, int name_offset)
{
    if (s->kind != SRC_GDB)
        return 0;
    s->has_task = true;
    s->task_addr = addr;
    s->task_name_offset = name_offset;
    if (s->gdb)
        gdb_set_task_var(s->gdb, addr, name_offset);
    return 1;
}

int src_list_ports(FILE *out)
{
    struct sp_port **ports;
    if (sp_list_ports(&ports) != SP_OK)
        return 0;
    int n = 0;
    for (; ports[n]; n++) {
        struct sp_port *p = ports[n];
        const char *desc = sp_get_port_description(p);
        fprintf(out, "%s", sp_get_port_name(p));
        if (sp_get_port_transport(p) == SP_TRANSPORT_USB) {
            int vid = 0, pid = 0;
            sp_get_port_usb_vid_pid(p, &vid, &pid);
            const char *product = sp_get_port_usb_product(p);
            fprintf(out, "  USB %04x:%04x  %s", vid, pid, product ? product : "");
        }
        fprintf(out, "  %s\n", desc ? desc : "");
    }
    sp_free_port_list(ports);
    return n;
}
