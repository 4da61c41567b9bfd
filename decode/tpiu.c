/* TPIU deframer (CoreSight TPIU formatter). In a frame, even bytes 0..14 are either an ID change
 * (bit 0 set: ID = bits 7:1) or data whose bit 0 is stored in byte 15 (bit k for byte 2k); odd
 * bytes 1..13 are data. After an ID change, aux bit 0 means the new ID owns the next odd byte,
 * aux bit 1 means the old one still does. */
#include "tpiu.h"

#include <stdio.h>

#include <string.h>

#define HALF_SYNC_FIRST 0xFFu /* a half sync, FF 7F, in place of a data pair */
#define HALF_SYNC_LAST 0x7Fu
#define ID_NULL 0x00u         /* source IDs with no data of their own */
#define ID_TRIGGER_OLD 0x7Fu
#define ID_RESERVED_FIRST 0x70u /* 0x70..0x7F reserved, but for: */
#define ID_FLUSH_RESPONSE 0x7Bu
#define ID_TRIGGER 0x7Du
#define ID_UNDOUBTED 0xFFu    /* doubted_id when no ID change is in doubt (IDs are 7 bits) */

/* A lane whose frames begin at buf[offset], with source id (0: nobody's) before the first ID change. */
static void lane_start(struct tpiu_lane *l, unsigned offset, uint8_t id)
{
    memset(l, 0, sizeof *l);
    l->pos = (uint8_t)((16u - offset % 16u) % 16u);
    l->whole = l->pos == 0;
    l->id = id;
    l->last_real = id;
    l->id_known = id != ID_NULL;
}

void tpiu_init(struct tpiu_decoder *d, uint8_t wanted_id)
{
    memset(d, 0, sizeof *d);
    d->wanted_id = wanted_id;
    d->doubted_id = ID_UNDOUBTED;
    d->stats.align.id = wanted_id;
    lane_start(&d->cur, 0, 0);
}

void tpiu_force_offset(struct tpiu_decoder *d, unsigned at)
{
    d->stats.align.how = TPIU_FORCED;
    d->stats.align.at = at % 16u;
    lane_start(&d->cur, at % 16u, 0);
}

/* A data byte of a source nobody asked for: counted, and its ID remembered for the report. */
static void other_source(struct tpiu_stats *st, uint8_t id)
{
    if (id == ID_NULL || id == ID_TRIGGER_OLD) /* null source, trigger */
        return;
    st->other_ids++;
    st->ids_seen[id >> 3] |= (uint8_t)(1u << (id & 7u));
}

unsigned tpiu_other_ids(const struct tpiu_stats *st, char *buf, size_t len)
{
    unsigned n = 0;
    size_t k = 0;
    if (len)
        buf[0] = '\0';
    for (unsigned id = 1; id < 128; id++) {
        if (!(st->ids_seen[id >> 3] & (1u << (id & 7u))))
            continue;
        n++;
        if (len > k + 6)
            k += (size_t)snprintf(buf + k, len - k, "%s%u", k ? ", " : "", id);
    }
    return n;
}

/* IDs 0x70..0x7F are reserved, but for 0x7B (flush response) and 0x7D (trigger). */
static bool reserved_id(uint8_t id)
{
    return id >= ID_RESERVED_FIRST && id != ID_FLUSH_RESPONSE && id != ID_TRIGGER;
}

/* The whole frame in l: the wanted source's bytes into out, returns how many; faults counted
 * (a reserved ID, an ID change that owns no byte). st: the decoder's stats, whose other sources
 * are counted; NULL for a candidate being judged. */
static size_t frame_bytes(struct tpiu_lane *l, uint8_t wanted, uint8_t *out, struct tpiu_stats *st)
{
    const uint8_t *f = l->frame;
    uint8_t aux = f[15];
    size_t n = 0;
    for (unsigned i = 0; i < 8; i++) {
        uint8_t b = f[2 * i];
        bool aux_bit = (aux >> i) & 1u;
        uint8_t next_id = l->id;
        if (b & 1u) {
            next_id = b >> 1;
            l->id_known = true;
            /* (to the wanted source from another, or from itself, which a formatter never writes: a hit
             * judged a stray change was another source's) */
            if (st && next_id == wanted && (l->last_real != wanted || l->id == wanted))
                st->wanted_ids++;
            if (next_id != ID_NULL && next_id != ID_TRIGGER_OLD)
                l->last_real = next_id;
            l->faults += reserved_id(next_id) || (aux_bit && i < 7 && (f[2 * i + 2] & 1u));
            if (!aux_bit)
                l->id = next_id; /* the new ID owns the following byte */
        } else if (l->id == wanted) {
            out[n++] = (uint8_t)(b | aux_bit);
        } else if (st) {
            other_source(st, l->id);
        }
        if (i < 7) {
            if (l->id == wanted)
                out[n++] = f[2 * i + 1];
            else if (st)
                other_source(st, l->id);
        }
        l->id = next_id;
    }
    return n;
}

