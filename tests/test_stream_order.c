/* Name ordering under churn: FreeRTOS's trace hooks (tests/zoo/freertos_hooks.c) create, switch
 * and delete tasks in a small pool of control blocks (so blocks are reused), at random but from
 * fixed seeds, between and *inside* drains (a kernel hook and the sampler preempting the drain are
 * played from the drain's putc). Every sample's task is recorded as it is taken; the stream is read
 * back by the host's decoder and each sample must carry its own task's name, never another's.
 * Built twice: with the default table (blocks keep their slot; renamed slots) and as
 * test_stream_order_small with 6 slots (a full table: deleted tasks' slots given to new tasks);
 * there a sample may go unnamed only if the stream said the table was full. */
#include "../decode/text.h"
#include "check.h"
#include "fake_regs.h"
#include "zoo/freertos_hooks.c"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL 10u        /* control blocks: more than the small table build's slots */
#define MAX_LIVE 5u     /* tasks alive at once: within the small build's table */
#define MAX_SAMPLES 200000u

static char out[1 << 23];
static size_t out_len;
static uint32_t rng;

static TCB_t pool[POOL];
static int owner[POOL];              /* the task id in each control block, -1: free */
static int current = -1;             /* the control block running */
static unsigned next_id;
static unsigned truth[MAX_SAMPLES];  /* each sample's task id */
static unsigned n_truth;
static int in_putc;                  /* a preemption is being played: no nesting */
static unsigned preempt_odds;        /* 1 in this many putc calls is preempted; 0: never */

static uint32_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static void switch_to(unsigned b)
{
    current = (int)b;
    pxCurrentTCB = &pool[b];
    task_switched();
}

static void tick(void)
{
    if (n_truth < MAX_SAMPLES) {
        truth[n_truth++] = (unsigned)owner[current];
        cmprof_tick(0x08000100u + 2u * (next_random() & 63u));
    }
}

static unsigned live_count(void)
{
    unsigned n = 0;
    for (unsigned b = 0; b < POOL; b++)
        n += owner[b] >= 0;
    return n;
}

/* A random block that is free (want_live 0) or holds a task other than `not` (1); -1: none. */
static int pick_block(int want_live, int not)
{
    unsigned start = next_random() % POOL;
    for (unsigned k = 0; k < POOL; k++) {
        unsigned b = (start + k) % POOL;
        if ((owner[b] >= 0) == want_live && (int)b != not)
            return (int)b;
    }
    return -1;
}

static void create_task_in(unsigned b)
{
    owner[b] = (int)next_id;
    snprintf(pool[b].pcTaskName, sizeof pool[b].pcTaskName, "t%u", next_id++);
    task_created(&pool[b]);
}

static void create_task(void)
{
    int b = pick_block(0, -1);
    if (b >= 0 && live_count() < MAX_LIVE)
        create_task_in((unsigned)b);
}

/* Delete a task other than the one running (`keep`, the drain's own when preempted). */
static void delete_task(int keep)
{
    int b = pick_block(1, keep);
    if (b < 0 || b == current)
        return;
    task_deleted(&pool[b]);
    owner[b] = -1;
}

/* A higher-priority task preempts the drain: it may create and delete tasks, run and be sampled,
 * then the drain's task goes on. */
static void preempt(void)
{
    int was = current;
    for (unsigned steps = 1u + next_random() % 4u; steps--;) {
        uint32_t r = next_random() % 8u;
        if (r < 3u)
            create_task();
        else if (r < 5u)
            delete_task(was);
        else {
            int b = pick_block(1, -1);
            if (b >= 0)
                switch_to((unsigned)b);
            for (unsigned k = next_random() % 3u; k--;)
                if (cmprof_stream_pending() < 60u)
                    tick();
        }
    }
    switch_to((unsigned)was);
}

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
    if (preempt_odds && !in_putc && next_random() % preempt_odds == 0u) {
        in_putc = 1;
        preempt();
        in_putc = 0;
    }
}

static void ring_room(void)
{
    while (cmprof_stream_pending() >= 56u)
        cmprof_stream_drain(capture, 8);
}

/* The host's view: each sample's name is the last one given to its tag before it. */
struct names {
    uint32_t tags[256];
    char names[256][16];
    unsigned n;
    unsigned sample, wrong, unnamed, first_wrong;
    int full_said; /* the stream said its table was full (@full): unnamed samples are then allowed */
    uint64_t bad_lines;
    unsigned lost, taken;
};

static void host_event(void *ctx, const struct ev *e)
{
    struct names *h = ctx;
    unsigned i = 0;
    uint32_t tag = e->type == EV_TASK_NAME ? e->task_name.tag : e->type == EV_PC ? e->pc.tag : 0;
    while (i < h->n && h->tags[i] != tag)
        i++;
    if (e->type == EV_TASK_NAME) {
        if (i == h->n && h->n < 256u)
            h->n++;
        h->tags[i] = tag;
        snprintf(h->names[i], sizeof h->names[i], "%.*s", (int)e->task_name.name_len, e->task_name.name);
    } else if (e->type == EV_TABLE_FULL) {
        h->full_said = 1;
    } else if (e->type == EV_PC) {
        char want[16];
        snprintf(want, sizeof want, "t%u", h->sample < n_truth ? truth[h->sample] : 0u);
        if (i == h->n || !strcmp(h->names[i], "?"))
            h->unnamed++;
        else if (strcmp(h->names[i], want) && h->wrong++ == 0u)
            h->first_wrong = h->sample;
        h->sample++;
    }
}

