/* The firmware's live stream on the host: the sampler and cmprof_stream.c (fake registers) write
 * lines that the host's text decoder reads back. Issue 7: the firmware repeats its announce and
 * task names about once a second of samples and after any loss, so a host that attaches late
 * places its samples within a second. */
#ifndef _POSIX_C_SOURCE /* (fake_regs.h, included first on the command line, may have set it) */
#define _POSIX_C_SOURCE 200809L /* fork, for a test on a table of its own */
#endif
#include "../decode/text.h"
#include "../firmware/cmprof.h"
#include "check.h"
#include "evlog.h"
#include "fake_regs.h"

#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile test_tag;

static char out[1 << 20];
static size_t out_len;

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
    out[out_len] = '\0';
}

static size_t count_lines(const char *s, const char *prefix)
{
    size_t n = 0, k = strlen(prefix);
    for (const char *p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, k) == 0;
    return n;
}

/* The stream from its nth line on: what a host that attaches late sees. */
static const char *skip_lines(const char *s, int n)
{
    for (int i = 0; i < n && s; i++)
        s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
    return s ? s : "";
}

/* What the host decodes from text: the events in `log`, the decoder (for its stats) in `d`. Free
 * with text_free(d) and free(log->buf). */
static void host_decode(const char *text, size_t len, struct evlog *log, struct text_decoder *d)
{
    memset(log, 0, sizeof *log);
    struct ev_sink sink = {evlog_event, log};
    text_init(d);
    text_feed(d, (const uint8_t *)text, len, &sink);
    text_finish(d, &sink);
}

static const struct cmprof_stream_info info = {.clock_hz = 1000, .timer_hz = 1000, .period = 10, .jitter = 0,
                                               .code_base = 0x08000000u};
static char motor_name[] = "motor";

/* A sampler started afresh (period 10) and announced, with nothing captured yet. */
static void fresh_stream(void)
{
    fake_regs_clear();
    out_len = 0;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(capture, &info);
}

/* 100 samples a second (1000 Hz timer, period 10): `seconds` worth, drained line by line. */
static void run(unsigned seconds)
{
    for (unsigned k = 0; k < seconds * 100u; k++) {
        cmprof_tick(0x08000100u + 2u * (k % 7u));
        cmprof_stream_drain(capture, 1);
    }
}

static void test_announce_repeats_every_second(void)
{
    fake_regs_clear();
    out_len = 0;
    test_tag = motor_name;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(capture, &info);
    cmprof_stream_task(capture, motor_name, motor_name);
    run(5);
    size_t announces = count_lines(out, "@cmprof"), tasks = count_lines(out, "@task");
    CHECK(announces >= 5 && announces <= 6); /* at start, then after each 100 samples */
    /* named, then repeated: each round paid from the names' share of the bytes (1 in 11), which at
     * 2 bytes a sample (version 7: every PC here in one page) buys a round every other announce or
     * so: 3 rounds in these 5 s (4 at version 6's 3) */
    CHECK(tasks == 1 && count_lines(out, "@N") == announces - 2);
    /* each announce says what the firmware runs on: the host reads it as one event */
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(log.count[EV_TARGET] == announces && strstr(log.buf, "'arch=host timer=SysTick'") != NULL);
    text_free(&d);
    free(log.buf);
}

static void test_late_host_places_samples_within_a_second(void)
{
    const char *late = skip_lines(out, 2 * 100 / 16 + 2); /* the host attaches after 2 s */
    struct evlog log;
    struct text_decoder d;
    host_decode(late, strlen(late), &log, &d);
    CHECK(d.stats.no_base > 0 && d.stats.no_base <= 100); /* at most a second waited for an announce */
    CHECK(log.count[EV_PC] + d.stats.no_base >= 250);
    CHECK(log.count[EV_TASK_NAME] >= 1);
    CHECK(strstr(log.buf, "'motor'") != NULL);
    text_free(&d);
    free(log.buf);
}

/* A host that attaches late to a running stream, at any byte of three lines 2 s in (its first line
 * a tail): the samples before the first announce it reads, and those of the lines after it before the
 * first whole group of 8 (version 7's page cache), are the cost of joining (no_base,
 * unread_joining), not a loss: no line malformed or glued, no sample "not read" after a missed line.
 * Every sample from the first line read with the firmware's cache on is placed. */
static void test_late_host_at_any_byte_loses_nothing(void)
{
    fresh_stream();
    run(5);
    const char *from = skip_lines(out, 2 * 100 / 16 + 2), *to = skip_lines(from, 3);
    uint64_t joined_max = 0, pages = 0;
    bool clean = true;
    for (const char *cut = from; cut < to; cut++) {
        struct evlog log;
        struct text_decoder d;
        memset(&log, 0, sizeof log);
        struct ev_sink sink = {evlog_event, &log};
        text_init(&d);
        d.joined_mid_line = true; /* a live port: its first line may be a tail */
        text_feed(&d, (const uint8_t *)cut, strlen(cut), &sink);
        text_finish(&d, &sink);
        const struct text_stats *t = &d.stats;
        clean &= t->bad_lines == 0 && t->glued == 0 && t->unread_paged == 0 &&
                 log.count[EV_PC] > 200;
        if (t->no_base + t->unread_joining > joined_max)
            joined_max = t->no_base + t->unread_joining;
        pages += t->unread_joining; /* (some cuts: the first announce's lines are not a group's first) */
        text_free(&d);
        free(log.buf);
    }
    CHECK(clean);
    CHECK(joined_max > 0 && joined_max <= 100 + 7 * 16 && pages > 0); /* a second's, then at most 7 lines */
}

/* The stream decoded with its nth line left out (-1: none): the decoder's skipped_lines. */
static uint64_t skipped_without_line(int n)
{
    static char cut[sizeof out];
    const char *from = skip_lines(out, n), *next = skip_lines(from, 1);
    size_t head = n < 0 ? out_len : (size_t)(from - out);
    memcpy(cut, out, head);
    size_t len = head + (n < 0 ? 0 : strlen(next));
    if (n >= 0)
        memcpy(cut + head, next, strlen(next));
    struct evlog log;
    struct text_decoder d;
    host_decode(cut, len, &log, &d);
    uint64_t skipped = d.stats.skipped_lines;
    text_free(&d);
    free(log.buf);
    return skipped;
}

