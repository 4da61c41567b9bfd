/* The tick's names under CMPROF_TAG_NAMES (the sampler reads a task's name from the block its tag
 * points at): the kernel's idle task is named CMPROF_IDLE_NAME whatever other task the kernel
 * created or renamed since. */
#include "../decode/text.h"
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_tasks.h"
#include "check.h"
#include "fake_regs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile test_tag;

struct block { /* a stand-in control block: the name inside it, as FreeRTOS's TCB has */
    uint32_t stack_top, priority;
    char name[16];
};

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static const char *name_of_miss(struct block *b)
{
    uint32_t word = cmprof_tasks_miss(b);
    return (word & 0xFFFFu) == CMPROF_TASKS_WORD_NONE ? NULL : cmprof_tasks.names[word & 0xFFFFu];
}

/* A rename (cmprof_stream_task_later) after the idle task's creation: idle's first sample still
 * goes out as idle, not under the kernel's own name ("IDLE": a task of that name on the host). */
static void test_idle_stays_idle_after_a_rename(void)
{
    static struct block idle = {0, 0, "IDLE"}, worker = {0, 1, "worker"};
    cmprof_stream_task_new(&idle, idle.name, "IDLE");
    cmprof_stream_task_new(&worker, worker.name, "IDLE");
    strcpy(worker.name, "worker2");
    cmprof_stream_task_later(&worker, worker.name);
    const char *idle_name = name_of_miss(&idle), *worker_name = name_of_miss(&worker);
    CHECK(idle_name && strcmp(idle_name, CMPROF_IDLE_NAME) == 0);
    CHECK(worker_name && strcmp(worker_name, "worker2") == 0);
}

/* Whether the block has an entry in the tick's cache (its next sample reads no name). */
static bool cached(const struct block *b)
{
    uint32_t tag = (uint32_t)(uintptr_t)b;
    const struct cmprof_tasks_way *w = cmprof_tag_names.ways[cmprof_tasks_set(tag)];
    return w[0].key == ~tag || w[1].key == ~tag;
}

/* A worker deleted and re-created in its block under its name keeps the block's entry (no miss,
 * no name read, the same index); another name in the block drops it, and the next sample names the
 * new task. */
static void test_a_worker_recreated_in_its_block_keeps_its_entry(void)
{
    static struct block w = {0, 1, "pool7"};
    cmprof_stream_task_new(&w, w.name, "IDLE");
    uint32_t first = cmprof_tasks_word(&w);
    CHECK(cached(&w));
    cmprof_stream_task_gone(&w);
    cmprof_stream_task_new(&w, w.name, "IDLE");
    CHECK(cached(&w));
    CHECK(cmprof_tasks_word(&w) == first);
    cmprof_stream_task_gone(&w);
    strcpy(w.name, "pool8");
    cmprof_stream_task_new(&w, w.name, "IDLE");
    CHECK(!cached(&w));
    const char *name = name_of_miss(&w);
    CHECK(name && strcmp(name, "pool8") == 0);
    strcpy(w.name, "pool7"); /* a rename back: the name's index again */
    cmprof_stream_task_later(&w, w.name);
    CHECK(!cached(&w));
    CHECK(cmprof_tasks_word(&w) == first);
}

/* Zephyr's k_thread_create makes a thread with no name, named by k_thread_name_set just after: the
 * create parks the block's entry (a sample before the rename reads no name: '?'), and the rename
 * takes it back when the name is the same (no miss: the same word), or drops it for another. */
static void test_a_nameless_create_parks_the_entry_until_the_rename(void)
{
    static struct block w = {0, 1, "zw1"};
    cmprof_stream_task_new(&w, w.name, "IDLE");
    uint32_t first = cmprof_tasks_word(&w);
    cmprof_stream_task_gone(&w);
    w.name[0] = '\0'; /* k_thread_create: no name yet */
    cmprof_stream_task_new(&w, w.name, "IDLE");
    CHECK(!cached(&w));
    strcpy(w.name, "zw1"); /* k_thread_name_set */
    cmprof_stream_task_later(&w, w.name);
    CHECK(cached(&w) && cmprof_tasks_word(&w) == first);
    cmprof_stream_task_gone(&w);
    w.name[0] = '\0';
    cmprof_stream_task_new(&w, w.name, "IDLE");
    const char *early = name_of_miss(&w); /* it ran before its rename */
    CHECK(early && strcmp(early, "?") == 0);
    strcpy(w.name, "zw2");
    cmprof_stream_task_later(&w, w.name);
    CHECK(!cached(&w));
    const char *name = name_of_miss(&w);
    CHECK(name && strcmp(name, "zw2") == 0);
}

