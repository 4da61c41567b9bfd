/* ITM decoder: protocol vectors, counters, chunk invariance. */
#include "../decode/itm.h"
#include "check.h"
#include "evlog.h"
#include "pc_match.h"

static struct evlog log_a, log_b;

static void decode(const uint8_t *buf, size_t len, bool wait_sync, struct evlog *l, struct itm_decoder *d)
{
    struct ev_sink sink = {evlog_event, l};
    evlog_reset(l);
    itm_init(d, wait_sync);
    itm_feed(d, buf, len, &sink);
}

static const uint8_t SYNC[] = {0, 0, 0, 0, 0, 0x80};

static void test_pc_sample_and_sleep(void)
{
    const uint8_t s[] = {0x17, 0xb4, 0x02, 0x00, 0x08, 0x15, 0x00};
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(log_a.count[EV_PC] == 1 && log_a.count[EV_SLEEP] == 1);
    CHECK(strstr(log_a.buf, "a=080002b4") != NULL);
    CHECK(d.stats.errors == 0 && d.stats.packets == 2);
}

static void test_sync_and_overflow(void)
{
    const uint8_t s[] = {0, 0, 0, 0, 0, 0x80, 0x70, 0, 0, 0, 0, 0, 0, 0, 0x80};
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.syncs == 2 && d.stats.overflows == 1 && d.stats.errors == 0);
    CHECK(log_a.count[EV_SYNC] == 2 && log_a.count[EV_OVERFLOW] == 1);
}

static void test_short_zero_run_is_an_error(void)
{
    const uint8_t s[] = {0, 0, 0x80, 0x17, 1, 2, 3, 4}; /* too few zeros: not a sync */
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.errors == 1);
    CHECK(log_a.count[EV_PC] == 0); /* hunting: nothing decoded until a real sync */
}

static void test_local_timestamps(void)
{
    /* format 2 TS=3 (the header 0x30 that one parser rejects); format 1 with two bytes */
    const uint8_t s[] = {0x30, 0xC0, 0x85, 0x12, 0xD0, 0x05, 0x60};
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.errors == 0);
    CHECK(log_a.count[EV_TIMESTAMP] == 4);
    CHECK(strstr(log_a.buf, "v=3 ") != NULL);
    CHECK(strstr(log_a.buf, "i=0 k=0 v=905 ") != NULL); /* 0x05 | 0x12 << 7 = 0x905 */
    CHECK(strstr(log_a.buf, "i=1 k=0 v=5 ") != NULL);   /* TC = 1 */
    CHECK(strstr(log_a.buf, "v=6 ") != NULL);
}

static void test_global_timestamps(void)
{
    const uint8_t s[] = {0x94, 0x81, 0x82, 0x03, 0xB4, 0x81, 0x80, 0x80, 0x80, 0x80, 0x01};
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.errors == 0 && log_a.count[EV_GLOBAL_TS] == 2);
    CHECK(strstr(log_a.buf, "i=1 k=0 v=c101 ") != NULL); /* 1 | 2 << 7 | 3 << 14 */
}

static void test_too_long_continuation_is_an_error(void)
{
    const uint8_t s[] = {0xC0, 0x80, 0x80, 0x80, 0x80, 0x01};
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.errors == 1 && log_a.count[EV_TIMESTAMP] == 0);
}

static void test_reserved_headers(void)
{
    static const uint8_t reserved[] = {0x80, 0x90, 0xA0, 0xB0, 0x04, 0x14, 0x24, 0x74, 0xF4, 0x1D, 0x3F, 0x07};
    for (size_t i = 0; i < sizeof reserved; i++) {
        uint8_t s[8] = {reserved[i], 0x17, 1, 2, 3, 4};
        struct itm_decoder d;
        decode(s, 6, false, &log_a, &d);
        CHECK(d.stats.errors == 1);
        CHECK(log_a.count[EV_PC] == 0);
    }
}

static void test_extension_is_not_misread(void)
{
    /* 0x08 is an extension (page 0); 0x09-0x0B are software writes to port 1 */
    const uint8_t s[] = {0x08, 0x09, 0x41, 0x0A, 0x01, 0x02, 0x0B, 1, 2, 3, 4};
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.errors == 0);
    CHECK(log_a.count[EV_EXTENSION] == 1 && log_a.count[EV_SOFTWARE] == 3);
    CHECK(strstr(log_a.buf, "s=4 i=1 k=0 v=4030201 ") != NULL);
}

