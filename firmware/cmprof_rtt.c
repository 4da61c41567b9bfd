/* The stream over RTT (see cmprof_rtt.h). The control block follows SEGGER's documented layout,
 * which every RTT host reads: 16 bytes of ID ("SEGGER RTT", NUL-padded), the numbers of up- and
 * down-buffers, then a descriptor per buffer, up first: name, buffer, size, write offset (ours),
 * read offset (the host's), flags. The host advances the read offset; we only ever read it. */
#include "cmprof_rtt.h"

#include "cmprof.h"

#include <stddef.h>
#include <string.h>

_Static_assert(CMPROF_RTT_SIZE >= 64u && CMPROF_RTT_SIZE <= (1u << 24), "CMPROF_RTT_SIZE: 64 bytes to 16 MB");
_Static_assert(CMPROF_RTT_ROOM < CMPROF_RTT_SIZE, "CMPROF_RTT_ROOM: less than CMPROF_RTT_SIZE");

static uint32_t dropped_lines, dropped_bytes;

#ifndef CMPROF_RTT_EXTERNAL
#define CMPROF_RTT_EXTERNAL 0
#endif

#if CMPROF_RTT_EXTERNAL /* ------------------------------------------------------------------ */
#ifdef CMPROF_RTT_INCLUDE
#include CMPROF_RTT_INCLUDE /* what declares the hook's functions, e.g. "SEGGER_RTT.h" */
#endif
#if !defined(CMPROF_RTT_WRITE) || !defined(CMPROF_RTT_ROOM_NOW)
#error "CMPROF_RTT_EXTERNAL: define CMPROF_RTT_WRITE(buf, len) and CMPROF_RTT_ROOM_NOW() (cmprof_rtt.h)"
#endif

void cmprof_rtt_init(void)
{
}

uint32_t cmprof_rtt_room(void)
{
    return CMPROF_RTT_ROOM_NOW();
}

uint32_t cmprof_rtt_unread(void)
{
    return 0; /* the application's implementation knows */
}

void cmprof_rtt_write(const char *buf, uint32_t len)
{
    if ((uint32_t)CMPROF_RTT_WRITE(buf, len) != len) {
        dropped_lines++;
        dropped_bytes += len;
    }
}

#else /* our own control block ------------------------------------------------------------------ */

#define RTT_MODE_SKIP 0u /* flags: a write that does not fit is dropped (we check first anyway) */
#define DOWN_SIZE 16u

struct rtt_buffer {
    const char *name;
    char *buf;
    uint32_t size;
    volatile uint32_t wr; /* the target's write offset */
    volatile uint32_t rd; /* the host's read offset */
    uint32_t flags;
};

struct rtt_control {
    char id[16];
    int32_t max_up, max_down;
    struct rtt_buffer up[1], down[1];
};

struct rtt_control _SEGGER_RTT __attribute__((aligned(4)));
static char up_buf[CMPROF_RTT_SIZE] __attribute__((aligned(4)));
static char down_buf[DOWN_SIZE];

/* Stores before it reach memory before stores after it: the host must never see an offset move
 * before the bytes (or the ID before the descriptors) are in place. */
static inline void publish(void)
{
#if defined(__arm__)
    __asm volatile("dmb" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

void cmprof_rtt_init(void)
{
    static const char up_name[] = "cmprof", down_name[] = "cmprof-in";
    struct rtt_control *c = &_SEGGER_RTT;
    memset(c->id, 0, sizeof c->id);
    publish();
    c->max_up = 1;
    c->max_down = 1;
    c->up[0] = (struct rtt_buffer){up_name, up_buf, CMPROF_RTT_SIZE, 0, 0, RTT_MODE_SKIP};
    c->down[0] = (struct rtt_buffer){down_name, down_buf, DOWN_SIZE, 0, 0, RTT_MODE_SKIP};
    publish();
    /* the ID last, and not as one literal: a search of memory must not find a copy in flash or on
     * the stack */
    static const char tail[] = " RTT";
    memcpy(c->id + 6, tail, sizeof tail);
    publish();
    memcpy(c->id, "SEGGER", 6);
    publish();
}

uint32_t cmprof_rtt_room(void)
{
    const struct rtt_buffer *b = &_SEGGER_RTT.up[0];
    uint32_t rd = b->rd, wr = b->wr;
    if (rd >= CMPROF_RTT_SIZE) /* a host wrote nonsense: nothing fits until it writes a good one */
        return 0;
    return rd > wr ? rd - wr - 1u : CMPROF_RTT_SIZE - 1u - (wr - rd);
}

uint32_t cmprof_rtt_unread(void)
{
    return CMPROF_RTT_SIZE - 1u - cmprof_rtt_room();
}

void cmprof_rtt_write(const char *buf, uint32_t len)
{
    struct rtt_buffer *b = &_SEGGER_RTT.up[0];
    if (len > cmprof_rtt_room()) {
        dropped_lines++;
        dropped_bytes += len;
        return;
    }
    uint32_t wr = b->wr, first = CMPROF_RTT_SIZE - wr;
    if (len < first) {
        memcpy(up_buf + wr, buf, len);
        wr += len;
    } else { /* up to the end, the rest from the start */
        memcpy(up_buf + wr, buf, first);
        memcpy(up_buf, buf + first, len - first);
        wr = len - first;
    }
    publish();
    b->wr = wr;
}
#endif

/* Lines while a line surely fits, the ring's own drain deciding what a line holds. */
__attribute__((noinline)) static uint32_t rtt_drain_lines(uint32_t max_lines)
{
    uint32_t sent = 0;
    while (max_lines-- && cmprof_rtt_room() >= CMPROF_RTT_ROOM) {
        uint32_t k = cmprof_stream_drain(NULL, 1u);
        if (!k)
            break;
        sent += k;
    }
    return sent;
}

uint32_t cmprof_rtt_drain(uint32_t max_lines)
{
#if !(defined(CMPROF_HIST) && CMPROF_HIST)
    /* the quick exit, as cmprof_stream_drain's, without a call: polled far more often than a line
     * fills (a histogram has no ring: its drain decides) */
    if (cmprof_stream_quiet())
        return 0;
#endif
    return rtt_drain_lines(max_lines);
}

uint32_t cmprof_rtt_dropped_lines(void)
{
    return dropped_lines;
}

uint32_t cmprof_rtt_dropped_bytes(void)
{
    return dropped_bytes;
}
