/* The live loop. Input never blocks the UI: reads are non-blocking and bounded per turn, and
 * the keyboard is polled with the source. The screen is redrawn at most 10 times a second. */
#include "live.h"

#include "outfile.h"
#include "stop.h"

#include "../profile/ingest.h"
#include "../profile/starved.h"
#include "../source/net.h"
#include "../source/source.h"
#include "../symbols/symbols.h"
#include "../tui/tui.h"
#include "../tui/view.h"
#include "../base/path.h"
#include "elfwatch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_EVERY 0.1     /* seconds */
#define READ_BUDGET 0.02     /* seconds of ingest per turn before the keyboard gets a look */
/* A byte stream that trickles (QEMU's UART sends a few bytes a segment: make demo's view read
 * 12,000 times a second, 7-8 % of a core) is read at most every READ_PACE once a turn got less than
 * PACE_BYTES: its bytes wait in the kernel's buffer meanwhile, under what a faster stream's turn
 * takes at once (a stream that brings more is read as it comes). */
#define READ_PACE 0.01       /* seconds */
#define PACE_BYTES 1024

#define LIVE_CONNECT_WAIT 1.0 /* seconds: one connection attempt in the live view */
#define RATE_SPAN 5 /* seconds of history behind the samples/s figure */
#define DETECT_PATIENCE 0.5 /* seconds: then the format is told from the bytes at hand */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Key o: the view as a report file in the chosen format, named after the ELF and the time. */
static void save_snapshot(struct view *v, const struct live_options *o, struct prof *p, const struct ingest *in,
                          const char *warning)
{
    int k = report_format_of_key(v->save_format);
    if (k < 0)
        return;
    const struct report_format_info *format = report_format_info((enum report_format)k);
    struct batch_options bo = o->batch;
    bo.output = (enum report_format)k;
    bo.by = v->group;
    bo.inline_frames = v->inline_frames;
    bo.fold_overhead = v->fold_overhead;
    if (!report_format_groups(bo.output, bo.by)) {
        snprintf(v->note, sizeof v->note, "%s snapshots are by function or task: press g first", format->label);
        return;
    }
    const char *base = path_base(o->batch.elf);
    size_t stem = strcspn(base, ".");
    char when[32], name[300], dir[PATH_MAX], path[PATH_MAX + 320];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", localtime(&now));
    snprintf(name, sizeof name, "%.*s-%s.%s", (int)(stem ? stem : strlen(base)), base, when, format->ext);
    snprintf(dir, sizeof dir, "%s", v->save_dir[0] ? v->save_dir : o->save_dir ? o->save_dir : ".");
    FILE *f = NULL;
    /* never over an existing file: a second snapshot within the second is NAME-2.EXT, and so on */
    for (int n = 1; !f && n < 100; n++) {
        if (n > 1)
            snprintf(name, sizeof name, "%.*s-%s-%d.%s", (int)(stem ? stem : strlen(base)), base, when, n,
                     format->ext);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        f = fopen(path, "wx");
        if (!f && errno != EEXIST)
            break;
    }
    if (!f) {
        snprintf(v->note, sizeof v->note, "cannot write %.60s (%s) in ", name, strerror(errno));
        snprintf(v->note_path, sizeof v->note_path, "%s", dir);
        return;
    }
    char saved[32];
    strftime(saved, sizeof saved, "%Y-%m-%d %H:%M:%S", localtime(&now));
    double to = v->st.elapsed, from = v->window_mode ? to - v->window_seconds : v->base_elapsed;
    struct report_snapshot what = {o->batch.source, o->batch.elf, prof_stream_info(p)->build_id, from > 0 ? from : 0, to,
                                   v->window_mode ? v->window_seconds : 0, saved};
    bo.snapshot = &what;
    errno = 0;
    char why[200] = "";
    bool failed = batch_report(&bo, p, in, warning, f, why, sizeof why) != 0; /* said in the note, not on stderr */
    int e = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0; /* a full disk, a file size limit */
    if (fclose(f) != 0 && !e)
        e = errno;
    if (e || failed) { /* the directory last: when narrow, the view keeps its end */
        unlink(path); /* no half a report left behind */
        snprintf(v->note, sizeof v->note, "could not save %.60s: %.100s (nothing kept), in ", name,
                 failed ? why : strerror(e));
    } else if (batch_written_samples(&bo, p) < prof_total(p)) { /* a firmware's stacks: 1 sample in 16 */
        snprintf(v->note, sizeof v->note, "saved %.60s (the %.0f of %.0f samples with call stacks) in ", name,
                 batch_written_samples(&bo, p), prof_total(p));
    } else {
        snprintf(v->note, sizeof v->note, "saved %.60s (%.0f samples) in ", name, prof_total(p));
    }
    snprintf(v->note_path, sizeof v->note_path, "%s", dir);
}

static double log_origin; /* the live view's start: log lines carry their time since then */

/* A firmware log line, stamped with when it arrived ("12:03.4 text"). */
static void log_line(void *ctx, const char *text, size_t len)
{
    char line[600];
    double t = now_s() - log_origin;
    int n = snprintf(line, sizeof line, "%02d:%04.1f  %.*s", (int)(t / 60), fmod(t, 60.0),
                     (int)(len < 560 ? len : 560), text);
    view_log(ctx, line, n > 0 ? (size_t)n < sizeof line ? (size_t)n : sizeof line - 1 : 0);
}

