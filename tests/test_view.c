/* The live view's logic, rendered into a buffer without a terminal. */
#include "../report/baseline.h"
#include "../tui/view.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char text[65536];
static struct prof *p;
static struct ingest *in;
static struct view v;
/* What the firmware announced and timed, as a test sets it: given to p before the view reads it. */
static struct prof_stream_info info;
static struct prof_section sect[PROF_SECTIONS];

static void sync_firmware(void)
{
    if (info.present) /* (else what a fed announce gave stays) */
        prof_set_stream_info(p, &info);
    for (uint32_t i = 0; i < PROF_SECTIONS; i++) {
        if (!sect[i].seen)
            continue;
        const struct prof_section *s = &sect[i];
        prof_section_name(p, i, s->name, strlen(s->name));
        prof_section_run(p, i, &(struct prof_run){s->current, s->count, s->min, s->max, s->sum, s->long_runs});
        for (uint32_t k = 0; k < PROF_SECTION_EVENTS; k++) {
            const struct prof_section_event *e = &s->ev[k];
            if (e->seen)
                prof_section_event(p, i, k, e->event, &(struct prof_run){e->current, 0, e->min, e->max, e->sum, 0});
        }
    }
}

static int key(int k)
{
    sync_firmware();
    return view_key(&v, k);
}

static void tick(void)
{
    sync_firmware();
    view_tick(&v);
}

static void check_budgets(void)
{
    sync_firmware();
    view_check_budgets(&v);
}

static const char *render(struct view *shown, int w, int h)
{
    static struct vbuf b;
    sync_firmware();
    vbuf_resize(&b, w, h);
    view_render(shown, &b);
    vbuf_text(&b, text, sizeof text);
    return text;
}

/* A text stream's ingest, or another format's, in front of p; the view over them. */
static void use_ingest(enum detect_format format)
{
    ingest_free(in);
    in = ingest_new(p, &(struct ingest_options){.format = format, .tpiu_id = 1});
    v.in = in;
}

static void feed(const char *bytes, size_t n)
{
    ingest_feed(in, (const uint8_t *)bytes, n);
}

static void setup(void)
{
    if (p) {
        view_free(&v);
        ingest_free(in);
        prof_free(p);
    }
    memset(&info, 0, sizeof info);
    memset(sect, 0, sizeof sect);
    p = prof_new(NULL);
    in = ingest_new(p, &(struct ingest_options){.format = DETECT_TEXT, .tpiu_id = 1});
    view_init(&v, p, NULL, in, NULL);
    v.st = (struct view_status){"capture.txt", "connected", "fw.elf", "", 12, 345, 0, 0, 0, "", VIEW_RATE_STREAM, false, ""};
    for (int i = 0; i < 700; i++)
        prof_add_pc(p, 0x08000100u, true, 0x20000100u);
    for (int i = 0; i < 300; i++)
        prof_add_pc(p, 0x08000200u, true, 0x20000200u);
    prof_add_pc(p, 0x08000300u, false, 0);
}

/* A narrow header names a device by its path after /dev/: a pty's base name alone read "2 115200 8N1". */
static void test_device_source_short(void)
{
    setup();
    v.st.source = "/dev/pts/2 115200 8N1";
    v.st.state = "reconnecting: /dev/pts/2: No such file or directory";
    const char *t = render(&v, 85, 24); /* the path whole does not fit, its short form does */
    CHECK(strstr(t, "cmprof-top  pts/2 115200 8N1  [reconnecting") != NULL);
}

/* A connected state's figures give way to the source's name, clause by clause: at 100 columns the
 * name of what is profiled went once "at most ... at once" joined the state. */
static void test_source_kept_beside_long_state(void)
{
    setup();
    v.st.source = "gdb:127.0.0.1:36055";
    v.st.state = "connected, 1714 halts/s, core halted 40.9 %, at most 4.60 ms at once";
    CHECK(strstr(render(&v, 100, 24), "cmprof-top  gdb:127.0.0.1:36055  [connected, 1714 halts/s, core halted 40.9 %]  fw.elf"));
    CHECK(strstr(render(&v, 200, 24), "gdb:127.0.0.1:36055  [connected, 1714 halts/s, core halted 40.9 %, at most 4.60 ms at once]"));
    CHECK(strstr(render(&v, 60, 24), "cmprof-top  gdb:127.0.0.1:36055  [connected, 1714 halts/s]"));
}

/* The state's figures give way only when that keeps the source's name in the header: with the build-id's
 * check (placed before the name) beside them, at no width from 20 to 300 columns does the header show
 * fewer of the state's clauses than fit beside "cmprof-top" while the name still does not show. */
static void test_state_cut_only_for_the_source(void)
{
    setup();
    info = (struct prof_stream_info){.present = true, .clock_hz = 64000000, .build_id = "0123456789abcdef"};
    v.st.source = "gdb:127.0.0.1:36055";
    v.st.state = "connected, 1714 halts/s, core halted 40.9 %, at most 4.60 ms at once";
    static const char *forms[] = {"[connected, 1714 halts/s, core halted 40.9 %, at most 4.60 ms at once]",
                                  "[connected, 1714 halts/s, core halted 40.9 %]", "[connected, 1714 halts/s]",
                                  "[connected]"};
    int bad = 0;
    for (int w = 20; w <= 300; w++) {
        const char *t = render(&v, w, 24);
        char head[400];
        snprintf(head, sizeof head, "%.*s", (int)strcspn(t, "\n"), t);
        const char *fits = NULL; /* the longest form that fits beside "cmprof-top  " */
        for (size_t k = 0; k < sizeof forms / sizeof forms[0] && !fits; k++)
            fits = (int)strlen(forms[k]) <= w - 12 ? forms[k] : NULL;
        if (fits && !strstr(head, "127.0.0.1:36055") && !strstr(head, fits) && !bad++)
            printf("     %d columns: '%s', where '%s' fits\n", w, head, fits);
    }
    info = (struct prof_stream_info){0};
    CHECK(bad == 0);
}

static void test_top_view(void)
{
    setup();
    const char *t = render(&v, 100, 24);
    CHECK(strstr(t, "cmprof-top  capture.txt  [connected]  fw.elf") != NULL);
    CHECK(strstr(t, "samples 1001  345/s  00:12") != NULL);
    CHECK(strstr(t, "69.93%") && strstr(t, "0x08000100"));
    CHECK(strstr(t, "? help") != NULL);
    /* the top row's bar: 69.93 % of 24 cells is 16 full cells and a partial one */
    CHECK(strstr(t, "\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588") != NULL);
    /* the legend, once, on the line above the key bar, whole at 80 columns */
    t = render(&v, 80, 24);
    const char *legend = strstr(t, "\u2588 share  \u2591 its 95 % interval  \u00b1% half its width  dim: may be noise\n");
    CHECK(legend && strstr(legend, "\n") && strstr(strstr(legend, "\n") + 1, "? help") == strstr(legend, "\n") + 2);
}

/* The key bar at any width: the keys that fit, whole, "? help" always among them. */
static void test_key_bar_fits(void)
{
    setup();
    int widths[] = {30, 40, 80, 100, 200}, ok = 1, more_when_wider = 1, prev = 0;
    for (int i = 0; i < 5; i++) {
        const char *t = render(&v, widths[i], 24);
        const char *bar = t;
        for (int line = 0; line < 23 && bar; line++) /* the last line */
            bar = strchr(bar, '\n') ? strchr(bar, '\n') + 1 : NULL;
        if (!bar) {
            ok = 0;
            continue;
        }
        int keys = 0;
        for (const char *k = bar; (k = strstr(k, "  ")) != NULL; k += 2)
            keys++;
        /* "? help" first, "q quit" last and whole: nothing cut at the edge */
        const char *end = strchr(bar, '\n') ? strchr(bar, '\n') : bar + strlen(bar);
        while (end > bar && end[-1] == ' ')
            end--;
        ok &= strncmp(bar, " ? help", 7) == 0 && end - bar >= 6 && strncmp(end - 6, "q quit", 6) == 0;
        more_when_wider &= keys >= prev;
        prev = keys;
    }
    CHECK(ok);
    CHECK(more_when_wider);
    const char *t = render(&v, 80, 24);
    CHECK(strstr(t, "Enter drill") && strstr(t, "g group") && strstr(t, "/ filter"));
}

static void test_ascii_fallback(void)
{
    setup();
    v.unicode = false; /* a terminal without UTF-8 */
    const char *t = render(&v, 100, 24);
    CHECK(strstr(t, "################") != NULL);
    int non_ascii = 0;
    for (const unsigned char *c = (const unsigned char *)t; *c; c++)
        non_ascii += *c >= 0x80;
    CHECK(non_ascii == 0);
    CHECK(strstr(t, "SHARE +95%") != NULL);
}

