/* Profile model without symbols: counts, shares, intervals, grouping, diagnostics; and with a
 * code range only, where samples are counted by address, against the same samples hashed. */
#include "../decode/event.h"
#include "../profile/prof_int.h"
#include "../profile/escape.h"
#include "../profile/profile.h"
#include "../symbols/symbols.h"
#include "check.h"
#include "elf_writer.h"

#include <gelf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    CHECK(fabs(rows[0].ci95 - (rows[0].hi95 - rows[0].lo95) / 2) < 1e-12);
    CHECK(rows[0].lo95 < 0.7 && rows[0].hi95 > 0.7);
    CHECK(fabs(prof_ci95(0.5, 100) - 0.098) < 1e-12);
    CHECK(prof_ci95(0.5, 0) == 0);
    /* Wilson's interval: 1 of 16 is 1.11 % to 28.33 % (the normal approximation: -5.61 % to 18.11 %) */
    double lo, hi;
    prof_wilson95(1.0 / 16, 16, &lo, &hi);
    CHECK(fabs(lo - 0.011118) < 1e-5 && fabs(hi - 0.283290) < 1e-5);
    prof_wilson95(1.0, 16, &lo, &hi); /* all samples in one row: not 100 % +- 0 */
    CHECK(hi == 1.0 && lo < 0.81 && lo > 0.79);
    prof_wilson95(0.0, 16, &lo, &hi);
    CHECK(lo == 0.0 && hi > 0.19 && hi < 0.21);
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

/* Issue 31: tasks with one name are one row (a thread re-created under its name, a pool of
 * same-named workers), which says how many tasks had the name. */
static void test_duplicate_task_names_one_row(void)
{
    struct prof *p = prof_new(NULL);
    prof_task_name(p, 0x20000100u, "worker", 6);
    prof_task_name(p, 0x20000200u, "worker", 6);
    prof_task_name(p, 0x20000300u, "motor", 5);
    for (int i = 0; i < 30; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u + 0x100u * (uint32_t)(i % 3));
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 2);
    CHECK(fabs(share_of(rows, n, "worker") - 2.0 / 3) < 1e-12 && fabs(share_of(rows, n, "motor") - 1.0 / 3) < 1e-12);
    for (size_t i = 0; i < n; i++)
        CHECK(rows[i].instances == (strcmp(rows[i].name, "worker") == 0 ? 2u : 1u));
    char buf[64];
    CHECK(strcmp(prof_tag_label(p, 0x20000200u, buf, sizeof buf), "worker") == 0); /* folded, trace: one name */
    prof_free(p);
}

/* Issue 31: samples of a stream index whose name has not come yet (a late attach) are a row of
 * their index, and join the task's row, with any samples of the task since, when the name comes. */
static void test_pending_index_takes_its_name(void)
{
    struct prof *p = prof_new(NULL);
    for (int i = 0; i < 30; i++)
        prof_add_pc(p, 0x08000100u + 2u * (uint32_t)(i % 3), true, EV_TAG_PENDING(3));
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 1 && strcmp(rows[0].name, "task #3 (name pending)") == 0);
    prof_task_name(p, 0x20000300u, "motor", 5);
    prof_task_pending_named(p, EV_TAG_PENDING(3), 0x20000300u);
    for (int i = 0; i < 10; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000300u);
    n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 1 && strcmp(rows[0].name, "motor") == 0 && rows[0].samples == 40);
    char buf[64];
    CHECK(strcmp(prof_tag_label(p, EV_TAG_PENDING(3), buf, sizeof buf), "motor") == 0); /* the trace's lanes */
    struct prof_diag d[8];
    size_t nd = prof_diagnose(p, d, 8);
    for (size_t i = 0; i < nd; i++)
        CHECK(d[i].kind != DIAG_UNNAMED_TAGS);
    prof_free(p);
}

/* An RTOS reuses a deleted task's control block for the next task: the tag comes back with a
 * new name. The old task keeps the samples it had; the new one gets only its own. */
