/* The ingest in front of the profile: what --samples N counts, however the stream is cut. */
#include "../profile/ingest.h"
#include "check.h"
#include "elf_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Three bursts as a PCSR reader sends them: three PC samples, then two sleeps. */
static size_t bursts(uint8_t *out)
{
    static const uint8_t sync[] = {0, 0, 0, 0, 0, 0x80};
    size_t n = 0;
    memcpy(out, sync, sizeof sync);
    n += sizeof sync;
    for (int b = 0; b < 3; b++) {
        for (int k = 0; k < 3; k++) {
            uint32_t pc = 0x08000100u + 4u * (uint32_t)k;
            out[n++] = 0x17; /* PC sample, 4 bytes */
            for (int i = 0; i < 4; i++)
                out[n++] = (uint8_t)(pc >> (8 * i));
        }
        for (int k = 0; k < 2; k++) {
            out[n++] = 0x15; /* PC sample, 1 byte: asleep */
            out[n++] = 0x00;
        }
    }
    return n;
}

struct counts {
    double total;
    uint64_t sleeps, past;
};

/* The stream fed in pieces of `piece` bytes (0: whole), at most `limit` samples. */
static struct counts ingest_cut(const uint8_t *s, size_t len, size_t piece, uint64_t limit)
{
    struct prof *p = prof_new(NULL);
    struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_ITM, .tpiu_id = 1, .max_samples = limit});
    for (size_t at = 0; at < len;) {
        size_t n = piece && len - at > piece ? piece : len - at;
        ingest_feed(in, s + at, n);
        at += n;
    }
    ingest_finish(in);
    struct ingest_counts ic;
    ingest_counts(in, &ic);
    struct counts c = {prof_total(p), prof_sleep(p), ic.past_limit};
    ingest_free(in);
    prof_free(p);
    return c;
}

/* The limit reached with the first burst's last sample: that burst's sleeps count, as they come
 * before any refused sample; nothing of the bursts after it does. Fed whole, byte by byte, or in
 * pieces of any size, the counts are the same. */
static void test_sleeps_after_the_limit(void)
{
    uint8_t s[128];
    size_t len = bursts(s);
    for (size_t piece = 0; piece <= len; piece++) {
        struct counts c = ingest_cut(s, len, piece, 3);
        CHECK(c.total == 3 && c.sleeps == 2 && c.past == 10); /* 2 bursts of 3 samples and 2 sleeps */
    }
    struct counts all = ingest_cut(s, len, 0, 0); /* no limit: everything */
    CHECK(all.total == 9 && all.sleeps == 6 && all.past == 0);
}

/* sum12 of a stream line's text (docs/stream.md), as its two base64 characters after '!'. */
static void stream_line(char *out, size_t len, const char *text)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint64_t a = 0, b = 0;
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i += 4) {
        uint32_t w = 0;
        for (size_t k = 0; k < 4 && i + k < n; k++)
            w |= (uint32_t)(uint8_t)text[i + k] << (8 * k);
        a += w;
        b += a;
    }
    unsigned c = (unsigned)((a + 3 * b) % 4095);
    snprintf(out, len, "%s!%c%c\n", text, b64[c >> 6], b64[c & 63]);
}

/* The firmware's @lost count reaches the profile: cumulative on the wire, so each line adds what
 * is new, and a smaller count (a restart) starts again. The profile then bounds every share by
 * it, and says so; fed whole or byte by byte, the same. */