static void test_keys_group_filter_freeze(void)
{
    setup();
    CHECK(key('g') == VIEW_REDRAW);
    CHECK(strstr(render(&v, 100, 24), "by line") != NULL);
    key('g');
    key('g'); /* task */
    const char *t = render(&v, 100, 24);
    CHECK(strstr(t, "by task") && strstr(t, "0x20000100") && strstr(t, "(no tag)"));
    key('g'); /* back to function */
    key('/');
    key('2');
    key('0');
    key('0');
    key(VK_ENTER);
    t = render(&v, 100, 24);
    CHECK(strstr(t, "filter: 200") && strstr(t, "0x08000200") && !strstr(t, "0x08000100"));
    key('/');
    key(VK_ESC); /* clears the filter */
    key(' ');
    for (int i = 0; i < 5000; i++)
        prof_add_pc(p, 0x08000400u, false, 0);
    t = render(&v, 100, 24);
    CHECK(strstr(t, "FROZEN") && !strstr(t, "0x08000400"));
    key(' ');
    CHECK(strstr(render(&v, 100, 24), "0x08000400") != NULL);
    CHECK(key('q') == VIEW_QUIT);
}

static void test_reset_and_help(void)
{
    setup();
    key('r');
    CHECK(prof_total(p) == 0);
    CHECK(strstr(render(&v, 80, 24), "no data from the source yet") != NULL);
    key('?');
    /* at 80 columns the help wraps: every line fits, a key's text continues under itself */
    const char *t = render(&v, 80, 24);
    int widest = 0, cols = 0;
    for (const char *c = t; *c; c++) {
        cols = *c == '\n' ? 0 : cols + (((unsigned char)*c & 0xC0) != 0x80);
        widest = cols > widest ? cols : widest;
    }
    CHECK(widest <= 80 && strstr(t, "source lines; on a line, step\n               into the function inlined"));
    key(VK_END); /* scrolls to the last explanation */
    CHECK(strstr(render(&v, 80, 24), "reconnecting and why, or end of file") != NULL);
    key(VK_ESC);
    CHECK(strstr(render(&v, 80, 24), "no data from the source yet") != NULL);
}

/* Issue 7: an empty view says what it is still missing, never a bare "waiting". */
/* r starts the header's counters and clock over, as it does the counts; the nominal rate shows
 * once the firmware announced its clock and period. */
static void test_reset_counters_and_nominal_rate(void)
{
    setup();
    static const char bad_and_lost[] = "$AACAAACA!zz\n$AACAAACA!zz\n@lost 7!lA\n"; /* two bad checks; 7 lost */
    feed(bad_and_lost, strlen(bad_and_lost));
    v.st.elapsed = 125;
    const char *t = render(&v, 200, 24);
    CHECK(strstr(t, "bad 2  overflows 0  resyncs 0  lost 7") != NULL && strstr(t, "02:05") != NULL);
    use_ingest(DETECT_ITM); /* an ITM trace's overflow packets, and a bad one (a reserved header) */
    feed("\x70\x70\x70\x04", 4);
    t = render(&v, 200, 24);
    CHECK(strstr(t, "bad 1  overflows 3  resyncs 0  lost 0") != NULL);
    key('r');
    v.st.elapsed = 130;
    t = render(&v, 120, 24);
    CHECK(strstr(t, "bad 0  overflows 0  resyncs 0  lost 0") != NULL && strstr(t, "00:05") != NULL);
    info.present = true;
    info.clock_hz = info.timer_hz = 168000000;
    info.period = 16000;
    info.jitter = 4095;
    t = render(&v, 120, 24);
    CHECK(strstr(t, "nominal 9309/s") != NULL); /* 168 MHz / (16000 + 4095 / 2) */
    CHECK(strstr(t, "16000+0..4095 ticks ") && !strstr(t, "ticks of")); /* the timer counts the core's clock */
    info.clock_hz = 1000000000; /* a Cortex-R5's 1 GHz core, its timer at 1 MHz */
    info.timer_hz = 1000000;
    info.period = 20;
    info.jitter = 15;
    t = render(&v, 160, 24);
    CHECK(strstr(t, "clk 1000.0 MHz") && strstr(t, "period 20+0..15 ticks of 1 MHz") &&
          strstr(t, "nominal 36364/s")); /* 1 MHz / 27.5: the figures add up */
    CHECK(strstr(t, "(N/s received, nominal in target time)")); /* 345/s received, over 5 s: apart */
    info.period = 2873; /* 1 MHz / (2873 + 7.5): 347/s, as received */
    CHECK(!strstr(render(&v, 160, 24), "nominal in target time"));
    info.present = false;
}

/* The filter prompt at the bottom while typing; Esc in the list clears a kept filter; names sort
 * as people read them (case ignored, leading underscores too). */
static void test_filter_prompt_and_name_sort(void)
{
    setup();
    key('/');
    key('2');
    const char *t = render(&v, 100, 24);
    const char *last = strrchr(t, '\n');
    while (last > t && last[-1] != '\n')
        last--;
    CHECK(last && strncmp(last, "/2_", 3) == 0);
    key(VK_ENTER);
    CHECK(strstr(render(&v, 100, 24), "filter: 2 (Esc clears)") != NULL);
    key(VK_ESC);
    t = render(&v, 100, 24);
    CHECK(!strstr(t, "filter:") && strstr(t, "0x08000100") && strstr(t, "0x08000200"));
    prof_task_name(p, 0x20000100u, "Motor", 5);
    prof_task_name(p, 0x20000200u, "_idle", 5);
    for (int i = 0; i < 10; i++)
        prof_add_pc(p, 0x08000500u, true, 0x20000300u);
    prof_task_name(p, 0x20000300u, "link", 4);
    key('g');
    key('g');
    key('g'); /* task */
    key('s'); /* by name */
    t = render(&v, 100, 24);
    const char *idle = strstr(t, " _idle"), *link = strstr(t, " link"), *motor = strstr(t, " Motor");
    CHECK(idle && link && motor && idle < link && link < motor);
}

/* --diff in the live view: the baseline's share and the change, '*' when significant. */
static void test_diff_columns(void)
{
    setup();
    struct baseline_row rows[] = {{"0x08000100", 500, 0}, {"0x08000200", 500, 0}}; /* sorted by name */
    struct baseline base = {.group = "function", .total = 1000, .rows = rows, .n = 2};
    v.base = &base;
    const char *t = render(&v, 120, 24);
    CHECK(strstr(t, "BASE%") && strstr(t, "CHANGE"));
    CHECK(strstr(t, "50.00%  +19.93*") != NULL); /* 69.93 % now against 50 % */
    CHECK(strstr(t, "50.00%  -20.03*") != NULL);
    key('g'); /* by line: the baseline's rows are functions, so no column compares with them */
    t = render(&v, 120, 24);
    CHECK(!strstr(t, "BASE%") && !strstr(t, "CHANGE") && !strstr(t, "+19.93"));
    key('g');
    key('g');
    key('g'); /* back to functions */
    CHECK(strstr(render(&v, 120, 24), "BASE%") != NULL);
    v.base = NULL;
}

/* Key o asks for a format at the bottom and hands the save to the caller (the view does no I/O). */
static void test_snapshot_key(void)
{
    setup();
    CHECK(key('o') == VIEW_REDRAW && v.saving);
    const char *t = render(&v, 100, 24); /* (its one line is 115 wide: the formats wrap, none is cut) */
    CHECK(strstr(t, "save a snapshot as") && strstr(t, " t table  c CSV") && strstr(t, "e trace") && strstr(t, "Esc"));
    CHECK(key('j') == (VIEW_SAVE | VIEW_REDRAW) && v.save_format == 'j' && !v.saving);
    key('o');
    CHECK(key(VK_ESC) == VIEW_REDRAW && strstr(render(&v, 100, 24), "snapshot cancelled") != NULL);
    key('k'); /* any key clears the note */
    CHECK(strstr(render(&v, 100, 24), "snapshot cancelled") == NULL);
    for (const char *k = "pkle"; *k; k++) { /* other tools' formats: pprof, callgrind, lcov, trace */
        key('o');
        CHECK(strstr(render(&v, 160, 24), "p pprof  k callgrind  l lcov  e trace") != NULL);
        CHECK(key(*k) == (VIEW_SAVE | VIEW_REDRAW) && v.save_format == *k && !v.saving);
    }
}

/* ? explains every header counter; at 80x24 the help scrolls to them, and the selection under it
 * comes back. */
