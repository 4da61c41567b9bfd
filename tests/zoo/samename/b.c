/* The other static function named work (tests/test_same_name.py). */
#include "same.h"

static __attribute__((noinline)) int work(int n)
{
    volatile int s = 1;
    for (int i = 0; i < n; i++)
        s ^= mix(i) * 3; /* B_LOOP */
    return s;
}

int run_b(int n)
{
    return work(n);
}
