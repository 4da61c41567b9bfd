/* The transports that talk to a debug server (see transport.h): gdb: (halting samples, gdb.h),
 * openocd: (DWT_PCSR samples, or with swo= the SWO trace it sets up, openocd.h) and rtt: (the
 * firmware's stream out of target RAM, rtt.h). Each leaves the target running when it lets go. */
#include "probes.h"

#include "net.h"
#include "openocd.h"
#include "rtt.h"

#include <stdlib.h>
#include <string.h>

struct probe {
    char where[SRC_SPEC_MAX]; /* the spec after its prefix */
    double rate;
    const struct src_settings *set;
    bool gdb_found;             /* a conversation found whether the target was halted when attached (gdb_stats) */
    struct gdb_sampler *gdb;
    struct gdb_stats gdb_stats; /* of the conversations that ended, summed (the last one's flags) */
    struct gdb_pace gdb_pace;   /* ... and the default pace's account, which the next one keeps */
    struct ocd_sampler *ocd;
    struct ocd_original ocd_first; /* DEMCR (swo=: the trace registers) as the first connection found it */
    struct ocd_stats ocd_stats;
    struct rtt_reader *rtt;
    struct rtt_stats rtt_stats;
};

/* The state every probe starts with; name: the spec. */
static struct probe *probe_new(const struct src_params *p, size_t prefix, const struct src_settings *set, char *name,
                               size_t namelen, char *err, size_t errlen)
{
    struct probe *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(t->where, sizeof t->where, "%s", p->kept + prefix);
    t->rate = p->rate;
    t->set = set;
    snprintf(name, namelen, "%s", p->spec);
    return t;
}

static void probe_destroy(void *t)
{
    free(t);
}

/* What a sampler's step made of a loss: why, and whether it will pass. */
static size_t stepped(size_t got, const char *why, bool final, struct src_gone *gone)
{
    if (why && !got) {
        snprintf(gone->why, sizeof gone->why, "%s", why);
        gone->failure = true;
        gone->final = final;
    }
    return got;
}

/* ---- gdb:HOST:PORT, gdb:/dev/ttyACM0 ---- */

static void *gdb_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                      char *name, size_t namelen, char *err, size_t errlen)
{
    (void)self;
    const char *where = p->spec + 4, *colon = strrchr(where, ':');
    if (where[0] != '/' && (!colon || colon == where || !net_port(colon + 1))) {
        snprintf(err, errlen,
                 "source '%s': use gdb:HOST:PORT (a GDB server, port 1 to 65535) or "
                 "gdb:/dev/ttyACM0 (a Black Magic Probe)",
                 p->spec);
        *p->malformed = true;
        return NULL;
    }
    if (where[0] == '/' && !gdb_serial_ok(where, err, errlen)) /* never written to: refused at once */
        return NULL;
    return probe_new(p, 4, set, name, namelen, err, errlen);
}

static void gdb_apply(void *v, unsigned which)
{
    struct probe *t = v;
    if (!t->gdb)
        return;
    if ((which & t->set->given) & SRC_TAKES_TASK_VAR)
        gdb_set_task_var(t->gdb, t->set->task_addr, t->set->task_name_offset);
    if ((which & t->set->given) & SRC_TAKES_UNWIND)
        gdb_set_unwind(t->gdb, t->set->stack_depth, t->set->unwind, t->set->unwind_ctx);
}

static bool gdb_connect(void *v, double now, char *why, size_t whylen, bool *permanent)
{
    struct probe *t = v;
    char err[300];
    (void)permanent;
    t->gdb = gdb_open(t->where, t->rate, now, err, sizeof err);
    if (!t->gdb) {
        snprintf(why, whylen, "%s", err);
        return false;
    }
    if (t->gdb_found) /* as the first conversation found the target, whatever a dropped link left */
        gdb_found_before(t->gdb, t->gdb_stats.found_halted, t->gdb_stats.found_pc);
    gdb_apply(t, SRC_TAKES_TASK_VAR | SRC_TAKES_UNWIND);
    gdb_set_pace(t->gdb, &t->gdb_pace);
    return true;
}

/* sum: the conversations before, then one more (its flags and register number win) */
static struct gdb_stats gdb_sum(struct gdb_stats sum, const struct gdb_stats *more)
{
    struct gdb_stats s = *more;
    s.samples += sum.samples;
    s.halted_s += sum.halted_s;
    s.running_s += sum.running_s;
    s.self_stops += sum.self_stops;
    s.false_stops += sum.false_stops;
    s.resets += sum.resets;
    s.unsolicited += sum.unsolicited;
    s.frames += sum.frames;
    s.longest_halt_s = sum.longest_halt_s > s.longest_halt_s ? sum.longest_halt_s : s.longest_halt_s;
    s.longest_stop_s = sum.longest_stop_s > s.longest_stop_s ? sum.longest_stop_s : s.longest_stop_s;
    if (sum.samples) /* the figures span every conversation: a reconnect does not restart them */
        s.first_sample = sum.first_sample;
    if (!more->samples)
        s.last_sample = sum.last_sample;
    return s;
}

