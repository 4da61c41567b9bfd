/* The cell buffer the view draws into (text, attributes), and its drawing helpers. */
#include "draw.h"

#include "../profile/escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vbuf_resize(struct vbuf *b, int w, int h)
{
    if (w < 1 || h < 1)
        return -1;
    struct vcell *c = realloc(b->cells, (size_t)w * (size_t)h * sizeof *c);
    if (!c)
        return -1;
    b->cells = c;
    b->w = w;
    b->h = h;
    return 0;
}

void vbuf_free(struct vbuf *b)
{
    free(b->cells);
    b->cells = NULL;
    b->w = b->h = 0;
}

static size_t utf8_put(char *out, uint32_t c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | c >> 12);
    out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (char)(0x80 | (c & 0x3F));
    return 3;
}

size_t vbuf_text(const struct vbuf *b, char *out, size_t cap)
{
    size_t n = 0;
    for (int y = 0; y < b->h; y++) {
        int last = b->w - 1;
        while (last >= 0 && b->cells[y * b->w + last].ch == ' ')
            last--;
        for (int x = 0; x <= last && n + 4 < cap; x++)
            n += utf8_put(out + n, b->cells[y * b->w + x].ch);
        if (n + 1 < cap)
            out[n++] = '\n';
    }
    if (cap)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

void vb_clear(struct vbuf *b)
{
    for (int i = 0; i < b->w * b->h; i++)
        b->cells[i] = (struct vcell){' ', VA_NORMAL};
}

void vb_fill_attr(struct vbuf *b, int y, uint8_t attr)
{
    if (y < 0 || y >= b->h)
        return;
    for (int x = 0; x < b->w; x++)
        b->cells[y * b->w + x].attr = attr;
}

/* Put UTF-8 text at (x, y); returns the column after it. Control characters become '?'. */
int vb_put(struct vbuf *b, int x, int y, uint8_t attr, const char *s)
{
    if (y < 0 || y >= b->h)
        return x;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && x < b->w) {
        size_t k = esc_char_len((const char *)p); /* names are untrusted: no control byte reaches the screen */
        uint32_t c = *p;
        if (k == 0 || k == 4) /* a cell holds the BMP only */
            c = '?';
        else if (k == 2)
            c = (c & 0x1F) << 6 | (p[1] & 0x3F);
        else if (k == 3)
            c = (c & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
        p += k ? k : 1;
        if (x >= 0)
            b->cells[y * b->w + x] = (struct vcell){c, attr};
        x++;
    }
    return x;
}

int vb_columns(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80; /* continuation bytes take no column */
    return w;
}

int vb_put_fit(struct vbuf *b, int x, int y, uint8_t attr, const char *const *forms, int n)
{
    int i = 0;
    while (i + 1 < n && x + vb_columns(forms[i]) > b->w)
        i++;
    return vb_put(b, x, y, attr, forms[i]);
}

int vb_putf(struct vbuf *b, int x, int y, uint8_t attr, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return vb_put(b, x, y, attr, buf);
}

void vb_putc(struct vbuf *b, int x, int y, uint32_t ch, uint8_t attr)
{
    if (x >= 0 && x < b->w && y >= 0 && y < b->h)
        b->cells[y * b->w + x] = (struct vcell){ch, attr};
}

/* A share bar of `width` cells, eighth blocks for the share, its 95 % interval [lo, hi] shaded
 * around the bar's end in VA_CI ('░' where empty; ASCII: '#', and '-' for the interval). Every
 * cell the interval touches is shaded, so even a thin interval shows as one cell at any width. */
void vb_bar(struct vbuf *b, int x, int y, int width, double share, double lo, double hi, bool unicode)
{
    static const uint32_t eighths[] = {' ', 0x258F, 0x258E, 0x258D, 0x258C, 0x258B, 0x258A, 0x2589, 0x2588};
    for (int i = 0; i < width; i++) {
        double c0 = (double)i / width, c1 = (double)(i + 1) / width;
        double fill = (share - c0) / (c1 - c0);
        uint32_t ch = ' ';
        if (fill >= 1)
            ch = unicode ? 0x2588 : '#';
        else if (fill > 0)
            ch = unicode ? eighths[(int)(fill * 8)] : (fill >= 0.5 ? '#' : ' ');
        bool in_ci = hi > lo && hi > c0 && lo < c1;
        uint8_t attr = in_ci ? VA_CI : VA_BAR;
        if (ch == ' ' && in_ci)
            ch = unicode ? 0x2591 : '-';
        vb_putc(b, x + i, y, ch, attr);
    }
}

/* Word-wrap text at width w from (0, y); returns the next free row. */
int vb_wrap(struct vbuf *b, int y, uint8_t attr, const char *text)
{
    return vb_wrap_as(b, y, attr, "! ", text);
}

int vb_wrap_as(struct vbuf *b, int y, uint8_t attr, const char *lead, const char *text)
{
    char line[512];
    const char *p = text;
    int indent = (int)strlen(lead);
    while (*p && y < b->h - 1) {
        size_t n = strlen(p), room = b->w > indent ? (size_t)(b->w - indent) : 1;
        size_t take = n < room ? n : room;
        if (take < n)
            while (take > 10 && p[take] != ' ')
                take--;
        snprintf(line, sizeof line, "%*s%.*s", indent, p == text ? lead : "", (int)take, p);
        vb_put(b, 0, y++, attr, line);
        p += take;
        while (*p == ' ')
            p++;
    }
    return y;
}

int vb_sparkline(struct vbuf *b, int x, int y, const float *pts, int n, bool unicode, uint8_t attr)
{
    static const uint32_t levels[] = {0x2581, 0x2582, 0x2583, 0x2584, 0x2585, 0x2586, 0x2587, 0x2588};
    static const char ascii[] = "_.-:=+*#";
    float peak = 0;
    for (int i = 0; i < n; i++)
        peak = pts[i] > peak ? pts[i] : peak;
    for (int i = 0; i < n; i++) {
        uint32_t ch = ' ';
        if (peak > 0 && pts[i] > 0) {
            int level = (int)(pts[i] / peak * 7.999f);
            ch = unicode ? levels[level] : (uint32_t)ascii[level];
        }
        vb_putc(b, x + i, y, ch, attr);
    }
    return x + n;
}
