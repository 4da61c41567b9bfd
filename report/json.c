/* -o json: one document with the run's figures, the decoders' counters, the sections and the rows
 * (with callers and callees when the samples carried stacks). --diff reads it back (baseline.c). */
#include "emit.h"

static void json_field(FILE *out, const char *key, const char *value)
{
    fprintf(out, "  \"%s\": ", key);
    emit_json_string(out, value);
    fputs(",\n", out);
}

/* Every decoder's counters, named by the decoders. */
static void decoder(const struct ingest *in, FILE *out)
{
    struct dec_counter c[INGEST_COUNTERS];
    size_t n = ingest_counters(in, c);
    fputs("  \"decoder\": {", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s\"%s\": %llu", i ? ", " : "", c[i].name, (unsigned long long)c[i].value);
    fputs("},\n", out);
}

/* The source's failures: what ended the run, counts, and each distinct reason with its count. */
static void partial(const struct report_partial *pa, FILE *out)
{
    fputs("  \"partial\": {\"reason\": ", out);
    emit_json_string(out, pa->reason);
    fprintf(out, ", \"failures\": %u, \"reconnects\": %u, \"lost_seconds\": %.3f, \"reasons\": [",
            pa->failures, pa->reconnects, pa->lost_s);
    for (size_t i = 0; i < pa->n_reasons; i++) {
        fputs(i ? ", {\"reason\": " : "{\"reason\": ", out);
        emit_json_string(out, pa->reasons[i]);
        fprintf(out, ", \"times\": %u}", pa->times[i]);
    }
    fputs("]},\n", out);
}

/* How the run went: stopped early, the profiler's own share, what halting cost, what was lost. */
static void run(const struct report_data *d, FILE *out)
{
    const struct report_options *o = d->o;
    struct ingest_counts c;
    ingest_counts(d->in, &c);
    if (o->interrupted)
        fprintf(out, "  \"interrupted\": \"%s\",\n", o->interrupted);
    if (o->stalled) {
        fputs("  \"stalled\": ", out);
        emit_json_string(out, o->stalled);
        fputs(",\n", out);
    }
    if (o->partial)
        partial(o->partial, out);
    double polls, overhead = prof_overhead(d->p, &polls);
    fprintf(out, "  \"overhead\": %.4f,\n  \"overhead_idle_polls\": %.4f,\n", 100.0 * overhead, 100.0 * polls);
    if (prof_idle(d->p) >= 0)
        fprintf(out, "  \"idle\": %.4f,\n", 100.0 * prof_idle(d->p));
    if (o->halting)
        fprintf(out, "  \"halting\": {\"rate\": %.1f, \"halted_percent\": %.2f},\n", o->halt_rate,
                100.0 * o->halted_share);
    if (o->source_detail && *o->source_detail)
        json_field(out, "source_detail", o->source_detail);
    fprintf(out, "  \"lost\": %llu,\n  \"missing\": %llu,\n  \"past_limit\": %llu,\n  \"losses\": [",
            (unsigned long long)c.lost, (unsigned long long)c.missing, (unsigned long long)c.past_limit);
    for (size_t i = 0; i < d->n_loss; i++) {
        fputs(i ? ", " : "", out);
        emit_json_string(out, d->losses[i]);
    }
    fputs("],\n  \"notes\": [", out); /* no loss: how the trace was read (other sources skipped...) */
    for (size_t i = 0; i < d->n_notes; i++) {
        fputs(i ? ", " : "", out);
        emit_json_string(out, d->notes[i]);
    }
    fputs("],\n", out);
    struct ingest_joined j; /* samples skipped joining a running stream: not in losses */
    ingest_joined(d->in, &j, NULL, 0);
    fprintf(out, "  \"joined\": {\"skipped\": %llu, \"before_announce\": %llu, \"before_pages\": %llu, "
            "\"bytes\": %llu},\n", (unsigned long long)j.skipped, (unsigned long long)j.before_announce,
            (unsigned long long)j.before_pages, (unsigned long long)j.bytes);
    if (prof_effective_n(d->p) < prof_total(d->p)) /* weighted samples: what the intervals rest on */
        fprintf(out, "  \"effective_samples\": %.1f,\n", prof_effective_n(d->p));
    if (prof_lost(d->p)) { /* a bound on every share: the loss is never a random subset */
        double taken = prof_total(d->p) + (double)prof_lost(d->p);
        fprintf(out, "  \"loss_bias\": {\"lost\": %llu, \"taken\": %.0f, \"max_points\": %.4f},\n",
                (unsigned long long)prof_lost(d->p), taken, 100.0 * (double)prof_lost(d->p) / taken);
    }
}

/* Whether the samples are the ELF's program's (batch exits 5 when not), and why the firmware sent
 * none when it announced a sampler ("quiet": "no_samples" or "no_announce", with its sentence). */