static void gdb_disconnect(void *v)
{
    struct probe *t = v;
    if (t->gdb) {
        struct gdb_stats last;
        t->gdb_found |= gdb_ready(t->gdb); /* past the handshake: it found the target halted or not */
        gdb_get_stats(t->gdb, &last);
        t->gdb_stats = gdb_sum(t->gdb_stats, &last);
        gdb_get_pace(t->gdb, &t->gdb_pace);
        gdb_close(t->gdb); /* leaves the target running */
        t->gdb = NULL;
    }
}

/* Halts (or polls) a second and the share of the time the core was held, from n halts over wall
 * seconds (one halt: over the time halted and running, a server so slow that one is all it gave is
 * said too); 0 while there are none to say. */
static int halting_figures(unsigned long long n, double wall, double halted_s, double running_s, double *rate,
                           double *halted_share)
{
    if (!n || halted_s + running_s <= 0)
        return 0;
    *rate = n >= 2 && wall > 0 ? (double)(n - 1) / wall : (double)n / (halted_s + running_s);
    *halted_share = halted_s / (halted_s + running_s);
    return 1;
}

static int gdb_fd_of(const void *v)
{
    return gdb_fd(((const struct probe *)v)->gdb); /* -1 while the target runs: the timer says when to halt it */
}

static int gdb_wait_of(const void *v, double now)
{
    return gdb_wait_ms(((const struct probe *)v)->gdb, now);
}

static size_t gdb_read(void *v, uint8_t *buf, size_t n, double now, struct src_gone *gone)
{
    struct probe *t = v;
    size_t got = gdb_step(t->gdb, buf, n, now);
    return stepped(got, gdb_failed(t->gdb), gdb_final(t->gdb), gone);
}

static struct gdb_stats gdb_now(const struct probe *t)
{
    struct gdb_stats st = t->gdb_stats;
    if (t->gdb) {
        struct gdb_stats now;
        gdb_get_stats(t->gdb, &now);
        st = gdb_sum(st, &now);
    }
    return st;
}

static int gdb_figures(const struct gdb_stats *st, double *rate, double *halted_share)
{
    return halting_figures(st->samples, st->last_sample - st->first_sample, st->halted_s, st->running_s, rate,
                           halted_share);
}

static int gdb_halting(const void *v, double *rate, double *halted_share)
{
    struct gdb_stats st = gdb_now(v);
    return gdb_figures(&st, rate, halted_share);
}

/* "1.40 ms", "12.0 ms", "1200 ms" in text (32 bytes) */
static const char *milliseconds(double s, char text[32])
{
    snprintf(text, 32, "%.*f ms", s < 0.01 ? 2 : s < 0.1 ? 1 : 0, 1000.0 * s);
    return text;
}

/* "812 halts/s, core halted 23 %, at most 1.4 ms at once", then a reset while sampled, and its fix */
static void gdb_detail(const void *v, char *text, size_t n)
{
    double rate, halted;
    char ms[32];
    struct gdb_stats st = gdb_now(v);
    if (gdb_figures(&st, &rate, &halted)) {
        snprintf(text, n, "%.*f halts/s, core halted %.1f %%, at most %s at once", rate < 10 ? 2 : 0, rate,
                 100.0 * halted, milliseconds(st.longest_halt_s, ms));
        size_t len = strlen(text);
        if (st.longest_stop_s > 0.01 && len < n) /* a slow server or a loaded host: not our pace */
            snprintf(text + len, n - len, " (the server took up to %s to stop it)", milliseconds(st.longest_stop_s, ms));
    }
    gdb_advice(&st, text, n);
}

static const char *gdb_handshake(const void *v)
{
    const struct probe *t = v;
    return t->gdb && !gdb_ready(t->gdb) ? "the GDB server has not finished its handshake" : "";
}

static const char *gdb_path_of(const char *spec)
{
    return spec[4] == '/' ? spec + 4 : NULL; /* gdb:/dev/ttyACM0, a Black Magic Probe */
}

const struct transport tr_gdb = {
    .sends_itm = true,
    .prefix = "gdb:",
    .path_of = gdb_path_of,
    .kind = SRC_GDB,
    .make = gdb_make,
    .connect = gdb_connect,
    .disconnect = gdb_disconnect,
    .destroy = probe_destroy,
    .fd = gdb_fd_of,
    .wait_ms = gdb_wait_of,
    .read = gdb_read,
    .detail = gdb_detail,
    .handshake = gdb_handshake,
    .halting = gdb_halting,
    .takes = SRC_TAKES_TASK_VAR | SRC_TAKES_UNWIND,
    .apply = gdb_apply,
    .packets_by = SRC_BY_HALTS,
    .holds_target = true,
};

