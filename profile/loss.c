/* Samples the firmware took but could not keep, and the bound they put on every share. A full
 * ring is never a random loss: it fills exactly while the drain cannot run, that is while
 * something else holds the CPU, so the lost samples are that something's. */
#include "prof_int.h"

void prof_samples_lost(struct prof *p, uint64_t lost)
{
    p->lost += lost;
}

uint64_t prof_lost(const struct prof *p)
{
    return p->lost;
}

bool prof_loss_bound(const struct prof *p, double samples, double *lo, double *hi)
{
    double taken = prof_total(p) + (double)p->lost;
    if (p->lost == 0 || taken <= 0) {
        *lo = *hi = taken > 0 ? samples / taken : 0;
        return false;
    }
    /* none of the lost samples was the row's, or all of them were */
    *lo = samples / taken;
    *hi = (samples + (double)p->lost) / taken;
    return true;
}

bool prof_loss_beyond(const struct prof *p, const struct prof_row *r)
{
    double lo, hi;
    return prof_loss_bound(p, r->samples, &lo, &hi) && (lo < r->lo95 || hi > r->hi95);
}

double prof_effective_n(const struct prof *p)
{
    double total = prof_total(p), squares = total + p->weight_sq_extra - p->weight_extra;
    return p->weight_sq_extra > 0 && squares > 0 ? total * total / squares : total;
}