static void test_reused_tag_keeps_each_tasks_samples(void)
{
    struct prof *p = prof_new(NULL);
    prof_add_pc(p, 0x08000100u, true, 0x20000100u); /* before any name: named later, as "?" then "boot" */
    prof_task_name(p, 0x20000100u, "?", 1);
    prof_task_name(p, 0x20000100u, "boot", 4);
    for (int i = 0; i < 39; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u);
    prof_task_name(p, 0x20000100u, "w1", 2); /* the block now holds another task */
    for (int i = 0; i < 20; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u);
    prof_task_name(p, 0x20000100u, "w1", 2); /* a re-announce changes nothing */
    prof_task_name(p, 0x20000100u, "w2", 2);
    for (int i = 0; i < 30; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u);
    prof_task_name(p, 0x20000100u, "w1", 2); /* and w1 again: its own row grows */
    for (int i = 0; i < 10; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u);
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 3);
    CHECK(fabs(share_of(rows, n, "boot") - 0.4) < 1e-12);
    CHECK(fabs(share_of(rows, n, "w1") - 0.3) < 1e-12);
    CHECK(fabs(share_of(rows, n, "w2") - 0.3) < 1e-12);
    /* a name another tag takes (w2 re-created elsewhere) joins the name's row */
    prof_task_name(p, 0x20000200u, "w2", 2);
    for (int i = 0; i < 10; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000200u);
    n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 3);
    CHECK(fabs(share_of(rows, n, "w2") - 40.0 / 110) < 1e-12 && fabs(share_of(rows, n, "w1") - 30.0 / 110) < 1e-12);
    prof_free(p);
}

/* The idle tasks' names: FreeRTOS's, Zephyr's, one per CPU on SMP, and nothing else. */
static void test_idle_names(void)
{
    const char *idle[] = {"idle", "IDLE", "IDLE0", "IDLE1", "IDLE12", "idle 00", "idle 01", "Idle"};
    const char *not_idle[] = {"", "idl", "idler", "IDLE_", "IDLE 0x", "idle ", "my idle", "idle  00", "IDLEx0"};
    for (size_t i = 0; i < sizeof idle / sizeof *idle; i++)
        CHECK(prof_idle_name(idle[i]));
    for (size_t i = 0; i < sizeof not_idle / sizeof *not_idle; i++)
        CHECK(!prof_idle_name(not_idle[i]));
}

/* The firmware's idle task (named "idle", on one core or two) is the idle share; none without it. */
static void test_idle_share(void)
{
    struct prof *p = prof_new(NULL);
    prof_task_name(p, 0x20000100u, "motor", 5);
    for (int i = 0; i < 30; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u);
    CHECK(prof_idle(p) < 0);
    prof_task_name(p, 0x20000200u, "idle", 4);
    prof_task_name(p, 0x20000300u, "idle", 4);
    for (int i = 0; i < 60; i++)
        prof_add_pc(p, 0x08000100u, true, i % 2 ? 0x20000200u : 0x20000300u);
    for (int i = 0; i < 10; i++)
        prof_add_pc(p, 0x08000100u, true, 0xFFFFFE0Fu);
    CHECK(fabs(prof_idle(p) - 0.6) < 1e-12);
    prof_free(p);
    /* FreeRTOS SMP's names, one idle task per core */
    p = prof_new(NULL);
    prof_task_name(p, 0x20000100u, "motor", 5);
    prof_task_name(p, 0x20000200u, "IDLE0", 5);
    prof_task_name(p, 0x20000300u, "IDLE1", 5);
    for (int i = 0; i < 40; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u + 0x100u * (uint32_t)(i % 4 ? 1 + i % 2 : 0));
    CHECK(fabs(prof_idle(p) - 0.75) < 1e-12);
    prof_free(p);
}

/* Call stacks: who calls a function and what it calls, and the folded stacks from root to leaf. */
static char folded_out[4096];

static void collect_folded(void *ctx, const char *stack, double count)
{
    (void)ctx;
    size_t n = strlen(folded_out);
    snprintf(folded_out + n, sizeof folded_out - n, "%s %.0f\n", stack, count);
}