static const char *state_text(const struct source *src, char *buf, size_t n)
{
    switch (src_state(src)) {
    case SRC_CONNECTED: {
        const char *detail = src_detail((struct source *)src, now_s()), *hs = src_handshake(src);
        if (*hs) /* the connection is there, the server has not answered yet: not "connected" */
            snprintf(buf, n, "the connection was made; %s", hs);
        else
            snprintf(buf, n, "connected%s%s", *detail ? ", " : "", detail);
        break;
    }
    case SRC_RECONNECTING:
        snprintf(buf, n, "reconnecting: %s", src_message(src));
        break;
    default:
        if (src_kind(src) != SRC_FILE && src_kind(src) != SRC_STDIN) /* (a pty gone for good too) */
            snprintf(buf, n, "ended: %s", src_message(src));
        else
            snprintf(buf, n, "end of %s", src_kind(src) == SRC_STDIN ? "input" : "file");
        break;
    }
    return buf;
}

/* The gdb: source's unwinder: the ELF's call-frame information. */
static size_t unwind_with_elf(void *ctx, const uint32_t regs[16],
                              bool (*read32)(void *rctx, uint32_t addr, uint32_t *value), void *rctx, uint32_t *out,
                              size_t max, uint32_t *psp_return)
{
    return sym_unwind(ctx, regs, read32, rctx, out, max, psp_return);
}

/* --record's file, refused when it is a file this run reads or (without --force) exists. */
static int open_record(const struct live_options *o, FILE **rec, bool *created)
{
    *rec = NULL;
    *created = false;
    if (!o->record)
        return 0;
    const char *inputs[] = {src_spec_path(o->batch.source), o->batch.elf, o->diff_path};
    char err[700];
    *rec = outfile_open(o->record, o->force, inputs, sizeof inputs / sizeof *inputs, created, err, sizeof err);
    if (!*rec)
        fprintf(stderr, "cmprof-top: --record %s\n", err);
    return *rec ? 0 : -1;
}

/* A task pointer is a pointer-sized variable: a structure or an array is refused. */
#define TASK_POINTER_SIZE 4

static int apply_task_var(const struct live_options *o, struct sym_table *syms, struct source *src)
{
    uint32_t addr, size;
    if (!sym_object(syms, o->task_var, &addr, &size)) {
        fprintf(stderr, "cmprof-top: --task-var %s: no such variable in %s\n", o->task_var, o->batch.elf);
        return -1;
    }
    if (size != TASK_POINTER_SIZE && size != 0) { /* 0: a symbol without a size, e.g. from assembly */
        fprintf(stderr, "cmprof-top: --task-var %s is %u bytes, not a task pointer (a %d-byte variable such as "
                "pxCurrentTCB): is it a structure or an array?\n", o->task_var, (unsigned)size, TASK_POINTER_SIZE);
        return -1;
    }
    if (sym_object_is_scalar(syms, o->task_var) == 0) { /* 4 bytes, but a structure or an array */
        fprintf(stderr, "cmprof-top: --task-var %s is not a task pointer: its DWARF type is a structure or an "
                "array (give a variable such as pxCurrentTCB)\n", o->task_var);
        return -1;
    }
    int name_offset = o->task_name_offset;
    const char *member = NULL;
    if (name_offset < 0) { /* the control block's layout from the ELF's DWARF (FreeRTOS: pcTaskName) */
        long found = sym_task_name_offset(syms, o->task_var, &member);
        name_offset = found >= 0 && found <= 4096 ? (int)found : -1;
        if (o->headless && name_offset >= 0)
            fprintf(stderr, "cmprof-top: task names from %s->%s, %d bytes in\n", o->task_var, member, name_offset);
        else if (o->headless)
            fprintf(stderr, "cmprof-top: %s: no task name member found in its DWARF type (give "
                    "--task-name-offset)\n", o->task_var);
    }
    if (!src_set_task_var(src, addr, name_offset)) {
        fprintf(stderr, "cmprof-top: --task-var works with gdb: sources (the core is read while halted)\n");
        return -1;
    }
    return 0;
}

/* Batch mode ends with its source: at the source's end; when it goes away (reconnecting is for the
 * live view, and for a run that --duration bounds); or when it was never reached in time. */
static bool batch_over(const struct live_options *o, const struct source *src, bool connected_once, bool too_late)
{
    if (src_state(src) == SRC_END)
        return true;
    if (src_state(src) != SRC_RECONNECTING)
        return false;
    return connected_once ? o->duration == 0 : too_late;
}

/* How the run ended, kept from the source before it is closed. */
struct run_end {
    char state[700];     /* what the source was doing at the end */
    char away[600];      /* why it was not connected at the end; "" when it was (or ended) */
    bool at_end;         /* the source had ended (a file read to its end) */
    char before[600];    /* why it went away before, when it is back since */
    char failure[600];   /* why it failed and did not come back; "" when it did not fail */
    char detail[400];     /* src_detail(): the figures, and a reset's advice after them */
    struct src_failures failures; /* every failure of the run (its texts copied below) */
    char first[600], reasons[SRC_REASONS][200], gone_why[200];
    enum src_kind kind;
    const char *made_by; /* src_packets_by() */
    bool halting;
    double halt_rate, halted_share;
    bool gave_up;        /* batch: never reached within --connect-timeout (or --duration, when shorter) */
    double connected_s;  /* seconds from the opening, when it was ever connected; else negative */
    double quiet_s, last_sample_s; /* a stream that stopped: seconds without a sample at the end, the last */
};