static void test_stimulus_page(void)
{
    const uint8_t s[] = {0x28, 0x01, 0x55, 0x08, 0x01, 0x66}; /* page 2: port 0 -> 64; back to page 0 */
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(strstr(log_a.buf, "s=1 i=64 k=0 v=55 ") != NULL);
    CHECK(strstr(log_a.buf, "s=1 i=0 k=0 v=66 ") != NULL);
}

static void test_hardware_packets(void)
{
    const uint8_t s[] = {0x05, 0x24,             /* event counter: Exc | Cyc? bits */
                         0x0E, 0x0F, 0x10,       /* exception 15, enter */
                         0x0E, 0x10, 0x21,       /* exception 0x110 (272), exit */
                         0x47, 1, 2, 3, 4,       /* data trace PC, comparator 0 (id 8) */
                         0x4E, 0x34, 0x12,       /* data trace address offset, comparator 0 (id 9) */
                         0x85, 0xAB,             /* data trace read value, comparator 0 (id 16), 1 byte */
                         0x8E, 0xCD, 0xAB};      /* data trace write value, comparator 0 (id 17), 2 bytes */
    struct itm_decoder d;
    decode(s, sizeof s, false, &log_a, &d);
    CHECK(d.stats.errors == 0);
    CHECK(log_a.count[EV_EVENT_COUNTER] == 1 && log_a.count[EV_EXCEPTION] == 2 && log_a.count[EV_DATA_TRACE] == 4);
    CHECK(strstr(log_a.buf, "i=15 k=0 v=1 ") != NULL);
    CHECK(strstr(log_a.buf, "i=272 k=0 v=2 ") != NULL);
    CHECK(strstr(log_a.buf, "s=2 i=0 k=1 v=1234 ") != NULL);
    CHECK(strstr(log_a.buf, "s=1 i=0 k=2 v=ab ") != NULL);
    CHECK(strstr(log_a.buf, "s=2 i=0 k=3 v=abcd ") != NULL);
}

static void test_wait_for_sync(void)
{
    uint8_t s[32] = {0x01, 0x17, 0x78, 0x56}; /* tail of a packet */
    memcpy(s + 4, SYNC, sizeof SYNC);
    const uint8_t tail[] = {0x17, 0x78, 0x56, 0x34, 0x12};
    memcpy(s + 4 + sizeof SYNC, tail, sizeof tail);
    size_t n = 4 + sizeof SYNC + sizeof tail;
    struct itm_decoder d;
    decode(s, n, true, &log_a, &d);
    CHECK(log_a.count[EV_PC] == 1 && log_a.count[EV_SOFTWARE] == 0);
    CHECK(d.stats.hunted == 4 && d.stats.errors == 0);
    decode(s, n, false, &log_b, &d); /* without waiting, the cut packet reads as junk */
    CHECK(log_b.count[EV_SOFTWARE] + d.stats.errors > 0);
}

/* A realistic stream, as the reference document's synthetic one: PCs mixed with everything. */
static size_t synth(uint8_t *s, size_t cap, unsigned samples)
{
    size_t n = 0;
#define PUT(...)                                                                                                     \
    do {                                                                                                             \
        const uint8_t b_[] = {__VA_ARGS__};                                                                          \
        if (n + sizeof b_ <= cap) {                                                                                  \
            memcpy(s + n, b_, sizeof b_);                                                                            \
            n += sizeof b_;                                                                                          \
        }                                                                                                            \
    } while (0)
    PUT(0, 0, 0, 0, 0, 0x80);
    for (unsigned k = 0; k < samples; k++) {
        uint32_t pc = 0x08000100u + 2u * (rnd32() % 512u);
        PUT(0x17, (uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16), (uint8_t)(pc >> 24));
        if (k % 7 == 3)
            PUT(0x01, (uint8_t)(0x48 + k % 20));
        if (k % 50 == 10)
            PUT(0x0B, 1, 2, 3, 4);
        if (k % 64 == 20)
            PUT(0x15, 0x00);
        if (k % 100 == 30)
            PUT(0xC0, 0x85, 0x12);
        if (k % 100 == 60)
            PUT(0x0E, 0x0F, 0x10);
        if (k % 500 == 250)
            PUT(0x05, 0x04);
        if (k % 1000 == 500)
            PUT(0x70);
        if (k % 300 == 299)
            PUT(0, 0, 0, 0, 0, 0x80);
    }
    PUT(0x20);
#undef PUT
    return n;
}

