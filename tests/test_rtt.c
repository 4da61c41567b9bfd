/* The firmware's RTT transport on the host (firmware/cmprof_rtt.c with the stream and the sampler,
 * fake registers): the control block as probes read it, lines whole across the buffer's wrap, a full
 * buffer dropping a line whole and counting it, and the drain holding samples in the ring (where the
 * loss is counted) while the host is behind; what a host reads back decodes to every sample. */
#include "../decode/text.h"
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_rtt.h"
#include "check.h"
#include "fake_regs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void *volatile test_tag;

#if CMPROF_RTT_EXTERNAL
#include "rtt_channel.h"

/* The application's own RTT channel (CMPROF_RTT_WRITE / CMPROF_RTT_ROOM_NOW point here): 300 bytes,
 * emptied by the test. */
static char channel[1 << 16];
static uint32_t channel_len, channel_cap = 300;

unsigned test_channel_write(const char *buf, uint32_t len)
{
    if (len > channel_cap - channel_len)
        return 0; /* skip when full, as SEGGER_RTT_WriteSkipNoLock */
    memcpy(channel + channel_len, buf, len);
    channel_len += len;
    return len;
}

unsigned test_channel_room(void)
{
    return channel_cap - channel_len;
}

static const struct cmprof_stream_info info = {.clock_hz = 1000, .timer_hz = 1000, .period = 10,
                                               .code_base = 0x08000000u, .write = cmprof_rtt_write};

/* Lines go to the application's channel; a full channel drops them whole and counts them; the drain
 * waits for CMPROF_RTT_ROOM there. */
static void test_external_channel(void)
{
    fake_regs_clear();
    cmprof_rtt_init();
    cmprof_start(10u, 0u);
    cmprof_stream_announce(NULL, &info);
    CHECK(channel_len > 20 && strncmp(channel, "@cmprof v=", 10) == 0);
    for (unsigned k = 0; k < 64; k++)
        cmprof_tick(0x08000100u + 2u * (k % 7u));
    channel_len = channel_cap - (CMPROF_RTT_ROOM - 1u); /* the host is behind */
    CHECK(cmprof_rtt_drain(4) == 0 && cmprof_stream_pending() == 64);
    uint32_t sent = 0, dropped_before = cmprof_rtt_dropped_lines();
    for (int poll = 0; poll < 10 && cmprof_stream_pending(); poll++) {
        channel_len = 0; /* it read everything */
        sent += cmprof_rtt_drain(4);
        CHECK(cmprof_stream_pending() == 0 || test_channel_room() < CMPROF_RTT_ROOM); /* stopped for room only */
    }
    CHECK(sent == 64 && cmprof_stream_pending() == 0 && cmprof_rtt_dropped_lines() == dropped_before);
    uint32_t dropped = cmprof_rtt_dropped_lines();
    channel_len = channel_cap - 10u;
    cmprof_rtt_write("a line longer than ten bytes\n", 29);
    CHECK(cmprof_rtt_dropped_lines() == dropped + 1 && cmprof_rtt_dropped_bytes() >= 29 && channel_len == channel_cap - 10u);
    cmprof_stop();
}
#else
struct rtt_buffer_view { /* SEGGER's descriptor, as a host reads it */
    const char *name;
    char *buf;
    uint32_t size, wr, rd, flags;
};
struct rtt_view {
    char id[16];
    int32_t max_up, max_down;
    struct rtt_buffer_view up[1], down[1];
};
extern struct rtt_view _SEGGER_RTT;

static char host[1 << 20]; /* what the host read, in order */
static size_t host_len;

/* The host's poll: every byte between the read and write offsets, then the read offset back. */
static void host_poll(void)
{
    struct rtt_buffer_view *b = &_SEGGER_RTT.up[0];
    while (b->rd != b->wr && host_len + 1 < sizeof host) {
        host[host_len++] = b->buf[b->rd];
        b->rd = (b->rd + 1u) % b->size;
    }
}

/* What the decoded samples stand for (a reservoir's group weighs taken / kept each), and the loss. */
struct tally {
    double weight;
    uint64_t lost;
};

static void tally_event(void *ctx, const struct ev *e)
{
    struct tally *t = ctx;
    if (e->type == EV_PC)
        t->weight += e->pc.kept > 0 ? (double)e->pc.taken / (double)e->pc.kept : 1.0;
    else if (e->type == EV_PCS)
        t->weight += (double)e->pcs.n;
    else if (e->type == EV_LOST)
        t->lost = e->lost.samples;
}

static const struct cmprof_stream_info info = {.clock_hz = 1000, .timer_hz = 1000, .period = 10,
                                               .code_base = 0x08000000u, .write = cmprof_rtt_write};

