/* Format detection from a stream's first bytes. */
#include "../decode/detect.h"
#include "check.h"
#include "evlog.h"
#include "tpiu_gen.h"

#include <stdbool.h>
#include <string.h>

static void test_text(void)
{
    const char *s = "boot\r\nprof raw n=2\np 08000100 08000102\nend\n";
    CHECK(detect_format((const uint8_t *)s, strlen(s)) == DETECT_TEXT);
}

static void test_itm(void)
{
    const uint8_t s[] = {0, 0, 0, 0, 0, 0x80, 0x17, 0xb4, 0x02, 0x00, 0x08, 0x15, 0x00};
    CHECK(detect_format(s, sizeof s) == DETECT_ITM);
}

static void test_itm_that_is_mostly_printable(void)
{
    uint8_t s[256];
    for (size_t i = 0; i < sizeof s; i += 2) { /* port-0 printf: 01 'c' pairs; 0x01 is not text */
        s[i] = 0x01;
        s[i + 1] = 'a';
    }
    CHECK(detect_format(s, sizeof s) == DETECT_ITM);
}

static void test_tpiu(void)
{
    const uint8_t s[] = {0x12, 0xFF, 0xFF, 0xFF, 0x7F, 0x03, 0x17, 0x78, 0x56, 0x34, 0x12, 0x16, 0x7A,
                         0x56, 0x34, 0x12, 0x15, 0x00, 0x70, 0x70, 0x08};
    CHECK(detect_format(s, sizeof s) == DETECT_TPIU);
}

static void test_empty_and_names(void)
{
    CHECK(detect_format(NULL, 0) == DETECT_UNKNOWN);
    CHECK(detect_parse("auto") == DETECT_UNKNOWN && detect_parse("tpiu") == DETECT_TPIU);
    CHECK(detect_parse("swo") == -1);
    CHECK(strcmp(detect_name(DETECT_ITM), "itm") == 0);
}

/* ---- leading noise: each format is found past it, and the verdict says where it begins ---- */

static uint8_t buf[DETECT_WINDOW * 2];

static size_t noise(size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)rnd32();
    return n;
}

static size_t text_stream(uint8_t *out, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf((char *)out, cap, "@cmprof v=2 clk=168000000 base=08000000\nprof raw n=4000\n");
    while (n + 80 < cap)
        n += (size_t)snprintf((char *)out + n, cap - n, "p %08x %08x %08x %08x\n", 0x08000100u + rnd32() % 512,
                              0x08000100u + rnd32() % 512, 0x08000100u + rnd32() % 512, 0x08000100u + rnd32() % 512);
    return n;
}

static size_t itm_stream(uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (unsigned k = 0; n + 12 < cap; k++) {
        if (k % 64 == 0) {
            memcpy(out + n, "\0\0\0\0\0\x80", 6);
            n += 6;
        }
        uint32_t pc = 0x08000100u + rnd32() % 512;
        out[n++] = 0x17;
        for (int b = 0; b < 4; b++)
            out[n++] = (uint8_t)(pc >> (8 * b));
    }
    return n;
}

/* orbflow frames of ITM bytes; bad: a frame with a wrong sum after every third. */
static size_t orbflow_stream(uint8_t *out, size_t cap, bool bad)
{
    uint8_t itm[4096];
    size_t m = itm_stream(itm, sizeof itm), n = 0;
    out[n++] = 0;
    for (size_t i = 0, k = 0; i < m && n + 40 < cap; i += 20, k++) {
        uint8_t f[24] = {1}, sum = 1; /* tag 1, 20 bytes of payload, the sum: COBS by hand */
        size_t len = 1;
        for (size_t j = i; j < i + 20 && j < m; j++)
            f[len++] = itm[j];
        for (size_t j = 1; j < len; j++)
            sum = (uint8_t)(sum + f[j]);
        f[len++] = (uint8_t)(0u - sum + (bad && k % 3 == 2));
        size_t code_at = n++;
        uint8_t code = 1;
        for (size_t j = 0; j < len; j++) {
            if (f[j] == 0) {
                out[code_at] = code;
                code_at = n++;
                code = 1;
            } else {
                out[n++] = f[j];
                code++;
            }
        }
        out[code_at] = code;
        out[n++] = 0;
    }
    return n;
}

static size_t tpiu_syncless(uint8_t *out, size_t cap)
{
    static uint8_t frames[260000];
    size_t n = pack_frames(items, make_items(900), frames);
    n = n < cap ? n : cap;
    memcpy(out, frames, n);
    return n;
}

