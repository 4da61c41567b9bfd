/* orbuculum's orbflow framing (its port 3402): frames delimited by 0x00, each COBS-encoded; a
 * decoded frame is [tag][payload...][sum] with tag + payload + sum = 0 (mod 256), the tag naming
 * the stream (1: ITM). The payload of one tag is passed on to a byte sink, normally an ITM
 * decoder. Bytes before the first delimiter are dropped: a capture may start mid-frame. */
#ifndef CMPROF_DECODE_ORBFLOW_H
#define CMPROF_DECODE_ORBFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define ORBFLOW_MAX 8192 /* longest encoded frame kept */

struct orbflow_stats {
    uint64_t bytes;
    uint64_t frames;      /* good frames, of any tag */
    uint64_t bad_sums;    /* dropped: the sum was not 0 */
    uint64_t bad_cobs;    /* dropped: the COBS codes did not fit the frame */
    uint64_t too_long;    /* dropped: longer than ORBFLOW_MAX */
    uint64_t unsynced;    /* bytes before the first delimiter */
    uint64_t after_gap;   /* bytes after a gap with no delimiter within a frame's length (no frame's tail) */
    uint64_t other_tags;  /* good frames of other streams, not passed on */
    uint8_t tags_seen[32]; /* bit per tag whose frames were not passed on */
};

struct orbflow_decoder {
    uint8_t frame[ORBFLOW_MAX];
    size_t len;
    bool synced, overflow;
    bool rejoined; /* after a gap: the bytes up to the next delimiter are the gap's, not counted... */
    size_t gap_tail; /* ...unless more come than a frame holds (counted as after_gap then) */
    uint8_t wanted_tag;
    struct orbflow_stats stats;
};

void orbflow_init(struct orbflow_decoder *d, uint8_t wanted_tag);
void orbflow_feed(struct orbflow_decoder *d, const uint8_t *buf, size_t len, const struct byte_sink *sink);
/* The input resumes after a gap (a source that went away and came back): the frame in progress is
 * dropped with the gap, and frames begin again at the next delimiter. */
void orbflow_rejoin(struct orbflow_decoder *d);
/* Whether buf looks like orbflow: at least three frames with good COBS and sums, and no bad ones. */
bool orbflow_detect(const uint8_t *buf, size_t len);
/* Whether buf may still be the start of orbflow: no more bad frames than good ones (there may be
 * none yet). */
bool orbflow_possible(const uint8_t *buf, size_t len);
/* Calls each(ctx, at, n, good) for every complete frame of buf: the delimiter before it at buf[at],
 * n bytes with both delimiters. */
void orbflow_walk(const uint8_t *buf, size_t len, void (*each)(void *ctx, size_t at, size_t n, bool good),
                  void *ctx);
/* The other tags seen, as "2, 3" ("" when none); returns how many. */
unsigned orbflow_other_tags(const struct orbflow_stats *st, char *buf, size_t len);
/* The counters a report lists (at most DEC_COUNTERS_MAX); returns how many. */
size_t orbflow_counters(const struct orbflow_stats *st, struct dec_counter *out);
/* What the decoder saw: frames only of other streams, or its good and damaged frames, in buf. */
void orbflow_describe(const struct orbflow_stats *st, char *buf, size_t len);
/* Bytes of a frame begun and not ended by its delimiter (the input stopped inside it, or after a gap
 * before any delimiter came): 0 when none. */
size_t orbflow_cut(const struct orbflow_decoder *d);

#endif