/* Why a source that went away was away when the run ended, without its own name in front (the
 * caller's line names it). */
static const char *away_why(const struct source *src, const char *spec)
{
    const char *why = src_message(src);
    size_t n = strlen(spec);
    return strncmp(why, spec, n) == 0 && why[n] == ':' && why[n + 1] == ' ' ? why + n + 2 : why;
}

static void take_end(struct source *src, const char *spec, struct run_end *e, bool gave_up)
{
    /* the header's "reconnecting" is the live view's: a run that ended reconnects no more */
    snprintf(e->away, sizeof e->away, "%s", src_state(src) == SRC_RECONNECTING ? away_why(src, spec) : "");
    e->at_end = src_state(src) == SRC_END;
    if (*e->away)
        snprintf(e->state, sizeof e->state, "not connected at the end: %s", e->away);
    else
        state_text(src, e->state, sizeof e->state);
    bool back = src_state(src) == SRC_CONNECTED;
    snprintf(e->before, sizeof e->before, "%s", back ? src_last_failure(src) : "");
    snprintf(e->failure, sizeof e->failure, "%s", src_failure(src));
    snprintf(e->detail, sizeof e->detail, "%s", src_detail(src, now_s()));
    src_get_failures(src, now_s(), &e->failures); /* its texts live in src: copied */
    snprintf(e->first, sizeof e->first, "%s", e->failures.first);
    e->failures.first = e->first;
    snprintf(e->gone_why, sizeof e->gone_why, "%s", e->failures.gone_why);
    e->failures.gone_why = e->gone_why;
    for (size_t i = 0; i < e->failures.n_reasons; i++) {
        snprintf(e->reasons[i], sizeof e->reasons[i], "%s", e->failures.reason[i]);
        e->failures.reason[i] = e->reasons[i];
    }
    e->kind = src_kind(src);
    e->made_by = src_packets_by(src);
    e->halting = src_halting(src, &e->halt_rate, &e->halted_share) != 0;
    e->gave_up = gave_up;
}

/* The source's failures for the report: what ended the run (or, when it came back, the first
 * failure) and every reason counted; false when it never failed. */
static bool partial_of(const struct run_end *e, struct report_partial *pa)
{
    const struct src_failures *f = &e->failures;
    if (!f->count)
        return false;
    *pa = (struct report_partial){.reason = *e->failure ? e->failure : f->first, .failures = f->count,
                                  .reconnects = f->reconnects, .lost_s = f->lost_s, .n_reasons = f->n_reasons};
    for (size_t i = 0; i < f->n_reasons && i < REPORT_REASONS; i++) {
        pa->reasons[i] = f->reason[i];
        pa->times[i] = f->times[i];
    }
    return true;
}

/* Said on stderr: the failure that ended the run, or that the source failed and came back. */
static void say_partial(const struct live_options *o, const struct report_partial *pa, double total, bool back)
{
    if (!back) /* the failure that ended it */
        fprintf(stderr, "cmprof-top: %s failed after %.0f samples: %s; the report is partial", o->batch.source,
                total, pa->reason);
    else
        fprintf(stderr, "cmprof-top: %s failed during the run and came back (%.0f samples): %s; the report is partial",
                o->batch.source, total, pa->reason);
    if (pa->failures > 1 || pa->reconnects > 0)
        fprintf(stderr, " (%u failure%s, %u reconnect%s, %.1f s without the source)", pa->failures,
                pa->failures == 1 ? "" : "s", pa->reconnects, pa->reconnects == 1 ? "" : "s", pa->lost_s);
    fputc('\n', stderr);
    for (size_t i = 0; i < pa->n_reasons && pa->n_reasons > 1; i++)
        fprintf(stderr, "cmprof-top:   failed %u time%s: %s\n", pa->times[i], pa->times[i] == 1 ? "" : "s",
                pa->reasons[i]);
}

/* The source went away and came back (a server that closed the connection is no failure, but the
 * profile has a gap all the same): "" when it never did. */
static const char *gaps_text(unsigned returns, double away_s, const char *why, char *buf, size_t n)
{
    if (!returns)
        return "";
    snprintf(buf, n, "data lost: the source went away and came back %u time%s (%.1f s without it; the last time: "
             "%.150s): the profile has gaps", returns, returns == 1 ? "" : "s", away_s, why);
    return buf;
}