/* A sample line lost whole on the way (a serial adapter's overrun: no damaged line to count) is
 * said by its number, whichever line it was but the stream's first: one before a group of 8 begins (whose page cache starts
 * afresh, so no sample after it is unread), one after an announce, either way of the firmware's
 * announces (its repeats go on numbering, cmprof_stream_announce starts again at 0). The whole
 * stream: none. */
static void test_a_line_lost_whole_is_said(void)
{
    fresh_stream();
    run(3);
    size_t restart = out_len;
    cmprof_stream_announce(capture, &info); /* the firmware's own again: numbers from 0 */
    run(3);
    CHECK(skipped_without_line(-1) == 0);
    /* Not told, nor can be: the stream's first line (a host that begins at an announce cannot tell
     * the stream's from a repeat's), its last (nothing after it), and the last before the
     * firmware's own announce (a restart at 0 reads alike after it). */
    int n = 0, first = -1, last = -1, before_restart = -1;
    for (const char *p = out; *p; p = skip_lines(p, 1), n++)
        if (*p == '%' || *p == '$') {
            first = first < 0 ? n : first;
            before_restart = (size_t)(p - out) < restart ? n : before_restart;
            last = n;
        }
    size_t lines = 0, said = 0;
    for (int k = first + 1; k < last; k++) {
        char c = *skip_lines(out, k);
        if ((c == '%' || c == '$') && k != before_restart) {
            lines++;
            said += skipped_without_line(k) == 1;
        }
    }
    CHECK(lines > 30 && said == lines);
}

/* A host that attaches late sees samples of indexes not named yet (pending tags): the repeats on
 * "@N" lines name them, and each such name says which pending tag it resolves, so the host moves
 * the waiting samples into the named row (as an "@task" line does). */
struct pending_seen {
    uint32_t sampled[64], resolved[64];
    size_t n_sampled, n_resolved;
};

static void add_once(uint32_t *set, size_t *n, uint32_t v)
{
    for (size_t i = 0; i < *n; i++)
        if (set[i] == v)
            return;
    if (*n < 64)
        set[(*n)++] = v;
}

static void note_pending(void *ctx, const struct ev *e)
{
    struct pending_seen *p = ctx;
    if (e->type == EV_PC && ev_tag_pending(e->pc.tag))
        add_once(p->sampled, &p->n_sampled, e->pc.tag);
    if (e->type == EV_TASK_NAME && e->task_name.pending)
        add_once(p->resolved, &p->n_resolved, e->task_name.pending);
}

static void test_repeats_resolve_pending_samples(void)
{
    fresh_stream();
    static char tcbs[8][8];
    static const char *const names[4] = {"alpha", "beta", "gamma", "delta"};
    for (int t = 0; t < 8; t++)
        cmprof_stream_task(capture, tcbs[t], names[t % 4]);
    for (unsigned k = 0; k < 3000u; k++) {
        test_tag = tcbs[k % 8u];
        cmprof_tick(0x08000100u + 2u * (k % 7u));
        cmprof_stream_drain(capture, 1);
    }
    const char *late = skip_lines(out, 101);
    struct pending_seen seen = {0};
    struct ev_sink sink = {note_pending, &seen};
    struct text_decoder d;
    text_init(&d);
    text_feed(&d, (const uint8_t *)late, strlen(late), &sink);
    text_finish(&d, &sink);
    size_t unresolved = 0;
    for (size_t i = 0; i < seen.n_sampled; i++) {
        bool found = false;
        for (size_t j = 0; j < seen.n_resolved; j++)
            found |= seen.resolved[j] == seen.sampled[i];
        unresolved += !found;
    }
    printf("     late host: %zu @N lines, %zu pending tags sampled, %zu resolved, %zu unresolved\n",
           count_lines(late, "@N"), seen.n_sampled, seen.n_resolved, unresolved);
    CHECK(count_lines(late, "@N") > 0 && seen.n_sampled > 0 && unresolved == 0);
    text_free(&d);
}

/* Repeated names, several to an @N line: each names its index; a malformed line names none. */
static void test_repeat_lines_decode_whole_or_not_at_all(void)
{
    /* index 0, tag 0x20000400 ("AgAAQA"), "motor"; index 62 ("+AA"), tag 0x2000040c, "idle"; then
     * two samples; then a name that runs past the line's end, and a tag's first char past 2 bits
     * (the checks computed as docs/stream.md says) */
    static const char text[] = "@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n"
                               "@NAAgAAQAFmotor+AAAgAAQMEidle!vB\n"
                               "%AAAAB+AAAAAB!N6\n"
                               "@NBAgAAQQFmo!ln\n"
                               "@NCEgAAQQAx!cy\n";
    size_t n = sizeof text - 1;
    struct evlog log;
    struct text_decoder d;
    host_decode(text, n, &log, &d);
    CHECK(log.count[EV_TASK_NAME] == 2 && strstr(log.buf, "'motor'") && strstr(log.buf, "'idle'"));
    CHECK(d.task_tags[0] == 0x20000400u && d.task_tags[62] == 0x2000040cu &&
          d.task_tags[1] == EV_TAG_PENDING(1)); /* index 1 was never named: it still waits */
    CHECK(log.count[EV_PC] == 2 && d.stats.bad_lines == 2);
    text_free(&d);
    free(log.buf);
}

#if defined(CMPROF_RESERVOIR_N) && CMPROF_RESERVOIR_N == 0 /* built without the reservoir: dropped, counted */
static void test_loss_triggers_an_announce(void)
{
    fresh_stream();
    for (unsigned k = 0; k < 200u; k++) /* a 64-sample ring, nobody draining: it overflows */
        cmprof_tick(0x08000100u);
    size_t before = count_lines(out, "@cmprof");
    cmprof_stream_drain(capture, 1);
    CHECK(count_lines(out, "@lost") == 1);
    CHECK(count_lines(out, "@cmprof") == before + 1);
}
#else
/* What the host makes of a capture: each PC's samples, weighed ('&' lines stand for more), in order
 * of arrival by kind: where the first and last weighted sample came among the others. */
