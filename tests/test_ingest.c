/* The ingest in front of the profile: what --samples N counts, however the stream is cut. */
#include "../profile/ingest.h"
#include "check.h"

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

int main(void)
{
    RUN_TEST(test_sleeps_after_the_limit);
    return check_summary();
}