static void test_chunk_invariance(void)
{
    static uint8_t s[8192];
    size_t n = synth(s, sizeof s, 600);
    struct itm_decoder d1, d2;
    struct ev_sink sink_b = {evlog_event, &log_b};
    decode(s, n, false, &log_a, &d1);
    CHECK(d1.stats.errors == 0 && log_a.count[EV_PC] == 600);
    /* byte by byte */
    evlog_reset(&log_b);
    itm_init(&d2, false);
    for (size_t i = 0; i < n; i++)
        itm_feed(&d2, s + i, 1, &sink_b);
    CHECK(evlog_equal(&log_a, &log_b));
    CHECK(memcmp(&d1.stats, &d2.stats, sizeof d1.stats) == 0);
    /* split at every offset */
    int all_equal = 1;
    for (size_t k = 0; k <= n; k++) {
        evlog_reset(&log_b);
        itm_init(&d2, false);
        itm_feed(&d2, s, k, &sink_b);
        itm_feed(&d2, s + k, n - k, &sink_b);
        all_equal &= evlog_equal(&log_a, &log_b);
    }
    CHECK(all_equal);
}

static void test_chunk_invariance_on_garbage(void)
{
    static uint8_t s[4096];
    for (size_t i = 0; i < sizeof s; i++)
        s[i] = (uint8_t)rnd32();
    struct itm_decoder d1, d2;
    struct ev_sink sink_b = {evlog_event, &log_b};
    decode(s, sizeof s, false, &log_a, &d1);
    CHECK(d1.stats.errors > 0); /* random bytes contain reserved headers */
    int all_equal = 1;
    for (size_t k = 0; k <= sizeof s; k += 7) {
        evlog_reset(&log_b);
        itm_init(&d2, false);
        for (size_t i = 0; i < sizeof s; i += k + 1)
            itm_feed(&d2, s + i, (i + k + 1 <= sizeof s) ? k + 1 : sizeof s - i, &sink_b);
        all_equal &= evlog_equal(&log_a, &log_b) && memcmp(&d1.stats, &d2.stats, sizeof d1.stats) == 0;
    }
    CHECK(all_equal);
}

/* Each logged event's byte offset (evlog leaves offsets out): a, unbatched; b, batched. */
static struct offsets {
    uint64_t v[8192];
    size_t n;
} offs_a, offs_b;

static void offset_of(struct offsets *o, uint64_t offset)
{
    if (o->n < sizeof o->v / sizeof o->v[0])
        o->v[o->n] = offset;
    o->n++;
}

static void itm_single_event(void *ctx, const struct ev *e)
{
    offset_of(&offs_a, e->offset);
    evlog_event(ctx, e);
}

/* EV_PCS from a batching decoder, logged as the EV_PC events the same packets give unbatched:
 * each packet's own offset (five bytes apart in a run). */
static void itm_batch_event(void *ctx, const struct ev *e)
{
    if (e->type != EV_PCS) {
        offset_of(&offs_b, e->offset);
        evlog_event(ctx, e);
        return;
    }
    ((struct evlog *)ctx)->batches++;
    for (uint64_t j = 0; j < e->pcs.n; j++) {
        struct ev one = {.type = EV_PC, .offset = e->offset + 5 * j, .pc = {.addr = e->pcs.addrs[j]}};
        offset_of(&offs_b, one.offset);
        evlog_event(ctx, &one);
    }
}

static bool same_offsets(void)
{
    size_t n = offs_a.n < sizeof offs_a.v / sizeof offs_a.v[0] ? offs_a.n : sizeof offs_a.v / sizeof offs_a.v[0];
    return offs_a.n == offs_b.n && memcmp(offs_a.v, offs_b.v, n * sizeof offs_a.v[0]) == 0;
}

/* With batch_pcs set, the same samples and every other event in the same order, the same
 * counters, whether fed whole, byte by byte or split anywhere; runs longer than an event holds
 * are cut into several. */