/* Whether index i is in the list of dropped indexes (free for another name). */
static bool dropped(uint32_t i)
{
    for (uint32_t node = cmprof_tasks.freed_next[0], n = 0; node && n <= CMPROF_TASKS_MAX; node = cmprof_tasks.freed_next[node], n++)
        if (node == i + 1u)
            return true;
    return false;
}

/* Two blocks of one name and a third block in one set of the cache: the third's miss moves the
 * first to the second way, the second block's miss evicts it and takes the same index. The index is
 * the second block's entry's: never in the list of dropped indexes, from where another name would
 * take it while the block's samples still carry it (the eviction came before the new entry's count). */
static void test_an_index_an_entry_gives_is_never_dropped(void)
{
    static struct block arena[4096];
    struct block *in_set[3];
    uint32_t set = cmprof_tasks_set((uint32_t)(uintptr_t)&arena[0]), n = 0;
    for (uint32_t k = 0; k < 4096u && n < 3u; k++)
        if (cmprof_tasks_set((uint32_t)(uintptr_t)&arena[k]) == set)
            in_set[n++] = &arena[k];
    CHECK(n == 3);
    if (n < 3)
        return;
    strcpy(in_set[0]->name, "twin");
    strcpy(in_set[1]->name, "other");
    strcpy(in_set[2]->name, "twin");
    for (uint32_t k = 0; k < 3u; k++)
        cmprof_stream_task_new(in_set[k], in_set[k]->name, "IDLE");
    uint32_t twin = cmprof_tasks_word(in_set[0]) & 0xFFFFu;
    cmprof_tasks_word(in_set[1]);
    CHECK((cmprof_tasks_word(in_set[2]) & 0xFFFFu) == twin);
    CHECK(cmprof_tag_names.refs[twin] == 1u && !dropped(twin));
}

static char late_out[1u << 21];
static size_t late_len;

static void late_putc(char c)
{
    if (late_len < sizeof late_out)
        late_out[late_len++] = c;
}

/* Issue 44, item 4: a host that attaches late hears every sampled task named. Workers are
 * re-created under names of their own far faster than a round of repeats goes through the table
 * (a round a second: 10,000 samples here), so indexes go to new names long before the round reaches
 * them: an index sampled since its last naming is repeated before another name takes it (before,
 * the late host's samples of it went to "(task unknown)"). */
static const struct cmprof_stream_info late_info = {.clock_hz = 100000, .timer_hz = 100000, .period = 10,
                                                    .jitter = 0, .code_base = 0x08000000u};

/* A stream started afresh (10,000 samples a second) into late_out, from its start. */
static void late_stream(void)
{
    fake_regs_clear();
    cmprof_start(10u, 0u);
    late_len = 0;
    cmprof_stream_announce(late_putc, &late_info);
}

/* A worker in block b under a name of its own (u00000, u00001...: *made counts them), its block's
 * task before it gone first (worker_renew). */
static void worker_new(struct block *b, uint32_t *made)
{
    snprintf(b->name, sizeof b->name, "u%05u", (unsigned)(*made)++);
    cmprof_stream_task_new(b, b->name, "IDLE");
}

static void worker_renew(struct block *b, uint32_t *made)
{
    cmprof_stream_task_gone(b);
    worker_new(b, made);
}

static void test_a_late_host_names_every_reused_index(void)
{
    static struct block arena[150];
    late_stream();
    uint32_t rng = 1, made = 0;
    size_t late_from = 0;
    for (int k = 0; k < 150; k++)
        worker_new(&arena[k], &made);
    for (int step = 0; step < 40000; step++) {
        rng = rng * 1103515245u + 12345u;
        if (step % 4 == 0) /* a worker gone, another in its block under a new name */
            worker_renew(&arena[(rng >> 8) % 150u], &made);
        test_tag = &arena[(rng >> 20) % 150u];
        cmprof_tick(0x08000100u + 2u * ((rng >> 12) & 255u));
        cmprof_stream_drain(late_putc, 1);
        if (step == 20000) /* the host attaches here, at a line's end */
            late_from = late_len;
    }
    cmprof_stream_flush(late_putc);
    struct text_decoder *d = malloc(sizeof *d);
    struct ev_sink none = {0};
    text_init(d);
    text_feed(d, (const uint8_t *)late_out + late_from, late_len - late_from, &none);
    text_finish(d, &none);
    printf("     %u names, %u indexes; the late host: %llu samples, %llu of them \"(task unknown)\"\n",
           (unsigned)made, (unsigned)cmprof_tasks.n_tags, (unsigned long long)d->stats.samples,
           (unsigned long long)d->stats.names_unknown);
    CHECK(d->stats.bad_lines == 0 && d->stats.samples > 15000u && cmprof_tasks.n_tags == CMPROF_TASKS_MAX);
    CHECK(d->stats.names_unknown == 0);
    text_free(d);
    free(d);
}

