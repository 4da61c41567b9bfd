/* The ingest in front of the profile: what --samples N counts, however the stream is cut. */
#include "../profile/ingest.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    struct ingest in;
    ingest_init(&in, p, DETECT_ITM, 1, false);
    in.max_samples = limit;
    for (size_t at = 0; at < len;) {
        size_t n = piece && len - at > piece ? piece : len - at;
        ingest_feed(&in, s + at, n);
        at += n;
    }
    ingest_finish(&in);
    struct counts c = {prof_total(p), prof_sleep(p), in.past_limit};
    ingest_free(&in);
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
        struct ingest in;
        ingest_init(&in, p, DETECT_UNKNOWN, 1, false);
        for (size_t at = 0, len = strlen(s); at < len; at += piece ? 1 : len)
            ingest_feed(&in, (const uint8_t *)s + at, piece ? 1 : len);
        ingest_finish(&in);
        CHECK(prof_total(p) == 16 && prof_lost(p) == 28); /* 8, 16 more, then 4 after a restart */
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
        ingest_free(&in);
        prof_reset(p);
        CHECK(prof_lost(p) == 0 && !prof_loss_bound(p, 1, &lo, &hi));
        prof_free(p);
    }
}

int main(void)
{
    RUN_TEST(test_sleeps_after_the_limit);
    RUN_TEST(test_firmware_loss_bounds_the_shares);
    return check_summary();
}