static void test_firmware_loss_bounds_the_shares(void)
{
    char s[1024] = "", line[200];
    const char *text[] = {"@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000",
                          "$AACAAACAAACAAACAAACAAACAAACAAADA", "@lost 8", "$AACAAACAAACAAACAAACAAACAAACAAADA",
                          "@lost 24", "@lost 4"};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        stream_line(line, sizeof line, text[i]);
        strcat(s, line);
    }
    for (size_t piece = 0; piece <= 1; piece++) {
        struct prof *p = prof_new(NULL);
        struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_UNKNOWN, .tpiu_id = 1});
        for (size_t at = 0, len = strlen(s); at < len; at += piece ? 1 : len)
            ingest_feed(in, (const uint8_t *)s + at, piece ? 1 : len);
        ingest_finish(in);
        CHECK(prof_total(p) == 16 && prof_lost(p) == 28); /* 8, 16 more, then 4 after a restart */
        struct ingest_counts c; /* the run's own count and loss line: every firmware run's, not the last's */
        ingest_counts(in, &c);
        char losses[4][INGEST_LOSS_TEXT];
        size_t nl = ingest_losses(in, losses, 4), said = 0;
        for (size_t i = 0; i < nl; i++)
            said += strstr(losses[i], "28 samples lost in the firmware") == losses[i];
        CHECK(c.lost == 28 && said == 1);
        double lo, hi;
        CHECK(prof_loss_bound(p, 14, &lo, &hi) && fabs(lo - 14.0 / 44) < 1e-12 && fabs(hi - 42.0 / 44) < 1e-12);
        struct prof_diag d[8];
        size_t nd = prof_diagnose(p, d, 8), found = 0;
        for (size_t i = 0; i < nd; i++)
            found += d[i].kind == DIAG_LOSS_BIAS && strstr(d[i].text, "shares may be biased: 28 of 44 samples") &&
                     strstr(d[i].text, "c/44 to (c+28)/44");
        CHECK(found == 1);
        const struct prof_row *rows;
        CHECK(prof_rows(p, PROF_BY_FUNCTION, false, &rows) == 2 && prof_loss_beyond(p, &rows[0]));
        ingest_free(in);
        prof_reset(p);
        CHECK(prof_lost(p) == 0 && !prof_loss_bound(p, 1, &lo, &hi));
        prof_free(p);
    }
}

/* A version 7 sample line numbered `number`, two samples (0x08001B82, 0x08001B8A) as 3-char PCs. */
static void v7_line(char *out, size_t len, unsigned number)
{
    char text[32];
    snprintf(text, sizeof text, "$%c%c?v@?vD", '?' + (number >> 6 & 63), '?' + (number & 63));
    stream_line(out, len, text);
}

/* Lines numbered from..to (a gap where skip is), each two samples, appended to s. */
static void v7_lines(char *s, unsigned from, unsigned to, unsigned skip)
{
    for (unsigned n = from; n <= to; n++) {
        char line[64];
        v7_line(line, sizeof line, n);
        if (n != skip)
            strcat(s, line);
    }
}

/* A live source joined a running stream (version 7), at any byte of its first two lines: the
 * samples before its first announce (lines 1233, 1234) and those before its first whole group of 8
 * (1235..1239) are the cost of joining, said once and neutrally (ingest_joined), not a loss; a line
 * missed later (1242) is: its own, said by its number skipped, and its group's samples not read after it
 * (1243..1247). */
static void test_joined_stream_is_no_loss(void)
{
    char s[2048] = "", line[160];
    v7_lines(s, 1233, 1234, 0);
    size_t first_two = strlen(s);
    stream_line(line, sizeof line, "@cmprof v=7 clk=1000 tclk=1000 period=10 jitter=0 base=08000000");
    strcat(s, line);
    v7_lines(s, 1235, 1249, 1242);
    for (size_t cut = 0; cut < first_two; cut++) {
        struct prof *p = prof_new(NULL);
        struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_TEXT, .mid_stream = true});
        ingest_feed(in, (const uint8_t *)s + cut, strlen(s) - cut);
        ingest_finish(in);
        char losses[8][INGEST_LOSS_TEXT], text[300];
        size_t nl = ingest_losses(in, losses, 8);
        struct ingest_joined j;
        ingest_joined(in, &j, text, sizeof text);
        struct ingest_counts c;
        ingest_counts(in, &c);
        CHECK(prof_total(p) == 8 && nl == 2 && strncmp(losses[0], "10 stream samples not read", 26) == 0 &&
              strncmp(losses[1], "1 stream sample lines missing", 29) == 0);
        CHECK(j.before_pages == 10 && j.skipped == j.before_announce + 10 && c.joined == j.skipped &&
              j.before_announce == (cut == 0 ? 4u : cut < first_two / 2 + 1 ? 2u : 0u) &&
              strncmp(text, "joined a running stream: the first ", 35) == 0);
        ingest_free(in);
        prof_free(p);
    }
}