/* ---- openocd:HOST[:PORT], and with ,swo=CLOCK[,...] the SWO trace it sets up ---- */

static void *ocd_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                      char *name, size_t namelen, char *err, size_t errlen)
{
    (void)self;
    char host[200], port[16], why[300];
    struct ocd_swo swo;
    if (!ocd_parse(p->spec + 8, host, sizeof host, port, sizeof port, &swo, why, sizeof why)) {
        snprintf(err, errlen, "source '%s': %s", p->spec, why);
        *p->malformed = true; /* ocd_parse reads the form only */
        return NULL;
    }
    return probe_new(p, 8, set, name, namelen, err, errlen);
}

static bool ocd_connect(void *v, double now, char *why, size_t whylen, bool *permanent)
{
    struct probe *t = v;
    char err[300];
    (void)permanent;
    t->ocd = ocd_open(t->where, now, &t->ocd_first, err, sizeof err);
    if (!t->ocd)
        snprintf(why, whylen, "%s", err);
    return t->ocd != NULL;
}

static void ocd_disconnect(void *v)
{
    struct probe *t = v;
    if (t->ocd) {
        ocd_get_stats(t->ocd, &t->ocd_stats);
        ocd_close(t->ocd); /* DEMCR as it was */
        t->ocd = NULL;
    }
}

static int ocd_fd_of(const void *v)
{
    return ocd_fd(((const struct probe *)v)->ocd);
}

static int ocd_wait_of(const void *v, double now)
{
    return ocd_wait_ms(((const struct probe *)v)->ocd, now);
}

static size_t ocd_read(void *v, uint8_t *buf, size_t n, double now, struct src_gone *gone)
{
    struct probe *t = v;
    size_t got = ocd_step(t->ocd, buf, n, now);
    return stepped(got, ocd_failed(t->ocd), ocd_hopeless(t->ocd), gone);
}

static void ocd_detail(const void *v, char *text, size_t n)
{
    const struct probe *t = v;
    struct ocd_stats st = t->ocd_stats;
    if (t->ocd)
        ocd_get_stats(t->ocd, &st);
    double wall = st.last - st.first;
    if (st.swo)
        snprintf(text, n, "SWO %.3g MHz, a PC sample every %u cycles, %.1f KB/s", st.pin / 1e6, st.period,
                 wall > 0 ? (double)st.trace_bytes / wall / 1000.0 : 0.0);
    /* a fast server's replies can all come in one read, stamped with one time: no rate then */
    if (st.bursts > 1 && wall > 0)
        snprintf(text, n, "%s %.0f reads/s, %.1f ms a burst", st.halting ? "no PCSR: halting," : "PCSR",
                 (double)(st.samples + st.sleeps) / wall, 1000.0 * st.burst_s / (double)st.bursts); /* (sleeps too) */
    else if (st.bursts > 1)
        snprintf(text, n, "%s %llu bursts, too quick to time, %.1f ms a burst",
                 st.halting ? "no PCSR: halting," : "PCSR", (unsigned long long)st.bursts,
                 1000.0 * st.burst_s / (double)st.bursts);
}

const struct transport tr_openocd = {
    .sends_itm = true,
    .prefix = "openocd:",
    .kind = SRC_OPENOCD,
    .make = ocd_make,
    .connect = ocd_connect,
    .disconnect = ocd_disconnect,
    .destroy = probe_destroy,
    .fd = ocd_fd_of,
    .wait_ms = ocd_wait_of,
    .read = ocd_read,
    .detail = ocd_detail,
    .packets_by = SRC_BY_PCSR,
    .holds_target = true,
};

static bool swo_claims(const struct src_params *p)
{
    return strstr(p->kept, ",swo=") != NULL;
}

/* The same conversation with OpenOCD; the packets are the target's own (its DWT's), not ours. */
const struct transport tr_openocd_swo = {
    .sends_itm = true,
    .prefix = "openocd:",
    .claims = swo_claims,
    .kind = SRC_OPENOCD,
    .make = ocd_make,
    .connect = ocd_connect,
    .disconnect = ocd_disconnect,
    .destroy = probe_destroy,
    .fd = ocd_fd_of,
    .wait_ms = ocd_wait_of,
    .read = ocd_read,
    .detail = ocd_detail,
    .packets_by = NULL,
    .holds_target = true,
};

/* ---- rtt:HOST:PORT (a GDB server), rtt:openocd:HOST[:PORT] (OpenOCD's Tcl port) ---- */