/* Namings of each worker name u00000..u02999 (its '=' entry, its repeats), from the host's events. */
struct namings {
    uint8_t of[3000];
};

static void count_namings(void *ctx, const struct ev *e)
{
    struct namings *c = ctx;
    unsigned n;
    char name[7], tail;
    if (e->type != EV_TASK_NAME || e->task_name.name_len != 6u)
        return;
    memcpy(name, e->task_name.name, 6); /* (the name may sit inside its line: not terminated) */
    name[6] = 0;
    if (name[0] == 'u' && sscanf(name + 1, "%5u%c", &n, &tail) == 1 && n < 3000u && c->of[n] < 255u)
        c->of[n]++;
}

/* The stream so far, flushed and read from its start: each worker name's namings into c; false when a
 * line was bad or the capture overflowed. */
static bool read_namings(struct namings *c)
{
    cmprof_stream_flush(late_putc);
    struct text_decoder *d = malloc(sizeof *d);
    struct ev_sink sink = {count_namings, c};
    text_init(d);
    text_feed(d, (const uint8_t *)late_out, late_len, &sink);
    text_finish(d, &sink);
    bool ok = d->stats.bad_lines == 0 && late_len < sizeof late_out;
    text_free(d);
    free(d);
    return ok;
}

/* Of the worker names from..to-1: how many were named, and (*over) how many more than `times`. */
static int named_over(const struct namings *c, unsigned from, unsigned to, unsigned times, int *over)
{
    int named = 0;
    *over = 0;
    for (unsigned n = from; n < to; n++) {
        named += c->of[n] > 0;
        *over += c->of[n] > times;
    }
    return named;
}

/* A worker that lives and dies within the page epoch of its '=' entry (8 lines) is not repeated as
 * its index goes to another name: a host that places the epoch's samples read the epoch from its
 * first line, the entry too. Before, any sample of it after its entry's line made it live, repeated
 * as it retired (FreeRTOS's full demo at 1,000 unique names a second: names 13.9 % of the bytes, 13.3
 * after). Workers of 32 samples (2 lines of 16), beside a steady task, each under a name of its own. */
static void test_a_name_within_its_epoch_is_not_repeated(void)
{
    static struct block steady, worker;
    static struct namings c;
    memset(&c, 0, sizeof c);
    late_stream();
    uint32_t made = 0;
    snprintf(steady.name, sizeof steady.name, "main");
    cmprof_stream_task_new(&steady, steady.name, "IDLE");
    worker_new(&worker, &made);
    for (int step = 0; step < 32 * 1000; step++) {
        if (step % 32 == 0 && step)
            worker_renew(&worker, &made);
        test_tag = step % 4 ? (void *)&worker : (void *)&steady;
        cmprof_tick(0x08000100u + 2u * (uint32_t)(step & 63));
        cmprof_stream_drain(late_putc, 1);
    }
    bool read = read_namings(&c);
    int again, named = named_over(&c, 300u, made - 10u, 1u, &again); /* (from 300: indexes reused, retired) */
    printf("     %u workers, %d named after the table filled, %d of them repeated\n", (unsigned)made, named, again);
    CHECK(read && named > 600);
    CHECK(again * 2 < named); /* before: 649 of 690 (a worker's 2 lines are in one epoch here) */
}

/* Samples of the pending indexes (named before this host began) in the events after `from`. */
struct pending_count {
    uint64_t seen, from, pending;
};

static void count_pending(void *ctx, const struct ev *e)
{
    struct pending_count *c = ctx;
    if (e->type == EV_PC && c->seen++ >= c->from)
        c->pending += ev_tag_pending(e->pc.tag);
}

