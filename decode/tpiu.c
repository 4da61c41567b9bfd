/* TPIU deframer (CoreSight TPIU formatter). In a frame, even bytes 0..14 are either an ID change
 * (bit 0 set: ID = bits 7:1) or data whose bit 0 is stored in byte 15 (bit k for byte 2k); odd
 * bytes 1..13 are data. After an ID change, aux bit 0 means the new ID owns the next odd byte,
 * aux bit 1 means the old one still does. */
#include "tpiu.h"

#include <string.h>

#define FULL_SYNC 0xFFFFFF7Fu /* FF FF FF 7F, oldest byte in the high bits */

void tpiu_init(struct tpiu_decoder *d, uint8_t wanted_id)
{
    memset(d, 0, sizeof *d);
    d->wanted_id = wanted_id;
}

static void frame(struct tpiu_decoder *d, const struct tpiu_byte_sink *sink)
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
            else if (d->current_id != 0)
                d->stats.other_ids++;
        }
        if (has_odd) {
            if (d->current_id == d->wanted_id)
                out[n++] = f[2 * i + 1];
            else if (d->current_id != 0)
                d->stats.other_ids++;
        }
        d->current_id = next_id;
    }
    if (n && sink && sink->bytes)
        sink->bytes(sink->ctx, out, n);
}

void tpiu_feed(struct tpiu_decoder *d, const uint8_t *buf, size_t len, const struct tpiu_byte_sink *sink)
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
