/* orbflow frames (orbuculum's port 3402): COBS between zero delimiters, [tag][payload][sum]. The
 * frames are built here by an encoder written from the format's description. */
#include "../decode/detect.h"
#include "../decode/orbflow.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

static uint8_t got[1 << 16];
static size_t got_len;

static void collect(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    if (got_len + len <= sizeof got) {
        memcpy(got + got_len, buf, len);
        got_len += len;
    }
}

/* COBS: each run of non-zero bytes (at most 254) becomes its length + 1, then the run; a zero is
 * the end of a run shorter than 254. */
static size_t cobs_encode(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t o = 0, code_at = o++;
    uint8_t code = 1;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
            continue;
        }
        out[o++] = in[i];
        if (++code == 0xFF) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        }
    }
    out[code_at] = code;
    return o;
}

/* One frame, delimiter included; sum_error != 0 spoils the sum. */
static size_t frame(uint8_t tag, const uint8_t *payload, size_t n, int sum_error, uint8_t *out)
{
    uint8_t raw[600];
    uint8_t sum = tag;
    raw[0] = tag;
    memcpy(raw + 1, payload, n);
    for (size_t i = 0; i < n; i++)
        sum = (uint8_t)(sum + payload[i]);
    raw[n + 1] = (uint8_t)(0u - sum + (unsigned)sum_error);
    size_t k = cobs_encode(raw, n + 2, out);
    out[k++] = 0;
    return k;
}

static struct orbflow_decoder dec;

static void feed_split(const uint8_t *s, size_t n, size_t chunk, uint8_t tag)
{
    const struct byte_sink sink = {collect, NULL, NULL};
    got_len = 0;
    orbflow_init(&dec, tag);
    for (size_t i = 0; i < n; i += chunk)
        orbflow_feed(&dec, s + i, i + chunk <= n ? chunk : n - i, &sink);
}

/* A stream: a delimiter, then frames of tag 1 with PC packets (zeros included) and of tag 2. */
static size_t make_stream(uint8_t *s, uint8_t *itm, size_t *itm_len)
{
    size_t n = 0;
    s[n++] = 0;
    *itm_len = 0;
    uint32_t rng = 5;
    for (int f = 0; f < 40; f++) {
        uint8_t payload[400];
        size_t k = 0;
        int len = f == 7 ? 300 : 1 + f % 9; /* one frame longer than a COBS run */
        for (int p = 0; p < len; p++) {
            rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
            uint32_t pc = 0x08000000u + (rng & 0xFFFEu);
            payload[k++] = 0x17;
            memcpy(payload + k, &pc, 4);
            k += 4;
            if (k > 395)
                break;
        }
        n += frame(1, payload, k, 0, s + n);
        memcpy(itm + *itm_len, payload, k);
        *itm_len += k;
        if (f % 5 == 0)
            n += frame(2, (const uint8_t *)"\x01\x02\x03", 3, 0, s + n);
    }
    return n;
}

static void test_frames_decode_split_anywhere(void)
{
    static uint8_t s[1 << 15], itm[1 << 15], whole[1 << 15];
    size_t itm_len, n = make_stream(s, itm, &itm_len);
    feed_split(s, n, n, 1);
    CHECK(got_len == itm_len && memcmp(got, itm, itm_len) == 0);
    CHECK(dec.stats.frames == 48 && dec.stats.other_tags == 8 && dec.stats.bad_sums == 0 && dec.stats.bad_cobs == 0);
    char tags[32];
    CHECK(orbflow_other_tags(&dec.stats, tags, sizeof tags) == 1 && strcmp(tags, "2") == 0);
    memcpy(whole, got, got_len);
    size_t whole_len = got_len;
    int same = 1;
    for (size_t chunk = 1; chunk < 64; chunk++) {
        feed_split(s, n, chunk, 1);
        same &= got_len == whole_len && memcmp(got, whole, whole_len) == 0;
    }
    CHECK(same);
    feed_split(s, n, n, 2); /* the other stream */
    CHECK(got_len == 8 * 3 && dec.stats.other_tags == 40);
}

static void test_bad_frames_are_dropped_and_counted(void)
{
    static uint8_t s[4096];
    const uint8_t pc[] = {0x17, 0x00, 0x01, 0x00, 0x08};
    size_t n = 0;
    s[n++] = 0;
    n += frame(1, pc, 5, 0, s + n);
    n += frame(1, pc, 5, 1, s + n); /* bad sum */
    size_t lost_at = n;
    n += frame(1, pc, 5, 0, s + n);
    s[n - 1] = 0x42; /* a lost delimiter: this frame runs into the next */
    n += frame(1, pc, 5, 0, s + n);
    n += frame(1, pc, 5, 0, s + n);
    feed_split(s, n, n, 1);
    CHECK(got_len == 2 * 5 && dec.stats.frames == 2);
    CHECK(dec.stats.bad_sums + dec.stats.bad_cobs == 2);
    (void)lost_at;
    /* a capture that starts mid-frame: the bytes before the first delimiter are skipped */
    feed_split(s + 3, n - 3, n, 1);
    CHECK(dec.stats.unsynced > 0 && got_len == 5 * 1);
}

static void test_detected_and_not_confused(void)
{
    static uint8_t s[1 << 15], itm[1 << 15];
    size_t itm_len, n = make_stream(s, itm, &itm_len);
    CHECK(detect_format(s, n) == DETECT_ORBFLOW);
    /* raw ITM with sync packets (runs of zeros) stays ITM */
    uint8_t raw[4096];
    size_t k = 0;
    for (int i = 0; i < 200; i++) {
        static const uint8_t sync[] = {0, 0, 0, 0, 0, 0x80};
        memcpy(raw + k, sync, 6);
        k += 6;
        memcpy(raw + k, itm + 5 * i, 10);
        k += 10;
    }
    CHECK(detect_format(raw, k) == DETECT_ITM);
    CHECK(detect_parse("orbflow") == DETECT_ORBFLOW && strcmp(detect_name(DETECT_ORBFLOW), "orbflow") == 0);
}

