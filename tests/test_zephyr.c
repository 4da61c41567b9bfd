/* The Zephyr hooks (firmware/rtos/cmprof_zephyr.c) run on the host against a stand-in of Zephyr's
 * thread and tracing API (tests/zoo/zephyr), driven the way the kernel drives them: create (with
 * the K_THREAD_DEFINE name or none), k_thread_name_set, the context switch, a thread that returns
 * and dies, an abort from outside. The sampler and the stream run on fake registers; the stream is
 * read back by the host's decoder and every sample's thread compared with the one that ran it. */
#include "../decode/text.h"
#include "wire_names.h"
#include "check.h"
#include "fake_regs.h"
#define CMPROF_ZEPHYR_NAME_POOL 4096 /* every name of the churn test: 460 of 4 or 5 bytes */
#include <string.h>
/* The name hook's work, counted: its probe steps, and any call that scans a string */
static unsigned long zephyr_probe __attribute__((unused)), string_calls;
#define CMPROF_ZEPHYR_PROBE zephyr_probe
__attribute__((unused)) static size_t counting_strlen(const char *s)
{
    string_calls++;
    return strlen(s);
}
__attribute__((unused)) static int counting_strncmp(const char *a, const char *b, size_t n)
{
    string_calls++;
    return strncmp(a, b, n);
}
#define strlen counting_strlen
#define strncmp counting_strncmp
#include "rtos/cmprof_zephyr.c"
#undef strlen
#undef strncmp

#include <stdio.h>
#include <string.h>

struct z_kernel _kernel; /* its cpus[0].current: the running thread, and cmprof's tag (Makefile) */
int standin_lock_depth;

static char out[1 << 20];
static size_t out_len;

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
}

/* ---- the kernel, as far as the hooks see it ---------------------------------------------------- */

/* The kernel's thread trace points as the module links them (-Wl,--wrap=..., zephyr/CMakeLists.txt):
 * the call reaches cmprof's __wrap_ function, whose __real_ continuation is Zephyr's tracing_user.c
 * calling the application's sys_trace_*_user hooks. Here the application's hooks count their calls,
 * and the switch-in hook checks cmprof's tag was already the new thread when it ran. */
static struct {
    unsigned created, named, aborted, switched_in, switched_out, tag_late;
} app_hooks;

void __real_sys_trace_thread_create(struct k_thread *thread)
{
    (void)thread;
    app_hooks.created++;
}

void __real_sys_trace_thread_name_set(struct k_thread *thread)
{
    (void)thread;
    app_hooks.named++;
}

void __real_sys_trace_thread_abort(struct k_thread *thread)
{
    (void)thread;
    app_hooks.aborted++;
}

void __real_sys_trace_k_thread_switched_in(void)
{
    app_hooks.switched_in++;
    app_hooks.tag_late += cmprof_current_task != (void *)standin_current;
}

void __real_sys_trace_k_thread_switched_out(void)
{
    app_hooks.switched_out++;
}

#if CMPROF_TAG_NAMES /* the module's stream wraps no create (zephyr/CMakeLists.txt) */
#define sys_trace_thread_create_user __real_sys_trace_thread_create
#else
#define sys_trace_thread_create_user __wrap_sys_trace_thread_create
#endif
#define sys_trace_thread_name_set_user __wrap_sys_trace_thread_name_set
#define sys_trace_thread_abort_user __wrap_sys_trace_thread_abort
#define sys_trace_thread_switched_in_user __real_sys_trace_k_thread_switched_in /* (cmprof wraps no switch) */
#if CMPROF_TAG_NAMES /* the module's stream wraps no switch out (zephyr/CMakeLists.txt) */
#define sys_trace_thread_switched_out_user __real_sys_trace_k_thread_switched_out
#else
#define sys_trace_thread_switched_out_user __wrap_sys_trace_k_thread_switched_out
#endif

/* As Zephyr's z_setup_new_thread and k_thread_name_set: the k_thread is not cleared, a name is
 * copied with strncpy (zero-padded), none leaves the old name's bytes after a first zero. */
static void kernel_create(struct k_thread *t, const char *name)
{
    t->base.thread_state = 0;
    if (name) {
        strncpy(t->name, name, sizeof t->name - 1u);
        t->name[sizeof t->name - 1u] = '\0';
    } else {
        t->name[0] = '\0';
    }
    sys_trace_thread_create_user(t);
}

