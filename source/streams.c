/* The transports read with read(): a capture file, stdin, a serial port (libserialport), a pty or
 * another character device (termios), a TCP stream. */
#include "streams.h"

#include "net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libserialport.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

struct stream {
    char spec[SRC_SPEC_MAX]; /* what a port reopens */
    int fd;
    struct sp_port *port; /* a serial port: libserialport's */
    int baud;
    bool is_stdin;        /* the shell's: never closed */
    int stdin_flags;      /* stdin's file flags before we made it non-blocking */
    double rate, started; /* a paced file: bytes per second, and its origin */
    uint64_t bytes;       /* a paced file: read so far */
    char host[200], service[16];
    const char *end_text; /* what read() returning 0 means */
    bool end_is_failure;  /* a port does not end by itself */
    bool eio_is_end;      /* a pty: EIO is its other end closing, not a failure */
    bool pts;             /* a pty named by its own path (/dev/pts/N): gone for good when it ends */
};

/* Errors that waiting does not cure: the device is there but not ours, or not a terminal. */
static bool permanent_errno(int e)
{
    return e == EACCES || e == EPERM || e == ENOTTY || e == EISDIR || e == EINVAL;
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

/* A character device that is no terminal (/dev/null, /dev/zero) is read like a file. One that we
 * may not open is left to tty_connect(), which reports why. */
static bool is_terminal(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return true;
    bool tty = isatty(fd) != 0;
    close(fd);
    return tty;
}

static struct stream *stream_new(const struct src_params *p, const char *end_text, char *err, size_t errlen)
{
    struct stream *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(t->spec, sizeof t->spec, "%s", p->kept);
    t->fd = -1;
    t->baud = p->baud;
    t->rate = p->rate;
    t->end_text = end_text;
    return t;
}

static void stream_disconnect(void *v)
{
    struct stream *t = v;
    if (t->port) {
        sp_close(t->port);
        sp_free_port(t->port);
        t->port = NULL;
    } else if (t->fd >= 0 && !t->is_stdin) {
        close(t->fd);
    }
    t->fd = -1;
}

static void stream_destroy(void *v)
{
    struct stream *t = v;
    if (t->is_stdin && t->stdin_flags >= 0)
        fcntl(STDIN_FILENO, F_SETFL, t->stdin_flags);
    free(t);
}

static int stream_fd(const void *v)
{
    return ((const struct stream *)v)->fd;
}

static size_t stream_read(void *v, uint8_t *buf, size_t n, double now, struct src_gone *gone)
{
    struct stream *t = v;
    (void)now;
    ssize_t got = read(t->fd, buf, n);
    if (got > 0)
        return (size_t)got;
    if (got == 0) {
        snprintf(gone->why, sizeof gone->why, "%s", t->end_text);
        gone->failure = t->end_is_failure;
        gone->final = t->pts;
        return 0;
    }
    int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR)
        return 0;
    /* EIO: a pty's other end closed (its end), or a USB serial device left (a failure) */
    snprintf(gone->why, sizeof gone->why, "%s", t->pts && e == EIO ? t->end_text : strerror(e));
    gone->failure = !(t->eio_is_end && e == EIO);
    gone->final = t->pts; /* its number goes to the next terminal opened: reopened, that was someone's shell */
    return 0;
}

/* ---- stdin ---- */

static bool stdin_claims(const struct src_params *p)
{
    return strcmp(p->spec, "-") == 0;
}

static void *stdin_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                        char *name, size_t namelen, char *err, size_t errlen)
{
    (void)set, (void)self;
    struct stream *t = stream_new(p, "end of input", err, errlen);
    if (!t)
        return NULL;
    t->fd = STDIN_FILENO;
    t->is_stdin = true;
    t->stdin_flags = fcntl(t->fd, F_GETFL);
    nonblocking(t->fd); /* shared with the shell: put back by stream_destroy() */
    snprintf(name, namelen, "stdin");
    return t;
}

static const char *spec_itself(const char *spec)
{
    return spec;
}

const struct transport tr_stdin = {
    .prefix = "-",
    .path_of = spec_itself,
    .claims = stdin_claims,
    .kind = SRC_STDIN,
    .make = stdin_make,
    .disconnect = stream_disconnect,
    .destroy = stream_destroy,
    .fd = stream_fd,
    .read = stream_read,
};

/* ---- a file, a fifo, or a device that is no terminal (/dev/null): read to its end ---- */

static void *file_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                       char *name, size_t namelen, char *err, size_t errlen)
{
    (void)set, (void)self;
    struct stream *t = stream_new(p, "end of input", err, errlen);
    if (!t)
        return NULL;
    t->fd = open(p->spec, O_RDONLY | O_NONBLOCK);
    if (t->fd < 0) {
        snprintf(err, errlen, "cannot open source '%s': %s", p->spec, strerror(errno));
        free(t);
        return NULL;
    }
    snprintf(name, namelen, "%s", p->spec);
    return t;
}

