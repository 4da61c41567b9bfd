/* profile/timeline: the samples' order as runs of one tag, section reports marked between them. */
#include "../profile/timeline.h"
#include "check.h"

static void test_runs_of_one_tag(void)
{
    struct timeline *t = timeline_new();
    timeline_samples(t, true, 7, 1);
    timeline_samples(t, true, 7, 1);
    timeline_samples(t, false, 0, 16); /* a block of untagged samples */
    timeline_samples(t, true, 0, 2);   /* tag 0 is not "no tag" */
    timeline_samples(t, true, 7, 1);
    timeline_samples(t, true, 7, 0);   /* nothing */
    const struct timeline_run *r;
    size_t n = timeline_runs(t, &r);
    CHECK(n == 4 && timeline_length(t) == 21);
    CHECK(r[0].length == 2 && r[0].has_tag && r[0].tag == 7);
    CHECK(r[1].length == 16 && !r[1].has_tag);
    CHECK(r[2].length == 2 && r[2].has_tag && r[2].tag == 0);
    CHECK(r[3].length == 1 && !timeline_truncated(t));
    timeline_reset(t);
    CHECK(timeline_runs(t, &r) == 0 && timeline_length(t) == 0);
    timeline_free(t);
}

static void test_section_reports(void)
{
    struct timeline *t = timeline_new();
    timeline_samples(t, false, 0, 10);
    timeline_section(t, 0, 5, 200, 700);
    timeline_section(t, 0, 5, 200, 700); /* repeated: no run ended since */
    timeline_samples(t, false, 0, 10);
    timeline_section(t, 0, 7, 50, 800);
    timeline_section(t, 1, 3, 9, 27);
    timeline_section(t, 0, 2, 40, 90); /* fewer runs: the firmware started over */
    timeline_section(t, 32, 1, 1, 1); /* no such section: ignored */
    const struct timeline_mark *m;
    size_t n = timeline_marks(t, &m);
    CHECK(n == 4);
    CHECK(m[0].at == 10 && m[0].section == 0 && m[0].runs == 5 && m[0].current == 200 && m[0].sum == 700);
    CHECK(m[1].at == 20 && m[1].runs == 2 && m[1].current == 50 && m[1].sum == 100);
    CHECK(m[2].section == 1 && m[2].runs == 3 && m[2].sum == 27);
    CHECK(m[3].runs == 2 && m[3].sum == 90);
    timeline_free(t);
}

/* Past TIMELINE_MAX runs the timeline stops keeping them, says so, and still counts the time. */
static void test_bounded(void)
{
    struct timeline *t = timeline_new();
    for (uint32_t i = 0; i < TIMELINE_MAX + 10; i++)
        timeline_samples(t, true, i & 1, 1);
    const struct timeline_run *r;
    CHECK(timeline_runs(t, &r) == TIMELINE_MAX && timeline_truncated(t));
    CHECK(timeline_length(t) == TIMELINE_MAX + 10);
    timeline_section(t, 0, 1, 1, 1);
    const struct timeline_mark *m;
    CHECK(timeline_marks(t, &m) == 0);
    timeline_free(t);
}

int main(void)
{
    RUN_TEST(test_runs_of_one_tag);
    RUN_TEST(test_section_reports);
    RUN_TEST(test_bounded);
    return check_summary();
}
