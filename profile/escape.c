/* Escaping of untrusted names: one UTF-8 validator for every output. */
#include "escape.h"

#include <stdio.h>
#include <string.h>

static int cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

size_t esc_char_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    if (c < 0x80)
        return c >= 0x20 && c != 0x7F ? 1 : 0;
    if (c >= 0xC2 && c <= 0xDF)
        return cont(s[1]) && !(c == 0xC2 && s[1] < 0xA0) ? 2 : 0; /* U+0080..U+009F: C1 controls */
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(s[1]) || !cont(s[2]))
            return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)) /* overlong, surrogate */
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(s[1]) || !cont(s[2]) || !cont(s[3]))
            return 0;
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)) /* overlong, > U+10FFFF */
            return 0;
        return 4;
    }
    return 0;
}

void esc_text(char *dst, size_t cap, const char *src, const char *also)
{
    size_t n = 0;
    if (!cap)
        return;
    while (*src) {
        size_t k = esc_char_len(src);
        if (*src == '\\') { /* so that every \ in the text begins an escape: a name that holds the text \x1b stays it */
            if (n + 2 >= cap)
                break;
            dst[n++] = '\\';
            dst[n++] = '\\';
            src++;
            continue;
        }
        if (k == 1 && also && strchr(also, *src))
            k = 0;
        if (k) {
            if (n + k >= cap)
                break;
            memcpy(dst + n, src, k);
            n += k;
            src += k;
        } else {
            if (n + 4 >= cap)
                break;
            snprintf(dst + n, cap - n, "\\x%02x", (unsigned char)*src++);
            n += 4;
        }
    }
    dst[n] = '\0';
}

/* A digit of esc_text's \xNN (lowercase), or -1. */
static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

void esc_decode(char *dst, const char *text, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && text[i] == '\\' && text[i + 1] == '\\') {
            dst[o++] = '\\';
            i++;
            continue;
        }
        int hi = i + 3 < n && text[i] == '\\' && text[i + 1] == 'x' ? hex_digit(text[i + 2]) : -1;
        int lo = hi >= 0 ? hex_digit(text[i + 3]) : -1;
        if (lo >= 0) {
            dst[o++] = (char)(hi << 4 | lo);
            i += 3;
        } else {
            dst[o++] = text[i];
        }
    }
    dst[o] = '\0';
}
