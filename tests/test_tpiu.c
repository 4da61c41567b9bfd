/* TPIU deframer: the design-notes vector, IDs, half syncs, chunk invariance. */
#include "../decode/itm.h"
#include "../decode/tpiu.h"
#include "check.h"
#include "evlog.h"

static struct evlog log_a, log_b;

struct chain {
    struct itm_decoder itm;
    struct ev_sink sink;
};

static void to_itm(void *ctx, const uint8_t *buf, size_t len)
{
    struct chain *c = ctx;
    itm_feed(&c->itm, buf, len, &c->sink);
}

static void run(const uint8_t *s, size_t n, size_t chunk, uint8_t id, struct evlog *l, struct tpiu_decoder *t)
{
    static struct chain c;
    evlog_reset(l);
    itm_init(&c.itm, false);
    c.sink = (struct ev_sink){evlog_event, l};
    struct byte_sink bs = {to_itm, &c};
    tpiu_init(t, id);
    for (size_t i = 0; i < n; i += chunk)
        tpiu_feed(t, s + i, i + chunk <= n ? chunk : n - i, &bs);
}

static const uint8_t VECTOR[] = {0xFF, 0xFF, 0xFF, 0x7F, 0x03, 0x17, 0x78, 0x56, 0x34, 0x12, 0x16, 0x7A,
                                 0x56, 0x34, 0x12, 0x15, 0x00, 0x70, 0x70, 0x08};

static void test_design_notes_vector(void)
{
    struct tpiu_decoder t;
    run(VECTOR, sizeof VECTOR, sizeof VECTOR, 1, &log_a, &t);
    CHECK(t.stats.syncs == 1 && t.stats.frames == 1);
    CHECK(log_a.count[EV_PC] == 2 && log_a.count[EV_SLEEP] == 1 && log_a.count[EV_OVERFLOW] == 2);
    CHECK(strstr(log_a.buf, "a=12345678") != NULL && strstr(log_a.buf, "a=1234567a") != NULL);
}

static void test_other_id_is_filtered(void)
{
    struct tpiu_decoder t;
    run(VECTOR, sizeof VECTOR, sizeof VECTOR, 2, &log_a, &t);
    CHECK(log_a.len == 0 && t.stats.other_ids > 0);
}

static void test_nothing_before_sync(void)
{
    uint8_t s[40];
    memcpy(s, VECTOR + 4, 16); /* a frame with no sync before it */
    memcpy(s + 16, VECTOR, sizeof VECTOR);
    struct tpiu_decoder t;
    run(s, 16 + sizeof VECTOR, 1, 1, &log_a, &t);
    CHECK(t.stats.unsynced == 16 && log_a.count[EV_PC] == 2);
}

static void test_half_sync_dropped(void)
{
    uint8_t s[32];
    memcpy(s, VECTOR, 6);        /* sync, 03 17 */
    s[6] = 0xFF;                 /* half sync at an even position of the frame */
    s[7] = 0x7F;
    memcpy(s + 8, VECTOR + 6, sizeof VECTOR - 6);
    struct tpiu_decoder t;
    run(s, sizeof VECTOR + 2, 1, 1, &log_a, &t);
    CHECK(t.stats.half_syncs == 1 && log_a.count[EV_PC] == 2 && log_a.count[EV_OVERFLOW] == 2);
}

static void test_aux_bit_keeps_old_id_for_next_byte(void)
{
    /* byte 0 switches to ID 2 with aux=1: byte 1 (0x70, overflow) still belongs to the old ID 1 */
    uint8_t s[20] = {0xFF, 0xFF, 0xFF, 0x7F, 0x03, 0x70, 0x05, 0x70};
    for (int i = 8; i < 19; i++)
        s[i] = 0x00;
    s[19] = 0x02; /* aux: bit 1 set for byte 2 (the ID 2 change) */
    struct tpiu_decoder t;
    run(s, sizeof s, sizeof s, 1, &log_a, &t);
    CHECK(log_a.count[EV_OVERFLOW] == 2);
}

static void test_chunk_invariance(void)
{
    static uint8_t s[20 * 64];
    size_t n = 0;
    for (int f = 0; f < 64; f++) {
        if (f % 8 == 0) {
            memcpy(s + n, VECTOR, sizeof VECTOR);
            n += sizeof VECTOR;
        } else {
            memcpy(s + n, VECTOR + 4, 16);
            n += 16;
        }
    }
    struct tpiu_decoder t1, t2;
    run(s, n, n, 1, &log_a, &t1);
    CHECK(log_a.count[EV_PC] == 128 && log_a.count[EV_OVERFLOW] == 128);
    int all_equal = 1;
    for (size_t k = 1; k <= 37; k++) {
        run(s, n, k, 1, &log_b, &t2);
        all_equal &= evlog_equal(&log_a, &log_b) && memcmp(&t1.stats, &t2.stats, sizeof t1.stats) == 0;
    }
    CHECK(all_equal);
}

int main(void)
{
    RUN_TEST(test_design_notes_vector);
    RUN_TEST(test_other_id_is_filtered);
    RUN_TEST(test_nothing_before_sync);
    RUN_TEST(test_half_sync_dropped);
    RUN_TEST(test_aux_bit_keeps_old_id_for_next_byte);
    RUN_TEST(test_chunk_invariance);
    free(log_a.buf);
    free(log_b.buf);
    return check_summary();
}
