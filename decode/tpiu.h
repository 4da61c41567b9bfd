/* TPIU formatter deframer: 16-byte frames, aligned by full synchronisation packets
 * (FF FF FF 7F); half syncs (FF 7F) are dropped. The bytes of one source ID are passed on to
 * a byte sink, normally an ITM decoder. Nothing is passed on before the first full sync. */
#ifndef CMPROF_DECODE_TPIU_H
#define CMPROF_DECODE_TPIU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct tpiu_stats {
    uint64_t bytes;
    uint64_t frames;
    uint64_t syncs;       /* full syncs */
    uint64_t half_syncs;
    uint64_t unsynced;    /* bytes dropped before the first full sync */
    uint64_t other_ids;   /* data bytes of other sources, not passed on */
    uint8_t ids_seen[16]; /* bit per source ID (0..127) whose data was not passed on */
};

struct tpiu_decoder {
    uint8_t frame[16];
    unsigned pos;
    bool synced;
    uint32_t window;     /* the last four bytes, for full-sync detection */
    uint8_t wanted_id;
    uint8_t current_id;
    struct tpiu_stats stats;
};

void tpiu_init(struct tpiu_decoder *d, uint8_t wanted_id);
/* The other source IDs seen, as "2, 3" ("" when none); returns how many. */
unsigned tpiu_other_ids(const struct tpiu_stats *st, char *buf, size_t len);
void tpiu_feed(struct tpiu_decoder *d, const uint8_t *buf, size_t len, const struct byte_sink *sink);
/* The counters a report lists (at most DEC_COUNTERS_MAX); returns how many. */
size_t tpiu_counters(const struct tpiu_stats *st, struct dec_counter *out);
/* What the decoder saw when it passed nothing on: frames only of other source IDs, in buf;
 * false when that is not the case (then the ITM decoder inside has more to say). */
bool tpiu_describe(const struct tpiu_stats *st, char *buf, size_t len);

#endif
