/* The formats' table and the dispatch to their writers; --fail-if-slower's check. */
#include "report.h"

#include "emit.h"

#include <math.h>
#include <string.h>

/* One line per format, in enum report_format's order. `stacks`: the format writes call stacks
 * (function or task first), not rows. */
static const struct writer {
    const char *name;
    void (*write)(const struct report_data *d, FILE *out);
    bool stacks;
} writers[] = {
    [OUT_TABLE] = {"table", report_table, false},
    [OUT_CSV] = {"csv", report_csv, false},
    [OUT_JSON] = {"json", report_json, false},
    [OUT_FOLDED] = {"folded", report_folded, true},
    [OUT_SPEEDSCOPE] = {"speedscope", report_speedscope, true},
    /* other tools' formats: exports_write, called by the caller (it reports its own errors) */
    [OUT_PPROF] = {"pprof", NULL, false},
    [OUT_CALLGRIND] = {"callgrind", NULL, false},
    [OUT_LCOV] = {"lcov", NULL, false},
    [OUT_TRACE] = {"trace", NULL, false},
};
#define N_WRITERS (sizeof writers / sizeof writers[0])

int report_format_parse(const char *name)
{
    for (size_t i = 0; i < N_WRITERS; i++)
        if (strcmp(name, writers[i].name) == 0)
            return (int)i;
    return -1;
}

const char *report_format_names(void)
{
    static char names[200];
    if (!names[0])
        for (size_t i = 0; i < N_WRITERS; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", writers[i].name);
        }
    return names;
}

const char *report_format_name(enum report_format format)
{
    return writers[format].name;
}

bool report_format_groups(enum report_format format, enum prof_group by)
{
    return !writers[format].stacks || by == PROF_BY_FUNCTION || by == PROF_BY_TASK;
}

bool report_format_is_export(enum report_format format)
{
    return writers[format].write == NULL;
}

void report_write(const struct report_options *o, struct prof *p, const struct ingest *in, const char *warning,
                  FILE *out)
{
    if (report_format_is_export(o->format))
        return;
    struct report_data d = {.o = o, .p = p, .in = in, .warning = warning};
    prof_fold_overhead(p, o->fold_overhead);
    if (!writers[o->format].stacks)
        d.n = prof_rows(p, o->by, o->inline_frames, &d.rows);
    d.nd = prof_diagnose(p, d.diags, EMIT_DIAGS);
    d.n_loss = ingest_losses(in, d.losses, EMIT_LOSSES);
    writers[o->format].write(&d, out);
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
        /* growth relative to the baseline's share; a row the baseline lacks grew without bound */
        double growth = d.base_share > 0 ? d.delta / d.base_share : (d.delta > 0 ? INFINITY : 0);
        if (d.significant && d.delta > 0 && growth > percent / 100.0) {
            fprintf(err,
                    "cmprof-top: %s grew from %.2f %% to %.2f %% (+%.0f %%, z = %.1f): more than --fail-if-slower %g\n",
                    emit_row_name(o, p, &rows[i]), 100.0 * d.base_share, 100.0 * rows[i].share,
                    isinf(growth) ? 100.0 : 100.0 * growth, d.z, percent);
            worse++;
        }
    }
    return worse;
}
