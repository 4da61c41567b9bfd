/* The FreeRTOS adapter run on the host: its trace macros expanded as the kernel's tasks.c expands
 * them (a TCB with pcTaskName, pxCurrentTCB), with the sampler and the stream on fake registers,
 * and the stream read back by the host's decoder. The kernel itself is not in this repository. */
#include "../decode/text.h"
#include "check.h"
#include "evlog.h"
#include "fake_regs.h"
#include "zoo/freertos_hooks.c" /* tasks.c's view of the hooks: the same file the firmware step builds */

static char out[1 << 18];
static size_t out_len;

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
}

/* tasks.c, as far as the trace macros see it */
static void kernel_create(TCB_t *tcb, const char *name)
{
    snprintf(tcb->pcTaskName, sizeof tcb->pcTaskName, "%s", name);
    task_created(tcb);
}

static void kernel_switch_to(TCB_t *tcb)
{
    pxCurrentTCB = tcb;
    task_switched();
}

static void kernel_delete(TCB_t *tcb)
{
    task_deleted(tcb);
}

/* Samples per task name, as the host attributes them: a sample's tag takes the name last given. */
struct tally {
    char names[64][16];
    unsigned samples[64], n;
};

static unsigned *tally_slot(struct tally *t, const char *name)
{
    for (unsigned i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return &t->samples[i];
    snprintf(t->names[t->n], sizeof t->names[0], "%s", name);
    t->samples[t->n] = 0;
    return &t->samples[t->n++];
}

static void tally_stream(struct tally *t, struct text_decoder *d)
{
    struct evlog log = {0};
    struct ev_sink sink = {evlog_event, &log};
    text_init(d);
    text_feed(d, (const uint8_t *)out, out_len, &sink);
    text_finish(d, &sink);
    uint32_t tags[64];
    char names[64][16];
    unsigned n_named = 0;
    memset(t, 0, sizeof *t);
    for (char *line = log.buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        int type;
        unsigned a, tag;
        if (sscanf(line, "%d a=%x t=%x", &type, &a, &tag) != 3)
            continue;
        const char *q = strchr(line, '\'');
        if (type == EV_TASK_NAME && q) {
            unsigned i = 0;
            while (i < n_named && tags[i] != tag)
                i++;
            if (i == n_named && n_named < 64)
                n_named++;
            tags[i] = tag;
            snprintf(names[i], sizeof names[i], "%.*s", (int)(strchr(q + 1, '\'') - q - 1), q + 1);
        } else if (type == EV_PC) {
            unsigned i = 0;
            while (i < n_named && tags[i] != tag)
                i++;
            (*tally_slot(t, i < n_named ? names[i] : "?"))++;
        }
    }
    free(log.buf);
}

static unsigned samples_of(const struct tally *t, const char *name)
{
    for (unsigned i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return t->samples[i];
    return 0;
}

static const struct cmprof_stream_info info = {.clock_hz = 1000, .timer_hz = 1000, .period = 10,
                                               .code_base = 0x08000000u};

static void run_as(TCB_t *tcb, unsigned samples)
{
    kernel_switch_to(tcb);
    for (unsigned k = 0; k < samples; k++) {
        cmprof_tick(0x08000100u);
        cmprof_stream_drain(capture, 1);
    }
}

/* The idle task, on one core or several, is "idle"; other names are kept, even ones that start
 * like the idle task's. Every sample goes to the task that ran it, a deleted task's included. */
static void test_tasks_and_idle_named_from_the_kernel_hooks(void)
{
    fake_regs_clear();
    out_len = 0;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(capture, &info);
    static TCB_t idle0, idle1, motor, idler, timer;
    kernel_create(&idle0, "IDLE");
    kernel_create(&idle1, "IDLE1");
    kernel_create(&motor, "motor");
    kernel_create(&idler, "IDLEr");
    kernel_create(&timer, "Tmr Svc");
    run_as(&motor, 40);
    run_as(&idle0, 30);
    run_as(&idler, 20);
    run_as(&idle1, 10);
    run_as(&timer, 5);
    kernel_delete(&motor); /* its samples still waiting in the ring keep its name */
    static TCB_t late;
    kernel_create(&late, "late");
    run_as(&late, 25);
    cmprof_stream_flush(capture);
    struct tally t;
    struct text_decoder d;
    tally_stream(&t, &d);
    CHECK(d.stats.bad_lines == 0 && d.stats.bad_checks == 0);
    CHECK(samples_of(&t, "motor") == 40);
    CHECK(samples_of(&t, "idle") == 40); /* IDLE and IDLE1 */
    CHECK(samples_of(&t, "IDLEr") == 20);
    CHECK(samples_of(&t, "Tmr Svc") == 5);
    CHECK(samples_of(&t, "late") == 25);
    CHECK(samples_of(&t, "?") == 0 && samples_of(&t, "IDLE") == 0 && samples_of(&t, "IDLE1") == 0);
    text_free(&d);
}

/* More tasks created between two drains than the stream's queue of unsent names holds (32), each
 * running before the drain: every name still goes out, and before the first sample that needs it. */
static void test_names_beyond_the_queue_arrive_before_their_samples(void)
{
    fake_regs_clear();
    out_len = 0;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(capture, &info);
    static TCB_t tcbs[40];
    char name[16];
    for (unsigned k = 0; k < 40u; k++) {
        snprintf(name, sizeof name, "t%02u", k);
        kernel_create(&tcbs[k], name);
        kernel_switch_to(&tcbs[k]);
        cmprof_tick(0x08000100u); /* 40 samples: the ring (64) holds them all */
    }
    cmprof_stream_flush(capture);
    struct tally t;
    struct text_decoder d;
    tally_stream(&t, &d);
    CHECK(d.stats.bad_lines == 0 && d.stats.bad_checks == 0);
    unsigned right = 0;
    for (unsigned k = 0; k < 40u; k++) {
        snprintf(name, sizeof name, "t%02u", k);
        right += samples_of(&t, name) == 1u;
    }
    CHECK(right == 40u);
    CHECK(samples_of(&t, "?") == 0);
    text_free(&d);
}

int main(void)
{
    RUN_TEST(test_tasks_and_idle_named_from_the_kernel_hooks);
    RUN_TEST(test_names_beyond_the_queue_arrive_before_their_samples);
    return check_summary();
}
