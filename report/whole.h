/* Whole counts for formats that take integers (pprof, callgrind, lcov) from the profile's
 * counts, which are fractional where histogram buckets were spread over addresses: each count
 * is the change of the rounded running sum, so the counts add up to the rounded total and none
 * is off by a whole sample or more. */
#ifndef CMPROF_REPORT_WHOLE_H
#define CMPROF_REPORT_WHOLE_H

#include <math.h>
#include <stdint.h>

struct whole {
    double exact;  /* the running sum of the counts given */
    int64_t given; /* ... and of the whole counts returned */
};

/* v rounded to a whole number, within int64_t: llround past its range is undefined (it gave
 * pprof a Duration of -2^63), and no count or time in nanoseconds a report gives comes near it. */
static inline int64_t whole_round(double v)
{
    if (!(v > -9.2e18)) /* NaN too */
        return v < 0 ? -INT64_MAX : 0;
    if (v > 9.2e18)
        return INT64_MAX;
    return (int64_t)llround(v);
}

static inline int64_t whole_next(struct whole *w, double count)
{
    w->exact += count;
    int64_t sum = whole_round(w->exact);
    int64_t v = sum - w->given;
    w->given = sum;
    return v;
}

#endif