/* A new stream (a new host: cmprof_stream_announce) while 100 tasks named to the earlier one run
 * on: none of their names goes again with a sample (each index's '=' entry went already), so the
 * first round of repeats names them all, at the names' share, not spread over ROUND_PACE seconds
 * (paced, the tasks late in the table waited up to 4 s: the Zephyr stand-in's pool tests, whose
 * "main" kept an entry from the tests before, ended with its samples all pending). */
/* 100 tasks t000..t099 in run[], each named to a stream and sampled once; then a new stream (a new
 * host) begins in late_out. */
static void named_then_new_stream(struct block run[100])
{
    late_stream();
    for (int k = 0; k < 100; k++) {
        snprintf(run[k].name, sizeof run[k].name, "t%03d", k);
        cmprof_stream_task_new(&run[k], run[k].name, "IDLE");
        test_tag = &run[k];
        cmprof_tick(0x08000100u);
        cmprof_stream_drain(late_putc, 1);
    }
    late_len = 0; /* the new host's stream begins */
    cmprof_stream_announce(late_putc, &late_info);
}

static void test_a_new_stream_names_running_tasks_at_once(void)
{
    static struct block run[100];
    named_then_new_stream(run);
    for (int step = 0; step < 20000; step++) { /* 2 s of samples, every task in turn */
        test_tag = &run[step % 100];
        cmprof_tick(0x08000100u + 2u * (uint32_t)(step & 63));
        cmprof_stream_drain(late_putc, 1);
    }
    cmprof_stream_flush(late_putc);
    struct text_decoder *d = malloc(sizeof *d);
    struct pending_count c = {0, 10000u, 0};
    struct ev_sink sink = {count_pending, &c};
    text_init(d);
    text_feed(d, (const uint8_t *)late_out, late_len, &sink);
    text_finish(d, &sink);
    printf("     %llu samples, %llu of the second second's still pending\n", (unsigned long long)c.seen,
           (unsigned long long)c.pending);
    CHECK(d->stats.bad_lines == 0 && c.seen >= 19000u && c.pending == 0);
    text_free(d);
    free(d);
}

/* Names given by the host's events, in order (their text). */
struct names_seen {
    char names[64][17];
    int n;
};

static void collect_names(void *ctx, const struct ev *e)
{
    struct names_seen *c = ctx;
    if (e->type == EV_TASK_NAME && c->n < 64 && e->task_name.name_len < 17u) {
        memcpy(c->names[c->n], e->task_name.name, e->task_name.name_len);
        c->names[c->n++][e->task_name.name_len] = 0;
    }
}

/* Version 9: a round of repeats goes through the table in order, and an "@N" entry of the index after
 * the entry before's, under its own tag, is '.' (the index and '=' before: 2 chars, 4 from index
 * 62 on). 100 tasks named to an earlier stream, then a new one: its first round names them all, the
 * line's entries after its first as '.'. */
static void test_a_round_writes_the_next_index_as_a_dot(void)
{
    static struct block run[100];
    named_then_new_stream(run);
    for (int step = 0; step < 2000; step++) {
        test_tag = &run[step % 100];
        cmprof_tick(0x08000100u + 2u * (uint32_t)(step & 63));
        cmprof_stream_drain(late_putc, 1);
    }
    cmprof_stream_flush(late_putc);
    late_out[late_len < sizeof late_out ? late_len : sizeof late_out - 1u] = 0;
    int entries = 0, dots = 0, next = 0; /* "@N" lines' entries; '.'; of the index after the one before */
    for (const char *p = late_out; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, "@N", 2) != 0)
            continue; /* (a line that begins so: "@N" may sit inside a sample line's chars) */
        int prev = -2;
        for (const char *e = p + 2; *e && *e != '!';) {
            int index = prev + 1;
            bool dot = *e == '.';
            if (dot) {
                e++;
            } else {
                index = *e == '+' ? 62 + (int)(strchr(b64chars, e[1]) - b64chars) * 64 +
                                        (int)(strchr(b64chars, e[2]) - b64chars)
                                  : (int)(strchr(b64chars, *e) - b64chars);
                e += *e == '+' ? 3 : 1;
                e += *e == '=' ? 1 : 6; /* the tag: the index's own, or 6 chars */
            }
            entries++;
            dots += dot;
            next += index == prev + 1;
            prev = index;
            e += strchr("#$%&'()*,-.:;<>?@[]^_`{|}~", *e) ? 2 : 1 + (strchr(b64chars, *e) - b64chars);
        }
    }
    printf("     %d entries in \"@N\" lines, %d of the index after the entry before's, %d of them '.'\n", entries,
           next, dots);
    CHECK(entries >= 100 && next >= 20 && dots == next);
}

