/* Names for people: C++ and Rust linkage names demangled by libiberty's cplus_demangle with the
 * flags arm-none-eabi-addr2line -C uses (DMGL_PARAMS | DMGL_ANSI), so both tools print the same
 * text; libiberty also reads Rust's legacy and v0 manglings. Results are cached per name. */
#include "table.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(const char *key, size_t cap)
{
    return ((uintptr_t)key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
}

static bool grow(struct demangle_cache *d)
{
    size_t cap = d->cap ? d->cap * 2 : 256;
    const char **keys = calloc(cap, sizeof *keys), **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    for (size_t i = 0; i < d->cap; i++) {
        if (!d->keys[i])
            continue;
        size_t j = slot_of(d->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = d->keys[i];
        vals[j] = d->vals[i];
    }
    free(d->keys);
    free(d->vals);
    d->keys = keys;
    d->vals = vals;
    d->cap = cap;
    return true;
}

const char *sym_demangle(struct sym_table *t, const char *name)
{
    if (!name || !t)
        return name;
    /* only mangled names start so: skip the pool and the demangler for C names */
    if (!(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z'))))
        return name;
    const char *key = symt_intern(&t->strings, name); /* stable pointer: names may live in buffers */
    struct demangle_cache *d = &t->demangled;
    if (!key || (d->n * 2 >= d->cap && !grow(d)))
        return name;
    size_t j = slot_of(key, d->cap);
    while (d->keys[j] && d->keys[j] != key)
        j = (j + 1) & (d->cap - 1);
    if (d->keys[j])
        return d->vals[j];
    char *out = cplus_demangle(key, DMGL_PARAMS | DMGL_ANSI);
    const char *val = out ? symt_intern(&t->strings, out) : key;
    free(out);
    d->keys[j] = key;
    d->vals[j] = val ? val : key;
    d->n++;
    return d->vals[j];
}
