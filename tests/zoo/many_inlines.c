/* One function with thousands of inlined calls (about 10,000 inline ranges at -O2): a lookup in it
 * must not cost a pass over every range before its address. resolve_parity.py builds it. */
#include <stdint.h>

volatile uint32_t sink[64];

static inline __attribute__((always_inline)) uint32_t mix(uint32_t a, uint32_t b)
{
    return (a * 2654435761u) ^ (b >> 3);
}

static inline __attribute__((always_inline)) uint32_t step(uint32_t a, int k)
{
    uint32_t x = mix(a, (uint32_t)k);
    sink[k & 63] = x;
    return x + (uint32_t)k;
}

/* each call distinct (__COUNTER__), so the compiler cannot fold them into a loop */
#define STEP a = step(a, __COUNTER__);
#define STEP10 STEP STEP STEP STEP STEP STEP STEP STEP STEP STEP
#define STEP100 STEP10 STEP10 STEP10 STEP10 STEP10 STEP10 STEP10 STEP10 STEP10 STEP10
/* a branch before every hundred calls: GCC's scheduler costs the square of a block's length (3,000
 * calls in one block took 14 s to compile, blocks of 100 take 3.5 s) and still interleaves the
 * calls within a block, so that their inline ranges come in pieces */
#define BLOCK100 if (a == 0) return 0; STEP100
#define STEP1000 BLOCK100 BLOCK100 BLOCK100 BLOCK100 BLOCK100 BLOCK100 BLOCK100 BLOCK100 BLOCK100 BLOCK100

uint32_t many(uint32_t a)
{
    STEP1000 STEP1000 STEP1000
    return a;
}

void Reset_Handler(void)
{
    sink[0] = many(1);
    for (;;) {
    }
}
