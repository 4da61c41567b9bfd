/* TPIU deframer (CoreSight TPIU formatter). In a frame, even bytes 0..14 are either an ID change
 * (bit 0 set: ID = bits 7:1) or data whose bit 0 is stored in byte 15 (bit k for byte 2k); odd
 * bytes 1..13 are data. After an ID change, aux bit 0 means the new ID owns the next odd byte,
 * aux bit 1 means the old one still does. */
#include "tpiu.h"

#include <stdio.h>

#include <string.h>

#define FULL_SYNC 0xFFFFFF7Fu /* FF FF FF 7F, oldest byte in the high bits */

void tpiu_init(struct tpiu_decoder *d, uint8_t wanted_id)
{
    memset(d, 0, sizeof *d);
    d->wanted_id = wanted_id;
}

/* A data byte of a source nobody asked for: counted, and its ID remembered for the report. */
static void other_source(struct tpiu_decoder *d)
{
    if (d->current_id == 0 || d->current_id == 0x7F) /* null source, trigger */
        return;
    d->stats.other_ids++;
    d->stats.ids_seen[d->current_id >> 3] |= (uint8_t)(1u << (d->current_id & 7u));
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

static void frame(struct tpiu_decoder *d, const struct byte_sink *sink)
{
    uint8_t out[15];
    size_t n = 0;
    const uint8_t *f = d->frame;
    uint8_t aux = f[15];
    d->stats.frames++;
    for (unsigned i = 0; i < 8; i++) {
        uint8_t b = f[2 * i];
        bool aux_bit = (aux >> i) & 1u;
        uint8_t next_id = d->current_id;
        bool has_odd = i < 7;
        if (b & 1u) {
            next_id = b >> 1;
            if (!aux_bit)
                d->current_id = next_id; /* the new ID owns the following byte */
        } else {
            uint8_t v = (uint8_t)(b | aux_bit);
            if (d->current_id == d->wanted_id)
                out[n++] = v;
            else
                other_source(d);
        }
        if (has_odd) {
            if (d->current_id == d->wanted_id)
                out[n++] = f[2 * i + 1];
            else
                other_source(d);
        }
        d->current_id = next_id;
    }
    if (n && sink && sink->bytes)
        sink->bytes(sink->ctx, out, n);
}

void tpiu_feed(struct tpiu_decoder *d, const uint8_t *buf, size_t len, const struct byte_sink *sink)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t b = buf[i];
        d->stats.bytes++;
        d->window = d->window << 8 | b;
        if (d->window == FULL_SYNC) {
            /* the sync's first three bytes went into the frame buffer: forget them */
            d->stats.syncs++;
            if (!d->synced)
                d->stats.unsynced -= 3; /* they were the sync, not lost data */
            d->synced = true;
            d->pos = 0;
            d->window = 0;
            continue;
        }
        if (!d->synced) {
            d->stats.unsynced++;
            continue;
        }
        if (d->pos % 2u == 1u && d->frame[d->pos - 1] == 0xFFu && b == 0x7Fu) {
            d->pos--; /* a half sync in place of a data pair: drop it */
            d->stats.half_syncs++;
            continue;
        }
        d->frame[d->pos++] = b;
        if (d->pos == 16u) {
            frame(d, sink);
            d->pos = 0;
        }
    }
}

size_t tpiu_counters(const struct tpiu_stats *st, struct dec_counter *out)
{
    out[0] = (struct dec_counter){"tpiu_frames", st->frames};
    out[1] = (struct dec_counter){"tpiu_unsynced", st->unsynced};
    return 2;
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
