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
