/* hugeheap: after the setup, blocks up to 32 MB and other threads' blocks come from the one heap,
 * and the kernel backs them with huge pages: one fault for each 2 MB touched. */
#include "../app/hugeheap.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static uintptr_t heap_lo;

static bool in_heap(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    return a >= heap_lo && a + n <= (uintptr_t)sbrk(0);
}

static void *thread_block(void *arg)
{
    (void)arg;
    return malloc(1 << 20);
}

static long minor_faults(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : -1;
}

/* the kernel's THP mode: "always", "madvise" or "never" (NULL when it has no THP) */
static const char *thp_mode(char *buf, size_t len)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return NULL;
    bool got = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    char *open = got ? strchr(buf, '[') : NULL, *close = open ? strchr(open, ']') : NULL;
    if (!close)
        return NULL;
    *close = '\0';
    return open + 1;
}

static void test_blocks_come_from_the_heap_on_huge_pages(void)
{
    heap_lo = (uintptr_t)sbrk(0);
    bool asked = hugeheap_setup((size_t)HUGEHEAP_RESERVE_MB << 20);
    if (SANITIZED) { /* the sanitizer's allocator is left alone */
        CHECK(!asked);
        void *p = malloc(8 << 20);
        CHECK(p != NULL);
        free(p);
        return;
    }
    CHECK(asked);
    /* the first block after the setup, as the tool's first tables are: every 4 KB of it touched */
    size_t big = 24u << 20; /* above glibc's usual 128 KB threshold for a mapping of its own */
    unsigned char *p = malloc(big);
    CHECK(p && in_heap(p, big));
    pthread_t th;
    void *q = NULL;
    CHECK(pthread_create(&th, NULL, thread_block, NULL) == 0 && pthread_join(th, &q) == 0);
    CHECK(q && in_heap(q, 1 << 20)); /* another thread: the same heap, not an arena of its own */
    if (!p)
        return;
    long before = minor_faults();
    for (size_t i = 0; i < big; i += 4096)
        p[i] = (unsigned char)i;
    long faults = minor_faults() - before;
    char mode[128];
    const char *m = thp_mode(mode, sizeof mode);
    if (!m || strcmp(m, "never") == 0) {
        printf("FAIL %s: this kernel gives no transparent huge pages (mode %s): nothing to test\n", check_current_test,
               m ? m : "absent");
        check_failures_in_test++;
    } else {
        /* 13 stretches of 2 MB at most, one fault each (6,144 on 4 KB pages); a few to spare, should
         * the kernel be short of free 2 MB pages */
        if (faults > 32)
            printf("  (%ld faults touching a 24 MB block, THP mode %s)\n", faults, m);
        CHECK(faults >= 0 && faults <= 32);
    }
    for (size_t i = 0; i < big; i += 4096)
        CHECK(p[i] == (unsigned char)i);
    free(p);
    free(q);
}

static void test_setup_refuses_odd_reserves(void)
{
    CHECK(!hugeheap_setup(0));
    CHECK(!hugeheap_setup(1 << 20));
    CHECK(!hugeheap_setup((size_t)4 << 30));
}

int main(void)
{
    RUN_TEST(test_blocks_come_from_the_heap_on_huge_pages);
    RUN_TEST(test_setup_refuses_odd_reserves);
    return check_summary();
}
