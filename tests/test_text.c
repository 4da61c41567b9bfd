/* Text dump decoder: blocks, tags, histograms, logs, malformed lines, chunk invariance. */
#include "../decode/text.h"
#include "check.h"
#include "evlog.h"

#include <stdio.h>

static struct evlog log_a, log_b;

static void decode_split(const char *s, size_t n, size_t chunk, struct evlog *l, struct text_decoder *d)
{
    struct ev_sink sink = {evlog_event, l};
    evlog_reset(l);
    text_init(d);
    for (size_t i = 0; i < n; i += chunk)
        text_feed(d, (const uint8_t *)s + i, i + chunk <= n ? chunk : n - i, &sink);
    text_finish(d, &sink);
    text_free(d);
}

/* Whether s[0..n), fed in two pieces split at every place in turn, gives log_a's events (log_b
 * holds the last split's). */
static int split_anywhere_as_whole(const char *s, size_t n, struct text_decoder *d)
{
    int all_equal = 1;
    for (size_t k = 0; k <= n; k++) {
        struct ev_sink sink = {evlog_event, &log_b};
        evlog_reset(&log_b);
        text_init(d);
        text_feed(d, (const uint8_t *)s, k, &sink);
        text_feed(d, (const uint8_t *)s + k, n - k, &sink);
        text_finish(d, &sink);
        text_free(d);
        all_equal &= evlog_equal(&log_a, &log_b);
    }
    return all_equal;
}

static void decode(const char *s, struct evlog *l, struct text_decoder *d)
{
    decode_split(s, strlen(s), strlen(s) ? strlen(s) : 1, l, d);
}

static void test_raw_block(void)
{
    struct text_decoder d;
    decode("boot v1.2\nprof raw n=10\n"
           "p 080002b4 080002b8 080002ac 080002b2 080002ce 080002aa 080002b0 080002b0\n"
           "p 080002b4 080002b8\nend\n",
           &log_a, &d);
    CHECK(log_a.count[EV_PC] == 10 && log_a.count[EV_LOG] == 1);
    CHECK(log_a.batches == 1); /* the untagged block came as one EV_PCS */
    CHECK(d.stats.samples == 10 && d.stats.blocks == 1 && d.stats.bad_lines == 0);
    CHECK(strstr(log_a.buf, "a=080002ce t=0/0") != NULL);
    CHECK(strstr(log_a.buf, "'boot v1.2'") != NULL);
}

static void test_tags_pair_with_samples(void)
{
    struct text_decoder d;
    decode("task 20000100 motor\ntask 20000200 link\nprof raw n=3\np 08000100 08000102 08000104\n"
           "g 20000100 20000200 20000100\nend\n",
           &log_a, &d);
    CHECK(log_a.count[EV_TASK_NAME] == 2 && log_a.count[EV_PC] == 3 && log_a.batches == 0);
    CHECK(strstr(log_a.buf, "a=08000102 t=20000200/1") != NULL);
    CHECK(strstr(log_a.buf, "t=20000100/0 s=0 i=0 k=0 v=0 c=0 0/0/0 'motor'") != NULL);
}

/* A dump whose task table was full says so ("tasks slots=S full=N forgot=K", before its task lines):
 * the tags no line named (the tasks the table had no slot for) go under one name that says it and
 * what to raise, never under raw block addresses a host would blame on a missed hook; interrupt
 * tags and tag 0 (before the scheduler) keep theirs. Before: no name for 20000300 or 20000500, and
 * the "tasks" line a log line. */
#define FULL_DUMP "prof raw n=6\np 08000100 08000102 08000104 08000106 08000108 0800010a\n" \
                  "g 20000100 20000300 20000500 fffffe16 00000000 20000300\n"
static void test_dump_says_its_table_was_full(void)
{
    struct text_decoder d;
    const char *full = FULL_DUMP "tasks slots=64 full=2 forgot=0\ntask 20000100 motor\nend\n";
    decode(full, &log_a, &d);
    CHECK(d.stats.bad_lines == 0 && log_a.count[EV_LOG] == 0 && log_a.count[EV_TABLE_FULL] == 1);
    CHECK(log_a.count[EV_TASK_NAME] == 3 && log_a.count[EV_PC] == 6);
    CHECK(strstr(log_a.buf, "'motor'") != NULL);
    CHECK(strstr(log_a.buf, "t=20000300/0 s=0 i=0 k=0 v=0 c=0 0/0/0 '" DUMPTASKS_FULL_NAME "'") != NULL);
    CHECK(strstr(log_a.buf, "t=20000500/0 s=0 i=0 k=0 v=0 c=0 0/0/0 '" DUMPTASKS_FULL_NAME "'") != NULL);
    CHECK(strstr(log_a.buf, "t=fffffe16/0 s=0 i=0 k=0 v=0 c=0 0/0/0 '") == NULL);
    CHECK(strstr(log_a.buf, "t=0/0 s=0 i=0 k=0 v=0 c=0 0/0/0 '") == NULL);
    CHECK(split_anywhere_as_whole(full, strlen(full), &d));
    /* forgotten earlier names (a slot given to another block): the same */
    decode(FULL_DUMP "tasks slots=64 full=0 forgot=3\ntask 20000100 motor\nend\n", &log_a, &d);
    CHECK(log_a.count[EV_TABLE_FULL] == 1 && log_a.count[EV_TASK_NAME] == 3);
    /* an earlier dump (no such line): the tags it did not name stay unnamed, as before */
    decode(FULL_DUMP "task 20000100 motor\nend\n", &log_a, &d);
    CHECK(d.stats.bad_lines == 0 && log_a.count[EV_TABLE_FULL] == 0 && log_a.count[EV_TASK_NAME] == 1);
    /* nothing lost: no count; a bad one is malformed; a log line of the same start stays a log line */
    decode(FULL_DUMP "tasks slots=64 full=0 forgot=0\ntasks slots=x\ntasks started\nend\n", &log_a, &d);
    CHECK(log_a.count[EV_TABLE_FULL] == 0 && log_a.count[EV_TASK_NAME] == 0 && d.stats.bad_lines == 1 &&
          log_a.count[EV_LOG] == 1);
}

/* A control block reused by a task of another name: the dump keeps the earlier names it can ("task"
 * lines of one tag) and says which blocks had more ("tasks reused TAG"). The tag's samples are all
 * of those tasks': one name with all of them, newest first, and "(merged)", never the newest alone. A deleted
 * task's slot given to another block: its own tag keeps its name. Before: 20000100 named "alpha",
 * then "omega" (its samples under the newest), and "tasks reused" lines logged. */
static void test_dump_reused_block_names_all(void)
{
    struct text_decoder d;
    const char *dump = "prof raw n=3\np 08000100 08000102 08000104\ng 20000100 20000200 20000400\n"
                       "tasks reused 20000100\ntasks reused 20000400\n"
                       "task 20000200 beta\ntask 20000100 alpha\ntask 20000100 omega\ntask 20000400 delta\nend\n";
    decode(dump, &log_a, &d);
    CHECK(d.stats.bad_lines == 0 && log_a.count[EV_LOG] == 0 && log_a.count[EV_TASK_NAME] == 3);
    CHECK(strstr(log_a.buf, "t=20000100/0 s=0 i=0 k=0 v=0 c=0 0/0/0 'omega+alpha (merged)'") != NULL);
    CHECK(strstr(log_a.buf, "t=20000200/0 s=0 i=0 k=0 v=0 c=0 0/0/0 'beta'") != NULL);
    CHECK(strstr(log_a.buf, "'delta+? (merged)'") != NULL); /* its earlier names were not kept */
    CHECK(strstr(log_a.buf, "'omega'") == NULL && strstr(log_a.buf, "'alpha'") == NULL);
    CHECK(split_anywhere_as_whole(dump, strlen(dump), &d));
    /* the names before the samples, as an earlier dump's: the first name event precedes the first sample */
    CHECK(strstr(log_a.buf, "'beta'") < strstr(log_a.buf, "a=08000100"));
    /* names that do not fit: counted */
    decode("task 20000100 aaaaaaaaaaaaaaaa\ntask 20000100 bbbbbbbbbbbbbbbb\ntask 20000100 cccccccccccccccc\n"
           "prof raw n=1\np 08000100\ng 20000100\nend\n", &log_a, &d);
    CHECK(strstr(log_a.buf, "'cccccccccccccccc+2 more (merged)'") != NULL);
}

