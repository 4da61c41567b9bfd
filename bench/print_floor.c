/* The least printing --resolve could cost with a cache of answer texts: reads an output of
 * `cmprof-top --resolve` (or addr2line -a -f -i), keeps each distinct answer text once (as a
 * cache would, in new memory), then times writing the whole output again from that cache, each
 * answer an address line and one copy, into a 128 KB buffer as --resolve spills it. The cache's
 * pages are either fresh (as in a run: each first copy faults one in) or touched before the clock
 * starts (the copies alone). Also what a fresh page costs here, faulted or populated in bulk.
 * No formatting, no lookup, no write call is timed: a floor, not a design.
 *     cc -std=c11 -O2 -Wall -Wextra -Werror bench/print_floor.c bench/spread.c -o build/print_floor
 *     build/cmprof-top --resolve big.elf < confined.txt > out.txt; build/print_floor out.txt */
#define _GNU_SOURCE
#include "spread.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { ROUNDS = 21, SPILL = 1 << 17, PAGES = 600 };

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

struct answers {
    char *text;                /* the whole output */
    size_t n, n_texts;         /* answers; distinct answer texts */
    uint32_t *addr, *which;    /* each answer's address and text */
    const char **first;        /* each distinct text's first place in text */
    size_t *len, bytes;        /* its length; all distinct texts' bytes */
};

/* FNV-1a: the distinct texts found by a hash of their bytes (a few seconds at most, untimed). */
static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static bool read_answers(const char *path, struct answers *a)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        return false;
    long size = ftell(f);
    rewind(f);
    a->text = malloc((size_t)size + 1);
    if (!a->text || fread(a->text, 1, (size_t)size, f) != (size_t)size)
        return false;
    fclose(f);
    a->text[size] = '\0';
    size_t cap = (size_t)size / 11 + 1, slots = 1;
    while (slots < 2 * cap)
        slots *= 2;
    a->addr = malloc(cap * sizeof *a->addr);
    a->which = malloc(cap * sizeof *a->which);
    a->first = malloc(cap * sizeof *a->first);
    a->len = malloc(cap * sizeof *a->len);
    size_t *table = calloc(slots, sizeof *table); /* text index + 1 */
    if (!a->addr || !a->which || !a->first || !a->len || !table)
        return false;
    for (char *p = a->text; (p = strstr(p, "0x")) != NULL;) {
        char *body = strchr(p, '\n');
        if (!body)
            break;
        char *end = strstr(++body, "\n0x");
        end = end ? end + 1 : a->text + size;
        size_t n = (size_t)(end - body), j = hash(body, n) & (slots - 1);
        while (table[j] && (a->len[table[j] - 1] != n || memcmp(a->first[table[j] - 1], body, n) != 0))
            j = (j + 1) & (slots - 1);
        if (!table[j]) {
            a->first[a->n_texts] = body;
            a->len[a->n_texts] = n;
            a->bytes += n;
            table[j] = ++a->n_texts;
        }
        a->addr[a->n] = (uint32_t)strtoul(p + 2, NULL, 16);
        a->which[a->n++] = (uint32_t)(table[j] - 1);
        p = end;
    }
    free(table);
    return a->n > 0;
}

/* The output written again from a cache of the distinct texts; ms of CPU. */
static double print_from_cache(const struct answers *a, bool touched, char *out)
{
    /* (mapped here: malloc would keep a freed block of this size for the next round, no longer fresh) */
    char *cache = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const char **at = calloc(a->n_texts, sizeof *at);
    if (cache == MAP_FAILED || !at)
        exit(1);
    if (touched)
        memset(cache, 0, a->bytes);
    double t0 = cpu_ms();
    size_t used = 0, o = 0, sum = 0;
    for (size_t k = 0; k < a->n; k++) {
        uint32_t i = a->which[k];
        if (!at[i]) { /* the first print of a text puts it in the cache */
            memcpy(cache + used, a->first[i], a->len[i]);
            at[i] = cache + used;
            used += a->len[i];
        }
        if (o + 11 + a->len[i] > SPILL) {
            sum += o;
            o = 0;
        }
        static const char hex[] = "0123456789abcdef";
        memcpy(out + o, "0x", 2);
        for (int d = 0; d < 8; d++)
            out[o + 2 + d] = hex[a->addr[k] >> (28 - 4 * d) & 15];
        out[o + 10] = '\n';
        memcpy(out + o + 11, at[i], a->len[i]);
        o += 11 + a->len[i];
    }
    double ms = cpu_ms() - t0;
    if (sum + o == 0)
        exit(1);
    munmap(cache, a->bytes);
    free(at);
    return ms;
}

/* us of CPU a fresh page: faulted one by one, or populated by mmap (MAP_POPULATE) */
static double page_us(bool populate)
{
    double t0 = cpu_ms();
    char *p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0),
                   -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    for (size_t i = 0; i < PAGES * 4096; i += 4096)
        p[i] = 1;
    double us = (cpu_ms() - t0) * 1e3 / PAGES;
    munmap(p, PAGES * 4096);
    return us;
}

int main(int argc, char **argv)
{
    struct answers a = {0};
    char *out = malloc(SPILL);
    if (argc != 2 || !out || !read_answers(argv[1], &a)) {
        fprintf(stderr, "usage: print_floor RESOLVE_OUTPUT (answers of addr2line -a -f -i's shape)\n");
        return 2;
    }
    double fresh[ROUNDS], touched[ROUNDS], faulted[ROUNDS], populated[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) { /* interleaved */
        fresh[r] = print_from_cache(&a, false, out);
        touched[r] = print_from_cache(&a, true, out);
        faulted[r] = page_us(false);
        populated[r] = page_us(true);
    }
    char buf[128];
    printf("%zu answers, %zu distinct texts (%.2f MB), %.2f MB of output\n", a.n, a.n_texts, a.bytes / 1e6,
           (double)strlen(a.text) / 1e6);
    printf("printed from the cache, its pages fresh: %s\n", spread_text(spread_of(fresh, ROUNDS), "%.2f", "ms", buf, sizeof buf));
    printf("printed from the cache, its pages touched before: %s\n",
           spread_text(spread_of(touched, ROUNDS), "%.2f", "ms", buf, sizeof buf));
    printf("a fresh page, faulted: %s\n", spread_text(spread_of(faulted, ROUNDS), "%.2f", "us", buf, sizeof buf));
    printf("a fresh page, MAP_POPULATE: %s\n", spread_text(spread_of(populated, ROUNDS), "%.2f", "us", buf, sizeof buf));
    return 0;
}
