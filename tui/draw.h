/* The view's cell buffer and drawing into it: text with an attribute, a share bar with its
 * interval, word-wrapped paragraphs, sparklines. Coordinates outside the buffer are clipped. */
#ifndef CMPROF_TUI_DRAW_H
#define CMPROF_TUI_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cell attributes. */
enum {
    VA_NORMAL = 0,
    VA_DIM = 1,
    VA_BOLD = 2,
    VA_TITLE = 3,   /* header and column titles */
    VA_SELECT = 4,  /* the selected row */
    VA_BAR = 5,     /* share bar */
    VA_CI = 6,      /* confidence interval on the bar */
    VA_WARN = 7,    /* diagnostics, errors, budget violations */
    VA_GOOD = 8,
    VA_KEY = 9,     /* key bar */
};

struct vcell {
    uint32_t ch; /* Unicode code point */
    uint8_t attr;
};

struct vbuf {
    int w, h;
    struct vcell *cells;
};

int vbuf_resize(struct vbuf *b, int w, int h);
void vbuf_free(struct vbuf *b);
/* The buffer as UTF-8 text, one line per row, for tests and --batch dumps of the screen. */
size_t vbuf_text(const struct vbuf *b, char *out, size_t cap);

void vb_clear(struct vbuf *b);
void vb_fill_attr(struct vbuf *b, int y, uint8_t attr);                 /* a whole row's attribute */
int vb_put(struct vbuf *b, int x, int y, uint8_t attr, const char *s);  /* UTF-8; returns the next x */
int vb_putf(struct vbuf *b, int x, int y, uint8_t attr, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void vb_putc(struct vbuf *b, int x, int y, uint32_t ch, uint8_t attr);
/* The columns UTF-8 text takes (a cell a character). */
int vb_columns(const char *s);
/* The first of n forms of one message (longest first) that fits from x to the row's end, else the
 * last (clipped): a narrow terminal gets a shorter sentence, never one cut off. Returns the next x. */
int vb_put_fit(struct vbuf *b, int x, int y, uint8_t attr, const char *const *forms, int n);
/* A share as a bar `width` cells long, its 95 % interval [lo, hi] shaded. */
void vb_bar(struct vbuf *b, int x, int y, int width, double share, double lo, double hi, bool unicode);
int vb_wrap(struct vbuf *b, int y, uint8_t attr, const char *text);     /* returns the next free row */
/* The same, led by `lead` on its first row ("! " above) and as many blanks on the rows after. */
int vb_wrap_as(struct vbuf *b, int y, uint8_t attr, const char *lead, const char *text);
/* Values (negative: unknown, blank) as a sparkline `n` cells wide, scaled to their own peak so the
 * shape shows; returns the next x. */
int vb_sparkline(struct vbuf *b, int x, int y, const float *pts, int n, bool unicode, uint8_t attr);

#endif
