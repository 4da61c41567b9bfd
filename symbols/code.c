/* The ELF's code bytes, read from the file when first asked for, the code sections' extent, and
 * its build-id. */
#include "readers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CODE_PAGE = 4096 };

void symt_code_load(struct sym_table *t, struct code_section *c)
{
    c->tried = true; /* once: a file that lost its bytes since the open stays without them */
    size_t n = c->hi - c->lo;
    c->bytes = t->code_fd >= 0 ? malloc(n) : NULL; /* (pages never read into cost nothing) */
    c->have = c->bytes ? calloc(n / CODE_PAGE + 2, 1) : NULL;
    if (!c->have) {
        free(c->bytes);
        c->bytes = NULL;
    }
}

bool symt_code_need(struct sym_table *t, struct code_section *c, uint32_t lo, uint32_t hi)
{
    if (!c->tried)
        symt_code_load(t, c);
    if (!c->bytes)
        return false;
    lo = lo > c->lo ? lo - c->lo : 0;
    hi = hi < c->hi ? hi - c->lo : c->hi - c->lo;
    for (size_t p = lo / CODE_PAGE; p * CODE_PAGE < hi; p++) {
        if (c->have[p])
            continue;
        size_t q = p; /* a run of unread pages: one read */
        while (q * CODE_PAGE < hi && !c->have[q])
            q++;
        size_t from = p * CODE_PAGE, to = q * CODE_PAGE < c->hi - c->lo ? q * CODE_PAGE : c->hi - c->lo;
        if (pread(t->code_fd, c->bytes + from, to - from, (off_t)(c->file_off + from)) != (ssize_t)(to - from)) {
            free(c->bytes); /* the file changed under us: no code bytes from now on */
            free(c->have);
            c->bytes = c->have = NULL;
            return false;
        }
        memset(c->have + p, 1, q - p);
        p = q - 1;
    }
    return true;
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
        if (addr < c->lo || addr >= c->hi)
            continue;
        size_t avail = c->hi - addr;
        if (n > avail)
            n = avail;
        if (symt_code_need(t, c, addr, (uint32_t)(addr + n))) {
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
