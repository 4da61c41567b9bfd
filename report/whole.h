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

static inline int64_t whole_next(struct whole *w, double count)
{
    w->exact += count;
    int64_t sum = (int64_t)llround(w->exact);
    int64_t v = sum - w->given;
    w->given = sum;
    return v;
}

#endif