static void test_tag_count_mismatch_drops_tags_not_samples(void)
{
    struct text_decoder d;
    decode("prof raw n=3\np 08000100 08000102 08000104\ng 20000100\nend\n", &log_a, &d);
    CHECK(log_a.count[EV_PC] == 3 && d.stats.tag_mismatch == 1);
    CHECK(strstr(log_a.buf, "/1 ") == NULL);
}

static void test_hist_block(void)
{
    struct text_decoder d;
    decode("prof hist base=0x08000140 shift=2 n=7 out=1\n"
           "h 0000 0003 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000\n"
           "h 0002 0001\nend\n",
           &log_a, &d);
    CHECK(log_a.count[EV_HIST_HEADER] == 1 && log_a.count[EV_BUCKET] == 3);
    CHECK(strstr(log_a.buf, "a=08000144 t=0/0 s=4 i=0 k=0 v=0 c=3 ") != NULL);
    CHECK(strstr(log_a.buf, "a=08000180 t=0/0 s=4 i=0 k=0 v=0 c=2 ") != NULL); /* bucket 16 */
    CHECK(strstr(log_a.buf, "a=08000184 ") != NULL);
    CHECK(strstr(log_a.buf, "a=08000140 t=0/0 s=4 i=0 k=0 v=1 c=7 ") != NULL); /* header: n=7 out=1 */
}

static void test_crlf_and_cr(void)
{
    struct text_decoder d;
    decode("prof raw n=2\r\np 08000100\rp 08000102\r\nend\r\n", &log_a, &d);
    CHECK(log_a.count[EV_PC] == 2 && d.stats.bad_lines == 0 && log_a.count[EV_LOG] == 0);
}

static void test_malformed_lines_are_dropped_whole(void)
{
    struct text_decoder d;
    decode("prof raw n=4\np 08000100 0800010x\np 08000104 123456789\np 08000108\np\np  \n"
           "prof hist base=0xzz shift=1 n=1 out=0\nsect 1 n=2\nend\n",
           &log_a, &d);
    CHECK(log_a.count[EV_PC] == 1); /* only the good line */
    CHECK(d.stats.bad_lines == 6);
    CHECK(strstr(log_a.buf, "a=08000108") != NULL);
}

/* A tagged sample line with more name entries ('=' and an @N entry, stream v3) than a line may
 * carry (64) is dropped whole: no name, no sample, and nothing written past the decoder's table of
 * entries (the ASan build catches that). Its check (sum12) is from tests/harness.py. */
static void test_too_many_entries_in_a_sample_line(void)
{
    char text[1024];
    size_t n = (size_t)snprintf(text, sizeof text, "@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n%%");
    for (int k = 0; k < 65; k++) /* index 1, tag 0, a name of no characters */
        n += (size_t)snprintf(text + n, sizeof text - n, "=BAAAAAAA");
    snprintf(text + n, sizeof text - n, "BAAAA!ia\n");
    struct text_decoder d;
    decode(text, &log_a, &d);
    CHECK(log_a.count[EV_TASK_NAME] == 0 && log_a.count[EV_PC] == 0 && d.stats.bad_lines == 1);
}

/* Version 3 writes a PC as '0' + 6 bits (':' is 10): before the first announce says so, its lines
 * are counted as samples before the announce, not as malformed (a late attach); after it they decode. */
static void test_v3_pcs_before_and_after_the_announce(void)
{
    struct text_decoder d;
    decode("%A00g:A00g5!xD\n@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n"
           "%A00g:A00g5!xD\n", &log_a, &d);
    CHECK(d.stats.no_base == 2 && d.stats.bad_lines == 0 && log_a.count[EV_PC] == 2);
    CHECK(strstr(log_a.buf, "a=08001b94") && strstr(log_a.buf, "a=08001b8a")); /* 0xDCA and 0xDC5 halfwords */
}

static void test_capture_starting_mid_block(void)
{
    struct text_decoder d;
    decode("0002b4 080002b8\np 080002ac 080002b2\nend\nh 0001 0002\n", &log_a, &d);
    CHECK(log_a.count[EV_PC] == 2);     /* headless p lines are kept */
    CHECK(log_a.count[EV_LOG] == 1);    /* the torn first line is a log line */
    CHECK(d.stats.orphan_lines == 1);   /* h without a header cannot be placed */
}

static void test_unterminated_last_line(void)
{
    struct text_decoder d;
    decode("prof raw n=2\np 08000100 08000102", &log_a, &d);
    CHECK(log_a.count[EV_PC] == 2);
}

static void test_sections(void)
{
    struct text_decoder d;
    decode("sect 3 n=1000 cur=3520 min=3500 max=3554 sum=3520000\n", &log_a, &d);
    CHECK(log_a.count[EV_SECTION] == 1);
    CHECK(strstr(log_a.buf, "i=3 k=0 v=dc0 c=1000 3500/3554/3520000") != NULL);
    /* a Cortex-A/R section's PMU event: slot 1 of section 3, INST_RETIRED */
    decode("sectev 3 1 ev=8 cur=3506 min=3506 max=3600 sum=3506000\nsectev 3 x ev=8 cur=1 min=1 max=1 sum=1\n",
           &log_a, &d);
    CHECK(log_a.count[EV_SECTION_EVENT] == 1 && d.stats.bad_lines == 1);
    CHECK(strstr(log_a.buf, "t=8/0 s=0 i=3 k=1 v=db2 c=0 3506/3600/3506000") != NULL);
}

/* A run past the clock's range (long=, at most the run count) and the core's MIDR line. */
static void test_long_sections_and_target(void)
{
    struct text_decoder d;
    decode("sect 2 n=3 cur=4294967295 min=9 max=4294967295 sum=8589934600 long=1\n"
           "sect 2 n=1 cur=1 min=1 max=1 sum=1 long=2\nsect 2 n=1 cur=1 min=1 max=1 sum=1 long=\n"
           "target midr=410fc090\n",
           &log_a, &d);
    CHECK(log_a.count[EV_SECTION] == 1 && d.stats.bad_lines == 2); /* more long runs than runs; no number */
    CHECK(log_a.count[EV_TARGET] == 1 && strstr(log_a.buf, "midr=410fc090") != NULL);
}

/* A halting source's call stack line: after its sample's block, which it closes. */
static void test_stack_line(void)
{
    struct text_decoder d;
    decode("prof raw n=1\np 08000100\nstack 08000100 08000200 08000300\nstack 0800zz00\n", &log_a, &d);
    CHECK(log_a.count[EV_PCS] == 0 && log_a.count[EV_PC] == 1 && log_a.count[EV_STACK] == 1 && d.stats.bad_lines == 1);
    const char *pc = strstr(log_a.buf, "a=08000100"), *st = strstr(log_a.buf, "a=08000100 t=0/0 s=0 i=0 k=0 v=0 c=2");
    CHECK(pc && st && pc < st); /* the sample comes before its stack */
}

/* A firmware's stack evidence: a '^' line after the sample line holding its sample, as the
 * m4_stacks scenario's firmware sent them (checks from that capture; the malformed ones' from
 * scenarios/scen.py's stream_line_check). */
#define STACK_ANNOUNCE                                                                                     \
    "@cmprof v=4 clk=168000000 tclk=168000000 period=1691 jitter=255 arch=ARMv7E-M timer=SysTick "        \
    "base=08000000 bid=e8586d56a86e4eaf9ec0b27cb5049e3dfe8fc06a!fK\n"
#define STACK_SAMPLES "$00`H00`700`300`A00`600b:00`200_o00`E00`900YV00`I00`:00b>00`D00`@!DU\n"
#define STACK_LINE "^AAIABggAIABh1AWABAAxDADAAxNAFAAxXAHAAxhAJAAz4ATABFK!84\n"

static uint32_t stack_pairs[32];
static size_t stack_n;

static void stack_event(void *ctx, const struct ev *e)
{
    evlog_event(ctx, e);
    if (e->type == EV_STACK_WORDS && e->stack_words.n <= 16) {
        memcpy(stack_pairs, e->stack_words.pairs, 2 * e->stack_words.n * sizeof *stack_pairs);
        stack_n = e->stack_words.n;
    }
}

