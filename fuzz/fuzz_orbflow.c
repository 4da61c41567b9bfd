/* libFuzzer target: the orbflow/COBS deframer and its detector. The input is decoded whole and
 * then in pieces of a size it chooses; both must pass on the same bytes and count the same frames.
 * The detector and format detection (also as a pause would) look at it too, and the ITM decoder
 * takes the payload. */
#include "../decode/detect.h"
#include "../decode/itm.h"
#include "../decode/orbflow.h"

#include <stdlib.h>
#include <string.h>

struct run {
    struct orbflow_decoder dec;
    struct itm_decoder itm;
    uint64_t h, n; /* a digest of the bytes passed on */
};

static void on_bytes(void *ctx, const uint8_t *buf, size_t len)
{
    struct run *r = ctx;
    for (size_t i = 0; i < len; i++)
        r->h = r->h * 131u + buf[i] + 1u;
    r->n += len;
    struct ev_sink none = {NULL, NULL};
    itm_feed(&r->itm, buf, len, &none);
}

static void decode(struct run *r, uint8_t tag, const uint8_t *data, size_t size, size_t piece)
{
    memset(r, 0, sizeof *r);
    orbflow_init(&r->dec, tag);
    itm_init(&r->itm, false);
    struct byte_sink sink = {on_bytes, r, NULL};
    for (size_t off = 0; off < size; off += piece)
        orbflow_feed(&r->dec, data + off, size - off < piece ? size - off : piece, &sink);
}

static int same_stats(const struct orbflow_stats *a, const struct orbflow_stats *b)
{
    return a->bytes == b->bytes && a->frames == b->frames && a->bad_sums == b->bad_sums &&
           a->bad_cobs == b->bad_cobs && a->too_long == b->too_long && a->unsynced == b->unsynced &&
           a->after_gap == b->after_gap &&
           a->other_tags == b->other_tags && memcmp(a->tags_seen, b->tags_seen, sizeof a->tags_seen) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t tag = data[0] & 3, piece = data[1];
    data += 2, size -= 2;
    static struct run whole, split; /* large: ORBFLOW_MAX of frame each */
    decode(&whole, tag, data, size, size ? size : 1);
    decode(&split, tag, data, size, piece ? piece : 1);
    if (whole.h != split.h || whole.n != split.n || !same_stats(&whole.dec.stats, &split.dec.stats))
        abort(); /* the deframer depends on how its input was cut */
    if (whole.n > size || whole.dec.stats.bytes != size)
        abort();
    char tags[24]; /* short on purpose: the list is cut, never overrun */
    orbflow_other_tags(&whole.dec.stats, tags, sizeof tags);
    if (strlen(tags) >= sizeof tags)
        abort();
    orbflow_detect(data, size);
    enum detect_format f = detect_format(data, size), so_far = detect_format_so_far(data, size);
    if (so_far != DETECT_UNKNOWN && so_far != f)
        abort(); /* a pause may leave it undecided, never decide it otherwise */
    return 0;
}
