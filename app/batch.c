/* Batch mode: source -> ingest -> profile -> report on stdout. */
#include "batch.h"

#include "baseline.h"
#include "speedscope.h"
#include "stop.h"

#include "../profile/ingest.h"
#include "../profile/escape.h"
#include "../report/exports.h"
#include "../symbols/symbols.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *group_name(enum prof_group g)
{
    static const char *const names[] = {"function", "line", "file", "task"};
    return names[g];
}

/* A JSON string; bytes that are not valid UTF-8 become U+FFFD, so the document always parses. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        size_t k = esc_char_len(s);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (k)
            fwrite(s, 1, k, out);
        else if (c < 0x20 || c == 0x7F)
            fprintf(out, "\\u%04x", c);
        else if (c == 0xC2 && ((unsigned char)s[1] & 0xC0) == 0x80) { /* a C1 control, U+0080..U+009F */
            fprintf(out, "\\u%04x", (unsigned char)s[1]);
            k = 2;
        }
        else
            fputs("\\ufffd", out);
        s += k ? k : 1;
    }
    fputc('"', out);
}

/* A name for the terminal: control and invalid bytes as \xNN, so no escape sequence gets through. */
static void print_name(FILE *out, const char *s)
{
    char buf[1024];
    esc_text(buf, sizeof buf, s, NULL);
    fputs(buf, out);
}

static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void fmt_samples(char *buf, size_t len, double v)
{
    if (v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.2f", v);
}

static const char *basename_of(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path ? path : "");
}

struct folded_ctx {
    FILE *out;
};

static void print_folded(void *ctx, const char *stack, double count)
{
    struct folded_ctx *f = ctx;
    char n[32];
    fmt_samples(n, sizeof n, count);
    fprintf(f->out, "%s %s\n", stack, n);
}

/* Function rows are keyed by linkage name (overloads stay apart); -C shows them demangled. */
static const char *row_name(const struct batch_options *o, struct prof *p, const struct prof_row *r)
{
    return o->demangle && o->by == PROF_BY_FUNCTION ? sym_demangle(prof_symbols(p), r->name) : r->name;
}

/* A row against the baseline: its share then and now, and whether the change is significant
 * (two-proportion test, Bonferroni over the n rows of this report). */
static struct baseline_delta compare_row(const struct batch_options *o, struct prof *p, const struct prof_row *r,
                                         size_t n)
{
    double kb = baseline_samples(o->base, row_name(o, p, r));
    return baseline_compare(r->samples, prof_total(p), kb, o->base->total, n);
}

int batch_regressions(const struct batch_options *o, struct prof *p, FILE *err)
{
    if (!o->base || o->fail_if_slower <= 0)
        return 0;
    const struct prof_row *rows;
    prof_fold_overhead(p, o->fold_overhead);
    size_t n = prof_rows(p, o->by, o->inline_frames, &rows);
    int worse = 0;
    for (size_t i = 0; i < n; i++) {
        struct baseline_delta d = compare_row(o, p, &rows[i], n);
        /* growth relative to the baseline's share; a row the baseline lacks grew without bound */
        double growth = d.base_share > 0 ? d.delta / d.base_share : (d.delta > 0 ? INFINITY : 0);
        if (d.significant && d.delta > 0 && growth > o->fail_if_slower / 100.0) {
            fprintf(err, "cmprof-top: %s grew from %.2f %% to %.2f %% (+%.0f %%, z = %.1f): more than --fail-if-slower %g\n",
                    row_name(o, p, &rows[i]), 100.0 * d.base_share, 100.0 * rows[i].share,
                    isinf(growth) ? 100.0 : 100.0 * growth, d.z, o->fail_if_slower);
            worse++;
        }
    }
    return worse;
}

void batch_warnings(const struct batch_options *o, struct prof *p, const struct ingest *in, FILE *err)
{
    struct prof_diag diags[16];
    for (size_t i = 0, nd = prof_diagnose(p, diags, 16); i < nd; i++)
        if (diags[i].kind == DIAG_NOT_STARTS) /* a profile of the wrong code can look plausible */
            fprintf(err, "cmprof-top: warning: %s\n", diags[i].text);
    char why[300];
    if (o->base && baseline_other_build(o->base, in->info.build_id, why, sizeof why))
        fprintf(err, "cmprof-top: warning: %s\n", why);
}

