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

#include <stdio.h>
#include <string.h>

enum { S_HEADER, S_SYNC, S_SOURCE, S_CONT, S_HUNT, S_WINDOW };

#define SYNC_ZERO_BYTES 5u /* 5 x 8 zero bits, plus 7 in the 0x80 that ends the packet */
#define RESYNC_STARTS 7u   /* a packet boundary lies among the first 7 bytes after a break: the longest
                              packet but a sync is 7 bytes (global timestamp 2) */
#define RESYNC_PCS 4u      /* PC-sample packets the readings must agree on after their boundary */

/* Header bytes and header fields, as the classes above name them */
#define HDR_SYNC 0x00u       /* a sync packet's first byte, and each zero byte of its body */
#define SYNC_LAST 0x80u      /* the byte that ends a sync packet */
#define HDR_OVERFLOW 0x70u
#define HDR_GLOBAL_TS1 0x94u
#define HDR_GLOBAL_TS2 0xB4u
#define HDR_PC_SAMPLE 0x17u  /* hardware source 2 (PC sample) with a four-byte payload */
#define PC_SAMPLE_BYTES 5u   /* its header and payload */
#define SS_MASK 0x03u        /* a source packet's payload size (00: not a source packet) */
#define SOURCE_HW 0x04u      /* a hardware (DWT) source, not a stimulus port */
#define EXTENSION_BIT 0x08u  /* CEEE1S00 */
#define TS_NIBBLE 0x0Fu      /* zero in the low nibble: a timestamp header */
#define TS1_BIT 0x40u        /* with CONT_BIT: local timestamp format 1 (11TC0000) */
#define CONT_BIT 0x80u       /* more bytes follow (a header, or a byte of a continued packet) */
#define CONT_PAYLOAD 0x7Fu   /* the payload bits of a continued packet's byte */
#define GLOBAL_TS2_MAX 6u    /* continuation bytes at most: global timestamp 2 */
#define CONT_MAX 4u          /* ... and every other continued packet */

/* Hardware source IDs (the header's AAAAA) */
#define HW_EVENT_COUNTER 0u
#define HW_EXCEPTION 1u      /* payload: the exception number (9 bits), its function in bits 12-13 */
#define HW_PC_SAMPLE 2u      /* a PC (4 bytes), or a sleeping core (1 byte) */
#define HW_DATA_FIRST 8u     /* data trace: 8-15 PC or address, 16-23 data value */
#define HW_DATA_VALUE 16u
#define HW_DATA_LAST 23u
#define EXC_NUMBER 0x1FFu        /* an exception packet's payload: the exception number */
#define EXC_FUNCTION_SHIFT 12u   /* ... and its function (enter, exit, return), two bits */

void itm_init(struct itm_decoder *d, bool wait_for_sync)
{
    memset(d, 0, sizeof *d);
    d->state = wait_for_sync ? S_HUNT : S_HEADER;
}

void itm_rejoin(struct itm_decoder *d)
{
    d->n_window = 0; /* (held after a bad packet: counted in hunted, and skipped) */
    if (!d->rejoining)
        d->hunted_at_rejoin = d->stats.hunted;
    d->rejoining = true;
    d->state = S_HUNT;
    d->zeros = 0;
}

/* The packet boundaries are lost from here: the next bytes are held and judged (see itm_feed). */
static void lose_step(struct itm_decoder *d)
{
    d->state = S_WINDOW;
    d->n_window = 0;
    d->zeros = 0;
}

static void fail(struct itm_decoder *d)
{
    if (!d->stats.errors++)
        d->stats.first_error = d->stats.bytes; /* bytes already counts the offending byte */
    lose_step(d);
}

void itm_hole(struct itm_decoder *d)
{
    d->stats.holes++;
    d->zeros = 0; /* (a sync packet does not span the hole) */
    if (d->state != S_HUNT) /* (bytes held before it are skipped: counted in hunted already) */
        lose_step(d);
}

/* The packet boundary where every reading of w[0..n) (n < 64) that begins at one of its first
 * RESYNC_STARTS bytes and keeps to ITM's framing meets the others, with RESYNC_PCS PC-sample packets at
 * least after it; n when there is none. The true reading is among them, so a boundary they all share is
 * a true one: no packet is read from a guess that could be wrong. */
