/* Batch mode: source -> ingest -> profile -> report on stdout. */
#include "batch.h"

#include "stop.h"

#include "../source/source.h"

#include "../profile/ingest.h"
#include "../report/baseline.h"
#include "../report/report.h"
#include "../symbols/symbols.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What the report needs of the options. */
static struct report_options report_options_of(const struct batch_options *o)
{
    return (struct report_options){.format = o->output, .by = o->by, .inline_frames = o->inline_frames,
                                   .demangle = o->demangle, .fold_overhead = o->fold_overhead, .elf = o->elf,
                                   .source = o->source,
                                   .base = o->base, .halting = o->halting, .halt_rate = o->halt_rate,
                                   .halted_share = o->halted_share, .source_detail = o->source_detail,
                                   .interrupted = o->interrupted, .partial = o->partial,
                                   .source_format = o->source_format, .snapshot = o->snapshot,
                                   .stalled = o->stalled};
}

/* A row name no ELF's symbols gave: a raw address, a bracketed row ("[self]") or the unknown file. */
static bool nameless_row(const char *name)
{
    if (name[0] == '[' || strcmp(name, "(unknown file)") == 0)
        return true;
    if (strncmp(name, "0x", 2) != 0 || !name[2])
        return false;
    return name[2 + strspn(name + 2, "0123456789abcdefABCDEF")] == '\0';
}

int batch_diff_refused(const struct batch_options *o, const struct sym_table *syms, FILE *err)
{
    if (!o->base || o->by == PROF_BY_TASK) /* tasks are named by the stream, not the ELF */
        return 0;
    struct sym_stats st;
    sym_get_stats(syms, &st);
    bool elf_names = st.functions || st.units, base_names = false, base_raw = false;
    for (size_t i = 0; i < o->base->n; i++) {
        bool raw = nameless_row(o->base->rows[i].name);
        base_raw |= raw && o->base->rows[i].name[0] == '0';
        base_names |= !raw;
    }
    if (!elf_names && base_names)
        fprintf(err, "cmprof-top: --diff: %s has no symbols and no DWARF (stripped?), so its rows are raw addresses, "
                "and the baseline's rows are named: every row would compare as new; give the ELF the linker wrote\n",
                o->elf);
    else if (elf_names && base_raw && !base_names)
        fprintf(err, "cmprof-top: --diff: the baseline's rows are raw addresses (made with an ELF without symbols), and "
                "%s names them: every row would compare as new; make the baseline with the ELF the linker wrote\n",
                o->elf);
    else
        return 0;
    return EXIT_USAGE;
}

int batch_regressions(const struct batch_options *o, struct prof *p, FILE *err)
{
    struct report_options ro = report_options_of(o);
    return report_regressions(&ro, p, o->fail_if_slower, err);
}

double batch_written_samples(const struct batch_options *o, struct prof *p)
{
    bool stacks_out = o->output == OUT_FOLDED || o->output == OUT_SPEEDSCOPE || o->output == OUT_PPROF ||
                      o->output == OUT_CALLGRIND;
    double stacked = prof_has_stacks(p) ? prof_stack_samples(p) : 0;
    return stacks_out && stacked > 0 ? stacked : prof_total(p);
}

/* The stack formats carry the samples with call stacks, which a firmware's evidence gives 1 in 16
 * of: their counts are a part of the table's, said where the output is made, not only in docs. */
static void stacked_only_note(const struct batch_options *o, struct prof *p, FILE *err)
{
    double written = batch_written_samples(o, p), total = prof_total(p);
    if (written < total)
        fprintf(err, "cmprof-top: note: -o %s holds the %.0f samples that carry call stacks, of %.0f (the table's): "
                "their shares, a part of the counts; --stack-depth 0 writes every sample, without callers\n",
                report_format_name(o->output), written, total);
}

void batch_warnings(const struct batch_options *o, struct prof *p, FILE *err)
{
    stacked_only_note(o, p, err);
    struct prof_diag diags[16];
    for (size_t i = 0, nd = prof_diagnose(p, diags, 16); i < nd; i++)
        if (diags[i].kind == DIAG_NOT_STARTS || diags[i].kind == DIAG_MEMORY_FAULT ||
            diags[i].kind == DIAG_LOSS_BIAS) /* plausible-looking, and wrong */
            fprintf(err, "cmprof-top: warning: %s\n", diags[i].text);
    char why[300];
    if (o->base && baseline_other_build(o->base, prof_stream_info(p)->build_id, why, sizeof why))
        fprintf(err, "cmprof-top: warning: %s\n", why);
    double now, then;
    struct report_options ro = report_options_of(o);
    report_baseline_overlap(&ro, p, &now, &then);
    if (o->base && prof_total(p) > 0 && now < 0.5 && then < 0.5) /* a rebuild keeps most of its rows' names */
        fprintf(err, "cmprof-top: warning: --diff: %.1f %% of this capture's samples are in rows the baseline has, "
                "%.1f %% of the baseline's in rows this capture has: a baseline of another program? Every row "
                "is compared by name\n", 100.0 * now, 100.0 * then);
}