static void kernel_name_set(struct k_thread *t, const char *name)
{
    strncpy(t->name, name, sizeof t->name - 1u);
    t->name[sizeof t->name - 1u] = '\0';
    sys_trace_thread_name_set_user(t);
}

static void kernel_switch_to(struct k_thread *t)
{
    if (standin_current)
        sys_trace_thread_switched_out_user();
    standin_current = t;
    sys_trace_thread_switched_in_user();
}

/* The running thread returns from its entry: dead, then switched out for the next one. */
static void kernel_exit_to(struct k_thread *next)
{
    standin_current->base.thread_state |= _THREAD_DEAD;
    kernel_switch_to(next);
}

static void samples_in(unsigned exception, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        cmprof_tick_frame(0x00000400u + 2u * k, exception); /* xPSR: its exception number */
        cmprof_stream_drain(capture, 1);
    }
}

/* ---- the host's view: samples per thread name ----------------------------------------------- */

#define MAX_NAMES 4096
struct tally {
    uint32_t tags[MAX_NAMES];
    char tag_names[MAX_NAMES][32];
    unsigned n_tags;
    char names[MAX_NAMES][32];
    unsigned samples[MAX_NAMES], n;
    unsigned full; /* @full seen */
};

static unsigned *tally_slot(struct tally *t, const char *name)
{
    for (unsigned i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return &t->samples[i];
    if (t->n == MAX_NAMES)
        abort();
    snprintf(t->names[t->n], sizeof t->names[0], "%s", name);
    return &t->samples[t->n++];
}

/* How often each worker name of the pool tests came on the wire: c0000.. and w00.. */
static unsigned wire_unique[10000], wire_distinct[100], wire_names;

static void count_wire_name(const char *name, size_t len)
{
    unsigned v = 0;
    for (size_t k = 1; k < len && name[k] >= '0' && name[k] <= '9'; k++)
        v = 10u * v + (unsigned)(name[k] - '0');
    wire_names++;
    if (len == 5 && name[0] == 'c')
        wire_unique[v]++;
    else if (len == 3 && name[0] == 'w')
        wire_distinct[v]++;
}

static void tally_event(void *ctx, const struct ev *e)
{
    struct tally *t = ctx;
    if (e->type == EV_TABLE_FULL)
        t->full++;
    if (e->type == EV_TASK_NAME) {
        unsigned i = 0;
        while (i < t->n_tags && t->tags[i] != e->task_name.tag)
            i++;
        if (i == MAX_NAMES)
            abort();
        t->n_tags += i == t->n_tags;
        t->tags[i] = e->task_name.tag;
        snprintf(t->tag_names[i], sizeof t->tag_names[i], "%.*s", (int)e->task_name.name_len, e->task_name.name);
        count_wire_name(e->task_name.name, e->task_name.name_len);
        if (e->task_name.pending) { /* the samples that waited for the name take it, as the host's */
            char waited[16];
            snprintf(waited, sizeof waited, "~%08x", (unsigned)e->task_name.pending);
            unsigned *w = tally_slot(t, waited);
            *tally_slot(t, t->tag_names[i]) += *w;
            *w = 0;
        }
    } else if (e->type == EV_PC) {
        char isr[16];
        const char *name = "(no name)";
        if (CMPROF_IS_ISR_TAG(e->pc.tag)) {
            snprintf(isr, sizeof isr, "ISR:%u", (unsigned)(e->pc.tag & 0x1FFu));
            name = isr;
        } else if (ev_tag_pending(e->pc.tag)) { /* an index named before this host began: its name comes */
            snprintf(isr, sizeof isr, "~%08x", (unsigned)e->pc.tag);
            name = isr;
        }
        for (unsigned i = 0; i < t->n_tags && name != isr; i++)
            if (t->tags[i] == e->pc.tag)
                name = t->tag_names[i];
        (*tally_slot(t, name))++;
    }
}

static void tally_stream(struct tally *t, struct text_decoder *d)
{
    struct ev_sink sink = {tally_event, t};
    memset(t, 0, sizeof *t);
    memset(wire_unique, 0, sizeof wire_unique);
    memset(wire_distinct, 0, sizeof wire_distinct);
    wire_names = 0;
    text_init(d);
    text_feed(d, (const uint8_t *)out, out_len, &sink);
    text_finish(d, &sink);
}

static unsigned samples_of(const struct tally *t, const char *name)
{
    for (unsigned i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return t->samples[i];
    return 0;
}

static const struct cmprof_stream_info info = {.clock_hz = 25000000, .timer_hz = 25000000, .period = 25000,
                                               .code_base = 0x00000000u};

static struct tally tally;

static void start(void)
{
    fake_regs_clear();
    out_len = 0;
    static struct k_thread drain; /* the module's drain thread, which says where names sit */
    standin_current = &drain;
    cmprof_zephyr_names_start();
    standin_current = NULL;
    cmprof_start(25000u, 0u);
    cmprof_stream_announce(capture, &info);
}

static void finish(struct text_decoder *d)
{
    cmprof_stream_flush(capture);
    tally_stream(&tally, d);
    CHECK(d->stats.bad_lines == 0 && d->stats.bad_checks == 0);
    CHECK(standin_lock_depth == 0);
    CHECK(cmprof_stream_lost() == 0);
}

/* Zephyr's own threads by their names, idle as "idle", a k_thread_create'd thread named after its
 * start, an unnamed one as "?", and interrupt time as ISR rows, never charged to the thread. */
static void test_threads_idle_and_interrupts(void)
{
    static struct k_thread idle, idle_smp, main_thread, worker, phil, anon;
    start();
    kernel_create(&main_thread, "main");
    kernel_create(&idle, "idle");
    kernel_create(&idle_smp, "idle 01");
    kernel_create(&worker, "sysworkq");
    kernel_create(&phil, NULL); /* k_thread_create: the name comes later */
    kernel_create(&anon, "");
    kernel_switch_to(&main_thread);
    samples_in(0, 30);
    kernel_name_set(&phil, "Philosopher 0");
    kernel_switch_to(&phil);
    samples_in(0, 15);
    samples_in(25, 7); /* IRQ 9 (the CMSDK timer) while the philosopher ran */
    samples_in(14, 3); /* PendSV */
    kernel_switch_to(&worker);
    samples_in(0, 20);
    kernel_switch_to(&anon);
    samples_in(0, 4);
    kernel_switch_to(&idle);
    samples_in(0, 25);
    kernel_switch_to(&idle_smp);
    samples_in(0, 5);
    kernel_name_set(&worker, "renamed"); /* later samples only */
    kernel_switch_to(&worker);
    samples_in(0, 6);
    struct text_decoder d;
    finish(&d);
    CHECK(samples_of(&tally, "main") == 30);
    CHECK(samples_of(&tally, "Philosopher 0") == 15);
    CHECK(samples_of(&tally, "ISR:25") == 7);
    CHECK(samples_of(&tally, "ISR:14") == 3);
    CHECK(samples_of(&tally, "sysworkq") == 20);
    CHECK(samples_of(&tally, "renamed") == 6);
    CHECK(samples_of(&tally, "?") == 4);
    CHECK(samples_of(&tally, "idle") == 30); /* "idle" and "idle 01" */
    CHECK(samples_of(&tally, "(no name)") == 0 && samples_of(&tally, "idle 01") == 0);
    text_free(&d);
}

/* More threads come and go than the name table holds: threads that return (dead when switched
 * out), threads aborted by another, control blocks reused for new threads. Every sample keeps
 * its thread's name and the table never fills. */
static void test_create_rename_abort_churn(void)
{
    enum { RETURNING = 300, ABORTED = 100, REUSED = 60 };
    static struct k_thread threads[RETURNING + ABORTED], reused, main_thread;
    start();
    kernel_create(&main_thread, "main");
    kernel_switch_to(&main_thread);
    for (unsigned i = 0; i < RETURNING; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%03u", i);
        kernel_create(&threads[i], name);
        kernel_switch_to(&threads[i]);
        samples_in(0, 2);
        kernel_exit_to(&main_thread);
    }
    for (unsigned i = RETURNING; i < RETURNING + ABORTED; i++) {
        char name[16];
        snprintf(name, sizeof name, "a%03u", i);
        kernel_create(&threads[i], NULL);
        kernel_name_set(&threads[i], name);
        kernel_switch_to(&threads[i]);
        samples_in(0, 3);
        kernel_switch_to(&main_thread); /* preempted, then aborted by main */
        sys_trace_thread_abort_user(&threads[i]);
    }
    for (unsigned i = 0; i < REUSED; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%02u", i);
        kernel_create(&reused, name);
        kernel_switch_to(&reused);
        samples_in(0, 4); /* the stream keeps 8 unsent names of one tag: reused less between drains */
        kernel_exit_to(&main_thread);
    }
    samples_in(0, 9);
    struct text_decoder d;
    finish(&d);
    unsigned wrong = 0;
    for (unsigned i = 0; i < RETURNING + ABORTED; i++) {
        char name[16];
        snprintf(name, sizeof name, i < RETURNING ? "t%03u" : "a%03u", i);
        wrong += samples_of(&tally, name) != (i < RETURNING ? 2u : 3u);
    }
    for (unsigned i = 0; i < REUSED; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%02u", i);
        wrong += samples_of(&tally, name) != 4u;
    }
    CHECK(wrong == 0);
    CHECK(samples_of(&tally, "main") == 9);
    CHECK(samples_of(&tally, "?") == 0 && samples_of(&tally, "(no name)") == 0);
    CHECK(tally.full == 0);
    text_free(&d);
}

/* The drain thread has the lowest priority: many workers can end between two drains (the
 * zretry trial: 12 a round). Their names live in the module's pool, so every one is named, however
 * many end before the drain runs (the stream's copies on delete are for names in freed blocks). */
static void test_many_threads_end_between_two_drains(void)
{
    enum { WORKERS = 24 }; /* more than the 16 copies; 48 samples fit the ring */
    static struct k_thread workers[WORKERS], main_thread;
    start();
    kernel_create(&main_thread, "main");
    kernel_switch_to(&main_thread);
    for (unsigned i = 0; i < WORKERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "worker_%02u", i);
        kernel_create(&workers[i], name);
        kernel_switch_to(&workers[i]);
        for (unsigned k = 0; k < 2; k++) /* sampled, not drained */
            cmprof_tick_frame(0x00000400u + 2u * k, 0);
        kernel_exit_to(&main_thread);
    }
    samples_in(0, 3);
    struct text_decoder d;
    finish(&d);
    unsigned wrong = 0;
    for (unsigned i = 0; i < WORKERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "worker_%02u", i);
        wrong += samples_of(&tally, name) != 2u;
    }
    CHECK(wrong == 0 && samples_of(&tally, "?") == 0);
    text_free(&d);
}