static const struct cmprof_stream_info info = {.clock_hz = 1000, .timer_hz = 1000, .period = 10,
                                               .code_base = 0x08000000u};

/* One random run; returns the host's tally. */
typedef void (*scenario)(unsigned ops, unsigned odds);

/* Random operations: `odds` as preempt_odds. */
static void random_ops(unsigned ops, unsigned odds)
{
    create_task();
    switch_to((unsigned)pick_block(1, -1));
    preempt_odds = odds;
    for (unsigned op = 0; op < ops; op++) {
        uint32_t r = next_random() % 20u;
        ring_room();
        if (r < 8u) {
            for (unsigned k = 1u + next_random() % 8u; k--;) {
                ring_room();
                tick();
            }
        } else if (r < 11u) {
            int b = pick_block(1, -1);
            if (b >= 0)
                switch_to((unsigned)b);
        } else if (r < 14u) {
            create_task();
        } else if (r < 16u) {
            delete_task(current);
        } else {
            cmprof_stream_drain(capture, next_random() % 4u);
        }
    }
    preempt_odds = 0;
}

#ifndef CMPROF_STREAM_TASKS
/* In each of `blocks` control blocks in turn, between two drains: the task named and sent before
 * is deleted, a new one created in its block runs, is deleted, and a third runs there: the
 * second's name is unsent when the third takes its slot. */
static void renamed_blocks(unsigned blocks, unsigned unused)
{
    (void)unused;
    for (unsigned b = 0; b < blocks; b++) {
        create_task_in(b);
        switch_to(b);
        tick();
    }
    cmprof_stream_flush(capture); /* the first names out */
    for (unsigned b = 0; b < blocks; b++)
        for (int again = 0; again < 2; again++) {
            switch_to((b + 1u) % blocks); /* the block's task is not running when deleted */
            task_deleted(&pool[b]);
            owner[b] = -1;
            create_task_in(b);
            switch_to(b);
            tick();
        }
}
#endif

static struct names run(scenario body, uint32_t seed, unsigned ops, unsigned odds)
{
    fake_regs_clear();
    out_len = n_truth = next_id = 0;
    rng = seed;
    preempt_odds = 0;
    for (unsigned b = 0; b < POOL; b++)
        owner[b] = -1;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(capture, &info);
    body(ops, odds);
    cmprof_stream_flush(capture);
    struct names h = {.n = 0};
    struct ev_sink sink = {host_event, &h};
    struct text_decoder d;
    text_init(&d);
    text_feed(&d, (const uint8_t *)out, out_len, &sink);
    text_finish(&d, &sink);
    h.bad_lines = d.stats.bad_lines;
    text_free(&d);
    h.lost = cmprof_stream_lost();
    h.taken = n_truth;
    return h;
}

/* Each run in a child of the untouched parent: the library starts as at boot (no table left over
 * from the run before). */
static struct names run_fresh(scenario body, uint32_t seed, unsigned ops, unsigned odds)
{
    struct names h = {.bad_lines = 1};
    int fds[2];
    if (pipe(fds) != 0)
        return h;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        h = run(body, seed, ops, odds);
        _exit(write(fds[1], &h, sizeof h) == (ssize_t)sizeof h ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], &h, sizeof h) != (ssize_t)sizeof h)
        h.bad_lines = 1;
    close(fds[0]);
    waitpid(pid, NULL, 0);
    return h;
}

static void report(const char *what, uint32_t seed, const struct names *h)
{
    CHECK(h->bad_lines == 0u && h->lost == 0u && h->sample == h->taken);
    if (h->wrong || h->unnamed)
        printf("  %s seed %u: %u of %u samples under another task's name (first: sample %u), %u unnamed\n", what,
               seed, h->wrong, h->sample, h->first_wrong, h->unnamed);
}

/* 20 random runs: no sample under another task's name; unnamed ones only if the table filled. */
static void churn_runs(const char *what, uint32_t seed_step, unsigned odds)
{
    for (uint32_t seed = 1; seed <= 20u; seed++) {
        struct names h = run_fresh(random_ops, seed * seed_step, 4000u, odds);
        report(what, seed, &h);
        CHECK(h.wrong == 0u);
        CHECK(h.unnamed == 0u || h.full_said);
    }
}

/* Tasks come and go between drains; control blocks are reused. */
static void test_churn_between_drains_keeps_every_sample_its_name(void)
{
    churn_runs("between drains", 2654435761u, 0u);
}

/* The same with kernel hooks and samples inside the drain (at its output calls). */
static void test_churn_preempting_the_drain_keeps_every_sample_its_name(void)
{
    churn_runs("preempting", 2246822519u, 40u);
}

#ifndef CMPROF_STREAM_TASKS /* the small build's table holds fewer than 9 tasks */
/* Slots renamed twice between two drains, in more blocks than the stream keeps superseded names
 * for (8): every name still reaches the host before its samples and after the previous task's. */
static void test_names_superseded_in_many_blocks_keep_their_samples(void)
{
    struct names h = run_fresh(renamed_blocks, 1u, 9u, 0u);
    report("superseded", 9u, &h);
    CHECK(h.sample == 27u && h.wrong == 0u && h.unnamed == 0u);
}
#endif

int main(void)
{
    RUN_TEST(test_churn_between_drains_keeps_every_sample_its_name);
    RUN_TEST(test_churn_preempting_the_drain_keeps_every_sample_its_name);
#ifndef CMPROF_STREAM_TASKS
    RUN_TEST(test_names_superseded_in_many_blocks_keep_their_samples);
#endif
    return check_summary();
}
