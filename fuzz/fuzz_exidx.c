/* libFuzzer target: the .ARM.exidx unwinder (symbols/exidx.c) on an index, .ARM.extab entries and
 * code that all come from the input. Input: one byte, the index's entries (0-31); one byte, where
 * the index lies in the image (0: after it, else inside it, overlapping the code); the entries
 * (8 bytes each); then the image at IMAGE (code and .ARM.extab). The rules are asked at every
 * halfword of the image, as a call site and as the interrupted instruction, and the whole input
 * is run as opcodes: nothing may crash, read outside what it was given, or loop. */
#include "../symbols/exidx.h"

#include <string.h>

#define IMAGE 0x08000000u

struct image {
    const uint8_t *bytes;
    size_t len;
};

static size_t read_image(void *ctx, uint32_t addr, uint8_t *buf, size_t n)
{
    const struct image *m = ctx;
    if (addr < IMAGE || addr - IMAGE >= m->len)
        return 0;
    size_t avail = m->len - (addr - IMAGE);
    n = n < avail ? n : avail;
    memcpy(buf, m->bytes + (addr - IMAGE), n);
    return n;
}

/* A function from the symbols: every 32 bytes of the image, when the second settings bit says so. */
static bool function_of(void *ctx, uint32_t pc, uint32_t *lo, uint32_t *hi)
{
    const struct image *m = ctx;
    if (pc < IMAGE || pc - IMAGE >= m->len)
        return false;
    *lo = pc & ~31u;
    *hi = *lo + 32u;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct exidx_rules r;
    exidx_run(data, size, &r);
    if (size < 2)
        return 0;
    size_t n = (size_t)(data[0] & 31) * 8u, at = 2;
    if (n > size - at)
        n = (size - at) & ~(size_t)7;
    struct image m = {data + at + n, size - at - n};
    uint32_t idx_addr = data[1] & 0x7f ? IMAGE + (uint32_t)(data[1] & 0x7f) * 4u : IMAGE + (uint32_t)m.len;
    struct exidx_table x = {data + at, n, idx_addr, read_image, (data[1] & 0x80) ? function_of : NULL, &m};
    for (uint32_t pc = IMAGE; pc < IMAGE + m.len + 4u && pc < IMAGE + 256u; pc += 2) {
        exidx_rules_at(&x, pc, false, &r);
        exidx_rules_at(&x, pc, true, &r);
        uint32_t lo, hi;
        exidx_function(&x, pc, &lo, &hi);
    }
    return 0;
}
