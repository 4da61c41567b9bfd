/* The writers of other tools' formats (see exports.h), from what every report gets. */
#include "exports.h"

#include "callgrind.h"
#include "lcov.h"
#include "period.h"
#include "pprof.h"
#include "trace.h"

int exports_pprof(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    const struct report_options *o = d->o;
    char comment[600];
    snprintf(comment, sizeof comment, "cmprof-top: %s on %s", o->source ? o->source : "a capture",
             o->elf ? o->elf : "no ELF");
    struct pprof_info info = {o->elf, period_ns(prof_stream_info(d->p)), period_ns_written(d->p), o->demangle, comment};
    return pprof_write(out, d->p, &info, err, errlen);
}

int exports_callgrind(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    return callgrind_write(out, d->p, d->o->elf, d->o->demangle, err, errlen);
}

int exports_lcov(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    return lcov_write(out, d->p, d->o->elf, d->o->demangle, err, errlen);
}

int exports_trace(struct report_data *d, FILE *out, char *err, size_t errlen)
{
    return trace_write(out, d->p, d->in, d->o->elf, err, errlen);
}