/* Batch mode's end: what went wrong on stderr, the report on stdout, and the exit status. */
static int finish_batch(const struct live_options *o, struct prof *prof, const struct ingest *in, const char *warning,
                        const struct run_end *e)
{
    int sig = stop_requested();
    if (e->gave_up && !sig) { /* whichever came first ended the wait */
        double limit = o->connect_timeout > 0 ? o->connect_timeout : LIVE_CONNECT_TIMEOUT;
        bool duration = o->duration > 0 && o->duration < limit;
        fprintf(stderr, "cmprof-top: %s: not reached within %g s (%s): %s\n", o->batch.source,
                duration ? o->duration : limit, duration ? "--duration" : "--connect-timeout",
                *e->away ? e->away : e->state);
        return EXIT_ERROR;
    }
    double total = prof_total(prof);
    struct batch_options bo = o->batch;
    struct report_partial pa;
    bool failed = partial_of(e, &pa);
    int status = batch_interrupted(&bo, total, stderr);
    if (failed)
        bo.partial = &pa;
    if (total == 0) {
        char why[600] = "", hint[600];
        struct ingest_counts c;
        ingest_counts(in, &c);
        ingest_no_samples_hint(in, hint, sizeof hint);
        /* a drain that never ran looks like this: its likely causes (not a file's: /dev/null is no firmware;
         * nor when the source failed: the failure is the cause; nor for bytes no format reads: the hint says it) */
        if (e->connected_s >= 0 && e->kind != SRC_FILE && !failed && !c.unreadable)
            starved_hint(in, e->connected_s, e->made_by ? STARVED_PROBE : e->kind == SRC_OPENOCD ? STARVED_TRACE
                         : STARVED_FIRMWARE, why, sizeof why);
        if (prof_sleep(prof) > 0 && !*why) /* a PC sampler's reads (or a trace's packets) of a core not running */
            snprintf(why, sizeof why, "all %llu reads found the core asleep or halted (PC 0xFFFFFFFF, or sleep "
                     "packets): is it running, not halted by a debugger or held in reset?",
                     (unsigned long long)prof_sleep(prof));
        /* the first failure, unless the state or the "before" already says it */
        bool first = failed && strcmp(pa.reason, e->before) && !strstr(e->state, pa.reason);
        fprintf(stderr, "cmprof-top: no samples from '%s' (%s%s%s%s%s)%s%s%s\n", o->batch.source, e->state,
                *e->before ? "; before: " : "", e->before, first ? "; first failure: " : "", first ? pa.reason : "",
                hint, *why ? "; " : "", why);
        status = status ? status : EXIT_USAGE;
    } else if (failed) {
        say_partial(o, &pa, total, !*e->failure);
        status = status ? status : EXIT_PARTIAL;
    } else if (e->failures.returns) { /* no failure (a server closed the connection), a gap all the same */
        char gaps[400];
        fprintf(stderr, "cmprof-top: warning: %s\n",
                gaps_text(e->failures.returns, e->failures.away_s, e->failures.gone_why, gaps, sizeof gaps));
    }
    char stalled[700] = "";
    if (total > 0 && e->quiet_s >= STARVED_AFTER_S) { /* the profile ends before the run did */
        starved_stalled(e->quiet_s, e->last_sample_s, stalled, sizeof stalled);
        fprintf(stderr, "cmprof-top: warning: %s\n", stalled);
        bo.stalled = stalled;
    }
    if (e->kind == SRC_FILE && e->at_end && !sig) /* read to its end: not stopped by --samples or --duration */
        batch_cut_warning(o->batch.source, in, stderr);
    if (o->stack_depth > 0 && total > 0 && !prof_has_stacks(prof))
        fprintf(stderr, "cmprof-top: no call stacks: the server would not read the registers ('g')\n");
    if (e->halting) /* its advice (a slow server) where CI reads too */
        report_source_advice(stderr, e->detail, "cmprof-top: ");
    bo.halting = e->halting;
    bo.halt_rate = e->halt_rate;
    bo.halted_share = e->halted_share;
    bo.source_detail = e->detail;
    bo.source_format = e->made_by;
    if (batch_write(&bo, prof, in, warning, stdout, stderr) != 0)
        status = status ? status : EXIT_ERROR;
    batch_warnings(&bo, prof, stderr);
    int doubt = batch_doubts(prof, in, o->batch.elf, total == 0, stderr);
    status = status ? status : doubt;
    if (!status && batch_regressions(&bo, prof, stderr))
        status = EXIT_SLOWER;
    return status;
}

/* The source, the task variable and --record's file; on failure nothing is left open or created. */
static struct source *open_input(const struct live_options *o, struct sym_table *syms, FILE **rec, bool *created,
                                 int *status)
{
    char err[600];
    *status = EXIT_ERROR;
    if (open_record(o, rec, created) != 0)
        return NULL;
    bool malformed;
    struct source *src = src_open(o->batch.source, o->baud, o->rate, err, sizeof err, &malformed);
    if (!src) {
        fprintf(stderr, "cmprof-top: %s\n", err);
        *status = malformed ? EXIT_USAGE : EXIT_ERROR; /* a spec of the wrong form is a bad argument */
    }
    else if (o->task_var && apply_task_var(o, syms, src) != 0) {
        *status = EXIT_USAGE;
        src_close(src);
        src = NULL;
    }
    if (!src && *rec) {
        fclose(*rec);
        *rec = NULL;
        if (*created) /* ours, and empty */
            unlink(o->record);
    }
    if (src && o->stack_depth > 0)
        src_set_unwind(src, (unsigned)o->stack_depth, unwind_with_elf, syms);
    uint32_t rtt_addr, rtt_size; /* rtt: the ELF's control block, else the source searches RAM */
    if (src && src_kind(src) == SRC_RTT && syms && sym_object(syms, "_SEGGER_RTT", &rtt_addr, &rtt_size))
        src_set_rtt_block(src, rtt_addr);
    return src;
}