int batch_report(const struct batch_options *o, struct prof *p, const struct ingest *in, const char *warning,
                 FILE *out, char *why, size_t whylen)
{
    struct report_options ro = report_options_of(o);
    return report_write(&ro, p, in, warning, out, why, whylen);
}

int batch_write(const struct batch_options *o, struct prof *p, const struct ingest *in, const char *warning, FILE *out,
                FILE *err)
{
    errno = 0;
    char why[200];
    int failed = batch_report(o, p, in, warning, out, why, sizeof why);
    if (failed)
        fprintf(err, "cmprof-top: %s\n", why);
    if (fflush(out) == 0 && !ferror(out))
        return failed;
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
    return EXIT_SIGNAL(sig);
}

struct ingest_options batch_ingest_options(const struct batch_options *o)
{
    return (struct ingest_options){.format = o->format, .format_option = o->format_option, .tpiu_id = o->tpiu_id, .wait_sync = o->wait_sync,
                                   .tpiu_offset = o->tpiu_offset, .flat_stacks = o->flat_stacks,
                                   .max_samples = o->max_samples,
                                   /* a port we attach to, and a capture of one (a recording of a late
                                    * attach, `cat` of a port), may begin mid-line: a first line cut
                                    * by the start is no malformed line, in the live view and its
                                    * replay alike */
                                   .mid_stream = true};
}

enum prof_sampler batch_sampler(const char *source, const struct ingest *in)
{
    const char *by = src_spec_packets_by(source); /* a probe's own samples; else the stream's format says */
    if (by && strcmp(by, SRC_BY_HALTS) == 0)
        return PROF_SAMPLER_HALTING;
    if (by && strcmp(by, SRC_BY_PCSR) == 0)
        return PROF_SAMPLER_PCSR;
    switch (ingest_format(in)) {
    case DETECT_TEXT:
        return PROF_SAMPLER_FIRMWARE; /* (a gdb: source's --record replays as text: its halts, unknown here) */
    case DETECT_ITM:
    case DETECT_TPIU:
    case DETECT_ORBFLOW:
        return PROF_SAMPLER_DWT; /* ITM PC samples come from the DWT */
    default:
        return PROF_SAMPLER_UNKNOWN;
    }
}

int batch_doubts(struct prof *p, const struct ingest *in, const char *elf, bool no_samples_said, FILE *err)
{
    int status = 0;
    char quiet[600];
    if (ingest_quiet(in, quiet, sizeof quiet) != INGEST_QUIET_NONE && !no_samples_said) {
        fprintf(err, "cmprof-top: %s\n", quiet);
        status = EXIT_USAGE;
    }
    struct prof_trust t;
    prof_trust(p, &t);
    if (!t.wrong_elf)
        return status;
    struct prof_diag diags[16];
    for (size_t i = 0, nd = prof_diagnose(p, diags, 16); i < nd; i++) /* (DIAG_NOT_STARTS: batch_warnings) */
        if (diags[i].kind == DIAG_BUILD_ID || (diags[i].kind == DIAG_WRONG_ELF && t.outside))
            fprintf(err, "cmprof-top: %s: %s\n", elf, diags[i].text);
    return EXIT_WRONG_ELF;
}

void batch_cut_warning(const char *file, const struct ingest *in, FILE *err)
{
    const char *what;
    uint64_t at, cut = ingest_ended_inside(in, &what, &at);
    if (cut) /* its samples are not counted: a capture cut short (or still being written) */
        fprintf(err, "cmprof-top: warning: '%s' ends inside a%s %s (its last %llu bytes, from byte offset %llu): "
                "cut short, not decoded\n", file, strchr("IAEOUo", what[0]) ? "n" : "", what,
                (unsigned long long)cut, (unsigned long long)at);
    uint64_t total, unread = ingest_unread(in, &total);
    if (total >= 1024 && unread * 2 > total) /* a profile from a sliver of it: said where CI reads */
        fprintf(err, "cmprof-top: warning: '%s': %llu of its %llu bytes (%.0f %%) could not be read as %s (skipped "
                "as noise or looking for sync): the profile stands on the rest; another format (-f)? ('lost:' "
                "lines in the report)\n", file, (unsigned long long)unread, (unsigned long long)total,
                100.0 * (double)unread / (double)total, detect_name(ingest_format(in)));
}