/* A pool of 100 workers re-created 2,000 times (the oldest aborted, a new thread in its place),
 * under 100 distinct names or a new name each time; a third of them run long enough to be sampled.
 * Names go out by need: every sampled worker's samples under its own name, the name of a worker
 * never sampled never on the wire (distinct names: once for each life that was sampled, and the
 * repeats for a late host). */
static void pool_churn(bool unique)
{
    enum { POOL = 100, MADE = 2000 };
    static struct k_thread pool[POOL], main_thread;
    static bool sampled[MADE];
    start();
    kernel_create(&main_thread, "main");
    kernel_switch_to(&main_thread);
    for (unsigned i = 0; i < MADE; i++) {
        struct k_thread *t = &pool[i % POOL];
        char name[16];
        snprintf(name, sizeof name, unique ? "c%04u" : "w%02u", unique ? i : i % POOL);
        if (i >= POOL)
            sys_trace_thread_abort_user(t);
        kernel_create(t, name);
        sampled[i] = i % 3u == 0u;
        if (sampled[i]) {
            kernel_switch_to(t);
            samples_in(0, 2);
            kernel_switch_to(&main_thread);
        }
        samples_in(0, 1);
    }
    struct text_decoder d;
    finish(&d);
    for (unsigned k = 0; k < POOL; k++) /* the table's slots free for the tests after */
        sys_trace_thread_abort_user(&pool[k]);
    unsigned wrong = 0, on_wire = 0, lives = 0;
    for (unsigned i = 0; i < MADE && unique; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%04u", i);
        wrong += samples_of(&tally, name) != (sampled[i] ? 2u : 0u);
        on_wire += !sampled[i] && wire_unique[i] != 0;
    }
    for (unsigned k = 0; k < POOL && !unique; k++) {
        char name[16];
        snprintf(name, sizeof name, "w%02u", k);
        unsigned want = 0;
        for (unsigned i = k; i < MADE; i += POOL)
            want += sampled[i] ? 2u : 0u;
        wrong += samples_of(&tally, name) != want;
        lives += want / 2u;
        on_wire += wire_distinct[k]; /* once a sampled life at most, and the repeats of live threads */
    }
    if (!unique) /* the repeats: a round or two of the pool's live threads in this run */
        on_wire = on_wire > lives + 2u * POOL ? on_wire - lives : 0u;
    CHECK(wrong == 0 && on_wire == 0);
    CHECK(samples_of(&tally, "main") == MADE && samples_of(&tally, "?") == 0 && tally.full == 0);
    printf("     %s names: %u of %u workers sampled, %u name entries on the wire; %zu bytes\n",
           unique ? "unique" : "distinct", (MADE + 2u) / 3u, MADE, wire_names, out_len);
    text_free(&d);
}