static int file_fd(const void *v)
{
    const struct stream *t = v;
    return t->rate > 0 ? -1 : t->fd; /* paced: the timer drives it */
}

static int file_wait_ms(const void *v, double now)
{
    (void)now;
    return ((const struct stream *)v)->rate > 0 ? 10 : -1;
}

/* Paced replay: no more than rate bytes a second since the first read. */
static size_t file_read(void *v, uint8_t *buf, size_t n, double now, struct src_gone *gone)
{
    struct stream *t = v;
    if (t->rate > 0) {
        if (t->started == 0)
            t->started = now;
        double allowed = (now - t->started) * t->rate - (double)t->bytes;
        if (allowed < 1)
            return 0;
        if ((double)n > allowed)
            n = (size_t)allowed;
    }
    size_t got = stream_read(t, buf, n, now, gone);
    t->bytes += got;
    return got;
}

const struct transport tr_file = {
    .kind = SRC_FILE,
    .make = file_make,
    .disconnect = stream_disconnect,
    .destroy = stream_destroy,
    .fd = file_fd,
    .wait_ms = file_wait_ms,
    .read = file_read,
};

/* ---- a serial port, or a pty or another terminal that libserialport does not know ---- */

static void *port_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                       char *name, size_t namelen, char *err, size_t errlen)
{
    (void)set;
    bool pts = *self == &tr_tty && strncmp(p->spec, "/dev/pts/", 9) == 0;
    struct stream *t = stream_new(p, pts ? "the port hung up (its other end closed): a pty does not come back, and "
                                  "its number goes to the next terminal opened, not reopened"
                                  : "the port hung up (its other end closed, or the device went away)", err, errlen);
    if (!t)
        return NULL;
    t->end_is_failure = true;
    t->eio_is_end = *self == &tr_tty;
    t->pts = pts;
    snprintf(name, namelen, "%s %d 8N1", p->spec, p->baud);
    return t;
}

/* A terminal that is some process's controlling terminal (a shell's, a getty's) is no port to set
 * raw and read: a link (socat's link=) left behind by a pty's end names the next terminal given its
 * number. Told from /proc's tty_nr (TIOCGSID answers only for one's own terminal). st: the terminal's
 * (anything but a character device is no one's terminal: tty_nr 0, no terminal, matches st_rdev 0). */
static bool session_terminal(const struct stat *st, char *why, size_t whylen)
{
    DIR *procs = S_ISCHR(st->st_mode) ? opendir("/proc") : NULL;
    if (!procs)
        return false;
    long owner = 0;
    for (struct dirent *e; !owner && (e = readdir(procs)) != NULL;) {
        char path[300], stat_text[1024];
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || atol(e->d_name) == (long)getpid())
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(stat_text, 1, sizeof stat_text - 1, f) : 0;
        if (f)
            fclose(f);
        stat_text[n] = '\0';
        const char *after = strrchr(stat_text, ')'); /* the command's name may hold anything */
        int tty_nr;
        if (after && sscanf(after, ") %*c %*d %*d %*d %d", &tty_nr) == 1 && (dev_t)(unsigned)tty_nr == st->st_rdev)
            owner = atol(e->d_name);
    }
    closedir(procs);
    if (owner)
        snprintf(why, whylen, "it is the controlling terminal of process %ld (someone's shell?), not a port: "
                 "left as it is", owner);
    return owner != 0;
}

/* session_terminal for a path, before libserialport opens it (its open sets the terminal raw): by
 * stat, not an open of its own (a USB serial adapter's open and close raise and drop DTR, which resets
 * boards wired for it). */
static bool session_terminal_at(const char *path, char *why, size_t whylen)
{
    struct stat st;
    return stat(path, &st) == 0 && session_terminal(&st, why, whylen);
}

static bool serial_connect(void *v, double now, char *why, size_t whylen, bool *permanent)
{
    struct stream *t = v;
    struct sp_port *port;
    (void)now;
    if (session_terminal_at(t->spec, why, whylen))
        return false;
    if (sp_get_port_by_name(t->spec, &port) != SP_OK) {
        snprintf(why, whylen, "no such serial port");
        return false;
    }
    if (sp_open(port, SP_MODE_READ) != SP_OK) {
        *permanent = permanent_errno(sp_last_error_code());
        char *m = sp_last_error_message();
        snprintf(why, whylen, "%s", m ? m : "cannot open");
        sp_free_error_message(m);
        sp_free_port(port);
        return false;
    }
    sp_set_baudrate(port, t->baud);
    sp_set_bits(port, 8);
    sp_set_parity(port, SP_PARITY_NONE);
    sp_set_stopbits(port, 1);
    sp_set_flowcontrol(port, SP_FLOWCONTROL_NONE);
    int fd = -1;
    sp_get_port_handle(port, &fd);
    nonblocking(fd);
    t->port = port;
    t->fd = fd;
    return true;
}

