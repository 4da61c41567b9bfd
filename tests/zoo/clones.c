/* GCC's copies of static functions, for the live view's tests (test_tui.py builds it at -O2 with
 * -fipa-cp-clone): crc32() always gets the same polynomial, so GCC makes copies with it built in,
 * crc32.constprop.0 and .1 (one per length), called with bl from frame_a and frame_b; scale() gets
 * two constant gains, scale.constprop.0 and .1. */
#include <stdint.h>

volatile uint32_t sink;
volatile uint8_t data[64];

static __attribute__((noinline)) uint32_t crc32(const volatile uint8_t *p, uint32_t n, uint32_t poly)
{
    uint32_t c = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (poly & (0u - (c & 1u)));
    }
    return ~c;
}

struct gain {
    uint32_t num, den, spare[8];
};

static __attribute__((noinline)) uint32_t scale(const struct gain *g, uint32_t x)
{
    for (int k = 0; k < 16; k++)
        x = x * g->num + (x >> 3);
    return x;
}

static uint32_t check(uint32_t x)
{
    if (x & 1u)
        return x;
    uint32_t s = 0;
    for (uint32_t i = 0; i < (x & 63u); i++)
        s += crc32(data, i, 0xEDB88320u);
    return s;
}

__attribute__((noinline)) uint32_t frame_a(uint32_t x)
{
    return crc32(data, 32, 0xEDB88320u) ^ check(x);
}

__attribute__((noinline)) uint32_t frame_b(uint32_t x)
{
    return crc32(data + 8, 48, 0xEDB88320u) + check(x + 1u);
}

void Reset_Handler(void)
{
    struct gain g = {3, 1, {0}}, h = {5, 2, {0}};
    for (;;) {
        sink = frame_a(sink) + frame_b(sink);
        sink = scale(&g, sink) + scale(&h, sink);
    }
}