static void test_pool_churn_distinct_names_by_need(void)
{
    pool_churn(false);
}

static void test_pool_churn_unique_names_by_need(void)
{
    pool_churn(true);
}

#if !CMPROF_TAG_NAMES /* the adapter's name pool: the module's dump build keeps it */
/* Threads mostly share a few names: the pool keeps each name once. Once it is full, a new name is
 * taken from the thread's own buffer, still right when not overwritten before the drain. */
static void test_name_pool_shares_then_degrades(void)
{
    static struct k_thread workers[200], filler, late;
    start();
    kernel_create(&workers[0], "worker");
    size_t used = cmprof_name_pool_used;
    for (unsigned i = 1; i < 200; i++)
        kernel_create(&workers[i], "worker");
    CHECK(cmprof_name_pool_used == used);
    for (unsigned i = 0; cmprof_name_pool_used + 8u < sizeof cmprof_name_pool; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%05u", i);
        kernel_create(&filler, name);
    }
    kernel_create(&late, "late-thread-name");
    CHECK(kept_name("late-thread-name") == NULL);
    kernel_switch_to(&workers[7]);
    samples_in(0, 5);
    kernel_switch_to(&late);
    samples_in(0, 11);
    struct text_decoder d;
    finish(&d);
    CHECK(samples_of(&tally, "worker") == 5);
    CHECK(samples_of(&tally, "late-thread-name") == 11);
    text_free(&d);
}

