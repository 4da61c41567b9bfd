/* hugeheap: after the setup, blocks up to 32 MB and other threads' blocks come from the one heap,
 * and the kernel backs the heap's touched 2 MB stretches with huge pages. */
#include "../app/hugeheap.h"
#include "check.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* kB of huge pages the kernel gave the mappings that overlap [lo, hi) */
static long huge_kb_between(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    long kb = 0;
    bool inside = false;
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        char perms[5];
        long n;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &a, &b, perms) == 3) /* a mapping's first line */
            inside = a < hi && b > lo;
        else if (inside && sscanf(line, "AnonHugePages: %ld kB", &n) == 1)
            kb += n;
    }
    fclose(f);
    return kb;
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
    size_t big = 24u << 20; /* above glibc's usual 128 KB threshold for a mapping of its own */
    unsigned char *p = malloc(big);
    CHECK(p && in_heap(p, big));
    pthread_t th;
    void *q = NULL;
    CHECK(pthread_create(&th, NULL, thread_block, NULL) == 0 && pthread_join(th, &q) == 0);
    CHECK(q && in_heap(q, 1 << 20)); /* another thread: the same heap, not an arena of its own */
    if (!p)
        return;
    for (size_t i = 0; i < big; i += 4096)
        p[i] = (unsigned char)i;
    char mode[128];
    const char *m = thp_mode(mode, sizeof mode);
    if (!m || strcmp(m, "never") == 0) {
        printf("FAIL %s: this kernel gives no transparent huge pages (mode %s): nothing to test\n", check_current_test,
               m ? m : "absent");
        check_failures_in_test++;
    } else {
        /* at least 10 of the block's 12 whole 2 MB stretches on huge pages (the kernel may be short
         * of free 2 MB pages for a few) */
        long kb = huge_kb_between((uintptr_t)p, (uintptr_t)p + big);
        if (kb < 10 * 2048)
            printf("  (%ld kB of huge pages under a 24 MB block, THP mode %s)\n", kb, m);
        CHECK(kb >= 10 * 2048);
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
