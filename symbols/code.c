/* The ELF's code bytes, read from the file when first asked for, the code sections' extent, and
 * its build-id. */
#include "readers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void symt_code_load(struct sym_table *t, struct code_section *c)
{
    c->tried = true; /* once: a file that lost its bytes since the open stays without them */
    size_t n = c->hi - c->lo;
    c->bytes = t->code_fd >= 0 ? malloc(n) : NULL;
    if (c->bytes && pread(t->code_fd, c->bytes, n, (off_t)c->file_off) != (ssize_t)n) {
        free(c->bytes);
        c->bytes = NULL;
    }
}

int sym_in_code(const struct sym_table *t, uint32_t addr)
{
    for (size_t i = 0; i < t->code.n; i++)
        if (addr >= t->code.v[i].lo && addr < t->code.v[i].hi)
            return 1;
    return 0;
}

int sym_code_span(const struct sym_table *t, uint32_t *lo, uint32_t *hi)
{
    if (!t->code.n)
        return 0;
    *lo = UINT32_MAX;
    *hi = 0;
    for (size_t i = 0; i < t->code.n; i++) {
        *lo = t->code.v[i].lo < *lo ? t->code.v[i].lo : *lo;
        *hi = t->code.v[i].hi > *hi ? t->code.v[i].hi : *hi;
    }
    return 1;
}

size_t sym_read_code(struct sym_table *t, uint32_t addr, uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < t->code.n; i++) {
        struct code_section *c = &t->code.v[i];
        if (addr >= c->lo && addr < c->hi && !c->tried)
            symt_code_load(t, c);
        if (c->bytes && addr >= c->lo && addr < c->hi) {
            size_t avail = c->hi - addr;
            if (n > avail)
                n = avail;
            memcpy(buf, c->bytes + (addr - c->lo), n);
            return n;
        }
    }
    return 0;
}

const uint8_t *sym_build_id(const struct sym_table *t, size_t *len)
{
    *len = t->build_id_len;
    return t->build_id;
}
