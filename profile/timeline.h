/* The order of a stream's samples, for the trace output: consecutive samples of one task (or of
 * no tag) make one run, and each report of a section timer is marked where it came. Time is
 * counted in samples; the writer turns it into seconds with the announced period. Storage only,
 * fed by ingest.c; bounded: past TIMELINE_MAX runs or marks it stops and says so (truncated). */
#ifndef CMPROF_PROFILE_TIMELINE_H
#define CMPROF_PROFILE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIMELINE_MAX (1u << 20)  /* runs (and marks) kept: 12 MB (and 40 MB) at most */
#define TIMELINE_SECTIONS 32

struct timeline_run { /* (it starts where the one before ends: the first at 0) */
    uint32_t length;  /* samples in it */
    uint32_t tag;
    bool has_tag;
};

struct timeline_mark {  /* a section report: `runs` more runs ended since its last one */
    uint64_t at;        /* samples before it */
    uint32_t section;
    uint64_t runs;
    uint64_t current;   /* the last run's length, in the section timer's ticks */
    uint64_t sum;       /* the new runs' total ticks */
};

/* Its fields are timeline.c's, visible only for timeline_samples' inline common case. */
struct timeline {
    struct timeline_run *runs;
    size_t n_runs, cap_runs;
    uint64_t length;
    bool open;              /* the last run may grow: samples of ... */
    bool open_has_tag;      /* ... this tag ... */
    uint32_t open_tag;
    uint32_t open_room;     /* ... up to this many more */
    struct timeline_mark *marks;
    size_t n_marks, cap_marks;
    uint64_t section_count[TIMELINE_SECTIONS]; /* each section's run count and ticks at its last report */
    uint64_t section_sum[TIMELINE_SECTIONS];
    bool truncated;
};

struct timeline *timeline_new(void); /* NULL when out of memory */
void timeline_free(struct timeline *t);
void timeline_reset(struct timeline *t);
void timeline_samples_slow(struct timeline *t, bool has_tag, uint32_t tag, uint64_t n);
/* n samples in order, of one tag (has_tag false: untagged). Inline: called for every tagged
 * sample, and nearly always of the task before. */
static inline void timeline_samples(struct timeline *t, bool has_tag, uint32_t tag, uint64_t n)
{
    if (t->open && t->open_tag == (has_tag ? tag : 0) && t->open_has_tag == has_tag && n <= t->open_room) {
        t->runs[t->n_runs - 1].length += (uint32_t)n;
        t->open_room -= (uint32_t)n;
        t->length += n;
        return;
    }
    timeline_samples_slow(t, has_tag, tag, n);
}
/* A section's statistics as reported (its run count, last run and sum of ticks so far). */
void timeline_section(struct timeline *t, uint32_t section, uint64_t count, uint64_t current, uint64_t sum);
uint64_t timeline_length(const struct timeline *t); /* samples so far */
size_t timeline_runs(const struct timeline *t, const struct timeline_run **runs);
size_t timeline_marks(const struct timeline *t, const struct timeline_mark **marks);
/* Runs or marks past TIMELINE_MAX were not kept: the timeline covers only its beginning. */
bool timeline_truncated(const struct timeline *t);

#endif
