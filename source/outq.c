/* The sampling sources' output queue (see outq.h). */
#include "outq.h"

#include <string.h>

size_t outq_room(const struct outq *q)
{
    return sizeof q->buf - q->len;
}

bool outq_bytes(struct outq *q, const void *data, size_t n)
{
    if (n > outq_room(q))
        return false;
    memcpy(q->buf + q->len, data, n);
    q->len += n;
    return true;
}

/* An ITM packet, after the synchronisation packet the first time. */
static bool packet(struct outq *q, const uint8_t *p, size_t n)
{
    static const uint8_t sync[] = {0, 0, 0, 0, 0, 0x80};
    if (n + (q->synced ? 0 : sizeof sync) > outq_room(q))
        return false;
    if (!q->synced)
        outq_bytes(q, sync, sizeof sync);
    q->synced = true;
    return outq_bytes(q, p, n);
}

bool outq_pc(struct outq *q, uint32_t pc)
{
    const uint8_t p[5] = {0x17, (uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16), (uint8_t)(pc >> 24)};
    return packet(q, p, sizeof p);
}

bool outq_sleep(struct outq *q)
{
    static const uint8_t p[2] = {0x15, 0x00};
    return packet(q, p, sizeof p);
}

size_t outq_take(struct outq *q, uint8_t *buf, size_t n)
{
    size_t k = q->len < n ? q->len : n;
    memcpy(buf, q->buf, k);
    memmove(q->buf, q->buf + k, q->len - k);
    q->len -= k;
    return k;
}
