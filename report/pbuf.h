/* Protocol buffers' wire format, for writing only: varints, length-delimited fields and packed
 * repeated varints into a growable buffer. Enough for pprof's profile.proto (no parsing, no
 * schema: the writer knows its field numbers). */
#ifndef CMPROF_REPORT_PBUF_H
#define CMPROF_REPORT_PBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pbuf {
    uint8_t *data;
    size_t len, cap;
    bool failed; /* out of memory: later writes do nothing */
};

void pbuf_free(struct pbuf *b);
void pbuf_clear(struct pbuf *b); /* empty, the memory kept */
/* A varint field (uint64, int64 as two's complement, bool); zero is written too. */
void pbuf_uint(struct pbuf *b, unsigned field, uint64_t v);
/* A length-delimited field: bytes, a string, or an encoded message (another pbuf's contents). */
void pbuf_bytes(struct pbuf *b, unsigned field, const void *data, size_t len);
void pbuf_message(struct pbuf *b, unsigned field, const struct pbuf *msg);
/* Fields already encoded elsewhere, appended as they are (repeated fields may come in any order). */
void pbuf_append(struct pbuf *b, const struct pbuf *fields);
/* A packed repeated varint field. */
void pbuf_packed(struct pbuf *b, unsigned field, const uint64_t *v, size_t n);

#endif
