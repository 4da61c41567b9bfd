/* Sources: the registry of transports (transport.h) and what every source shares: reconnecting
 * after a loss, the failures of the run, the settings kept across reconnects. */
#include "source.h"

#include "probes.h"
#include "streams.h"
#include "transport.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define RECONNECT_EVERY 0.5 /* seconds between attempts */

/* The transports, in the order src_open() tries them: the first whose prefix the spec starts with
 * (and whose claims() agrees) makes the source. The last takes any spec: a path. */
static const struct transport *const registry[] = {
    &tr_stdin, &tr_gdb, &tr_rtt, &tr_openocd_swo, &tr_openocd, &tr_tcp, &tr_path,
};

struct source {
    const struct transport *ops;
    void *t; /* the transport's state */
    enum src_state state;
    char spec[SRC_SPEC_MAX];
    char name[300];
    char message[600];
    uint64_t bytes;
    unsigned reconnects;
    double next_attempt;
    struct src_settings settings; /* applied by the transport at each connect */
    char detail[400];
    char last_failure[600]; /* why the source last went away; kept across reconnects */
    bool failing;           /* it went away by a failure, not by its normal end, and is not back */
    /* every failure of the run, kept whether the source came back or not */
    unsigned failures;
    char first_failure[600]; /* the first one: later ones are often its echo (a refused reconnect) */
    char reason[SRC_REASONS][200];
    unsigned reason_times[SRC_REASONS];
    size_t n_reasons;
    double down_since; /* when a failure sent it away, while it is away; 0 otherwise */
    double lost_s;     /* seconds away after failures, up to the last reconnect */
    bool suspended;    /* away for a stop of the process (Ctrl-Z), not by a failure */
    /* every time it went away and came back, failure or not (a server that closed the connection):
     * the profile has a gap there */
    unsigned returns;
    double gone_since, away_s; /* when it went away, while it is away (0 otherwise); seconds away */
    char gone_why[200];        /* why it last went away */
};

static void set_message(struct source *s, const char *what)
{
    snprintf(s->message, sizeof s->message, "%s: %s", s->spec, what);
}

static double clock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* false with the reason in the message, and *permanent when retrying cannot help. */
static bool connect_live(struct source *s, bool *permanent)
{
    char why[300];
    *permanent = false;
    if (!s->ops->connect)
        return false;
    if (s->ops->connect(s->t, clock_now(), why, sizeof why, permanent))
        return true;
    set_message(s, why);
    return false;
}

static const struct transport *transport_for(const struct src_params *p)
{
    size_t i = 0;
    while (strncmp(p->spec, registry[i]->prefix, strlen(registry[i]->prefix)) != 0 ||
           (registry[i]->claims && !registry[i]->claims(p)))
        i++; /* the last entry's prefix is "": it takes any spec */
    return registry[i];
}

static const struct transport *transport_of_spec(const char *spec)
{
    struct src_params p = {.spec = spec, .kept = spec};
    return transport_for(&p);
}

unsigned src_spec_takes(const char *spec)
{
    return transport_of_spec(spec)->takes;
}

const char *src_spec_packets_by(const char *spec)
{
    return transport_of_spec(spec)->packets_by;
}

bool src_spec_sends_itm(const char *spec)
{
    return transport_of_spec(spec)->sends_itm;
}

const char *src_spec_path(const char *spec)
{
    const struct transport *t = transport_of_spec(spec);
    return t->path_of ? t->path_of(spec) : NULL;
}

/* A path's spec that looks like a kind no transport has ("usb:1", "tpc:host:1") and is no file
 * either: false with the kinds there are in err. A file of that name is read as any file is. */
static bool known_kind(const char *spec, char *err, size_t errlen)
{
    size_t n = 0;
    while (spec[n] && (spec[n] == '+' || spec[n] == '-' || spec[n] == '.' || spec[n] == '_' ||
                       (spec[n] >= '0' && spec[n] <= '9') || ((spec[n] | 0x20) >= 'a' && (spec[n] | 0x20) <= 'z')))
        n++;
    struct stat st;
    if (n == 0 || spec[n] != ':' || stat(spec, &st) == 0)
        return true;
    int at = snprintf(err, errlen, "source '%s': no such file, and '%.*s:' is no kind of source (", spec, (int)n, spec);
    for (size_t i = 0; registry[i]->prefix[0]; i++) {
        const char *pre = registry[i]->prefix;
        bool again = i > 0 && strcmp(registry[i - 1]->prefix, pre) == 0;
        if (!again && pre[strlen(pre) - 1] == ':' && at >= 0 && (size_t)at < errlen)
            at += snprintf(err + at, errlen - (size_t)at, "%s%s", at && err[at - 1] != '(' ? ", " : "", pre);
    }
    if (at >= 0 && (size_t)at < errlen)
        snprintf(err + at, errlen - (size_t)at, " or a path)");
    return false;
}

struct source *src_open(const char *spec, int baud, double rate, char *err, size_t errlen, bool *malformed)
{
    *malformed = false;
    if (transport_of_spec(spec) == &tr_path && !known_kind(spec, err, errlen)) {
        *malformed = true;
        return NULL;
    }
    struct source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(s->spec, sizeof s->spec, "%s", spec);
    struct src_params p = {spec, s->spec, baud > 0 ? baud : 115200, rate, malformed};
    const struct transport *ops = transport_for(&p);
    s->t = ops->make(&p, &s->settings, &ops, s->name, sizeof s->name, err, errlen);
    if (!s->t)
        goto fail;
    s->ops = ops;
    bool permanent;
    if (ops->connect && !connect_live(s, &permanent)) {
        if (permanent) {
            snprintf(err, errlen, "cannot open source %s", s->message);
            goto fail;
        }
        s->state = SRC_RECONNECTING; /* absent for now: keep trying */
        s->next_attempt = 0;
    }
    return s;
fail:
    src_close(s);
    return NULL;
}