static void test_batched_runs_are_the_same_events(void)
{
    static uint8_t s[16384];
    size_t n = synth(s, sizeof s - 2000, 900);
    for (unsigned k = 0; k < 300 && n + 5 <= sizeof s; k++) { /* a run of 300: longer than ITM_RUN_MAX */
        uint32_t pc = 0x08000200u + 4u * k;
        const uint8_t b[] = {0x17, (uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16), (uint8_t)(pc >> 24)};
        memcpy(s + n, b, sizeof b);
        n += sizeof b;
    }
    static uint8_t g[4096]; /* and garbage */
    for (size_t i = 0; i < sizeof g; i++)
        g[i] = (uint8_t)rnd32();
    const uint8_t *streams[] = {s, g};
    const size_t lens[] = {n, sizeof g};
    struct ev_sink sink_b = {itm_batch_event, &log_b};
    for (int t = 0; t < 2; t++) {
        struct itm_decoder d1, d2;
        struct ev_sink sink_a = {itm_single_event, &log_a};
        evlog_reset(&log_a);
        offs_a.n = 0;
        itm_init(&d1, false);
        itm_feed(&d1, streams[t], lens[t], &sink_a);
        evlog_reset(&log_b);
        offs_b.n = 0;
        itm_init(&d2, false);
        d2.batch_pcs = true;
        itm_feed(&d2, streams[t], lens[t], &sink_b);
        CHECK(evlog_equal(&log_a, &log_b) && same_offsets());
        CHECK(memcmp(&d1.stats, &d2.stats, sizeof d1.stats) == 0);
        if (t == 0)
            CHECK(log_b.batches > 0 && log_b.batches * 3 < log_a.count[EV_PC]); /* it did batch: runs average over 3 */
        int all_equal = 1;
        for (size_t k = 0; k < 40; k++) { /* pieces of k + 1 bytes */
            evlog_reset(&log_b);
            offs_b.n = 0;
            itm_init(&d2, false);
            d2.batch_pcs = true;
            for (size_t i = 0; i < lens[t]; i += k + 1)
                itm_feed(&d2, streams[t] + i, (i + k + 1 <= lens[t]) ? k + 1 : lens[t] - i, &sink_b);
            all_equal &= evlog_equal(&log_a, &log_b) && same_offsets() &&
                         memcmp(&d1.stats, &d2.stats, sizeof d1.stats) == 0;
        }
        for (size_t k = 0; k <= lens[t]; k += 3) { /* two pieces, cut at every third offset */
            evlog_reset(&log_b);
            offs_b.n = 0;
            itm_init(&d2, false);
            d2.batch_pcs = true;
            itm_feed(&d2, streams[t], k, &sink_b);
            itm_feed(&d2, streams[t] + k, lens[t] - k, &sink_b);
            all_equal &= evlog_equal(&log_a, &log_b) && same_offsets() &&
                         memcmp(&d1.stats, &d2.stats, sizeof d1.stats) == 0;
        }
        CHECK(all_equal);
    }
}

/* A sampling stream into s: a sync, then `samples` PC samples (from base, `spread` even addresses, in sent[]),
 * a sync every 300 (DWT's SYNCTAP) and, when mixed, a software write after every 7th; each packet's first
 * byte in starts[]. */
static uint32_t sent[4000], got[6000];
static size_t n_sent, n_got, starts[6000], n_starts;

static size_t sampling(uint8_t *s, unsigned samples, uint32_t base, uint32_t spread, bool mixed)
{
    size_t n = sizeof SYNC;
    memcpy(s, SYNC, sizeof SYNC);
    n_sent = n_starts = 0;
    for (unsigned k = 0; k < samples; k++) {
        uint32_t pc = base + 2u * (rnd32() % spread);
        sent[n_sent++] = pc;
        starts[n_starts++] = n;
        s[n++] = 0x17;
        for (int b = 0; b < 4; b++)
            s[n++] = (uint8_t)(pc >> (8 * b));
        if (mixed && k % 7 == 3) {
            starts[n_starts++] = n;
            s[n++] = 0x01;
            s[n++] = (uint8_t)(0x48 + k % 20);
        }
        if (k % 300 == 299) {
            starts[n_starts++] = n;
            memcpy(s + n, SYNC, sizeof SYNC);
            n += sizeof SYNC;
        }
    }
    return n;
}

static void pcs_got(void *ctx, const struct ev *e)
{
    (void)ctx;
    if (e->type == EV_PC && n_got < sizeof got / sizeof got[0])
        got[n_got++] = e->pc.addr;
}

/* The PCs got matched in order against those sent: how many matched; *wrong: PCs got that match none (read
 * from bytes of two packets, or from a packet's middle); is_wrong[g] (when given) marks them. */
static size_t pcs_matched(size_t *wrong, bool *is_wrong)
{
    return pcs_in_order(sent, n_sent, got, n_got, 400, wrong, is_wrong);
}

/* The stretches kept[2k]..kept[2k+1] of s decoded one after the other (the bytes between them lost),
 * with a hole said (itm_hole) between each two when holes; the PCs into got[]. */