static void trust(const struct report_data *d, const struct prof_trust *t, FILE *out)
{
    fprintf(out, "  \"wrong_elf\": %s,\n  \"wrong_elf_causes\": [", t->wrong_elf ? "true" : "false");
    const char *causes[3];
    size_t n = 0;
    if (t->build_id)
        causes[n++] = "build_id";
    if (t->outside)
        causes[n++] = "outside_code";
    if (t->not_starts)
        causes[n++] = "not_starts";
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s\"%s\"", i ? ", " : "", causes[i]);
    fprintf(out, "],\n  \"outside_code_percent\": %.4f,\n  \"pc_zero_percent\": %.4f,\n", 100.0 * t->outside_share,
            100.0 * t->zero_share);
    char text[600];
    enum ingest_quiet q = ingest_quiet(d->in, text, sizeof text);
    fputs("  \"quiet\": ", out);
    if (q == INGEST_QUIET_NONE) {
        fputs("null,\n", out);
        return;
    }
    fprintf(out, "{\"cause\": \"%s\", \"text\": ", ingest_quiet_name(q));
    emit_json_string(out, text);
    fputs("},\n", out);
}

/* What the firmware announced about itself, and the sampled PCs against the ELF's code. */
static void firmware(const struct report_data *d, FILE *out)
{
    const struct prof_stream_info *info = prof_stream_info(d->p);
    if (info->present) {
        fprintf(out,
                "  \"stream\": {\"clock_hz\": %llu, \"timer_hz\": %llu, \"period\": %llu, \"jitter\": %llu, "
                "\"code_base\": %u, \"build_id\": \"%s\", \"arch\": ",
                (unsigned long long)info->clock_hz, (unsigned long long)info->timer_hz,
                (unsigned long long)info->period, (unsigned long long)info->jitter, info->code_base, info->build_id);
        emit_json_string(out, info->arch);
        fputs(", \"timer\": ", out);
        emit_json_string(out, info->timer);
        fputs("},\n", out);
    }
    struct ingest_counts c; /* the firmware's stack evidence, and why no stacks */
    ingest_counts(d->in, &c);
    const struct ingest_stacks *st = &c.stacks;
    char note[300];
    ingest_stacks_note(d->in, note, sizeof note);
    fprintf(out, "  \"stacks\": {\"samples\": %.0f, \"evidence\": %llu, \"unwound\": %llu, \"unproven\": %llu, "
            "\"unmatched\": %llu, \"note\": ", prof_stack_samples(d->p), (unsigned long long)st->evidence,
            (unsigned long long)st->unwound, (unsigned long long)st->unproven, (unsigned long long)st->unmatched);
    emit_json_string(out, note);
    fputs("},\n", out);
    struct prof_code_check cc;
    prof_check_code(d->p, &cc);
    struct prof_trust t;
    prof_trust(d->p, &t);
    if (cc.checked) /* the sampled PCs against the ELF's instruction starts; wrong_elf: any sign, as below */
        fprintf(out, "  \"code_check\": {\"pcs\": %zu, \"bad_pcs\": %zu, \"bad_percent\": %.4f, \"not_starts\": %s, "
                "\"wrong_elf\": %s, \"buckets\": %s},\n", cc.pcs, cc.bad_pcs, 100.0 * cc.share,
                cc.wrong ? "true" : "false", t.wrong_elf ? "true" : "false", cc.buckets ? "true" : "false");
    trust(d, &t, out);
}

static void section_events(const struct prof *p, const struct prof_section *s, FILE *out)
{
    fputs(", \"events\": [", out);
    for (int k = 0, first = 1; k < PROF_SECTION_EVENTS; k++) {
        const struct prof_section_event *e = &s->ev[k];
        if (!e->seen)
            continue;
        const char *en = prof_event_name(p, e->event);
        fprintf(out, "%s{\"event\": %u, \"name\": ", first ? "" : ", ", (unsigned)e->event);
        emit_json_string(out, en ? en : "");
        fprintf(out, ", \"current\": %llu, \"min\": %llu, \"max\": %llu, \"sum\": %llu}",
                (unsigned long long)e->current, (unsigned long long)e->min, (unsigned long long)e->max,
                (unsigned long long)e->sum);
        first = 0;
    }
    fputs("]", out);
}

static void sections(const struct prof *p, FILE *out)
{
    fputs("  \"sections\": [", out);
    for (int i = 0, first = 1; i < PROF_SECTIONS; i++) {
        const struct prof_section *s = prof_section(p, i);
        if (!s->seen)
            continue;
        fprintf(out, "%s{\"index\": %d, \"name\": ", first ? "" : ", ", i);
        emit_json_string(out, s->name);
        fprintf(out, ", \"count\": %llu, \"current\": %llu, \"min\": %llu, \"max\": %llu, \"sum\": %llu",
                (unsigned long long)s->count, (unsigned long long)s->current, (unsigned long long)s->min,
                (unsigned long long)s->max, (unsigned long long)s->sum);
        fprintf(out, ", \"long_runs\": %llu", (unsigned long long)s->long_runs);
        section_events(p, s, out);
        double ipc = prof_section_ipc(p, s);
        if (ipc >= 0)
            fprintf(out, ", \"ipc\": %.4f", ipc);
        fputs("}", out);
        first = 0;
    }
    fputs("],\n", out);
}

