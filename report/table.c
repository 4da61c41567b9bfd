/* -o table (the default): the rows as aligned text, then what the run said about itself. */
#include "emit.h"

#include <math.h>
#include <string.h>

static void header(const struct report_data *d, FILE *out)
{
    const struct report_options *o = d->o;
    char buf[32];
    emit_samples(buf, sizeof buf, prof_total(d->p));
    fprintf(out, "samples %s (by %s%s), format %s\n", buf, report_group_name(o->by),
            o->inline_frames ? "" : ", no inline", o->source_format ? o->source_format : detect_name(ingest_format(d->in)));
    if (o->base)
        fprintf(out, "  %7s  %7s  %15s  %9s  %8s %8s  %s\n", "share", "±95%", "95% interval", "samples", "base",
                "change", "name");
    else
        fprintf(out, "  %7s  %7s  %15s  %9s  %s\n", "share", "±95%", "95% interval", "samples", "name");
}

static void row(const struct report_data *d, const struct prof_row *r, FILE *out)
{
    const struct report_options *o = d->o;
    char buf[32], interval[32];
    emit_samples(buf, sizeof buf, r->samples);
    snprintf(interval, sizeof interval, "%.2f-%.2f%%", 100.0 * r->lo95, 100.0 * r->hi95);
    fprintf(out, "  %6.2f%%  %6.2f%%  %15s  %9s  ", 100.0 * r->share, 100.0 * r->ci95, interval, buf);
    if (o->base) { /* '*': significant at 95 % over all the rows compared */
        struct baseline_delta delta = emit_compare_row(o, d->p, r, d->n);
        fprintf(out, "%7.2f%% %+7.2f%s ", 100.0 * delta.base_share, 100.0 * delta.delta,
                delta.significant ? "*" : " ");
    }
    emit_terminal(out, emit_row_name(o, d->p, r));
    if (r->file && o->by == PROF_BY_FUNCTION) {
        fputs("  ", out);
        emit_terminal(out, path_base(r->file));
    }
    if (r->instances > 1) /* one row per task name */
        fprintf(out, "  (%u task handles)", (unsigned)r->instances);
    double lo, hi;
    if (prof_loss_beyond(d->p, r) && prof_loss_bound(d->p, r->samples, &lo, &hi)) /* the lost samples' reach */
        fprintf(out, "  (with the lost: %.2f-%.2f%%)", 100.0 * lo, 100.0 * hi);
    fprintf(out, "%s%s\n", r->inlined && o->by == PROF_BY_FUNCTION ? "  (inlined)" : "",
            r->approximate ? "  (approximate: bucket straddles a function boundary)" : "");
}

/* A section's PMU events per run, as counts, under its timing line. */
static void section_events(const struct prof *p, const struct prof_section *s, FILE *out)
{
    for (int k = 0; k < PROF_SECTION_EVENTS; k++) {
        const struct prof_section_event *e = &s->ev[k];
        if (!e->seen)
            continue;
        char ev[40];
        const char *en = prof_event_name(p, e->event);
        if (en)
            snprintf(ev, sizeof ev, "  %s", en);
        else
            snprintf(ev, sizeof ev, "  event 0x%02x", (unsigned)e->event);
        fprintf(out, "  %-20s %10s %10llu %10llu %10llu %10.1f\n", ev, "", (unsigned long long)e->current,
                (unsigned long long)e->min, (unsigned long long)e->max,
                s->count ? (double)e->sum / (double)s->count : 0.0);
    }
}

/* Section timings, by name: in microseconds when the clock is known, else in timer ticks. */
static void sections(const struct prof *p, FILE *out)
{
    const struct prof_stream_info *info = prof_stream_info(p);
    double hz = info->present ? (double)(info->section_hz ? info->section_hz : info->clock_hz) : 0;
    double scale = hz > 0 ? 1e6 / hz : 1;
    bool any = false;
    for (int i = 0; i < PROF_SECTIONS; i++) {
        const struct prof_section *s = prof_section(p, i);
        if (!s->seen)
            continue;
        if (!any)
            fprintf(out, "sections (%s):\n  %-20s %10s %10s %10s %10s %10s\n",
                    hz > 0 ? "\u00b5s" : "timer ticks: the clock was not announced", "name", "count", "current", "min",
                    "max", "mean");
        any = true;
        char name[40];
        if (s->name[0])
            snprintf(name, sizeof name, "%s", s->name);
        else
            snprintf(name, sizeof name, "section %d", i); /* a dump names none */
        fprintf(out, "  %-20s %10llu %10.2f %10.2f %10.2f %10.2f\n", name, (unsigned long long)s->count,
                (double)s->current * scale, (double)s->min * scale, (double)s->max * scale,
                s->count ? (double)s->sum / (double)s->count * scale : 0.0);
        if (s->long_runs)
            fprintf(out, "  ! %llu run%s past the timer's range (2^32 ticks): current and max read at most the "
                    "range, the mean is exact\n", (unsigned long long)s->long_runs, s->long_runs == 1 ? "" : "s");
        section_events(p, s, out);
        double ipc = prof_section_ipc(p, s);
        if (ipc >= 0)
            fprintf(out, "  %-20s %10s %10.3f\n", "  IPC (mean)", "", ipc);
    }
}

void report_source_advice(FILE *out, const char *detail, const char *prefix)
{
    for (const char *c = strstr(detail, "; "); c; c = strstr(c + 2, "; ")) {
        const char *next = strstr(c + 2, "; ");
        fprintf(out, "%swarning: %.*s\n", prefix, (int)(next ? next - (c + 2) : (ptrdiff_t)strlen(c + 2)), c + 2);
    }
}