/* Naming a thread costs the same with the pool empty or full: no scan of the pool, a few probes of
 * its hash (the hook runs on every create and rename, under the kernel's lock). */
static void test_name_hook_bounded_at_any_fill(void)
{
    static struct k_thread t;
    start();
    memset(cmprof_name_slots, 0, sizeof cmprof_name_slots); /* an empty pool to fill */
    cmprof_name_pool_used = 0;
    unsigned long most = 0;
    for (unsigned i = 0; cmprof_name_pool_used + 8u < sizeof cmprof_name_pool; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%05u", i);
        zephyr_probe = string_calls = 0;
        kernel_create(&t, name);
        unsigned long work = zephyr_probe + string_calls;
        most = work > most ? work : most;
    }
    unsigned lost = 0, made = 0;
    for (unsigned i = 0; i < 100000u; i++) { /* every name of the fill still found, each in its own copy */
        char name[16];
        snprintf(name, sizeof name, "n%05u", i);
        const char *k = kept_name(name);
        if (k == NULL)
            break;
        made++;
        lost += strcmp(k, name) != 0;
    }
    printf("name hook: %u names kept in %zu bytes, %u wrong\n", made, cmprof_name_pool_used, lost);
    CHECK(lost == 0 && made * 7u >= cmprof_name_pool_used - 16u);
    zephyr_probe = string_calls = 0;
    kernel_create(&t, "n00007"); /* a name kept long ago, with the pool full */
    unsigned long again = zephyr_probe + string_calls;
    printf("name hook: at most %lu steps a create while the pool filled, %lu for a kept name\n", most, again);
    CHECK(most <= 8 && again <= 8);
    CHECK(kept_name("n00007") != NULL && !strcmp(kept_name("n00007"), "n00007"));
}

#endif