static void decode_kept(struct itm_decoder *d, const uint8_t *s, const size_t *kept, size_t n_kept, bool holes)
{
    struct ev_sink sink = {pcs_got, NULL};
    n_got = 0;
    itm_init(d, false);
    for (size_t k = 0; k + 1 < n_kept; k += 2) {
        if (k && holes)
            itm_hole(d);
        itm_feed(d, s + kept[k], kept[k + 1] - kept[k], &sink);
    }
}

/* kept[] for s (n bytes) with `losses` stretches of 1 to `most` bytes lost, one in each losses-th of s;
 * returns its length. */
static size_t lose(size_t *kept, size_t n, size_t losses, uint32_t most)
{
    size_t k = 0;
    kept[k++] = 0;
    for (size_t h = 0; h < losses; h++) {
        size_t at = n / losses * h + 1 + rnd32() % (n / losses - most - 1);
        kept[k++] = at;
        kept[k++] = at + 1 + rnd32() % most;
    }
    kept[k++] = n;
    return k;
}

/* A reserved header before 30 packets here and there (a byte added on the line): each is a bad packet,
 * and the decoding goes on at the next packet, found from the packets' structure (the next 40 bytes read
 * from each of their first 7 agree on it), not at the next sync 300 samples on; no PC read wrongly; the
 * same events and counts whole, byte by byte and split anywhere. Before: 461 of 3,000 samples. */
static void test_resync_after_a_bad_packet(void)
{
    static uint8_t s[20000], t[20000];
    size_t n = sampling(s, 3000, 0x08000100u, 512, true), k = 0, j = 0, wrong, bad = 0;
    for (size_t p = 0; p < n_starts; p++) {
        for (; j < starts[p]; j++)
            t[k++] = s[j];
        if (p % 100 == 50) {
            t[k++] = 0x24; /* xxxx0100 other than 94/B4: reserved */
            bad++;
        }
    }
    for (; j < n; j++)
        t[k++] = s[j];
    struct itm_decoder d, d2;
    size_t whole[] = {0, k};
    decode_kept(&d, t, whole, 2, false);
    size_t m = pcs_matched(&wrong, NULL);
    printf("     %zu bad packets: %zu of %zu samples, %zu wrong, %llu found again from the structure\n", bad, m,
           n_sent, wrong, (unsigned long long)d.stats.resyncs);
    CHECK(d.stats.errors == bad && d.stats.resyncs == bad && wrong == 0 && m + 2 * bad >= n_sent);
    struct ev_sink sink = {evlog_event, &log_a}, sink_b = {evlog_event, &log_b};
    evlog_reset(&log_a);
    itm_init(&d, false);
    itm_feed(&d, t, k, &sink);
    int same = 1;
    for (size_t at = 0; at <= k; at += at < 400 ? 1 : 7) { /* two pieces; and byte by byte */
        evlog_reset(&log_b);
        itm_init(&d2, false);
        itm_feed(&d2, t, at, &sink_b);
        itm_feed(&d2, t + at, k - at, &sink_b);
        same &= evlog_equal(&log_a, &log_b) && memcmp(&d.stats, &d2.stats, sizeof d.stats) == 0;
    }
    evlog_reset(&log_b);
    itm_init(&d2, false);
    for (size_t i = 0; i < k; i++)
        itm_feed(&d2, t + i, 1, &sink_b);
    CHECK(same && evlog_equal(&log_a, &log_b) && memcmp(&d.stats, &d2.stats, sizeof d.stats) == 0);
}

/* Bytes lost before the decoder at 40 places (a TPIU frame's rest dropped after a hit: itm_hole): the
 * packet across each hole is dropped, never read from the bytes on both sides, and the decoding goes on
 * from the packets' structure where it is unambiguous. PCs whose second byte is always 0x17 (a sample
 * packet's header) read as PC samples from that byte on too: there it waits for the next sync. No PC is
 * read wrongly either way. Before (no hole to say): 1,132 and 1,342 of 3,000 samples, 472 and 681 wrong. */
static void test_hole_drops_the_packet_across_it(void)
{
    static uint8_t s[20000];
    static size_t kept[2 * 40 + 2];
    for (int ambiguous = 0; ambiguous < 2; ambiguous++) {
        size_t n = sampling(s, 3000, ambiguous ? 0x08001700u : 0x08000100u, ambiguous ? 128 : 512, !ambiguous), wrong;
        size_t n_kept = lose(kept, n, 40, 12);
        struct itm_decoder d;
        decode_kept(&d, s, kept, n_kept, true);
        size_t m = pcs_matched(&wrong, NULL);
        printf("     %s, 40 holes: %zu of %zu samples, %zu wrong, %llu found again from the structure\n",
               ambiguous ? "PCs 0x080017xx" : "PCs and writes", m, n_sent, wrong, (unsigned long long)d.stats.resyncs);
        CHECK(wrong == 0 && d.stats.holes == 40 && (ambiguous || m + 4 * 40 >= n_sent));
    }
}