/* A capture that starts with a long run of zeros (an idle link, or delimiters only): the run proves
 * nothing, the frames after it decide, however far past the detection window they start. */
static void test_detected_after_leading_zeros(void)
{
    static uint8_t s[1 << 16], itm[1 << 15];
    for (size_t zeros = 1; zeros <= 20000; zeros = zeros * 3 + 7) {
        memset(s, 0, zeros);
        size_t itm_len, n = zeros + make_stream(s + zeros, itm, &itm_len);
        CHECK(detect_format(s, n) == DETECT_ORBFLOW);
        uint8_t raw[64] = {0x80}; /* and raw ITM after the same run stays ITM */
        for (size_t k = 1; k + 5 <= sizeof raw; k += 5)
            memcpy(raw + k, "\x17\x34\x12\x00\x08", 5);
        memcpy(s + zeros, raw, sizeof raw);
        CHECK(detect_format(s, zeros + sizeof raw) == DETECT_ITM);
    }
    memset(s, 0, DETECT_WINDOW * 2); /* zeros alone: ITM (sync), as before */
    CHECK(detect_format(s, DETECT_WINDOW * 2) == DETECT_ITM);
}

/* A stream that pauses early (a server that closed, a target halted) is settled on the bytes at
 * hand: an orbflow start is never taken for ITM, however short; real ITM still is ITM at once. */
static void test_settled_on_a_start(void)
{
    static uint8_t s[1 << 15], itm[1 << 15];
    size_t itm_len, n = make_stream(s, itm, &itm_len);
    int never_itm = 1, decided = 0;
    for (size_t k = 1; k < 3000 && k < n; k++) {
        enum detect_format f = detect_format_so_far(s, k);
        never_itm &= f == DETECT_UNKNOWN || f == DETECT_ORBFLOW;
        decided += f == DETECT_ORBFLOW;
    }
    CHECK(never_itm);
    CHECK(decided > 0 && detect_format_so_far(s, n) == DETECT_ORBFLOW);
    memset(s, 0, 100); /* zeros alone wait too */
    CHECK(detect_format_so_far(s, 100) == DETECT_UNKNOWN && detect_format(s, 100) == DETECT_ITM);
    const uint8_t raw[] = {0, 0, 0, 0, 0, 0x80, 0x17, 0x34, 0x12, 0x00, 0x08, 0x17, 0x38, 0x12, 0x00, 0x08};
    CHECK(detect_format_so_far(raw, sizeof raw) == DETECT_ITM);
    const char *text = "prof raw n=2\np 08000100 08000102\n";
    CHECK(detect_format_so_far((const uint8_t *)text, strlen(text)) == DETECT_TEXT);
}

/* After a gap the bytes up to the next delimiter may be the tail of a frame the gap cut: they go with
 * the gap. More than a frame holds cannot be such a tail: they are counted (they were not), however
 * they are fed; a stream that ends after a gap inside a frame says the cut. */
static void test_bytes_after_a_gap_are_counted_past_a_frame(void)
{
    static uint8_t s[3 * ORBFLOW_MAX + 64];
    const uint8_t pc[] = {0x17, 0x00, 0x01, 0x00, 0x08};
    size_t head = 0;
    s[head++] = 0;
    head += frame(1, pc, 5, 0, s + head);
    memset(s + head, 0x55, 3 * ORBFLOW_MAX); /* after the gap: never a delimiter */
    const size_t tail = 3 * ORBFLOW_MAX;
    const struct byte_sink sink = {collect, NULL, NULL};
    for (size_t chunk = 1; chunk <= tail; chunk = chunk * 7 + 3) {
        got_len = 0;
        orbflow_init(&dec, 1);
        orbflow_feed(&dec, s, head, &sink);
        orbflow_rejoin(&dec);
        for (size_t i = 0; i < tail; i += chunk)
            orbflow_feed(&dec, s + head + i, i + chunk <= tail ? chunk : tail - i, &sink);
        CHECK(got_len == 5 && dec.stats.after_gap == tail && dec.stats.unsynced == 0 && orbflow_cut(&dec) == 0);
    }
    /* a frame's tail, then frames: the tail goes with the gap, the frames decode */
    size_t n = head;
    memset(s + n, 0x33, 9);
    n += 9;
    s[n++] = 0;
    n += frame(1, pc, 5, 0, s + n);
    got_len = 0;
    orbflow_init(&dec, 1);
    orbflow_feed(&dec, s, head, &sink);
    orbflow_rejoin(&dec);
    orbflow_feed(&dec, s + head, 4, &sink);
    CHECK(orbflow_cut(&dec) == 4); /* the input could end here: 4 bytes of a cut frame */
    orbflow_feed(&dec, s + head + 4, n - head - 4, &sink);
    CHECK(got_len == 10 && dec.stats.unsynced == 0 && dec.stats.after_gap == 0 && dec.stats.frames == 2 &&
          orbflow_cut(&dec) == 0);
}

int main(void)
{
    RUN_TEST(test_frames_decode_split_anywhere);
    RUN_TEST(test_bad_frames_are_dropped_and_counted);
    RUN_TEST(test_detected_and_not_confused);
    RUN_TEST(test_detected_after_leading_zeros);
    RUN_TEST(test_settled_on_a_start);
    RUN_TEST(test_bytes_after_a_gap_are_counted_past_a_frame);
    return check_summary();
}