/* A firmware that never announces: its samples are lost, said as such (ingest_losses, and
 * ingest_quiet's reason); read from its start (line 0), the firmware never called the announce; read
 * from a later line, the input may have ended before the next announce. */
static void test_never_announced_stays_a_loss(void)
{
    for (unsigned from = 0; from <= 1233; from += 1233) {
        char s[1024] = "";
        v7_lines(s, from, from + 3, 1u << 20);
        struct prof *p = prof_new(NULL);
        struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_TEXT, .mid_stream = true});
        ingest_feed(in, (const uint8_t *)s, strlen(s));
        ingest_finish(in);
        char losses[8][INGEST_LOSS_TEXT], text[400];
        size_t nl = ingest_losses(in, losses, 8);
        struct ingest_joined j;
        ingest_joined(in, &j, text, sizeof text);
        CHECK(nl == 1 && strcmp(losses[0], "8 stream samples came and no announce to place them") == 0);
        CHECK(j.skipped == 0 && text[0] == '\0');
        CHECK(ingest_quiet(in, text, sizeof text) == INGEST_QUIET_NO_ANNOUNCE &&
              strstr(text, from ? "began in a running stream" : "never announced itself") != NULL);
        ingest_free(in);
        prof_free(p);
    }
}

/* An ITM capture as a trace port gives it, fed to a receiver that waits for the first sync (a live
 * SWO port), whole and from each of its first bytes on: a capture that begins with its sync has no
 * loss and no bytes skipped (before: its sync was read as 6 bytes of noise, a red "data lost" on a
 * clean capture); one joined after its start (the tail of a packet before the next sync) skips those
 * bytes as the cost of joining, no loss; one whose sync never comes lost them. */
static void swo_case(const uint8_t *s, size_t len, enum detect_format format, uint64_t joined_bytes)
{
    struct prof *p = prof_new(NULL);
    struct ingest *in = ingest_new(p, &(struct ingest_options){.format = format, .tpiu_id = 1,
                                                                .wait_sync = format == DETECT_ITM});
    ingest_feed(in, s, len);
    ingest_finish(in);
    char losses[8][INGEST_LOSS_TEXT], text[400];
    size_t nl = ingest_losses(in, losses, 8);
    struct ingest_joined j;
    ingest_joined(in, &j, text, sizeof text);
    CHECK(nl == 0 && prof_total(p) == 9 && j.bytes == joined_bytes);
    CHECK(joined_bytes ? strncmp(text, "joined a running stream: its first ", 35) == 0 : text[0] == '\0');
    if (nl)
        fprintf(stderr, "     format %d: %s\n", (int)format, losses[0]);
    ingest_free(in);
    prof_free(p);
}

static void test_swo_joined_is_no_loss(void)
{
    uint8_t s[256], late[256];
    size_t n = bursts(s);
    swo_case(s, n, DETECT_UNKNOWN, 0);
    swo_case(s, n, DETECT_ITM, 0);
    for (size_t k = 1; k <= 4; k++) { /* the last k bytes of a PC sample packet, then the capture */
        memcpy(late, s + 6 + 5 - k, k);
        memcpy(late + k, s, n);
        swo_case(late, n + k, DETECT_ITM, k);
    }
    struct prof *p = prof_new(NULL);
    struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_ITM, .tpiu_id = 1, .wait_sync = true});
    ingest_feed(in, s + 6, n - 6); /* no sync at all */
    ingest_finish(in);
    char losses[8][INGEST_LOSS_TEXT];
    CHECK(ingest_losses(in, losses, 8) == 1 && strstr(losses[0], "looking for ITM sync") != NULL);
    ingest_free(in);
    prof_free(p);
}

/* One ingest feeds a list of profiles (the live view's whole run and its window): each gets every
 * sample, loss, task name and what the firmware announced and timed; prof_reset keeps the
 * firmware's figures, and a list that changes (the window turned) feeds the new one from then on. */