/* frame_bytes for a candidate: a frame with no byte of the wanted source (most frames, at most
 * offsets) only has its faults counted and its last ID kept, by its ID bytes alone. */
static size_t lane_frame(struct tpiu_lane *l, uint8_t wanted, uint8_t *out)
{
    const uint8_t *f = l->frame;
    unsigned ids = 0;
    bool wanted_id = false;
    for (unsigned i = 0; i < 8; i++) {
        ids |= (f[2 * i] & 1u) << i;
        wanted_id |= f[2 * i] == (uint8_t)(wanted << 1 | 1u);
    }
    if (wanted_id || l->id == wanted)
        return frame_bytes(l, wanted, out, NULL);
    l->id_known |= ids != 0;
    for (unsigned i = 0; i < 8; i++)
        if (ids & (1u << i)) {
            l->id = f[2 * i] >> 1;
            l->last_real = l->id != ID_NULL && l->id != ID_TRIGGER_OLD ? l->id : l->last_real;
            l->faults += reserved_id(l->id) || (((f[15] & ids >> 1) >> i) & 1u && i < 7);
        }
    return 0;
}

/* The wanted source's bytes of a frame, checked as ITM. */
static void lane_check(struct tpiu_lane *l, const uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        l->packet_len++;
        enum itm_lint_result r = itm_lint(&l->lint, out[i]);
        if (r == ITM_LINT_MORE)
            continue;
        if (r == ITM_LINT_PACKET)
            l->clean += l->packet_len;
        else
            l->faults++;
        l->packet_len = 0;
    }
}

/* One byte into lane l; true when it completed a whole frame. A half sync in place of a data pair
 * is dropped. */
static bool lane_byte(struct tpiu_lane *l, uint8_t b, uint64_t *half_syncs)
{
    if (l->pos % 2u == 1u && l->frame[l->pos - 1] == HALF_SYNC_FIRST && b == HALF_SYNC_LAST) {
        l->pos--;
        if (half_syncs)
            (*half_syncs)++;
        return false;
    }
    l->frame[l->pos++] = b;
    if (l->pos < 16u)
        return false;
    l->pos = 0;
    if (!l->whole) { /* the end of the partial frame before the first boundary */
        l->whole = true;
        return false;
    }
    return true;
}

/* A fresh lane through buf. Without a half sync in buf (almost always), its frames are read where
 * they lie, and only the last, partial one is copied: the same as byte by byte, many times faster
 * (all 16 lanes read every block). */
static void lane_run(struct tpiu_lane *l, const uint8_t *buf, size_t len, uint8_t wanted, bool half_syncs)
{
    uint8_t out[15];
    size_t i = 0;
    if (!half_syncs && l->pos + len >= 16u) {
        i = (16u - l->pos) % 16u; /* the partial frame before the first boundary: dropped */
        l->pos = 0;
        l->whole = true;
        for (; i + 16u <= len; i += 16u) {
            memcpy(l->frame, buf + i, 16);
            lane_check(l, out, lane_frame(l, wanted, out));
        }
    }
    for (; i < len; i++)
        if (lane_byte(l, buf[i], NULL))
            lane_check(l, out, lane_frame(l, wanted, out));
}

static bool any_half_sync(const uint8_t *buf, size_t len)
{
    for (const uint8_t *p = buf; (p = memchr(p, HALF_SYNC_LAST, (size_t)(buf + len - p))) != NULL; p++)
        if (p > buf && p[-1] == HALF_SYNC_FIRST)
            return true;
    return false;
}

static int64_t score(const struct tpiu_lane *l)
{
    return (int64_t)l->clean - 16 * (int64_t)l->faults;
}

/* Reads buf at all 16 offsets, lanes[o] beginning its frames at buf[o] with source id; returns
 * the best offset (the lowest among equals) and the next best in *runner_up. */