#if CMPROF_TAG_NAMES
/* The share of the stream's bytes that names tasks (tests/wire_names.h's walk of each line). */
static double names_share(void)
{
    uint32_t version = 0;
    size_t names = 0, inexact = 0;
    for (size_t i = 0; i < out_len;) {
        const char *nl = memchr(out + i, '\n', out_len - i);
        size_t n = nl ? (size_t)(nl - (out + i)) + 1u : out_len - i;
        bool exact;
        version = version_after(version, out + i, n);
        names += name_bytes(version, out + i, n, &exact);
        inexact += !exact;
        i += n;
    }
    CHECK(inexact == 0);
    return (double)names / (double)(out_len ? out_len : 1u);
}

/* bench/zephyr_churn's app on the stand-in: two steady threads, the idle thread and 100 workers that
 * main aborts and re-creates round the pool, `per_10ms` of them every 10 samples (a sample a
 * millisecond: 10 is 1,000 creations a second), each by k_thread_create (no name) then
 * k_thread_name_set: w00..w99 by its place, or with `unique` a name of its own. Who runs at each
 * sample is drawn (a fixed seed): busy a quarter, idle 30 %, a worker 35 %, ticker and main 5 %
 * each; one new worker in 100 runs once before main names it (its sample "?"). Every sample is
 * checked against the name of the thread that ran, nothing unnamed or lost, the table never full,
 * no hook calls strlen or strncmp; with 100 names, names at most 10 % of the stream's bytes. The
 * names are the run's own (`run` their first letter, idle's aside): a host that begins with the
 * run's announce has none of them from a run before (a late host's repeats are other tests'). */
static void churn_app(unsigned per_10ms, bool unique, unsigned steps, char run)
{
    enum { POOL = 100 };
    static struct k_thread pool[POOL], main_thread, idle, busy, ticker;
    static unsigned want_unique[10000], want_distinct[POOL];
    unsigned want_main = 0, want_idle = 0, want_busy = 0, want_ticker = 0, want_unnamed = 0;
    memset(want_unique, 0, sizeof want_unique);
    memset(want_distinct, 0, sizeof want_distinct);
    start();
    string_calls = 0;
    char main_name[8], busy_name[8], ticker_name[8], fmt[8];
    snprintf(main_name, sizeof main_name, "%cmain", run);
    snprintf(busy_name, sizeof busy_name, "%cbusy", run);
    snprintf(ticker_name, sizeof ticker_name, "%ctick", run);
    snprintf(fmt, sizeof fmt, unique ? "%c%%04u" : "%c%%02u", run); /* the workers': a00.. or a0000.. */
    kernel_create(&main_thread, main_name);
    kernel_create(&idle, "idle");
    kernel_create(&busy, busy_name);
    kernel_create(&ticker, ticker_name);
    unsigned made = 0, next = 0, place[POOL], life[POOL];
    for (; made < POOL; made++) {
        char name[16];
        snprintf(name, sizeof name, fmt, made);
        kernel_create(&pool[made], NULL);
        kernel_name_set(&pool[made], name);
        place[made] = made;
        life[made] = made;
    }
    uint32_t seed = 12345u;
    for (unsigned ms = 0; ms < steps; ms++) {
        kernel_switch_to(&main_thread);
        for (unsigned k = 0; k < per_10ms && (ms % 10u) < 1u; k++) { /* the manager's round */
            unsigned w = next;
            next = (next + 1u) % POOL;
            sys_trace_thread_abort_user(&pool[w]);
            kernel_create(&pool[w], NULL);
            if (made % 100u == 0u) { /* it runs before main names it */
                kernel_switch_to(&pool[w]);
                samples_in(0, 1);
                want_unnamed++;
                kernel_switch_to(&main_thread);
            }
            char name[16];
            snprintf(name, sizeof name, fmt, unique ? made : place[w]);
            kernel_name_set(&pool[w], name);
            life[w] = made++;
        }
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 16) % 100u, w = (seed >> 8) % POOL;
        struct k_thread *t = r < 25u ? &busy : r < 55u ? &idle : r < 90u ? &pool[w] : r < 95u ? &ticker : &main_thread;
        kernel_switch_to(t);
        samples_in(0, 1);
        if (t == &pool[w] && unique)
            want_unique[life[w]]++;
        else if (t == &pool[w])
            want_distinct[place[w]]++;
        want_main += t == &main_thread;
        want_idle += t == &idle;
        want_busy += t == &busy;
        want_ticker += t == &ticker;
    }
    unsigned hooks_strings = string_calls;
    struct text_decoder d;
    finish(&d);
    for (unsigned k = 0; k < POOL; k++) /* the pool's blocks free for the tests after */
        sys_trace_thread_abort_user(&pool[k]);
    unsigned wrong = 0;
    for (unsigned i = 0; i < (unique ? made : POOL); i++) {
        char name[16];
        snprintf(name, sizeof name, fmt, i);
        wrong += samples_of(&tally, name) != (unique ? want_unique[i] : want_distinct[i]);
    }
    double share = names_share();
    printf("     %u creations, %s names: %zu bytes, names %.1f %%\n", made, unique ? "unique" : "100",
           out_len, 100.0 * share);
    CHECK(wrong == 0);
    CHECK(samples_of(&tally, main_name) == want_main && samples_of(&tally, "idle") == want_idle &&
          samples_of(&tally, busy_name) == want_busy && samples_of(&tally, ticker_name) == want_ticker);
    CHECK(samples_of(&tally, "?") == want_unnamed && samples_of(&tally, "(no name)") == 0);
    CHECK(tally.full == 0 && hooks_strings == 0);
    CHECK(unique || share <= 0.10);
    text_free(&d);
}

