/* Profile model: a hash of (PC, tag) -> samples, grouped on demand. This file: the profile's
 * life (new, reset, free), its totals, and the confidence intervals every share gets. */
#include "prof_int.h"

#include "../symbols/codemap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double prof_ci95(double share, double n)
{
    return n > 0 ? 1.96 * sqrt(share * (1.0 - share) / n) : 0.0;
}

void prof_wilson95(double share, double n, double *lo, double *hi)
{
    if (n <= 0) {
        *lo = 0;
        *hi = 1;
        return;
    }
    const double z2 = 1.96 * 1.96;
    double denom = 1.0 + z2 / n;
    double center = (share + z2 / (2.0 * n)) / denom;
    double half = 1.96 * sqrt(share * (1.0 - share) / n + z2 / (4.0 * n * n)) / denom;
    *lo = center - half < 0 ? 0 : center - half;
    *hi = center + half > 1 ? 1 : center + half;
}

struct prof *prof_new(struct sym_table *syms)
{
    struct prof *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->syms = syms;
    uint32_t lo, hi;
    if (syms && sym_code_span(syms, &lo, &hi))
        pcidx_init(&p->direct, lo, hi); /* without it (too wide, no memory) the hash does it all */
    return p;
}

void prof_reset(struct prof *p)
{
    pcidx_clear(&p->direct);
    for (size_t i = 0; i < p->n_lanes; i++)
        pcidx_free(&p->lanes[i].idx);
    p->n_lanes = p->last_lane = p->lane_leaves = 0;
    p->direct_pending = false;
    free(p->map);
    p->map = NULL;
    p->cap = p->used = p->unnamed_entries = 0;
    p->bucket_total = 0;
    p->raw_samples = p->sleep = 0;
    p->lost = 0;
    p->weight_extra = p->weight_sq_extra = 0;
    memset(&p->lockstep, 0, sizeof p->lockstep);
    for (size_t i = 0; i < p->n_tasks; i++)
        p->tasks[i].has_samples = false;
    if (p->stacks)
        stacks_reset(p->stacks);
}

void prof_free(struct prof *p)
{
    if (!p)
        return;
    prof_reset(p);
    pcidx_free(&p->direct);
    free(p->lanes);
    free(p->tasks);
    free(p->task_index);
    free(p->pending_task);
    free(p->groups);
    free(p->gindex);
    free(p->rows);
    free(p->names);
    stacks_free(p->stacks);
    free(p->calls);
    codemap_free(p->codemap);
    free(p);
}

void prof_stream_build_id(struct prof *p, const uint8_t *id, size_t len)
{
    p->stream_id_len = len < sizeof p->stream_id ? len : sizeof p->stream_id;
    memcpy(p->stream_id, id, p->stream_id_len);
}

double prof_total(const struct prof *p)
{
    return p->bucket_total + (double)p->raw_samples + p->weight_extra;
}

/* The library's own code: functions defined in firmware/cmprof_*.c, by the DWARF file of the
 * outermost frame (inlined helpers count as their caller's). */
bool prof_in_profiler(const struct sym_location *l)
{
    if (!l || !l->known)
        return false;
    const char *file = sym_frame_at(l, l->n_frames - 1)->file;
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    return base && strncmp(base, "cmprof_", 7) == 0;
}

void prof_fold_overhead(struct prof *p, bool on)
{
    p->fold_overhead = on;
}

bool prof_idle_name(const char *name)
{
    for (int i = 0; i < 4; i++, name++) /* "idle" in any letter case */
        if (*name != "idle"[i] && *name != "IDLE"[i])
            return false;
    if (*name == ' ' && name[1]) /* Zephyr's "idle 00" */
        name++;
    while (*name >= '0' && *name <= '9')
        name++;
    return *name == '\0';
}

/* A sample of a task with an idle task's name (never an interrupt that came while it ran). */
static bool in_idle_task(const struct prof *p, const struct entry *e)
{
    const struct task *tk = prof_in_exception(e) ? NULL : prof_task_of(p, e);
    return tk && prof_idle_name(tk->name);
}

/* The drain's quick exit: cmprof_stream_drain itself or a copy the compiler made of it
 * ("cmprof_stream_drain.constprop.0"), never cmprof_stream_drain_lines, where the work is. */
static bool in_drain_wrapper(const struct sym_location *l)
{
    static const char wrapper[] = "cmprof_stream_drain";
    const size_t n = sizeof wrapper - 1;
    const char *f = l->symbol ? l->symbol : sym_frame_at(l, l->n_frames - 1)->function;
    return f && strncmp(f, wrapper, n) == 0 && (f[n] == '\0' || f[n] == '.');
}

bool prof_idle_poll(const struct prof *p, const struct entry *e, const struct sym_location *l)
{
    return prof_in_profiler(l) && in_drain_wrapper(l) && in_idle_task(p, e);
}

double prof_overhead(struct prof *p, double *idle_polls)
{
    prof_settle(p);
    double total = prof_total(p), own = 0, polls = 0;
    for (size_t i = 0; p->syms && total > 0 && i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count <= 0)
            continue;
        const struct sym_location *l = sym_lookup(p->syms, e->pc);
        if (!prof_in_profiler(l))
            continue;
        if (in_drain_wrapper(l) && in_idle_task(p, e))
            polls += e->count;
        else
            own += e->count;
    }
    if (idle_polls)
        *idle_polls = total > 0 ? polls / total : 0;
    return total > 0 ? own / total : 0;
}

double prof_idle(struct prof *p)
{
    prof_settle(p);
    bool named = false;
    for (size_t i = 0; i < p->n_tasks && !named; i++)
        named = prof_idle_name(p->tasks[i].name);
    double total = prof_total(p);
    if (!named || total <= 0)
        return -1;
    double idle = 0;
    for (size_t i = 0; i < p->cap; i++)
        if (p->map[i].used && in_idle_task(p, &p->map[i]))
            idle += p->map[i].count;
    return idle / total;
}

uint64_t prof_sleep(const struct prof *p)
{
    return p->sleep;
}

struct sym_table *prof_symbols(const struct prof *p)
{
    return p->syms;
}