static void test_stack_evidence_line(void)
{
    struct text_decoder d;
    const char *text = STACK_ANNOUNCE STACK_SAMPLES STACK_LINE;
    decode(text, &log_a, &d);
    CHECK(log_a.count[EV_PC] == 16 && log_a.count[EV_STACK_WORDS] == 1 && d.stats.bad_lines == 0 &&
          log_a.count[EV_LOG] == 0);
    /* the sample's PC, the line's last sample (0 back), the LR, 22 words scanned, 6 kept */
    CHECK(strstr(log_a.buf, " a=08001820 t=0/0 s=22 i=0 k=0 v=8001875 c=6 ") != NULL);
    /* the words: offsets and return addresses (odd) against the announced base */
    text_init(&d);
    struct ev_sink sink = {stack_event, &log_b};
    evlog_reset(&log_b);
    stack_n = 0;
    text_feed(&d, (const uint8_t *)text, strlen(text), &sink);
    static const uint32_t want[] = {1, 0x08001887, 3, 0x0800189b, 5, 0x080018af, 7, 0x080018c3, 9, 0x080019f1,
                                    19, 0x08002295};
    CHECK(stack_n == 6 && memcmp(stack_pairs, want, sizeof want) == 0);
    text_free(&d);
    /* fed a byte at a time: the same events */
    decode_split(text, strlen(text), 1, &log_b, &d);
    CHECK(evlog_equal(&log_a, &log_b));
    /* before any announce: no code base to place it by, dropped (as its samples are), not malformed */
    decode(STACK_SAMPLES STACK_LINE, &log_a, &d);
    CHECK(log_a.count[EV_STACK_WORDS] == 0 && d.stats.bad_lines == 0 && d.stats.no_base == 16);
    /* a flipped bit fails the check; falling offsets, and an offset past the words scanned, are malformed */
    decode(STACK_ANNOUNCE STACK_SAMPLES "^AAIABggAIABh1AWABAAxDADAAxNAFAAxXAHAAxhAJAAz4ATABFL!84\n"
           "^AAIABggAIABh1AWADAAxDABAAxN!g6\n^AAIABggAIABh1ACAFAAxD!Tm\n", &log_a, &d);
    CHECK(log_a.count[EV_STACK_WORDS] == 0 && d.stats.bad_checks == 1 && d.stats.bad_lines == 3 &&
          log_a.count[EV_LOG] == 0);
}

/* "^~N": the samples whose evidence the firmware dropped so far, after the lines that changed it (as
 * the m4_stacks_all scenario's firmware, CMPROF_STACK_EVERY=1 with 8 records, sent them). */
static void test_stack_dropped_line(void)
{
    struct text_decoder d;
    const char *text = STACK_ANNOUNCE STACK_SAMPLES "^~10000!hX\n" STACK_SAMPLES "^~10016!3X\n";
    decode(text, &log_a, &d);
    CHECK(log_a.count[EV_STACK_DROPPED] == 2 && d.stats.bad_lines == 0 && log_a.count[EV_LOG] == 0);
    const char *first = strstr(log_a.buf, " c=10000 "), *second = strstr(log_a.buf, " c=10016 ");
    CHECK(first && second && first < second);
    decode_split(text, strlen(text), 1, &log_b, &d); /* fed a byte at a time: the same events */
    CHECK(evlog_equal(&log_a, &log_b));
    /* a flipped bit fails the check; a count that is not decimal is malformed; "^~" with no count is
     * too short for a stream line: a log line, as an older host takes every "^~" line */
    decode(STACK_ANNOUNCE "^~10001!hX\n^~12a!0c\n^~!bY\n", &log_a, &d);
    CHECK(log_a.count[EV_STACK_DROPPED] == 0 && d.stats.bad_checks == 1 && d.stats.bad_lines == 2 &&
          log_a.count[EV_LOG] == 1);
}

/* A dump's stack evidence: "sw" lines after its samples, counting back from the last. */
static void test_dump_stack_evidence(void)
{
    struct text_decoder d;
    decode("prof raw n=2\np 08000100 08000200\nsw 00000001 08000100 08000201 00000004 00000001 08000301\n"
           "sw 00000000 08000200 ffffffff 00000002 00000003 08000301\nsw 00000000 08000200 08000201\nend\n",
           &log_a, &d);
    CHECK(log_a.count[EV_PC] == 2 && log_a.count[EV_STACK_WORDS] == 1 && d.stats.bad_lines == 2);
    const char *pcs = strstr(log_a.buf, "a=08000200"), *st = strstr(log_a.buf, " a=08000100 t=0/0 s=4 i=1 k=0 v=8000201 c=1 ");
    CHECK(pcs && st && pcs < st); /* the block's samples first */
    CHECK(d.stats.missing == 0 && d.stats.blocks == 1);
}

static void test_long_line(void)
{
    static char s[TEXT_LINE_MAX * 3];
    memset(s, 'x', sizeof s - 30);
    strcpy(s + sizeof s - 30, "\np 08000100\n");
    struct text_decoder d;
    decode(s, &log_a, &d);
    CHECK(d.stats.long_lines == 1 && log_a.count[EV_PC] == 1 && log_a.count[EV_LOG] == 0);
}

static void test_chunk_invariance(void)
{
    static char s[16384];
    size_t n = 0;
    n += (size_t)sprintf(s + n, "garbage start\r\ntask 20000100 motor\n");
    for (int b = 0; b < 3; b++) {
        n += (size_t)sprintf(s + n, "log line %d\nprof raw n=40\n", b);
        for (int i = 0; i < 40; i++)
            n += (size_t)sprintf(s + n, "%s%08x%s", i % 8 ? " " : "p ", 0x08000100u + 2u * rnd32() % 64u,
                                 i % 8 == 7 ? "\n" : "");
        for (int i = 0; i < 40; i++)
            n += (size_t)sprintf(s + n, "%s%08x%s", i % 8 ? " " : "g ", 0x20000100u, i % 8 == 7 ? "\r\n" : "");
        n += (size_t)sprintf(s + n, "end\nprof hist base=0x08000000 shift=1 n=5 out=0\nh 0001 0000 0004\nend\n");
        n += (size_t)sprintf(s + n, "p 0800zz00\nsect 0 n=1 cur=5 min=5 max=5 sum=5\n");
        n += (size_t)sprintf(s + n, "sectev 0 0 ev=8 cur=4 min=4 max=4 sum=4\n");
    }
    struct text_decoder d1, d2;
    decode_split(s, n, n, &log_a, &d1);
    CHECK(log_a.count[EV_PC] == 120 && d1.stats.bad_lines == 3);
    decode_split(s, n, 1, &log_b, &d2);
    CHECK(evlog_equal(&log_a, &log_b));
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    CHECK(all_equal);
}

/* Stream lines of both check kinds: v1 ("~CC", CRC-12, as firmware before v2 sent them, captured
 * from the stream_tagged scenario) and v2 ("!CC", sum12, computed by an independent script). */
static const char *const v1_lines[] = {
    "@cmprof v=1 clk=168000000 tclk=168000000 period=64 jitter=4095 base=08000000 "
    "bid=33a5aac75705e83ca1f58fb70bf12785afb07a18~GZ",
    "@task A 20000000 task_a~Qs",
    "@task B 20000007 task_b~9t",
    "%AAAXLAAAXMAAAXLBAAXTBAAXVBAAXWAAAXOAAAXLAAAXMAAAXQAAAXOAAAXLAAAXMAAAXLAAAXQAAAXM~qE",
    "$AAUTAAUPAAUUAAUWAAUWAAUbAAUUAAUPAAUTAAUPAAUSAAUPAAUQAAUUAAUTAAUU~8C",
};
static const char *const v2_lines[] = {
    "@cmprof v=2 clk=168000000 tclk=168000000 period=64 jitter=4095 base=08000000!8m",
    "@task A 20000000 task_a!WT",
    "@task B 20000007 task_b!cZ",
    "%AAAXLAAAXMAAAXLBAAXTBAAXVBAAXWAAAXOAAAXLAAAXMAAAXQAAAXOAAAXLAAAXMAAAXLAAAXQAAAXM!UI",
    "$AAUTAAUPAAUUAAUWAAUWAAUbAAUUAAUPAAUTAAUPAAUSAAUPAAUQAAUUAAUTAAUU!3R",
};

