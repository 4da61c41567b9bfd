/* ITM/DWT packet decoder. Header classes (ARMv7-M ARM D4.2):
 *   00            sync (>= 47 zero bits, then 1: five zero bytes and 0x80)
 *   70            overflow
 *   0TTT0000      local timestamp format 2, TTT = 1..6
 *   11TC0000      local timestamp format 1, 1-4 continuation bytes
 *   94 / B4       global timestamp 1 / 2, continuation bytes
 *   CEEE1S00      extension (stimulus port page when S = 0)
 *   AAAAA0SS      software source, SS = 1/2/4 bytes
 *   AAAAA1SS      hardware source: 0 event counter, 1 exception, 2 PC sample, 8-23 data trace
 * Everything else with SS = 00 is reserved. */
#include "itm.h"

#include <string.h>

enum { S_HEADER, S_SYNC, S_SOURCE, S_CONT, S_HUNT };

#define SYNC_ZERO_BYTES 5u /* 5 x 8 zero bits, plus 7 in the 0x80 that ends the packet */

void itm_init(struct itm_decoder *d, bool wait_for_sync)
{
    memset(d, 0, sizeof *d);
    d->state = wait_for_sync ? S_HUNT : S_HEADER;
}

static void fail(struct itm_decoder *d)
{
    if (!d->stats.errors++)
        d->stats.first_error = d->stats.bytes; /* bytes already counts the offending byte */
    d->state = S_HUNT;
    d->zeros = 0;
}

static uint32_t source_size(uint8_t h)
{
    return (h & 3u) == 3u ? 4u : (h & 3u);
}

static void emit_source(struct itm_decoder *d, const struct ev_sink *sink)
{
    struct ev e = ev_blank(EV_SOFTWARE);
    uint8_t h = d->header;
    uint32_t id = h >> 3;
    e.offset = d->packet_offset;
    e.size = source_size(h);
    e.value = d->value;
    if ((h & 4u) == 0u) {
        e.type = EV_SOFTWARE;
        e.index = id + 32u * d->page;
    } else if (id == 0u) {
        e.type = EV_EVENT_COUNTER;
    } else if (id == 1u) {
        e.type = EV_EXCEPTION;
        e.index = (uint32_t)(d->value & 0xFFu) | (uint32_t)((d->value >> 8) & 1u) << 8;
        e.value = (d->value >> 12) & 3u;
    } else if (id == 2u) {
        if (e.size == 4u) {
            e.type = EV_PC;
            e.addr = (uint32_t)d->value;
        } else {
            e.type = EV_SLEEP;
        }
    } else {
        e.type = EV_DATA_TRACE;
        e.index = (id >> 1) & 3u;
        e.kind = id < 16u ? (id & 1u) : 2u + (id & 1u);
    }
    d->stats.packets++;
    ev_emit(sink, &e);
}

/* Is this hardware source header one the architecture defines, with a legal size? */
static bool hardware_header_ok(uint8_t h)
{
    uint32_t id = h >> 3, size = source_size(h);
    switch (id) {
    case 0:
        return size == 1u;
    case 1:
        return size == 2u;
    case 2:
        return size == 4u || size == 1u;
    default:
        if (id >= 8u && id <= 15u)
            return (id & 1u) ? size == 2u : size == 4u;
        return id >= 16u && id <= 23u;
    }
}

static void emit_cont(struct itm_decoder *d, const struct ev_sink *sink)
{
    struct ev e = ev_blank(EV_TIMESTAMP);
    uint8_t h = d->header;
    e.offset = d->packet_offset;
    e.size = d->got;
    if ((h & 0x0Fu) == 0x00u) { /* local timestamp format 1 */
        e.type = EV_TIMESTAMP;
        e.index = (h >> 4) & 3u;
        e.value = d->value;
    } else if (h == 0x94u || h == 0xB4u) {
        e.type = EV_GLOBAL_TS;
        e.index = h == 0x94u ? 1u : 2u;
        e.value = d->value;
    } else { /* extension */
        e.type = EV_EXTENSION;
        e.index = (h >> 2) & 1u;
        e.value = ((h >> 4) & 7u) | (d->value << 3);
        if (e.index == 0u)
            d->page = (uint8_t)(e.value & 7u);
    }
    d->stats.packets++;
    ev_emit(sink, &e);
}

static uint8_t cont_limit(uint8_t h)
{
    if (h == 0xB4u)
        return 6u;
    return 4u;
}

static void header(struct itm_decoder *d, uint8_t h, uint64_t off, const struct ev_sink *sink)
{
    d->header = h;
    d->packet_offset = off;
    d->value = 0;
    d->got = 0;
    if (h == 0x00u) {
        d->state = S_SYNC;
        d->zeros = 1;
        return;
    }
    if ((h & 3u) != 0u) { /* source packet */
        if ((h & 4u) && !hardware_header_ok(h)) {
            fail(d);
            return;
        }
        d->need = (uint8_t)source_size(h);
        d->state = S_SOURCE;
        return;
    }
    if (h == 0x70u) {
        struct ev e = {.type = EV_OVERFLOW, .offset = off};
        d->stats.overflows++;
        d->stats.packets++;
        ev_emit(sink, &e);
        return;
    }
    if ((h & 0x0Fu) == 0x00u) {
        if ((h & 0x80u) == 0u) { /* format 2: 0x10..0x60 */
            struct ev e = {.type = EV_TIMESTAMP, .value = h >> 4, .offset = off};
            d->stats.packets++;
            ev_emit(sink, &e);
            return;
        }
        if ((h & 0x40u) == 0u) { /* 80 90 A0 B0 */
            fail(d);
            return;
        }
        d->state = S_CONT; /* format 1 always has payload */
        return;
    }
    if ((h & 0x08u) != 0u) { /* extension: CEEE1S00 */
        if (h & 0x80u) {
            d->state = S_CONT;
        } else {
            emit_cont(d, sink);
        }
        return;
    }
    if (h == 0x94u || h == 0xB4u) {
        d->state = S_CONT;
        return;
    }
    fail(d); /* xxxx0100 other than 94/B4 */
}

