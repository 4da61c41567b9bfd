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
    uintptr_t *val = key ? symt_ptrmap_slot(&t->load->demangled, key, &added) : NULL;
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

static int cmp_clone(const void *a, const void *b)
{
    const struct sym_clone *x = a, *y = b;
    size_t n = x->base < y->base ? x->base : y->base;
    int c = strncmp(x->name, y->name, n);
    return c ? c : x->base != y->base ? (x->base < y->base ? -1 : 1) : strcmp(x->name, y->name);
}

/* The first of the copies whose source name is name[0..n), or NULL. */
static const struct sym_clone *clones_of(const struct sym_table *t, const char *name, size_t n)
{
    const struct sym_loader *l = t->load;
    size_t lo = 0, hi = l->n_clones;
    while (lo < hi) { /* the first entry not before name */
        size_t mid = lo + (hi - lo) / 2;
        const struct sym_clone *c = &l->clones[mid];
        int d = strncmp(c->name, name, c->base < n ? c->base : n);
        if (d < 0 || (d == 0 && c->base < n))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n_clones && l->clones[lo].base == n && strncmp(l->clones[lo].name, name, n) == 0 ? &l->clones[lo]
                                                                                                      : NULL;
}

/* The copies' index, by source name: one pass over the function symbols for the copies, one for
 * the source names that have a symbol of their own. Out of memory: no copies known. */
static void make_clones(struct sym_table *t)
{
    struct sym_loader *l = t->load;
    l->clones_made = true;
    symt_symbols_wait(t);
    size_t n = 0, base;
    for (size_t i = 0; i < t->funcs.n; i++)
        n += t->funcs.v[i].name && sym_clone_split(t->funcs.v[i].name, &(unsigned){0}) > 0;
    l->clones = n ? malloc(n * sizeof *l->clones) : NULL;
    if (!l->clones)
        return;
    for (size_t i = 0; i < t->funcs.n; i++) {
        const char *s = t->funcs.v[i].name;
        unsigned k;
        if (s && (base = sym_clone_split(s, &k)) > 0)
            l->clones[l->n_clones++] = (struct sym_clone){s, base, k, false};
    }
    qsort(l->clones, l->n_clones, sizeof *l->clones, cmp_clone);
    for (size_t i = 0; i < t->funcs.n; i++) {
        const char *s = t->funcs.v[i].name;
        const struct sym_clone *c = s ? clones_of(t, s, strlen(s)) : NULL;
        for (size_t k = c ? (size_t)(c - l->clones) : l->n_clones;
             k < l->n_clones && l->clones[k].base == c->base && strncmp(l->clones[k].name, s, c->base) == 0; k++)
            l->clones[k].original = true;
    }
}

unsigned sym_clone_kinds(const struct sym_table *t, const char *function)
{
    if (!t || !function)
        return 0;
    if (!t->load->clones_made)
        make_clones((struct sym_table *)t); /* a cache: the table's contents do not change */
    size_t n = strlen(function);
    unsigned all = 0;
    for (const struct sym_clone *c = clones_of(t, function, n); c && c < t->load->clones + t->load->n_clones &&
                                                                c->base == n && strncmp(c->name, function, n) == 0;
         c++)
        all |= c->kinds;
    return all;
}

/* sym_shown_name's answer, made once a name. */
static const char *shown_name(struct sym_table *t, const char *name, bool for_people)
{
    char buf[1024];
    unsigned kinds;
    size_t base = sym_clone_split(name, &kinds), n = strlen(name), used = 0;
    if (for_people) {
        const char *d = sym_demangle(t, name);
        if (d != name) /* C++'s demangler notes a copy itself: "f(int) [clone .constprop.0]" */
            kinds = base ? 0 : sym_clone_kinds(t, name);
        else if (base) /* a copy's own symbol: the number too, as two copies are two rows */
            return snprintf(buf, sizeof buf, "%.*s [%s]", (int)base, name, name + base + 1) < (int)sizeof buf
                       ? symt_intern(&t->strings, buf) : name;
        else
            kinds = sym_clone_kinds(t, name);
        if (!kinds)
            return d;
        char note[64];
        snprintf(buf, sizeof buf, "%s [%s]", d, sym_clone_text(kinds, note, sizeof note));
        return symt_intern(&t->strings, buf);
    }
    if (base || !sym_clone_kinds(t, name))
        return name;
    const struct sym_clone *c = clones_of(t, name, n), *end = t->load->clones + t->load->n_clones;
    if (c->original)
        used = (size_t)snprintf(buf, sizeof buf, "%s", name);
    for (const struct sym_clone *prev = NULL; c < end && c->base == n && strncmp(c->name, name, n) == 0; prev = c++)
        if ((!prev || strcmp(prev->name, c->name) != 0) && used < sizeof buf) /* a name twice: once */
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? ", " : "", c->name);
    return used < sizeof buf ? symt_intern(&t->strings, buf) : name;
}

size_t sym_name_part(const char *name, const char **file, size_t *file_len)
{
    /* a function's name has no " (" (C's, or a linkage name): the first one opens the file */
    const char *open = strstr(name, " (");
    size_t n = strlen(name);
    *file = NULL;
    *file_len = 0;
    if (!open || open == name || name[n - 1] != ')' || (size_t)(open - name) + 3 >= n)
        return n;
    *file = open + 2;
    *file_len = n - (size_t)(open - name) - 3;
    return (size_t)(open - name);
}

/* shown_name's answer for a name that carries its file: the function's name shown so, the file
 * after it and before a copy's note. NULL when it does not fit (or no memory). */
static const char *shown_with_file(struct sym_table *t, const char *name, bool for_people)
{
    const char *file;
    size_t file_len, n = sym_name_part(name, &file, &file_len);
    char buf[1024];
    if (!file || n >= sizeof buf)
        return NULL;
    memcpy(buf, name, n);
    buf[n] = '\0';
    const char *shown = sym_shown_name(t, buf, for_people), *note = strrchr(shown, '[');
    size_t len = strlen(shown),
           at = note && note > shown && note[-1] == ' ' && shown[len - 1] == ']' ? (size_t)(note - 1 - shown) : len;
    if (snprintf(buf, sizeof buf, "%.*s (%.*s)%s", (int)at, shown, (int)file_len, file, shown + at) >= (int)sizeof buf)
        return NULL;
    return symt_intern(&t->strings, buf);
}

const char *sym_shown_name(struct sym_table *t, const char *name, bool for_people)
{
    if (!t || !name)
        return name;
    const char *key = symt_intern(&t->strings, name);
    bool added;
    uintptr_t *val = key ? symt_ptrmap_slot(&t->load->shown[for_people], key, &added) : NULL;
    if (!val)
        return name;
    if (added) {
        const char *shown = shown_with_file(t, key, for_people);
        if (shown) /* (its function's name went into the map: the slot may have moved) */
            val = symt_ptrmap_slot(&t->load->shown[for_people], key, &added);
        else
            shown = shown_name(t, key, for_people);
        if (!val)
            return shown ? shown : name;
        *val = (uintptr_t)(shown ? shown : key);
    }
    return (const char *)*val;
}