static void test_profiles_fed_alike(void)
{
    char s[2048] = "", line[200];
    const char *text[] = {"@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 arch=ARMv7E-M timer=SysTick "
                          "base=08000000",
                          "@secname 0 control", "@sect 0 n=10 cur=35 min=30 max=40 sum=350",
                          "$AACAAACAAACAAACAAACAAACAAACAAADA", "@lost 3"};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        stream_line(line, sizeof line, text[i]);
        strcat(s, line);
    }
    struct prof *whole = prof_new(NULL), *window = prof_new(NULL), *next = prof_new(NULL);
    struct ingest *in = ingest_new(whole, &(struct ingest_options){.format = DETECT_TEXT, .tpiu_id = 1});
    ingest_set_profiles(in, (struct prof *[]){whole, window}, 2);
    ingest_feed(in, (const uint8_t *)s, strlen(s));
    struct prof *both[] = {whole, window};
    for (int k = 0; k < 2; k++) {
        const struct prof_stream_info *i = prof_stream_info(both[k]);
        const struct prof_section *c = prof_section(both[k], 0);
        CHECK(prof_total(both[k]) == 8 && prof_lost(both[k]) == 3);
        CHECK(i->present && i->clock_hz == 1000 && i->period == 10 && strcmp(i->arch, "ARMv7E-M") == 0 &&
              strcmp(i->timer, "SysTick") == 0);
        CHECK(c && c->seen && strcmp(c->name, "control") == 0 && c->count == 10 && c->max == 40 && c->sum == 350);
        CHECK(prof_sections_seen(both[k]) && prof_section(both[k], PROF_SECTIONS) == NULL);
    }
    prof_reset(window); /* counts go, the firmware's figures stay */
    CHECK(prof_total(window) == 0 && prof_stream_info(window)->present && prof_section(window, 0)->count == 10);
    ingest_set_profiles(in, (struct prof *[]){whole, next}, 2);
    stream_line(line, sizeof line, "$AACAAACAAACAAACAAACAAACAAACAAADA");
    ingest_feed(in, (const uint8_t *)line, strlen(line));
    CHECK(prof_total(whole) == 16 && prof_total(window) == 0 && prof_total(next) == 8);
    struct ingest_counts c;
    ingest_counts(in, &c);
    CHECK(c.format == DETECT_TEXT && c.samples == 16 && c.announced && c.lost == 3 && c.bad == 0 &&
          c.stream_lines >= 2 && c.bytes == strlen(s) + strlen(line));
    CHECK(ingest_timeline(in) != NULL && timeline_length(ingest_timeline(in)) == 16);
    ingest_free(in);
    prof_free(whole);
    prof_free(window);
    prof_free(next);
}

/* The live view's window is a profile of its own, and a snapshot of it is a report: it must know
 * the firmware announced another build than the ELF, as the whole run's profile does (the window
 * never got the build-id: a window snapshot of another build's capture did not say wrong ELF). */
static void test_window_knows_the_build(void)
{
    char err[300];
    struct sym_table *syms = sym_open("build/scenarios/rtos/fw.elf", err, sizeof err);
    CHECK(syms != NULL); /* the rtos scenario's firmware (make scenarios): it has a build-id */
    if (!syms)
        return;
    char s[1024] = "", line[200];
    const char *text[] = {"@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=0 base=08000000 "
                          "bid=00112233445566778899aabbccddeeff00112233",
                          "$AACAAACAAACAAACAAACAAACAAACAAADA"};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        stream_line(line, sizeof line, text[i]);
        strcat(s, line);
    }
    struct prof *whole = prof_new(syms), *window = prof_new(syms);
    struct ingest *in = ingest_new(whole, &(struct ingest_options){.format = DETECT_TEXT, .tpiu_id = 1});
    ingest_set_profiles(in, (struct prof *[]){whole, window}, 2);
    ingest_feed(in, (const uint8_t *)s, strlen(s));
    for (int k = 0; k < 2; k++) {
        struct prof *p = k ? window : whole;
        struct prof_trust t;
        prof_trust(p, &t);
        CHECK(prof_total(p) == 8 && t.build_id && t.wrong_elf);
    }
    ingest_free(in);
    prof_free(whole);
    prof_free(window);
    sym_close(syms);
}