/* The source read to its end (or to --samples, or a stopping signal); the exit status so far. */
static int read_source(struct batch_options *o, FILE *src, struct ingest *in, struct prof *p, FILE *err)
{
    static uint8_t buf[1 << 16];
    size_t got;
    stop_catch(); /* a signal ends the reading, not the report */
    while (!stop_requested() && (got = fread(buf, 1, sizeof buf, src)) > 0) {
        ingest_feed(in, buf, got);
        if (o->max_samples && prof_total(p) >= (double)o->max_samples)
            break;
    }
    int status = batch_interrupted(o, prof_total(p), err);
    if (status)
        clearerr(src); /* the read it cut short is no read error */
    if (ferror(src)) {
        fprintf(err, "cmprof-top: read error on '%s': %s\n", o->source, strerror(errno));
        status = EXIT_ERROR; /* the samples counted so far are still reported */
    }
    ingest_finish(in);
    if (feof(src) && !status) /* read to its end: not stopped by --samples or a signal */
        batch_cut_warning(o->source, in, err);
    return status;
}

/* No samples and no section timings (a firmware that only times sections has no samples, and that
 * is fine): said on err with what the decoders saw. */
static bool say_no_samples(const struct batch_options *o, struct prof *p, const struct ingest *in, FILE *err)
{
    if (prof_total(p) > 0 || prof_sections_seen(p) || o->interrupted)
        return false;
    char saw[600], hint[600];
    ingest_describe(in, saw, sizeof saw);
    ingest_no_samples_hint(in, hint, sizeof hint);
    fprintf(err, "cmprof-top: no samples in '%s' (%s)%s\n", o->source, saw, hint);
    return true;
}

int batch_main(const struct batch_options *opts, FILE *out, FILE *err)
{
    struct batch_options marked = *opts, *o = &marked; /* the report may be marked interrupted */
    char msg[512], opened_with[sizeof msg];
    struct prof *p = NULL;
    struct ingest *in = NULL;
    FILE *src = NULL;
    int status = EXIT_ERROR;
    struct sym_table *syms = sym_open(o->elf, msg, sizeof msg);
    if (!syms) {
        fprintf(err, "cmprof-top: %s\n", msg);
        goto done;
    }
    int refused = batch_diff_refused(o, syms, err); /* (the one line: before the ELF's warning) */
    if (refused) {
        status = refused;
        goto done;
    }
    snprintf(opened_with, sizeof opened_with, "%s", sym_warning(syms));
    if (*opened_with)
        fprintf(err, "cmprof-top: warning: %s\n", opened_with);
    src = strcmp(o->source, "-") == 0 ? stdin : fopen(o->source, "rb");
    struct stat st;
    if (src && src != stdin && fstat(fileno(src), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen takes one */
        fclose(src);
        src = NULL;
        errno = EISDIR;
    }
    if (!src) {
        fprintf(err, "cmprof-top: cannot open source '%s': %s\n", o->source, strerror(errno));
        goto done;
    }
    p = prof_new(syms);
    struct ingest_options io = batch_ingest_options(o);
    in = p ? ingest_new(p, &io) : NULL;
    if (!in) {
        fprintf(err, "cmprof-top: out of memory\n");
        goto done;
    }
    status = read_source(o, src, in, p, err);
    prof_set_sampler(p, batch_sampler(o->source, in));
    bool none = say_no_samples(o, p, in, err);
    if (none)
        status = EXIT_USAGE;
    if (batch_write(o, p, in, sym_warning(syms), out, err) != 0)
        status = status ? status : EXIT_ERROR;
    batch_warnings(o, p, err);
    int doubt = batch_doubts(p, in, o->elf, none, err);
    status = status ? status : doubt;
    if (*sym_warning(syms) && strcmp(sym_warning(syms), opened_with) != 0) /* found reading a unit */
        fprintf(err, "cmprof-top: warning: %s\n", sym_warning(syms));
    if (!status && batch_regressions(o, p, err))
        status = EXIT_SLOWER;
done:
    ingest_free(in);
    if (src && src != stdin)
        fclose(src);
    prof_free(p);
    sym_close(syms);
    return status;
}