static unsigned judge(struct tpiu_lane lanes[16], const uint8_t *buf, size_t len, uint8_t wanted, uint8_t id,
                      unsigned *runner_up)
{
    unsigned best = 0, second = 1;
    bool half_syncs = any_half_sync(buf, len);
    for (unsigned o = 0; o < 16; o++) {
        lane_start(&lanes[o], o, id);
        lane_run(&lanes[o], buf, len, wanted, half_syncs);
    }
    if (score(&lanes[1]) > score(&lanes[0]))
        best = 1, second = 0;
    for (unsigned o = 2; o < 16; o++) {
        if (score(&lanes[o]) > score(&lanes[best])) {
            second = best;
            best = o;
        } else if (score(&lanes[o]) > score(&lanes[second])) {
            second = o;
        }
    }
    if (runner_up)
        *runner_up = second;
    return best;
}

/* Whether bytes before the first ID change read as the wanted source's: clean ITM bytes read so (clean),
 * and that reading's score over reading them as nobody's (margin): enough of it, more than faults cost. */
static bool wanted_wins(uint64_t clean, int64_t margin)
{
    return clean >= 32u && margin > 0;
}

/* wanted_wins for a lane read with the wanted source before the first ID change, against one read with
 * nobody's. */
static bool reads_as_wanted(const struct tpiu_lane *wanted, const struct tpiu_lane *nobody)
{
    return wanted_wins(wanted->clean, score(wanted) - score(nobody));
}

/* judge, twice: with nobody's bytes before the first ID change, then with the wanted source's
 * there (a capture begun after the formatter's only ID change: one source, its ID written once).
 * The second wins only when it reads better; *id is the start source chosen. */
static unsigned judge_start(struct tpiu_lane lanes[16], const uint8_t *buf, size_t len, uint8_t wanted,
                            uint8_t *id, unsigned *runner_up)
{
    unsigned second, o = judge(lanes, buf, len, wanted, ID_NULL, &second);
    struct tpiu_lane best = lanes[o], next = lanes[second];
    unsigned second_w, o_w = judge(lanes, buf, len, wanted, wanted, &second_w);
    *id = reads_as_wanted(&lanes[o_w], &best) ? wanted : ID_NULL;
    if (*id == wanted) {
        *runner_up = second_w;
        return o_w;
    }
    lanes[o] = best;
    lanes[second] = next;
    *runner_up = second;
    return o;
}

#define ANY_SOURCE (-1) /* changes_source: a change to any source counts */

/* Whether a whole frame of buf, its frames beginning at offset, changes the source (byte 15 of a frame
 * is the aux bits): to any, or, with a wanted source, to one with data of its own other than wanted (a
 * one-source formatter pads idle time with the null source's frames, and writes its own ID again after
 * them). */
static bool changes_source(const uint8_t *buf, size_t len, unsigned offset, int wanted)
{
    const uint8_t null_change = ID_NULL << 1 | 1u, wanted_change = (uint8_t)((unsigned)wanted << 1 | 1u);
    for (size_t f = offset; f + 16u <= len; f += 16u)
        for (unsigned i = 0; i < 15u; i += 2u)
            if ((buf[f + i] & 1u) &&
                (wanted == ANY_SOURCE || (buf[f + i] != null_change && buf[f + i] != wanted_change)))
                return true;
    return false;
}

static bool any_id_change(const uint8_t *buf, size_t len, unsigned offset)
{
    return changes_source(buf, len, offset, ANY_SOURCE);
}

/* The source the first ID change in buf's whole frames (beginning at offset) changes to; -1 when none. */
static int first_change(const uint8_t *buf, size_t len, unsigned offset)
{
    for (size_t f = offset; f + 16u <= len; f += 16u)
        for (unsigned i = 0; i < 15u; i += 2u)
            if (buf[f + i] & 1u)
                return buf[f + i] >> 1;
    return -1;
}

/* A new block to check begins at the next byte. */
static void next_block(struct tpiu_decoder *d)
{
    if (d->n_block == TPIU_BLOCK && d->cur.id != d->wanted_id && d->cur.id != ID_NULL && d->block_id == d->cur.id &&
        !any_id_change(d->block, d->n_block, d->cur_start))
        d->other_stream = true;
    d->block_at += d->n_block;
    d->n_block = 0;
    d->block_id = d->cur.id;
    d->other_at_block = d->stats.other_ids;
    d->cur_start = (uint8_t)((16u - d->cur.pos) % 16u);
    d->cur.clean = d->cur.faults = 0;
}

/* The doubted frame's bytes of the wanted source passed on: no slip. */
static void pass_doubted(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    if (d->n_doubted_out && sink && sink->bytes)
        sink->bytes(sink->ctx, d->doubted_out, d->n_doubted_out);
    d->n_doubted_out = 0;
}