/* The churn's common case, alone: a sampled worker aborted and re-created in its k_thread under its
 * name, k_thread_create (no name) then k_thread_name_set. The rename finds the entry under its
 * name's key and keeps it (the module's stream has no create hook; a park before): no entry moved out of line (main moved it twice
 * a creation, through block_renamed and move_entry: about 70 of the 155 instructions a creation in
 * bench/zephyr_churn), no miss, and every sample under the worker's name. */
static void test_worker_recreated_under_its_name(void)
{
    static struct k_thread worker, main_thread;
    start();
    kernel_create(&main_thread, "rmain");
    kernel_switch_to(&main_thread);
    unsigned long moves = fake_masked_moves;
    for (unsigned i = 0; i < 50; i++) {
        kernel_create(&worker, NULL);
        kernel_name_set(&worker, "rworker");
        kernel_switch_to(&worker);
        samples_in(0, 2);
        kernel_switch_to(&main_thread);
        sys_trace_thread_abort_user(&worker);
    }
    moves = fake_masked_moves - moves;
    samples_in(0, 1);
    struct text_decoder d;
    finish(&d);
    printf("     50 re-creations: %lu entries moved out of line\n", moves);
    CHECK(moves == 0);
    CHECK(samples_of(&tally, "rworker") == 100 && samples_of(&tally, "rmain") == 1);
    CHECK(samples_of(&tally, "?") == 0 && tally.full == 0);
    text_free(&d);
}

/* The cache's key holds the name's first word, and no hook runs at a create (the module's stream):
 * one block re-created under names that share their first word or not, 3 characters or fewer, run
 * before its rename (K_NO_WAIT), renamed while it runs, and at last created and never named. Every
 * sample under the name its thread had when it ran; before the rename "?", never the block's last
 * name. */
