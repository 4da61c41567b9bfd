/* GDB remote serial protocol framing (see rsp.h). */
#include "rsp.h"

#include "../decode/hex.h"

#include <string.h>

enum { R_IDLE, R_DATA, R_CHECK1, R_CHECK2 };

void rsp_init(struct rsp_decoder *d)
{
    memset(d, 0, sizeof *d);
}

int rsp_hex(char ch)
{
    return hex_digit_value(ch);
}

static void put(struct rsp_decoder *d, char c)
{
    if (d->len < RSP_MAX)
        d->data[d->len++] = c;
    else
        d->overflow = true;
}

/* A payload byte as sent (already in the checksum): an escape, a run length, or itself. */
static void payload_byte(struct rsp_decoder *d, uint8_t c)
{
    if (d->escape) {
        d->escape = false;
        put(d, (char)(c ^ 0x20));
    } else if (d->rle) {
        d->rle = false;
        /* "X*n": X again n - 29 times (n is printable, from ' ' + 3 on) */
        if (d->len == 0 || c < 32 || c > 126) {
            d->overflow = true; /* malformed: drop the packet when it ends */
            return;
        }
        char prev = d->data[d->len - 1];
        for (int k = 0; k < c - 29; k++)
            put(d, prev);
    } else if (c == '}') {
        d->escape = true;
    } else if (c == '*') {
        d->rle = true;
    } else {
        put(d, (char)c);
    }
}

void rsp_feed(struct rsp_decoder *d, const uint8_t *buf, size_t len, const struct rsp_sink *sink)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t c = buf[i];
        switch (d->state) {
        case R_IDLE:
            if (c == '$' || c == '%') { /* '%': a notification, framed the same way */
                d->state = R_DATA;
                d->notification = c == '%';
                d->len = 0;
                d->sum = 0;
                d->escape = d->rle = d->overflow = false;
            } else if (c == '+' || c == '-') {
                if (c == '+')
                    d->stats.acks++;
                else
                    d->stats.nacks++;
                if (sink && sink->ack)
                    sink->ack(sink->ctx, c == '+');
            } else {
                d->stats.junk++;
            }
            break;
        case R_DATA:
            if (c == '#') {
                d->state = R_CHECK1;
            } else if (c == '$') { /* a new packet before this one ended: start over */
                d->stats.junk += d->len + 1;
                d->notification = false;
                d->len = 0;
                d->sum = 0;
                d->escape = d->rle = d->overflow = false;
            } else {
                d->sum = (uint8_t)(d->sum + c);
                payload_byte(d, c);
            }
            break;
        case R_CHECK1:
        case R_CHECK2: {
            int h = rsp_hex((char)c);
            if (h < 0) {
                d->stats.bad_checksums++;
                d->state = c == '$' ? R_DATA : R_IDLE;
                d->notification = false;
                d->len = 0;
                d->sum = 0;
                d->escape = d->rle = d->overflow = false;
                break;
            }
            if (d->state == R_CHECK1) {
                d->check = (uint8_t)(h << 4);
                d->state = R_CHECK2;
                break;
            }
            d->check |= (uint8_t)h;
            d->state = R_IDLE;
            if (d->check != d->sum || d->escape || d->rle) {
                d->stats.bad_checksums++;
            } else if (d->overflow) {
                d->stats.too_long++;
            } else {
                d->stats.packets++;
                d->data[d->len] = '\0';
                if (sink && sink->packet)
                    sink->packet(sink->ctx, d->data, d->len);
            }
            break;
        }
        }
    }
}

size_t rsp_frame(char *out, size_t cap, const char *payload, size_t len)
{
    size_t n = 0;
    uint8_t sum = 0;
    if (cap < 4)
        return 0;
    out[n++] = '$';
    for (size_t i = 0; i < len; i++) {
        char c = payload[i];
        bool esc = c == '$' || c == '#' || c == '}' || c == '*';
        if (n + (esc ? 2 : 1) + 3 > cap)
            return 0;
        if (esc) {
            out[n++] = '}';
            sum = (uint8_t)(sum + '}');
            c = (char)(c ^ 0x20);
        }
        out[n++] = c;
        sum = (uint8_t)(sum + (uint8_t)c);
    }
    out[n++] = '#';
    out[n++] = "0123456789abcdef"[sum >> 4];
    out[n++] = "0123456789abcdef"[sum & 15];
    return n;
}