/* cur completed a frame: its wanted bytes go on. The first change away from the wanted source in a
 * stream that had no other may be a byte hit on the line (a one-source formatter writes its ID once: a
 * stray change would take the rest of the capture): the source is doubted, and the bytes after the
 * frame are held and judged (resolve_doubt). */
static void deliver(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    uint8_t out[15];
    bool was_wanted = d->cur.id == d->wanted_id && d->cur.id_known, alone = d->stats.other_ids == 0;
    uint64_t wanted_ids = d->stats.wanted_ids;
    pass_doubted(d, sink); /* (a frame decoded while a doubted one's are held: the doubt was let go unjudged,
                            * in bytes decoded at once; its bytes go first) */
    d->stats.frames++;
    size_t n = frame_bytes(&d->cur, d->wanted_id, out, &d->stats);
    lane_check(&d->cur, out, n);
    /* (a stream that wrote the wanted ID twice has another source: its changes are real; a frame that gave
     * bytes to another source and changed back is doubted too: a slip's misread data can do that) */
    if (!(was_wanted && alone && wanted_ids <= 1 && (d->cur.id != d->wanted_id || d->stats.other_ids))) {
        if (n && sink && sink->bytes)
            sink->bytes(sink->ctx, out, n);
    } else { /* its bytes held too: a slip's, they would be data read at the wrong place */
        memcpy(d->doubted_out, out, n);
        d->n_doubted_out = (uint8_t)n;
        d->doubted_id = d->cur.id;
        d->wanted_ids_at_doubt = wanted_ids;
        d->cur.id_known = false;
        d->unknown_clean = 0;
        d->unknown_margin = 0;
    }
}

static void decode_byte(struct tpiu_decoder *d, uint8_t b, const struct byte_sink *sink)
{
    bool whole = d->cur.whole;
    if (lane_byte(&d->cur, b, &d->stats.half_syncs))
        deliver(d, sink);
    else if (!whole)
        d->stats.unsynced++;
}

/* Whether the frames are aligned: not before the first alignment, nor after a gap until aligned again
 * (stats.align keeps the first alignment meanwhile: the report's, live too). */
static bool aligned(const struct tpiu_decoder *d)
{
    return d->stats.align.how != TPIU_UNALIGNED && !d->rejoined;
}

/* Where an alignment just found is written: the report's the first time; after a gap, scratch (the
 * first alignment stays the report's). */
static struct tpiu_alignment *alignment_found(struct tpiu_decoder *d, struct tpiu_alignment *scratch)
{
    return d->rejoined ? scratch : &d->stats.align;
}

/* The first n held bytes decoded at the alignment just found; the frames are aligned from here on.
 * After a gap the frame it cut is the gap's, not a decoding loss (unsynced as it was). */
static void decode_held(struct tpiu_decoder *d, size_t n, const struct byte_sink *sink)
{
    uint64_t unsynced = d->stats.unsynced;
    for (size_t i = 0; i < n; i++)
        decode_byte(d, d->block[i], sink);
    if (d->rejoined)
        d->stats.unsynced = unsynced;
    d->rejoined = false;
}

/* No full sync in the first block (or in all of a shorter stream): the best offset aligns the
 * frames, and the block is decoded at it. */
static void align_by_content(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    unsigned second;
    size_t n = d->n_block;
    uint8_t id;
    unsigned o = judge_start(d->lanes, d->block, n, d->wanted_id, &id, &second);
    struct tpiu_alignment again, *a = alignment_found(d, &again);
    a->id_assumed = id != ID_NULL;
    a->how = TPIU_BY_CONTENT;
    a->at = d->block_at + o;
    a->judged = (uint32_t)n;
    a->clean = d->lanes[o].clean;
    a->faults = d->lanes[o].faults;
    a->runner_up = (uint8_t)((d->block_at + second) % 16u);
    a->runner_clean = d->lanes[second].clean;
    a->runner_faults = d->lanes[second].faults;
    lane_start(&d->cur, o, id);
    decode_held(d, n, sink);
    next_block(d);
}

/* The source of held bytes read at a lane's alignment: the wanted one when they, with the stretches
 * judged before them, read as its better than as source `other`'s (nobody's: ID_NULL; see
 * reads_as_wanted), else nobody's. */
