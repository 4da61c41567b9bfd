/* GDB remote protocol framing: checksums, escapes, run lengths, acks, garbage, and the same
 * packets however the bytes are split. */
#include "../source/rsp.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

static char got[64][256];
static bool notified[64]; /* the packet was a notification ('%') */
static size_t n_got, n_acks, n_nacks;
static struct rsp_decoder dec;

static void on_packet(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    if (n_got < 64) {
        snprintf(got[n_got], sizeof got[0], "%.*s", (int)len, data);
        notified[n_got] = dec.notification;
    }
    n_got++;
}

static void on_ack(void *ctx, bool positive)
{
    (void)ctx;
    if (positive)
        n_acks++;
    else
        n_nacks++;
}

static void feed_split(const char *s, size_t n, size_t chunk)
{
    const struct rsp_sink sink = {on_packet, on_ack, NULL};
    n_got = n_acks = n_nacks = 0;
    rsp_init(&dec);
    for (size_t i = 0; i < n; i += chunk)
        rsp_feed(&dec, (const uint8_t *)s + i, i + chunk <= n ? chunk : n - i, &sink);
}

static void feed(const char *s)
{
    feed_split(s, strlen(s), strlen(s));
}

static void test_frames_and_checksums(void)
{
    char f[64];
    size_t n = rsp_frame(f, sizeof f, "qSupported", 10);
    CHECK(n == 14 && memcmp(f, "$qSupported#37", 14) == 0);
    n = rsp_frame(f, sizeof f, "a#b$c}d*", 8); /* each special byte escaped: '}' then byte ^ 0x20 */
    f[n] = 0;
    CHECK(strncmp(f, "$a}\x03" "b}\x04" "c}]d}\x0a#", 14) == 0);
    feed(f); /* and read back as sent */
    CHECK(n_got == 1 && strcmp(got[0], "a#b$c}d*") == 0);
    CHECK(rsp_frame(f, 8, "qSupported", 10) == 0); /* no room: nothing, never a cut packet */
    feed("+$OK#9a-$T05thread:01;#07");
    CHECK(n_got == 2 && strcmp(got[0], "OK") == 0 && strcmp(got[1], "T05thread:01;") == 0);
    CHECK(n_acks == 1 && n_nacks == 1 && dec.stats.bad_checksums == 0);
}

static void test_bad_packets_are_counted_and_dropped(void)
{
    feed("$OK#9b$OK#zz$E01#a6");
    CHECK(n_got == 1 && strcmp(got[0], "E01") == 0 && dec.stats.bad_checksums == 2);
    feed("garbage$O$OK#9a"); /* a '$' inside a packet starts over */
    CHECK(n_got == 1 && strcmp(got[0], "OK") == 0 && dec.stats.junk >= 7);
}

static void test_run_length_encoding(void)
{
    /* "0* " is '0' and 3 more (' ' = 32 = 29 + 3): 0000 */
    char f[64];
    const char *raw = "10* 2";
    unsigned sum = 0;
    for (const char *p = raw; *p; p++)
        sum += (unsigned char)*p;
    snprintf(f, sizeof f, "$%s#%02x", raw, sum & 0xFF);
    feed(f);
    CHECK(n_got == 1 && strcmp(got[0], "100002") == 0);
    snprintf(f, sizeof f, "$*!#%02x", ('*' + '!') & 0xFF); /* a run with nothing to repeat */
    feed(f);
    CHECK(n_got == 0);
}

static void test_too_long_is_dropped(void)
{
    static char big[RSP_MAX + 64];
    size_t n = 0;
    unsigned sum = 0;
    big[n++] = '$';
    for (int i = 0; i < RSP_MAX + 10; i++) {
        big[n++] = 'x';
        sum += 'x';
    }
    n += (size_t)snprintf(big + n, sizeof big - n, "#%02x$OK#9a", sum & 0xFF);
    feed_split(big, n, n);
    CHECK(n_got == 1 && strcmp(got[0], "OK") == 0 && dec.stats.too_long == 1);
}

static void test_split_anywhere(void)
{
    const char *s = "+$qXfer}]#1f-$T05thread:01;#07garbage$E01#a6$10* 2#";
    char all[8][256];
    feed(s);
    size_t want = n_got;
    for (size_t i = 0; i < want; i++)
        snprintf(all[i], sizeof all[0], "%s", got[i]);
    int same = 1;
    for (size_t chunk = 1; chunk < strlen(s); chunk++) {
        feed_split(s, strlen(s), chunk);
        same &= n_got == want;
        for (size_t i = 0; i < want && i < n_got; i++)
            same &= strcmp(all[i], got[i]) == 0;
    }
    CHECK(want >= 2 && same);
}

/* A '%' packet is a notification, never an answer: the reader is told which packets were, however
 * the bytes are split, and a '$' that cuts one short makes the next a reply again. */
static void test_notifications_are_flagged(void)
{
    const char *s = "%Stop:T05#99$OK#9a%Stop:T05$OK#9a";
    bool same = true;
    for (size_t chunk = 1; chunk <= strlen(s); chunk++) {
        feed_split(s, strlen(s), chunk);
        same &= n_got == 3 && strcmp(got[0], "Stop:T05") == 0 && notified[0] && strcmp(got[1], "OK") == 0 &&
                !notified[1] && strcmp(got[2], "OK") == 0 && !notified[2];
    }
    CHECK(same);
}

static void test_random_bytes_never_crash(void)
{
    uint32_t rng = 7;
    static uint8_t buf[1 << 16];
    for (size_t i = 0; i < sizeof buf; i++) {
        rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
        buf[i] = rng % 7 == 0 ? (uint8_t)"$#}*+-"[rng % 6] : (uint8_t)rng;
    }
    const struct rsp_sink sink = {on_packet, on_ack, NULL};
    rsp_init(&dec);
    n_got = 0;
    rsp_feed(&dec, buf, sizeof buf, &sink);
    CHECK(dec.stats.packets == n_got);
}

int main(void)
{
    RUN_TEST(test_frames_and_checksums);
    RUN_TEST(test_bad_packets_are_counted_and_dropped);
    RUN_TEST(test_run_length_encoding);
    RUN_TEST(test_too_long_is_dropped);
    RUN_TEST(test_split_anywhere);
    RUN_TEST(test_notifications_are_flagged);
    RUN_TEST(test_random_bytes_never_crash);
    return check_summary();
}
