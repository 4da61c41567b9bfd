/* For the fuzz targets that decode text (fuzz_text, fuzz_stream): the text decoder's events as one
 * digest, so that an input fed whole and fed split at a point can be compared. */
#ifndef CMPROF_FUZZ_TEXT_DIGEST_H
#define CMPROF_FUZZ_TEXT_DIGEST_H

#include "../decode/text.h"
#include "../tests/evlog.h"

struct digest {
    uint64_t h, n;
};

static inline void digest_event(void *ctx, const struct ev *e)
{
    struct digest *d = ctx;
    if (e->type == EV_PCS) { /* as its EV_PC samples: batching may not depend on the split */
        for (uint64_t i = 0; i < e->pcs.n; i++) {
            struct ev one = {.type = EV_PC, .offset = e->offset, .pc = {.addr = e->pcs.addrs[i]}};
            digest_event(ctx, &one);
        }
        return;
    }
    struct ev_columns c = evlog_columns(e); /* every type's payload, in the same few columns */
    d->n++;
    d->h = d->h * 31u + (uint64_t)e->type * 7u + c.addr + c.tag + c.value + c.count + c.min + c.max + c.text_len;
    for (size_t i = 0; i < c.text_len; i++)
        d->h = d->h * 131u + (unsigned char)c.text[i];
}

/* The digest of data decoded in two pieces, cut at `cut` (size: one piece). */
static inline struct digest text_digest(const uint8_t *data, size_t size, size_t cut)
{
    struct digest d = {0, 0};
    struct ev_sink sink = {digest_event, &d};
    struct text_decoder t;
    text_init(&t);
    text_feed(&t, data, cut, &sink);
    text_feed(&t, data + cut, size - cut, &sink);
    text_finish(&t, &sink);
    text_free(&t);
    return d;
}

#endif