static void test_control_block(void)
{
    memset(&_SEGGER_RTT, 0x55, sizeof _SEGGER_RTT);
    cmprof_rtt_init();
    CHECK(memcmp(_SEGGER_RTT.id, "SEGGER RTT\0\0\0\0\0\0", 16) == 0);
    CHECK(_SEGGER_RTT.max_up == 1 && _SEGGER_RTT.max_down == 1);
    CHECK(strcmp(_SEGGER_RTT.up[0].name, "cmprof") == 0);
    CHECK(_SEGGER_RTT.up[0].size == CMPROF_RTT_SIZE && _SEGGER_RTT.up[0].wr == 0 && _SEGGER_RTT.up[0].rd == 0);
    CHECK(_SEGGER_RTT.up[0].flags == 0); /* skip when full: we never block */
    CHECK(cmprof_rtt_room() == CMPROF_RTT_SIZE - 1u && cmprof_rtt_unread() == 0);
}

static void test_lines_whole_across_the_wrap(void)
{
    cmprof_rtt_init();
    host_len = 0;
    char line[100], want[1 << 14];
    size_t want_len = 0;
    for (int k = 0; k < 100; k++) { /* 100 lines of 1..97 bytes: many wraps of the 512-byte buffer */
        int n = snprintf(line, sizeof line, "line %d %.*s\n", k, k % 90, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        cmprof_rtt_write(line, (uint32_t)n);
        memcpy(want + want_len, line, (size_t)n);
        want_len += (size_t)n;
        host_poll();
    }
    CHECK(host_len == want_len && memcmp(host, want, want_len) == 0);
    CHECK(cmprof_rtt_dropped_lines() == 0);
}

static void test_full_buffer_drops_whole_lines(void)
{
    cmprof_rtt_init();
    uint32_t lines = cmprof_rtt_dropped_lines(), bytes = cmprof_rtt_dropped_bytes();
    char line[60];
    memset(line, 'a', sizeof line);
    line[59] = '\n';
    uint32_t wrote = 0;
    for (int k = 0; k < 20; k++) /* 1200 bytes into 511 free: 8 lines fit, 12 are dropped */
        if (cmprof_rtt_room() >= 60u) {
            cmprof_rtt_write(line, 60);
            wrote++;
        } else {
            cmprof_rtt_write(line, 60);
        }
    CHECK(wrote == 8 && cmprof_rtt_unread() == 480u);
    CHECK(cmprof_rtt_dropped_lines() - lines == 12 && cmprof_rtt_dropped_bytes() - bytes == 720);
    _SEGGER_RTT.up[0].rd = CMPROF_RTT_SIZE + 5u; /* a host that wrote nonsense: nothing fits */
    CHECK(cmprof_rtt_room() == 0);
    cmprof_rtt_write(line, 1);
    CHECK(cmprof_rtt_dropped_lines() - lines == 13);
}

/* The whole stream through RTT: a host that polls only now and then; the drain waits for room and the
 * samples it cannot send wait in the ring, so the host decodes every sample taken (the ring and its
 * reservoir account for any it could not keep). */
static void test_stream_through_rtt(void)
{
    fake_regs_clear();
    cmprof_rtt_init();
    uint32_t dropped = cmprof_rtt_dropped_lines(); /* (counted since the program began) */
    host_len = 0;
    cmprof_start(10u, 0u);
    cmprof_stream_announce(NULL, &info);
    uint32_t held = 0;
    for (unsigned k = 0; k < 3000; k++) {
        cmprof_tick(0x08000100u + 2u * (k % 7u));
        uint32_t before = cmprof_stream_pending();
        uint32_t sent = cmprof_rtt_drain(2);
        held += before >= CMPROF_STREAM_LINE && !sent && cmprof_rtt_room() < CMPROF_RTT_ROOM;
        if (k % 100u == 99u)
            host_poll();
    }
    cmprof_stop();
    while (cmprof_stream_pending() >= CMPROF_STREAM_LINE) {
        host_poll();
        cmprof_rtt_drain(8);
    }
    host_poll();
    cmprof_stream_flush(NULL);
    host_poll();
    CHECK(held > 0); /* the host was behind: the drain held back */
    CHECK(cmprof_rtt_dropped_lines() == dropped);
    struct tally t = {0, 0};
    struct text_decoder d;
    struct ev_sink sink = {tally_event, &t};
    text_init(&d);
    text_feed(&d, (const uint8_t *)host, host_len, &sink);
    text_finish(&d, &sink);
    CHECK(d.stats.bad_checks == 0 && d.stats.bad_lines == 0);
    CHECK(t.lost == cmprof_stream_lost());
    CHECK(fabs(t.weight + (double)t.lost - 3000.0) < 1e-6); /* every sample taken, carried or counted */
    text_free(&d);
}

#endif

int main(void)
{
#if CMPROF_RTT_EXTERNAL
    RUN_TEST(test_external_channel);
#else
    RUN_TEST(test_control_block);
    RUN_TEST(test_lines_whole_across_the_wrap);
    RUN_TEST(test_full_buffer_drops_whole_lines);
    RUN_TEST(test_stream_through_rtt);
#endif
    return check_summary();
}