struct weighed {
    double by_pc[4], total;
    size_t n, first_weighted, last_weighted, weighted;
};

static void weigh(void *ctx, const struct ev *e)
{
    struct weighed *w = ctx;
    if (e->type != EV_PC)
        return;
    double x = e->pc.kept ? (double)e->pc.taken / (double)e->pc.kept : 1.0;
    uint32_t k = (e->pc.addr - 0x08000100u) / 2u;
    w->by_pc[k < 4 ? k : 3] += x;
    w->total += x;
    if (e->pc.kept) {
        w->first_weighted = w->weighted++ ? w->first_weighted : w->n;
        w->last_weighted = w->n;
    }
    w->n++;
}

static struct weighed weigh_capture(void)
{
    struct weighed w = {{0}, 0, 0, 0, 0, 0};
    struct text_decoder d;
    struct ev_sink sink = {weigh, &w};
    text_init(&d);
    text_feed(&d, (const uint8_t *)out, out_len, &sink);
    text_finish(&d, &sink);
    CHECK(d.stats.bad_lines == 0);
    text_free(&d);
    return w;
}

/* A drain that cannot run: the 64-sample ring fills with A, then 1000 samples come, the first 500
 * at B, the rest at C. The old firmware dropped all 1000 (lost, and all of them B and C: the
 * shares biased). The reservoir keeps 14 of the 1000, uniformly, and sends them where they were
 * taken, each standing for 1000/14: every sample taken is accounted for, none lost, B and C near
 * half each, and nothing reordered: the group after A's samples and before those that follow. */
static void test_full_ring_keeps_a_uniform_subsample(void)
{
    fresh_stream();
    for (unsigned k = 0; k < 64u; k++)
        cmprof_tick(0x08000100u); /* A: fills the ring */
    for (unsigned k = 0; k < 1000u; k++)
        cmprof_tick(k < 500u ? 0x08000102u : 0x08000104u); /* B, then C: the ring is full */
    CHECK(cmprof_stream_lost() == 0 && cmprof_stream_pending() == 64u);
    cmprof_stream_flush(capture); /* the sampler runs on: the group goes in with the next sample */
    CHECK(count_lines(out, "&") == 0);
    for (unsigned k = 0; k < 40u; k++)
        cmprof_tick(0x08000106u); /* D: fewer than the ring holds beside the group */
    cmprof_stream_flush(capture);
    CHECK(count_lines(out, "@lost") == 0 && count_lines(out, "&") >= 1);
    struct weighed w = weigh_capture();
    /* 1104 taken: 64 A, 1000 B and C, the first D (in the group: 1001 it stands for), 39 D after */
    CHECK(fabs(w.total - 1104.0) < 1e-6 && w.by_pc[0] == 64.0);
    CHECK(w.weighted == 14 && w.first_weighted == 64 && w.last_weighted == 77 && w.n == 64 + 14 + 39);
    CHECK(w.by_pc[1] >= 1001.0 * 3 / 14 && w.by_pc[2] >= 1001.0 * 3 / 14); /* B and C both well kept */
    CHECK(w.by_pc[3] >= 39.0 && w.by_pc[3] <= 39.0 + 1001.0 / 14 + 1e-6);
}

/* A sampler that stopped (its limit) with samples in the reservoir: the flush moves them into the
 * ring itself and sends them, so the host gets every sample taken. */
static void test_flush_after_the_limit_sends_the_reservoir(void)
{
    fake_regs_clear();
    out_len = 0;
    cmprof_start(10u, 500u);
    cmprof_stream_announce(capture, &info);
    for (unsigned k = 0; k < 500u; k++)
        cmprof_tick(k < 64u ? 0x08000100u : 0x08000102u);
    cmprof_stream_flush(capture);
    struct weighed w = weigh_capture();
    CHECK(fabs(w.total - 500.0) < 1e-6 && w.by_pc[0] == 64.0 && fabs(w.by_pc[1] - 436.0) < 1e-6);
    CHECK(w.weighted == 14 && cmprof_stream_lost() == 0 && cmprof_stream_reservoir_close() == 0);
}
#endif

/* Issue 7: a sample in an exception handler carries the exception's tag, not the interrupted
 * task's. Issue 30: it says so itself ('-' and the exception number), taking no slot of the task
 * table and needing no @task line. */
static void test_interrupt_samples_are_named(void)
{
    fresh_stream();
    test_tag = motor_name;
    for (unsigned k = 0; k < 16u; k++)
        cmprof_tick_frame(0x08000100u, k % 4u == 3u ? 0x01000016u : 0x01000000u);
    cmprof_stream_flush(capture);
    CHECK(strstr(out, "fffffe16") == NULL && strstr(out, "-W") != NULL); /* no name line; 22 = "W" */
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(log.count[EV_PC] == 16);
    size_t in_isr = 0;
    for (const char *p = strstr(log.buf, "t=fffffe16/1"); p; p = strstr(p + 1, "t=fffffe16/1"))
        in_isr++;
    CHECK(in_isr == 4);
    text_free(&d);
    free(log.buf);
}

/* Issue 7: an RTOS's task-create hook names a task without sending (it runs inside the kernel);
 * the next drain sends the name before any sample that uses it. */
/* An application that sends its own announce more often than once a second (the demo does, with
 * its task names) must not hold back the drain's repeat: a host that attached after the first
 * interrupt sample learns the handler's name only from it. */
static void test_own_announces_keep_interrupt_names_repeated(void)
{
    fresh_stream();
    cmprof_stream_task(capture, motor_name, motor_name);
    test_tag = motor_name;
    for (unsigned k = 0; k < 500u; k++) { /* 5 s, the application announcing every 0.4 s */
        cmprof_tick_frame(0x08000100u, k % 4u == 3u ? 0x01000016u : 0x01000000u);
        cmprof_stream_drain(capture, 1);
        if (k % 40u == 39u) {
            cmprof_stream_announce(capture, &info);
            cmprof_stream_task(capture, motor_name, motor_name);
        }
    }
    /* a host that attaches late: every interrupt sample it decodes is the handler's at once */
    const char *late = skip_lines(out, 2 * 100 / 16 + 2);
    struct evlog log;
    struct text_decoder d;
    host_decode(late, strlen(late), &log, &d);
    size_t in_isr = 0;
    for (const char *p = strstr(log.buf, "t=fffffe16/1"); p; p = strstr(p + 1, "t=fffffe16/1"))
        in_isr++;
    CHECK(log.count[EV_PC] >= 200 && in_isr * 4 == log.count[EV_PC]); /* every 4th tick is in the handler */
    text_free(&d);
    free(log.buf);
}

