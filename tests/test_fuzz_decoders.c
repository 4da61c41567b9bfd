/* Random and mutated input for every decoder, with a fixed seed: none may crash, hang or
 * disagree with itself when the same input is split differently. Run under ASan/UBSan by
 * tests/run.sh. Argument: number of inputs (default 1,000,000), and a tenth as many again mutated from
 * a dump in the layout the firmware writes (eight words a line), which the text decoder reads on a
 * path of its own. */
#include "../decode/detect.h"
#include "../decode/itm.h"
#include "../decode/orbflow.h"
#include "../decode/text.h"
#include "../decode/tpiu.h"
#include "check.h"
#include "evlog.h"

static uint64_t events;

/* An order-sensitive digest per decoder: decoders fed in turn interleave their events. */
static void digest_event(void *ctx, const struct ev *e)
{
    uint64_t *digest = ctx;
    events++;
    struct ev_columns c = evlog_columns(e);
    *digest = *digest * 31u + (uint64_t)e->type * 7u + c.addr + c.value + c.count + c.text_len;
}

struct itm_chain {
    struct itm_decoder itm;
    struct ev_sink sink;
};

static void to_itm(void *ctx, const uint8_t *buf, size_t len)
{
    struct itm_chain *c = ctx;
    itm_feed(&c->itm, buf, len, &c->sink);
}

static int bytes_accounted = 1; /* every decoder counted every byte it was fed */

/* Decode buf with every decoder, in one piece or split at `cut`; returns a digest of the events. */
static uint64_t decode_all(const uint8_t *buf, size_t len, size_t cut)
{
    uint64_t digest[5] = {0, 0, 0, 0, 0};
    struct ev_sink sinks[3] = {{digest_event, &digest[0]}, {digest_event, &digest[1]}, {digest_event, &digest[2]}};
    struct itm_decoder itm, itm2;
    struct itm_chain chain = {.sink = {digest_event, &digest[3]}};
    struct itm_chain chain2 = {.sink = {digest_event, &digest[4]}};
    struct orbflow_decoder orb;
    struct byte_sink bs2 = {to_itm, &chain2, NULL};
    struct text_decoder text;
    struct tpiu_decoder tpiu;
    struct byte_sink bs = {to_itm, &chain, NULL};
    itm_init(&itm, false);
    itm_init(&itm2, true);
    itm_init(&chain.itm, false);
    text_init(&text);
    tpiu_init(&tpiu, 1);
    itm_init(&chain2.itm, false);
    orbflow_init(&orb, 1);
    size_t parts[2][2] = {{0, cut}, {cut, len - cut}};
    for (int p = 0; p < 2; p++) {
        const uint8_t *b = buf + parts[p][0];
        size_t n = parts[p][1];
        itm_feed(&itm, b, n, &sinks[0]);
        itm_feed(&itm2, b, n, &sinks[1]);
        text_feed(&text, b, n, &sinks[2]);
        tpiu_feed(&tpiu, b, n, &bs);
        orbflow_feed(&orb, b, n, &bs2);
    }
    text_finish(&text, &sinks[2]);
    tpiu_finish(&tpiu, &bs);
    text_free(&text);
    (void)detect_format(buf, len);
    bytes_accounted &= itm.stats.bytes == len && itm2.stats.bytes == len && text.stats.bytes == len &&
                       tpiu.stats.bytes == len && orb.stats.bytes == len;
    return digest[0] ^ (digest[1] * 3u) ^ (digest[2] * 5u) ^ (digest[3] * 7u) ^ (digest[4] * 11u);
}

static const char TEXT_SEED[] = "boot\nprof raw n=4\np 08000100 08000102 08000104 08000106\ng 20000100 20000100 "
                                "20000200 20000200\nend\nprof hist base=0x08000000 shift=2 n=3 out=0\nh 0001 0002\n"
                                "end\ntask 20000100 motor\nsect 0 n=1 cur=5 min=5 max=5 sum=5\n";
static const uint8_t ITM_SEED[] = {0, 0, 0, 0, 0, 0x80, 0x17, 0xb4, 0x02, 0x00, 0x08, 0x01, 0x41, 0xC0, 0x85,
                                   0x12, 0x0E, 0x0F, 0x10, 0x15, 0x00, 0x70, 0x94, 0x81, 0x02, 0x08, 0x30,
                                   0xB4, 0x81, 0x80, 0x80, 0x80, 0x80, 0x01, 0x47, 1, 2, 3, 4, 0x8E, 1, 2};