static size_t boundary(const uint8_t *w, size_t n)
{
    uint64_t common = UINT64_MAX;
    bool any = false;
    for (size_t s = 0; s < RESYNC_STARTS && s < n; s++) {
        struct itm_lint l = {0};
        uint64_t starts = 1ull << s;
        size_t j = s;
        for (enum itm_lint_result r; j < n && (r = itm_lint(&l, w[j])) != ITM_LINT_ERROR; j++)
            if (r == ITM_LINT_PACKET)
                starts |= 1ull << (j + 1);
        if (j < n)
            continue; /* a bad packet: not this reading */
        common &= starts;
        any = true;
    }
    common &= (1ull << n) - 1u;
    if (!any || !common)
        return n;
    size_t at = (size_t)__builtin_ctzll(common), pcs = 0;
    for (size_t j = at; j + PC_SAMPLE_BYTES <= n; j++) /* (past `at` the readings are one: common holds its boundaries) */
        pcs += ((common >> j) & 1u) && w[j] == HDR_PC_SAMPLE;
    return pcs >= RESYNC_PCS ? at : n;
}

static uint32_t source_size(uint8_t h)
{
    return (h & SS_MASK) == 3u ? 4u : (h & SS_MASK);
}

/* The stimulus port a software packet with header h writes, on the current page. */
static uint32_t stimulus_port(const struct itm_decoder *d, uint8_t h)
{
    return (uint32_t)(h >> 3) + 32u * d->page;
}