static void test_names_from_kernel_hooks(void)
{
    fresh_stream();
    static char tcb[32], name[] = "sensor";
    cmprof_stream_task_later(tcb, name);
    CHECK(strstr(out, "sensor") == NULL); /* nothing sent from the hook */
    test_tag = tcb;
    for (int k = 0; k < 16; k++)
        cmprof_tick(0x08000100u);
    cmprof_stream_drain(capture, 1);
    /* the name goes inside the sample line, before the first sample that carries it */
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    char sample[32];
    snprintf(sample, sizeof sample, " t=%" PRIx32 "/1 ", (uint32_t)(uintptr_t)tcb);
    const char *named = strstr(log.buf, "'sensor'"), *first = strstr(log.buf, sample);
    CHECK(strchr(out, '%') && !strstr(out, "@task") && named && first && named < first);
    CHECK(log.count[EV_PC] == 16 && d.stats.bad_lines == 0);
    text_free(&d);
    free(log.buf);
    cmprof_stream_task_gone(tcb);
    out_len = 0;
    run(2); /* the re-announce no longer names it */
    CHECK(strstr(out, "sensor") == NULL);
}

/* The task in block tcb gone, a new one (name) created in the same block, 40 samples of it at
 * 0x08000200, then all sent. */
static void new_task_in_block(char *tcb, char *name)
{
    cmprof_stream_task_gone(tcb);
    cmprof_stream_task_later(tcb, name);
    for (int k = 0; k < 40; k++)
        cmprof_tick(0x08000200u);
    cmprof_stream_drain(capture, 8);
    cmprof_stream_flush(capture);
}

/* An RTOS reuses a deleted task's control block for the next task. Samples of the old task may
 * still wait in the ring when the new name is given: the name must go out after them and before
 * the new task's first sample, even inside one line's worth. */
static void test_reused_control_block_keeps_samples_apart(void)
{
    fresh_stream();
    static char tcb[32], old_name[] = "w1", new_name[] = "w2";
    cmprof_stream_task_later(tcb, old_name);
    test_tag = tcb;
    for (int k = 0; k < 21; k++) /* w1 runs: one line and 5 samples more */
        cmprof_tick(0x08000100u);
    new_task_in_block(tcb, new_name);
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(d.stats.bad_lines == 0 && log.count[EV_PC] == 61);
    const char *renamed = strstr(log.buf, "'w2'");
    const char *last_old = NULL, *first_new = strstr(log.buf, "a=08000200");
    for (const char *p = strstr(log.buf, "a=08000100"); p; p = strstr(p + 1, "a=08000100"))
        last_old = p;
    CHECK(renamed && last_old && first_new && last_old < renamed && renamed < first_new);
    /* and the old task's own name, given before the drain ran, is not lost to the new one */
    const char *old_named = strstr(log.buf, "'w1'"), *first_old = strstr(log.buf, "a=08000100");
    CHECK(old_named && first_old && old_named < first_old);
    text_free(&d);
    free(log.buf);
}

/* What a host that began late made of w2's name: the pending tag it gave those samples, the samples
 * that went to "(task unknown)". */
struct late_names {
    uint32_t w2_pending;
    uint64_t unknown;
};

static void note_late_names(void *ctx, const struct ev *e)
{
    struct late_names *n = ctx;
    if (e->type == EV_TASK_NAME && e->task_name.name_len == 2 && memcmp(e->task_name.name, "w2", 2) == 0)
        n->w2_pending = e->task_name.pending;
    if (e->type == EV_TASK_UNKNOWN)
        n->unknown += e->task_unknown.samples;
}

/* A host that began after w1 was named (its first line) sees w1's samples under an index it has no
 * name for; before any repeat names it, the block goes to a new task, w2, whose '=' entry reuses the
 * index. Those samples were w1's, never w2's: they go to "(task unknown)", not to w2 (they did:
 * a late host pinned a previous task's samples on the index's next name). */
static void test_a_late_host_never_gives_the_old_samples_a_new_name(void)
{
    fresh_stream();
    static char tcb[32], old_name[] = "w1", new_name[] = "w2";
    cmprof_stream_task_later(tcb, old_name);
    test_tag = tcb;
    for (int k = 0; k < 160; k++) { /* w1: ten lines of 16, the first with its name */
        cmprof_tick(0x08000100u);
        cmprof_stream_drain(capture, 1);
    }
    new_task_in_block(tcb, new_name);
    const char *first = strstr(out, "\n%"), *late = first ? skip_lines(first + 1, 1) : "";
    CHECK(first != NULL && strstr(late, "w1") == NULL); /* no repeat names w1 in between */
    struct late_names seen = {0, 0};
    struct ev_sink sink = {note_late_names, &seen};
    struct text_decoder d;
    text_init(&d);
    text_feed(&d, (const uint8_t *)out, (size_t)(strchr(out, '\n') + 1 - out), &sink); /* the announce */
    text_feed(&d, (const uint8_t *)late, strlen(late), &sink);
    text_finish(&d, &sink);
    /* (its lines 1 to 7 are not read: version 7's first whole group of 8 begins at line 8) */
    CHECK(seen.w2_pending == 0 && seen.unknown == 32 && d.stats.names_unknown == 32);
    text_free(&d);
}

/* Three tasks in one control block between two drains: each name goes out before its own
 * samples and after the previous task's. */
