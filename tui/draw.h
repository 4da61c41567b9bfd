/* Drawing into the view's cell buffer (struct vbuf, in view.h): text with an attribute, a share
 * bar with its interval, word-wrapped paragraphs. Coordinates outside the buffer are clipped. */
#ifndef CMPROF_TUI_DRAW_H
#define CMPROF_TUI_DRAW_H

#include "view.h"

#include <stdbool.h>
#include <stdint.h>

void vb_clear(struct vbuf *b);
void vb_fill_attr(struct vbuf *b, int y, uint8_t attr);                 /* a whole row's attribute */
int vb_put(struct vbuf *b, int x, int y, uint8_t attr, const char *s);  /* UTF-8; returns the next x */
int vb_putf(struct vbuf *b, int x, int y, uint8_t attr, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void vb_putc(struct vbuf *b, int x, int y, uint32_t ch, uint8_t attr);
/* A share as a bar `width` cells long, its 95 % interval [lo, hi] shaded. */
void vb_bar(struct vbuf *b, int x, int y, int width, double share, double lo, double hi, bool unicode);
int vb_wrap(struct vbuf *b, int y, uint8_t attr, const char *text);     /* returns the next free row */
/* Values (negative: unknown, blank) as a sparkline `n` cells wide, scaled to their own peak so the
 * shape shows; returns the next x. */
int vb_sparkline(struct vbuf *b, int x, int y, const float *pts, int n, bool unicode, uint8_t attr);

#endif
