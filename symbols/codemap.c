/* Instruction starts of an ELF's code (see codemap.h): a bit per halfword of each code section. */
#include "codemap.h"
#include "table.h"

#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

struct code_range {
    uint32_t lo, hi;
    uint8_t *starts; /* bit k: an instruction starts at lo + 2k */
};

struct codemap {
    struct code_range *r; /* sorted by lo */
    size_t n;
};

static void set_start(struct code_range *r, uint64_t addr)
{
    uint64_t k = (addr - r->lo) >> 1;
    r->starts[k >> 3] |= (uint8_t)(1u << (k & 7));
}

/* A halfword that begins a 32-bit Thumb instruction: its top five bits are 0b11101, 0b11110 or
 * 0b11111. */
static bool thumb32(uint16_t h)
{
    return h >> 11 >= 0x1D;
}

/* The starts of [from, to): A32 a word each, Thumb by each instruction's length from `from`,
 * none in data. */
static void decode(struct code_range *r, const uint8_t *bytes, uint64_t from, uint64_t to, uint8_t mode)
{
    if (mode == MODE_DATA)
        return;
    for (uint64_t a = from; a < to;) {
        set_start(r, a);
        if (mode == MODE_ARM || a + 2 > r->hi) {
            a += 4;
            continue;
        }
        uint16_t h = (uint16_t)(bytes[a - r->lo] | bytes[a - r->lo + 1] << 8);
        a += thumb32(h) ? 4 : 2;
    }
}

/* Every halfword of [from, to) a start: where nothing says what the bytes are, nothing counts
 * against the ELF. */
static void all_starts(struct code_range *r, uint64_t from, uint64_t to)
{
    for (uint64_t a = from; a < to; a += 2)
        set_start(r, a);
}

/* Walk a section from anchor to anchor (a function's start, a mapping symbol): inside a function
 * decode up to its end (or to the next anchor: an unsized function's code runs on), outside any
 * function only after a mapping symbol of its own (code without a function symbol); the rest,
 * padding after a function, holds no start. */
static void mark_range(const struct sym_table *t, struct code_range *r, const uint8_t *bytes)
{
    const struct func *f = t->funcs.v;
    const struct mode_mark *m = t->modes.v;
    long nf = (long)t->funcs.n, nm = (long)t->modes.n;
    long fi = LAST_LE(f, t->funcs.n, r->lo, lo), mi = LAST_LE(m, t->modes.n, r->lo, addr);
    for (uint64_t a = r->lo; a < r->hi;) {
        while (fi + 1 < nf && f[fi + 1].lo <= a)
            fi++;
        while (mi + 1 < nm && m[mi + 1].addr <= a)
            mi++;
        uint64_t next = r->hi;
        if (fi + 1 < nf && f[fi + 1].lo < next)
            next = f[fi + 1].lo;
        if (mi + 1 < nm && m[mi + 1].addr < next)
            next = m[mi + 1].addr;
        bool in_func = fi >= 0 && a < f[fi].hi;
        if (mi < 0 || m[mi].addr < r->lo)
            all_starts(r, a, next); /* no mapping symbol in this section so far */
        else if (in_func)
            decode(r, bytes, a, f[fi].hi - f[fi].lo <= 2 || f[fi].hi > next ? next : f[fi].hi, m[mi].mode);
        else if (fi < 0 || m[mi].addr >= f[fi].hi)
            decode(r, bytes, a, next, m[mi].mode);
        a = next;
    }
}

/* The ELF is little-endian (its code bytes are read as such). */
static bool little_endian(const struct sym_table *t)
{
    unsigned char ident[EI_NIDENT];
    return t->code_fd >= 0 && pread(t->code_fd, ident, sizeof ident, 0) == (ssize_t)sizeof ident &&
           ident[EI_DATA] == ELFDATA2LSB;
}

struct codemap *codemap_new(struct sym_table *t)
{
    symt_symbols_wait(t);
    if (!t->modes.n || !t->code.n || !little_endian(t))
        return NULL;
    struct codemap *m = calloc(1, sizeof *m);
    m->r = m ? calloc(t->code.n, sizeof *m->r) : NULL;
    if (!m || !m->r) {
        free(m);
        return NULL;
    }
    for (size_t i = 0; i < t->code.n; i++) { /* sections come in address order in the ELF, mostly */
        struct code_section *c = &t->code.v[i];
        if (!c->tried)
            symt_code_load(t, c);
        if (!c->bytes || c->hi <= c->lo)
            continue;
        struct code_range *r = &m->r[m->n];
        *r = (struct code_range){c->lo, c->hi, calloc((c->hi - c->lo) / 16 + 1, 1)};
        if (!r->starts) {
            codemap_free(m);
            return NULL;
        }
        mark_range(t, r, c->bytes);
        m->n++;
    }
    return m;
}

void codemap_free(struct codemap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->r[i].starts);
    free(m->r);
    free(m);
}

enum codemap_kind codemap_at(const struct codemap *m, uint32_t addr)
{
    addr &= ~1u;
    for (size_t i = 0; i < m->n; i++) {
        const struct code_range *r = &m->r[i];
        if (addr >= r->lo && addr < r->hi) {
            uint32_t k = (addr - r->lo) >> 1;
            return r->starts[k >> 3] >> (k & 7) & 1 ? CODEMAP_START : CODEMAP_NOT_START;
        }
    }
    return CODEMAP_OUTSIDE;
}
