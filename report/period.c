/* Sample period and section clock from the stream's announce (see period.h). */
#include "period.h"

double period_ns(const struct prof_stream_info *info)
{
    if (!info->present || !info->timer_hz || !info->period)
        return 0;
    double ns = ((double)info->period + (double)info->jitter / 2.0) * 1e9 / (double)info->timer_hz;
    return ns <= 60e9 ? ns : 0; /* the stream decoder refuses an announce past a minute: unknown, never huge */
}

double period_ns_written(struct prof *p)
{
    double ns = period_ns(prof_stream_info(p));
    double stacked = prof_has_stacks(p) ? prof_stack_samples(p) : 0;
    return stacked > 0 ? ns * prof_total(p) / stacked : ns;
}

double period_section_hz(const struct prof_stream_info *info)
{
    if (!info->present)
        return 0;
    return (double)(info->section_hz ? info->section_hz : info->clock_hz);
}