static void test_call_stacks(void)
{
    struct prof *p = prof_new(NULL);
    const uint32_t from_b[] = {0x08000200u, 0x08000400u}, from_c[] = {0x08000300u, 0x08000400u};
    for (int i = 0; i < 4; i++) {
        prof_add_pc(p, 0x08000100u, false, 0);
        prof_add_stack(p, 0x08000100u, i < 3 ? from_b : from_c, 2, false, 0);
    }
    prof_add_pc(p, 0x08000200u, false, 0);
    prof_add_stack(p, 0x08000200u, from_b + 1, 1, false, 0);
    CHECK(prof_has_stacks(p) && prof_stack_samples(p) == 5);
    const struct prof_call *c;
    double total;
    size_t n = prof_calls(p, "0x08000100", true, &c, &total);
    CHECK(n == 2 && total == 4 && strcmp(c[0].name, "0x08000200") == 0 && c[0].samples == 3 &&
          fabs(c[0].share - 0.75) < 1e-12 && strcmp(c[1].name, "0x08000300") == 0 && c[1].lo95 > 0);
    n = prof_calls(p, "0x08000200", false, &c, &total); /* its callee, and its own samples */
    CHECK(n == 2 && total == 4 && strcmp(c[0].name, "0x08000100") == 0 && c[0].samples == 3 &&
          strcmp(c[1].name, PROF_SELF) == 0 && c[1].samples == 1);
    n = prof_calls(p, "0x08000400", true, &c, &total);
    CHECK(n == 1 && strcmp(c[0].name, PROF_STACK_END) == 0 && total == 5);
    folded_out[0] = '\0';
    prof_folded(p, false, false, collect_folded, NULL);
    CHECK(strstr(folded_out, "0x08000400;0x08000200;0x08000100 3\n") &&
          strstr(folded_out, "0x08000400;0x08000300;0x08000100 1\n") && strstr(folded_out, "0x08000400;0x08000200 1\n"));
    prof_reset(p);
    CHECK(!prof_has_stacks(p));
    prof_free(p);
}

/* Hundreds of tasks named and re-announced: each name is a lookup, not a pass over all tasks. */
static void test_many_tasks(void)
{
    struct prof *p = prof_new(NULL);
    char name[16];
    for (int round = 0; round < 3; round++) /* the firmware repeats every name each second */
        for (uint32_t t = 0; t < 4000; t++) {
            int len = snprintf(name, sizeof name, "t%u", (unsigned)t);
            prof_task_name(p, 0x20000000u + 0x60u * t, name, (size_t)len);
        }
    for (uint32_t i = 0; i < 8000; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000000u + 0x60u * (i % 4000u));
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 4000);
    CHECK(fabs(share_of(rows, n, "t3999") - 2.0 / 8000) < 1e-12);
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

/* A batch (a text dump's raw block) counts as the same samples one by one: rows, totals and the
 * recent ring the lockstep test reads, including batches longer than the ring. */
static void test_batch_equals_one_by_one(void)
{
    static uint32_t pcs[20000];
    for (int i = 0; i < 20000; i++)
        pcs[i] = 0x08000100u + 2u * (uint32_t)((i * 37) % 186);
    struct prof *one = prof_new(NULL), *batch = prof_new(NULL);
    for (int i = 0; i < 20000; i++)
        prof_add_pc(one, pcs[i], false, 0);
    prof_add_pcs(batch, pcs, 5);
    prof_add_pcs(batch, pcs + 5, 19995);
    const struct prof_row *ra, *rb;
    size_t na = prof_rows(one, PROF_BY_FUNCTION, true, &ra), nb = prof_rows(batch, PROF_BY_FUNCTION, true, &rb);
    CHECK(na == 186 && na == nb && prof_total(one) == 20000 && prof_total(batch) == 20000);
    bool same = true;
    for (size_t i = 0; i < na && i < nb; i++)
        same &= strcmp(ra[i].name, rb[i].name) == 0 && ra[i].samples == rb[i].samples;
    CHECK(same);
    struct prof_diag da[8], db[8];
    size_t ka = prof_diagnose(one, da, 8), kb = prof_diagnose(batch, db, 8);
    CHECK(ka == 1 && kb == 1 && strcmp(da[0].text, db[0].text) == 0);
    prof_free(one);
    prof_free(batch);
}

/* A window that shares the whole run's ring (the live view's) finds the lockstep its own ring would:
 * after the whole profile was reset under it, fed one by one and in batches, and after the whole run
 * moved on past its samples once it was done. */
