/* A tiny test harness: each CHECK prints nothing on success; each test prints one line,
 * "ok   name" or "FAIL name: file:line: expression", and main() returns check_summary(). */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int check_failures_in_test;
static int check_tests_failed;

#define CHECK(cond)                                                                                       \
    do {                                                                                                  \
        if (!(cond)) {                                                                                    \
            if (check_failures_in_test++ == 0)                                                            \
                printf("FAIL %s: %s:%d: %s\n", check_current_test, __FILE__, __LINE__, #cond);            \
        }                                                                                                 \
    } while (0)

static const char *check_current_test = "";

#define RUN_TEST(fn)                                                                                      \
    do {                                                                                                  \
        check_current_test = #fn;                                                                         \
        check_failures_in_test = 0;                                                                       \
        fn();                                                                                             \
        if (check_failures_in_test)                                                                       \
            check_tests_failed++;                                                                         \
        else                                                                                              \
            printf("ok   %s\n", #fn);                                                                     \
        fflush(stdout);                                                                                   \
    } while (0)

static inline int check_summary(void)
{
    return check_tests_failed ? 1 : 0;
}

#endif