/* A live run's state, from the source's opening to its close. */
struct live_run {
    const struct live_options *o;
    struct sym_table *syms;
    struct source *src;
    FILE *rec;                  /* --record's file, until writing it fails */
    bool rec_created, record_failed;
    struct prof *prof;          /* every sample */
    struct prof *window, *shown; /* the window being counted, and the last full one (shown) */
    struct ingest *in;
    struct view *v;
    struct vbuf buf;
    double opened_at, connect_timeout, start, last_draw, window_start;
    double undecided_since;     /* when the first bytes of a format not told yet came */
    /* samples/s over the last RATE_SPAN seconds: one reading a second, the oldest dropped */
    double rate_t, rate, rate_at[RATE_SPAN + 1], rate_count[RATE_SPAN + 1];
    int rate_n;
    double last_total, last_sample_t; /* the count, and when it last grew: a stream that stopped */
    double ended_at, ended_total; /* when the source ended (0: it runs on), and the samples by then */
    unsigned reconnects;        /* the source's connections after the first, as last seen */
    bool dirty, quit, key_dirty, connected_once, gave_up;
    struct elf_watch elf;       /* the ELF rebuilt while the run goes on */
    double read_t;              /* when the source was last read, and how many bytes that turn got */
    size_t read_bytes;
};

/* The profiles, the decoders and the view, set up from the options; EXIT_DONE, or the exit status
 * (said on stderr). */
static int live_setup(struct live_run *r)
{
    const struct live_options *o = r->o;
    r->prof = prof_new(r->syms);
    r->window = prof_new(r->syms);
    r->shown = prof_new(r->syms);
    if (r->window && r->shown && r->prof) { /* both windows take every sample the whole run's profile takes */
        prof_share_order(r->window, r->prof);
        prof_share_order(r->shown, r->prof);
    }
    r->v = calloc(1, sizeof *r->v);
    struct ingest_options io = batch_ingest_options(&o->batch); /* (mid_stream: any source's first line) */
    io.on_log = log_line;
    io.log_ctx = r->v;
    r->in = r->prof && r->v ? ingest_new(r->prof, &io) : NULL;
    if (!r->prof || !r->window || !r->shown || !r->in || !r->v) {
        fprintf(stderr, "cmprof-top: out of memory\n");
        return EXIT_ERROR;
    }
    struct view *v = r->v;
    ingest_set_profiles(r->in, (struct prof *[]){r->prof, r->window}, 2);
    view_init(v, r->prof, r->shown, r->in, r->syms);
    v->group = o->batch.by;
    v->inline_frames = o->batch.inline_frames;
    v->fold_overhead = o->batch.fold_overhead;
    v->base = o->batch.base;
    v->source_dir = o->source_dir;
    if (!realpath(o->save_dir ? o->save_dir : ".", v->save_dir)) /* said in full before the first save */
        snprintf(v->save_dir, sizeof v->save_dir, "%s", o->save_dir ? o->save_dir : ".");
    v->cpu_hz = o->cpu_hz;
    v->window_seconds = o->window_seconds > 0 ? o->window_seconds : 5;
    for (int i = 0; i < o->n_budgets; i++)
        if (view_add_budget(v, o->budgets[i]) != 0) {
            fprintf(stderr, "cmprof-top: --budget takes NAME=MICROSECONDS, not '%s'\n", o->budgets[i]);
            return EXIT_USAGE;
        }
    if (!o->headless) {
        char err[600];
        if (tui_open(o->color, &v->unicode, err, sizeof err) != 0) {
            fprintf(stderr, "cmprof-top: %s\n", err);
            return EXIT_ERROR;
        }
        atexit(tui_close);
        v->color = o->color;
    }
    r->start = r->window_start = r->rate_t = now_s();
    r->undecided_since = -1;
    log_origin = r->start;
    r->rate_at[0] = r->start;
    r->rate_n = 1;
    r->dirty = true;
    return EXIT_DONE;
}

/* Wait for the source, a key or the next redraw. False when poll() failed; *source: the source
 * has something (or has no descriptor to wait on). */
/* Until when a trickling byte stream is left unread (see READ_PACE); t or earlier: read it now. */
static double read_paced_until(const struct live_run *r, double t)
{
    enum src_kind k = src_kind(r->src);
    bool stream = k == SRC_SERIAL || k == SRC_TTY || k == SRC_TCP || k == SRC_STDIN;
    if (!stream || src_state(r->src) != SRC_CONNECTED || r->read_bytes == 0 || r->read_bytes >= PACE_BYTES)
        return t;
    return r->read_t + READ_PACE;
}