static void test_block_reused_twice_before_a_drain(void)
{
    fresh_stream();
    static char tcb[32], names[3][4] = {"t1", "t2", "t3"};
    test_tag = tcb;
    for (int t = 0; t < 3; t++) {
        if (t)
            cmprof_stream_task_gone(tcb);
        cmprof_stream_task_later(tcb, names[t]);
        for (int k = 0; k < 10; k++)
            cmprof_tick(0x08000100u + 0x100u * (uint32_t)t);
    }
    cmprof_stream_flush(capture);
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(d.stats.bad_lines == 0 && log.count[EV_PC] == 30);
    const char *prev_last = log.buf;
    for (int t = 0; t < 3; t++) {
        char name[16], pc[16];
        snprintf(name, sizeof name, "'%s'", names[t]);
        snprintf(pc, sizeof pc, "a=%08x", 0x08000100u + 0x100u * (uint32_t)t);
        const char *named = strstr(log.buf, name), *first = strstr(log.buf, pc), *last = NULL;
        for (const char *p = first; p; p = strstr(p + 1, pc))
            last = p;
        CHECK(named && first && prev_last < named && named < first);
        prev_last = last ? last : log.buf;
    }
    text_free(&d);
    free(log.buf);
}

/* FreeRTOS frees a deleted task's control block at once (another task deleted it) and reuses the
 * memory, before the idle hook drains: the name held in the block must still go out as it was,
 * never the bytes now there. Past the 16 copies kept, an unsent name goes out as '?', never another's. */
static void test_deleted_before_the_drain_keeps_its_name(void)
{
    fresh_stream();
    static char blocks[20][24];
    for (int t = 0; t < 20; t++) { /* the name lives in the block, as pcTaskName does */
        snprintf(blocks[t] + 8, 16, "gone%02d", t % 100);
        cmprof_stream_task_later(blocks[t], blocks[t] + 8);
        test_tag = blocks[t];
        for (int k = 0; k < 3; k++)
            cmprof_tick(0x08000100u);
        cmprof_stream_task_gone(blocks[t]);
        memset(blocks[t], 0x01, sizeof blocks[t]); /* freed and reused by the kernel's heap */
    }
    cmprof_stream_flush(capture);
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(d.stats.bad_lines == 0 && log.count[EV_PC] == 60);
    CHECK(strchr(out, 0x01) == NULL); /* no byte of the reused blocks on the line */
    int kept = 0;
    for (int t = 0; t < 20; t++) {
        char name[24];
        snprintf(name, sizeof name, "'gone%02d'", t);
        kept += strstr(log.buf, name) != NULL;
    }
    CHECK(kept == 16 && strstr(log.buf, "'gone19'")); /* the 16 copies: the last 16 deleted */
    text_free(&d);
    free(log.buf);
}

/* For users with their own transport: take copies samples out in order, across the ring's wrap. */
static void test_take_copies_in_order_across_the_wrap(void)
{
    fake_regs_clear();
    cmprof_start(10u, 0u);
    static char tcb_a[8], tcb_b[8];
    uint32_t pcs[64], tags[64], next = 0;
    for (uint32_t k = 0; k < 50; k++) {
        test_tag = k % 2 ? tcb_b : tcb_a;
        cmprof_tick(0x08000000u + 2u * k);
    }
    CHECK(cmprof_stream_take(pcs, tags, 40) == 40);
    for (uint32_t i = 0; i < 40; i++, next++)
        CHECK(pcs[i] == 0x08000000u + 2u * next && tags[i] == (uint32_t)(uintptr_t)(next % 2 ? tcb_b : tcb_a));
    for (uint32_t k = 50; k < 90; k++) { /* the ring (64) wraps */
        test_tag = k % 2 ? tcb_b : tcb_a;
        cmprof_tick(0x08000000u + 2u * k);
    }
    CHECK(cmprof_stream_pending() == 50);
    CHECK(cmprof_stream_take(pcs, NULL, 64) == 50);
    for (uint32_t i = 0; i < 50; i++, next++)
        CHECK(pcs[i] == 0x08000000u + 2u * next);
    CHECK(cmprof_stream_pending() == 0 && cmprof_stream_take(pcs, tags, 64) == 0);
}

#ifdef CMPROF_STREAM_TASKS
#define FIELD_TABLE CMPROF_STREAM_TASKS
#else
#define FIELD_TABLE 254 /* the library's default */
#endif

#if defined(CMPROF_STREAM_TASKS) && CMPROF_STREAM_TASKS > 62
/* Issue 7: hundreds of tasks, created and deleted over time: every sample keeps its own task. */
static char tcbs[400][16]; /* stand-ins for task control blocks */
static char names[400][16];

static void test_hundreds_of_tasks_come_and_go(void)
{
    fresh_stream();
    for (int t = 0; t < 400; t++)
        snprintf(names[t], sizeof names[t], "t%03d", t);
    unsigned long sampled[400] = {0};
    for (int round = 0; round < 2; round++) {
        int first = round * 200; /* round 1 deletes the first 200 and creates 200 more */
        if (round)
            for (int t = 0; t < 200; t++)
                cmprof_stream_task_gone(tcbs[t]);
        for (int t = first; t < first + 200; t++)
            cmprof_stream_task(capture, tcbs[t], names[t]);
        for (int k = 0; k < 3200; k++) {
            int t = first + (k * 7) % 200;
            test_tag = tcbs[t];
            cmprof_tick(0x08000100u + 2u * (uint32_t)t);
            sampled[t]++;
            cmprof_stream_drain(capture, 1);
        }
        cmprof_stream_flush(capture);
    }
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(d.stats.bad_lines == 0 && log.count[EV_PC] == 6400);
    /* each sample's PC says which task took it: its tag must be that task's */
    int wrong = 0;
    char want[64];
    for (int t = 0; t < 400; t++) {
        snprintf(want, sizeof want, "a=%08x t=%x/1", 0x08000100u + 2u * (unsigned)t, /* evlog's format */
                 (unsigned)(uintptr_t)tcbs[t]);
        size_t n = 0;
        for (const char *p = strstr(log.buf, want); p; p = strstr(p + 1, want))
            n++;
        wrong += n != sampled[t];
    }
    CHECK(wrong == 0);
    CHECK(strstr(out, "@task +") != NULL); /* indexes past 61 went out escaped */
    text_free(&d);
    free(log.buf);
}
#endif

