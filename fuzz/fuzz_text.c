/* libFuzzer target: the text decoder alone (dump lines and checked live-stream lines), fed whole
 * and then split at a point the input chooses; both runs must give the same events. */
#include "../decode/text.h"

#include <stdlib.h>
#include <string.h>

struct digest {
    uint64_t h, n;
};

static void on_event(void *ctx, const struct ev *e)
{
    struct digest *d = ctx;
    if (e->type == EV_PCS) { /* as its EV_PC samples: batching may not depend on the split */
        struct ev one = {.type = EV_PC, .offset = e->offset};
        for (uint64_t i = 0; i < e->count; i++) {
            one.addr = e->pcs[i];
            on_event(ctx, &one);
        }
        return;
    }
    d->n++;
    d->h = d->h * 31u + (uint64_t)e->type * 7u + e->addr + e->value + e->count + e->min + e->max + e->text_len;
    for (size_t i = 0; i < e->text_len; i++)
        d->h = d->h * 131u + (unsigned char)e->text[i];
}

static struct digest decode(const uint8_t *data, size_t size, size_t cut)
{
    struct digest d = {0, 0};
    struct ev_sink sink = {on_event, &d};
    struct text_decoder t;
    text_init(&t);
    text_feed(&t, data, cut, &sink);
    text_feed(&t, data + cut, size - cut, &sink);
    text_finish(&t, &sink);
    text_free(&t);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t cut = (size_t)data[0] * 257u % size;
    struct digest whole = decode(data + 1, size - 1, size - 1);
    struct digest split = decode(data + 1, size - 1, cut < size - 1 ? cut : 0);
    if (whole.h != split.h || whole.n != split.n)
        abort(); /* chunk invariance broken */
    return 0;
}