static void test_names_share_a_first_word(void)
{
    static struct k_thread blk, main_thread;
    static const char *const names[] = {"fworker_1", "fworker_2", "fworker_1", "fwor", "fwo", "fworker_3"};
    start();
    kernel_create(&main_thread, "fmain");
    kernel_switch_to(&main_thread);
    for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
        kernel_create(&blk, NULL);
        kernel_switch_to(&blk);
        samples_in(0, 1); /* before its rename */
        kernel_switch_to(&main_thread);
        kernel_name_set(&blk, names[i]);
        kernel_switch_to(&blk);
        samples_in(0, 2);
        kernel_name_set(&blk, "fworker_9"); /* renamed while it runs */
        samples_in(0, 2);
        kernel_switch_to(&main_thread);
        samples_in(0, 1);
    }
    /* each name right after the one before in the block, differing only past the words the rename
     * compares together (1 and 2), in word 1 alone, in word 2 alone, or ending at word 2's last byte */
    static const char *const next[] = {"fworker_3abcd", "fworker_3abce", "fworker_3abc", "fworKer_3abc",
                                       "fworKer_4abc"};
    for (unsigned i = 0; i < ARRAY_SIZE(next); i++) {
        kernel_create(&blk, NULL);
        kernel_name_set(&blk, next[i]);
        kernel_switch_to(&blk);
        samples_in(0, 2);
        kernel_switch_to(&main_thread);
    }
    kernel_create(&blk, NULL); /* never named */
    kernel_switch_to(&blk);
    samples_in(0, 3);
    struct text_decoder d;
    finish(&d);
    for (unsigned i = 0; i < ARRAY_SIZE(next); i++)
        CHECK(samples_of(&tally, next[i]) == 2);
    CHECK(samples_of(&tally, "fworker_1") == 4 && samples_of(&tally, "fworker_2") == 2);
    CHECK(samples_of(&tally, "fwor") == 2 && samples_of(&tally, "fwo") == 2 && samples_of(&tally, "fworker_3") == 2);
    CHECK(samples_of(&tally, "fworker_9") == 12 && samples_of(&tally, "fmain") == 6);
    CHECK(samples_of(&tally, "?") == 9 && tally.full == 0);
    text_free(&d);
}

static void test_churn_app_distinct_names_100_a_second(void)
{
    churn_app(1, false, 6000, 'a');
}

static void test_churn_app_distinct_names_1000_a_second(void)
{
    churn_app(10, false, 6000, 'b');
}

static void test_churn_app_unique_names_1000_a_second(void)
{
    churn_app(10, true, 900, 'c');
}
#endif

/* The names the idle rule keeps and the ones it maps. */
static void test_idle_name_rule(void)
{
    CHECK(!strcmp(cmprof_zephyr_name("idle"), CMPROF_IDLE_NAME));
    CHECK(!strcmp(cmprof_zephyr_name("idle 00"), CMPROF_IDLE_NAME));
    CHECK(!strcmp(cmprof_zephyr_name("idler"), "idler"));
    CHECK(!strcmp(cmprof_zephyr_name("idle 0x"), "idle 0x"));
    CHECK(!strcmp(cmprof_zephyr_name("idl"), "idl"));
    CHECK(!strcmp(cmprof_zephyr_name(""), "?"));
    CHECK(!strcmp(cmprof_zephyr_name(NULL), "?"));
}

/* The application's own hooks run after cmprof's, once per trace point, and see its tag set. */
static void test_app_hooks_chained(void)
{
    static struct k_thread a, b;
    memset(&app_hooks, 0, sizeof app_hooks);
    standin_current = NULL;
    kernel_create(&a, "a");
    kernel_create(&b, NULL);
    kernel_name_set(&b, "b");
    kernel_switch_to(&a);
    kernel_switch_to(&b);
    kernel_switch_to(&a);
    sys_trace_thread_abort_user(&b);
    CHECK(app_hooks.created == 2 && app_hooks.named == 1 && app_hooks.aborted == 1);
    CHECK(app_hooks.switched_in == 3 && app_hooks.switched_out == 2);
    CHECK(app_hooks.tag_late == 0);
    CHECK(cmprof_current_task == (void *)&a);
    standin_current = NULL;
}

int main(void)
{
#if CMPROF_TAG_NAMES
    RUN_TEST(test_churn_app_distinct_names_100_a_second);
    RUN_TEST(test_churn_app_distinct_names_1000_a_second);
    RUN_TEST(test_churn_app_unique_names_1000_a_second);
    RUN_TEST(test_worker_recreated_under_its_name);
    RUN_TEST(test_names_share_a_first_word);
#endif
    RUN_TEST(test_app_hooks_chained);
    RUN_TEST(test_idle_name_rule);
    RUN_TEST(test_threads_idle_and_interrupts);
    RUN_TEST(test_create_rename_abort_churn);
    RUN_TEST(test_many_threads_end_between_two_drains);
    RUN_TEST(test_pool_churn_distinct_names_by_need);
    RUN_TEST(test_pool_churn_unique_names_by_need);
#if !CMPROF_TAG_NAMES
    RUN_TEST(test_name_pool_shares_then_degrades);
    RUN_TEST(test_name_hook_bounded_at_any_fill);
#endif
    return check_summary();
}