/* Blocks named `names` in turn, each sampled once in one page epoch, into a new stream: the '=' entries
 * of its sample lines that are not numbered (a head: a base64 char after the '='), and how many of
 * the names the host was given. */
static int entries_not_numbered(const char *const *names, int n, int *found)
{
    static struct block run[16];
    late_stream();
    for (int k = 0; k < n; k++) {
        snprintf(run[k].name, sizeof run[k].name, "%s", names[k]);
        cmprof_stream_task_new(&run[k], run[k].name, "IDLE");
        test_tag = &run[k];
        cmprof_tick(0x08000100u + 2u * (uint32_t)k);
    }
    cmprof_stream_flush(late_putc);
    late_out[late_len < sizeof late_out ? late_len : sizeof late_out - 1u] = 0;
    int whole = 0;
    for (const char *p = late_out; (p = strchr(p, '=')) != NULL; p++) {
        const char *line = p;
        while (line > late_out && line[-1] != '\n')
            line--;
        whole += *line == '%' && p[1] && (isalnum((unsigned char)p[1]) || p[1] == '+' || p[1] == '/');
    }
    struct text_decoder *d = malloc(sizeof *d);
    static struct names_seen seen;
    seen.n = 0;
    struct ev_sink sink = {collect_names, &seen};
    text_init(d);
    text_feed(d, (const uint8_t *)late_out, late_len, &sink);
    text_finish(d, &sink);
    *found = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < seen.n; j++)
            if (strcmp(seen.names[j], names[k]) == 0) {
                ++*found;
                break;
            }
    CHECK(d->stats.bad_lines == 0);
    text_free(d);
    free(d);
    return whole;
}

/* Numbered names across a thousand: u000995 to u001006 in turn. Each goes as the last one's number
 * plus 1 in its '=' entry, the first whole; before, the names from u001000 on differed from
 * u000999 in 4 chars and went front-coded (on FreeRTOS's full demo at 1,000 unique names a second,
 * a retired name 500 to 700 numbers back crossed a thousand as often as not, and went as an "@N"
 * line of its own). */
static void test_numbered_names_cross_a_thousand(void)
{
    static char text[12][8];
    const char *names[12];
    for (int k = 0; k < 12; k++) {
        snprintf(text[k], sizeof text[k], "u%06d", 995 + k);
        names[k] = text[k];
    }
    int found, whole = entries_not_numbered(names, 12, &found);
    printf("     %d '=' entries not numbered, %d of 12 named on the host\n", whole, found);
    CHECK(found == 12 && whole == 1);
}

/* Version 9: a name of another form in between (Rec3: the application's own tasks among workers
 * named by a counter) leaves the last name ending in two digits the reference: u000101 is u000100
 * plus 1 (version 8 referred to Rec3 and sent u000101 whole). */
static void test_numbered_names_across_other_names(void)
{
    static const char *const names[] = {"u000100", "Rec3", "u000101", "GenQ", "u000103"};
    int found, whole = entries_not_numbered(names, 5, &found);
    printf("     %d '=' entries not numbered, %d of 5 named on the host\n", whole, found);
    CHECK(found == 5 && whole == 3);
}

int main(void)
{
    RUN_TEST(test_idle_stays_idle_after_a_rename);
    RUN_TEST(test_a_worker_recreated_in_its_block_keeps_its_entry);
    RUN_TEST(test_a_nameless_create_parks_the_entry_until_the_rename);
    RUN_TEST(test_an_index_an_entry_gives_is_never_dropped);
    RUN_TEST(test_a_late_host_names_every_reused_index);
    RUN_TEST(test_a_new_stream_names_running_tasks_at_once);
    RUN_TEST(test_numbered_names_cross_a_thousand);
    RUN_TEST(test_numbered_names_across_other_names);
    RUN_TEST(test_a_round_writes_the_next_index_as_a_dot);
    RUN_TEST(test_a_name_within_its_epoch_is_not_repeated);
    return check_summary();
}