static void join_lines(char *out, size_t cap, const char *const *lines, size_t n)
{
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        strncat(out, lines[i], cap - strlen(out) - 2);
        strcat(out, "\n");
    }
}

static void test_both_check_kinds_decode(void)
{
    const char *const *sets[2] = {v1_lines, v2_lines};
    for (int v = 0; v < 2; v++) {
        char text[1024];
        join_lines(text, sizeof text, sets[v], 5);
        struct text_decoder d;
        decode(text, &log_a, &d);
        CHECK(log_a.count[EV_PC] == 32 && d.stats.bad_checks == 0 && d.stats.bad_lines == 0);
        CHECK(strstr(log_a.buf, "a=08000ba6 t=20000007/1") != NULL); /* "BAAXT": task B, 0x5d3 halfwords */
    }
}

/* Issue 30: the tags a stream sample may carry. A firmware before issue 30 with a full table
 * (62 slots) sent '/' for any task past them and for interrupts: the tag never reached the host,
 * so the samples are counted as such (EV_TAG_UNSENT), never shown as a task with tag 0. One with
 * more than 62 slots named an index '/' (63) with "@task /": then it is that task. '-' and two
 * chars carry an exception number (2..511); "@full" says the table filled. Checks by an
 * independent script. */
static void test_stream_tag_forms(void)
{
    struct text_decoder d;
    decode("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n@task A 20000000 a!bq\n"
           "%AAAAB/AAAC/AAAD!u5\n%-AWAAAB!FH\n%-AAAAAB!Ct\n@full tasks=254!zo\n",
           &log_a, &d);
    CHECK(log_a.count[EV_PC] == 4 && d.stats.bad_lines == 1); /* exception 0 is no handler: dropped */
    CHECK(d.stats.unsent_tags == 2 && strstr(log_a.buf, "a=08000004 t=fffffe01/1") != NULL);
    CHECK(strstr(log_a.buf, "a=08000002 t=fffffe16/1") != NULL);
    CHECK(strstr(log_a.buf, "a=08000002 t=20000000/1") != NULL);
    CHECK(log_a.count[EV_TABLE_FULL] == 1 && strstr(log_a.buf, " t=0/1") == NULL);
    decode("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n@task / 20000400 t63!6c\n"
           "%/AAAB!Fl\n",
           &log_a, &d);
    CHECK(log_a.count[EV_PC] == 1 && d.stats.unsent_tags == 0 && strstr(log_a.buf, "t=20000400/1") != NULL);
}

/* Every single-bit error in a stream line is caught: the line gives no sample. (CRC-12 guarantees
 * it; sum12 does too, as 2^j is prime to 4095; the two check marks are 7 bits apart.) */
static void test_single_bit_errors_are_caught(void)
{
    const char *const *sets[2] = {v1_lines, v2_lines};
    size_t tried = 0, passed = 0;
    for (int v = 0; v < 2; v++)
        for (size_t l = 3; l < 5; l++) {
            char head[512], text[1024];
            join_lines(head, sizeof head, sets[v], 3);
            size_t n = strlen(sets[v][l]), at = strlen(head);
            for (size_t i = 0; i < n; i++)
                for (int bit = 0; bit < 8; bit++) {
                    strcpy(text, head);
                    strcat(text, sets[v][l]);
                    strcat(text, "\n");
                    text[at + i] = (char)(text[at + i] ^ (1 << bit));
                    if (text[at + i] == 0)
                        continue; /* the test's strings end at NUL; a decoder never sees it so */
                    struct text_decoder d;
                    decode(text, &log_a, &d);
                    tried++;
                    passed += log_a.count[EV_PC] != 0;
                }
        }
    CHECK(tried > 2000 && passed == 0);
}

/* Dump words are parsed eight digits at a time: every digit, either case, at every position gives
 * what strtoul gives, and every byte that is not a hex digit, at every position, drops the line. */
static void test_hex_words_fast_path_matches_strtoul(void)
{
    uint32_t rng = 12345u;
    int right = 0, refused = 0, tried_bad = 0;
    for (int k = 0; k < 4000; k++) {
        char word[9];
        for (int i = 0; i < 8; i++) {
            rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
            word[i] = (rng >> 8) % 2 ? "0123456789abcdef"[rng % 16] : "0123456789ABCDEF"[rng % 16];
        }
        word[8] = 0;
        char text[128];
        snprintf(text, sizeof text, "prof raw n=2\np %s %s\nend\n", word, word);
        struct text_decoder d;
        decode(text, &log_a, &d);
        char want[32];
        snprintf(want, sizeof want, "a=%08lx ", strtoul(word, NULL, 16));
        right += log_a.count[EV_PC] == 2 && strstr(log_a.buf, want) != NULL && d.stats.bad_lines == 0;
        /* one byte that is no hex digit, anywhere in the second word */
        static const char bad_bytes[] = {'g', 'G', '/', ':', '@', '`', 'z', '-', '\x80', '\xc6', '\x7f', '\x01'};
        char bad = bad_bytes[k % sizeof bad_bytes];
        word[(k / 7) % 8] = bad;
        snprintf(text, sizeof text, "prof raw n=2\np 08000100 %s\nend\n", word);
        decode(text, &log_a, &d);
        tried_bad++;
        refused += log_a.count[EV_PC] == 0 && d.stats.bad_lines == 1;
    }
    CHECK(right == 4000);
    CHECK(refused == tried_bad);
}

/* The firmware's own line, eight words, is checked sixteen bytes at a time: with any one of its
 * bytes replaced by any value, and each line end, it must read as the byte-by-byte path reads it. */
static void test_eight_word_lines_match_the_general_parse(void)
{
    static const char *const ends[] = {"\n", "\r", "\r\n"};
    const char *good = "p 0800abcd 0800ABCD 08001234 0800fffe 08000000 0800a0b0 0800F0E0 08009998";
    struct text_decoder d1, d2;
    int same = 0, tried = 0, clean = 0;
    for (int e = 0; e < 3; e++) {
        char text[512];
        int head = snprintf(text, sizeof text, "prof raw n=24\n%s%s", good, ends[e]);
        int at = head; /* the line under test */
        int n = head + snprintf(text + head, sizeof text - (size_t)head, "%s%s%s%send\n", good, ends[e], good, ends[e]);
        decode_split(text, (size_t)n, (size_t)n, &log_a, &d1);
        clean += log_a.count[EV_PC] == 24 && d1.stats.bad_lines == 0;
        for (int pos = 1; pos <= 73; pos++) {
            for (int v = 0; v < 256; v++) {
                char saved = text[at + pos];
                text[at + pos] = (char)v;
                decode_split(text, (size_t)n, (size_t)n, &log_a, &d1);
                decode_split(text, (size_t)n, 1, &log_b, &d2);
                same += evlog_equal(&log_a, &log_b) && memcmp(&d1.stats, &d2.stats, sizeof d1.stats) == 0;
                tried++;
                text[at + pos] = saved;
            }
        }
    }
    CHECK(clean == 3);
    CHECK(tried == 3 * 73 * 256 && same == tried);
}

/* Attached to a live source mid-line: its first line is the tail of one never seen, so a bad
 * first line is no error there (a file's first line is whole: bad stays bad). */
/* Issue 31: a live source joined mid-way through a log line that has a stream line glued after it
 * ("p=23$...!CC"): the first line's head is the cut, not a glued line; its samples are kept. An
 * index used before its @task line carries EV_TAG_PENDING of itself, and its first name says so. */