const struct transport tr_serial = {
    .kind = SRC_SERIAL,
    .make = port_make,
    .connect = serial_connect,
    .disconnect = stream_disconnect,
    .destroy = stream_destroy,
    .fd = stream_fd,
    .read = stream_read,
};

static bool tty_connect(void *v, double now, char *why, size_t whylen, bool *permanent)
{
    struct stream *t = v;
    (void)now;
    int fd = open(t->spec, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        *permanent = permanent_errno(errno);
        snprintf(why, whylen, "%s", strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && session_terminal(&st, why, whylen)) {
        close(fd);
        return false;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) == 0) {
        cfmakeraw(&tio);
        cfsetispeed(&tio, termios_speed(t->baud));
        cfsetospeed(&tio, termios_speed(t->baud));
        tio.c_cflag |= CLOCAL | CREAD;
        tcsetattr(fd, TCSANOW, &tio);
    }
    t->fd = fd;
    return true;
}

const struct transport tr_tty = {
    .kind = SRC_TTY,
    .make = port_make,
    .connect = tty_connect,
    .disconnect = stream_disconnect,
    .destroy = stream_destroy,
    .fd = stream_fd,
    .read = stream_read,
};

/* ---- a path: a terminal is a serial port or a tty, anything else a file ---- */

static void *path_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                       char *name, size_t namelen, char *err, size_t errlen)
{
    struct stat st;
    if (stat(p->spec, &st) != 0) {
        snprintf(err, errlen, "cannot open source '%s': %s%s", p->spec, strerror(errno),
                 strncmp(p->spec, "/dev/", 5) == 0 ? " (the serial ports there: cmprof-top --list-ports)" : "");
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) { /* opened, it read as an empty file: "[end of file]", "no data from the source yet" */
        snprintf(err, errlen, "cannot open source '%s': %s", p->spec, strerror(EISDIR));
        return NULL;
    }
    if (S_ISCHR(st.st_mode) && is_terminal(p->spec)) {
        struct sp_port *probe;
        *self = &tr_tty;
        if (sp_get_port_by_name(p->spec, &probe) == SP_OK) {
            *self = &tr_serial;
            sp_free_port(probe);
        }
    } else {
        *self = &tr_file;
    }
    return (*self)->make(p, set, self, name, namelen, err, errlen);
}

const struct transport tr_path = {.prefix = "", .make = path_make, .path_of = spec_itself};

/* ---- tcp:HOST:PORT, with an IPv6 address in brackets: tcp:[::1]:3443 ---- */

static void *tcp_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                      char *name, size_t namelen, char *err, size_t errlen)
{
    (void)set, (void)self;
    const char *host = p->spec + 4, *host_end, *colon;
    if (*host == '[') {
        host_end = strchr(host, ']');
        colon = host_end && host_end[1] == ':' ? host_end + 1 : NULL;
        host++;
    } else {
        colon = strrchr(host, ':');
        host_end = colon;
    }
    struct stream *t = NULL;
    if (!colon || host_end == host || (size_t)(host_end - host) >= sizeof t->host || !net_port(colon + 1)) {
        snprintf(err, errlen, "source '%s': use tcp:HOST:PORT with a port from 1 to 65535 (tcp:[::1]:PORT for IPv6)",
                 p->spec);
        *p->malformed = true;
        return NULL;
    }
    t = stream_new(p, "connection closed", err, errlen);
    if (!t)
        return NULL;
    memcpy(t->host, host, (size_t)(host_end - host));
    snprintf(t->service, sizeof t->service, "%ld", net_port(colon + 1));
    snprintf(name, namelen, "%s", p->spec);
    return t;
}

static bool tcp_connect(void *v, double now, char *why, size_t whylen, bool *permanent)
{
    struct stream *t = v;
    char err[300];
    (void)now;
    t->fd = net_connect(t->host, t->service, false, permanent, err, sizeof err);
    if (t->fd < 0)
        snprintf(why, whylen, "%s", err);
    return t->fd >= 0;
}

const struct transport tr_tcp = {
    .prefix = "tcp:",
    .kind = SRC_TCP,
    .make = tcp_make,
    .connect = tcp_connect,
    .disconnect = stream_disconnect,
    .destroy = stream_destroy,
    .fd = stream_fd,
    .read = stream_read,
};

int streams_list_ports(FILE *out)
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