/* Issue 30: stand-ins for the control blocks of a large RTOS application, its task names, and
 * the tag of each sample (its PC says which: 0x08010000 + 2 * the tag's number). */
#define FIELD_TASKS 320
static char field_tcbs[FIELD_TASKS][16], field_names[FIELD_TASKS][16];
static char never_named[16];
#define FIELD_PC(t) (0x08010000u + 2u * (uint32_t)(t))

/* Issue 30, item 4: task create and delete take a few steps of the table, whatever the task
 * count (before, each scanned the whole table). The same churn with 20 and with 230 live tasks:
 * the mean steps per operation may not grow with the count. */
static double steps_per_op(int live_tasks)
{
    static char pool[480][16];
    static int live[240];
    static bool in_use[480];
    uint32_t r = 7;
    for (int t = 0; t < live_tasks; t++) {
        live[t] = t;
        in_use[t] = true;
        cmprof_stream_task_later(pool[t], "churn");
    }
    unsigned long before = fake_probe_steps;
    for (int op = 0; op < 4000; op++) {
        r = r * 1103515245u + 12345u;
        int slot = (int)((r >> 8) % (uint32_t)live_tasks), k;
        cmprof_stream_task_gone(pool[live[slot]]);
        in_use[live[slot]] = false;
        do {
            r = r * 1103515245u + 12345u;
            k = (int)((r >> 8) % 480u);
        } while (in_use[k]);
        in_use[k] = true;
        live[slot] = k;
        cmprof_stream_task_later(pool[k], "churn");
    }
    double mean = (double)(fake_probe_steps - before) / 8000.0;
    for (int t = 0; t < live_tasks; t++) {
        cmprof_stream_task_gone(pool[live[t]]);
        in_use[live[t]] = false;
    }
    return mean;
}

static void test_create_and_delete_take_a_few_steps(void)
{
    fresh_stream();
    double few = steps_per_op(20), many = steps_per_op(230);
    printf("     steps per create or delete: %.2f with 20 tasks, %.2f with 230\n", few, many);
    CHECK(few > 0 && many <= 2.0 * few + 2.0); /* a scan would take 11 times as many */
    cmprof_stream_flush(capture); /* the names given go out */
}

/* The worst case, not the mean: every slot's task deleted, then each control block reused at once
 * by a new task (heap allocators hand a freed block straight back), then one deleted again. A
 * create in a new block then takes that slot in a few steps: before, it walked every reused
 * slot's stale entry in the queue of deleted slots (as many steps as the table has slots). On an
 * empty table: in a child process, so the tests after it keep theirs. */
#ifdef CMPROF_STREAM_TASKS
#define REUSE_TABLE CMPROF_STREAM_TASKS
#else
#define REUSE_TABLE 254 /* the default */
#endif
static bool create_after_reuse_is_bounded(void)
{
    static char blocks[REUSE_TABLE + 1][16];
    fresh_stream();
    for (int t = 0; t < REUSE_TABLE; t++)
        cmprof_stream_task_later(blocks[t], "worker");
    for (int t = 0; t < REUSE_TABLE; t++)
        cmprof_stream_task_gone(blocks[t]);
    for (int t = 0; t < REUSE_TABLE; t++)
        cmprof_stream_task_later(blocks[t], "worker"); /* the same blocks, new tasks */
    cmprof_stream_task_gone(blocks[REUSE_TABLE - 1]);
    unsigned long before = fake_probe_steps;
    cmprof_stream_task_later(blocks[REUSE_TABLE], "late");
    unsigned long create = fake_probe_steps - before;
    before = fake_probe_steps;
    cmprof_stream_task_gone(blocks[REUSE_TABLE]);
    unsigned long gone = fake_probe_steps - before;
    printf("     a create after %d reused blocks: %lu steps, its delete %lu\n", REUSE_TABLE, create, gone);
    return create <= 8 && gone <= 8;
}

/* Whether check() passes in a child process: on a table of its own, whatever the tests before or
 * after it do to the library's. */
