/* Memory for the symbol table (arena, interned strings, growable arrays, pages faulted in ahead), its
 * helper threads' start, sorts and searches: storage, calling nothing above it (table.h). */
#include "table.h"
#include "../base/grow.h"
#include "../base/hash.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { HUGE_PAGE = 2u << 20 };

/* n bytes of zeroed memory in whole 2 MB stretches, aligned to them, mapped on their own and given
 * back at once when freed. Less than 2 MB comes from calloc. NULL when out of memory. The pages
 * are ordinary ones, faulted in where first touched: asking for transparent huge pages
 * (MADV_HUGEPAGE) made --resolve slower once other programs had run between its runs (a zeroed
 * 2 MB page per fault, most of it never used by a sparse table; docs/performance.md). Asked for
 * only over these tables, only once a batch of 512 new addresses said they would be filled densely,
 * they cut the page faults of 100,000 addresses in 6 of the bench ELF's 120 units from 2,316 to
 * 1,485, yet cost more than they saved as often as not: 10.0x addr2line against 9.0x in 15 rounds
 * interleaved with it, 6.1x against 8.6x (CPU 38.5 ms against 29.6) in 25 rounds a few minutes
 * later. */
void *symt_pages(size_t n)
{
    if (n < HUGE_PAGE)
        return calloc(1, n ? n : 1);
    size_t len = (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    unsigned char *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    size_t lead = (HUGE_PAGE - ((uintptr_t)p & (HUGE_PAGE - 1))) & (HUGE_PAGE - 1);
    if (lead)
        munmap(p, lead);
    munmap(p + lead + len, HUGE_PAGE - lead);
    return p + lead;
}

struct elsewhere {
    void *(*fn)(void *);
    void *arg;
    cpu_set_t cpus; /* the caller's: the thread may use them all once it runs */
};

static void *elsewhere_main(void *arg)
{
    struct elsewhere e = *(struct elsewhere *)arg;
    free(arg);
    sched_setaffinity(0, sizeof e.cpus, &e.cpus);
    return e.fn(e.arg);
}

bool symt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    struct elsewhere *e = malloc(sizeof *e);
    pthread_attr_t attr;
    int here = sched_getcpu();
    bool placed = e && here >= 0 && sched_getaffinity(0, sizeof e->cpus, &e->cpus) == 0 && CPU_ISSET(here, &e->cpus) &&
                  CPU_COUNT(&e->cpus) >= 2 && pthread_attr_init(&attr) == 0;
    if (placed) {
        e->fn = fn;
        e->arg = arg;
        cpu_set_t elsewhere = e->cpus;
        CPU_CLR(here, &elsewhere);
        placed = pthread_attr_setaffinity_np(&attr, sizeof elsewhere, &elsewhere) == 0 &&
                 pthread_create(thread, &attr, elsewhere_main, e) == 0;
        pthread_attr_destroy(&attr);
    }
    if (placed)
        return true;
    free(e); /* one core, no way to tell, or no placing it: anywhere */
    return pthread_create(thread, NULL, fn, arg) == 0;
}

bool symt_core_to_spare(void)
{
    static int spare = -1; /* (read once: the answer may be asked from two threads, both compute the same) */
    if (spare < 0) {
        const char *forced = getenv("CMPROF_READ_THREADS");
        double load;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        spare = forced && *forced ? strcmp(forced, "1") != 0
                                  : cores > 1 && getloadavg(&load, 1) == 1 && load + 1.0 <= (double)cores;
    }
    return spare != 0;
}

void symt_pages_free(void *p, size_t n)
{
    if (n < HUGE_PAGE)
        free(p);
    else if (p)
        munmap(p, (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1));
}

