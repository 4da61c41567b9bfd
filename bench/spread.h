/* Medians and spreads of interleaved benchmark rounds (bench/interleave.py says why: never a best
 * run on a shared machine). */
#ifndef BENCH_SPREAD_H
#define BENCH_SPREAD_H

#include <stddef.h>

enum { SPREAD_MAX = 64 }; /* rounds at most */

struct spread {
    double median, q1, q3, min, max;
};

/* The median, quartiles (interpolated, as Python's statistics.quantiles "inclusive") and range of
 * n values (1 <= n <= SPREAD_MAX; v itself is left as it is). */
struct spread spread_of(const double *v, size_t n);

/* "MEDIAN UNIT (IQR Q1..Q3, range MIN..MAX)", each value printed with fmt (e.g. "%.1f"), in buf. */
const char *spread_text(struct spread s, const char *fmt, const char *unit, char *buf, size_t len);

#endif