static void test_attach_cut_and_pending_index(void)
{
    const char *s = "@cmprof v=2 clk=168000000 tclk=168000000 period=64 jitter=4095 base=08000000!8m\n";
    const char *glued = "p=23$AAUTAAUPAAUUAAUWAAUWAAUbAAUUAAUPAAUTAAUPAAUSAAUPAAUQAAUUAAUTAAUU!3R\n";
    for (int live = 0; live < 2; live++) {
        struct ev_sink sink = {evlog_event, &log_a};
        struct text_decoder d;
        evlog_reset(&log_a);
        text_init(&d);
        text_feed(&d, (const uint8_t *)s, strlen(s), &sink); /* the code base, then the join */
        d.joined_mid_line = live;
        d.first_line_done = false;
        text_feed(&d, (const uint8_t *)glued, strlen(glued), &sink);
        CHECK(d.stats.glued == (live ? 0u : 1u) && d.stats.partial_first == (live ? 1u : 0u));
        CHECK(log_a.count[EV_PC] == 16);
        text_free(&d);
    }
    struct text_decoder d;
    text_init(&d);
    CHECK(d.task_tags[5] == EV_TAG_PENDING(5) && ev_tag_pending(d.task_tags[TEXT_TASKS - 1]) &&
          !ev_tag_pending(EV_TAG_UNSENT) && !ev_tag_pending(0x20000000u));
    text_free(&d);
}

/* Decodes len bytes of s whole into log_a, as from a live source or not; text_free(d) after. */
static void decode_as(struct text_decoder *d, const char *s, size_t len, bool live)
{
    struct ev_sink sink = {evlog_event, &log_a};
    evlog_reset(&log_a);
    text_init(d);
    d->joined_mid_line = live;
    text_feed(d, (const uint8_t *)s, len, &sink);
    text_finish(d, &sink);
}

static void test_partial_first_line_of_a_live_source(void)
{
    /* the tail of a stream line whose start (and check's coverage) we missed: its check fails */
    const char *s = "$AAXLBAAXTBAAXV!qE\n"
                    "@cmprof v=2 clk=168000000 tclk=168000000 period=64 jitter=4095 base=08000000!8m\n"
                    "$AAUTAAUPAAUUAAUWAAUWAAUbAAUUAAUPAAUTAAUPAAUSAAUPAAUQAAUUAAUTAAUU!3R\n"
                    "p 0800zz00\n";
    for (int live = 0; live < 2; live++) {
        struct text_decoder d;
        decode_as(&d, s, strlen(s), live);
        /* the last line is bad either way: only the first is forgiven */
        CHECK(d.stats.bad_lines == (live ? 1u : 2u) && d.stats.partial_first == (live ? 1u : 0u));
        CHECK(log_a.count[EV_PC] == 16);
        text_free(&d);
    }
}

/* Reading stops mid-line (--duration, q, a recording of such a run): that last line is the cut,
 * not malformed, from a live source and its recording alike; a whole last line still counts. */
static void test_partial_last_line_is_the_cut(void)
{
    const char *s = "@cmprof v=2 clk=168000000 tclk=168000000 period=64 jitter=4095 base=08000000!8m\n"
                    "$AAUTAAUPAAUUAAUWAAUWAAUbAAUUAAUPAAUTAAUPAAUSAAUPAAUQAAUUAAUTAAUU!3R\n"
                    "$AAUTAAUPAAUUAAUWAAUW";
    for (int live = 0; live < 2; live++) {
        struct text_decoder d;
        decode_as(&d, s, strlen(s), live);
        CHECK(d.stats.bad_lines == 0u && d.stats.partial_last == 1u);
        CHECK(log_a.count[EV_PC] == 16);
        text_free(&d);
        /* without its newline, a whole last line is still decoded */
        decode_as(&d, s, strlen(s) - strlen("$AAUTAAUPAAUUAAUWAAUW") - 1, live);
        CHECK(d.stats.bad_lines == 0u && d.stats.partial_last == 0u && log_a.count[EV_PC] == 16);
        text_free(&d);
    }
}

/* Version 5: a '=' entry sends a name whole with its id and its tag; a later entry for a task of
 * that name in the same control block refers to it by id, 2 chars, and both name their samples.
 * A host that missed the entry with the whole name (a late start) keeps the index waiting until
 * its @N repeat, which names the waiting samples. */
static void test_v5_names_by_id(void)
{
    struct text_decoder d;
    decode("@cmprof v=5 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!ZD\n"
           "%A00g1=BwFAgAAQAGsensorB00c2!uP\n%B00c3=BAFB00c4!Qv\n", &log_a, &d);
    CHECK(d.stats.bad_lines == 0 && log_a.count[EV_PC] == 4 && log_a.count[EV_TASK_NAME] == 2);
    CHECK(strstr(log_a.buf, "t=20000400/0 s=0 i=0 k=0 v=ffffc001 c=0 0/0/0 'sensor'") != NULL);
    CHECK(strstr(log_a.buf, "a=08001984 t=20000400/1") && strstr(log_a.buf, "a=08001988 t=20000400/1"));
    decode("@cmprof v=5 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!ZD\n%=BAFB00c5!tW\n@NBAgAAQAGsensor!/G\n", &log_a, &d); /* attached late: id 5 never seen */
    CHECK(d.stats.names_waited_id == 1 && strstr(log_a.buf, "a=0800198a t=ffffc001/1") != NULL);
    CHECK(strstr(log_a.buf, "t=20000400/0 s=0 i=0 k=0 v=ffffc001 c=0 0/0/0 'sensor'") != NULL);
}

/* A line that may have named tasks is dropped (here a '=' entry giving index B to task "new"): no
 * sample after it keeps an index's old name. Every index named before it is pending (EV_NAMES_UNSURE)
 * until named again: a repeat (@N) gives the waiting samples its name; a new task's '=' entry, sent
 * before its first sample, cannot be theirs: EV_TASK_UNKNOWN. Checks by tests/harness.py. */
static void test_dropped_line_leaves_no_old_name(void)
{
    const char *s = "@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n"
                    "@NAAgAAAAFmotorBAgABAADold!bn\n%B00g1A00g1!ZA\n"
                    "%=BAgACAADnewB00g2!AV\n" /* its check hit: dropped */
                    "%B00g3A00g3!TB\n@NBAgACAADnew!+y\n%A00g4!Aa\n%=AAgADAAEnextA00g5!ll\n";
    for (size_t chunk = 1; chunk <= strlen(s); chunk += strlen(s) - 1) {
        struct text_decoder d;
        decode_split(s, strlen(s), chunk, &log_a, &d);
        CHECK(d.stats.bad_checks == 1 && log_a.count[EV_NAMES_UNSURE] == 1 && log_a.count[EV_PC] == 6);
        CHECK(strstr(log_a.buf, "a=08001b82 t=20001000/1") && strstr(log_a.buf, "a=08001b82 t=20000000/1"));
        /* after the drop: both indexes wait, never "old" */
        CHECK(strstr(log_a.buf, "a=08001b86 t=ffffc001/1") && strstr(log_a.buf, "a=08001b86 t=ffffc000/1"));
        CHECK(!strstr(log_a.buf, "a=08001b86 t=20001000"));
        /* B's repeat names its waiting samples */
        CHECK(strstr(log_a.buf, "t=20002000/0 s=0 i=0 k=0 v=ffffc001 c=0 0/0/0 'new'") != NULL);
        CHECK(strstr(log_a.buf, "a=08001b88 t=ffffc000/1") != NULL); /* A: not repeated yet */
        /* A given to a new task: its waiting samples' task is unknown, the new task's sample is its */
        CHECK(log_a.count[EV_TASK_UNKNOWN] == 1 && strstr(log_a.buf, " t=ffffc000/0 s=0 i=0 k=0 v=0 c=2 ") != NULL);
        CHECK(strstr(log_a.buf, "t=20003000/0 s=0 i=0 k=0 v=0 c=0 0/0/0 'next'") != NULL);
        CHECK(strstr(log_a.buf, "a=08001b8a t=20003000/1") != NULL);
        CHECK(d.stats.names_waited == 3 && d.stats.names_unknown == 2 && d.stats.max_wait == 2);
    }
    /* before version 3 the firmware repeated its names as @task lines: one names the waiting samples */
    struct text_decoder v2;
    decode("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n@task A 20000000 a!bq\n%AAAAB!9s\n"
           "%AAAAC!Xt\n%AAAAD!dt\n@task A 20000000 a!bq\n", &log_a, &v2);
    CHECK(strstr(log_a.buf, "a=08000006 t=ffffc000/1") && log_a.count[EV_TASK_UNKNOWN] == 0);
    CHECK(strstr(log_a.buf, "t=20000000/0 s=0 i=0 k=0 v=ffffc000 c=0 0/0/0 'a'") != NULL);
    /* the first character hit: a log line, but one that may have named tasks */
    struct text_decoder d;
    decode("@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n@NAAgAAAAFmotor!QL\n"
           "x=BAgACAADnewB00g2!mV\n%A00g3!wZ\n", &log_a, &d);
    CHECK(log_a.count[EV_LOG] == 0 && d.stats.bad_checks == 1 && log_a.count[EV_NAMES_UNSURE] == 1);
    CHECK(strstr(log_a.buf, "a=08001b86 t=ffffc000/1") != NULL);
}