/* Section timings, by name: in microseconds when the clock is known, else in timer ticks. */
static void print_sections(FILE *out, const struct ingest *in)
{
    double hz = in->info.present ? (double)(in->info.section_hz ? in->info.section_hz : in->info.clock_hz) : 0;
    double scale = hz > 0 ? 1e6 / hz : 1;
    bool any = false;
    for (int i = 0; i < INGEST_SECTIONS; i++) {
        const struct ingest_section *s = &in->section[i];
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
        for (int k = 0; k < INGEST_SECTION_EVENTS; k++) { /* PMU events per run, as counts */
            const struct ingest_section_event *e = &s->ev[k];
            if (!e->seen)
                continue;
            char ev[40];
            const char *en = ingest_event_name(e->event);
            if (en)
                snprintf(ev, sizeof ev, "  %s", en);
            else
                snprintf(ev, sizeof ev, "  event 0x%02x", (unsigned)e->event);
            fprintf(out, "  %-20s %10s %10llu %10llu %10llu %10.1f\n", ev, "", (unsigned long long)e->current,
                    (unsigned long long)e->min, (unsigned long long)e->max,
                    s->count ? (double)e->sum / (double)s->count : 0.0);
        }
        double ipc = ingest_section_ipc(in, s);
        if (ipc >= 0)
            fprintf(out, "  %-20s %10s %10.3f\n", "  IPC (mean)", "", ipc);
    }
}

/* A function row's callers (up) or callees, from the samples' call stacks. */
static void print_calls(FILE *out, struct prof *p, const char *function, bool up)
{
    const struct prof_call *c;
    double total;
    size_t n = prof_calls(p, function, up, &c, &total);
    fprintf(out, ", \"%s\": [", up ? "callers" : "callees");
    for (size_t k = 0; k < n; k++) {
        char num[32];
        fmt_samples(num, sizeof num, c[k].samples);
        fprintf(out, "%s{\"name\": ", k ? ", " : "");
        json_string(out, c[k].name);
        fprintf(out, ", \"samples\": %s, \"percent\": %.4f, \"lo95\": %.4f, \"hi95\": %.4f}", num,
                100.0 * c[k].share, 100.0 * c[k].lo95, 100.0 * c[k].hi95);
    }
    fputs("]", out);
}