static void test_noise_before_text(void)
{
    size_t lead = noise(512), n = lead + text_stream(buf + lead, sizeof buf - lead);
    struct detect_verdict v;
    detect_judge(buf, n, &v);
    CHECK(v.format == DETECT_TEXT && v.skip >= lead && v.skip < lead + 50 && buf[v.skip - 1] == '\n');
    detect_judge(buf + lead, n - lead, &v); /* and no noise: nothing skipped */
    CHECK(v.format == DETECT_TEXT && v.skip == 0);
}

static void test_noise_before_itm(void)
{
    size_t lead = noise(512), n = lead + itm_stream(buf + lead, sizeof buf - lead);
    struct detect_verdict v;
    detect_judge(buf, n, &v);
    CHECK(v.format == DETECT_ITM && v.skip >= 400 && v.skip <= lead + 6);
    detect_judge(buf + lead, n - lead, &v);
    CHECK(v.format == DETECT_ITM && v.skip == 0);
}

static void test_noise_before_orbflow_and_bad_frames(void)
{
    size_t lead = noise(512), n = lead + orbflow_stream(buf + lead, sizeof buf - lead, false);
    struct detect_verdict v;
    detect_judge(buf, n, &v);
    CHECK(v.format == DETECT_ORBFLOW && v.skip >= 300 && v.skip <= lead && buf[v.skip] == 0);
    n = orbflow_stream(buf, sizeof buf, true); /* a bad frame after every two good ones */
    detect_judge(buf, n, &v);
    CHECK(v.format == DETECT_ORBFLOW && v.skip == 0);
}

static void test_tpiu_without_sync_and_after_noise(void)
{
    size_t n = tpiu_syncless(buf, DETECT_WINDOW);
    struct detect_verdict v;
    detect_judge(buf, n, &v);
    CHECK(v.format == DETECT_TPIU && v.skip == 0);
    for (unsigned lead = 1; lead < 16; lead += 7) { /* begun inside a frame */
        noise(lead);
        tpiu_syncless(buf + lead, DETECT_WINDOW - lead);
        detect_judge(buf, DETECT_WINDOW, &v);
        CHECK(v.format == DETECT_TPIU);
    }
    size_t lead = noise(512); /* noise, then frames: skipped to a frame boundary */
    n = lead + tpiu_syncless(buf + lead, sizeof buf - lead - 4);
    detect_judge(buf, n, &v);
    CHECK(v.format == DETECT_TPIU && v.skip >= 400 && v.skip <= lead + 16 && (lead + 16 - v.skip) % 16 == 0);
    memmove(buf + lead + 4, buf + lead, n - lead); /* a sync after the noise: TPIU, the noise skipped */
    memcpy(buf + lead, "\xff\xff\xff\x7f", 4);
    detect_judge(buf, n + 4, &v);
    CHECK(v.format == DETECT_TPIU && v.skip >= 400 && v.skip <= lead + 20);
}

/* One source whose only ID change came before the capture began (a formatter writes it once): TPIU,
 * not raw ITM (which read one sample of such a capture, and said nothing more). */
static void test_tpiu_one_source_joined_after_its_id(void)
{
    static uint8_t frames[260000];
    one_source = true;
    size_t n = pack_frames(items, make_items(900), frames);
    one_source = false;
    CHECK(frames[0] == 0x03 && n > DETECT_WINDOW + 16);
    struct detect_verdict v;
    detect_judge(frames + 16, DETECT_WINDOW, &v);
    CHECK(v.format == DETECT_TPIU);
    detect_judge(frames + 16 + 5, DETECT_WINDOW, &v); /* begun inside a frame too */
    CHECK(v.format == DETECT_TPIU);
    /* after noise on the line (300 and 1,000 random bytes): the stream, which writes no ID, does not outlive
     * the noise's ID changes in a judgement from the start; it is found after them, the noise skipped */
    static uint8_t s[DETECT_WINDOW + 1000];
    for (size_t noise = 300; noise <= 1000; noise += 700) {
        for (size_t k = 0; k < noise; k++)
            s[k] = (uint8_t)rnd32();
        memcpy(s + noise, frames + 16 * 40, sizeof s - noise);
        detect_judge(s, DETECT_WINDOW, &v);
        CHECK(v.format == DETECT_TPIU && v.skip >= noise && v.skip <= noise + 1024);
    }
}

int main(void)
{
    RUN_TEST(test_text);
    RUN_TEST(test_itm);
    RUN_TEST(test_itm_that_is_mostly_printable);
    RUN_TEST(test_tpiu);
    RUN_TEST(test_empty_and_names);
    RUN_TEST(test_noise_before_text);
    RUN_TEST(test_noise_before_itm);
    RUN_TEST(test_noise_before_orbflow_and_bad_frames);
    RUN_TEST(test_tpiu_without_sync_and_after_noise);
    RUN_TEST(test_tpiu_one_source_joined_after_its_id);
    return check_summary();
}