/* A sample line of another version than its announce is named, not decoded: version 3 digits after a
 * version 2 announce, base64 under a version 3 one; then a line that reads both ways is the other
 * version's too. A newer announce (v=10): its lines are counted, not read, until a known announce.
 * Announced numbers past the firmware's 32 bits are refused by name; so are 64-bit section figures,
 * lost counts, and a full table of no slots. Checks by tests/harness.py. */
static void test_versions_and_announced_ranges(void)
{
    struct text_decoder d;
    decode("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n$AADBAADF!8r\n$0:0;00g1!Hx\n"
           "$AADBAADF!8r\n", &log_a, &d);
    CHECK(log_a.count[EV_PC] == 2 && d.stats.other_version_lines == 2 && d.stats.other_version == 3 &&
          d.stats.announced_version == 2 && d.stats.bad_lines == 0);
    decode("@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n$0:0;00g1!Hx\n$AADBAADF!8r\n",
           &log_a, &d);
    CHECK(log_a.count[EV_PC] == 4 && d.stats.other_version_lines == 0); /* "AADB" reads in both alphabets */
    decode("@cmprof v=10 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!zb\n$0:0;00g1!Hx\n"
           "@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n$0:0;00g1!Hx\n", &log_a, &d);
    CHECK(d.stats.newer_version == 10 && d.stats.newer_lines == 1 && d.stats.bad_lines == 0 && d.stats.no_base == 0);
    CHECK(log_a.count[EV_PC] == 2 && log_a.count[EV_STREAM_INFO] == 1);
    decode("@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n"
           "@cmprof v=3 clk=1000 tclk=1000 period=18446744073709551615 jitter=0 base=08000000!o5\n"
           "@sect 0 n=1 cur=4294967296 min=1 max=4294967296 sum=4294967296!T2\n@lost 4294967296!bK\n"
           "@full tasks=0!vS\n", &log_a, &d);
    CHECK(log_a.count[EV_STREAM_INFO] == 1 && d.stats.refused_announces == 1 && d.stats.refused_field &&
          strcmp(d.stats.refused_field, "period") == 0 && d.stats.refused_value == UINT64_MAX);
    CHECK(log_a.count[EV_SECTION] == 0 && log_a.count[EV_LOST] == 0 && log_a.count[EV_TABLE_FULL] == 0 &&
          d.stats.bad_lines == 3);
    char what[200];
    text_describe(&d.stats, what, sizeof what);
    CHECK(strstr(what, "1 announce refused (period=18446744073709551615)") != NULL);
}

/* Version 6 (docs/stream.md): 3 PC chars '?' + 6 bits ('.' and 4 past 512 KB, '*' and 6 base64
 * for any PC), a tag only where it differs from the sample's before it in the line (the first has
 * one), index chars outside the PC alphabet: '0'..'&' 0..18, a leader and a base64 char to 274, '+'
 * and two past it; '-' an exception, '/' no slot. The same events whole, byte by byte and split at
 * every byte; a line whose first sample has no tag is dropped whole; a version 4 line under a
 * version 6 announce and the reverse are named as such. Checks by an independent script. */
static void test_v6_compact_samples(void)
{
    static const char s[] =
        "boot\n@cmprof v=6 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!jz\n"
        "@task A 20000000 a!bq\n@task Z 20000400 b!s9\n"
        "$?v@??A.@???*AgABAA!kM\n"
        "%0??@??A'G??B-AW??C/??D+Du??E??F0??G!h9\n"
        "log %?? 0\n%0??@=BwFAgAAQAGsensor??A1??B!bm\n"
        "%??@!1k\n";
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    CHECK(log_a.count[EV_PC] == 15 && d1.stats.bad_lines == 1 && d1.stats.bad_checks == 0 &&
          d1.stats.other_version_lines == 0 && d1.stats.newer_lines == 0);
    CHECK(strstr(log_a.buf, "a=08001b82 t=0/0") && strstr(log_a.buf, "a=08000004 t=0/0") &&
          strstr(log_a.buf, "a=08080000 t=0/0") && strstr(log_a.buf, "a=20001000 t=0/0"));
    CHECK(strstr(log_a.buf, "a=08000002 t=20000000/1") && strstr(log_a.buf, "a=08000004 t=20000000/1") &&
          strstr(log_a.buf, "a=08000006 t=20000400/1") && strstr(log_a.buf, "a=08000008 t=fffffe16/1") &&
          strstr(log_a.buf, "a=08000010 t=20000000/1"));
    CHECK(d1.stats.unsent_tags == 1 && strstr(log_a.buf, "a=0800000e t=20000400/1") == NULL);
    /* the '=' entry names index 1 between the define line's first sample and its last */
    const char *def = strstr(log_a.buf, "'sensor'");
    CHECK(def && strstr(def, "a=08000004 t=20000000/1") && strstr(def, "a=08000006 t=20000400/1"));
    decode_split(s, n, 1, &log_b, &d2);
    CHECK(evlog_equal(&log_a, &log_b));
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    CHECK(all_equal);
    decode("@cmprof v=6 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!jz\n%A00g1!QZ\n%0?mB!Ct\n"
           "@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!Dj\n%0?mB!Ct\n",
           &log_a, &d1);
    CHECK(log_a.count[EV_PC] == 1 && d1.stats.other_version_lines == 2 && d1.stats.other_version == 6 &&
          d1.stats.bad_lines == 0);
}

/* A host that attached late, before its first announce: a version 6 sample line with a '=' entry
 * (version 5's form, here without a tag: a named index's, 0xFFFFA000 + index) is counted and its
 * name kept, not taken for a malformed line (which made every name unsure); the samples after the
 * announce carry it. */
static void test_v6_name_entry_before_the_announce(void)
{
    struct text_decoder d;
    decode("%=BQFGsensor1??A!MR\n@cmprof v=6 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!jz\n%1??B!Zr\n",
           &log_a, &d);
    CHECK(d.stats.bad_lines == 0 && d.stats.no_base == 1 && d.stats.names_unsure == 0);
    CHECK(log_a.count[EV_TASK_NAME] == 1 && log_a.count[EV_PC] == 1 && strstr(log_a.buf, "'sensor'") &&
          strstr(log_a.buf, "a=08000006 t=ffffa001/1"));
}

/* The same in version 7, whose '=' entry has no index (the sample after it gives it): before its
 * first announce a host reads the line's entry in version 7's form, not version 5's (which took
 * the head for an index and the line for a malformed one, every name unsure). */
static void test_v7_name_entry_before_the_announce(void)
{
    struct text_decoder d;
    decode("%?@=QFGsensor1??A!04\n@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!uj\n%??1??B!SU\n",
           &log_a, &d);
    CHECK(d.stats.bad_lines == 0 && d.stats.no_base == 1 && d.stats.names_unsure == 0);
    CHECK(log_a.count[EV_TASK_NAME] == 1 && log_a.count[EV_PC] == 1 && strstr(log_a.buf, "'sensor'") &&
          strstr(log_a.buf, "a=08000006 t=ffffa001/1"));
}

/* Version 7's "@N" entry for a named index: '=' where the tag's 6 chars would say the index's own
 * (0xFFFFA000 + index); the same events whole and byte by byte; one cut short is a malformed line. */