static void test_shared_order_lockstep(void)
{
    struct prof *whole = prof_new(NULL), *win = prof_new(NULL), *own = prof_new(NULL);
    prof_share_order(win, whole);
    uint32_t x = 2463534242u, pcs[1500];
    for (int i = 0; i < 5000; i++) { /* before the window's start: noise only the whole run took */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        prof_add_pc(whole, 0x08000100u + 2u * (x % 500u), false, 0);
    }
    prof_reset(win);
    for (int i = 0; i < 3000; i++) {
        uint32_t pc = 0x08000100u + 2u * (uint32_t)((i * 37) % 186); /* a 186-point cycle */
        if (i == 1000)
            prof_reset(whole); /* the reset key: the window counting on goes on */
        prof_add_pc(whole, pc, false, 0);
        prof_add_pc(win, pc, false, 0);
        prof_add_pc(own, pc, false, 0);
    }
    for (int i = 0; i < 1500; i++)
        pcs[i] = 0x08000100u + 2u * (uint32_t)(((i + 3000) * 37) % 186);
    prof_add_pcs(whole, pcs, 1500);
    prof_add_pcs(win, pcs, 1500);
    prof_add_pcs(own, pcs, 1500);
    prof_order_done(win);
    for (int i = 0; i < 20000; i++) { /* the whole run moves on: its ring holds none of the window's PCs */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        prof_add_pc(whole, 0x08000100u + 2u * (x % 500u), false, 0);
    }
    struct prof_diag dw[8], d_own[8];
    size_t kw = prof_diagnose(win, dw, 8), k_own = prof_diagnose(own, d_own, 8);
    CHECK(k_own == 1 && d_own[0].kind == DIAG_LOCKSTEP && strstr(d_own[0].text, "every 186 samples"));
    CHECK(kw == 1 && k_own == 1 && strcmp(dw[0].text, d_own[0].text) == 0);
    prof_free(whole);
    prof_free(win);
    prof_free(own);
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

/* ---- lockstep on realistic sequences, over many seeds ---------------------------------------- */

static uint32_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Whether the profile's diagnostics name lockstep; the profile is freed. */
static bool lockstep_and_free(struct prof *p)
{
    struct prof_diag d[8];
    size_t n = prof_diagnose(p, d, 8);
    bool flagged = false;
    for (size_t k = 0; k < n; k++)
        flagged |= d[k].kind == DIAG_LOCKSTEP;
    prof_free(p);
    return flagged;
}

/* A loop of `len` instructions sampled every `period` instructions. wobble: the chance per sample
 * that it lands a few instructions off (interrupt latency, a wait state, another interrupt first),
 * while the timer keeps its period; jitter: a random extra delay of 0..jitter instructions per
 * sample (CMPROF_JITTER), which moves every later sample. */
static bool lockstep_flagged(uint32_t seed, uint32_t len, uint32_t period, double wobble, uint32_t jitter)
{
    rng_state = seed * 2654435761u | 1u;
    struct prof *p = prof_new(NULL);
    uint32_t phase = rnd() % len;
    for (int i = 0; i < 8192; i++) {
        uint32_t at = phase;
        if (wobble > 0 && (rnd() % 10000u) < (uint32_t)(wobble * 10000))
            at = (phase + 1u + rnd() % 12u) % len;
        prof_add_pc(p, 0x08000100u + 2u * at, false, 0);
        phase = (phase + period + (jitter ? rnd() % (jitter + 1) : 0)) % len;
    }
    return lockstep_and_free(p);
}

/* An idle loop holding most of the time (a WFI or a polling loop of a few PCs) and independent
 * samples elsewhere: many equal neighbours, but no lockstep. */
static bool idle_flagged(uint32_t seed, double idle_share, uint32_t idle_pcs)
{
    rng_state = seed * 2654435761u | 1u;
    struct prof *p = prof_new(NULL);
    for (int i = 0; i < 8192; i++) {
        bool idle = (rnd() % 10000u) < (uint32_t)(idle_share * 10000);
        uint32_t pc = idle ? 0x08001000u + 2u * (rnd() % idle_pcs) : 0x08000100u + 2u * (rnd() % 400u);
        prof_add_pc(p, pc, false, 0);
    }
    return lockstep_and_free(p);
}

#define SEEDS 100

static void test_lockstep_exact_and_near_periodic(void)
{
    /* loop lengths and periods whose PC cycles are 143 to 777 samples long (shorter than a quarter of
     * the 8192-sample window; a longer cycle visits most of the loop and barely biases the profile) */
    static const uint32_t lens[][2] = {{1000, 1958}, {5022, 16002}, {777, 10007}, {4096, 1000}, {1001, 15022}};
    static const double wobbles[] = {0.0, 0.01, 0.03, 0.05};
    for (size_t w = 0; w < sizeof wobbles / sizeof wobbles[0]; w++) {
        int hits = 0, runs = 0;
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            for (uint32_t seed = 1; seed <= SEEDS; seed++, runs++)
                hits += lockstep_flagged(seed, lens[l][0], lens[l][1], wobbles[w], 0);
        printf("     lockstep, timing slips in %.0f %% of samples: flagged in %d of %d runs\n", 100 * wobbles[w], hits,
               runs);
        CHECK(hits == runs);
    }
}

static void test_lockstep_no_false_alarms(void)
{
    int alarms = 0, runs = 0;
    for (uint32_t seed = 1; seed <= SEEDS; seed++, runs += 3) {
        alarms += lockstep_flagged(seed, 5022, 16000, 0.0, 2047); /* CMPROF_JITTER=2047 */
        alarms += lockstep_flagged(seed, 1000, 1958, 0.0, 255);
        alarms += lockstep_flagged(seed, 777, 10007, 0.01, 1023);
    }
    printf("     lockstep, jittered periods: %d false alarms in %d runs\n", alarms, runs);
    CHECK(alarms == 0);
    int idle_alarms = 0, idle_runs = 0;
    static const double shares[] = {0.5, 0.8, 0.9, 0.95, 0.99};
    for (size_t s = 0; s < sizeof shares / sizeof shares[0]; s++)
        for (uint32_t seed = 1; seed <= SEEDS; seed++, idle_runs += 2) {
            idle_alarms += idle_flagged(seed, shares[s], 1);
            idle_alarms += idle_flagged(seed, shares[s], 3);
        }
    printf("     lockstep, one idle loop with 50-99 %% of samples: %d false alarms in %d runs\n", idle_alarms,
           idle_runs);
    CHECK(idle_alarms == 0);
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

/* The lockstep advice names what fixes it for the sampler that took the samples: the firmware's
 * timer (CMPROF_JITTER), the DWT's PC sampler (POSTPRESET/CYCTAP), a probe's halts (--rate). */
static void test_lockstep_advice_by_sampler(void)
{
    static const struct {
        enum prof_sampler s;
        const char *want, *never;
    } cases[] = {{PROF_SAMPLER_FIRMWARE, "build with CMPROF_JITTER", "POSTPRESET"},
                 {PROF_SAMPLER_DWT, "POSTPRESET", "build with CMPROF_JITTER"},
                 {PROF_SAMPLER_HALTING, "--rate", "CMPROF_JITTER"},
                 {PROF_SAMPLER_PCSR, "DWT_PCSR", "build with CMPROF_JITTER"},
                 {PROF_SAMPLER_UNKNOWN, "CMPROF_JITTER", "\x01"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        struct prof *p = prof_new(NULL);
        prof_set_sampler(p, cases[c].s);
        for (int i = 0; i < 3000; i++)
            prof_add_pc(p, 0x08000100u + 2u * (uint32_t)((i * 37) % 186), false, 0);
        struct prof_diag d[8];
        size_t n = prof_diagnose(p, d, 8);
        CHECK(n == 1 && d[0].kind == DIAG_LOCKSTEP && strstr(d[0].text, cases[c].want) &&
              !strstr(d[0].text, cases[c].never));
        CHECK(n == 1 && strlen(d[0].text) + 1 < sizeof d[0].text); /* whole, not cut */
        prof_free(p);
    }
}

/* PC 0 in 1 % to 90 % of samples: a memory fault (a ring past the machine's RAM reads 0), not a row
 * without a word; never on a profile without PC 0. */
static void test_pc_zero_memory_fault(void)
{
    struct prof *p = prof_new(NULL);
    for (int i = 0; i < 1000; i++)
        prof_add_pc(p, i % 13 == 0 ? 0u : 0x08000100u + 2u * (uint32_t)(i * 7919 % 400), false, 0);
    struct prof_diag d[8];
    size_t n = prof_diagnose(p, d, 8), found = 0;
    for (size_t i = 0; i < n; i++)
        found += d[i].kind == DIAG_MEMORY_FAULT && strstr(d[i].text, "7.7 % of samples (77)") != NULL;
    CHECK(found == 1);
    struct prof_trust t;
    prof_trust(p, &t);
    CHECK(fabs(t.zero_share - 0.077) < 1e-9 && !t.wrong_elf);
    prof_reset(p);
    for (int i = 0; i < 1000; i++)
        prof_add_pc(p, i % 200 == 0 ? 0u : 0x08000100u + 2u * (uint32_t)(i * 7919 % 400), false, 0); /* 0.5 % */
    n = prof_diagnose(p, d, 8);
    for (size_t i = 0; i < n; i++)
        CHECK(d[i].kind != DIAG_MEMORY_FAULT);
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

/* An ARM ELF with nothing but 256 KB of code at 0x08000000: a profile given it counts the samples
 * in that range by address. Written with libelf; false when it could not be. */
static bool write_code_only_elf(const char *path)
{
    static uint8_t code[0x40000];
    const struct elf_writer_section text = {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x08000000u, code,
                                            sizeof code, ELF_T_BYTE, 0, 0, 0};
    return elf_writer_write(path, &text, 1);
}

/* The code-only ELF written to a new temporary file (its name in path) and opened; NULL when it
 * could not be (the file then removed). */
static struct sym_table *open_code_only_elf(char *path)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return NULL;
    close(fd);
    CHECK(write_code_only_elf(path));
    char err[256];
    struct sym_table *syms = sym_open(path, err, sizeof err);
    if (!syms)
        unlink(path);
    return syms;
}

/* Rows of one grouping, as text: name and samples of each, in order. */
static void rows_text(struct prof *p, enum prof_group by, char *out, size_t cap)
{
    const struct prof_row *rows;
    size_t n = prof_rows(p, by, false, &rows), len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && len + 80 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s=%.0f;", rows[i].name, rows[i].samples);
}

/* Samples in the code are counted in arrays, tagged ones per (tag, task record), with bounds on the
 * lanes and their leaves (here 100 tags over 256 KB pass both); others go to the hash. Fed the same
 * random samples, task names, resets and reads, a profile with the code range (counters) and one
 * without (all hashed) show the same rows. */
static void test_counters_match_the_hash(void)
{
    char path[] = "/tmp/cmprof-test-code-XXXXXX";
    struct sym_table *syms = open_code_only_elf(path);
    uint32_t lo = 0, hi = 0;
    CHECK(syms && sym_code_span(syms, &lo, &hi) && lo == 0x08000000u && hi == 0x08040000u);
    struct prof *counted = prof_new(syms), *hashed = prof_new(NULL);
    static const char *const names[] = {"motor", "worker", "idle", "?", "w1"};
    static char a[1 << 16], b[1 << 16];
    uint32_t rng = 7u;
    int reads = 0, same = 0;
    for (int k = 0; k < 60000; k++) {
        rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
        uint32_t r = rng % 1000u, pc = 0x08000000u + 2u * ((rng >> 10) % 0x20000u);
        if (r < 5) /* odd, or outside the code */
            pc = r < 2 ? pc | 1u : 0x20000000u + (rng >> 12);
        /* 100 tags, more than the lanes: the first ones much more often, in runs as tasks run */
        static uint32_t tag = 0x20001000u;
        if (r % 50 == 7)
            tag = 0x20001000u + 0x40u * ((rng >> 3) % ((rng >> 20) % 2 ? 100u : 6u));
        bool has_tag = r >= 100;
        if (r == 999) {
            prof_task_name(counted, tag, names[(rng >> 7) % 5], 5);
            prof_task_name(hashed, tag, names[(rng >> 7) % 5], 5);
        } else if (r == 998 && (rng >> 8) % 20 == 0) {
            prof_reset(counted);
            prof_reset(hashed);
        } else if ((r == 997 && (rng >> 8) % 3 == 0) || k == 59999) {
            for (enum prof_group by = PROF_BY_TASK; by <= PROF_BY_ADDRESS; by++) {
                rows_text(counted, by, a, sizeof a);
                rows_text(hashed, by, b, sizeof b);
                reads++;
                same += strcmp(a, b) == 0 && a[0] != '\0';
            }
        } else {
            prof_add_pc(counted, pc, has_tag, tag);
            prof_add_pc(hashed, pc, has_tag, tag);
        }
    }
    CHECK(reads > 30 && same == reads);
    CHECK(prof_total(counted) == prof_total(hashed));
    prof_free(counted);
    prof_free(hashed);
    sym_close(syms);
    unlink(path);
}

/* A tag that has a task record keeps counting in its lanes when it takes another name (a control
 * block re-used by a new worker, a name index given to another name): the counters are moved into
 * the profile's entries when it is read, not at each name. Draining them at each name made a
 * stream of workers under ever new names cost 58 us a sample (every lane scanned each time). */
static void test_names_leave_the_counters_alone(void)
{
    char path[] = "/tmp/cmprof-test-code-XXXXXX";
    struct sym_table *syms = open_code_only_elf(path);
    CHECK(syms != NULL);
    struct prof *p = prof_new(syms);
    prof_task_name(p, 0x20000100u, "w0", 2);
    int drained = 0;
    for (int k = 1; k <= 100; k++) {
        for (int i = 0; i < 3; i++)
            prof_add_pc(p, 0x08000100u + 2u * (uint32_t)i, true, 0x20000100u);
        char name[8];
        snprintf(name, sizeof name, "w%d", k);
        prof_task_name(p, 0x20000100u, name, strlen(name));
        drained += !p->direct_pending;
    }
    CHECK(drained == 0);
    const struct prof_row *rows;
    size_t n = prof_rows(p, PROF_BY_TASK, true, &rows);
    CHECK(n == 100 && fabs(share_of(rows, n, "w0") - 0.01) < 1e-12 && fabs(share_of(rows, n, "w99") - 0.01) < 1e-12);
    CHECK(share_of(rows, n, "w100") < 0); /* named after its tag's last sample: no row */
    prof_free(p);
    sym_close(syms);
    unlink(path);
}

/* The text outputs' escapes are unambiguous: a name holding the four characters \x1b and one holding the ESC
 * byte read differently, and esc_decode gives each back; the folded stacks' old \x5c reads as a backslash. */
static void test_escape_backslash(void)
{
    char a[64], b[64], back[64];
    esc_text(a, sizeof a, "fn\\x1b", NULL);
    esc_text(b, sizeof b, "fn\x1b", NULL);
    CHECK(strcmp(a, "fn\\\\x1b") == 0 && strcmp(b, "fn\\x1b") == 0);
    esc_decode(back, a, strlen(a));
    CHECK(strcmp(back, "fn\\x1b") == 0);
    esc_decode(back, b, strlen(b));
    CHECK(strcmp(back, "fn\x1b") == 0);
    esc_text(a, sizeof a, "C:\\src\\a;b.c", ";");
    CHECK(strcmp(a, "C:\\\\src\\\\a\\x3bb.c") == 0);
    esc_decode(back, a, strlen(a));
    CHECK(strcmp(back, "C:\\src\\a;b.c") == 0);
    esc_decode(back, "C:\\x5csrc", 9); /* a folded stack of an older release */
    CHECK(strcmp(back, "C:\\src") == 0);
    esc_text(a, 4, "a\\b", NULL); /* cut whole, never half an escape */
    CHECK(strcmp(a, "a\\\\") == 0);
    esc_text(a, 3, "a\\b", NULL);
    CHECK(strcmp(a, "a") == 0);
}

int main(void)
{
    RUN_TEST(test_counts_shares_and_intervals);
    RUN_TEST(test_task_grouping);
    RUN_TEST(test_duplicate_task_names_one_row);
    RUN_TEST(test_pending_index_takes_its_name);
    RUN_TEST(test_reused_tag_keeps_each_tasks_samples);
    RUN_TEST(test_many_tasks);
    RUN_TEST(test_idle_names);
    RUN_TEST(test_idle_share);
    RUN_TEST(test_call_stacks);
    RUN_TEST(test_rows_cover_everything_and_reset);
    RUN_TEST(test_lockstep_detected);
    RUN_TEST(test_batch_equals_one_by_one);
    RUN_TEST(test_shared_order_lockstep);
    RUN_TEST(test_random_is_not_lockstep);
    RUN_TEST(test_lockstep_exact_and_near_periodic);
    RUN_TEST(test_lockstep_no_false_alarms);
    RUN_TEST(test_wrong_stack_zero_pcs);
    RUN_TEST(test_lockstep_advice_by_sampler);
    RUN_TEST(test_pc_zero_memory_fault);
    RUN_TEST(test_sleep_is_separate);
    RUN_TEST(test_counters_match_the_hash);
    RUN_TEST(test_names_leave_the_counters_alone);
    RUN_TEST(test_escape_backslash);
    return check_summary();
}
