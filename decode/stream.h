/* Internal to the text decoder (text.c): the live stream's lines (docs/stream.md): '$'/'%' sample
 * lines, '#' histogram lines and '@' control lines, each checked by a CRC-12 or sum12. */
#ifndef CMPROF_DECODE_STREAM_H
#define CMPROF_DECODE_STREAM_H

#include "text.h"

#include <stdbool.h>
#include <stddef.h>

/* A stream line: decoded (or dropped whole and counted when its check fails); false when it is
 * no stream line (then it is a dump line or a log line). */
bool stream_line(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink);
/* On a shared UART the drain may send a stream line while the application is half-way through a
 * log line: "temp=2$AAB...~Xy". A log line whose tail, from a stream marker on, passes the
 * stream check is cut there: the head is the log, the tail the stream line. Returns whether it
 * cut. (A line that ends in "~" or "!" and two check characters is rare text; the check does the
 * rest.) */
bool stream_unglue(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink);
/* A line that is no stream line, but was one that may have named tasks before a byte of it was hit:
 * "@N" or "@task " with a damaged check mark, or a line whose check passes with '%' or '@' for its
 * first character. Dropped as a failed check (and its names unsure, EV_NAMES_UNSURE): true. */
bool stream_lost_names(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink);

#endif
