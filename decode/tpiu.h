/* TPIU formatter deframer: 16-byte frames, aligned by full synchronisation packets (FF FF FF 7F)
 * when the stream has them; half syncs (FF 7F) are dropped. A stream without full syncs (SWO
 * captures often have none: the line's idle gaps were their only alignment) is aligned by its
 * content: the first TPIU_BLOCK bytes are held back and read at each of the 16 offsets, and the
 * offset where the frames' IDs are valid and the wanted source reads as clean ITM wins; every
 * later block is checked again at the offset in use, and the frames are re-aligned when another
 * offset reads clearly better (counted). The bytes of one source ID are passed on to a byte sink,
 * normally an ITM decoder. A capture begun after the formatter's only ID change (one source: its ID
 * is written once) has none: until one comes, bytes are held a block at a time and read as the
 * wanted source's when they read as its clean ITM, else as nobody's. */
#ifndef CMPROF_DECODE_TPIU_H
#define CMPROF_DECODE_TPIU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "itm.h"

#define TPIU_BLOCK 1024u /* bytes judged at a time when aligning by content */
#define TPIU_FULL_SYNC 0xFFFFFF7Fu /* a full sync, FF FF FF 7F: four bytes, the oldest in the high bits */

enum tpiu_how { TPIU_UNALIGNED, TPIU_BY_SYNC, TPIU_BY_CONTENT, TPIU_FORCED };

/* How the frames were first aligned, for the report. */
struct tpiu_alignment {
    enum tpiu_how how;
    uint8_t id;           /* the source read */
    bool id_assumed;      /* no ID change before the wanted source's data: the bytes before the first
                           * one were read as that source's (a capture that began after the formatter's
                           * only ID change: one source, its ID written once) */
    uint64_t at;          /* input offset of the first whole frame */
    uint32_t judged;      /* BY_CONTENT: the bytes judged; the chosen offset's clean ITM bytes and faults */
    uint32_t clean, faults;
    uint8_t runner_up;    /* the next best offset (at mod 16) and its figures */
    uint32_t runner_clean, runner_faults;
};

struct tpiu_stats {
    uint64_t bytes;
    uint64_t frames;
    uint64_t syncs;       /* full syncs */
    uint64_t half_syncs;
    uint64_t unsynced;    /* bytes dropped before the first whole frame */
    uint64_t other_ids;   /* data bytes of other sources, not passed on */
    uint64_t realigns;    /* the frames slipped and were aligned again (by content or by a full sync) */
    uint64_t cut;         /* bytes of frames cut short by a re-alignment */
    uint64_t stray_ids;   /* ID changes to a source that sent nothing of its own, its frames read as the
                           * wanted source's ITM again: a hit byte in a one-source stream */
    uint64_t stray_bytes; /* the bytes a stray change gave its ID (the rest of its frame, and stretches held
                           * while it was judged): dropped, counted here only */
    uint64_t wanted_ids;  /* ID changes to the wanted source read from another, or from itself (a one-source
                           * formatter writes one at most: its changes back from the null source's padding are
                           * not counted; more than one after a stray change: that change was a second source's) */
    uint8_t ids_seen[16]; /* bit per source ID (0..127) whose data was not passed on */
    struct tpiu_alignment align;
};

/* Frames read at one alignment: the decoder's own, or a candidate being judged. */
struct tpiu_lane {
    uint8_t frame[16];
    uint8_t pos;          /* bytes of the frame so far */
    uint8_t id;           /* the source that owns the next byte */
    uint8_t last_real;    /* the last source with data of its own (not the null source's padding) */
    bool id_known;        /* an ID change read, or the source before the first judged from content */
    bool whole;           /* false until the first frame boundary: that partial frame is dropped */
    uint8_t packet_len;   /* bytes of the ITM packet being checked */
    struct itm_lint lint; /* the wanted source's bytes, checked as ITM */
    uint32_t clean;       /* bytes of good ITM packets of the wanted source */
    uint32_t faults;      /* bad ITM packets, reserved IDs, ID changes that own no byte */
};

