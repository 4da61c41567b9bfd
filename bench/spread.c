#include "spread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The value p of the way from the first to the last sorted value, between its neighbours. */
static double at(const double *sorted, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t k = (size_t)pos;
    return k + 1 < n ? sorted[k] + (pos - (double)k) * (sorted[k + 1] - sorted[k]) : sorted[n - 1];
}

struct spread spread_of(const double *v, size_t n)
{
    double s[SPREAD_MAX];
    struct spread r = {0, 0, 0, 0, 0};
    if (n == 0 || n > SPREAD_MAX)
        return r;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, by_value);
    r.median = at(s, n, 0.5);
    r.q1 = at(s, n, 0.25);
    r.q3 = at(s, n, 0.75);
    r.min = s[0];
    r.max = s[n - 1];
    return r;
}

const char *spread_text(struct spread s, const char *fmt, const char *unit, char *buf, size_t len)
{
    char v[5][32];
    const double x[5] = {s.median, s.q1, s.q3, s.min, s.max};
    for (int i = 0; i < 5; i++)
        snprintf(v[i], sizeof v[i], fmt, x[i]);
    snprintf(buf, len, "%s%s (IQR %s..%s, range %s..%s)", v[0], unit, v[1], v[2], v[3], v[4]);
    return buf;
}
