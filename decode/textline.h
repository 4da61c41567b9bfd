/* Internal to the text decoder (text.c, stream.c): what a dump line and a live stream line share:
 * numbers in "key=value" fields, the count of malformed lines, and the section figures both carry
 * ("sect ..." in a dump, "@sect ..." in the stream). */
#ifndef CMPROF_DECODE_TEXTLINE_H
#define CMPROF_DECODE_TEXTLINE_H

#include "text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At *p: key, then a number in base (up to 20 digits) ending at a blank or end; *p moves past
 * it and its blanks. False when malformed. */
bool textline_uint(const char **p, const char *end, const char *key, uint64_t *out, int base);
/* The line being read is malformed: counted, and the first one's offset kept. */
void textline_bad(struct text_decoder *d);
bool textline_starts(const char *s, size_t len, const char *prefix);
/* "sect I n= cur= min= max= sum=": a timed section's figures (EV_SECTION). */
void textline_section(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink);
/* "sectev I K ev=E cur= min= max= sum=": event slot K of section I (Cortex-A/R PMU events). */
void textline_section_event(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink);
/* The checked body of a '^' line (its check taken off): one EV_STACK_WORDS, or the line counted as
 * malformed. Dropped before the first announce (no code base to place it by). */
void textline_stack(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink);
/* A dump's stack evidence line, "sw" and its hex words parsed: BACK PC LR SCANNED { OFF WORD }. */
#define TEXTLINE_STACK_WORDS (4 + 2 * 63)
void textline_stack_words(struct text_decoder *d, const uint32_t *w, size_t n, const struct ev_sink *sink);

#endif