void batch_report(const struct batch_options *o, struct prof *p, const struct ingest *in, const char *warning,
                  FILE *out)
{
    if (o->output >= OUT_PPROF) { /* other tools' formats (report/exports.h) */
        struct exports_options eo = {o->elf, o->source, o->demangle};
        char why[200];
        if (exports_write((enum exports_format)(o->output - OUT_PPROF), out, p, in, &eo, why, sizeof why) != 0)
            fprintf(stderr, "cmprof-top: %s\n", why);
        return;
    }
    const struct prof_row *rows;
    prof_fold_overhead(p, o->fold_overhead);
    size_t n = o->output == OUT_FOLDED || o->output == OUT_SPEEDSCOPE ? 0 : prof_rows(p, o->by, o->inline_frames, &rows);
    struct prof_diag diags[16];
    size_t nd = prof_diagnose(p, diags, 16);
    double total = prof_total(p);
    char buf[32];
    char losses[24][INGEST_LOSS_TEXT];
    size_t n_loss = ingest_losses(in, losses, 24);
    switch (o->output) {
    case OUT_CSV:
        fprintf(out, "samples,percent,ci95,lo95,hi95,name,file,line,approximate%s\n",
                o->base ? ",base_percent,delta,significant" : "");
        for (size_t i = 0; i < n; i++) {
            fmt_samples(buf, sizeof buf, rows[i].samples);
            fprintf(out, "%s,%.4f,%.4f,%.4f,%.4f,", buf, 100.0 * rows[i].share, 100.0 * rows[i].ci95,
                    100.0 * rows[i].lo95, 100.0 * rows[i].hi95);
            csv_field(out, row_name(o, p, &rows[i]));
            fputc(',', out);
            csv_field(out, rows[i].file ? rows[i].file : "");
            fprintf(out, ",%u,%d", rows[i].line, rows[i].approximate ? 1 : 0);
            if (o->base) {
                struct baseline_delta d = compare_row(o, p, &rows[i], n);
                fprintf(out, ",%.4f,%.4f,%d", 100.0 * d.base_share, 100.0 * d.delta, d.significant ? 1 : 0);
            }
            fputc('\n', out);
        }
        break;
    case OUT_JSON:
        fmt_samples(buf, sizeof buf, total);
        fprintf(out, "{\n  \"total\": %s,\n  \"sleep\": %llu,\n  \"format\": \"%s\",\n  \"group\": \"%s\",\n",
                buf, (unsigned long long)prof_sleep(p), detect_name(in->format), group_name(o->by));
        fprintf(out,
                "  \"decoder\": {\"bytes\": %llu, \"text_bad_lines\": %llu, \"text_long_lines\": %llu, "
                "\"text_tag_mismatch\": %llu, \"text_orphan_lines\": %llu, \"text_bad_checks\": %llu, \"text_glued\": %llu, \"hist_out\": %llu, \"log_lines\": %llu, "
                "\"itm_packets\": %llu, \"itm_errors\": %llu, \"itm_overflows\": %llu, \"itm_syncs\": %llu, "
                "\"itm_hunted\": %llu, \"tpiu_frames\": %llu, \"tpiu_unsynced\": %llu, \"orbflow_frames\": %llu, "
                "\"orbflow_bad\": %llu},\n",
                (unsigned long long)in->bytes,
                (unsigned long long)in->text.stats.bad_lines, (unsigned long long)in->text.stats.long_lines,
                (unsigned long long)in->text.stats.tag_mismatch, (unsigned long long)in->text.stats.orphan_lines,
                (unsigned long long)in->text.stats.bad_checks, (unsigned long long)in->text.stats.glued,
                (unsigned long long)in->text.stats.hist_out,
                (unsigned long long)in->text.stats.log_lines, (unsigned long long)in->itm.stats.packets,
                (unsigned long long)in->itm.stats.errors, (unsigned long long)in->itm.stats.overflows,
                (unsigned long long)in->itm.stats.syncs, (unsigned long long)in->itm.stats.hunted,
                (unsigned long long)in->tpiu.stats.frames, (unsigned long long)in->tpiu.stats.unsynced,
                (unsigned long long)in->orbflow.stats.frames,
                (unsigned long long)(in->orbflow.stats.bad_sums + in->orbflow.stats.bad_cobs +
                                     in->orbflow.stats.too_long));
        if (o->interrupted)
            fprintf(out, "  \"interrupted\": \"%s\",\n", o->interrupted);
        if (o->partial) {
            fputs("  \"partial\": ", out);
            json_string(out, o->partial);
            fputs(",\n", out);
        }
        fprintf(out, "  \"overhead\": %.4f,\n", 100.0 * prof_overhead(p));
        if (prof_idle(p) >= 0)
            fprintf(out, "  \"idle\": %.4f,\n", 100.0 * prof_idle(p));
        if (o->halting)
            fprintf(out, "  \"halting\": {\"rate\": %.1f, \"halted_percent\": %.2f},\n", o->halt_rate,
                    100.0 * o->halted_share);
        if (o->source_detail && *o->source_detail) {
            fputs("  \"source_detail\": ", out);
            json_string(out, o->source_detail);
            fputs(",\n", out);
        }
        fprintf(out, "  \"lost\": %llu,\n  \"missing\": %llu,\n  \"past_limit\": %llu,\n  \"losses\": [",
                (unsigned long long)in->lost, (unsigned long long)in->text.stats.missing,
                (unsigned long long)in->past_limit);
        for (size_t i = 0; i < n_loss; i++) {
            fputs(i ? ", " : "", out);
            json_string(out, losses[i]);
        }
        fputs("],\n", out);
        if (in->info.present) {
            fprintf(out,
                    "  \"stream\": {\"clock_hz\": %llu, \"timer_hz\": %llu, \"period\": %llu, \"jitter\": %llu, "
                    "\"code_base\": %u, \"build_id\": \"%s\", \"arch\": ",
                    (unsigned long long)in->info.clock_hz, (unsigned long long)in->info.timer_hz,
                    (unsigned long long)in->info.period, (unsigned long long)in->info.jitter, in->info.code_base,
                    in->info.build_id);
            json_string(out, in->info.arch);
            fputs(", \"timer\": ", out);
            json_string(out, in->info.timer);
            fputs("},\n", out);
        }
        struct prof_code_check cc;
        prof_check_code(p, &cc);
        if (cc.checked) /* the sampled PCs against the ELF's instruction starts */
            fprintf(out, "  \"code_check\": {\"pcs\": %zu, \"bad_pcs\": %zu, \"bad_percent\": %.4f, \"wrong_elf\": %s},\n",
                    cc.pcs, cc.bad_pcs, 100.0 * cc.share, cc.wrong ? "true" : "false");
        fputs("  \"sections\": [", out);
        for (int i = 0, first = 1; i < INGEST_SECTIONS; i++) {
            const struct ingest_section *s = &in->section[i];
            if (!s->seen)
                continue;
            fprintf(out, "%s{\"index\": %d, \"name\": ", first ? "" : ", ", i);
            json_string(out, s->name);
            fprintf(out, ", \"count\": %llu, \"current\": %llu, \"min\": %llu, \"max\": %llu, \"sum\": %llu",
                    (unsigned long long)s->count, (unsigned long long)s->current, (unsigned long long)s->min,
                    (unsigned long long)s->max, (unsigned long long)s->sum);
            fputs(", \"events\": [", out);
            for (int k = 0, efirst = 1; k < INGEST_SECTION_EVENTS; k++) {
                const struct ingest_section_event *e = &s->ev[k];
                if (!e->seen)
                    continue;
                const char *en = ingest_event_name(e->event);
                fprintf(out, "%s{\"event\": %u, \"name\": ", efirst ? "" : ", ", (unsigned)e->event);
                json_string(out, en ? en : "");
                fprintf(out, ", \"current\": %llu, \"min\": %llu, \"max\": %llu, \"sum\": %llu}",
                        (unsigned long long)e->current, (unsigned long long)e->min, (unsigned long long)e->max,
                        (unsigned long long)e->sum);
                efirst = 0;
            }
            fputs("]", out);
            double ipc = ingest_section_ipc(in, s);
            if (ipc >= 0)
                fprintf(out, ", \"ipc\": %.4f", ipc);
            fputs("}", out);
            first = 0;
        }
        fputs("],\n", out);
        fputs("  \"warnings\": [", out);
        if (warning && *warning)
            json_string(out, warning);
        fputs("],\n  \"diagnostics\": [", out);
        for (size_t i = 0; i < nd; i++) {
            fputs(i ? ", " : "", out);
            json_string(out, diags[i].text);
        }
        fputs("],\n  \"rows\": [\n", out);
        for (size_t i = 0; i < n; i++) {
            fmt_samples(buf, sizeof buf, rows[i].samples); /* an integer when it is one */
            fprintf(out, "    {\"samples\": %s, \"percent\": %.4f, \"ci95\": %.4f, \"lo95\": %.4f, \"hi95\": %.4f, "
                    "\"name\": ", buf, 100.0 * rows[i].share, 100.0 * rows[i].ci95, 100.0 * rows[i].lo95,
                    100.0 * rows[i].hi95);
            json_string(out, row_name(o, p, &rows[i]));
            fputs(", \"file\": ", out);
            json_string(out, rows[i].file ? rows[i].file : "");
            fprintf(out, ", \"line\": %u, \"approximate\": %s", rows[i].line, rows[i].approximate ? "true" : "false");
            if (o->base) {
                struct baseline_delta d = compare_row(o, p, &rows[i], n);
                fprintf(out, ", \"base_percent\": %.4f, \"delta\": %.4f, \"z\": %.2f, \"significant\": %s",
                        100.0 * d.base_share, 100.0 * d.delta, d.z, d.significant ? "true" : "false");
            }
            if (o->by == PROF_BY_FUNCTION && prof_has_stacks(p))
                for (int up = 1; up >= 0; up--)
                    print_calls(out, p, rows[i].name, up);
            fprintf(out, "}%s\n", i + 1 < n ? "," : "");
        }
        fputs("  ]\n}\n", out);
        break;
    case OUT_FOLDED: {
        struct folded_ctx f = {out};
        prof_folded(p, o->demangle, o->by == PROF_BY_TASK, print_folded, &f);
        break;
    }
    case OUT_SPEEDSCOPE:
        if (speedscope_write(out, p, o->demangle, o->by == PROF_BY_TASK, basename_of(o->elf)) != 0)
            fputs("{}\n", out); /* out of memory: an empty document rather than half of one */
        break;
    case OUT_TABLE:
    default:
        fmt_samples(buf, sizeof buf, total);
        fprintf(out, "samples %s (by %s%s), format %s\n", buf, group_name(o->by),
                o->inline_frames ? "" : ", no inline", detect_name(in->format));
        if (o->base)
            fprintf(out, "  %7s  %7s  %15s  %9s  %8s %8s  %s\n", "share", "±95%", "95% interval", "samples", "base",
                    "change", "name");
        else
            fprintf(out, "  %7s  %7s  %15s  %9s  %s\n", "share", "±95%", "95% interval", "samples", "name");
        for (size_t i = 0; i < n; i++) {
            fmt_samples(buf, sizeof buf, rows[i].samples);
            char interval[32];
            snprintf(interval, sizeof interval, "%.2f-%.2f%%", 100.0 * rows[i].lo95, 100.0 * rows[i].hi95);
            fprintf(out, "  %6.2f%%  %6.2f%%  %15s  %9s  ", 100.0 * rows[i].share, 100.0 * rows[i].ci95, interval, buf);
            if (o->base) { /* '*': significant at 95 % over all the rows compared */
                struct baseline_delta d = compare_row(o, p, &rows[i], n);
                fprintf(out, "%7.2f%% %+7.2f%s ", 100.0 * d.base_share, 100.0 * d.delta, d.significant ? "*" : " ");
            }
            print_name(out, row_name(o, p, &rows[i]));
            if (rows[i].file && o->by == PROF_BY_FUNCTION) {
                fputs("  ", out);
                print_name(out, basename_of(rows[i].file));
            }
            fprintf(out, "%s%s\n", rows[i].inlined && o->by == PROF_BY_FUNCTION ? "  (inlined)" : "",
                    rows[i].approximate ? "  (approximate: bucket straddles a function boundary)" : "");
        }
        if (prof_sleep(p))
            fprintf(out, "sleeping: %llu samples\n", (unsigned long long)prof_sleep(p));
        print_sections(out, in);
        const char *reset = o->source_detail ? strstr(o->source_detail, "the target reset") : NULL;
        if (o->halting) {
            fprintf(out, "halting: %.0f halts/s, the core halted %.1f %% of the time\n", o->halt_rate,
                    100.0 * o->halted_share);
            if (reset) /* the gdb: source's advice after its figures */
                fprintf(out, "warning: %s\n", reset);
        } else if (o->source_detail && *o->source_detail) {
            fprintf(out, "source: %s\n", o->source_detail);
        }
        if (prof_overhead(p) > 0)
            fprintf(out, "profiler overhead: %.2f %% of samples in cmprof's own firmware code\n",
                    100.0 * prof_overhead(p));
        if (prof_idle(p) >= 0)
            fprintf(out, "idle: %.2f %% of samples in the idle task\n", 100.0 * prof_idle(p));
        for (size_t i = 0; i < n_loss; i++)
            fprintf(out, "lost: %s\n", losses[i]);
        for (size_t i = 0; i < nd; i++)
            fprintf(out, "! %s\n", diags[i].text);
        if (o->interrupted)
            fprintf(out, "interrupted by %s: the samples up to then\n", o->interrupted);
        if (o->partial) {
            fputs("partial: the source failed: ", out);
            print_name(out, o->partial);
            fputc('\n', out);
        }
        break;
    }
}