static bool in_child(bool (*check)(void))
{
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        bool ok = check();
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_create_after_reuse_takes_a_few_steps(void)
{
    CHECK(in_child(create_after_reuse_is_bounded));
}

/* One tick for tag number t: FIELD_TASKS is an interrupt (exception 22), FIELD_TASKS + 1 a tag
 * that was never named. */
static void field_tick(int t)
{
    if (t == FIELD_TASKS) {
        cmprof_tick_frame(FIELD_PC(t), 0x01000016u);
        return;
    }
    test_tag = t == FIELD_TASKS + 1 ? never_named : field_tcbs[t];
    cmprof_tick_frame(FIELD_PC(t), 0x01000000u);
}

static uint32_t field_tag(int t)
{
    return t == FIELD_TASKS ? 0xFFFFFE16u : (uint32_t)(uintptr_t)(t == FIELD_TASKS + 1 ? never_named : field_tcbs[t]);
}

/* Samples whose decoded tag is not the one their PC says they were taken with; *unsent: those that
 * came with no tag ('/'). */
static unsigned field_misattributed(const struct evlog *log, unsigned *unsent)
{
    unsigned wrong = 0;
    *unsent = 0;
    for (const char *p = strstr(log->buf, "a=0801"); p; p = strstr(p + 1, "a=0801")) {
        unsigned a, tag;
        if (sscanf(p, "a=%x t=%x", &a, &tag) != 2)
            continue;
        int t = (int)((a - 0x08010000u) / 2u);
        if (tag == EV_TAG_UNSENT)
            (*unsent)++;
        else
            wrong += tag != field_tag(t);
    }
    return wrong;
}

/* 200 tasks named from the kernel's create hook, an interrupt, and a tag never named: every
 * sample keeps its own tag (firmware before issue 30: tasks past 62 and the interrupt shared one
 * "unknown" index, shown as tag 0). The unnamed tag goes out under its own value, named "?". */
static void test_field_tasks_keep_their_tags(void)
{
    fresh_stream();
    for (int t = 0; t < 200; t++) {
        snprintf(field_names[t], sizeof field_names[t], "f%03d", t);
        cmprof_stream_task_later(field_tcbs[t], field_names[t]);
    }
    for (int k = 0; k < 4000; k++) {
        int t = (k * 7) % 202;
        field_tick(t < 200 ? t : FIELD_TASKS + (t - 200));
        cmprof_stream_drain(capture, 1);
    }
    cmprof_stream_flush(capture);
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    unsigned unsent;
    CHECK(d.stats.bad_lines == 0 && log.count[EV_PC] == 4000);
    CHECK(field_misattributed(&log, &unsent) == 0 && unsent == 0);
    char unnamed[40];
    snprintf(unnamed, sizeof unnamed, " %08x ?!", (unsigned)(uintptr_t)never_named);
    CHECK(strstr(out, unnamed) != NULL && strstr(out, "@full") == NULL);
    text_free(&d);
    free(log.buf);
    for (int t = 0; t < 200; t++)
        cmprof_stream_task_gone(field_tcbs[t]);
}

/* The tags of version 7's sample lines in text that take more than one character (an index from
 * 37 on, an exception from 64 on); *tags: all of them. */
static unsigned long long_tags(const char *text, unsigned long *tags)
{
    static const char b64s[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
#define B64V(c) ((int)(strchr(b64s, (c)) - b64s))
    unsigned long n = 0;
    *tags = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *end = strchr(p, '!');
        if (*p != '%' || !end || (strchr(p, '\n') && end > strchr(p, '\n')))
            continue;
        for (const char *q = p + 3; q < end;) {
            char c = *q;
            if (c == '=') { /* an entry: head, tag, name (whole or front-coded) */
                int head = B64V(q[1]) << 6 | B64V(q[2]);
                q += 3 + ((head & 0x800) ? 6 : 0);
                if (head & 0x400) {
                    int len = B64V(*q++);
                    q += len < 32 ? len : 1 + B64V(*q);
                }
            } else if ((c >= '?' && c <= 'n') || c == '.' || c == '*') { /* a PC */
                q += c == '*' ? 7 : c == '.' ? 5 : c >= 'O' ? 2 : 3;
            } else { /* a tag */
                size_t k = c == '}' || c == '-' ? 2 : c == '+' || c == '~' ? 3 : 1;
                ++*tags;
                n += k > 1;
                q += k;
            }
        }
    }
#undef B64V
    return n;
}

/* Issue 48: the indexes on the wire go in the order tasks are first sampled, not created. A
 * firmware creates 80 tasks, then only the last 30 run: every one of their tags takes one
 * character (they took two as the slots 37 to 79 of their creation). */
static bool first_sampled_take_short_indexes(void)
{
    fresh_stream();
    static char made_tcbs[80][16], made_names[80][8];
    for (int t = 0; t < 80; t++) {
        snprintf(made_names[t], sizeof made_names[t], "k%02d", t);
        cmprof_stream_task_later(made_tcbs[t], made_names[t]);
    }
    for (int k = 0; k < 3000; k++) {
        test_tag = made_tcbs[50 + (k * 7) % 30];
        cmprof_tick(0x08000100u + 2u * (uint32_t)(k % 40));
        cmprof_stream_drain(capture, 1);
    }
    cmprof_stream_flush(capture);
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    unsigned long tags, longer = long_tags(out, &tags);
    char want[48];
    int wrong = 0;
    for (int k = 0; k < 30; k++) { /* the host still gives each sample its own task */
        snprintf(want, sizeof want, " t=%x/1 ", (unsigned)(uintptr_t)made_tcbs[50 + (k * 7) % 30]);
        wrong += strstr(log.buf, want) == NULL;
    }
    bool ok = d.stats.bad_lines == 0 && log.count[EV_PC] == 3000 && wrong == 0 && tags >= 2900 && longer == 0;
    if (!ok)
        printf("    %lu of %lu tags longer than a character, %d tasks missing, %u samples\n", longer, tags, wrong,
               (unsigned)log.count[EV_PC]);
    text_free(&d);
    free(log.buf);
    return ok;
}

static void test_first_sampled_tasks_take_short_indexes(void)
{
    CHECK(in_child(first_sampled_take_short_indexes)); /* a table no test took slots of yet */
}

/* More tasks than the table holds: the stream says so (@full tasks=N), and the samples of tasks
 * with no slot go out with no tag, which the host counts; none lands on another task's name. */
static void test_full_table_is_said(void)
{
    fresh_stream();
    for (int t = 0; t < FIELD_TASKS; t++) {
        snprintf(field_names[t], sizeof field_names[t], "f%03d", t);
        cmprof_stream_task(capture, field_tcbs[t], field_names[t]);
    }
    for (int k = 0; k < 3200; k++) {
        field_tick((k * 7) % FIELD_TASKS);
        cmprof_stream_drain(capture, 1);
    }
    cmprof_stream_flush(capture);
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    unsigned unsent, wrong = field_misattributed(&log, &unsent);
    CHECK(d.stats.bad_lines == 0 && log.count[EV_PC] == 3200);
    CHECK(wrong == 0 && unsent > 0 && d.stats.unsent_tags == unsent);
    char full[40];
    snprintf(full, sizeof full, "@full tasks=%u!", (unsigned)FIELD_TABLE);
    CHECK(log.count[EV_TABLE_FULL] >= 1 && strstr(out, full) != NULL);
    text_free(&d);
    free(log.buf);
}

/* Whole lines through .write: the same bytes as through putc, one call per line, each ending in
 * a newline. */
static char written[1 << 16];
static size_t written_len, write_calls, whole_lines;

static void write_line(const char *buf, uint32_t len)
{
    write_calls++;
    whole_lines += len > 0 && buf[len - 1] == '\n' && memchr(buf, '\n', len) == buf + len - 1;
    if (written_len + len < sizeof written) {
        memcpy(written + written_len, buf, len);
        written_len += len;
    }
}

static void test_write_sends_whole_lines(void)
{
    char via_putc[sizeof written];
    size_t putc_len = 0;
    for (int pass = 0; pass < 2; pass++) {
        fake_regs_clear();
        out_len = written_len = write_calls = whole_lines = 0;
        test_tag = motor_name;
        struct cmprof_stream_info i = info;
        if (pass)
            i.write = write_line;
        cmprof_start(10u, 0u);
        cmprof_stream_announce(pass ? NULL : capture, &i);
        cmprof_stream_task(pass ? NULL : capture, motor_name, motor_name);
        for (unsigned k = 0; k < 250u; k++) {
            cmprof_tick(0x08000100u + 2u * (k % 7u));
            cmprof_stream_drain(pass ? NULL : capture, 1);
        }
        cmprof_stream_flush(pass ? NULL : capture);
        if (!pass) {
            memcpy(via_putc, out, out_len);
            putc_len = out_len;
        }
    }
    CHECK(out_len == 0 && written_len == putc_len && memcmp(written, via_putc, putc_len) == 0);
    CHECK(write_calls > 16 && whole_lines == write_calls);
    struct evlog log;
    struct text_decoder d;
    host_decode(written, written_len, &log, &d);
    CHECK(log.count[EV_PC] == 250 && d.stats.bad_checks == 0);
    text_free(&d);
    free(log.buf);
    cmprof_stream_announce(capture, &info); /* the next tests write through putc again */
}

/* Version 6's PC forms, firmware to host: 3 characters within 512 KB of the base, '.' and 4 to 32
 * MB, '*' and 6 base64 characters for the rest (past 32 MB, below the base, odd, RAM, 0); each PC
 * back exactly, in order, with its task; the line's first sample and each change carry the tag. */
static void test_every_pc_form_round_trips(void)
{
    static const uint32_t pcs[] = {0x08000100u, 0x0807FFFEu, 0x08080000u, 0x09FFFFFEu, 0x0A000000u,
                                   0x07FFFFFEu, 0x08000101u, 0x20001000u, 0x00000000u, 0x08000002u,
                                   0x0803FFFEu, 0x08040000u, 0xFFFFFFFEu, 0x08000104u, 0x08000106u, 0x08000108u};
    fake_regs_clear();
    out_len = 0;
    test_tag = motor_name;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(capture, &info);
    cmprof_stream_task(capture, motor_name, motor_name);
    for (unsigned k = 0; k < 32u; k++) {
        test_tag = k % 5u == 4u ? NULL : motor_name; /* a tag change now and then */
        cmprof_tick(pcs[k % 16u]);
    }
    cmprof_stream_flush(capture);
    CHECK(strstr(out, ".@???") != NULL && strstr(out, "*AKAAAA") != NULL); /* 0x08080000, 0x0A000000 */
    struct evlog log;
    struct text_decoder d;
    host_decode(out, out_len, &log, &d);
    CHECK(log.count[EV_PC] == 32 && d.stats.bad_lines == 0 && d.stats.bad_checks == 0);
    int in_order = 1;
    const char *p = log.buf;
    for (unsigned k = 0; k < 32u && p; k++) {
        char want[40];
        snprintf(want, sizeof want, "a=%08x t=%x/1", (unsigned)pcs[k % 16u],
                 k % 5u == 4u ? 0u : (unsigned)(uintptr_t)motor_name);
        p = strstr(p, want);
        in_order &= p != NULL;
        p = p ? p + 1 : NULL;
    }
    CHECK(in_order);
    /* the same events fed byte by byte, and split in two at every byte */
    int same = 1;
    for (size_t cut = 0; cut <= out_len; cut++) {
        struct evlog other;
        struct text_decoder d2;
        memset(&other, 0, sizeof other);
        struct ev_sink sink = {evlog_event, &other};
        text_init(&d2);
        if (cut == out_len) {
            for (size_t i = 0; i < out_len; i++)
                text_feed(&d2, (const uint8_t *)out + i, 1, &sink);
        } else {
            text_feed(&d2, (const uint8_t *)out, cut, &sink);
            text_feed(&d2, (const uint8_t *)out + cut, out_len - cut, &sink);
        }
        text_finish(&d2, &sink);
        text_free(&d2);
        same &= evlog_equal(&log, &other);
        free(other.buf);
    }
    CHECK(same);
    text_free(&d);
    free(log.buf);
    test_tag = NULL;
}

int main(void)
{
    RUN_TEST(test_first_sampled_tasks_take_short_indexes); /* first: on a table no test used yet */
    RUN_TEST(test_create_after_reuse_takes_a_few_steps);
    RUN_TEST(test_announce_repeats_every_second);
    RUN_TEST(test_late_host_places_samples_within_a_second);
    RUN_TEST(test_late_host_at_any_byte_loses_nothing);
    RUN_TEST(test_a_line_lost_whole_is_said);
    RUN_TEST(test_repeat_lines_decode_whole_or_not_at_all);
    RUN_TEST(test_repeats_resolve_pending_samples);
#if defined(CMPROF_RESERVOIR_N) && CMPROF_RESERVOIR_N == 0
    RUN_TEST(test_loss_triggers_an_announce);
#else
    RUN_TEST(test_full_ring_keeps_a_uniform_subsample);
    RUN_TEST(test_flush_after_the_limit_sends_the_reservoir);
#endif
    RUN_TEST(test_interrupt_samples_are_named);
    RUN_TEST(test_own_announces_keep_interrupt_names_repeated);
    RUN_TEST(test_names_from_kernel_hooks);
    RUN_TEST(test_reused_control_block_keeps_samples_apart);
    RUN_TEST(test_block_reused_twice_before_a_drain);
    RUN_TEST(test_a_late_host_never_gives_the_old_samples_a_new_name);
    RUN_TEST(test_deleted_before_the_drain_keeps_its_name);
    RUN_TEST(test_take_copies_in_order_across_the_wrap);
    RUN_TEST(test_write_sends_whole_lines);
    RUN_TEST(test_every_pc_form_round_trips);
    RUN_TEST(test_create_and_delete_take_a_few_steps);
    RUN_TEST(test_field_tasks_keep_their_tags);
#if defined(CMPROF_STREAM_TASKS) && CMPROF_STREAM_TASKS > 62
    RUN_TEST(test_hundreds_of_tasks_come_and_go);
#endif
    RUN_TEST(test_full_table_is_said); /* last: it fills the table */
    return check_summary();
}
