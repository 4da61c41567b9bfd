/* Functions of one name told apart. Static functions of one name in two files (FreeRTOS's demos
 * have many: prvNonBlockingReceiverTask in StreamBufferDemo.c and in MessageBufferDemo.c) are two
 * functions: a frame of such a name is named "name (file)" (sym_function_label). Whether a name is
 * shared is the ELF's to say, not the samples': the files (sym_function_file) of its function
 * symbols, GCC's copies counted as their function's, from an index of the symbols by source name
 * made when first asked. So a row's name does not change when the other function's first sample
 * comes, and every view of a profile names a function alike. */
#include "readers.h"
#include "../base/path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What sym_function_label keeps of a name (in name_files: 1 + these bits, 0 is no answer yet). */
enum { NAME_SHARED = 1, NAME_PATHS = 2 }; /* several files; two of them with one base name */

static int cmp_named(const void *a, const void *b)
{
    const struct named_symbol *x = a, *y = b;
    if (x->name != y->name)
        return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
    return x->fn->lo < y->fn->lo ? -1 : x->fn->lo > y->fn->lo;
}

/* The function symbols by source name (interned: "crc32.constprop.0" under "crc32"); false when
 * there is no index (out of memory). */
static bool index_by_name(struct sym_table *t)
{
    struct sym_loader *l = t->load;
    if (l->by_name_made)
        return l->by_name != NULL;
    l->by_name_made = true;
    symt_symbols_wait(t);
    l->by_name = t->funcs.n ? malloc(t->funcs.n * sizeof *l->by_name) : NULL;
    for (size_t i = 0; l->by_name && i < t->funcs.n; i++) {
        const char *name = t->funcs.v[i].name; /* (names_later: NULL, not read) */
        if (!name)
            continue;
        unsigned kinds;
        size_t base = sym_clone_split(name, &kinds);
        char buf[512];
        if (base && base < sizeof buf) {
            memcpy(buf, name, base);
            buf[base] = '\0';
            name = symt_intern(&t->strings, buf);
        } else {
            name = symt_intern(&t->strings, name);
        }
        if (name)
            l->by_name[l->n_by_name++] = (struct named_symbol){name, &t->funcs.v[i]};
    }
    if (l->by_name)
        qsort(l->by_name, l->n_by_name, sizeof *l->by_name, cmp_named);
    return l->by_name != NULL;
}

/* NAME_SHARED when the function symbols of source name `name` (interned) are in two files or more
 * (files not known do not count), and NAME_PATHS too when two of those have one base name. */
static unsigned name_sharing(struct sym_table *t, const char *name)
{
    if (!index_by_name(t) || !t->load->n_by_name)
        return 0;
    const struct named_symbol *v = t->load->by_name;
    size_t lo = 0, hi = t->load->n_by_name;
    while (lo < hi) { /* the first symbol of the name */
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)v[mid].name < (uintptr_t)name)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *files[16];
    size_t n = 0;
    unsigned bits = 0;
    for (size_t i = lo; i < t->load->n_by_name && v[i].name == name && n < 16; i++) {
        const char *f = sym_function_file(t, v[i].fn->lo);
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
        const char *name = symt_intern(&t->strings, function);
        unsigned bits = name ? name_sharing(t, name) : 0;
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
