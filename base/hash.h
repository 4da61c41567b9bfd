/* FNV-1a, 64 bits: the host's one string hash, for hash tables and keys kept in memory (never
 * written out or sent). A base every layer may include: it includes only the C library. */
#ifndef CMPROF_BASE_HASH_H
#define CMPROF_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_BASIS 14695981039346656037ull
#define FNV1A64_PRIME 1099511628211ull

static inline uint64_t fnv1a64_step(uint64_t h, uint64_t value)
{
    return (h ^ value) * FNV1A64_PRIME;
}

/* The hash of n bytes. */
static inline uint64_t fnv1a64(const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    uint64_t h = FNV1A64_BASIS;
    for (size_t i = 0; i < n; i++)
        h = fnv1a64_step(h, b[i]);
    return h;
}

/* The hash of a string's bytes, up to its NUL. */
static inline uint64_t fnv1a64_str(const char *s)
{
    uint64_t h = FNV1A64_BASIS;
    for (; *s; s++)
        h = fnv1a64_step(h, (unsigned char)*s);
    return h;
}

#endif
