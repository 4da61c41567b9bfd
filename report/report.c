/* The formats' table and the dispatch to their writers; --fail-if-slower's check. */
#include "report.h"

#include "emit.h"
#include "exports.h"

#include "../profile/escape.h"

#include <math.h>
#include <string.h>

/* What the row and stack formats share, worked out once: the firmware's overhead folded (or not),
 * the rows (none for the stack formats), the diagnostics and the losses. */
static void prepare(struct report_data *d, bool rows)
{
    prof_fold_overhead(d->p, d->o->fold_overhead);
    if (rows)
        d->n = prof_rows(d->p, d->o->by, d->o->inline_frames, &d->rows);
    d->nd = prof_diagnose(d->p, d->diags, EMIT_DIAGS);
    d->n_loss = ingest_losses(d->in, d->losses, EMIT_LOSSES);
    d->n_notes = ingest_notes(d->in, d->notes, sizeof d->notes / sizeof *d->notes);
}

static int write_table(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    prepare(d, true);
    report_table(d, out);
    return 0;
}

static int write_csv(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    prepare(d, true);
    report_csv(d, out);
    return 0;
}

static int write_json(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    prepare(d, true);
    report_json(d, out);
    return 0;
}

static int write_folded(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    prepare(d, false);
    report_folded(d, out);
    return 0;
}

static int write_speedscope(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    prepare(d, false);
    return report_speedscope(d, out, err, errlen);
}

/* Every output format, in enum report_format's order: -o's names, --help's list, the live view's
 * key o (its prompt, its keys, its help line and the snapshots' file names) all read this table.
 * A new format is a value in the enum and a line here. */
static const struct format {
    struct report_format_info info;
    int (*write)(struct report_data *d, FILE *out, char *err, size_t errlen);
} formats[] = {
    [OUT_TABLE] = {{"table", "table", 't', "txt", "(default)", false}, write_table},
    [OUT_CSV] = {{"csv", "CSV", 'c', "csv", "", false}, write_csv},
    [OUT_JSON] = {{"json", "JSON", 'j', "json", "", false}, write_json},
    [OUT_FOLDED] = {{"folded", "folded", 'f', "folded", "(flame graphs)", true}, write_folded},
    [OUT_SPEEDSCOPE] = {{"speedscope", "speedscope", 's', "speedscope.json", "(https://www.speedscope.app)", true},
                        write_speedscope},
    /* other tools' formats (report/exports.h) */
    [OUT_PPROF] = {{"pprof", "pprof", 'p', "pb.gz", "(gzipped profile.proto)", false, true}, exports_pprof},
    [OUT_CALLGRIND] = {{"callgrind", "callgrind", 'k', "callgrind", "", false, true}, exports_callgrind},
    [OUT_LCOV] = {{"lcov", "lcov", 'l', "info", "", false, true}, exports_lcov},
    [OUT_TRACE] = {{"trace", "trace", 'e', "trace.json", "(Trace Event JSON)", false, true}, exports_trace},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])
_Static_assert(N_FORMATS == OUT_N_FORMATS, "a line in formats[] for every enum report_format");

const struct report_format_info *report_format_info(enum report_format format)
{
    return (size_t)format < N_FORMATS ? &formats[format].info : NULL;
}

int report_format_parse(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(name, formats[i].info.name) == 0)
            return (int)i;
    return -1;
}

int report_format_of_key(int key)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (key == formats[i].info.key)
            return (int)i;
    return -1;
}

const char *report_format_names(void)
{
    static char names[200];
    if (!names[0])
        for (size_t i = 0; i < N_FORMATS; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", formats[i].info.name);
        }
    return names;
}

const char *report_format_name(enum report_format format)
{
    return formats[format].info.name;
}

bool report_format_groups(enum report_format format, enum prof_group by)
{
    return !formats[format].info.stacks || by == PROF_BY_FUNCTION || by == PROF_BY_TASK;
}

int report_write(const struct report_options *o, struct prof *p, const struct ingest *in, const char *warning,
                 FILE *out, char *err, size_t errlen)
{
    struct report_data d = {.o = o, .p = p, .in = in, .warning = warning};
    return formats[o->format].write(&d, out, err, errlen);
}

void report_baseline_overlap(const struct report_options *o, struct prof *p, double *now, double *then)
{
    *now = *then = 0;
    if (!o->base || prof_total(p) <= 0 || o->base->total <= 0)
        return;
    const struct prof_row *rows;
    prof_fold_overhead(p, o->fold_overhead);
    size_t n = prof_rows(p, o->by, o->inline_frames, &rows);
    for (size_t i = 0; i < n; i++) { /* (a report has one row a name: no baseline row counts twice) */
        double kb = baseline_samples(o->base, emit_row_name(o, p, &rows[i]));
        *now += kb > 0 ? rows[i].samples : 0;
        *then += kb;
    }
    *now /= prof_total(p);
    *then /= o->base->total;
}

int report_regressions(const struct report_options *o, struct prof *p, double percent, FILE *err)
{
    if (!o->base || percent <= 0)
        return 0;
    const struct prof_row *rows;
    prof_fold_overhead(p, o->fold_overhead);
    size_t n = prof_rows(p, o->by, o->inline_frames, &rows);
    int worse = 0;
    for (size_t i = 0; i < n; i++) {
        struct baseline_delta d = emit_compare_row(o, p, &rows[i], n);
        char name[1024]; /* the ELF's or the firmware's: escaped as the table does, never raw to a CI log */
        esc_text(name, sizeof name, emit_row_name(o, p, &rows[i]), NULL);
        /* growth relative to the baseline's share; a row the baseline lacks grew without bound */
        double growth = d.base_share > 0 ? d.delta / d.base_share : (d.delta > 0 ? INFINITY : 0);
        if (d.significant && d.delta > 0 && growth > percent / 100.0) {
            if (isinf(growth)) /* (it did not double: it was not there) */
                fprintf(err, "cmprof-top: %s is new: %.2f %% of the samples, none in the baseline (z = %.1f): more "
                        "than --fail-if-slower %g\n", name, 100.0 * rows[i].share, d.z,
                        percent);
            else
                fprintf(err, "cmprof-top: %s grew from %.2f %% to %.2f %% (+%.0f %%, z = %.1f): more than "
                        "--fail-if-slower %g\n", name, 100.0 * d.base_share,
                        100.0 * rows[i].share, 100.0 * growth, d.z, percent);
            worse++;
        }
    }
    return worse;
}