void *symt_alloc(struct arena *a, size_t n)
{
    n = (n + 7u) & ~(size_t)7u; /* pointers and 32-bit fields at most: a 56-byte answer takes 56, not 64 */
    if (!a->head || a->head->used + n > a->head->cap) {
        /* a huge arena's first block is a 2 MB mapping of its own, what tens of thousands of
         * answers fill; the later ones come from malloc */
        bool pages = a->huge && !a->head && sizeof(struct arena_block) + n <= HUGE_PAGE;
        size_t block = pages ? HUGE_PAGE : 1u << 20;
        size_t cap = n + sizeof(struct arena_block) > block ? n : block - sizeof(struct arena_block);
        struct arena_block *b = pages ? symt_pages(HUGE_PAGE) : malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->pages = pages;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
        a->bytes += sizeof *b + cap;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

void symt_arena_free(struct arena *a)
{
    while (a->head) {
        struct arena_block *n = a->head->next;
        if (a->head->pages)
            symt_pages_free(a->head, sizeof *a->head + a->head->cap);
        else
            free(a->head);
        a->head = n;
    }
}

/* Grow the slots to hold `more` strings beyond those interned at under half load. */
static bool pool_room(struct strpool *p, size_t more)
{
    if ((p->used + more) * 2 <= p->cap)
        return true;
    size_t cap = grow_capacity(p->cap, (p->used + more) * 2, 1024);
    struct pool_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < p->cap; i++) {
        if (!p->slots[i].s)
            continue;
        size_t j = p->slots[i].hash & (cap - 1);
        while (slots[j].s)
            j = (j + 1) & (cap - 1);
        slots[j] = p->slots[i];
    }
    free(p->slots);
    p->slots = slots;
    p->cap = cap;
    return true;
}

bool symt_intern_reserve(struct strpool *p, size_t n)
{
    return pool_room(p, n);
}

const char *symt_intern(struct strpool *p, const char *s)
{
    if (!s || !pool_room(p, 1))
        return NULL;
    uint64_t h = fnv1a64_str(s);
    size_t j = h & (p->cap - 1);
    while (p->slots[j].s) {
        if (p->slots[j].hash == h && strcmp(p->slots[j].s, s) == 0)
            return p->slots[j].s;
        j = (j + 1) & (p->cap - 1);
    }
    size_t n = strlen(s) + 1;
    char *copy = symt_alloc(&p->arena, n);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    p->slots[j] = (struct pool_slot){copy, h};
    p->used++;
    return copy;
}

bool symt_vec_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    return grow_array(v, cap, need, elem, 256);
}

void symt_vec_fit(void **v, size_t *cap, size_t n, size_t elem)
{
    void *p = *cap > n ? realloc(*v, (n ? n : 1) * elem) : NULL;
    if (p) { /* (a failed shrink keeps the larger block, which serves as well) */
        *v = p;
        *cap = n ? n : 1;
    }
}