struct tpiu_decoder {
    struct tpiu_lane cur;
    uint32_t window;      /* the last four bytes, for full-sync detection */
    uint8_t wanted_id;
    uint8_t force_at;     /* TPIU_FORCED: the first frame begins at this input offset */
    uint8_t cur_start;    /* the offset in the block where cur's frames begin */
    uint8_t block_id;     /* cur's source at block[0] */
    uint64_t other_at_block; /* stats.other_ids at block[0] */
    size_t n_block;
    uint64_t block_at;    /* input offset of block[0] */
    struct tpiu_stats stats;
    /* the stretches judged so far while no ID change came (between full syncs, a block at a time): the
     * wanted source's clean ITM in them, and its score less nobody's; judged as one, not each alone */
    uint32_t unknown_clean;
    int64_t unknown_margin;
    /* after a gap (tpiu_rejoin), until aligned again from what comes; stats.align stays the first
     * alignment, the report's */
    bool rejoined;
    uint8_t doubted_id;    /* an ID change away from the wanted source, judged on the block after it */
    uint64_t wanted_ids_at_doubt; /* stats.wanted_ids before the doubted change's frame */
    uint8_t doubted_out[15]; /* that frame's bytes of the wanted source, passed on when no slip is found */
    uint8_t n_doubted_out;
    bool other_stream;     /* a whole block came of one other source, changing the source no more: a
                            * stream of its own, not noise's */
    struct tpiu_lane lanes[16];
    uint8_t block[TPIU_BLOCK]; /* held back until the first alignment, then kept for the checks */
};

void tpiu_init(struct tpiu_decoder *d, uint8_t wanted_id);
/* After tpiu_init: frames begin at input offset `at` (0..15); only a full sync changes that. */
void tpiu_force_offset(struct tpiu_decoder *d, unsigned at);
/* The other source IDs seen, as "2, 3" ("" when none); returns how many. */
unsigned tpiu_other_ids(const struct tpiu_stats *st, char *buf, size_t len);
void tpiu_feed(struct tpiu_decoder *d, const uint8_t *buf, size_t len, const struct byte_sink *sink);
/* The input resumes after a gap (a source that went away and came back): the frame in progress is
 * cut, and the frames are aligned again from what comes (a full sync, else the next block's content),
 * as at the start; bytes held from before the gap are decoded first, at the alignment they read best. */
void tpiu_rejoin(struct tpiu_decoder *d, const struct byte_sink *sink);
/* End of input: a stream shorter than TPIU_BLOCK with no full sync is aligned on what came. */
void tpiu_finish(struct tpiu_decoder *d, const struct byte_sink *sink);
/* Bytes of a frame begun and not ended (the input stopped inside it): 0 when none. */
unsigned tpiu_cut(const struct tpiu_decoder *d);
/* The counters a report lists (at most DEC_COUNTERS_MAX); returns how many. */
size_t tpiu_counters(const struct tpiu_stats *st, struct dec_counter *out);
/* What the decoder saw when it passed nothing on: frames only of other source IDs, in buf;
 * false when that is not the case (then the ITM decoder inside has more to say). */
bool tpiu_describe(const struct tpiu_stats *st, char *buf, size_t len);
/* How the frames were aligned, when not by a full sync: "frames aligned by their content at byte
 * offset 5 (...)"; false (and "") when a full sync aligned them or nothing did. */
bool tpiu_alignment_text(const struct tpiu_stats *st, char *buf, size_t len);
/* When the bytes before the first ID change were read as the wanted source's, says so; false (and
 * "") otherwise. */
bool tpiu_source_text(const struct tpiu_stats *st, char *buf, size_t len);

/* For format detection: the offset (0..15) where buf reads best as frames carrying ITM on
 * wanted_id, that offset's clean ITM bytes and faults, and the source taken to own the bytes
 * before the first ID change (*start_id: 0, nobody, or wanted_id when they read as its). */
unsigned tpiu_best_offset(const uint8_t *buf, size_t len, uint8_t wanted_id, uint8_t *start_id, uint32_t *clean,
                          uint32_t *faults);
/* Calls each(ctx, start, faults) for every whole frame of buf beginning at offset, the bytes
 * before the first ID change taken as start_id's. */
void tpiu_walk(const uint8_t *buf, size_t len, unsigned offset, uint8_t wanted_id, uint8_t start_id,
               void (*each)(void *ctx, size_t start, uint32_t faults), void *ctx);

#endif