/* A function row's callers (up) or callees, from the samples' call stacks. */
static void calls(FILE *out, struct prof *p, const char *function, bool up, bool demangle)
{
    const struct prof_call *c;
    double total;
    size_t n = prof_calls(p, function, up, &c, &total);
    fprintf(out, ", \"%s\": [", up ? "callers" : "callees");
    for (size_t k = 0; k < n; k++) {
        char num[32];
        emit_samples(num, sizeof num, c[k].samples);
        fprintf(out, "%s{\"name\": ", k ? ", " : "");
        emit_json_string(out, sym_shown_name(prof_symbols(p), c[k].name, demangle));
        fprintf(out, ", \"samples\": %s, \"percent\": %.4f, \"lo95\": %.4f, \"hi95\": %.4f}", num,
                100.0 * c[k].share, 100.0 * c[k].lo95, 100.0 * c[k].hi95);
    }
    fputs("]", out);
}

/* Samples lost in the firmware: the row's share of the time lies in this range, whatever they were. */
static void loss_bound(struct prof *p, const struct prof_row *r, FILE *out)
{
    double lo, hi;
    if (prof_loss_bound(p, r->samples, &lo, &hi))
        fprintf(out, ", \"loss_lo\": %.4f, \"loss_hi\": %.4f, \"loss_beyond_ci\": %s", 100.0 * lo, 100.0 * hi,
                prof_loss_beyond(p, r) ? "true" : "false");
}

static void row(const struct report_data *d, size_t i, FILE *out)
{
    const struct report_options *o = d->o;
    const struct prof_row *r = &d->rows[i];
    char buf[32];
    emit_samples(buf, sizeof buf, r->samples); /* an integer when it is one */
    fprintf(out, "    {\"samples\": %s, \"percent\": %.4f, \"ci95\": %.4f, \"lo95\": %.4f, \"hi95\": %.4f, "
            "\"name\": ", buf, 100.0 * r->share, 100.0 * r->ci95, 100.0 * r->lo95, 100.0 * r->hi95);
    emit_json_string(out, emit_row_name(o, d->p, r));
    fputs(", \"file\": ", out);
    emit_json_string(out, r->file ? r->file : "");
    fprintf(out, ", \"line\": %u, \"approximate\": %s", r->line, r->approximate ? "true" : "false");
    loss_bound(d->p, r, out);
    if (r->instances > 1) /* one row per task name: the tasks (tags) that had it */
        fprintf(out, ", \"instances\": %u", (unsigned)r->instances);
    if (o->base) {
        struct baseline_delta delta = emit_compare_row(o, d->p, r, d->n);
        fprintf(out, ", \"base_percent\": %.4f, \"delta\": %.4f, \"z\": %.2f, \"significant\": %s",
                100.0 * delta.base_share, 100.0 * delta.delta, delta.z, delta.significant ? "true" : "false");
    }
    if (o->by == PROF_BY_FUNCTION && prof_has_stacks(d->p))
        for (int up = 1; up >= 0; up--)
            calls(out, d->p, r->name, up, d->o->demangle);
    fprintf(out, "}%s\n", i + 1 < d->n ? "," : "");
}

/* A snapshot's "snapshot" member: what it is of. */
static void snapshot(const struct report_snapshot *s, FILE *out)
{
    fputs("  \"snapshot\": {\"source\": ", out);
    emit_json_string(out, s->source);
    fputs(", \"elf\": ", out);
    emit_json_string(out, s->elf);
    fputs(", \"build_id\": ", out);
    emit_json_string(out, s->build_id);
    fprintf(out, ", \"from_s\": %.1f, \"to_s\": %.1f, \"window_s\": %.1f, \"saved\": ", s->from_s, s->to_s,
            s->window_s);
    emit_json_string(out, s->saved_at);
    fputs("},\n", out);
}

void report_json(const struct report_data *d, FILE *out)
{
    char buf[32];
    emit_samples(buf, sizeof buf, prof_total(d->p));
    fputs("{\n", out);
    if (d->o->snapshot)
        snapshot(d->o->snapshot, out);
    fprintf(out, "  \"total\": %s,\n  \"sleep\": %llu,\n  \"format\": \"%s\",\n  \"group\": \"%s\",\n", buf,
            (unsigned long long)prof_sleep(d->p),
            d->o->source_format ? d->o->source_format : detect_name(ingest_format(d->in)), report_group_name(d->o->by));
    decoder(d->in, out);
    run(d, out);
    firmware(d, out);
    sections(d->p, out);
    fputs("  \"warnings\": [", out);
    if (d->warning && *d->warning)
        emit_json_string(out, d->warning);
    fputs("],\n  \"diagnostics\": [", out);
    char quiet[600]; /* the table's first '!' line, first here too */
    bool q = ingest_quiet(d->in, quiet, sizeof quiet) != INGEST_QUIET_NONE;
    if (q)
        emit_json_string(out, quiet);
    for (size_t i = 0; i < d->nd; i++) {
        fputs(i || q ? ", " : "", out);
        emit_json_string(out, d->diags[i].text);
    }
    fputs("],\n  \"rows\": [\n", out);
    for (size_t i = 0; i < d->n; i++)
        row(d, i, out);
    fputs("  ]\n}\n", out);
}
