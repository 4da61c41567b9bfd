/* Functions of one name told apart. Static functions of one name in two files (FreeRTOS's demos
 * have many: prvNonBlockingReceiverTask in StreamBufferDemo.c and in MessageBufferDemo.c) are two
 * functions: a frame of such a name is named "name (file)" (sym_function_label). Whether a name is
 * shared is the ELF's to say, not the samples': the files (sym_function_file) of its function
 * symbols, GCC's copies counted as their function's, from an index of the symbols by source name
 * made when first asked. So a row's name does not change when the other function's first sample
 * comes, and every view of a profile names a function alike. */
#include "readers.h"
#include "../base/hash.h"
#include "../base/path.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What sym_function_label keeps of a name (in name_files: 1 + these bits, 0 is no answer yet). */
enum { NAME_SHARED = 1, NAME_PATHS = 2 }; /* several files; two of them with one base name */

/* The length of a function symbol's source name: "crc32.constprop.0" is "crc32". */
static size_t source_len(const char *name)
{
    unsigned kinds;
    size_t base = sym_clone_split(name, &kinds);
    return base && base < 512 ? base : strlen(name); /* (a longer one was taken whole) */
}

static uint32_t hash_end(uint64_t h)
{
    return (uint32_t)(h ^ h >> 32);
}

static uint32_t name_hash(const char *s, size_t n)
{
    return hash_end(fnv1a64(s, n));
}

/* name_hash of a function symbol's source name (source_len), in one pass over a name without a
 * clone suffix (most): the name is read once, where source_len's search for a '.' and its length
 * each read it again. */
static uint32_t source_hash(const char *name)
{
    uint64_t h = FNV1A64_BASIS;
    size_t i = 0;
    for (; name[i] && name[i] != '.'; i++)
        h = fnv1a64_step(h, (unsigned char)name[i]);
    if (name[i] == '.' && source_len(name) != i) /* a '.' that starts no clone suffix: the whole name */
        for (; name[i]; i++)
            h = fnv1a64_step(h, (unsigned char)name[i]);
    return hash_end(h);
}

/* The function symbols by the hash of their source names, in address order among equal hashes;
 * false when there is no index (out of memory). Where each name was interned and the list sorted
 * by name: a first report of a sample in each of the bench ELF's 120 units interned its 21,600
 * function names, 16,000 more strings than it had (a 1 MB string table grown five times). */
static bool index_by_name(struct sym_table *t)
{
    struct sym_loader *l = t->load;
    if (l->by_name_made)
        return l->by_name != NULL;
    l->by_name_made = true;
    symt_symbols_wait(t);
    l->by_name = t->funcs.n && t->funcs.n <= UINT32_MAX ? malloc(t->funcs.n * sizeof *l->by_name) : NULL;
    for (size_t i = 0; l->by_name && i < t->funcs.n; i++) {
        const char *name = t->funcs.v[i].name; /* (names_later: NULL, not read) */
        if (name)
            l->by_name[l->n_by_name++] = (struct named_symbol){source_hash(name), (uint32_t)i};
    }
    /* (stable: the functions are in address order) */
    if (l->by_name &&
        !symt_sort_by_u32(l->by_name, l->n_by_name, sizeof *l->by_name, offsetof(struct named_symbol, hash))) {
        free(l->by_name);
        l->by_name = NULL;
    }
    return l->by_name != NULL;
}

/* NAME_SHARED when the function symbols of source name `name` are in two files or more (files not
 * known do not count), and NAME_PATHS too when two of those have one base name. */
static unsigned name_sharing(struct sym_table *t, const char *name)
{
    if (!index_by_name(t) || !t->load->n_by_name)
        return 0;
    const struct named_symbol *v = t->load->by_name;
    size_t name_len = strlen(name), lo = 0, hi = t->load->n_by_name;
    uint32_t h = name_hash(name, name_len);
    while (lo < hi) { /* the first symbol of the hash */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *files[16];
    size_t n = 0;
    unsigned bits = 0;
    for (size_t i = lo; i < t->load->n_by_name && v[i].hash == h && n < 16; i++) {
        const struct func *fn = &t->funcs.v[v[i].fn];
        if (source_len(fn->name) != name_len || memcmp(fn->name, name, name_len) != 0)
            continue; /* another name of the same hash */
        const char *f = sym_function_file(t, fn->lo);
        bool seen = f == t->load->unknown_name;
        for (size_t k = 0; k < n && !seen; k++) {
            seen = files[k] == f;
            if (!seen && strcmp(path_base(files[k]), path_base(f)) == 0)
                bits |= NAME_PATHS;
        }
        if (!seen)
            files[n++] = f;
    }
    return n > 1 ? bits | NAME_SHARED : 0;
}

const char *sym_function_label(struct sym_table *t, const char *function, uint32_t addr)
{
    if (!t || !function || strcmp(function, "??") == 0)
        return function;
    bool added;
    uintptr_t *slot = symt_ptrmap_slot(&t->load->name_files, function, &added);
    if (!slot)
        return function;
    if (added) {
        unsigned bits = name_sharing(t, function);
        slot = symt_ptrmap_slot(&t->load->name_files, function, &added); /* (the table may have grown) */
        if (!slot)
            return function;
        *slot = 1 + bits;
    }
    if (!((*slot - 1) & NAME_SHARED))
        return function;
    const char *file = sym_function_file(t, addr);
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s (%s)", function, (*slot - 1) & NAME_PATHS ? file : path_base(file)) >=
        (int)sizeof buf)
        return function;
    const char *label = symt_intern(&t->strings, buf);
    return label ? label : function;
}