static void test_help_explains_the_header(void)
{
    setup();
    key(VK_DOWN);
    key('?');
    const char *t = render(&v, 80, 24);
    CHECK(strstr(t, "Keys") && !strstr(t, "overflows    ITM overflow"));
    /* (t's lines, the note on "(inlined)" and the term "sections' clock" on a line of its own take 6 more) */
    for (int i = 0; i < 46; i++)
        key(VK_DOWN);
    t = render(&v, 80, 24);
    const char *counters[] = {"samples      PC", "bad          lines", "overflows    ITM", "resyncs      ITM",
                              "lost         samples", "overhead     share", "nominal N/s"};
    int all = 1;
    for (size_t i = 0; i < sizeof counters / sizeof *counters; i++)
        all &= strstr(t, counters[i]) != NULL;
    CHECK(all);
    key(VK_ESC);
    CHECK(v.mode == VM_TOP && v.sel == 1);
}

/* Rows named by long paths (a build tree's "../../.." files) keep their own history: names over
 * 95 characters, alike in their first 120, once found no history at all. */
static void test_history_of_long_names(void)
{
    char a[200], b[200];
    memset(a, 'd', 150);
    memcpy(b, a, 150);
    memcpy(a + 150, "/a.c", 5);
    memcpy(b + 150, "/b.c", 5);
    struct history *h = calloc(1, sizeof *h);
    double total = 0;
    for (int t = 0; t < 4; t++) { /* a takes every sample, b none */
        total += 100;
        struct prof_row rows[2] = {{.name = a, .samples = total}, {.name = b, .samples = 0}};
        history_tick(h, rows, 2, total, 0, false);
    }
    float pa[2], pb[2];
    CHECK(history_of(h, a, pa, 2, 2) == 2 && pa[0] > 0.99f && pa[1] > 0.99f);
    CHECK(history_of(h, b, pb, 2, 2) == 2 && pb[0] < 0.01f && pb[1] < 0.01f);
    free(h);
}

/* A history's memory is what its seconds hold: the live view keeps one for each grouping, and a
 * tick of 64 rows once touched every page of each (the shares of a row lay together, 300 seconds
 * apart from the next row's). Counted on fresh pages (mincore): a few ticks touch a few pages. A row
 * that takes a free place reads 0 for the seconds before it, as before. */
static void test_history_pages(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (sizeof(struct history) + page - 1) / page * page;
    struct history *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(h != MAP_FAILED);
    if (h == MAP_FAILED)
        return;
    static char names[HISTORY_ROWS + 1][16];
    struct prof_row rows[HISTORY_ROWS + 1];
    double total = 0;
    for (int t = 0; t < 4; t++) {
        total += 1000;
        for (int i = 0; i < HISTORY_ROWS; i++) {
            snprintf(names[i], sizeof names[i], "f%d", i);
            rows[i] = (struct prof_row){.name = names[i], .samples = total * (i == 0 ? 0.5 : 0.5 / (HISTORY_ROWS - 1))};
        }
        history_tick(h, rows, HISTORY_ROWS, total, 0, false);
    }
    unsigned char resident[64];
    size_t pages = size / page, touched = 0;
    CHECK(pages <= sizeof resident && mincore(h, size, resident) == 0);
    for (size_t i = 0; i < pages && i < sizeof resident; i++)
        touched += resident[i] & 1;
    CHECK(pages > 10 && touched <= 4);
    /* f64 replaces f63 (no longer among the top): 0 for the 3 seconds before it, then its share */
    total += 1000;
    snprintf(names[HISTORY_ROWS], sizeof names[HISTORY_ROWS], "f%d", HISTORY_ROWS);
    rows[HISTORY_ROWS - 1] = (struct prof_row){.name = names[HISTORY_ROWS], .samples = 0};
    history_tick(h, rows, HISTORY_ROWS, total, 0, false);
    total += 1000;
    rows[HISTORY_ROWS - 1].samples = 250;
    history_tick(h, rows, HISTORY_ROWS, total, 0, false);
    float pts[6];
    CHECK(history_of(h, names[HISTORY_ROWS], pts, 6, 6) == 6 && pts[0] < 0 && pts[1] == 0 && pts[2] == 0 &&
          pts[3] == 0 && pts[4] == 0 && fabsf(pts[5] - 0.25f) < 1e-6f);
    munmap(h, size);
}

/* Sparklines: each top row's share second by second, the last minute, on wide terminals. */
static void test_sparklines(void)
{
    setup();
    tick(); /* the first tick only sets the baseline */
    for (int t = 0; t < 30; t++) { /* 0x08000100 takes all of the first 15 s, none of the last 15 */
        for (int i = 0; i < 100; i++)
            prof_add_pc(p, t < 15 ? 0x08000100u : 0x08000200u, true, t < 15 ? 0x20000100u : 0x20000200u);
        tick();
    }
    CHECK(v.history.len == 30);
    float pts[4];
    /* four stretches of 15 s: the first two before the history began, then 0x08000100's 15 s, then
     * 0x08000200's */
    CHECK(history_of(&v.history, "0x08000100", pts, 4, 60) == 4 && pts[0] < 0 && pts[1] < 0 && pts[2] > 0.99f &&
          pts[3] < 0.01f);
    CHECK(history_of(&v.history, "0x08000200", pts, 4, 60) == 4 && pts[2] < 0.01f && pts[3] > 0.99f);
    const char *t = render(&v, 140, 24);
    CHECK(strstr(t, "LAST 60 s") != NULL);
    const char *row = strstr(t, "0x08000100");
    while (row && row > t && row[-1] != '\n')
        row--;
    CHECK(row && strstr(row, "\u2588") && strstr(row, "\u2588") < strstr(row, "0x08000100"));
    CHECK(strstr(render(&v, 100, 24), "LAST 60 s") == NULL); /* not at 100 columns */
    key('r');
    tick(); /* counts reset: the history starts over */
    CHECK(v.history.len == 0);
}

/* Lines the firmware might send: its application's log lines, and stream samples (8 to a line). */
static void log_lines(int n)
{
    for (int i = 0; i < n; i++)
        feed("boot: motor ready\n", 18);
}

static void sample_lines(int n)
{
    static const char line[] = "$AACAAACAAACAAACAAACAAACAAACAAADA!0v\n";
    for (int i = 0; i < n; i++)
        feed(line, strlen(line));
}

static void test_empty_view_explains(void)
{
    setup();
    key('r');
    CHECK(strstr(render(&v, 100, 24), "no data from the source yet") != NULL);
    log_lines(12);
    CHECK(strstr(render(&v, 100, 24), "12 log lines and no samples so far: is the sampler started") != NULL);
    sample_lines(80); /* no announce before them */
    const char *t = render(&v, 100, 24);
    CHECK(strstr(t, "no announce yet: clock, period and code base unknown, 640 stream samples wait") != NULL);
    CHECK(strstr(t, "no announce yet: clock and period unknown") != NULL); /* and in the header */
}

/* Connected a while with log lines only, nothing, or an announce only: the view names what starves
 * a drain (its priority, an idle task that never runs) or keeps the sampler off; not before. */
static void test_starved_drain_explained(void)
{
    setup();
    key('r');
    log_lines(12);
    CHECK(strstr(render(&v, 250, 30), "12 s connected: 12 log lines only, no announce yet") != NULL);
    CHECK(strstr(text, "CONFIG_CMPROF_DRAIN_PRIORITY") != NULL && strstr(text, "idle task that never runs") != NULL);
    v.st.elapsed = 1;
    CHECK(strstr(render(&v, 250, 30), "12 log lines and no samples so far") != NULL &&
          strstr(text, "likely causes") == NULL);
    v.st.elapsed = 5;
    use_ingest(DETECT_TEXT); /* nothing came yet */
    CHECK(strstr(render(&v, 250, 30), "5 s connected: nothing from the firmware") != NULL);
    static const char announce[] = "@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000!4y\n";
    feed(announce, strlen(announce));
    CHECK(strstr(render(&v, 250, 30), "5 s connected: the firmware's announce and no sample line; likely causes") !=
          NULL);
    v.st.state = "end of file";
    CHECK(strstr(render(&v, 250, 30), "likely causes") == NULL);
}

/* A file has no sample rate: while it is read the header says how fast the host reads it, once read
 * nothing (it said "345/s", as if the firmware sampled that fast). */