static void *rtt_make(const struct src_params *p, const struct src_settings *set, const struct transport **self,
                      char *name, size_t namelen, char *err, size_t errlen)
{
    (void)self;
    bool tcl = strncmp(p->spec + 4, "openocd:", 8) == 0;
    const char *where = p->spec + 4 + (tcl ? 8 : 0), *colon = strrchr(where, ':');
    if (colon ? colon == where || !net_port(colon + 1) : !tcl) { /* OpenOCD's port is 6666 by default */
        snprintf(err, errlen,
                 "source '%s': use rtt:HOST:PORT (a GDB server) or rtt:openocd:HOST[:PORT] "
                 "(OpenOCD's Tcl port, 6666 by default)",
                 p->spec);
        *p->malformed = true;
        return NULL;
    }
    return probe_new(p, 4, set, name, namelen, err, errlen);
}

static void rtt_apply(void *v, unsigned which)
{
    struct probe *t = v;
    if (t->rtt && ((which & t->set->given) & SRC_TAKES_RTT_BLOCK))
        rtt_set_block(t->rtt, t->set->rtt_block);
}

static bool rtt_connect(void *v, double now, char *why, size_t whylen, bool *permanent)
{
    struct probe *t = v;
    char err[300];
    (void)permanent;
    t->rtt = rtt_open(t->where, t->rate, now, err, sizeof err);
    if (!t->rtt) {
        snprintf(why, whylen, "%s", err);
        return false;
    }
    rtt_apply(t, SRC_TAKES_RTT_BLOCK);
    return true;
}

static void rtt_disconnect(void *v)
{
    struct probe *t = v;
    if (t->rtt) {
        rtt_get_stats(t->rtt, &t->rtt_stats);
        rtt_close(t->rtt); /* the target running */
        t->rtt = NULL;
    }
}

static int rtt_fd_of(const void *v)
{
    return rtt_fd(((const struct probe *)v)->rtt);
}

static int rtt_wait_of(const void *v, double now)
{
    return rtt_wait_ms(((const struct probe *)v)->rtt, now);
}

static size_t rtt_read(void *v, uint8_t *buf, size_t n, double now, struct src_gone *gone)
{
    struct probe *t = v;
    size_t got = rtt_step(t->rtt, buf, n, now);
    return stepped(got, rtt_failed(t->rtt), rtt_exited(t->rtt), gone);
}

static struct rtt_stats rtt_now(const struct probe *t)
{
    struct rtt_stats st = t->rtt_stats;
    if (t->rtt)
        rtt_get_stats(t->rtt, &st);
    return st;
}

static int rtt_halting(const void *v, double *rate, double *halted_share)
{
    struct rtt_stats st = rtt_now(v);
    return st.halting && halting_figures(st.polls, st.last - st.first, st.halted_s, st.running_s, rate,
                                         halted_share);
}

/* Until this connection read the control block's up-buffer (its size known): the server that took it
 * never answered (or the block is not there yet, said as the failure when the search ends). */
static const char *rtt_handshake(const void *v)
{
    const struct probe *t = v;
    struct rtt_stats st;
    if (!t->rtt)
        return "";
    rtt_get_stats(t->rtt, &st);
    return st.size ? "" : "the RTT control block has not been read through it";
}

/* "RTT 98 polls/s, 41.3 KB/s, core halted 2.1 %, buffer at most 12 % full" */
static void rtt_detail(const void *v, char *text, size_t size)
{
    struct rtt_stats st = rtt_now(v);
    double wall = st.last - st.first;
    if (st.polls < 2 || wall <= 0)
        return;
    int n = snprintf(text, size, "RTT %.0f polls/s, %.1f KB/s", (double)(st.polls - 1) / wall,
                     (double)st.bytes / wall / 1000.0);
    if (st.halting && st.halted_s + st.running_s > 0)
        n += snprintf(text + n, size - (size_t)n, ", core halted %.1f %%",
                      100.0 * st.halted_s / (st.halted_s + st.running_s));
    snprintf(text + n, size - (size_t)n, ", buffer at most %.0f %% full", st.size ? 100.0 * st.most / st.size : 0.0);
}

const struct transport tr_rtt = {
    .prefix = "rtt:",
    .kind = SRC_RTT,
    .make = rtt_make,
    .connect = rtt_connect,
    .disconnect = rtt_disconnect,
    .destroy = probe_destroy,
    .fd = rtt_fd_of,
    .wait_ms = rtt_wait_of,
    .read = rtt_read,
    .detail = rtt_detail,
    .handshake = rtt_handshake,
    .halting = rtt_halting,
    .takes = SRC_TAKES_RTT_BLOCK,
    .apply = rtt_apply,
    .holds_target = true,
};