void src_close(struct source *s)
{
    if (!s)
        return;
    if (s->t) {
        s->ops->disconnect(s->t);
        s->ops->destroy(s->t);
    }
    free(s);
}

int src_fd(const struct source *s)
{
    return s->state == SRC_CONNECTED ? s->ops->fd(s->t) : -1;
}

int src_wait_ms(const struct source *s, double now)
{
    if (s->state == SRC_RECONNECTING) {
        double dt = s->next_attempt - now;
        return dt <= 0 ? 0 : (int)(dt * 1000) + 1;
    }
    if (s->state == SRC_CONNECTED && s->ops->wait_ms)
        return s->ops->wait_ms(s->t, now);
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
    s->ops->disconnect(s->t);
    if (!s->ops->connect) { /* opened once: a file, stdin */
        s->state = SRC_END;
        return;
    }
    if (s->gone_since == 0)
        s->gone_since = now > 0 ? now : 1e-9;
    snprintf(s->gone_why, sizeof s->gone_why, "%.190s", why);
    set_message(s, why);
    s->state = SRC_RECONNECTING;
    s->next_attempt = now + RECONNECT_EVERY;
}

/* A loss, once nothing is left to hand out, sends the source away, for good when it will not pass
 * (the program ended, no target). The program's end is kept as the run's failure too: a run it cut
 * short names it ("the target exited with status 0"), never ends as if whole. */
ssize_t src_read(struct source *s, uint8_t *buf, size_t n, double now)
{
    if (s->state != SRC_CONNECTED)
        return 0;
    struct src_gone gone = {.why = ""};
    size_t got = s->ops->read(s->t, buf, n, now, &gone);
    s->bytes += got;
    if (gone.why[0]) {
        went_away(s, gone.why, gone.failure, now);
        if (gone.final)
            s->state = SRC_END;
    }
    return (ssize_t)got;
}

void src_tick(struct source *s, double now)
{
    bool permanent;
    if (s->state != SRC_RECONNECTING || now < s->next_attempt)
        return;
    if (connect_live(s, &permanent)) {
        if (s->gone_since > 0 && !s->suspended) { /* back after going away (a stop of ours is no gap) */
            s->returns++;
            s->away_s += now - s->gone_since;
        }
        s->gone_since = 0;
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
    if (s->state != SRC_CONNECTED || !s->ops->holds_target)
        return;
    s->ops->disconnect(s->t); /* the target running, DEMCR as it was, the server free */
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
    out->returns = s->returns;
    out->away_s = s->away_s;
    out->gone_why = s->gone_why;
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
    return s->ops->kind;
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

const char *src_handshake(const struct source *s)
{
    const char *h = s->state == SRC_CONNECTED && s->ops->handshake ? s->ops->handshake(s->t) : "";
    return h ? h : "";
}

const char *src_failure(const struct source *s)
{
    return s->failing && s->state != SRC_CONNECTED ? s->last_failure : "";
}

int src_halting(const struct source *s, double *rate, double *halted_share)
{
    return s->ops->halting ? s->ops->halting(s->t, rate, halted_share) : 0;
}

const char *src_detail(struct source *s, double now)
{
    (void)now;
    s->detail[0] = '\0';
    if (s->ops->detail)
        s->ops->detail(s->t, s->detail, sizeof s->detail);
    return s->detail;
}

const char *src_packets_by(const struct source *s)
{
    return s->ops->packets_by;
}

uint64_t src_bytes(const struct source *s)
{
    return s->bytes;
}

unsigned src_reconnects(const struct source *s)
{
    return s->reconnects;
}

/* Keeps a setting the transport takes, and has it applied now if connected. */
static int take_setting(struct source *s, unsigned which)
{
    s->settings.given |= which;
    if (s->ops->apply)
        s->ops->apply(s->t, which);
    return 1;
}

int src_set_unwind(struct source *s, unsigned depth, gdb_unwind_fn fn, void *ctx)
{
    if (!(s->ops->takes & SRC_TAKES_UNWIND))
        return 0;
    s->settings.stack_depth = depth;
    s->settings.unwind = fn;
    s->settings.unwind_ctx = ctx;
    return take_setting(s, SRC_TAKES_UNWIND);
}

int src_set_rtt_block(struct source *s, uint32_t addr)
{
    if (!(s->ops->takes & SRC_TAKES_RTT_BLOCK))
        return 0;
    s->settings.rtt_block = addr;
    return take_setting(s, SRC_TAKES_RTT_BLOCK);
}

int src_set_task_var(struct source *s, uint32_t addr, int name_offset)
{
    if (!(s->ops->takes & SRC_TAKES_TASK_VAR))
        return 0;
    s->settings.task_addr = addr;
    s->settings.task_name_offset = name_offset;
    return take_setting(s, SRC_TAKES_TASK_VAR);
}

int src_list_ports(FILE *out)
{
    return streams_list_ports(out);
}