static void test_v7_repeat_with_the_index_tag(void)
{
    static const char s[] = "@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!uj\n"
                            "@NB=GsensorC=Fmotor!pg\n%??1??B2??C!fH\n";
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    CHECK(d1.stats.bad_lines == 0 && log_a.count[EV_TASK_NAME] == 2 && log_a.count[EV_PC] == 2);
    CHECK(strstr(log_a.buf, "t=ffffa001/0") && strstr(log_a.buf, "'sensor'") && strstr(log_a.buf, "t=ffffa002/0") &&
          strstr(log_a.buf, "'motor'") && strstr(log_a.buf, "a=08000006 t=ffffa001/1") &&
          strstr(log_a.buf, "a=08000008 t=ffffa002/1"));
    decode_split(s, n, 1, &log_b, &d2);
    CHECK(evlog_equal(&log_a, &log_b));
    decode("@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!uj\n@NB=!qI\n@NB=G!OL\n", &log_a, &d1);
    CHECK(d1.stats.bad_lines == 2 && log_a.count[EV_TASK_NAME] == 0);
}

/* Version 7's front-coded names: a '=' entry's name as 32 + the chars it shares with the last name
 * its line sent whole, the rest's length and the rest (u000002 after u000001: "mB2"; u000003 after
 * u000099, itself front-coded: still against u000001); the same events whole, byte by byte and
 * split anywhere. A line whose front-coded name refers past its own names (here to the line
 * before's) is malformed: it refers only within its line. */
static void test_v7_front_coded_names(void)
{
    static const char s[] = "@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!uj\n"
                            "%?\?=QBHu0000011??A=QCmB22??B=QDlC991??C=QEmB32??D!dg\n%?@=QDmB32??C!wP\n";
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    CHECK(log_a.count[EV_TASK_NAME] == 4 && strstr(log_a.buf, "'u000001'") && strstr(log_a.buf, "'u000002'") &&
          strstr(log_a.buf, "'u000099'") && strstr(log_a.buf, "'u000003'") && !strstr(log_a.buf, "'u000093'") &&
          strstr(log_a.buf, "a=08000006 t=ffffa002/1") && d1.stats.bad_lines == 1);
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    decode_split(s, n, 1, &log_b, &d2);
    CHECK(all_equal && evlog_equal(&log_a, &log_b));
}

/* Version 8's numbered names: a '=' entry of 2 chars, a lead that is no base64 char and a base64
 * one (the difference + 832: '<' 13 x 64, 'B' 1: +1), the last name a '=' entry of the page epoch
 * wrote out with its trailing number moved by it (u000002 after u000001, u000100 after that by
 * +98, u000050 in the next line by -50); an "@N" entry's the same against the entry before it in
 * its line (an "@N" line's first entry numbered is malformed). At a new epoch (line 8) nothing is
 * there to refer to: the index waits for its repeat. A host that began at line 1 has no earlier
 * name of the epoch: it waits too, and names nothing wrongly. Whole, split anywhere, late. */
static void test_v8_numbered_names(void)
{
    static const char s[] = "@cmprof v=8 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!5T\n"
                            "%?\?=QBHu0000011??A=<B2??B=>i3??C!p4\n%?@=;O4??D!ZF\n@NB=Hu000001C=<B!QZ\n"
                            "@NB=<B!tv\n%?G=<B5??E!QX\n";
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    CHECK(d1.stats.bad_lines == 1 && d1.stats.names_waited_id == 1 && log_a.count[EV_TASK_NAME] == 6);
    CHECK(strstr(log_a.buf, "'u000001'") && strstr(log_a.buf, "'u000002'") && strstr(log_a.buf, "'u000100'") &&
          strstr(log_a.buf, "'u000050'") && strstr(log_a.buf, "a=0800000a t=ffffa004/1"));
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    decode_split(s, n, 1, &log_b, &d2);
    CHECK(all_equal && evlog_equal(&log_a, &log_b));
    decode("@cmprof v=8 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!5T\n%?@=;O4??D!ZF\n", &log_a, &d1);
    CHECK(d1.stats.bad_lines == 0 && d1.stats.names_waited_id == 1 && log_a.count[EV_TASK_NAME] == 0);
}

/* Version 9: a numbered name refers to the last name written out that ends in two digits (Rec3 in
 * between leaves u000001 the reference: u000002, where version 8 reads Rec4), in '=' entries (since
 * the page epoch began, as version 8's) and in an "@N" line's entries (D is u000002). Before any
 * announce a numbered name is read only against a name ending in two digits written last (both
 * versions' reference then): here it waits, never named Rec4. Version 8's lines still read as
 * version 8's. Whole and split anywhere. */
static void test_v9_numbered_across_other_names(void)
{
    static const char lines[] = "%?\?=QBHu0000011??A=QCERec32??B=<B3??C!sQ\n@NB=Hu000001C=ERec3D=<B!rT\n";
    static char s[512];
    snprintf(s, sizeof s, "@cmprof v=9 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!EE\n%s", lines);
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    CHECK(d1.stats.bad_lines == 0 && d1.stats.names_waited_id == 0 && log_a.count[EV_TASK_NAME] == 6);
    CHECK(strstr(log_a.buf, "'u000002'") && !strstr(log_a.buf, "'Rec4'"));
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    CHECK(all_equal);
    decode(lines, &log_a, &d1); /* no announce: the reference unsure, nothing named wrongly */
    CHECK(d1.stats.bad_lines == 0 && !strstr(log_a.buf, "'Rec4'") && !strstr(log_a.buf, "'u000002'") &&
          strstr(log_a.buf, "'u000001'") && strstr(log_a.buf, "'Rec3'"));
    snprintf(s, sizeof s, "@cmprof v=8 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!5T\n%s", lines);
    decode(s, &log_a, &d1); /* version 8: the entry written last */
    CHECK(d1.stats.bad_lines == 0 && strstr(log_a.buf, "'Rec4'") && !strstr(log_a.buf, "'u000002'"));
}

/* Version 9: an "@N" entry '.' is the index after the entry before's, under its own tag (a round
 * goes through the table in order: "+BR=" was 4 chars). Index 3 here is u000002 (numbered against
 * u000001, Rec3 between). A version 8 host read no '.': the line was malformed. */
static void test_v9_repeat_of_the_next_index(void)
{
    static const char s[] = "@cmprof v=9 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!EE\n"
                            "@NB=Hu000001.ERec3.<B!/d\n";
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    const char *three = strstr(log_a.buf, " t=ffffa003/");
    const char *end = three ? strchr(three, '\n') : NULL;
    CHECK(d1.stats.bad_lines == 0 && log_a.count[EV_TASK_NAME] == 3 && strstr(log_a.buf, " t=ffffa002/") && end &&
          end - three > 9 && memcmp(end - 9, "'u000002'", 9) == 0);
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    CHECK(all_equal);
    decode("@NB=Hu000001.ERec3!Ml\n@N.ERec3!jV\n", &log_a, &d1); /* no announce; '.' first in its line */
    CHECK(log_a.count[EV_TASK_NAME] == 2 && d1.stats.bad_lines == 1);
}

/* Version 8: a '=' entry may carry its index's last name first ("=" NUM B64 after its '=', the
 * new name with another number: ";O" is -50, u000100 before u000150): a host that had samples of
 * the index waiting for a name (it attached late) gives them that name, as an "@N" entry would,
 * and the new name takes the index after; without it those samples go to "(task unknown)". */
static void test_v8_retired_name_inside_an_entry(void)
{
    static const char with[] = "@cmprof v=8 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!5T\n"
                               "%?\?4??A!Rp\n%?@==;OQBHu0001504??D!RF\n";
    static const char without[] = "@cmprof v=8 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!5T\n"
                                  "%?\?4??A!Rp\n%?@=QBHu0001504??D!Il\n";
    struct text_decoder d1, d2;
    size_t n = strlen(with);
    decode_split(with, n, n, &log_a, &d1);
    CHECK(d1.stats.bad_lines == 0 && d1.stats.names_unknown == 0 && log_a.count[EV_TASK_NAME] == 2 &&
          strstr(log_a.buf, "'u000100'") && strstr(log_a.buf, "'u000150'") &&
          strstr(log_a.buf, "'u000100'") < strstr(log_a.buf, "'u000150'"));
    int all_equal = split_anywhere_as_whole(with, n, &d2);
    CHECK(all_equal);
    decode(without, &log_b, &d2);
    CHECK(d2.stats.bad_lines == 0 && d2.stats.names_unknown == 1 && !strstr(log_b.buf, "'u000100'"));
}

