/* orbflow deframer (see orbflow.h). */
#include "orbflow.h"

#include <stdio.h>
#include <string.h>

void orbflow_init(struct orbflow_decoder *d, uint8_t wanted_tag)
{
    memset(d, 0, sizeof *d);
    d->wanted_tag = wanted_tag;
}

#define FRAME_DELIMITER 0   /* the byte between frames (COBS leaves none inside one) */
#define COBS_CODE_FULL 0xFFu /* a code byte whose data bytes have no zero after them */

/* COBS-decode in place: each code byte c is followed by c - 1 data bytes, then a zero unless c is
 * COBS_CODE_FULL or the frame ends. Returns the decoded length, or -1 when a code runs past the end. */
static long cobs_decode(uint8_t *f, size_t n)
{
    size_t in = 0, out = 0;
    while (in < n) {
        uint8_t code = f[in++];
        if (code == FRAME_DELIMITER || in + code - 1u > n)
            return -1;
        for (unsigned k = 1; k < code; k++)
            f[out++] = f[in++]; /* out never passes in: each code byte makes room */
        if (code != COBS_CODE_FULL && in < n)
            f[out++] = 0;
    }
    return (long)out;
}

/* One encoded frame (delimiters excluded): 1 good, 0 bad, -1 empty. */
static int frame(struct orbflow_decoder *d, uint8_t *f, size_t n, const struct byte_sink *sink)
{
    if (n == 0)
        return -1; /* two delimiters in a row: nothing */
    long m = cobs_decode(f, n);
    if (m < 0) {
        d->stats.bad_cobs++;
        return 0;
    }
    uint8_t sum = 0;
    for (long i = 0; i < m; i++)
        sum = (uint8_t)(sum + f[i]);
    if (m < 2 || sum != 0) {
        d->stats.bad_sums++;
        return 0;
    }
    d->stats.frames++;
    uint8_t tag = f[0];
    if (tag != d->wanted_tag) {
        d->stats.other_tags++;
        d->stats.tags_seen[tag / 8u] |= (uint8_t)(1u << (tag % 8u));
    } else if (sink && sink->bytes && m > 2) {
        sink->bytes(sink->ctx, f + 1, (size_t)(m - 2));
    }
    return 1;
}

/* n bytes before the first delimiter (the one that ends them, if any, is the frames' start, not
 * skipped): counted, unless they follow a gap and may be the tail of a frame it cut (those go with
 * the gap), which they cannot be once more come than a frame holds (then counted apart, after_gap,
 * the rest up to the delimiter with them). */
static void skip_unsynced(struct orbflow_decoder *d, size_t n, bool delimited)
{
    if (!d->rejoined) {
        d->stats.unsynced += n;
        return;
    }
    size_t before = d->gap_tail;
    d->gap_tail += n;
    if (d->gap_tail > ORBFLOW_MAX) /* no frame's tail: all of them counted, once */
        d->stats.after_gap += before > ORBFLOW_MAX ? n : d->gap_tail;
    if (delimited) {
        d->rejoined = false;
        d->gap_tail = 0;
    }
}

void orbflow_feed(struct orbflow_decoder *d, const uint8_t *buf, size_t len, const struct byte_sink *sink)
{
    d->stats.bytes += len;
    const uint8_t *p = buf, *end = buf + len;
    while (p < end) {
        const uint8_t *z = memchr(p, FRAME_DELIMITER, (size_t)(end - p));
        size_t n = (size_t)((z ? z : end) - p);
        if (!d->synced) {
            skip_unsynced(d, n, z != NULL);
            d->synced = z != NULL;
        } else if (!d->overflow && d->len + n <= ORBFLOW_MAX) {
            memcpy(d->frame + d->len, p, n);
            d->len += n;
        } else {
            d->overflow = true;
        }
        if (!z)
            break;
        if (d->overflow)
            d->stats.too_long++;
        else if (d->len)
            frame(d, d->frame, d->len, sink);
        d->len = 0;
        d->overflow = false;
        p = z + 1;
    }
}

void orbflow_rejoin(struct orbflow_decoder *d)
{
    d->synced = false;
    d->rejoined = true;
    d->gap_tail = 0;
    d->len = 0;
    d->overflow = false;
}

void orbflow_walk(const uint8_t *buf, size_t len, void (*each)(void *ctx, size_t at, size_t n, bool good),
                  void *ctx)
{
    uint8_t scratch[ORBFLOW_MAX];
    struct orbflow_decoder probe;
    orbflow_init(&probe, 0);
    const uint8_t *z = memchr(buf, FRAME_DELIMITER, len);
    while (z) {
        const uint8_t *start = z + 1, *next = memchr(start, FRAME_DELIMITER, (size_t)(buf + len - start));
        if (!next)
            break;
        size_t n = (size_t)(next - start);
        int r = 0; /* too long: bad */
        if (n <= sizeof scratch) {
            memcpy(scratch, start, n);
            r = frame(&probe, scratch, n, NULL);
        }
        if (r >= 0)
            each(ctx, (size_t)(z - buf), n + 2, r == 1);
        z = next;
    }
}

struct frame_count {
    unsigned good, bad;
};

static void count_frame(void *ctx, size_t at, size_t n, bool good)
{
    struct frame_count *c = ctx;
    (void)at, (void)n;
    c->good += good;
    c->bad += !good;
}

bool orbflow_detect(const uint8_t *buf, size_t len)
{
    struct frame_count c = {0, 0};
    orbflow_walk(buf, len, count_frame, &c);
    return c.good >= 3 && c.bad == 0;
}

bool orbflow_possible(const uint8_t *buf, size_t len)
{
    struct frame_count c = {0, 0};
    orbflow_walk(buf, len, count_frame, &c);
    return c.bad <= c.good;
}

unsigned orbflow_other_tags(const struct orbflow_stats *st, char *buf, size_t len)
{
    unsigned n = 0;
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (unsigned t = 0; t < 256; t++)
        if (st->tags_seen[t / 8u] & (1u << (t % 8u))) {
            int w = snprintf(buf + at, at < len ? len - at : 0, "%s%u", n ? ", " : "", t);
            at += w > 0 ? (size_t)w : 0;
            n++;
        }
    return n;
}

size_t orbflow_counters(const struct orbflow_stats *st, struct dec_counter *out)
{
    out[0] = (struct dec_counter){"orbflow_frames", st->frames};
    out[1] = (struct dec_counter){"orbflow_bad", st->bad_sums + st->bad_cobs + st->too_long};
    return 2;
}

void orbflow_describe(const struct orbflow_stats *st, char *buf, size_t len)
{
    char tags[120];
    if (orbflow_other_tags(st, tags, sizeof tags))
        snprintf(buf, len, "%llu frames, but only for streams %s: choose one with --tpiu-id",
                 (unsigned long long)st->frames, tags);
    else
        snprintf(buf, len, "%llu frames, %llu with a bad sum, %llu with bad COBS codes",
                 (unsigned long long)st->frames, (unsigned long long)st->bad_sums, (unsigned long long)st->bad_cobs);
}

size_t orbflow_cut(const struct orbflow_decoder *d)
{
    return d->synced ? d->len : d->rejoined && d->gap_tail <= ORBFLOW_MAX ? d->gap_tail : 0;
}