static void test_file_has_no_rate(void)
{
    setup();
    CHECK(strstr(render(&v, 120, 24), "samples 1001  345/s  00:12") != NULL); /* a stream: its rate */
    v.st.rate_of = VIEW_RATE_FILE_READING;
    CHECK(strstr(render(&v, 120, 24), "samples 1001  reading 345 samples/s  00:12") != NULL);
    v.st.rate_of = VIEW_RATE_FILE_READ;
    v.st.state = "end of file";
    CHECK(strstr(render(&v, 120, 24), "samples 1001  00:12") != NULL && strstr(text, "/s") == NULL);
    key('w'); /* the last seconds of a file are of its reading: said, not counted (it showed "no samples in the
               * last window yet" for ever) */
    CHECK(!v.window_mode && strstr(render(&v, 120, 24), "w counts a stream's last seconds: a file has no time"));
    key('G'); /* nor a history over time (it drew an empty axis, "0.0%", over "last 1 min") */
    CHECK(strstr(render(&v, 120, 24), "a file has no time: the history is a live stream's") && !strstr(text, "0.0%"));
    key('G');
    sect[0] = (struct prof_section){.name = "control", .seen = true, .count = 1200, .current = 300, .min = 100,
                                    .max = 900, .sum = 240000};
    key('t'); /* the sections' runs a second, as wide as there is room for: none from a file either */
    CHECK(strstr(render(&v, 140, 24), "RATE/s") && strstr(text, "control               1200         -") != NULL);
    v.st.rate_of = VIEW_RATE_STREAM;
    CHECK(strstr(render(&v, 140, 24), "control               1200     100.0") != NULL); /* 1200 in 12 s */
}

/* Cortex-A/R: a section's PMU events show on a line of their own, with IPC from instructions. */
static void test_section_events_and_ipc(void)
{
    setup();
    info.present = true;
    info.clock_hz = 100000000u;
    sect[2] = (struct prof_section){.name = "filter", .seen = true, .count = 4, .current = 1000, .min = 1000,
                                            .max = 1000, .sum = 4000};
    sect[2].ev[0] = (struct prof_section_event){true, 0x08, 500, 500, 500, 2000};
    sect[2].ev[1] = (struct prof_section_event){true, 0x42, 3, 1, 5, 12};
    key('t');
    const char *t = render(&v, 80, 24);
    CHECK(strstr(t, "filter") && strstr(t, "instructions 500/run (500..500)") && strstr(t, "event 0x42 3/run") &&
          strstr(t, "IPC 0.50"));
}

/* The section view's last minute: each second's mean run time as a sparkline, at wide sizes. */
static void test_section_time_sparkline(void)
{
    setup();
    info.present = true;
    info.clock_hz = 100000000u;
    sect[0] = (struct prof_section){.name = "control", .seen = true};
    for (int sec = 0; sec < 12; sec++) { /* 10 runs a second, slower and slower */
        sect[0].count += 10;
        sect[0].sum += 10u * (100u + 50u * (uint64_t)sec);
        tick();
    }
    key('t');
    const char *t = render(&v, 140, 24);
    CHECK(strstr(t, "LAST 60 s (mean)") != NULL);
    const char *row = strstr(t, "control");
    /* 11 seconds of runs, three to a cell: rising to the newest, the peak */
    CHECK(row && strstr(row, "\u2583\u2584\u2586\u2588"));
    t = render(&v, 80, 24);
    CHECK(strstr(t, "LAST 60 s") == NULL); /* narrow: the column goes first */
}

/* Key G: the selected row's history as a chart under the table, at 80x24 as at 200x60; the same
 * for the selected section's mean run time. */
static void test_graph_pane(void)
{
    setup();
    tick();
    for (int t = 0; t < 90; t++) { /* 0x08000100 takes all of the first 45 s, none of the last 45 */
        for (int i = 0; i < 100; i++)
            prof_add_pc(p, t < 45 ? 0x08000100u : 0x08000200u, true, t < 45 ? 0x20000100u : 0x20000200u);
        tick();
    }
    CHECK(strstr(render(&v, 80, 24), "HISTORY") == NULL);
    key('G');
    static const int sizes[][2] = {{80, 24}, {200, 60}};
    for (int k = 0; k < 2; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        const char *t = render(&v, w, h);
        /* 90 s recorded: the two-minute scale, 0x08000100 (selected, most samples) at 100 % then 0 */
        const char *title = strstr(t, "HISTORY  0x08000100  share per 1"); /* 1.7 s a column at 80, 1 s at 200 */
        CHECK(title && strncmp(strchr(title, ',') ? strchr(title, ',') : "", ", last 2 min, peak 100.0 %", 26) == 0);
        const char *top = title ? strchr(title, '\n') + 1 : NULL; /* the chart's top row */
        const char *end = top ? strchr(top, '\n') : NULL;
        CHECK(top && strncmp(top, "   100.0%", 9) == 0 && end);
        if (top && end) {
            /* full cells, then the last 45 s blank: the row (its trailing blanks dropped) ends well
             * before the right edge */
            const char *full = strstr(top, "\u2588");
            int cols = 0;
            for (const char *c = top; c < end; c++)
                cols += ((unsigned char)*c & 0xC0) != 0x80;
            CHECK(full && full < end && cols < w - 20 && cols > w / 2);
        }
        CHECK(strstr(t, "-2min") && strstr(t, "-1min") && strstr(t, "now"));
        /* the table and the key bar stay (G itself is among the first keys to go when narrow) */
        CHECK(strstr(t, "0x08000200") && strstr(t, "? help") && (w < 200 || strstr(t, "G graph")));
        int lines = 0;
        for (const char *c = t; *c; c++)
            lines += *c == '\n';
        CHECK(lines <= h);
    }
    key('G');
    CHECK(strstr(render(&v, 80, 24), "HISTORY") == NULL);
    /* sections: the selected one's mean time, second by second */
    setup();
    info.present = true;
    info.clock_hz = 100000000u;
    sect[0] = (struct prof_section){.name = "control", .seen = true};
    for (int sec = 0; sec < 12; sec++) {
        sect[0].count += 10;
        sect[0].sum += 10u * (100u + 50u * (uint64_t)sec);
        tick();
    }
    key('t');
    key('G');
    const char *t = render(&v, 80, 24);
    CHECK(strstr(t, "HISTORY  control  mean time per 1 s, last 1 min, peak 6.5 \u00b5s") != NULL);
    CHECK(strstr(t, "6.5\u00b5s") != NULL);
}

static void test_sections_and_budget(void)
{
    setup();
    info.present = true;
    info.clock_hz = 100000000u; /* 100 ticks = 1 us */
    sect[0] = (struct prof_section){.name = "control", .seen = true, .count = 10, .current = 300, .min = 100,
                                            .max = 900, .sum = 2000};
    CHECK(view_add_budget(&v, "control=5") == 0);
    CHECK(view_add_budget(&v, "oops") == -1);
    check_budgets();
    key('t');
    const char *t = render(&v, 140, 24);
    /* microseconds first: current 3, min 1, max 9, mean 2 */
    CHECK(strstr(t, "CUR \u00b5s") && strstr(t, "control") && strstr(t, "3.00") && strstr(t, "9.00") &&
          strstr(t, "> 5.0 \u00b5s"));
    /* the current run is under budget, but the maximum (9 us) was a run over it: counted */
    CHECK(v.budget_violations[0] == 1);
    sect[0].count = 11;
    sect[0].current = 800; /* 8 us */
    check_budgets();
    CHECK(v.budget_violations[0] == 2);
    sect[0].count = 15; /* four runs, the slowest 12 us: one more known over budget */
    sect[0].current = 200;
    sect[0].max = 1200;
    check_budgets();
    CHECK(v.budget_violations[0] == 3);
    sect[0].count = 20; /* five runs, all over: even the minimum is 6 us */
    sect[0].min = 600;
    sect[0].current = 700;
    check_budgets();
    CHECK(v.budget_violations[0] == 8);
    key('u'); /* timer ticks */
    CHECK(strstr(render(&v, 140, 24), "CUR ticks") != NULL);
    key('u');
    sect[0].min = 100;
    key('r'); /* in the section view: reset the sections, not the profile */
    CHECK(prof_total(p) > 0 && v.budget_violations[0] == 0);
    sect[0].count = 22;
    sect[0].sum = 2000 + 400 + 500;
    sect[0].current = 250;
    check_budgets();
    t = render(&v, 140, 24);
    CHECK(strstr(t, "control                  2") != NULL); /* two runs since the reset */
    CHECK(strstr(t, "2.50") != NULL);                      /* min and max: the one report seen */
    CHECK(strstr(t, "since r") != NULL);                   /* and the view says so */
}