/* Version 7 (docs/stream.md): each sample line numbered (2 base64 chars); a PC in a page the host
 * has at its slot ('O' + slot, then '?' + the offset's 6 bits), 3 chars within 128 KB ('?' + the top
 * 4 bits), '.' and 4, '*' and 6; index chars outside the PC leads: '0'..'|' 0..36, '}' and one to
 * 100, '+' and two from 101; '-' and one char an exception below 64, '~' and two from 64; '/' no
 * slot. The page cache carries from line to line and starts afresh at numbers (2 chars, '?' + 6
 * bits) that are multiples of 8: a line after a missed one (number 3 after 1) is counted, not read, until then; a hit on a page
 * the line's fresh cache cannot have drops the line. A '=' entry has no index: it names the index of
 * the sample right after it. The same events whole, byte by byte and split
 * at every byte. Checks by scenarios/scen.py's stream_line_check. */
static void test_v7_paged_samples(void)
{
    static const char s[] =
        "boot\n@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!uj\n"
        "@task A 20000000 a!bq\n@task Z 20000400 b!s9\n"
        "%??0??@OAq@??OB-W.?O@?PD/*AgABAA~BAO?!4K\n"
        "%?@0OA!y8\n"
        "log %?@0OA 1\n"
        "%?B0OA!2c\n"
        "%?G0??@OA!/f\n"
        "$?H??@OA!Ek\n"
        "%?I=wFAgAAQAGsensorq??A0OC!+M\n"
        "%?G0OAOA!SS\n";
    struct text_decoder d1, d2;
    size_t n = strlen(s);
    decode_split(s, n, n, &log_a, &d1);
    CHECK(log_a.count[EV_PC] == 15 && d1.stats.bad_lines == 1 && d1.stats.bad_checks == 0 &&
          d1.stats.unread_paged == 1 && d1.stats.other_version_lines == 0 && d1.stats.unsent_tags == 1);
    /* the first line: a 3-char PC, a hit in its page, another page at the same slot, an exception's
     * '.' PC past 128 KB and its hit, no slot and a full PC, an exception from 64 on */
    const char *want[] = {"a=08000002 t=20000000/1", "a=08000004 t=20000000/1", "a=08002000 t=20000400/1",
                          "a=08002006 t=20000400/1", "a=08020080 t=fffffe16/1", "a=0802008a t=fffffe16/1",
                          "a=08002000 t=fffffe40/1", "a=08002004 t=20000000/1", "a=08000008 t=20000000/1"};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
        CHECK(strstr(log_a.buf, want[k]) != NULL);
    CHECK(strstr(log_a.buf, "a=20001000 ") != NULL && strstr(log_a.buf, "a=08000004 t=0/0") != NULL);
    /* the entry (no index: the sample after it has it) names index 25 before that sample */
    const char *def = strstr(log_a.buf, "'sensor'");
    CHECK(def && strstr(def, "a=08000004 t=20000400/1") && strstr(def, "a=08000008 t=20000000/1"));
    decode_split(s, n, 1, &log_b, &d2);
    CHECK(evlog_equal(&log_a, &log_b));
    int all_equal = split_anywhere_as_whole(s, n, &d2);
    CHECK(all_equal);
    /* a version 6 capture reads as before; its lines under a version 7 announce are named, not read */
    decode("@cmprof v=6 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!jz\n%0??@??A!w3\n"
           "@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!uj\n%0??@??A!w3\n",
           &log_a, &d1);
    CHECK(log_a.count[EV_PC] == 2 && strstr(log_a.buf, "a=08000004 ") && d1.stats.other_version_lines == 1 &&
          d1.stats.other_version == 6 && d1.stats.bad_lines == 0);
}

/* An editor's byte order mark before the first line is not the line's, however the feed splits it;
 * bytes that only begin a mark stay the line's. */
static void test_byte_order_mark_split_anywhere(void)
{
    static const char *const inputs[] = {"\xEF\xBB\xBF" "task 20000100 motor\nprof raw n=1\np 080002b4\ng 20000100\nend\n",
                                         "\xFF\xFE" "prof raw n=1\np 080002b4\nend\n",
                                         "\xEF\xBB" "boot\nprof raw n=1\np 080002b4\nend\n"};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        struct text_decoder d;
        decode(inputs[i], &log_a, &d);
        CHECK(log_a.count[EV_PC] == 1 && d.stats.bad_lines == 0);
        CHECK(split_anywhere_as_whole(inputs[i], strlen(inputs[i]), &d));
        decode_split(inputs[i], strlen(inputs[i]), 1, &log_b, &d); /* byte by byte */
        CHECK(evlog_equal(&log_a, &log_b));
    }
    struct text_decoder dd;
    decode(inputs[0], &log_a, &dd);
    CHECK(strstr(log_a.buf, "'motor'") != NULL);
    decode(inputs[2], &log_a, &dd);
    CHECK(log_a.count[EV_LOG] == 1 && strstr(log_a.buf, "boot") != NULL);
}

/* A run of "task" lines' names goes out before the next line's events, however the input is cut: a
 * 'p' line read whole in place (dump_lines) once left them held, after its PC (fuzz_text found it). */
static void test_task_names_before_a_pc_line_read_in_place(void)
{
    static const char s[] = "p 08\ng 00\ntask 00 0 \np 080004b2\n";
    struct text_decoder d1, d2;
    decode(s, &log_a, &d1);
    const char *name = strstr(log_a.buf, "'0'"), *pc = strstr(log_a.buf, "080004b2");
    CHECK(log_a.count[EV_TASK_NAME] == 1 && name && (!pc || name < pc));
    int all_equal = split_anywhere_as_whole(s, strlen(s), &d2);
    CHECK(all_equal);
}

int main(void)
{
    RUN_TEST(test_byte_order_mark_split_anywhere);
    RUN_TEST(test_raw_block);
    RUN_TEST(test_tags_pair_with_samples);
    RUN_TEST(test_dump_says_its_table_was_full);
    RUN_TEST(test_dump_reused_block_names_all);
    RUN_TEST(test_tag_count_mismatch_drops_tags_not_samples);
    RUN_TEST(test_hist_block);
    RUN_TEST(test_crlf_and_cr);
    RUN_TEST(test_malformed_lines_are_dropped_whole);
    RUN_TEST(test_capture_starting_mid_block);
    RUN_TEST(test_unterminated_last_line);
    RUN_TEST(test_sections);
    RUN_TEST(test_long_sections_and_target);
    RUN_TEST(test_stack_line);
    RUN_TEST(test_stack_evidence_line);
    RUN_TEST(test_stack_dropped_line);
    RUN_TEST(test_dump_stack_evidence);
    RUN_TEST(test_long_line);
    RUN_TEST(test_chunk_invariance);
    RUN_TEST(test_both_check_kinds_decode);
    RUN_TEST(test_single_bit_errors_are_caught);
    RUN_TEST(test_hex_words_fast_path_matches_strtoul);
    RUN_TEST(test_partial_first_line_of_a_live_source);
    RUN_TEST(test_partial_last_line_is_the_cut);
    RUN_TEST(test_attach_cut_and_pending_index);
    RUN_TEST(test_stream_tag_forms);
    RUN_TEST(test_eight_word_lines_match_the_general_parse);
    RUN_TEST(test_too_many_entries_in_a_sample_line);
    RUN_TEST(test_v3_pcs_before_and_after_the_announce);
    RUN_TEST(test_v6_name_entry_before_the_announce);
    RUN_TEST(test_v7_name_entry_before_the_announce);
    RUN_TEST(test_v7_repeat_with_the_index_tag);
    RUN_TEST(test_v7_front_coded_names);
    RUN_TEST(test_v8_numbered_names);
    RUN_TEST(test_v9_numbered_across_other_names);
    RUN_TEST(test_v9_repeat_of_the_next_index);
    RUN_TEST(test_v8_retired_name_inside_an_entry);
    RUN_TEST(test_dropped_line_leaves_no_old_name);
    RUN_TEST(test_v5_names_by_id);
    RUN_TEST(test_versions_and_announced_ranges);
    RUN_TEST(test_v6_compact_samples);
    RUN_TEST(test_v7_paged_samples);
    RUN_TEST(test_task_names_before_a_pc_line_read_in_place);
    free(log_a.buf);
    free(log_b.buf);
    return check_summary();
}