static uint64_t got_at[6000]; /* each PC's packet offset */

static void pcs_got_at(void *ctx, const struct ev *e)
{
    if (e->type == EV_PC && n_got < sizeof got / sizeof got[0])
        got_at[n_got] = e->offset;
    pcs_got(ctx, e);
}

/* Bytes lost on the line with nothing said (a raw SWO capture's dropped bytes): a packet read across a
 * loss, or from the bytes just after it, before any bad packet shows the loss, this decoder cannot tell
 * (about 3 losses in 4 give one); a PC read after a bad packet that came after the last loss would be the
 * boundary's guess: none. Fed byte by byte (the bad packets' offsets). Before: 8,500 of 30,000 samples
 * (the decoder waited for each next sync), 154 wrong, read across a loss. */
static void test_losses_unsaid(void)
{
    static uint8_t s[20000], t[20000];
    static size_t kept[2 * 50 + 2], lost_at[50];
    static uint64_t error_at[400];
    size_t all = 0, got_right = 0, all_wrong = 0, guessed = 0, errors = 0, resyncs = 0;
    for (int round = 0; round < 10; round++) {
        size_t n = sampling(s, 3000, 0x08000100u, 512, true), wrong, k = 0, n_errors = 0;
        size_t n_kept = lose(kept, n, 50, 1);
        for (size_t j = 0; j + 1 < n_kept; j += 2) {
            if (j)
                lost_at[j / 2 - 1] = k; /* t[k] follows the lost byte */
            memcpy(t + k, s + kept[j], kept[j + 1] - kept[j]);
            k += kept[j + 1] - kept[j];
        }
        struct itm_decoder d;
        struct ev_sink sink = {pcs_got_at, NULL};
        n_got = 0;
        itm_init(&d, false);
        for (size_t i = 0; i < k; i++) {
            uint64_t before = d.stats.errors;
            itm_feed(&d, t + i, 1, &sink);
            if (d.stats.errors > before && n_errors < 400)
                error_at[n_errors++] = i;
        }
        static bool is_wrong[sizeof got / sizeof got[0]];
        got_right += pcs_matched(&wrong, is_wrong);
        all += n_sent;
        all_wrong += wrong;
        errors += d.stats.errors;
        resyncs += d.stats.resyncs;
        for (size_t g = 0; g < n_got; g++) {
            if (!is_wrong[g])
                continue;
            uint64_t last_loss = 0, end = got_at[g] + 5;
            for (size_t h = 0; h < 50; h++)
                last_loss = lost_at[h] < end ? lost_at[h] : last_loss;
            for (size_t e = 0; e < n_errors; e++)
                guessed += error_at[e] >= last_loss && error_at[e] < got_at[g];
        }
        CHECK(n_errors < 400);
    }
    printf("     10 x 50 bytes lost: %zu of %zu samples, %zu wrong (read across a loss before it showed), %zu after a "
           "bad packet; %zu bad packets, %zu found again from the structure\n", got_right, all, all_wrong, guessed,
           errors, resyncs);
    CHECK(guessed == 0);
}

int main(void)
{
    RUN_TEST(test_pc_sample_and_sleep);
    RUN_TEST(test_sync_and_overflow);
    RUN_TEST(test_short_zero_run_is_an_error);
    RUN_TEST(test_local_timestamps);
    RUN_TEST(test_global_timestamps);
    RUN_TEST(test_too_long_continuation_is_an_error);
    RUN_TEST(test_reserved_headers);
    RUN_TEST(test_extension_is_not_misread);
    RUN_TEST(test_stimulus_page);
    RUN_TEST(test_hardware_packets);
    RUN_TEST(test_wait_for_sync);
    RUN_TEST(test_chunk_invariance);
    RUN_TEST(test_chunk_invariance_on_garbage);
    RUN_TEST(test_batched_runs_are_the_same_events);
    RUN_TEST(test_resync_after_a_bad_packet);
    RUN_TEST(test_hole_drops_the_packet_across_it);
    RUN_TEST(test_losses_unsaid);
    free(log_a.buf);
    free(log_b.buf);
    return check_summary();
}
