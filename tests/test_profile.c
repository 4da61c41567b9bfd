/* Profile model without symbols: counts, shares, intervals, grouping, diagnostics. */
#include "../profile/profile.h"
#include "check.h"

#include <math.h>
#include <string.h>

static double share_of(const struct prof_row *rows, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return rows[i].share;
    return -1;
}

static void test_counts_shares_and_intervals(void)
{
    struct prof *p = prof_new(NULL);
    for (int i = 0; i < 700; i++)
        prof_add_pc(p, 0x08000100u, false, 0);
    for (int i = 0; i < 300; i++)
        prof_add_pc(p, 0x08000200u, false, 0);
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_FUNCTION, true, &rows);
    CHECK(n == 2);
    CHECK(prof_total(p) == 1000);
    CHECK(strcmp(rows[0].name, "0x08000100") == 0 && rows[0].samples == 700);
    CHECK(fabs(rows[0].share - 0.7) < 1e-12);
    CHECK(fabs(rows[0].ci95 - 1.96 * sqrt(0.7 * 0.3 / 1000)) < 1e-12);
    CHECK(fabs(prof_ci95(0.5, 100) - 0.098) < 1e-12);
    CHECK(prof_ci95(0.5, 0) == 0);
    prof_free(p);
}

static void test_task_grouping(void)
{
    struct prof *p = prof_new(NULL);
    prof_task_name(p, 0x20000100u, "motor", 5);
    for (int i = 0; i < 60; i++)
        prof_add_pc(p, 0x08000100u + 2u * (uint32_t)(i % 5), true, 0x20000100u);
    for (int i = 0; i < 30; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000200u);
    for (int i = 0; i < 10; i++)
        prof_add_pc(p, 0x08000100u, false, 0);
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 3);
    CHECK(fabs(share_of(rows, n, "motor") - 0.6) < 1e-12);
    CHECK(fabs(share_of(rows, n, "0x20000200") - 0.3) < 1e-12);
    CHECK(fabs(share_of(rows, n, "(no tag)") - 0.1) < 1e-12);
    prof_free(p);
}

static void test_rows_cover_everything_and_reset(void)
{
    struct prof *p = prof_new(NULL);
    for (uint32_t i = 0; i < 5000; i++)
        prof_add_pc(p, 0x08000000u + 2u * (i * 7919u % 3000u), false, 0);
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_LINE, true, &rows);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += rows[i].samples;
    CHECK(sum == 5000 && n == 3000);
    for (size_t i = 1; i < n; i++)
        CHECK(rows[i - 1].samples >= rows[i].samples);
    prof_reset(p);
    CHECK(prof_total(p) == 0 && prof_rows(p, PROF_BY_FUNCTION, true, &rows) == 0);
    prof_free(p);
}

static void test_lockstep_detected(void)
{
    struct prof *p = prof_new(NULL);
    for (int i = 0; i < 3000; i++)
        prof_add_pc(p, 0x08000100u + 2u * (uint32_t)((i * 37) % 186), false, 0); /* a 186-point cycle */
    struct prof_diag d[8];
    size_t n = prof_diagnose(p, d, 8);
    CHECK(n == 1 && d[0].kind == DIAG_LOCKSTEP && strstr(d[0].text, "every 186 samples"));
    prof_free(p);
}

static void test_random_is_not_lockstep(void)
{
    struct prof *p = prof_new(NULL);
    uint32_t x = 2463534242u;
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        prof_add_pc(p, 0x08000100u + 2u * (x % 8u), false, 0); /* only 8 PCs, but no period */
    }
    struct prof_diag d[8];
    CHECK(prof_diagnose(p, d, 8) == 0);
    prof_free(p);
}

static void test_wrong_stack_zero_pcs(void)
{
    struct prof *p = prof_new(NULL);
    for (int i = 0; i < 500; i++)
        prof_add_pc(p, 0, false, 0);
    struct prof_diag d[8];
    size_t n = prof_diagnose(p, d, 8);
    CHECK(n == 1 && d[0].kind == DIAG_WRONG_STACK && strstr(d[0].text, "500 of 500"));
    prof_free(p);
}

static void test_sleep_is_separate(void)
{
    struct prof *p = prof_new(NULL);
    prof_add_sleep(p);
    prof_add_sleep(p);
    prof_add_pc(p, 0x100, false, 0);
    CHECK(prof_sleep(p) == 2 && prof_total(p) == 1);
    prof_free(p);
}

int main(void)
{
    RUN_TEST(test_counts_shares_and_intervals);
    RUN_TEST(test_task_grouping);
    RUN_TEST(test_rows_cover_everything_and_reset);
    RUN_TEST(test_lockstep_detected);
    RUN_TEST(test_random_is_not_lockstep);
    RUN_TEST(test_wrong_stack_zero_pcs);
    RUN_TEST(test_sleep_is_separate);
    return check_summary();
}