/* What the source, the firmware and the decoders said about the run. */
static void footer(const struct report_data *d, FILE *out)
{
    const struct report_options *o = d->o;
    struct prof *p = d->p;
    if (o->halting) {
        /* the source's figures, then its advice: a clause after each "; " (a server too slow, a reset) */
        const char *det = o->source_detail ? o->source_detail : "", *semi = strstr(det, "; ");
        const char *most = strstr(det, ", at most "), *end = semi ? semi : det + strlen(det);
        fprintf(out, "halting: %.*f halts/s, the core halted %.1f %% of the time", o->halt_rate < 10 ? 2 : 0,
                o->halt_rate, 100.0 * o->halted_share);
        if (most && most < end) /* the longest halt, and how long the server took to stop the core */
            fprintf(out, ", %.*s", (int)(end - most - 2), most + 2);
        fputc('\n', out);
        report_source_advice(out, det, "");
    } else if (o->source_detail && *o->source_detail) {
        fprintf(out, "source: %s\n", o->source_detail);
    }
    double polls, overhead = prof_overhead(p, &polls);
    if (overhead > 0 || polls > 0) {
        fprintf(out, "profiler overhead: %s%.2f %%, the samples in cmprof's own firmware code outside the "
                "sampling interrupt (which cannot sample itself: its cost comes on top)",
                overhead < 0.99995 ? "more than " : "", 100.0 * overhead); /* (all of them: a wrong ELF's) */
        if (polls > 0)
            fprintf(out, " (the drain's idle polls, %.2f %%, counted as idle)", 100.0 * polls);
        fputc('\n', out);
    }
    if (prof_idle(p) >= 0)
        fprintf(out, "idle: %.2f %% of samples in the idle task\n", 100.0 * prof_idle(p));
    for (size_t i = 0; i < d->n_loss; i++)
        fprintf(out, "lost: %s\n", d->losses[i]);
    for (size_t i = 0; i < d->n_notes; i++) /* no loss: how the trace was read */
        fprintf(out, "note: %s\n", d->notes[i]);
    if (o->by == PROF_BY_TASK && prof_rows_untagged(d->rows, d->n))
        fprintf(out, "note: no sample carries a task: a firmware stream tells tasks when built with CMPROF_TAG "
                "(docs/firmware.md), a gdb: source with --task-var; an ITM trace has none\n");
    char joined[INGEST_LOSS_TEXT + 100];
    struct ingest_joined j;
    ingest_joined(d->in, &j, joined, sizeof joined);
    if (j.skipped || j.bytes) /* where the profile begins: no loss */
        fprintf(out, "%s\n", joined);
    if (prof_effective_n(p) < prof_total(p)) /* the firmware's full ring kept a weighted subsample */
        fprintf(out, "weighted: some samples stand for many taken while the firmware's ring was full; the "
                "intervals rest on %.0f effective samples\n", prof_effective_n(p));
    if (o->interrupted)
        fprintf(out, "interrupted by %s: the samples up to then\n", o->interrupted);
    if (o->stalled)
        fprintf(out, "stalled: %s\n", o->stalled);
    if (o->partial) {
        const struct report_partial *pa = o->partial;
        fputs("partial: the source failed: ", out);
        emit_terminal(out, pa->reason);
        fputc('\n', out);
        if (pa->failures > 1 || pa->reconnects > 0) /* (one failure that ended the run: said above) */
            fprintf(out, "partial: %u failure%s, %u reconnect%s, %.1f s without the source\n", pa->failures,
                    pa->failures == 1 ? "" : "s", pa->reconnects, pa->reconnects == 1 ? "" : "s", pa->lost_s);
        for (size_t i = 0; i < pa->n_reasons && pa->n_reasons > 1; i++) {
            fprintf(out, "  failed %u time%s: ", pa->times[i], pa->times[i] == 1 ? "" : "s");
            emit_terminal(out, pa->reasons[i]);
            fputc('\n', out);
        }
    }
}

/* What makes the rows doubtful, first, where a reader (and a CI log's first lines) sees it: why the
 * firmware sent no samples, then the diagnostics (a wrong ELF, lockstep, skid...). */
static void doubts(const struct report_data *d, FILE *out)
{
    char quiet[600];
    if (ingest_quiet(d->in, quiet, sizeof quiet) != INGEST_QUIET_NONE)
        fprintf(out, "! %s\n", quiet);
    for (size_t i = 0; i < d->nd; i++)
        fprintf(out, "! %s\n", d->diags[i].text);
}

/* A snapshot's first line: what it is of. */
static void snapshot_line(const struct report_snapshot *s, FILE *out)
{
    fputs("snapshot of ", out);
    emit_terminal(out, s->source);
    fputs(" with ", out);
    emit_terminal(out, s->elf);
    if (s->build_id[0])
        fprintf(out, " (build-id %s)", s->build_id);
    fprintf(out, ", %02d:%02d to %02d:%02d, %s", (int)(s->from_s / 60), (int)fmod(s->from_s, 60), (int)(s->to_s / 60),
            (int)fmod(s->to_s, 60), s->window_s > 0 ? "the last seconds" : "cumulative");
    if (s->window_s > 0)
        fprintf(out, " (%.0f s)", s->window_s);
    fprintf(out, ", saved %s\n", s->saved_at);
}

void report_table(const struct report_data *d, FILE *out)
{
    if (d->o->snapshot)
        snapshot_line(d->o->snapshot, out);
    doubts(d, out);
    header(d, out);
    for (size_t i = 0; i < d->n; i++)
        row(d, &d->rows[i], out);
    if (prof_sleep(d->p))
        fprintf(out, "sleeping: %llu samples\n", (unsigned long long)prof_sleep(d->p));
    sections(d->p, out);
    footer(d, out);
}
