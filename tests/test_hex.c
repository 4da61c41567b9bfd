/* Hex digits eight at a time (decode/hex.h) against a byte-by-byte reference. */
#include "../decode/hex.h"
#include "check.h"

#include <stdbool.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15ull; /* fixed seed: the same words every run */

static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A byte drawn mostly from the edges of the digit and letter ranges, and the high half. */
static unsigned char edge_byte(void)
{
    static const unsigned char edges[] = {'0', '9', 'a', 'f', 'A', 'F', '/', ':', '@', 'G', '`', 'g',
                                          '\n', '\r', ' ', 0x00, 0x7F, 0x80, 0xB0, 0xBA, 0xC6, 0xE1, 0xFF};
    uint64_t r = next_random();
    return r & 1 ? edges[(r >> 8) % sizeof edges] : (unsigned char)(r >> 16);
}

/* Every byte up to and including the first that is no digit reads right, whatever follows it. */
static void test_mask_up_to_the_first_non_digit(void)
{
    for (int i = 0; i < 1000000; i++) {
        unsigned char b[8];
        int digits = (int)(next_random() % 9); /* a run of digits, then anything */
        for (int k = 0; k < 8; k++)
            b[k] = k < digits ? (unsigned char)"0123456789abcdefABCDEF"[next_random() % 22] : edge_byte();
        uint64_t w;
        memcpy(&w, b, 8);
        uint64_t mask = hex_digits_mask(w);
        for (int k = 0; k < 8; k++) {
            CHECK(((mask >> (8 * k + 7)) & 1) == is_hex(b[k]));
            if (!is_hex(b[k]))
                break;
        }
    }
}

static void test_value_of_eight_digits(void)
{
    for (int i = 0; i < 100000; i++) {
        uint32_t v = (uint32_t)next_random();
        char s[9];
        snprintf(s, sizeof s, i & 1 ? "%08x" : "%08X", v);
        uint64_t w;
        memcpy(&w, s, 8);
        CHECK(hex_digits_mask(w) == SWAR_HIGHS);
        CHECK(hex_value8(w) == v);
    }
}

/* A short number moved to the word's end behind '0's, as --resolve reads an address line. */
static void test_short_numbers_behind_zeros(void)
{
    for (int n = 1; n < 8; n++) {
        uint32_t v = (uint32_t)next_random() & ((1u << (4 * n)) - 1);
        char s[16];
        snprintf(s, sizeof s, "%0*x\n.......", n, v);
        uint64_t w;
        memcpy(&w, s, 8);
        CHECK((size_t)__builtin_ctzll(~hex_digits_mask(w) & SWAR_HIGHS) / 8 == (size_t)n);
        CHECK(hex_value8(w << 8 * (8 - n) | (SWAR_ONES * '0') >> 8 * n) == v);
    }
}

int main(void)
{
    RUN_TEST(test_mask_up_to_the_first_non_digit);
    RUN_TEST(test_value_of_eight_digits);
    RUN_TEST(test_short_numbers_behind_zeros);
    return check_summary();
}