static bool wait_input(struct live_run *r, double t, bool *source)
{
    struct pollfd pfd[2];
    int n = 0, src_i = -1;
    if (!r->o->headless)
        pfd[n++] = (struct pollfd){tui_fd(), POLLIN, 0};
    int fd = src_fd(r->src);
    double paced = read_paced_until(r, t);
    if (fd >= 0 && paced <= t) {
        pfd[n] = (struct pollfd){fd, POLLIN, 0};
        src_i = n++;
    }
    int timeout = paced > t ? (int)((paced - t) * 1000) + 1 : 100;
    int wait = src_wait_ms(r->src, t);
    if (wait >= 0 && wait < timeout)
        timeout = wait;
    if (r->dirty && !r->o->headless) {
        int until = (int)((r->last_draw + REDRAW_EVERY - t) * 1000);
        if (until < timeout)
            timeout = until < 0 ? 0 : until;
    }
    if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
        return false;
    *source = (src_i >= 0 && (pfd[src_i].revents & (POLLIN | POLLHUP | POLLERR))) || fd < 0 ||
              (src_i < 0 && now_s() >= paced); /* its pause over: read what came meanwhile */
    return true;
}

/* The source: as much as arrives (also copied to --record's file), but give the keyboard a turn
 * every READ_BUDGET. */
static void read_source(struct live_run *r)
{
    static uint8_t data[1 << 14]; /* 16 KB a read: every page of it stays resident, and more reads cost little */
    const struct live_options *o = r->o;
    double t0 = now_s();
    ssize_t got;
    r->read_t = t0;
    r->read_bytes = 0;
    while ((got = src_read(r->src, data, sizeof data, now_s())) > 0) {
        r->read_bytes += (size_t)got;
        if (r->rec && fwrite(data, 1, (size_t)got, r->rec) != (size_t)got) {
            snprintf(r->v->note, sizeof r->v->note, "--record %.100s: %s; recording stopped", o->record,
                     strerror(errno));
            r->v->note_path[0] = '\0';
            if (o->headless) /* batch: said at once, and the exit status says it too */
                fprintf(stderr, "cmprof-top: %s\n", r->v->note);
            r->record_failed = true;
            fclose(r->rec);
            r->rec = NULL;
        }
        ingest_feed(r->in, data, (size_t)got);
        prof_set_sampler(r->prof, batch_sampler(o->batch.source, r->in)); /* the lockstep advice's */
        r->dirty = true;
        if (now_s() - t0 > READ_BUDGET)
            break;
        if (o->batch.max_samples && prof_total(r->prof) >= (double)o->batch.max_samples)
            break;
    }
}

/* Whether the run is over: batch's source ended or was never reached, --duration, --samples. */
static bool run_over(struct live_run *r, double t)
{
    const struct live_options *o = r->o;
    if (o->headless && batch_over(o, r->src, r->connected_once, t - r->opened_at >= r->connect_timeout)) {
        r->gave_up = !r->connected_once && src_state(r->src) == SRC_RECONNECTING;
        return true;
    }
    if (o->duration > 0 && t - r->start >= o->duration) { /* never reached by then: as --connect-timeout */
        r->gave_up = o->headless && !r->connected_once && src_state(r->src) == SRC_RECONNECTING;
        return true;
    }
    return o->batch.max_samples && prof_total(r->prof) >= (double)o->batch.max_samples;
}

static void read_keys(struct live_run *r)
{
    int k;
    while ((k = tui_key()) >= 0) {
        int got = view_key(r->v, k);
        r->quit |= (got & VIEW_QUIT) != 0;
        if (got & VIEW_SAVE)
            save_snapshot(r->v, r->o, r->v->window_mode ? r->shown : r->prof, r->in,
                          elfwatch_warning(&r->elf, sym_warning(r->syms)));
        r->key_dirty |= (got & VIEW_REDRAW) != 0; /* a key is answered at once, data at 10 Hz */
    }
}

/* A tumbling window: the view shows the last full one. */
static void turn_window(struct live_run *r, double t)
{
    prof_order_done(r->window); /* its lockstep search while its samples are in the whole run's ring */
    struct prof *tmp = r->shown;
    r->shown = r->window;
    r->window = tmp;
    prof_reset(r->window);
    ingest_set_profiles(r->in, (struct prof *[]){r->prof, r->window}, 2);
    r->v->window = r->shown;
    r->window_start = t;
    r->dirty = true;
}

/* Once a second: the samples/s figure and the sparklines' next point. */
/* When the count last grew (or the source was not connected): a stream that stopped is seen by it. */
static void note_samples(struct live_run *r, double t)
{
    double now_total = prof_total(r->prof);
    if (now_total != r->last_total || src_state(r->src) != SRC_CONNECTED) {
        r->last_total = now_total;
        r->last_sample_t = t;
    }
}

static void count_rate(struct live_run *r, double t)
{
    if (!r->o->headless)
        view_tick(r->v);
    double now_total = prof_total(r->prof);
    if (r->rate_n && now_total < r->rate_count[r->rate_n - 1])
        r->rate_n = 0; /* counts were reset (key r): start the window over */
    if (r->rate_n == RATE_SPAN + 1) {
        memmove(r->rate_at, r->rate_at + 1, RATE_SPAN * sizeof *r->rate_at);
        memmove(r->rate_count, r->rate_count + 1, RATE_SPAN * sizeof *r->rate_count);
        r->rate_n--;
    }
    r->rate_at[r->rate_n] = t;
    r->rate_count[r->rate_n++] = now_total;
    r->rate = r->rate_n > 1 ? (now_total - r->rate_count[0]) / (t - r->rate_at[0]) : 0;
    r->rate_t = t;
    r->dirty = true;
    note_samples(r, t);
}

