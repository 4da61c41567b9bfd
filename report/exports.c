/* Dispatch to the writers of other tools' formats (see exports.h). */
#include "exports.h"

#include "callgrind.h"
#include "lcov.h"
#include "period.h"
#include "pprof.h"
#include "trace.h"

int exports_write(enum exports_format f, FILE *out, struct prof *p, const struct ingest *in,
                  const struct exports_options *o, char *err, size_t errlen)
{
    char comment[600];
    snprintf(comment, sizeof comment, "cmprof-top: %s on %s", o->source ? o->source : "a capture",
             o->elf ? o->elf : "no ELF");
    switch (f) {
    case EXPORTS_PPROF: {
        struct pprof_info info = {o->elf, period_ns(&in->info), o->demangle, comment};
        return pprof_write(out, p, &info, err, errlen);
    }
    case EXPORTS_CALLGRIND:
        return callgrind_write(out, p, o->elf, o->demangle, err, errlen);
    case EXPORTS_LCOV:
        return lcov_write(out, p, o->demangle, err, errlen);
    case EXPORTS_TRACE:
    default:
        return trace_write(out, p, in, o->elf, err, errlen);
    }
}