/* What an ingest with no sample yet says: nothing yet, too few bytes for the format, log lines only. */
static void test_waiting_said(void)
{
    struct prof *p = prof_new(NULL);
    struct ingest *in = ingest_new(p, &(struct ingest_options){.tpiu_id = 1});
    char why[400];
    ingest_waiting(in, why, sizeof why);
    CHECK(strcmp(why, "no data from the source yet") == 0);
    ingest_feed(in, (const uint8_t *)"boot\n", 5);
    ingest_waiting(in, why, sizeof why);
    CHECK(strcmp(why, "5 bytes so far: not enough to tell the format yet") == 0);
    ingest_free(in);
    in = ingest_new(p, &(struct ingest_options){.format = DETECT_TEXT, .tpiu_id = 1});
    ingest_feed(in, (const uint8_t *)"boot\nready\n", 11);
    ingest_waiting(in, why, sizeof why);
    CHECK(strncmp(why, "2 log lines and no samples so far", 33) == 0);
    ingest_free(in);
    prof_free(p);
}

/* Zephyr 4.3's arch_cpu_idle (mps2/an385, ARMv7-M, CONFIG_TRACING, from its ELF: bl sys_trace_idle;
 * cpsid i; msr basepri; isb; dsb; wfi; bl sys_trace_idle_exit; cpsie i; isb; pop) at 0x08000000, in
 * an ELF of its own: the sampling interrupt that ends the idle wait is taken right after the cpsie i
 * (offset 30). */
static const uint16_t IDLE_V7M[] = {
    0xb508, 0xf7ff, 0xffcf, 0xb672, 0x2300, 0xf383, 0x8811, 0xf3bf, 0x8f6f,
    0xf3bf, 0x8f4f, 0xbf30, 0xf7ff, 0xffc8, 0xb662, 0xf3bf, 0x8f6f, 0xbd08,
};

static struct sym_table *open_idle_elf(char *path)
{
    static uint8_t code[sizeof IDLE_V7M];
    for (size_t i = 0; i < sizeof IDLE_V7M / 2; i++) {
        code[2 * i] = (uint8_t)IDLE_V7M[i];
        code[2 * i + 1] = (uint8_t)(IDLE_V7M[i] >> 8);
    }
    static char str[] = "\0$t\0arch_cpu_idle";
    static Elf32_Sym syms[3];
    syms[1] = (Elf32_Sym){.st_name = 1, .st_value = 0x08000000u, .st_info = ELF32_ST_INFO(STB_LOCAL, STT_NOTYPE),
                          .st_shndx = 1};
    syms[2] = (Elf32_Sym){.st_name = 4, .st_value = 0x08000001u, .st_size = sizeof code,
                          .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1};
    const struct elf_writer_section sections[] = {
        {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x08000000u, code, sizeof code, ELF_T_BYTE, 0, 0, 0},
        {".symtab", SHT_SYMTAB, 0, 0, syms, sizeof syms, ELF_T_SYM, 3, 2 /* the first global */, sizeof(Elf32_Sym)},
        {".strtab", SHT_STRTAB, 0, 0, str, sizeof str, ELF_T_BYTE, 0, 0, 0},
    };
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    close(fd);
    char err[256];
    struct sym_table *t = elf_writer_write(path, sections, 3) ? sym_open(path, err, sizeof err) : NULL;
    if (!t)
        unlink(path);
    return t;
}

/* The idle thread's samples at that resume point are charged to arch_cpu_idle's entry by the host
 * (the Zephyr module's tick no longer does it): the idle shows as idle, with no interrupts-disabled
 * skid warning, and the other samples stay where they are. The resume point's search itself: no
 * wfi before the cpsie i, or the two halfwords inside 32-bit instructions, give none. */