/* The little-endian payload of size bytes (1, 2 or 4) at b. */
static uint32_t payload(const uint8_t *b, uint32_t size)
{
    uint32_t v = b[0];
    if (size >= 2u)
        v |= (uint32_t)b[1] << 8;
    if (size == 4u)
        v |= (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return v;
}

static void emit_source(struct itm_decoder *d, const struct ev_sink *sink)
{
    struct ev e = ev_blank(EV_SOFTWARE);
    uint8_t h = d->header;
    uint32_t id = h >> 3, size = source_size(h);
    e.offset = d->packet_offset;
    if ((h & SOURCE_HW) == 0u) {
        e.software = (struct ev_software){.port = stimulus_port(d, h), .bytes = size, .value = d->value};
    } else if (id == HW_EVENT_COUNTER) {
        e.type = EV_EVENT_COUNTER;
        e.counter = (struct ev_counter){.bytes = size, .wraps = d->value};
    } else if (id == HW_EXCEPTION) {
        e.type = EV_EXCEPTION;
        e.exception = (struct ev_exception){.number = (uint32_t)(d->value & EXC_NUMBER),
                                            .function = (uint32_t)(d->value >> EXC_FUNCTION_SHIFT) & 3u,
                                            .bytes = size};
    } else if (id == HW_PC_SAMPLE) {
        if (size == 4u) {
            e.type = EV_PC;
            e.pc.addr = (uint32_t)d->value;
        } else {
            e.type = EV_SLEEP;
        }
    } else {
        e.type = EV_DATA_TRACE;
        e.data = (struct ev_data_trace){.comparator = (id >> 1) & 3u,
                                        .what = id < HW_DATA_VALUE ? (id & 1u) : 2u + (id & 1u),
                                        .bytes = size, .value = d->value};
    }
    d->stats.packets++;
    ev_emit(sink, &e);
}

/* Is this hardware source header one the architecture defines, with a legal size? */
static bool hardware_header_ok(uint8_t h)
{
    uint32_t id = h >> 3, size = source_size(h);
    switch (id) {
    case HW_EVENT_COUNTER:
        return size == 1u;
    case HW_EXCEPTION:
        return size == 2u;
    case HW_PC_SAMPLE:
        return size == 4u || size == 1u;
    default:
        if (id >= HW_DATA_FIRST && id < HW_DATA_VALUE)
            return (id & 1u) ? size == 2u : size == 4u;
        return id >= HW_DATA_VALUE && id <= HW_DATA_LAST;
    }
}

static void emit_cont(struct itm_decoder *d, const struct ev_sink *sink)
{
    struct ev e = ev_blank(EV_TIMESTAMP);
    uint8_t h = d->header;
    e.offset = d->packet_offset;
    if ((h & TS_NIBBLE) == 0u) { /* local timestamp format 1 */
        e.timestamp = (struct ev_timestamp){.delta = d->value, .relation = (h >> 4) & 3u, .bytes = d->got};
    } else if (h == HDR_GLOBAL_TS1 || h == HDR_GLOBAL_TS2) {
        e.type = EV_GLOBAL_TS;
        e.global_ts = (struct ev_global_ts){.which = h == HDR_GLOBAL_TS1 ? 1u : 2u, .bytes = d->got, .bits = d->value};
    } else { /* extension */
        e.type = EV_EXTENSION;
        e.extension = (struct ev_extension){.sh = (h >> 2) & 1u, .bytes = d->got,
                                            .info = ((h >> 4) & 7u) | (d->value << 3)};
        if (e.extension.sh == 0u)
            d->page = (uint8_t)(e.extension.info & 7u);
    }
    d->stats.packets++;
    ev_emit(sink, &e);
}

static uint8_t cont_limit(uint8_t h)
{
    return h == HDR_GLOBAL_TS2 ? GLOBAL_TS2_MAX : CONT_MAX;
}

static void header(struct itm_decoder *d, uint8_t h, uint64_t off, const struct ev_sink *sink)
{
    d->header = h;
    d->packet_offset = off;
    d->value = 0;
    d->got = 0;
    if (h == HDR_SYNC) {
        d->state = S_SYNC;
        d->zeros = 1;
        return;
    }
    if ((h & SS_MASK) != 0u) { /* source packet */
        if ((h & SOURCE_HW) && !hardware_header_ok(h)) {
            fail(d);
            return;
        }
        d->need = (uint8_t)source_size(h);
        d->state = S_SOURCE;
        return;
    }
    if (h == HDR_OVERFLOW) {
        struct ev e = {.type = EV_OVERFLOW, .offset = off};
        d->stats.overflows++;
        d->stats.packets++;
        ev_emit(sink, &e);
        return;
    }
    if ((h & TS_NIBBLE) == 0u) {
        if ((h & CONT_BIT) == 0u) { /* format 2: 0x10..0x60 */
            struct ev e = {.type = EV_TIMESTAMP, .offset = off, .timestamp = {.delta = h >> 4}};
            d->stats.packets++;
            ev_emit(sink, &e);
            return;
        }
        if ((h & TS1_BIT) == 0u) { /* 80 90 A0 B0 */
            fail(d);
            return;
        }
        d->state = S_CONT; /* format 1 always has payload */
        return;
    }
    if ((h & EXTENSION_BIT) != 0u) { /* extension: CEEE1S00 */
        if (h & CONT_BIT) {
            d->state = S_CONT;
        } else {
            emit_cont(d, sink);
        }
        return;
    }
    if (h == HDR_GLOBAL_TS1 || h == HDR_GLOBAL_TS2) {
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

/* Is h a software source header (stimulus port write of 1, 2 or 4 bytes)? */
static bool software_header(uint8_t h)
{
    return (h & SS_MASK) != 0u && (h & SOURCE_HW) == 0u;
}

/* A run of whole PC-sample packets (0x17 and four bytes) and software writes, the bulk of a
 * sampling capture, starting at p: emitted straight from the bytes. PC samples come as EV_PC events
 * or, when the sink takes them, as EV_PCS events of up to ITM_RUN_MAX samples; a software write ends
 * such a batch, so the order of events is kept. Stops before anything else, or before a packet
 * that does not end inside p[0..n), and leaves the state as the byte-by-byte path would. Returns
 * the bytes used (0 when p starts with neither). Not inlined: on its own, the loop keeps
 * everything it needs across the sink's calls in registers. */
__attribute__((noinline)) static size_t source_run(struct itm_decoder *d, const uint8_t *p, size_t n,
                                                   const struct ev_sink *sink)
{
    void (*const deliver)(void *, const struct ev *) = sink ? sink->event : NULL; /* loaded once per run */
    void *const ctx = sink ? sink->ctx : NULL;
    const uint8_t *q = p, *const end = p + n, *last = p; /* last: where the latest packet began */
    const uint64_t bias = d->stats.bytes - (uint64_t)(uintptr_t)p; /* q's offset in the stream: q + bias */
    uint64_t packets = 0;
    uint32_t value = 0, size = 0;
    const bool batch = d->batch_pcs;
    struct ev pcs = ev_blank(batch ? EV_PCS : EV_PC), sw = ev_blank(EV_SOFTWARE);
    if (batch)
        pcs.pcs.addrs = d->run;
    for (;;) {
        if (end - q >= PC_SAMPLE_BYTES && *q == HDR_PC_SAMPLE) {
            const uint8_t *first = q;
            size_t m = 0;
            if (batch) {
                /* the last packet this batch may take: ITM_RUN_MAX in all, or the buffer's end */
                const uint8_t *const stop = end - q > PC_SAMPLE_BYTES * ITM_RUN_MAX
                                                ? q + PC_SAMPLE_BYTES * (ITM_RUN_MAX - 1u)
                                                : end - PC_SAMPLE_BYTES;
                uint32_t *out = d->run;
                do {
                    value = *out++ = le32(q + 1);
                    q += PC_SAMPLE_BYTES;
                } while (q <= stop && *q == HDR_PC_SAMPLE);
                m = (size_t)(out - d->run);
                if (deliver) {
                    pcs.pcs.n = m;
                    pcs.offset = (uint64_t)(uintptr_t)first + bias;
                    deliver(ctx, &pcs);
                }
            } else {
                do {
                    value = le32(q + 1);
                    if (deliver) {
                        pcs.pc.addr = value;
                        pcs.offset = (uint64_t)(uintptr_t)q + bias;
                        deliver(ctx, &pcs);
                    }
                    m++;
                    q += PC_SAMPLE_BYTES;
                } while (end - q >= PC_SAMPLE_BYTES && *q == HDR_PC_SAMPLE);
            }
            packets += m;
            last = q - PC_SAMPLE_BYTES;
            size = 4u;
            continue;
        }
        if (q == end || !software_header(*q))
            break;
        size = source_size(*q);
        if ((size_t)(end - q) <= size)
            break;
        value = payload(q + 1, size);
        packets++;
        last = q;
        if (deliver) {
            sw.offset = (uint64_t)(uintptr_t)q + bias;
            sw.software = (struct ev_software){.port = stimulus_port(d, *q), .bytes = size, .value = value};
            deliver(ctx, &sw);
        }
        q += 1u + size;
    }
    size_t k = (size_t)(q - p);
    if (k) {
        d->stats.packets += packets;
        d->stats.bytes += k;
        d->header = *last;
        d->packet_offset = (uint64_t)(uintptr_t)last + bias;
        d->value = value;
        d->got = d->need = (uint8_t)size;
    }
    return k;
}

/* The window held after a bad packet or a hole is full: decoded from the boundary its readings agree
 * on (the bytes before it skipped), else hunted through for a sync as before. Its bytes were counted
 * in hunted as they came; they are fed again from their own offsets. */
static void judge_window(struct itm_decoder *d, const struct ev_sink *sink)
{
    uint8_t w[ITM_RESYNC_WINDOW];
    size_t n = d->n_window, at = boundary(d->window, n), from = at < n ? at : 0; /* (none: all hunted again) */
    memcpy(w, d->window, n);
    d->n_window = 0;
    d->stats.hunted -= n - from;
    d->stats.bytes = d->window_at + from;
    d->stats.resyncs += at < n;
    d->state = at < n ? S_HEADER : S_HUNT;
    itm_feed(d, w + from, n - from, sink);
}

void itm_feed(struct itm_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink)
{
    for (size_t i = 0; i < len; i++) {
        if (d->state == S_HEADER && (buf[i] == HDR_PC_SAMPLE || software_header(buf[i]))) {
            size_t k = source_run(d, buf + i, len - i, sink);
            if (k) {
                i += k - 1u;
                continue;
            }
        }
        uint8_t b = buf[i];
        uint64_t off = d->stats.bytes++;
        switch (d->state) {
        case S_HEADER:
            if ((b & SS_MASK) != 0u && len - i > source_size(b) && ((b & SOURCE_HW) == 0u || hardware_header_ok(b))) {
                /* a source packet (a PC sample, mostly) wholly in this buffer: its payload at once */
                uint32_t size = source_size(b);
                d->header = b;
                d->packet_offset = off;
                d->value = payload(buf + i + 1, size);
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
            d->value |= (uint64_t)(b & CONT_PAYLOAD) << (7u * d->got++);
            if ((b & CONT_BIT) == 0u) {
                emit_cont(d, sink);
                d->state = S_HEADER;
            } else if (d->got >= cont_limit(d->header)) {
                fail(d);
            }
            break;
        case S_WINDOW: /* (counted as skipped until judged) */
            d->stats.hunted++;
            if (d->n_window == 0u)
                d->window_at = off;
            d->window[d->n_window++] = b;
            if (d->n_window == ITM_RESYNC_WINDOW)
                judge_window(d, sink);
            break;
        case S_SYNC:
        case S_HUNT:
            if (b == HDR_SYNC) {
                if (d->zeros++ == 0u && d->state == S_HUNT)
                    d->packet_offset = off;
                if (d->state == S_HUNT)
                    d->stats.hunted++;
            } else if (b == SYNC_LAST && d->zeros >= SYNC_ZERO_BYTES) {
                struct ev e = {.type = EV_SYNC, .offset = d->packet_offset};
                if (d->state == S_HUNT)
                    d->stats.hunted -= d->zeros; /* the zeros were the sync, not garbage */
                if (d->rejoining) { /* what came since the source came back: the gap's */
                    d->stats.rejoined += d->stats.hunted - d->hunted_at_rejoin;
                    d->stats.hunted = d->hunted_at_rejoin;
                    d->rejoining = false;
                }
                if (d->stats.syncs++ == 0u)
                    d->stats.hunted_before_sync = d->stats.hunted;
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

uint64_t itm_cut(const struct itm_decoder *d)
{
    return d->state == S_SOURCE || d->state == S_CONT ? d->stats.bytes - d->packet_offset : 0;
}

size_t itm_counters(const struct itm_stats *st, struct dec_counter *out)
{
    const struct dec_counter c[] = {
        {"itm_packets", st->packets}, {"itm_errors", st->errors}, {"itm_overflows", st->overflows},
        {"itm_syncs", st->syncs},     {"itm_hunted", st->hunted},
    };
    memcpy(out, c, sizeof c);
    return sizeof c / sizeof c[0];
}

void itm_describe(const struct itm_stats *st, char *buf, size_t len)
{
    snprintf(buf, len, "%llu bytes, %llu bad packets, %llu bytes skipped looking for sync",
             (unsigned long long)st->bytes, (unsigned long long)st->errors, (unsigned long long)st->hunted);
}

enum { L_HEADER, L_SOURCE, L_CONT, L_ZEROS };

/* The header classes as header() reads them, without the events. */
static enum itm_lint_result lint_header(struct itm_lint *l, uint8_t h)
{
    l->header = h;
    l->got = 0;
    if (h == HDR_SYNC) {
        l->state = L_ZEROS;
        l->zeros = 1;
        return ITM_LINT_MORE;
    }
    if ((h & SS_MASK) != 0u) {
        if ((h & SOURCE_HW) && !hardware_header_ok(h))
            return ITM_LINT_ERROR;
        l->state = L_SOURCE;
        return ITM_LINT_MORE;
    }
    if (h == HDR_OVERFLOW || ((h & TS_NIBBLE) == 0u && (h & CONT_BIT) == 0u)) /* overflow, timestamp format 2 */
        return ITM_LINT_PACKET;
    if ((h & TS_NIBBLE) == 0u && (h & TS1_BIT) == 0u) /* 80 90 A0 B0 */
        return ITM_LINT_ERROR;
    if ((h & EXTENSION_BIT) != 0u && (h & CONT_BIT) == 0u) /* a one-byte extension */
        return ITM_LINT_PACKET;
    if ((h & TS_NIBBLE) == 0u || (h & EXTENSION_BIT) != 0u || h == HDR_GLOBAL_TS1 || h == HDR_GLOBAL_TS2) {
        l->state = L_CONT;
        return ITM_LINT_MORE;
    }
    return ITM_LINT_ERROR;
}

enum itm_lint_result itm_lint(struct itm_lint *l, uint8_t b)
{
    switch (l->state) {
    case L_SOURCE:
        if (++l->got < source_size(l->header))
            return ITM_LINT_MORE;
        l->state = L_HEADER;
        return ITM_LINT_PACKET;
    case L_CONT:
        if ((b & CONT_BIT) == 0u) {
            l->state = L_HEADER;
            return ITM_LINT_PACKET;
        }
        if (++l->got < cont_limit(l->header))
            return ITM_LINT_MORE;
        l->state = L_HEADER;
        return ITM_LINT_ERROR;
    case L_ZEROS:
        if (b == HDR_SYNC) {
            l->zeros += l->zeros < 255u;
            return ITM_LINT_MORE;
        }
        l->state = L_HEADER;
        return b == SYNC_LAST && l->zeros >= SYNC_ZERO_BYTES ? ITM_LINT_PACKET : ITM_LINT_ERROR;
    default:
        return lint_header(l, b);
    }
}
