/* Hex digits eight at a time (SWAR): a little-endian 64-bit word holds eight characters, the
 * first in its lowest byte. Shared by the text decoder and --resolve's address lines. */
#ifndef CMPROF_DECODE_HEX_H
#define CMPROF_DECODE_HEX_H

#include <stdint.h>
#include <string.h>

/* Eight characters at s in a 64-bit word, the first in its lowest byte, as the functions below
 * take them (on any host). */
static inline uint64_t hex_chars8(const void *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* ONES * c has c in every byte; HIGHS their high bits. */
#define SWAR_ONES 0x0101010101010101ull
#define SWAR_HIGHS 0x8080808080808080ull

/* The high bit of each byte of w that is a hex digit ('0'-'9', 'a'-'f', 'A'-'F'), exact up to and
 * including the first byte that is not one: a byte from 0x80 up may carry into the bytes after it,
 * which can then read wrong. */
static inline uint64_t hex_digits_mask(uint64_t w)
{
    /* per byte x < 0x80: x >= lo exactly when x + (0x80 - lo) has its high bit set */
#define SWAR_GE(x, lo) ((x) + SWAR_ONES * (0x80u - (lo)))
    uint64_t lower = w | SWAR_ONES * 0x20u;
    uint64_t digit = SWAR_GE(w, 0x30u) & ~SWAR_GE(w, 0x3Au);
    uint64_t letter = SWAR_GE(lower, 0x61u) & ~SWAR_GE(lower, 0x67u);
#undef SWAR_GE
    return (digit | letter) & SWAR_HIGHS;
}

/* One hex digit's value, or -1. */
static inline int hex_digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The value of eight hex digits (all checked to be digits first). */
static inline uint32_t hex_value8(uint64_t w)
{
    uint64_t letters = (w & SWAR_ONES * 0x40u) >> 6;                /* 1 in each byte that is a letter */
    uint64_t v = (w & SWAR_ONES * 0x0Fu) + letters * 9u;            /* nibbles, first digit lowest */
    v = ((v << 4) | (v >> 8)) & 0x00FF00FF00FF00FFull;             /* bytes of two digits */
    v = ((v << 8) | (v >> 16)) & 0x0000FFFF0000FFFFull;            /* halfwords of four */
    return (uint32_t)((v << 16) | (v >> 32));
}

#endif