static uint8_t start_source(struct tpiu_decoder *d, const struct tpiu_lane *at, const uint8_t *buf, size_t len,
                            uint8_t other)
{
    unsigned offset = (16u - at->pos) % 16u;
    bool half_syncs = any_half_sync(buf, len);
    lane_start(&d->lanes[0], offset, other);
    lane_run(&d->lanes[0], buf, len, d->wanted_id, half_syncs);
    lane_start(&d->lanes[1], offset, d->wanted_id);
    lane_run(&d->lanes[1], buf, len, d->wanted_id, half_syncs);
    /* with the stretches before it: a full sync every few frames leaves each too short to tell alone */
    d->unknown_clean += d->lanes[1].clean;
    d->unknown_margin += score(&d->lanes[1]) - score(&d->lanes[0]);
    return wanted_wins(d->unknown_clean, d->unknown_margin) ? d->wanted_id : ID_NULL;
}

/* The bytes passed on have a hole here (see byte_sink.hole). */
static void hole(const struct byte_sink *sink)
{
    if (sink && sink->hole)
        sink->hole(sink->ctx);
}

/* The held block decoded; a change doubted inside it (see deliver) stops that: the bytes after its frame
 * are held on, the start of the block its doubt is judged on (else a later frame's ID change would settle
 * the source unjudged). */
static void decode_held_block(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    size_t n = d->n_block;
    bool doubt_before = d->doubted_id != ID_UNDOUBTED;
    for (size_t i = 0; i < n; i++) {
        decode_byte(d, d->block[i], sink);
        if (!doubt_before && d->doubted_id != ID_UNDOUBTED && i + 1 < n) {
            d->n_block = i + 1;
            next_block(d);
            memmove(d->block, d->block + i + 1, n - i - 1);
            d->n_block = n - i - 1;
            return;
        }
    }
    next_block(d);
}

/* The block held after a doubted ID change: whether the frames slipped instead (a byte lost on the line:
 * the change was a data byte read at the wrong place), judged on len bytes from block[from]: at another
 * offset than the one in use (offset, in the block) they change the source to no other (a one-source
 * formatter writes no ID but after its null source's padding) and read as the wanted source's clean ITM,
 * clearly better than at the offset in use and than as the doubted source's (nobody's, when the change was
 * back to the wanted source), with a fault in 32 bytes at most. *at: where their first whole
 * frame begins, in the block. */
static bool slipped_in(struct tpiu_decoder *d, size_t from, size_t len, unsigned offset, size_t *at)
{
    const uint8_t *buf = d->block + from;
    unsigned now = (offset + 16u - (unsigned)(from % 16u)) % 16u;
    unsigned o = judge(d->lanes, buf, len, d->wanted_id, d->wanted_id, NULL);
    if (o == now || changes_source(buf, len, o, d->wanted_id) || score(&d->lanes[o]) < score(&d->lanes[now]) + 64)
        return false;
    struct tpiu_lane as_wanted = d->lanes[o], as_other;
    lane_start(&as_other, o, d->doubted_id == d->wanted_id ? ID_NULL : d->doubted_id);
    lane_run(&as_other, buf, len, d->wanted_id, any_half_sync(buf, len));
    *at = from + o;
    return reads_as_wanted(&as_wanted, &as_other) && as_wanted.faults * 32u <= as_wanted.clean;
}

/* slipped_in the held block, or in its first half, quarter, ... down to 64 bytes (a second byte lost
 * inside it slips the frames again: found when its own change is doubted), else in its second half or last
 * quarter (a second byte lost soon after the first: the bytes before are dropped). */
static bool slipped(struct tpiu_decoder *d, unsigned offset, size_t *at)
{
    size_t n = d->n_block;
    for (size_t len = n; len >= TPIU_BLOCK / 16u; len /= 2u)
        if (slipped_in(d, 0, len, offset, at))
            return true;
    for (size_t from = n / 2u; n == TPIU_BLOCK && from <= n * 3u / 4u; from += n / 4u)
        if (slipped_in(d, from, n - from, offset, at))
            return true;
    return false;
}

/* The frames slipped (see slipped): the source stays the wanted one, and the frames are aligned again at
 * block[at] (the block decoded next from there: the bytes before are those the slip cut); what the doubted
 * change gave other sources is taken back, and ID changes to the wanted source read at the wrong place are
 * not counted. */
static void realign_as_wanted(struct tpiu_decoder *d, size_t at, const struct byte_sink *sink)
{
    size_t skip = at - at % 16u;
    d->stats.realigns++;
    d->stats.stray_ids++;
    d->stats.stray_bytes += d->stats.other_ids + d->n_doubted_out; /* (the doubted frame's: read misplaced) */
    d->n_doubted_out = 0;
    d->stats.other_ids = 0;
    d->stats.wanted_ids = d->wanted_ids_at_doubt;
    memset(d->stats.ids_seen, 0, sizeof d->stats.ids_seen);
    d->stats.cut += d->cur.pos + at;
    d->stats.unsynced -= at - skip; /* (counted as the block is decoded: they are cut, not unsynced) */
    memmove(d->block, d->block + skip, d->n_block - skip);
    d->n_block -= skip;
    d->block_at += skip;
    d->doubted_id = ID_UNDOUBTED;
    lane_start(&d->cur, (unsigned)(at - skip), d->wanted_id);
    hole(sink);
}