static const uint8_t ORBFLOW_SEED[] = {0x00, 0x05, 0x01, 0x17, 0xb4, 0x02, 0x05, 0x08, 0x01, 0x41, 0x17, 0x02,
                                       0x01, 0x03, 0x08, 0xc8, 0x00, 0x05, 0x02, 0x01, 0x02, 0xfb, 0x00, 0x03,
                                       0x01, 0x15, 0x03, 0x70, 0x7a, 0x00};
static const uint8_t TPIU_SEED[] = {0xFF, 0xFF, 0xFF, 0x7F, 0x03, 0x17, 0x78, 0x56, 0x34, 0x12, 0x16,
                                    0x7A, 0x56, 0x34, 0x12, 0x15, 0x00, 0x70, 0x70, 0x08, 0xFF, 0x7F};

/* (mutated from in make_dump_input: lines of eight words, ending in "\r\n" and, the block unclosed at
 * the input's end, in "\r") */
static const char DUMP_SEED[] = "prof raw n=16\np 08000100 08000102 08000104 08000106 08000108 0800010a 0800010c "
                                "0800010e\r\np 08000110 08000112 08000114 08000116 08000118 0800011a 0800011c 0800011e\n"
                                "g 20000100 20000100 20000100 20000100 20000200 20000200 20000200 20000200\r\n"
                                "g 20000100 20000100 20000100 20000100 20000200 20000200 20000200 20000200\r";

/* Seed's n bytes into buf, each deleted, preceded by a random byte, bit-flipped or replaced by an
 * interesting byte with a chance of 1 in 64; returns the length. */
static size_t mutate(const uint8_t *seed, size_t n, uint8_t *buf, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < n && len < cap; i++) { /* copy with mutations */
        uint32_t m = rnd32() % 64;
        if (m == 0)
            continue;                                  /* delete */
        if (m == 1 && len < cap)
            buf[len++] = (uint8_t)rnd32();             /* insert */
        uint8_t b = seed[i];
        if (m == 2)
            b ^= (uint8_t)(1u << (rnd32() % 8));       /* flip a bit */
        if (m == 3)
            b = (uint8_t)"\n\r 0p0x\xff\x7f\x80"[rnd32() % 10]; /* an interesting byte */
        if (len < cap)
            buf[len++] = b;
    }
    return len;
}

static size_t make_input(uint8_t *buf, size_t cap)
{
    uint32_t r = rnd32();
    size_t len;
    if (r % 5 == 0) { /* pure noise */
        len = 1 + rnd32() % 200;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rnd32();
        return len;
    }
    const uint8_t *seed;
    size_t n;
    if (r % 5 == 1) {
        seed = (const uint8_t *)TEXT_SEED;
        n = sizeof TEXT_SEED - 1;
    } else if (r % 5 == 4) {
        seed = ORBFLOW_SEED;
        n = sizeof ORBFLOW_SEED;
    } else if (r % 5 == 2) {
        seed = ITM_SEED;
        n = sizeof ITM_SEED;
    } else {
        seed = TPIU_SEED;
        n = sizeof TPIU_SEED;
    }
    return mutate(seed, n, buf, cap);
}

static size_t make_dump_input(uint8_t *buf, size_t cap)
{
    return mutate((const uint8_t *)DUMP_SEED, sizeof DUMP_SEED - 1, buf, cap);
}

static long inputs = 1000000;

static void test_random_and_mutated_inputs(void)
{
    static uint8_t buf[512];
    int consistent = 1;
    for (long k = 0; k < inputs + inputs / 10; k++) {
        size_t len = k < inputs ? make_input(buf, sizeof buf) : make_dump_input(buf, sizeof buf);
        uint64_t whole = decode_all(buf, len, len);
        if (k % 16 == 0) { /* spot-check that a split gives the same events */
            uint64_t split = decode_all(buf, len, len ? rnd32() % len : 0);
            consistent &= whole == split;
        }
    }
    CHECK(consistent);
    CHECK(bytes_accounted);
    CHECK(events > 0);
    printf("     %ld inputs and %ld from a dump, %llu events\n", inputs, inputs / 10, (unsigned long long)events);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        inputs = atol(argv[1]);
    RUN_TEST(test_random_and_mutated_inputs);
    return check_summary();
}
