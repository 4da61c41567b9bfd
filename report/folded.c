/* -o folded: one line per distinct stack, "outer;...;inner count" (flamegraph.pl's input). */
#include "emit.h"

static void line(void *ctx, const char *stack, double count)
{
    FILE *out = ctx;
    char n[32];
    emit_samples(n, sizeof n, count);
    fprintf(out, "%s %s\n", stack, n);
}

void report_folded(const struct report_data *d, FILE *out)
{
    prof_folded(d->p, d->o->demangle, d->o->by == PROF_BY_TASK, line, out);
}