/* The block held after a doubted ID change (see deliver): a hit byte when, at the alignment in use, it
 * changes the source no more (a one-source formatter writes no ID) and reads as the wanted source's ITM
 * better than as the new source's (with the stretches before it, when full syncs cut them short); then
 * the wanted source goes on, and what the change gave the other source is taken back (nothing else had
 * one). Else the change stands: so when its first change is straight back to the wanted source, which a
 * formatter whose source stayed the wanted one after a hit never writes (it writes the null source's
 * first, after its padding): a second source's burst shorter than the block. */
static void resolve_doubt(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    unsigned offset = (16u - d->cur.pos) % 16u;
    size_t at;
    if (slipped(d, offset, &at)) {
        realign_as_wanted(d, at, sink);
        return;
    }
    if (d->doubted_id == d->wanted_id) { /* changed away and back in one frame, and no slip: it stands */
        pass_doubted(d, sink);
        d->cur.id_known = true;
        d->doubted_id = ID_UNDOUBTED;
        return;
    }
    bool reads_wanted = start_source(d, &d->cur, d->block, d->n_block, d->doubted_id) == d->wanted_id;
    /* (a change to the null source is padding when the wanted source's ID follows: it stands) */
    bool changes = changes_source(d->block, d->n_block, offset, d->doubted_id == ID_NULL ? ANY_SOURCE : d->wanted_id) ||
                   first_change(d->block, d->n_block, offset) == d->wanted_id;
    if (!changes && d->n_block < TPIU_BLOCK && d->unknown_clean < 32u) {
        /* a stretch cut short by a full sync (a sync counter's, every few frames): too short to tell
         * alone, judged with the next; the doubted source keeps it meanwhile */
        d->cur.id = d->doubted_id;
        return;
    }
    bool stray = !changes && reads_wanted;
    pass_doubted(d, sink);
    d->cur.id = stray ? d->wanted_id : d->doubted_id;
    d->cur.last_real = stray ? d->wanted_id : d->cur.last_real;
    d->cur.id_known = true;
    d->doubted_id = ID_UNDOUBTED;
    if (stray) { /* (no other source had a byte before the change: all those are its) */
        d->stats.stray_ids++;
        d->stats.stray_bytes += d->stats.other_ids;
        d->stats.other_ids = 0;
        memset(d->stats.ids_seen, 0, sizeof d->stats.ids_seen);
        hole(sink);
    }
}

/* Frames aligned, but no ID change read yet (or one in doubt): the held block's source is judged at the
 * alignment in use, then the block is decoded (held again after it while the source stays unknown). */
static void settle_source(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    if (d->doubted_id != ID_UNDOUBTED) {
        resolve_doubt(d, sink);
    } else if (start_source(d, &d->cur, d->block, d->n_block, ID_NULL) != ID_NULL) {
        d->cur.id = d->wanted_id;
        d->cur.id_known = true;
        d->stats.align.id_assumed = true;
    }
    decode_held_block(d, sink);
}

/* Bytes are held while the frames are not aligned, or aligned with no source known yet. */
static bool holding(const struct tpiu_decoder *d)
{
    return !aligned(d) || !d->cur.id_known;
}

/* A full block held: aligned by content, or its source settled. */
static void release(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    if (!aligned(d))
        align_by_content(d, sink);
    else
        settle_source(d, sink);
}

/* For a block just decoded as another source's: the offset (*best) where it changes the source no more
 * and reads as the wanted source's ITM best; whether it reads so better than as that source's there. */
static bool reads_as_wanted_alone(struct tpiu_decoder *d, unsigned *best)
{
    unsigned o = 0;
    while (o < 16u && any_id_change(d->block, d->n_block, o))
        o++;
    if (o == 16u) /* (every offset changes the source: a stream of two sources, cheaply told; not judged) */
        return false;
    *best = judge(d->lanes, d->block, d->n_block, d->wanted_id, d->wanted_id, NULL);
    if (any_id_change(d->block, d->n_block, *best))
        return false;
    struct tpiu_lane as_wanted = d->lanes[*best], as_other;
    lane_start(&as_other, *best, d->block_id);
    lane_run(&as_other, d->block, d->n_block, d->wanted_id, any_half_sync(d->block, d->n_block));
    return reads_as_wanted(&as_wanted, &as_other);
}

