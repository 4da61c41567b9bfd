/* ITM/DWT packet decoder (ARMv7-M Architecture Reference Manual, appendix D4). A push state
 * machine: feed it any slices of the stream, it emits the same events. A reserved header or a
 * malformed packet is counted; the packet boundaries are then found again from the packets'
 * structure where that is unambiguous (see itm_feed), else the decoder hunts for the next
 * synchronisation packet. */
#ifndef CMPROF_DECODE_ITM_H
#define CMPROF_DECODE_ITM_H

#include "event.h"

#include <stdbool.h>

struct itm_stats {
    uint64_t bytes;
    uint64_t packets;  /* complete packets of any kind */
    uint64_t syncs;
    uint64_t overflows;
    uint64_t errors;   /* reserved headers and malformed packets */
    uint64_t hunted;   /* bytes skipped while hunting for sync */
    uint64_t hunted_before_sync; /* of them, those before the first sync (a receiver that joined a
                                    running stream), once one came */
    uint64_t first_error; /* 1 + byte offset of the first error, 0 when none */
    uint64_t rejoined; /* bytes skipped after the source came back (itm_rejoin), up to its next sync: the
                          gap's, not an error */
    uint64_t holes;    /* bytes lost before the decoder (itm_hole): the packet across each dropped */
    uint64_t resyncs;  /* packet boundaries found again from the packets' structure, not a sync, after a bad
                          packet or a hole (the bytes before the boundary are counted in hunted) */
};

#define ITM_RUN_MAX 64u /* PC samples in one EV_PCS event */
#define ITM_RESYNC_WINDOW 40u /* bytes read ahead, after a bad packet or a hole, to find a packet boundary */

struct itm_decoder {
    bool batch_pcs;     /* set after itm_init when the sink takes EV_PCS: a run of PC-sample packets
                           then comes as EV_PCS events (ITM_RUN_MAX samples at most, offset = the
                           first one's) instead of one EV_PC each */
    int state;          /* private */
    uint8_t header;
    uint8_t need;       /* payload bytes still expected */
    uint8_t got;
    uint8_t page;       /* stimulus port page from extension packets */
    uint32_t zeros;     /* run of zero bytes (sync detection) */
    uint64_t value;
    uint64_t packet_offset;
    bool rejoining;            /* itm_rejoin: hunting for the sync after the source came back ... */
    uint64_t hunted_at_rejoin; /* ... with hunted at this count then */
    struct itm_stats stats;
    uint8_t n_window;          /* bytes held after a bad packet or a hole, judged when ITM_RESYNC_WINDOW came */
    uint64_t window_at;        /* the offset of window[0] */
    uint8_t window[ITM_RESYNC_WINDOW];
    uint32_t run[ITM_RUN_MAX]; /* the EV_PCS being filled */
};

/* Start decoding. wait_for_sync: ignore everything until the first sync packet (for a receiver
 * that joins a stream mid-packet). */
void itm_init(struct itm_decoder *d, bool wait_for_sync);

/* After a bad packet or a hole, the next ITM_RESYNC_WINDOW bytes are held and read from each of their
 * first bytes as the start of a packet: when every reading that keeps to ITM's framing through them
 * meets at one packet boundary (the true reading is among them, so that boundary is true), with at
 * least 4 PC-sample packets (a fixed header and length) after it, decoding goes on from there; else
 * the decoder hunts for the next sync packet. No packet is emitted from a reading that could be wrong. */
void itm_feed(struct itm_decoder *d, const uint8_t *buf, size_t len, const struct ev_sink *sink);
/* Bytes were lost here, before the decoder (a TPIU frame's byte hit on the line, its frame's rest
 * dropped): the packet in progress is dropped, and the boundaries found again as after a bad packet. */
void itm_hole(struct itm_decoder *d);
/* The source came back after going away (a reconnect): the packet it was inside is dropped and what
 * comes before the next sync is skipped as at a live start, counted in `rejoined` (not as a bad packet,
 * nor as hunted: the decoding did not fail, the stream had a gap). */
void itm_rejoin(struct itm_decoder *d);
/* The counters a report lists (at most DEC_COUNTERS_MAX); returns how many. */
size_t itm_counters(const struct itm_stats *st, struct dec_counter *out);
/* Bytes of a packet begun and not ended (the input stopped inside it): 0 when none. */
uint64_t itm_cut(const struct itm_decoder *d);
/* What the decoder saw, e.g. "4096 bytes, 2 bad packets, ...", in buf. */
void itm_describe(const struct itm_stats *st, char *buf, size_t len);

/* A light check of ITM framing, byte by byte, with no events: for format detection and TPIU frame
 * alignment, which ask how cleanly some bytes read as ITM. After an error it takes the next byte
 * as a header instead of hunting for a sync packet. Start from a zeroed struct. */
struct itm_lint {
    uint8_t state, header, got, zeros;
};
enum itm_lint_result { ITM_LINT_MORE, ITM_LINT_PACKET, ITM_LINT_ERROR };
/* MORE: b is inside a packet (or a run of zeros); PACKET: b ended a good one; ERROR: b is bad. */
enum itm_lint_result itm_lint(struct itm_lint *l, uint8_t b);

#endif