long symt_last_le(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr)
{
    /* (a branchless halving was tried: slower on tables larger than the cache, where a predicted
     * branch starts the next load early) */
    const unsigned char *base = arr;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t v;
        memcpy(&v, base + mid * elem + key, sizeof v);
        if (v <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

long symt_last_le_from(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr, long from)
{
    const unsigned char *base = arr;
    uint32_t v = 0;
    if (from >= 0 && (size_t)from < n)
        memcpy(&v, base + (size_t)from * elem + key, sizeof v);
    if (from < 0 || (size_t)from >= n || v > addr)
        return symt_last_le(arr, n, elem, key, addr);
    /* sorted lookups land a few entries on: a short forward scan, whose branch is predicted, before
     * the gallop's unpredictable halvings */
    size_t end = (size_t)from + 16 < n ? (size_t)from + 16 : n;
    for (size_t i = (size_t)from + 1; i < end; i++) {
        memcpy(&v, base + i * elem + key, sizeof v);
        if (v > addr)
            return (long)i - 1;
    }
    if (end == n)
        return (long)n - 1;
    size_t lo = end - 1, step = 1; /* gallop: 1, 2, 4... past the answer, then halve */
    for (; lo + step < n; step *= 2) {
        memcpy(&v, base + (lo + step) * elem + key, sizeof v);
        if (v > addr)
            break;
        lo += step;
    }
    size_t hi = lo + step < n ? lo + step : n;
    return (long)lo + symt_last_le(base + lo * elem, hi - lo, elem, key, addr);
}

static size_t ptr_slot(const void *key, size_t cap)
{
    return (size_t)((uintptr_t)key * 0x9E3779B97F4A7C15ull >> 16) & (cap - 1);
}

uintptr_t *symt_ptrmap_slot(struct ptrmap *m, const void *key, bool *added)
{
    if (m->n * 2 >= m->cap) {
        size_t cap = grow_capacity(m->cap, (m->n + 1) * 2, 1024);
        const void **keys = calloc(cap, sizeof *keys);
        uintptr_t *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = ptr_slot(m->keys[i], cap);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t j = ptr_slot(key, m->cap);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    *added = !m->keys[j];
    if (*added) {
        m->keys[j] = key;
        m->vals[j] = 0;
        m->n++;
    }
    return &m->vals[j];
}

void symt_ptrmap_free(struct ptrmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t offmap_home(uint64_t off, size_t cap)
{
    return (size_t)(off * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

bool symt_offmap_get(const struct offmap *m, uint64_t off, const char **name)
{
    for (size_t j = m->cap ? offmap_home(off, m->cap) : 0; m->cap && m->v[j].used; j = (j + 1) & (m->cap - 1))
        if (m->v[j].off == off) {
            *name = m->v[j].name;
            return true;
        }
    return false;
}

bool symt_offmap_put(struct offmap *m, uint64_t off, const char *name)
{
    if (m->n * 2 >= m->cap) {
        size_t cap = grow_capacity(m->cap, (m->n + 1) * 2, 256);
        struct offmap_slot *v = calloc(cap, sizeof *v);
        if (!v)
            return false;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].used)
                continue;
            size_t j = offmap_home(m->v[i].off, cap);
            while (v[j].used)
                j = (j + 1) & (cap - 1);
            v[j] = m->v[i];
        }
        free(m->v);
        m->v = v;
        m->cap = cap;
    }
    size_t j = offmap_home(off, m->cap);
    while (m->v[j].used)
        j = (j + 1) & (m->cap - 1);
    m->v[j] = (struct offmap_slot){off, name, true};
    m->n++;
    return true;
}

void symt_offmap_free(struct offmap *m)
{
    free(m->v);
    memset(m, 0, sizeof *m);
}

void symt_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(v, n, size, cmp);
}

/* One pass of the radix sort: counts are turned into starts, then each element is moved. Inlined
 * with a constant size, the moves are plain loads and stores, not memcpy calls. */
static inline __attribute__((always_inline)) void radix_pass(unsigned char *dst, const unsigned char *src, size_t n,
                                                             size_t size, size_t key, uint32_t lo, unsigned shift,
                                                             uint32_t mask, size_t *count)
{
    for (size_t b = 1; b <= mask + 1; b++)
        count[b] += count[b - 1];
    for (size_t i = 0; i < n; i++) {
        uint32_t k;
        memcpy(&k, src + i * size + key, sizeof k);
        memcpy(dst + count[(k - lo) >> shift & mask]++ * size, src + i * size, size);
    }
}

enum { MAX_DIGIT = 11, WIDE_FROM = 512 };

bool symt_sort_by_u32(void *v, size_t n, size_t size, size_t key)
{
    /* symbol tables, unit ranges and sorted batches often come in order already: one look first.
     * Then the keys' span: the ascending run it read spans its first key to its last, and only the
     * rest is read again. */
    const unsigned char *base = v;
    uint32_t prev = 0;
    size_t sorted = 0;
    for (; sorted < n; sorted++) {
        uint32_t k;
        memcpy(&k, base + sorted * size + key, sizeof k);
        if (k < prev)
            break;
        prev = k;
    }
    if (sorted == n)
        return true;
    uint32_t lo, hi = prev;
    memcpy(&lo, base + key, sizeof lo); /* (the run holds the first key at least: none is below 0) */
    for (size_t i = sorted; i < n; i++) {
        uint32_t k;
        memcpy(&k, base + i * size + key, sizeof k);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    unsigned char *tmp = malloc(n * size);
    if (!tmp)
        return false;
    /* only the bits that differ between keys are sorted, in as few passes as they need, the
     * digits equal: a batch of addresses in 160 KB of code takes two passes of 9 bits, whose 512
     * buckets stay in the cache where 2,048 did not. Digits of 11 bits at most, of 8 on small
     * arrays (whose counts would cost more to clear and sum than the moves). */
    unsigned width = 32 - (unsigned)__builtin_clz(hi - lo); /* (hi > lo: the keys are not in order) */
    unsigned widest = n >= WIDE_FROM ? MAX_DIGIT : 8;
    unsigned passes = (width + widest - 1) / widest, bits = (width + passes - 1) / passes;
    uint32_t mask = (1u << bits) - 1;
    size_t counts[3 * ((1u << MAX_DIGIT) + 1)];
    memset(counts, 0, passes * (mask + 2) * sizeof *counts);
    for (size_t i = 0; i < n; i++) { /* every digit's counts in one read of the keys */
        uint32_t k;
        memcpy(&k, base + i * size + key, sizeof k);
        k -= lo;
        for (unsigned p = 0; p < passes; p++)
            counts[p * (mask + 2) + (k >> (p * bits) & mask) + 1]++;
    }
    unsigned char *src = v, *dst = tmp;
    for (unsigned p = 0; p < passes; p++) {
        size_t *count = counts + p * (mask + 2);
        if (size == 8) /* (address, index) pairs: every batch lookup */
            radix_pass(dst, src, n, 8, key, lo, p * bits, mask, count);
        else if (size == 24)
            radix_pass(dst, src, n, 24, key, lo, p * bits, mask, count);
        else
            radix_pass(dst, src, n, size, key, lo, p * bits, mask, count);
        unsigned char *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != v)
        memcpy(v, src, n * size);
    free(tmp);
    return true;
}

uint32_t *symt_running_max(const void *arr, size_t n, size_t elem, size_t hi_at)
{
    uint32_t *m = malloc((n + 1) * sizeof *m);
    if (!m)
        return NULL;
    uint32_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t hi;
        memcpy(&hi, (const char *)arr + i * elem + hi_at, sizeof hi);
        run = hi > run ? hi : run;
        m[i] = run;
    }
    return m;
}
