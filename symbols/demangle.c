/* Names for people: C++ and Rust linkage names demangled by libiberty's cplus_demangle with the
 * flags arm-none-eabi-addr2line -C uses (DMGL_PARAMS | DMGL_ANSI), so both tools print the same
 * text; libiberty also reads Rust's legacy and v0 manglings. Results are cached per name. Also
 * GCC's clone names (crc32.constprop.0): the source name and the kinds of copy. */
#include "readers.h"

#include <libiberty/demangle.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The kinds of copy GCC makes of a function, as the suffixes of the copy's symbol name (bit k of a
 * mask is clone_kinds[k]). */
static const char *const clone_kinds[] = {"constprop", "isra", "part", "cold", "lto_priv", "localalias"};

/* One ".KIND" or ".KIND.N" at s: its length, the kind's bit in *mask; 0 when s is not one. */
static size_t clone_suffix(const char *s, unsigned *mask)
{
    if (s[0] != '.')
        return 0;
    for (size_t k = 0; k < sizeof clone_kinds / sizeof *clone_kinds; k++) {
        size_t n = strlen(clone_kinds[k]);
        if (strncmp(s + 1, clone_kinds[k], n) != 0 || (s[1 + n] != '.' && s[1 + n] != '\0'))
            continue;
        size_t len = 1 + n;
        if (s[len] == '.' && isdigit((unsigned char)s[len + 1]))
            for (len++; isdigit((unsigned char)s[len]); len++) {
            }
        *mask |= 1u << k;
        return len;
    }
    return 0;
}

size_t sym_clone_split(const char *name, unsigned *kinds)
{
    *kinds = 0;
    const char *dot = name ? strchr(name, '.') : NULL;
    if (!dot || dot == name)
        return 0;
    unsigned mask = 0;
    for (const char *s = dot; *s;) { /* the whole tail must be clone suffixes: "f.part.0.cold" */
        size_t n = clone_suffix(s, &mask);
        if (!n)
            return 0;
        s += n;
    }
    *kinds = mask;
    return (size_t)(dot - name);
}

const char *sym_clone_text(unsigned kinds, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (size_t k = 0; k < sizeof clone_kinds / sizeof *clone_kinds && used < len; k++)
        if (kinds & (1u << k))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", clone_kinds[k]);
    return buf;
}

unsigned sym_clone_kinds(const struct sym_table *t, const char *function)
{
    if (!t || !function)
        return 0;
    symt_symbols_wait(t);
    size_t n = strlen(function);
    unsigned all = 0, kinds;
    for (size_t i = 0; i < t->funcs.n; i++) {
        const char *s = t->funcs.v[i].name;
        if (s && strncmp(s, function, n) == 0 && s[n] == '.' && sym_clone_split(s, &kinds) == n)
            all |= kinds;
    }
    return all;
}
