/* A firmware linked at address 0 (as on nRF5x, MPS2, many SAM and LPC parts) with --gc-sections:
 * the linker drops the unused functions, and their DWARF keeps DW_AT_low_pc 0 (a tombstone) with
 * their real length, so their ranges lie over the code that does sit at the bottom of flash. */
#include <stdint.h>

volatile uint32_t sink;
volatile uint64_t wide;
extern void Reset_Handler(void);

/* first in .text (the default linker script puts .text.sorted.* first): the vector table at 0 */
__attribute__((section(".text.sorted.0vectors"), used)) const uint32_t vectors[16] = {0x20001000u,
                                                                              (uint32_t)&Reset_Handler};

__attribute__((noinline)) uint32_t kept_low(uint32_t x)
{
    return x * 7u + (x >> 3);
}

static inline uint32_t mix(uint32_t a, uint32_t b)
{
    return (a ^ (b << 5)) + (b >> 2);
}

/* never called: discarded by --gc-sections, and longer than the vector table and the
 * code after it: its tombstone range [0, length) covers them */
uint32_t discarded_trace_push(uint32_t x)
{
    uint32_t acc = 0;
    for (uint32_t i = 0; i < x; i++) {
        acc = mix(acc, i * 3u);
        acc += (acc << 3) ^ (i * 2654435761u);
        acc -= mix(i, acc) / 7u;
        acc ^= (acc >> 11) * 13u;
        acc += (i & 1u) ? mix(acc, 5u) : mix(7u, acc);
        acc = acc * 31u + (acc >> 9) - i / 3u;
        acc += mix(acc * 5u, i + 11u) % 1000u;
        acc ^= mix(acc / 5u, i * 7u) << 2;
        acc += mix(acc % 9u, i * 17u) >> 1;
        acc ^= (acc * 2654435761u) >> 7;
        acc -= mix(acc / 3u, i + 5u) % 77u;
        acc += (acc << 6) ^ mix(i, acc / 11u);
        acc ^= mix(acc % 13u, i * 19u) << 3;
        acc += (acc >> 4) * mix(i / 3u, 9u);
    }
    return acc;
}

void Reset_Handler(void)
{
    for (;;) {
        sink = kept_low(sink) + mix(sink, 3u);
        wide = wide / (sink | 1u); /* __aeabi_uldivmod from libgcc: assembler, no DWARF subprogram */
    }
}