static void test_tiny_terminal_and_log(void)
{
    setup();
    CHECK(strstr(render(&v, 10, 5), "too small") != NULL);
    /* what it needs, the way out and the count, as far as the width goes (it said "too small" alone) */
    CHECK(strstr(render(&v, 19, 5), "too small: 20x8 min") && strstr(text, "q quits") &&
          strstr(text, "samples 1001"));
    view_log(&v, "boot v1.2", 9);
    key('l');
    CHECK(strstr(render(&v, 80, 24), "boot v1.2") != NULL);
    for (int i = 0; i < 500; i++)
        view_log(&v, "line", 4); /* the log keeps the newest VIEW_LOG_LINES */
    CHECK(v.log_n == VIEW_LOG_LINES);
}

static void test_diagnostics_banner(void)
{
    setup();
    prof_reset(p);
    for (int i = 0; i < 300; i++)
        prof_add_pc(p, 0, false, 0);
    const char *t = render(&v, 120, 24);
    CHECK(strstr(t, "! wrong stack in the prologue") != NULL);
    key('d');
    CHECK(strstr(render(&v, 120, 24), "diagnostics") != NULL);
}

/* Issue 35, 16: Enter in the call screen follows the selected row, a caller as well as a callee
 * (each list is read afresh: the callers' rows are not the callees' buffer). */
static void test_calls_enter_follows_selection(void)
{
    setup();
    uint32_t callers[] = {0x08000100u, 0x08000200u}; /* B called by X, X by A */
    for (int i = 0; i < 10; i++) {
        prof_add_pc(p, 0x08000300u, false, 0);
        prof_add_stack(p, 0x08000300u, callers, 2, false, 0);
    }
    snprintf(v.calls_func, sizeof v.calls_func, "0x08000100");
    v.mode = VM_CALLS;
    const char *t = render(&v, 100, 24);
    CHECK(strstr(t, "called by") && strstr(t, "0x08000200") && strstr(t, "0x08000300"));
    key(VK_ENTER); /* row 0: the caller */
    CHECK(strcmp(v.calls_func, "0x08000200") == 0);
    snprintf(v.calls_func, sizeof v.calls_func, "0x08000100");
    key(VK_DOWN); /* row 1: the callee */
    key(VK_ENTER);
    CHECK(strcmp(v.calls_func, "0x08000300") == 0);
}

/* The first address of a function in an ELF, by looking its code over. */
static uint32_t address_of(struct sym_table *syms, const char *function)
{
    uint32_t lo, hi;
    for (uint32_t a = sym_code_span(syms, &lo, &hi) ? lo : 1; a < hi; a += 2) {
        const struct sym_location *l = sym_lookup(syms, a);
        if (l->known && strcmp(sym_frame_at(l, 0)->function, function) == 0)
            return a;
    }
    return 0;
}

/* Issue 35, 17: under w the window is what every part counts: the header, the list and the
 * drill-down (not the cumulative counts under a "last 5 s" header). */
static void test_window_everywhere(void)
{
    char err[300];
    struct sym_table *syms = sym_open("build/scenarios/stream/fw.elf", err, sizeof err);
    CHECK(syms != NULL); /* the stream scenario's firmware (make scenarios) */
    if (!syms)
        return;
    uint32_t a = address_of(syms, "hot_a"), b = address_of(syms, "hot_b");
    CHECK(a && b);
    struct prof *all = prof_new(syms), *win = prof_new(syms);
    struct view w;
    view_init(&w, all, win, in, syms);
    w.st = v.st;
    for (int i = 0; i < 700; i++)
        prof_add_pc(all, i < 400 ? a : b, false, 0);
    for (int i = 0; i < 50; i++)
        prof_add_pc(win, i < 40 ? a : b, false, 0);
    view_key(&w, 'w');
    const char *t = render(&w, 100, 24);
    CHECK(strstr(t, "last 5 s") && strstr(t, "samples 50 ") && !strstr(t, "samples 700"));
    CHECK(strstr(t, "80.00%") != NULL); /* 40 of the window's 50 */
    view_key(&w, VK_ENTER); /* the drill-down into hot_a: its window samples */
    t = render(&w, 100, 24);
    CHECK(w.mode == VM_SOURCE && strstr(t, "hot_a   40 samples, 80.00%") && strstr(t, "samples 50 "));
    view_key(&w, 'w'); /* back to the cumulative counts, everywhere */
    t = render(&w, 100, 24);
    CHECK(strstr(t, "hot_a   400 samples, 57.14%") && strstr(t, "samples 700 "));
    view_free(&w);
    prof_free(all);
    prof_free(win);
    sym_close(syms);
}

/* Issue 35, 15: GCC's clone names, split into the source name and the kinds of copy. */
static void test_clone_names(void)
{
    static const struct {
        const char *name;
        size_t base;
        const char *kinds;
    } cases[] = {{"crc32.constprop.0", 5, "constprop"}, {"f.isra.0", 1, "isra"}, {"check.part.0.cold", 5, "part, cold"},
                 {"main.cold", 4, "cold"}, {"g.constprop.0.isra.0", 1, "constprop, isra"}, {"crc32", 0, ""},
                 {"foo.bar", 0, ""}, {"x.constprop.0.extra", 0, ""}, {".constprop.0", 0, ""}, {"h.partial", 0, ""}};
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned kinds;
        char label[64];
        size_t base = sym_clone_split(cases[i].name, &kinds);
        ok &= base == cases[i].base && strcmp(sym_clone_text(kinds, label, sizeof label), cases[i].kinds) == 0;
        if (base != cases[i].base)
            printf("  %s: %zu\n", cases[i].name, base);
    }
    CHECK(ok);
}

