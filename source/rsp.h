/* GDB remote serial protocol framing: "$data#cs" packets with '}' escapes and '*' run-length
 * encoding, '+'/'-' acknowledgements. A push decoder (rsp_feed) turns the bytes a server sends
 * into whole, checked packets; rsp_frame builds one to send. Nothing here does I/O. */
#ifndef CMPROF_SOURCE_RSP_H
#define CMPROF_SOURCE_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RSP_MAX 16384 /* longest packet payload kept (after escapes and run lengths) */

struct rsp_stats {
    uint64_t packets;       /* whole packets with a good checksum */
    uint64_t bad_checksums; /* dropped: their checksum did not match */
    uint64_t too_long;      /* dropped: longer than RSP_MAX once expanded */
    uint64_t acks, nacks;   /* '+' and '-' */
    uint64_t junk;          /* bytes outside packets that mean nothing */
};

struct rsp_sink {
    void (*packet)(void *ctx, const char *data, size_t len); /* a checked packet's payload */
    void (*ack)(void *ctx, bool positive);                   /* '+' or '-' */
    void *ctx;
};

struct rsp_decoder {
    int state;
    bool escape, rle, overflow;
    bool notification; /* the packet began with '%': a notification (never acknowledged), not a reply */
    uint8_t sum, check;
    size_t len;
    char data[RSP_MAX + 1]; /* NUL-terminated for the reader's convenience */
    struct rsp_stats stats;
};

void rsp_init(struct rsp_decoder *d);
void rsp_feed(struct rsp_decoder *d, const uint8_t *buf, size_t len, const struct rsp_sink *sink);

/* A hex digit's value, or -1: for checksums and for the hex data of replies. */
int rsp_hex(char c);

/* "$payload#cs" into out (escaping '$', '#', '}' and '*'); returns its length, 0 if it does not fit. */
size_t rsp_frame(char *out, size_t cap, const char *payload, size_t len);

#endif
