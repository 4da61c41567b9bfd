/* The other static function named work (tests/test_same_name.py). The linker pads before each
 * aligned section below: the halfwords past work's symbol and past run_b's are named after the
 * symbol before them, with no line row and no unit over them (as libgcc's __aeabi_ldiv0 and
 * newlib's memset have such halfwords): functions with line information in part. */
#include "same.h"

static __attribute__((noinline)) int work(int n)
{
    volatile int s = 1;
    for (int i = 0; i < n; i++)
        s ^= mix(i) * 3; /* B_LOOP */
    return s;
}

__attribute__((section(".text.run_b"), aligned(32))) int run_b(int n)
{
    return work(n); /* B_CALL */
}

__attribute__((section(".text.after_b"), aligned(32))) void after_b(void)
{
}