/* The header's rows split into their fields (two spaces apart), trimmed. */
static int header_fields(const char *t, char fields[][200], int max)
{
    int n = 0;
    const char *line = t;
    for (int row = 0; row < 3 && line; row++) {
        const char *end = strchr(line, '\n');
        for (const char *at = line; at < end && n < max;) {
            while (at < end && *at == ' ')
                at++;
            const char *q = at;
            while (q < end && !(q[0] == ' ' && q[1] == ' '))
                q++;
            if (q > at)
                snprintf(fields[n++], 200, "%.*s", (int)(q - at), at);
            at = q;
        }
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* Issue 35, 21 and 23: at any width the header shows whole fields only (never "nominal 1367" for
 * 13672/s), and says when the sections are timed on another clock than the sampling one. */
static void test_header_whole_fields(void)
{
    setup();
    info.present = true;
    info.clock_hz = info.timer_hz = 25000000;
    info.section_hz = 1000000;
    info.period = 42;
    info.jitter = 63;
    snprintf(info.arch, sizeof info.arch, "ARMv7E-M");
    snprintf(info.timer, sizeof info.timer, "SysTick");
    key('i');
    key('w');
    static char wide[40][200], narrow[40][200];
    int nw = header_fields(render(&v, 200, 60), wide, 40);
    int all = 1, more = 1;
    for (int i = 0; i < nw; i++)
        all &= strstr(text, wide[i]) != NULL;
    CHECK(strstr(text, "nominal 340136/s") && strstr(text, "sections' clock 1.000 MHz") && strstr(text, "clk 25.0 MHz"));
    static const int sizes[][2] = {{80, 24}, {50, 12}};
    for (int k = 0; k < 2; k++) {
        int nn = header_fields(render(&v, sizes[k][0], sizes[k][1]), narrow, 40);
        for (int i = 0; i < nn; i++) { /* each field as it is at 200 columns: none cut */
            int found = 0;
            for (int j = 0; j < nw && !found; j++)
                found = strcmp(narrow[i], wide[j]) == 0;
            if (!found)
                printf("  %dx%d: cut field '%s'\n", sizes[k][0], sizes[k][1], narrow[i]);
            all &= found;
        }
        more &= nn < nw && nn >= 4;
    }
    CHECK(all && more);
    sect[0] = (struct prof_section){.name = "control", .seen = true, .count = 10, .current = 300, .min = 100,
                                            .max = 900, .sum = 2000};
    key('t'); /* the section view's clock line says which clock is which too */
    CHECK(strstr(render(&v, 140, 24), "clock 1.000 MHz (announced), not the header's clk 25.0 MHz (the core's)") != NULL);
    memset(&sect[0], 0, sizeof sect[0]);
    memset(&info, 0, sizeof info);
}

/* Issue 35, 23: < and > cycle the sort column (share, ±%, name; with --diff base% and change). */
static void test_sort_any_column(void)
{
    setup();
    for (int i = 0; i < 3; i++)
        prof_add_pc(p, 0x08000400u, false, 0); /* few samples: the narrowest interval */
    const char *t = render(&v, 100, 24);
    CHECK(strstr(t, "sort share") && strstr(t, "0x08000100") < strstr(t, "0x08000200"));
    key('>');
    t = render(&v, 100, 24);
    /* the widest interval first: 0x08000100 (70 %) and 0x08000200 (30 %) around 2.8 %, 0x08000400 0.3 % */
    const char *a = strstr(t, "0x08000100"), *c = strstr(t, "0x08000400");
    CHECK(strstr(t, "sort \u00b1%") && a && c && a < c && strstr(t, "0x08000300") > c);
    key('>');
    CHECK(strstr(render(&v, 100, 24), "sort name") != NULL);
    key('>');
    CHECK(strstr(render(&v, 100, 24), "sort share") != NULL); /* round again */
    key('<');
    CHECK(strstr(render(&v, 100, 24), "sort name") != NULL);
    struct baseline_row rows[] = {{"0x08000100", 100, 0}, {"0x08000200", 800, 0}, {"0x08000300", 100, 0}};
    struct baseline base = {.group = "function", .total = 1000, .rows = rows, .n = 3};
    v.base = &base;
    key('>'); /* name -> base% */
    t = render(&v, 120, 24);
    CHECK(strstr(t, "sort base%") && strstr(t, "0x08000200") < strstr(t, "0x08000100"));
    key('>'); /* change: 0x08000100 grew the most */
    t = render(&v, 120, 24);
    CHECK(strstr(t, "sort change") && strstr(t, "0x08000100") < strstr(t, "0x08000300") &&
          strstr(t, "0x08000300") < strstr(t, "0x08000200"));
    v.base = NULL;
}

/* The title line of the top list: the line that holds "NAME". */
static const char *title_line(const char *t, char *line, size_t len)
{
    const char *n = strstr(t, "NAME");
    const char *start = n;
    while (start && start > t && start[-1] != '\n')
        start--;
    const char *end = n ? strchr(n, '\n') : NULL;
    snprintf(line, len, "%.*s", n && end ? (int)(end - start) : 0, n ? start : "");
    return line;
}

/* As htop: the sorted column's title carries the arrow, I reverses, F6 picks from a list at the
 * bottom, F10 quits, and a key that does nothing says where help is. */
static void test_sort_marked_reversed_and_picked(void)
{
    setup();
    char line[512];
    const char *t = render(&v, 100, 24);
    CHECK(strstr(title_line(t, line, sizeof line), "\u25bc%") && !strstr(line, "NAME \u25b2"));
    key('I'); /* smallest share first */
    t = render(&v, 100, 24);
    CHECK(strstr(title_line(t, line, sizeof line), "\u25b2%") && strstr(t, "sort share (reversed)") &&
          strstr(t, "0x08000300") < strstr(t, "0x08000200") && strstr(t, "0x08000200") < strstr(t, "0x08000100"));
    key('I');
    key('s'); /* by name: A to Z, the arrow on NAME */
    t = render(&v, 100, 24);
    CHECK(strstr(title_line(t, line, sizeof line), "NAME \u25b2") && !strstr(line, "\u25bc%"));
    key('I'); /* Z to A */
    t = render(&v, 100, 24);
    CHECK(strstr(title_line(t, line, sizeof line), "NAME \u25bc") &&
          strstr(t, "0x08000300") < strstr(t, "0x08000100"));
    key('I');
    key(VK_F6); /* the list, the current order in brackets */
    t = render(&v, 100, 24);
    CHECK(strstr(t, "sort by:") && strstr(t, "[name]") && strstr(t, "% share"));
    key(VK_LEFT); /* name -> interval */
    t = render(&v, 100, 24);
    CHECK(strstr(t, "[\u00b1% interval]") && strstr(t, "sort name")); /* not applied before Enter */
    key(VK_ENTER);
    t = render(&v, 100, 24);
    CHECK(!strstr(t, "sort by:") && strstr(t, "sort \u00b1%") && strstr(title_line(t, line, sizeof line), "\u25bc\u00b1%"));
    key(VK_F6);
    key(VK_RIGHT);
    key(VK_ESC); /* Esc: the order stays */
    CHECK(strstr(render(&v, 100, 24), "sort \u00b1%") != NULL);
    v.unicode = false; /* without UTF-8 the arrows are v and ^ */
    CHECK(strstr(title_line(render(&v, 100, 24), line, sizeof line), "v+%") != NULL);
    v.unicode = true;
    key('x'); /* no such key */
    CHECK(strstr(render(&v, 100, 24), "? for help") != NULL);
    CHECK(key(VK_F10) == VIEW_QUIT && key('q') == VIEW_QUIT);
}

/* Key o says where the snapshot will go, in full (its end when narrow), before it goes there. */
static void test_save_prompt_names_the_directory(void)
{
    setup();
    snprintf(v.save_dir, sizeof v.save_dir, "/home/someone/work/firmware/snapshots");
    key('o');
    const char *t = render(&v, 120, 24);
    CHECK(strstr(t, "save a snapshot as:") && strstr(t, " into /home/someone/work/firmware/snapshots"));
    t = render(&v, 30, 24);
    CHECK(strstr(t, " into .../") && strstr(t, "snapshots")); /* its end kept */
    /* the prompt's words first, the directory under them: " into DIR" printed above "save a
     * snapshot as (Esc: no):" at 60x15 and 80x24 (trial of 2026-12-07) */
    int sizes[][2] = {{60, 15}, {80, 24}, {120, 24}, {30, 24}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        t = render(&v, sizes[i][0], sizes[i][1]);
        const char *ask = strstr(t, " save a"), *into = strstr(t, " into ");
        const char *end = into ? strchr(into, '\n') : NULL;
        CHECK(ask && into && ask < into && (!end || !end[1])); /* into: the last row */
    }
    key(VK_ESC);
    CHECK(!strstr(render(&v, 120, 24), " into /home"));
}

/* A stream that stopped while the line stays connected (a drain starved after it ran): the header's
 * warning line says so, with the causes, over any other diagnostic; a flowing stream does not. */
static void test_stalled_stream_said(void)
{
    setup();
    CHECK(!strstr(render(&v, 160, 24), "the stream stopped"));
    v.st.quiet_s = 12;
    v.st.last_sample_s = 75;
    const char *t = render(&v, 160, 24);
    CHECK(strstr(t, "! the stream stopped: no sample for 12 s (the last at 01:15), still connected") &&
          strstr(t, "CONFIG_CMPROF_DRAIN_PRIORITY"));
    v.st.quiet_s = 2; /* under STARVED_AFTER_S: a pause, not a stall */
    CHECK(!strstr(render(&v, 160, 24), "the stream stopped"));
    v.st.quiet_s = 0;
}

/* A full ring's weighted samples: the header says the intervals rest on fewer effective samples. */
static void test_weighted_said(void)
{
    setup();
    CHECK(!strstr(render(&v, 160, 24), "weighted:"));
    for (int i = 0; i < 10; i++)
        prof_add_pc_weighted(p, 0x08000200u, true, 0x20000200u, 50);
    const char *t = render(&v, 160, 24);
    CHECK(strstr(t, "weighted: ") && strstr(t, " effective"));
}

/* Narrow terminals drop columns (the bar, then ±%, then samples) before the name gets fewer than
 * 20 columns; the share stays. */
static void test_narrow_columns(void)
{
    setup();
    char line[512];
    static const struct {
        int w;
        bool bar, ci, samples;
    } want[] = {{80, true, true, true}, {50, false, true, true}, {40, false, false, true}, {30, false, false, false}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *t = render(&v, want[i].w, 24);
        title_line(t, line, sizeof line);
        CHECK(!!strstr(line, "SHARE") == want[i].bar && !!strstr(line, "\u00b1%") == want[i].ci &&
              !!strstr(line, "SAMPLES") == want[i].samples && strstr(line, "%"));
        const char *name = strstr(line, "NAME");
        int x = 0;
        for (const char *c = line; name && c < name; c++)
            x += ((unsigned char)*c & 0xC0) != 0x80;
        CHECK(name && (want[i].w - x >= 20 || want[i].w < 28)); /* the name's room, where the share leaves it */
        CHECK(strstr(t, "0x08000100") && strstr(t, "69.93%")); /* the row's name whole, and its share */
    }
}

/* Issue 35, 23: G is in the key bar at 80 columns too. */
static void test_graph_key_at_80(void)
{
    setup();
    const char *t = render(&v, 80, 24);
    const char *bar = strrchr(t, '\n');
    while (bar > t && bar[-1] != '\n')
        bar--;
    CHECK(strstr(bar, "G graph") && strstr(bar, "? help") && strstr(bar, "q quit") && strstr(bar, "Enter drill"));
}

/* The first tick (a baseline), then `seconds` ticks with 100 samples at pc each. */
static void ticks_of(uint32_t pc, int seconds)
{
    tick();
    for (int t = 0; t < seconds; t++) {
        for (int i = 0; i < 100; i++)
            prof_add_pc(p, pc, false, 0);
        tick();
    }
}

/* The share sparkline's cells for a row at 140 columns, as text. */
static const char *spark_of(const char *t, const char *name, char *out, size_t len)
{
    const char *row = strstr(t, name);
    while (row && row > t && row[-1] != '\n')
        row--;
    const char *pct = row ? strstr(row, "%") : NULL;
    pct = pct ? strstr(pct + 1, "%") : NULL; /* after the share and the interval */
    const char *end = pct ? strstr(pct, name) : NULL;
    snprintf(out, len, "%.*s", end ? (int)(end - pct) : 0, pct ? pct : "");
    return out;
}

/* Issue 35, 23: the sparklines stop while the view is frozen, and keep their history across g,
 * i and a filter. */
static void test_sparklines_freeze_and_keep(void)
{
    setup();
    ticks_of(0x08000100u, 30);
    char before[400], frozen[400], after[400];
    spark_of(render(&v, 140, 24), "0x08000100", before, sizeof before);
    key(' ');
    for (int t = 0; t < 30; t++) { /* now another function takes every sample */
        for (int i = 0; i < 100; i++)
            prof_add_pc(p, 0x08000200u, false, 0);
        tick();
    }
    spark_of(render(&v, 140, 24), "0x08000100", frozen, sizeof frozen);
    CHECK(before[0] && strcmp(before, frozen) == 0);
    key(' ');
    spark_of(render(&v, 140, 24), "0x08000100", after, sizeof after);
    CHECK(strcmp(before, after) != 0);
    int len = v.history.len;
    key('g'); /* by line: its own history, recorded all along */
    CHECK(v.history.len == len);
    key('g');
    key('g');
    key('g'); /* back to functions */
    key('i');
    key('i');
    float pts[4];
    CHECK(v.history.len == len && history_of(&v.history, "0x08000100", pts, 4, 60) == 4 && pts[1] > 0.99f &&
          pts[2] < 0.01f);
    key('/');
    key('1');
    key(VK_ENTER);
    spark_of(render(&v, 140, 24), "0x08000100", after, sizeof after);
    CHECK(v.history.len == len && strstr(after, "\u2588") != NULL);
}

/* Issue 35, 23: by file, a long path keeps its end from a directory on: no directory's name cut. */
static void test_by_file_paths(void)
{
    setup();
    char err[300];
    struct sym_table *syms = sym_open("build/scenarios/rtos/fw.elf", err, sizeof err);
    CHECK(syms != NULL); /* the rtos scenario's firmware (make scenarios): newlib's memset.c has a long path */
    if (!syms)
        return;
    uint32_t a = address_of(syms, "memset");
    CHECK(a != 0);
    struct prof *all = prof_new(syms);
    struct view w;
    view_init(&w, all, NULL, in, syms);
    w.st = v.st;
    for (int i = 0; i < 10; i++)
        prof_add_pc(all, a, false, 0);
    view_key(&w, 'g');
    view_key(&w, 'g'); /* by file */
    const char *t = render(&w, 80, 24), *row = strstr(t, "memset.c");
    while (row && row > t && row[-1] != '\n')
        row--;
    const char *dots = row ? strstr(row, "...") : NULL;
    CHECK(dots && dots[3] == '/' && strstr(dots, "/memset.c\n"));
    view_free(&w);
    prof_free(all);
    sym_close(syms);
}

/* The starts of the function symbols named `name`, in address order (up to max). */
static size_t starts_of(struct sym_table *syms, const char *name, uint32_t *out, size_t max)
{
    uint32_t lo, hi, code_lo, code_hi;
    size_t n = 0;
    for (uint32_t a = sym_code_span(syms, &code_lo, &code_hi) ? code_lo : 1;
         a < code_hi && n < max && sym_function_from(syms, a, &lo, &hi); a = hi > a ? hi : a + 2) {
        const struct sym_location *l = sym_lookup(syms, lo & ~1u);
        if (l->symbol && strcmp(l->symbol, name) == 0)
            out[n++] = lo & ~1u;
    }
    return n;
}

static bool ends_with(const char *s, const char *tail)
{
    return strlen(s) >= strlen(tail) && strcmp(s + strlen(s) - strlen(tail), tail) == 0;
}

/* Static functions of one name in two files (the rtos scenario's stream_putc: its own in rtos.c,
 * the library's in cmprof_section.c) are two rows, each named with its file; each row's drill-down,
 * top address and frames are its own function's; a name no other function has is the name itself
 * (the same string); a function's file is its path without "." and "..". */
static void test_functions_of_one_name(void)
{
    char err[300];
    struct sym_table *syms = sym_open("build/scenarios/rtos/fw.elf", err, sizeof err);
    CHECK(syms != NULL);
    uint32_t at[4];
    size_t n = syms ? starts_of(syms, "stream_putc", at, 4) : 0;
    CHECK(n == 2);
    if (n != 2) {
        sym_close(syms);
        return;
    }
    int own = ends_with(sym_function_file(syms, at[0]), "/rtos.c") ? 0 : 1; /* rtos.c's, then the library's */
    uint32_t mine = at[own], lib = at[1 - own];
    CHECK(ends_with(sym_function_file(syms, mine), "/apps/rtos.c") &&
          ends_with(sym_function_file(syms, lib), "/firmware/cmprof_section.c"));
    const char *name = sym_lookup(syms, mine)->first.function;
    const char *la = sym_function_label(syms, name, mine), *lb = sym_function_label(syms, name, lib);
    CHECK(strcmp(la, "stream_putc (rtos.c)") == 0 && strcmp(lb, "stream_putc (cmprof_section.c)") == 0);
    uint32_t memset_at = address_of(syms, "memset");
    const char *memset_name = sym_lookup(syms, memset_at)->first.function;
    CHECK(sym_function_label(syms, memset_name, memset_at) == memset_name);
    /* newlib's ".../nofp/newlib/libc/string/../../../../../../../../newlib/libc/string/memset.c" */
    const char *memset_file = sym_function_file(syms, memset_at);
    CHECK(memset_file[0] == '/' && !strstr(memset_file, "/../") && !strstr(memset_file, "/./") &&
          ends_with(memset_file, "/newlib/libc/string/memset.c") &&
          !ends_with(memset_file, "/string/newlib/libc/string/memset.c"));
    struct prof *q = prof_new(syms);
    for (int i = 0; i < 10; i++)
        prof_add_pc(q, i < 7 ? mine : lib, false, 0);
    const struct prof_row *rows;
    size_t nr = prof_rows(q, PROF_BY_FUNCTION, true, &rows);
    CHECK(nr == 2 && strcmp(rows[0].name, la) == 0 && rows[0].samples == 7 && strcmp(rows[1].name, lb) == 0 &&
          rows[1].samples == 3 && ends_with(rows[1].file, "/cmprof_section.c"));
    nr = prof_rows_of(q, PROF_BY_ADDRESS, true, lb, &rows);
    CHECK(nr == 1 && rows[0].samples == 3 && strtoul(rows[0].name, NULL, 16) == lib);
    nr = prof_rows_of(q, PROF_BY_ADDRESS, false, name, &rows); /* the bare name: every function of it */
    CHECK(nr == 2);
    const struct sym_frame *f = sym_frame_at(sym_lookup(syms, mine), 0);
    CHECK(prof_top_pc(q, true, la, f->line) == mine && prof_top_pc(q, true, lb, f->line) != mine);
    CHECK(prof_frame_is(q, mine, f, la) && !prof_frame_is(q, mine, f, lb) && prof_frame_is(q, mine, f, name) &&
          !prof_frame_is(q, mine, f, "stream_put") && !prof_frame_is(q, mine, f, "stream_putc (rtos.c") &&
          !prof_frame_is(q, mine, f, "stream_putcx"));
    prof_free(q);
    sym_close(syms);
}

/* A row's name that carries its file: sym_name_part reads its parts, sym_shown_name shows the
 * function's name by its rule and keeps the file. */
static void test_name_parts(void)
{
    static const struct {
        const char *name;
        size_t n;
        const char *file;
    } cases[] = {{"work (a.c)", 4, "a.c"}, {"work", 4, NULL}, {"work (a.c", 9, NULL}, {"work ()", 7, NULL},
                 {" (a.c)", 6, NULL}, {"0x08000100", 10, NULL}, {"f (/src/x (1)/a.c)", 1, "/src/x (1)/a.c"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *file;
        size_t len, n = sym_name_part(cases[i].name, &file, &len);
        CHECK(n == cases[i].n &&
              (cases[i].file ? file && len == strlen(cases[i].file) && strncmp(file, cases[i].file, len) == 0 : !file));
    }
    char err[300];
    struct sym_table *syms = sym_open("build/scenarios/rtos/fw.elf", err, sizeof err);
    CHECK(syms && strcmp(sym_shown_name(syms, "_Z3fooi (a.cpp)", true), "foo(int) (a.cpp)") == 0 &&
          strcmp(sym_shown_name(syms, "_Z3fooi (a.cpp)", false), "_Z3fooi (a.cpp)") == 0 &&
          strcmp(sym_shown_name(syms, "work (a.c)", true), "work (a.c)") == 0);
    sym_close(syms);
}

/* Issue 35, 21: narrow, the section table shows the time columns that fit whole, never a number
 * cut at the edge. */
static void test_sections_narrow_whole_numbers(void)
{
    setup();
    sect[0] = (struct prof_section){.name = "control", .seen = true, .count = 1000, .current = 3554,
                                            .min = 3520, .max = 3554, .sum = 3526540};
    key('t');
    int ok = 1;
    for (int w = 40; w <= 100; w++) {
        const char *t = render(&v, w, 12), *row = strstr(t, "\n0  control");
        const char *end = row ? strchr(row + 1, '\n') : NULL;
        while (end && end > row && end[-1] == ' ')
            end--;
        /* the row ends with a whole value in whole ticks: " 3554", the mean " 3527" (or the count, when no
         * time fits) */
        bool whole = end && end - row > 8 && (strncmp(end - 5, " 3554", 5) == 0 || strncmp(end - 5, " 3520", 5) == 0 ||
                                               strncmp(end - 5, " 3527", 5) == 0 || strncmp(end - 5, " 1000", 5) == 0);
        if (!whole)
            printf("  %d columns: %.*s\n", w, row && end ? (int)(end - row - 1) : 0, row ? row + 1 : "");
        ok &= whole;
    }
    CHECK(ok);
    memset(&sect[0], 0, sizeof sect[0]);
}

/* Issue 35, 21: key G on a short terminal (50x12): the table keeps rows, the pane the rest, and its
 * title shows the peak whole or not at all. */
static void test_graph_pane_short(void)
{
    setup();
    ticks_of(0x08000100u, 30);
    key('G');
    const char *t = render(&v, 50, 12);
    const char *title = strstr(t, "HISTORY  0x08000100");
    const char *end = title ? strchr(title, '\n') : NULL;
    CHECK(strstr(t, "NAME") && strstr(t, "0x08000200") && title); /* the table (its bar dropped at 50 columns) and the pane */
    CHECK(end && (strncmp(end - 7, "100.0 %", 7) == 0 || strncmp(end - 5, "1 min", 5) == 0));
    CHECK(title && strstr(title, "100.0%") != NULL); /* the chart's peak label */
}

/* Issue 30: samples whose task tags were never named are not shown as someone's task quietly:
 * the diagnostics (header, then the d page) say what share they are and why (here no name ever
 * came for 0x20000100 and 0x20000200). */
static void test_unnamed_tags_diagnosed(void)
{
    setup();
    render(&v, 200, 24);
    key('d');
    const char *t = render(&v, 200, 40);
    CHECK(strstr(t, "unnamed tasks: 99.9 % of samples (1000)") != NULL && strstr(t, "likely cause") != NULL);
}

/* The key bars, the bindings and the help come from one table: every key a screen's bar shows
 * does something there, and the help's o line names each format the snapshot prompt offers. */
static const int bar_openers[][2] = {{0, 0}, {'t', 0}, {'c', 0}, {VK_ENTER, 0}}; /* top, sections, calls, drill-down */

static int bar_key(const char *hint)
{
    static const struct {
        const char *word;
        int key;
    } words[] = {{"Enter", VK_ENTER}, {"Esc", VK_ESC}, {"space", ' '}, {"\u2191\u2193", VK_DOWN}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strncmp(hint, words[i].word, strlen(words[i].word)) == 0 && hint[strlen(words[i].word)] == ' ')
            return words[i].key;
    return (unsigned char)hint[0];
}

static void test_bar_keys_bound_and_help_lists_formats(void)
{
    int hints = 0, bound = 0;
    for (size_t m = 0; m < sizeof bar_openers / sizeof *bar_openers; m++) {
        setup();
        if (bar_openers[m][0])
            key(bar_openers[m][0]);
        char bar[1024];
        const char *t = render(&v, 250, 24), *last = strrchr(t, '\n');
        while (last > t && last[-1] != '\n')
            last--;
        snprintf(bar, sizeof bar, "%s", last);
        for (char *h = bar; *h;) { /* the bar's hints, two spaces apart: each one's key, on a fresh view */
            while (*h == ' ')
                h++;
            if (!*h || *h == '\n')
                break;
            char *end = strstr(h, "  ");
            if (end)
                *end = '\0';
            setup();
            if (bar_openers[m][0])
                key(bar_openers[m][0]);
            hints++;
            bound += key(bar_key(h)) != 0;
            h = end ? end + 2 : h + strlen(h);
        }
    }
    CHECK(hints >= 20 && bound == hints);
    setup();
    key('?');
    const char *t = render(&v, 250, 60), *help = strstr(t, "\n  o ");
    char line[512] = "";
    if (help)
        snprintf(line, sizeof line, "%.*s", (int)strcspn(help + 1, "\n"), help + 1);
    setup();
    key('o');
    t = strstr(render(&v, 250, 24), "save a snapshot as:");
    int formats = 0, named = 0;
    for (const char *f = t ? strchr(t, ':') + 1 : "";;) {
        while (*f == ' ')
            f++;
        if (!*f || *f == '(' || *f == '\n') /* "(Esc: no)" */
            break;
        const char *name = f + 2, *end = strstr(name, "  "); /* "t table  c CSV ..." */
        size_t len = end ? (size_t)(end - name) : strcspn(name, "\n");
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)len, name);
        formats++;
        named += strstr(line, word) != NULL;
        f = end ? end + 2 : name + len;
    }
    CHECK(formats >= 5 && named == formats);
}

int main(void)
{
    RUN_TEST(test_device_source_short);
    RUN_TEST(test_source_kept_beside_long_state);
    RUN_TEST(test_state_cut_only_for_the_source);
    RUN_TEST(test_top_view);
    RUN_TEST(test_key_bar_fits);
    RUN_TEST(test_reset_counters_and_nominal_rate);
    RUN_TEST(test_filter_prompt_and_name_sort);
    RUN_TEST(test_diff_columns);
    RUN_TEST(test_snapshot_key);
    RUN_TEST(test_help_explains_the_header);
    RUN_TEST(test_sparklines);
    RUN_TEST(test_history_of_long_names);
    RUN_TEST(test_history_pages);
    RUN_TEST(test_graph_pane);
    RUN_TEST(test_ascii_fallback);
    RUN_TEST(test_keys_group_filter_freeze);
    RUN_TEST(test_reset_and_help);
    RUN_TEST(test_empty_view_explains);
    RUN_TEST(test_starved_drain_explained);
    RUN_TEST(test_sections_and_budget);
    RUN_TEST(test_section_events_and_ipc);
    RUN_TEST(test_section_time_sparkline);
    RUN_TEST(test_tiny_terminal_and_log);
    RUN_TEST(test_diagnostics_banner);
    RUN_TEST(test_calls_enter_follows_selection);
    RUN_TEST(test_window_everywhere);
    RUN_TEST(test_clone_names);
    RUN_TEST(test_header_whole_fields);
    RUN_TEST(test_sort_any_column);
    RUN_TEST(test_sort_marked_reversed_and_picked);
    RUN_TEST(test_narrow_columns);
    RUN_TEST(test_stalled_stream_said);
    RUN_TEST(test_weighted_said);
    RUN_TEST(test_save_prompt_names_the_directory);
    RUN_TEST(test_graph_key_at_80);
    RUN_TEST(test_sparklines_freeze_and_keep);
    RUN_TEST(test_by_file_paths);
    RUN_TEST(test_functions_of_one_name);
    RUN_TEST(test_name_parts);
    RUN_TEST(test_sections_narrow_whole_numbers);
    RUN_TEST(test_graph_pane_short);
    RUN_TEST(test_unnamed_tags_diagnosed);
    RUN_TEST(test_bar_keys_bound_and_help_lists_formats);
    RUN_TEST(test_file_has_no_rate);
    view_free(&v);
    ingest_free(in);
    prof_free(p);
    return check_summary();
}