/* The block just decoded as another source's is the wanted source's (see reads_as_wanted_alone; the other
 * source was noise's, as a one-source formatter writes no ID): decoded again as its, its frames from
 * offset at, and what the first reading counted taken back. */
static void take_block_as_wanted(struct tpiu_decoder *d, unsigned at, const struct byte_sink *sink)
{
    uint64_t frames = d->stats.frames, unsynced = d->stats.unsynced;
    d->stats.stray_ids++;
    d->stats.realigns += at != d->cur_start;
    d->stats.other_ids = d->other_at_block;
    d->stats.cut += at; /* (the end of the frame before the block, read as the other source's) */
    lane_start(&d->cur, at, d->wanted_id);
    hole(sink);
    for (size_t i = 0; i < d->n_block; i++)
        decode_byte(d, d->block[i], sink);
    d->stats.frames = frames;
    d->stats.unsynced = unsynced;
}

/* A block decoded at the offset in use, checked: when it was read as another source's and is the wanted
 * one's (below), it is decoded again as its; when it showed faults and another offset reads it clearly
 * better (far fewer faults, more clean ITM), the frames are re-aligned there. */
static void recheck(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    unsigned at;
    /* (noise: changes to two or more other sources; one other source is a stream of its own: never taken,
     * nor anything after a whole block of one other source's own, which noise never gives) */
    if (d->cur.id != d->wanted_id && d->stats.wanted_ids <= 1 && !d->other_stream &&
        tpiu_other_ids(&d->stats, NULL, 0) >= 2 && reads_as_wanted_alone(d, &at)) {
        take_block_as_wanted(d, at, sink);
    } else if (d->cur.faults >= 2) {
        unsigned best = judge(d->lanes, d->block, d->n_block, d->wanted_id, d->block_id, NULL);
        const struct tpiu_lane *now = &d->lanes[d->cur_start], *better = &d->lanes[best];
        if (best != d->cur_start && score(better) >= score(now) + 64 && better->faults * 4 <= now->faults) {
            d->stats.realigns++;
            d->stats.cut += d->cur.pos;
            d->cur = *better; /* its frame in progress goes on */
            hole(sink);
        }
    }
    next_block(d);
}

/* A full sync: frames begin after it. Bytes held back before it are decoded at the alignment it
 * gives (frames end where it begins); one that cuts a frame in progress re-aligns the frames. */
static void full_sync(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    d->stats.syncs++;
    d->window = 0;
    if (!aligned(d)) {
        size_t before = d->n_block - 3; /* the sync's first three bytes are held too */
        unsigned o = (unsigned)(before % 16u);
        struct tpiu_alignment again, *a = alignment_found(d, &again);
        a->how = TPIU_BY_SYNC;
        a->at = d->block_at + o;
        lane_start(&d->cur, o, ID_NULL);
        uint8_t id = start_source(d, &d->cur, d->block, before, ID_NULL);
        lane_start(&d->cur, o, id);
        a->id_assumed = id != ID_NULL;
        decode_held(d, before, sink);
    } else if (d->cur.pos != 3u || !d->cur.whole) { /* FF FF FF went into the frame in progress */
        if (d->cur.whole) {
            d->stats.realigns++;
            hole(sink);
        } else
            d->stats.unsynced -= d->cur.pos < 3u ? d->cur.pos : 3u; /* they were the sync, not lost data */
        d->stats.cut += d->cur.whole && d->cur.pos > 3u ? d->cur.pos - 3u : 0u;
    }
    d->cur.pos = 0;
    d->cur.whole = true;
    d->n_block = 0;
    d->block_at = d->stats.bytes;
    next_block(d);
}

void tpiu_feed(struct tpiu_decoder *d, const uint8_t *buf, size_t len, const struct byte_sink *sink)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t b = buf[i];
        d->stats.bytes++;
        d->window = d->window << 8 | b;
        if (d->window == TPIU_FULL_SYNC) {
            if (aligned(d) && !d->cur.id_known)
                settle_source(d, sink); /* the bytes before it, as if not held */
            full_sync(d, sink);
            continue;
        }
        if (holding(d)) { /* held back until the block is full */
            d->block[d->n_block++] = b;
            if (d->n_block == TPIU_BLOCK)
                release(d, sink);
            continue;
        }
        decode_byte(d, b, sink);
        if (holding(d)) { /* b ended a frame whose ID change is in doubt: held from the next byte */
            d->n_block = 0;
            d->block_at = d->stats.bytes;
            next_block(d);
            continue;
        }
        if (d->stats.align.how == TPIU_FORCED)
            continue;
        d->block[d->n_block++] = b; /* kept for the block's check */
        if (d->n_block == TPIU_BLOCK)
            recheck(d, sink);
    }
}