static void test_idle_resume_charged_to_the_idle_function(void)
{
    CHECK(prof_idle_resume_in(IDLE_V7M, 18) == 2u * 15u);
    static const uint16_t idle_v6m[] = {0xb510, 0xf3bf, 0x8f4f, 0xbf30, 0xb662, 0xf3bf, 0x8f6f, 0xbd10};
    CHECK(prof_idle_resume_in(idle_v6m, 8) == 2u * 5u);
    static const uint16_t no_wait[] = {0xb672, 0x6803, 0x3301, 0x6003, 0xb662, 0x4770};
    CHECK(prof_idle_resume_in(no_wait, 6) == 0u);
    static const uint16_t inside[] = {0xf240, 0xbf30, 0xf240, 0xb662, 0x4770};
    CHECK(prof_idle_resume_in(inside, 5) == 0u);

    char path[] = "/tmp/cmprof-idle-XXXXXX";
    struct sym_table *syms = open_idle_elf(path);
    CHECK(syms != NULL);
    if (!syms)
        return;
    struct prof *p = prof_new(syms);
    struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_TEXT});
    /* 30 samples of the idle thread at the resume point, 10 of it in the wait's set-up */
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof text, "prof raw n=40");
    for (int i = 0; i < 80; i++) /* eight a line, as cmprof_dump() writes them: the PCs, then the tags */
        n += (size_t)snprintf(text + n, sizeof text - n, "%s %08x", i % 8 ? "" : i < 40 ? "\np" : "\ng",
                              i >= 40 ? 0x20000100u : i < 30 ? 0x0800001eu : 0x08000008u);
    n += (size_t)snprintf(text + n, sizeof text - n, "\nend\n");
    ingest_feed(in, (const uint8_t *)text, n);
    ingest_finish(in);
    const struct prof_row *rows;
    size_t k = prof_rows(p, PROF_BY_ADDRESS, false, &rows);
    double at_entry = 0, at_resume = 0;
    for (size_t i = 0; i < k; i++) {
        at_entry += strstr(rows[i].name, "08000000") ? rows[i].samples : 0;
        at_resume += strstr(rows[i].name, "0800001e") ? rows[i].samples : 0;
    }
    CHECK(prof_total(p) == 40 && at_entry == 30 && at_resume == 0);
    struct prof_diag d[8];
    size_t nd = prof_diagnose(p, d, 8);
    bool skid = false;
    for (size_t i = 0; i < nd; i++)
        skid |= d[i].kind == DIAG_SKID;
    CHECK(!skid);
    ingest_free(in);
    prof_free(p);
    sym_close(syms);
    unlink(path);
}

/* What the first bytes are (a UTF-16 scan, and with -f the detection over them) is worked out once per new
 * bytes: the live view asks ingest_losses at every repaint while no sample came, and each call scanned
 * them again (4 KB twice, and a detection pass). */
static void test_bytes_looked_at_once_per_new_bytes(void)
{
    struct prof *p = prof_new(NULL);
    struct ingest *in = ingest_new(p, &(struct ingest_options){.format = DETECT_TPIU, .format_option = "-f",
                                                                .tpiu_id = 1});
    const char *text = "cmprof v=7 arch=armv7m clk=25000000 period=25000\nlog: hello\n";
    ingest_feed(in, (const uint8_t *)text, strlen(text));
    char losses[8][INGEST_LOSS_TEXT];
    struct ingest_counts c;
    size_t nl = 0;
    for (int i = 0; i < 50; i++) /* fifty repaints */
        nl = ingest_losses(in, losses, 8);
    ingest_counts(in, &c);
    CHECK(nl >= 1 && strstr(losses[0], "its bytes are text") && c.byte_looks == 1);
    ingest_feed(in, (const uint8_t *)text, strlen(text)); /* new bytes: looked at once more */
    for (int i = 0; i < 50; i++)
        nl = ingest_losses(in, losses, 8);
    ingest_counts(in, &c);
    CHECK(nl >= 1 && strstr(losses[0], "its bytes are text") && c.byte_looks == 2);
    ingest_free(in);
    prof_free(p);
}

int main(void)
{
    RUN_TEST(test_sleeps_after_the_limit);
    RUN_TEST(test_bytes_looked_at_once_per_new_bytes);
    RUN_TEST(test_firmware_loss_bounds_the_shares);
    RUN_TEST(test_joined_stream_is_no_loss);
    RUN_TEST(test_never_announced_stays_a_loss);
    RUN_TEST(test_swo_joined_is_no_loss);
    RUN_TEST(test_profiles_fed_alike);
    RUN_TEST(test_waiting_said);
    RUN_TEST(test_window_knows_the_build);
    RUN_TEST(test_idle_resume_charged_to_the_idle_function);
    return check_summary();
}