/* A little-endian 32-bit value at b. */
static uint32_t le32(const uint8_t *b)
{
    uint32_t v;
    memcpy(&v, b, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* A run of whole PC-sample packets (0x17 and four bytes; p[0] is the first header), the bulk of
 * a sampling capture: emitted straight from the bytes, as EV_PC events or, when the sink takes
 * them, as EV_PCS events of up to ITM_RUN_MAX samples. Leaves the state as the byte-by-byte path
 * would. Returns the bytes used. Not inlined: on its own, the loop keeps everything it needs
 * across the sink's call in registers. */
__attribute__((noinline)) static size_t pc_run(struct itm_decoder *d, const uint8_t *p, size_t n,
                                               const struct ev_sink *sink)
{
    void (*const deliver)(void *, const struct ev *) = sink ? sink->event : NULL; /* loaded once per run */
    void *const ctx = sink ? sink->ctx : NULL;
    const uint8_t *q = p, *const last = p + n - 5; /* the last place a whole packet can start */
    const uint64_t bias = d->stats.bytes - (uint64_t)(uintptr_t)p; /* q's offset in the stream: q + bias */
    uint32_t pc;
    if (d->batch_pcs) {
        struct ev e = ev_blank(EV_PCS);
        e.pcs = d->run;
        do {
            const uint8_t *first = q;
            size_t m = 0;
            do {
                pc = d->run[m++] = le32(q + 1);
                q += 5;
            } while (m < ITM_RUN_MAX && q <= last && *q == 0x17u);
            e.count = m;
            e.offset = (uint64_t)(uintptr_t)first + bias;
            if (deliver)
                deliver(ctx, &e);
        } while (q <= last && *q == 0x17u);
    } else {
        struct ev e = ev_blank(EV_PC);
        e.size = 4u;
        do {
            pc = le32(q + 1);
            if (deliver) {
                e.addr = pc;
                e.value = pc;
                e.offset = (uint64_t)(uintptr_t)q + bias;
                deliver(ctx, &e);
            }
            q += 5;
        } while (q <= last && *q == 0x17u);
    }
    size_t k = (size_t)(q - p);
    d->stats.packets += k / 5u;
    d->stats.bytes += k;
    d->header = 0x17u;
    d->packet_offset = d->stats.bytes - 5u;
    d->value = pc;
    d->got = d->need = 4u;
    return k;
}

void itm_feed(struct itm_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink)
{
    for (size_t i = 0; i < len; i++) {
        if (d->state == S_HEADER && buf[i] == 0x17u && len - i >= 5u) {
            i += pc_run(d, buf + i, len - i, sink) - 1u;
            continue;
        }
        uint8_t b = buf[i];
        uint64_t off = d->stats.bytes++;
        switch (d->state) {
        case S_HEADER:
            if ((b & 3u) != 0u && len - i > source_size(b) && ((b & 4u) == 0u || hardware_header_ok(b))) {
                /* a source packet (a PC sample, mostly) wholly in this buffer: its payload at once */
                uint32_t size = source_size(b);
                uint32_t v = buf[i + 1];
                if (size >= 2u)
                    v |= (uint32_t)buf[i + 2] << 8;
                if (size == 4u)
                    v |= (uint32_t)buf[i + 3] << 16 | (uint32_t)buf[i + 4] << 24;
                d->header = b;
                d->packet_offset = off;
                d->value = v;
                d->got = d->need = (uint8_t)size;
                emit_source(d, sink);
                d->stats.bytes += size;
                i += size;
                break;
            }
            header(d, b, off, sink);
            break;
        case S_SOURCE:
            d->value |= (uint64_t)b << (8u * d->got++);
            if (d->got == d->need) {
                emit_source(d, sink);
                d->state = S_HEADER;
            }
            break;
        case S_CONT:
            d->value |= (uint64_t)(b & 0x7Fu) << (7u * d->got++);
            if ((b & 0x80u) == 0u) {
                emit_cont(d, sink);
                d->state = S_HEADER;
            } else if (d->got >= cont_limit(d->header)) {
                fail(d);
            }
            break;
        case S_SYNC:
        case S_HUNT:
            if (b == 0x00u) {
                if (d->zeros++ == 0u && d->state == S_HUNT)
                    d->packet_offset = off;
                if (d->state == S_HUNT)
                    d->stats.hunted++;
            } else if (b == 0x80u && d->zeros >= SYNC_ZERO_BYTES) {
                struct ev e = {.type = EV_SYNC, .offset = d->packet_offset};
                if (d->state == S_HUNT)
                    d->stats.hunted -= d->zeros; /* the zeros were the sync, not garbage */
                d->stats.syncs++;
                d->stats.packets++;
                d->zeros = 0;
                d->state = S_HEADER;
                ev_emit(sink, &e);
            } else {
                if (d->state == S_SYNC)
                    fail(d); /* zeros that do not end a sync packet */
                d->stats.hunted++;
                d->zeros = 0;
            }
            break;
        }
    }
}