/* What can keep samples away from this source (a drain, a trace's set-up, nothing). */
static enum starved_from starved_from_source(struct source *src)
{
    if (src_packets_by(src))
        return STARVED_PROBE;
    return src_kind(src) == SRC_OPENOCD ? STARVED_TRACE : STARVED_FIRMWARE;
}

/* A firmware's stream (a port or a socket), connected, whose samples stopped: seconds since the last. */
static double quiet_for(const struct live_run *r, double t)
{
    enum src_kind k = src_kind(r->src);
    bool stream = k == SRC_SERIAL || k == SRC_TTY || k == SRC_TCP;
    if (!stream || src_state(r->src) != SRC_CONNECTED || r->last_total <= 0 || r->last_sample_t <= 0)
        return 0;
    return t - r->last_sample_t;
}

/* A live source's end for the diagnostics page: why (a GDB target that exited: its status), when (the
 * clock and the run's time) and what the profile holds; "" while it runs, and for a file. */
static const char *ended_text(const struct live_run *r, char *buf, size_t n)
{
    if (r->ended_at <= 0 || src_kind(r->src) == SRC_FILE || src_kind(r->src) == SRC_STDIN)
        return ""; /* (a file's end is no news: the header's "end of file" says it) */
    char state[700], clock[16] = "";
    state_text(r->src, state, sizeof state);
    const char *why = strncmp(state, "ended: ", 7) == 0 ? state + 7 : state;
    time_t now = time(NULL) - (time_t)(now_s() - r->ended_at);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(clock, sizeof clock, "%H:%M:%S", &tm);
    double s = r->ended_at - r->start;
    snprintf(buf, n, "the source ended: %s, at %s (%02d:%04.1f into the run); the profile holds the %.0f samples "
             "counted until then, and nothing more comes", why, clock, (int)(s / 60), fmod(s, 60.0), r->ended_total);
    return buf;
}

static void draw(struct live_run *r, double t)
{
    int w, h;
    char state[700], gaps[400], ended[1000];
    struct src_failures f;
    src_get_failures(r->src, t, &f);
    tui_size(&w, &h);
    if (w != r->buf.w || h != r->buf.h)
        vbuf_resize(&r->buf, w, h);
    view_check_budgets(r->v);
    r->v->st = (struct view_status){src_name(r->src), state_text(r->src, state, sizeof state), r->o->batch.elf,
                                    elfwatch_warning(&r->elf, sym_warning(r->syms)),
                                    (r->ended_at > 0 ? r->ended_at : t) - r->start /* ended: the run's time stops */,
                                    r->rate, quiet_for(r, t),
                                    r->last_sample_t - r->start, starved_from_source(r->src),
                                    gaps_text(f.returns, f.away_s, f.gone_why, gaps, sizeof gaps),
                                    src_kind(r->src) != SRC_FILE || r->o->rate > 0 /* paced: a replay in time */
                                                                         ? VIEW_RATE_STREAM
                                    : src_state(r->src) == SRC_CONNECTED ? VIEW_RATE_FILE_READING
                                                                         : VIEW_RATE_FILE_READ,
                                    r->elf.changed, ended_text(r, ended, sizeof ended)};
    view_render(r->v, &r->buf);
    tui_draw(&r->buf);
    r->last_draw = t;
    r->dirty = r->key_dirty = false;
}

/* Job control: the target let go of (resumed, detached) and the terminal given back before the
 * process stops; once continued, the source reconnects (src_tick) and the view is drawn anew. */
static void job_control(struct live_run *r)
{
    bool repaint = stop_continued(); /* stopped by SIGSTOP, which no one can catch: at least repaint */
    if (stop_suspend_requested()) {
        src_suspend(r->src, now_s());
        if (!r->o->headless)
            tui_suspend();
        stop_suspend_now();
        repaint = true;
    }
    if (repaint && !r->o->headless) {
        tui_resume();
        r->key_dirty = r->dirty = true;
    }
}

