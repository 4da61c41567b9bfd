/* Protocol buffers' wire format (see pbuf.h): a key is (field << 3 | wire type); wire type 0 is
 * a varint, 2 a length followed by that many bytes. */
#include "pbuf.h"

#include "../base/grow.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static bool reserve(struct pbuf *b, size_t more)
{
    if (b->failed)
        return false;
    if (!grow_array((void **)&b->data, &b->cap, b->len + more, 1, 256)) {
        b->failed = true;
        return false;
    }
    return true;
}

static void varint(struct pbuf *b, uint64_t v)
{
    if (!reserve(b, 10))
        return;
    while (v >= 0x80) {
        b->data[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (uint8_t)v;
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void pbuf_free(struct pbuf *b)
{
    free(b->data);
    *b = (struct pbuf){0};
}

void pbuf_clear(struct pbuf *b)
{
    b->len = 0;
}

void pbuf_uint(struct pbuf *b, unsigned field, uint64_t v)
{
    varint(b, (uint64_t)field << 3 | WIRE_VARINT);
    varint(b, v);
}

void pbuf_bytes(struct pbuf *b, unsigned field, const void *data, size_t len)
{
    varint(b, (uint64_t)field << 3 | WIRE_LEN);
    varint(b, len);
    if (len && reserve(b, len)) {
        memcpy(b->data + b->len, data, len);
        b->len += len;
    }
}

void pbuf_message(struct pbuf *b, unsigned field, const struct pbuf *msg)
{
    if (msg->failed)
        b->failed = true;
    pbuf_bytes(b, field, msg->data, msg->len);
}

void pbuf_append(struct pbuf *b, const struct pbuf *fields)
{
    if (fields->failed)
        b->failed = true;
    if (fields->len && reserve(b, fields->len)) {
        memcpy(b->data + b->len, fields->data, fields->len);
        b->len += fields->len;
    }
}

void pbuf_packed(struct pbuf *b, unsigned field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += varint_size(v[i]);
    varint(b, (uint64_t)field << 3 | WIRE_LEN);
    varint(b, len);
    for (size_t i = 0; i < n; i++)
        varint(b, v[i]);
}