int batch_write(const struct batch_options *o, struct prof *p, const struct ingest *in, const char *warning, FILE *out,
                FILE *err)
{
    errno = 0;
    batch_report(o, p, in, warning, out);
    if (fflush(out) == 0 && !ferror(out))
        return 0;
    fprintf(err, "cmprof-top: writing the report: %s\n", strerror(errno ? errno : EIO));
    return -1;
}

int batch_interrupted(struct batch_options *o, double samples, FILE *err)
{
    int sig = stop_requested();
    if (!sig)
        return 0;
    o->interrupted = stop_name(sig);
    fprintf(err, "cmprof-top: stopped by %s after %.0f samples: the report has the samples up to then\n",
            o->interrupted, samples);
    return 128 + sig;
}

int batch_main(const struct batch_options *opts, FILE *out, FILE *err)
{
    struct batch_options marked = *opts, *o = &marked; /* the report may be marked interrupted */
    char msg[512];
    struct sym_table *syms = sym_open(o->elf, msg, sizeof msg);
    if (!syms) {
        fprintf(err, "cmprof-top: %s\n", msg);
        return 1;
    }
    char opened_with[sizeof msg];
    snprintf(opened_with, sizeof opened_with, "%s", sym_warning(syms));
    if (*opened_with)
        fprintf(err, "cmprof-top: warning: %s\n", opened_with);
    FILE *src = strcmp(o->source, "-") == 0 ? stdin : fopen(o->source, "rb");
    if (!src) {
        fprintf(err, "cmprof-top: cannot open source '%s': %s\n", o->source, strerror(errno));
        sym_close(syms);
        return 1;
    }
    struct prof *p = prof_new(syms);
    struct ingest *in = malloc(sizeof *in);
    if (!p || !in) {
        fprintf(err, "cmprof-top: out of memory\n");
        sym_close(syms);
        return 1;
    }
    ingest_init(in, p, o->format, o->tpiu_id, o->wait_sync);
    in->max_samples = o->max_samples;
    static uint8_t buf[1 << 16];
    size_t got;
    int status = 0;
    stop_catch(); /* a signal ends the reading, not the report */
    while (!stop_requested() && (got = fread(buf, 1, sizeof buf, src)) > 0) {
        ingest_feed(in, buf, got);
        if (o->max_samples && prof_total(p) >= (double)o->max_samples)
            break;
    }
    if ((status = batch_interrupted(o, prof_total(p), err)) != 0)
        clearerr(src); /* the read it cut short is no read error */
    if (ferror(src)) {
        fprintf(err, "cmprof-top: read error on '%s': %s\n", o->source, strerror(errno));
        status = EXIT_ERROR; /* the samples counted so far are still reported */
    }
    ingest_finish(in);
    if (src != stdin)
        fclose(src);
    bool timed = false; /* a firmware that only times sections has no samples, and that is fine */
    for (int i = 0; i < INGEST_SECTIONS; i++)
        timed |= in->section[i].seen;
    if (prof_total(p) == 0 && !timed && !o->interrupted) {
        fprintf(err, "cmprof-top: no samples in '%s' (%s stream", o->source, detect_name(in->format));
        char ids[120];
        if (in->format == DETECT_TPIU && tpiu_other_ids(&in->tpiu.stats, ids, sizeof ids))
            fprintf(err, ", %llu frames, but only for source IDs %s: choose one with --tpiu-id",
                    (unsigned long long)in->tpiu.stats.frames, ids);
        else if (in->format == DETECT_ORBFLOW && orbflow_other_tags(&in->orbflow.stats, ids, sizeof ids))
            fprintf(err, ", %llu frames, but only for streams %s: choose one with --tpiu-id",
                    (unsigned long long)in->orbflow.stats.frames, ids);
        else if (in->format == DETECT_ORBFLOW)
            fprintf(err, ", %llu frames, %llu with a bad sum, %llu with bad COBS codes",
                    (unsigned long long)in->orbflow.stats.frames, (unsigned long long)in->orbflow.stats.bad_sums,
                    (unsigned long long)in->orbflow.stats.bad_cobs);
        else if (in->format == DETECT_TEXT)
            fprintf(err, ", %llu lines, %llu malformed", (unsigned long long)in->text.stats.lines,
                    (unsigned long long)in->text.stats.bad_lines);
        else
            fprintf(err, ", %llu bytes, %llu bad packets, %llu bytes skipped looking for sync",
                    (unsigned long long)in->itm.stats.bytes, (unsigned long long)in->itm.stats.errors,
                    (unsigned long long)in->itm.stats.hunted);
        uint64_t first = in->format == DETECT_TEXT ? in->text.stats.first_bad : in->itm.stats.first_error;
        if (first)
            fprintf(err, "; first bad %s at byte offset %llu", in->format == DETECT_TEXT ? "line" : "byte",
                    (unsigned long long)(first - 1));
        fputs(")\n", err);
        status = EXIT_USAGE;
    }
    if (batch_write(o, p, in, sym_warning(syms), out, err) != 0)
        status = status ? status : EXIT_ERROR;
    batch_warnings(o, p, in, err);
    if (*sym_warning(syms) && strcmp(sym_warning(syms), opened_with) != 0) /* found reading a unit */
        fprintf(err, "cmprof-top: warning: %s\n", sym_warning(syms));
    if (!status && batch_regressions(o, p, err))
        status = EXIT_SLOWER;
    ingest_free(in);
    free(in);
    prof_free(p);
    sym_close(syms);
    return status;
}