void tpiu_rejoin(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    if (holding(d) && d->n_block)
        release(d, sink);
    if (d->stats.align.how == TPIU_UNALIGNED)
        return; /* nothing came before the gap: aligned from the start as it is */
    d->rejoined = true;
    pass_doubted(d, sink);
    d->doubted_id = ID_UNDOUBTED;
    lane_start(&d->cur, 0, ID_NULL); /* (the frame the gap cut dropped; the alignment found sets it anew) */
    d->window = 0;
    d->n_block = 0;
    d->block_at = d->stats.bytes;
    d->unknown_clean = 0;
    d->unknown_margin = 0;
}

void tpiu_finish(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    if (holding(d) && d->n_block)
        release(d, sink);
    pass_doubted(d, sink); /* (a doubted frame the input ended after: nothing shows a slip) */
}

unsigned tpiu_cut(const struct tpiu_decoder *d)
{
    return aligned(d) && d->cur.whole ? d->cur.pos : 0;
}

size_t tpiu_counters(const struct tpiu_stats *st, struct dec_counter *out)
{
    out[0] = (struct dec_counter){"tpiu_frames", st->frames};
    out[1] = (struct dec_counter){"tpiu_unsynced", st->unsynced};
    out[2] = (struct dec_counter){"tpiu_realigns", st->realigns};
    out[3] = (struct dec_counter){"tpiu_stray_ids", st->stray_ids};
    out[4] = (struct dec_counter){"tpiu_stray_bytes", st->stray_bytes};
    return 5;
}

bool tpiu_describe(const struct tpiu_stats *st, char *buf, size_t len)
{
    char ids[120];
    if (!tpiu_other_ids(st, ids, sizeof ids))
        return false;
    snprintf(buf, len, "%llu frames, but only for source IDs %s: choose one with --tpiu-id",
             (unsigned long long)st->frames, ids);
    return true;
}

bool tpiu_alignment_text(const struct tpiu_stats *st, char *buf, size_t len)
{
    const struct tpiu_alignment *a = &st->align;
    if (len)
        buf[0] = '\0';
    if (a->how == TPIU_FORCED)
        snprintf(buf, len, "TPIU frames aligned at byte offset %llu, as --tpiu-offset asked",
                 (unsigned long long)a->at);
    else if (a->how == TPIU_BY_CONTENT)
        snprintf(buf, len,
                 "no TPIU full sync: frames aligned by content at byte offset %llu (ID %u: %u clean ITM bytes, "
                 "%u faults in %u; next best offset %u: %u, %u faults)",
                 (unsigned long long)a->at, (unsigned)a->id, (unsigned)a->clean, (unsigned)a->faults,
                 (unsigned)a->judged, (unsigned)a->runner_up, (unsigned)a->runner_clean, (unsigned)a->runner_faults);
    else
        return false;
    return true;
}

bool tpiu_source_text(const struct tpiu_stats *st, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!st->align.id_assumed)
        return false;
    snprintf(buf, len, "no TPIU ID change before the first data: its bytes read as source %u's, which read as "
             "ITM (a formatter writes the ID once, at its start)", (unsigned)st->align.id);
    return true;
}

unsigned tpiu_best_offset(const uint8_t *buf, size_t len, uint8_t wanted_id, uint8_t *start_id, uint32_t *clean,
                          uint32_t *faults)
{
    struct tpiu_lane lanes[16];
    unsigned second, o = judge_start(lanes, buf, len, wanted_id, start_id, &second);
    *clean = lanes[o].clean;
    *faults = lanes[o].faults;
    return o;
}

void tpiu_walk(const uint8_t *buf, size_t len, unsigned offset, uint8_t wanted_id, uint8_t start_id,
               void (*each)(void *ctx, size_t start, uint32_t faults), void *ctx)
{
    struct tpiu_lane l;
    uint8_t out[15];
    size_t start = 0;
    lane_start(&l, offset, start_id);
    for (size_t i = 0; i < len; i++) {
        if (l.pos == 0)
            start = i;
        if (!lane_byte(&l, buf[i], NULL))
            continue;
        uint32_t before = l.faults;
        lane_check(&l, out, frame_bytes(&l, wanted_id, out, NULL));
        each(ctx, start, l.faults - before);
    }
}
