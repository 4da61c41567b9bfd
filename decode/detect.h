/* Guess a stream's format from its first bytes: firmware text dump, raw ITM, TPIU frames, or
 * orbuculum's orbflow frames. Each format reads the bytes its own way; the one that reads the
 * largest share of them cleanly wins, past any leading noise (a capture that began on a busy
 * line, a port's old bytes), which the verdict names so that decoding starts after it. */
#ifndef CMPROF_DECODE_DETECT_H
#define CMPROF_DECODE_DETECT_H

#include <stddef.h>
#include <stdint.h>

enum detect_format { DETECT_UNKNOWN, DETECT_TEXT, DETECT_ITM, DETECT_TPIU, DETECT_ORBFLOW };

/* Bytes worth looking at before deciding; fewer are fine at end of input. */
#define DETECT_WINDOW 4096u

struct detect_verdict {
    enum detect_format format;
    size_t skip;        /* bytes of leading noise at buf before the stream begins (0: none found) */
    unsigned permille;  /* share of the bytes judged that the format reads cleanly after them */
};

/* Judges the DETECT_WINDOW bytes after any leading run of zeros: a run of zeros alone proves no
 * format, so a caller that buffers should not let one fill its window (detect_leading_zeros). */
void detect_judge(const uint8_t *buf, size_t len, struct detect_verdict *v);
enum detect_format detect_format(const uint8_t *buf, size_t len);
/* The same, for a stream that paused before filling the window: DETECT_UNKNOWN while the bytes
 * at hand are ITM only for want of anything else and may still be the start of orbflow (a run
 * of zeros, frames cut short), so that a pause does not settle it on too little. */
void detect_judge_so_far(const uint8_t *buf, size_t len, struct detect_verdict *v);
enum detect_format detect_format_so_far(const uint8_t *buf, size_t len);
/* How many bytes at buf are 0x00. */
size_t detect_leading_zeros(const uint8_t *buf, size_t len);
const char *detect_name(enum detect_format f);
/* "auto", "text", "itm", "tpiu", "orbflow" -> format; DETECT_UNKNOWN (auto) or -1 for anything else. */
int detect_parse(const char *name);

#endif