/* One turn of the loop: wait, read, keys, window, rate, redraw. False when the run is over. */
static bool live_turn(struct live_run *r)
{
    job_control(r);
    double t = now_s();
    r->connected_once |= src_state(r->src) == SRC_CONNECTED; /* also when it connects and ends in one turn */
    bool source;
    if (!wait_input(r, t, &source))
        return false;
    t = now_s();
    /* also when the source's own timer ran out (a GDB server's reply overdue) */
    if (source || src_wait_ms(r->src, t) == 0)
        read_source(r);
    /* the format is told from a window of bytes; a slow stream (a firmware that sends only
     * section timings, a few lines a second) would take many seconds to fill it */
    struct ingest_counts c;
    ingest_counts(r->in, &c);
    if (c.undecided && r->undecided_since < 0)
        r->undecided_since = t;
    if (src_state(r->src) != SRC_CONNECTED ||
        (c.format == DETECT_UNKNOWN && r->undecided_since >= 0 && t - r->undecided_since >= DETECT_PATIENCE))
        ingest_settle(r->in);
    src_tick(r->src, t);
    r->connected_once |= src_state(r->src) == SRC_CONNECTED;
    if (src_reconnects(r->src) != r->reconnects) { /* a new connection: the line the last one was inside is cut */
        r->reconnects = src_reconnects(r->src);
        ingest_rejoin(r->in);
    }
    if (src_state(r->src) == SRC_END && r->ended_at <= 0) {
        r->ended_at = t;
        r->ended_total = prof_total(r->prof);
        r->dirty = true;
    }
    if (run_over(r, t))
        return false;
    if (!r->o->headless) /* also without POLLIN: a resize arrives as KEY_RESIZE from ncurses' SIGWINCH handler */
        read_keys(r);
    if (t - r->window_start >= r->v->window_seconds)
        turn_window(r, t);
    if (t - r->rate_t >= 1.0)
        count_rate(r, t);
    if (!r->elf.changed && elfwatch_check(&r->elf, t))
        r->dirty = true;
    if (!r->o->headless && (r->key_dirty || ((r->dirty || src_state(r->src) == SRC_RECONNECTING) &&
                                             t - r->last_draw >= REDRAW_EVERY)))
        draw(r, t);
    return true;
}

/* The end of a run that started: the source closed first, then the report (batch) and the exit
 * status. */
static int live_end(struct live_run *r)
{
    const struct live_options *o = r->o;
    struct run_end end;
    take_end(r->src, o->batch.source, &end, r->gave_up);
    end.connected_s = r->connected_once ? now_s() - r->opened_at : -1;
    note_samples(r, now_s()); /* the last second's samples too (no rate or view tick at the close) */
    end.quiet_s = quiet_for(r, now_s());
    end.last_sample_s = r->last_sample_t - r->start;
    src_close(r->src); /* first: a target we halted runs again before anything else happens */
    r->src = NULL;
    if (!o->headless)
        tui_close();
    ingest_finish(r->in);
    elfwatch_check(&r->elf, now_s() + 1.0); /* now, however recently it was looked at */
    if (o->headless && r->elf.changed)
        fprintf(stderr, "cmprof-top: warning: %s\n", r->elf.note);
    if (o->headless)
        return finish_batch(o, r->prof, r->in, elfwatch_warning(&r->elf, sym_warning(r->syms)), &end);
    if (stop_requested() && stop_requested() != SIGINT) /* q and Ctrl-C: the way out */
        return EXIT_SIGNAL(stop_requested());
    return EXIT_DONE;
}

/* Everything the run holds, freed; --record's file closed (removed when it stayed empty because
 * the run never started or its server was never reached). Returns the exit status. */
static int live_free(struct live_run *r, int status, bool started)
{
    const struct live_options *o = r->o;
    if (r->src)
        src_close(r->src);
    ingest_free(r->in);
    if (r->v)
        view_free(r->v);
    free(r->v);
    vbuf_free(&r->buf);
    prof_free(r->prof);
    prof_free(r->window);
    prof_free(r->shown);
    sym_close(r->syms);
    if (r->rec && fclose(r->rec) != 0) {
        fprintf(stderr, "cmprof-top: --record %s: %s\n", o->record, strerror(errno));
        r->record_failed = true;
    }
    if (r->record_failed && !status)
        status = EXIT_ERROR;
    if (o->record && r->rec_created && (!started || r->gave_up)) /* no empty file left */
        unlink(o->record);
    return status;
}

int live_main(const struct live_options *o)
{
    struct live_run r = {.o = o};
    char err[600];
    elfwatch_start(&r.elf, o->batch.elf);
    r.syms = sym_open(o->batch.elf, err, sizeof err);
    if (!r.syms) {
        fprintf(stderr, "cmprof-top: %s\n", err);
        return EXIT_ERROR;
    }
    int refused = batch_diff_refused(&o->batch, r.syms, stderr); /* before the terminal is taken */
    if (refused) {
        sym_close(r.syms);
        return refused;
    }
    if (*sym_warning(r.syms) && o->headless)
        fprintf(stderr, "cmprof-top: warning: %s\n", sym_warning(r.syms));
    r.opened_at = now_s();
    r.connect_timeout = o->connect_timeout > 0 ? o->connect_timeout : LIVE_CONNECT_TIMEOUT;
    /* one attempt waits this long at most; the live view's keys wait for it, so there briefly (q
     * must end the view within 2 s also while an unreachable server is tried again and again) */
    net_set_connect_wait(o->headless || r.connect_timeout < LIVE_CONNECT_WAIT ? r.connect_timeout
                                                                              : LIVE_CONNECT_WAIT);
    stop_catch(); /* from here on a target may be halted: every stop goes through the close */
    stop_catch_suspend(); /* before the terminal is taken: a Ctrl-Z lets go of the target first */
    signal(SIGPIPE, SIG_IGN); /* a server or port that went away is an error to handle, not the end */
    int status;
    r.src = open_input(o, r.syms, &r.rec, &r.rec_created, &status);
    if (!r.src)
        return live_free(&r, status, false);
    if ((status = live_setup(&r)) != EXIT_DONE)
        return live_free(&r, status, false);
    while (!r.quit && !stop_requested() && live_turn(&r))
        ;
    return live_free(&r, live_end(&r), true);
}
