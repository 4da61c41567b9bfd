/* The samples' order as runs of one tag, and section reports in between (see timeline.h). */
#include "timeline.h"

#include "../base/grow.h"

#include <stdlib.h>
#include <string.h>

struct timeline *timeline_new(void)
{
    return calloc(1, sizeof(struct timeline));
}

void timeline_free(struct timeline *t)
{
    if (!t)
        return;
    free(t->runs);
    free(t->marks);
    free(t);
}

void timeline_reset(struct timeline *t)
{
    t->n_runs = t->n_marks = 0;
    t->length = 0;
    memset(t->section_count, 0, sizeof t->section_count);
    memset(t->section_sum, 0, sizeof t->section_sum);
    t->truncated = false;
    t->open = false;
}

/* Room for one more element, unless the bound or memory says no (then truncated). */
static bool room(struct timeline *t, void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < TIMELINE_MAX && grow_array(v, cap, n + 1, elem, 256))
        return true;
    t->truncated = true;
    return false;
}

void timeline_samples_slow(struct timeline *t, bool has_tag, uint32_t tag, uint64_t n)
{
    t->length += n;
    if (!n)
        return;
    t->open = false;
    if (t->truncated || n > UINT32_MAX || !room(t, (void **)&t->runs, &t->cap_runs, t->n_runs, sizeof *t->runs)) {
        t->truncated = true;
        return;
    }
    t->runs[t->n_runs++] = (struct timeline_run){(uint32_t)n, has_tag ? tag : 0, has_tag};
    t->open = true;
    t->open_has_tag = has_tag;
    t->open_tag = has_tag ? tag : 0;
    t->open_room = UINT32_MAX - (uint32_t)n;
}

void timeline_section(struct timeline *t, uint32_t section, uint64_t count, uint64_t current, uint64_t sum)
{
    if (section >= TIMELINE_SECTIONS)
        return;
    uint64_t before = t->section_count[section];
    if (count == before)
        return; /* a repeated report: no run ended since */
    bool restarted = count < before; /* the firmware started over */
    uint64_t runs = restarted ? count : count - before;
    uint64_t ticks = restarted || sum < t->section_sum[section] ? sum : sum - t->section_sum[section];
    t->section_count[section] = count;
    t->section_sum[section] = sum;
    if (t->truncated || !room(t, (void **)&t->marks, &t->cap_marks, t->n_marks, sizeof *t->marks))
        return;
    t->marks[t->n_marks++] = (struct timeline_mark){t->length, section, runs, current, ticks};
}

uint64_t timeline_length(const struct timeline *t)
{
    return t->length;
}

size_t timeline_runs(const struct timeline *t, const struct timeline_run **runs)
{
    *runs = t->runs;
    return t->n_runs;
}

size_t timeline_marks(const struct timeline *t, const struct timeline_mark **marks)
{
    *marks = t->marks;
    return t->n_marks;
}

bool timeline_truncated(const struct timeline *t)
{
    return t->truncated;
}
