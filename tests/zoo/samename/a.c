/* One of two static functions named work, in two files (tests/test_same_name.py). */
#include "same.h"

int run_b(int n);

static __attribute__((noinline)) int work(int n)
{
    volatile int s = 0;
    for (int i = 0; i < n; i++)
        s += mix(i); /* A_LOOP */
    return s;
}

void Reset_Handler(void)
{
    for (;;)
        run_b(work(10)); /* A_CALL */
}
