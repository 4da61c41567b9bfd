/* Names for people: C++ and Rust linkage names demangled by libiberty's cplus_demangle with the
 * flags arm-none-eabi-addr2line -C uses (DMGL_PARAMS | DMGL_ANSI), so both tools print the same
 * text; libiberty also reads Rust's legacy and v0 manglings. Results are cached per name. */
#include "table.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

const char *sym_demangle(struct sym_table *t, const char *name)
{
    if (!name || !t)
        return name;
    /* only mangled names start so: skip the pool and the demangler for C names */
    if (!(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z'))))
        return name;
    const char *key = symt_intern(&t->strings, name); /* stable pointer: names may live in buffers */
    bool added;
    uintptr_t *val = key ? symt_ptrmap_slot(&t->demangled, key, &added) : NULL;
    if (!val)
        return name;
    if (added) {
        char *out = cplus_demangle(key, DMGL_PARAMS | DMGL_ANSI);
        const char *shown = out ? symt_intern(&t->strings, out) : NULL;
        free(out);
        *val = (uintptr_t)(shown ? shown : key);
    }
    return (const char *)*val;
}
