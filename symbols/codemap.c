/* Instruction starts of an ELF's code (see codemap.h): a bit per halfword of each code section,
 * found a region at a time (from one anchor, a function's start or a mapping symbol, to the
 * next) when an address in it is first asked about: a profile touches a few functions of a
 * firmware, so a large ELF's code is neither read nor decoded whole. */
#include "codemap.h"
#include "readers.h"

#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

struct code_range {
    uint32_t lo, hi;
    size_t section;  /* its index in the table's code sections */
    uint8_t *starts; /* bit k: an instruction starts at lo + 2k */
    uint8_t *known;  /* bit k: the region holding lo + 2k is decoded */
};

struct codemap {
    struct sym_table *t;
    struct code_range *r;
    size_t n;
};

static void set_bit(uint8_t *bits, const struct code_range *r, uint64_t addr)
{
    uint64_t k = (addr - r->lo) >> 1;
    bits[k >> 3] |= (uint8_t)(1u << (k & 7));
}

static bool bit(const uint8_t *bits, const struct code_range *r, uint32_t addr)
{
    uint32_t k = (addr - r->lo) >> 1;
    return bits[k >> 3] >> (k & 7) & 1;
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
        set_bit(r->starts, r, a);
        if (mode == MODE_ARM || a + 2 > r->hi) {
            a += 4;
            continue;
        }
        uint16_t h = (uint16_t)(bytes[a - r->lo] | bytes[a - r->lo + 1] << 8);
        a += thumb32(h) ? 4 : 2;
    }
}

/* The region of r that holds addr: from the last anchor at or before it (a function's start, a
 * mapping symbol, the section's start) to the next one. Inside a function its starts are decoded
 * up to the function's end (or on to the next anchor: an unsized function's code runs on);
 * outside every function only after a mapping symbol of its own (code without a function symbol);
 * the padding after a function holds none. Where no mapping symbol says what the bytes are, every
 * halfword counts as a start: nothing there counts against the ELF. */
static void decode_region(struct codemap *m, struct code_range *r, uint32_t addr)
{
    struct sym_table *t = m->t;
    const struct func *f = t->funcs.v;
    const struct mode_mark *mk = t->modes.v;
    long fi = LAST_LE(f, t->funcs.n, addr, lo), mi = LAST_LE(mk, t->modes.n, addr, addr);
    uint64_t a = r->lo, next = r->hi;
    if (fi >= 0 && f[fi].lo > a)
        a = f[fi].lo;
    if (mi >= 0 && mk[mi].addr > a)
        a = mk[mi].addr;
    if (fi + 1 < (long)t->funcs.n && f[fi + 1].lo < next)
        next = f[fi + 1].lo;
    if (mi + 1 < (long)t->modes.n && mk[mi + 1].addr < next)
        next = mk[mi + 1].addr;
    struct code_section *c = &t->code.v[r->section];
    bool have = symt_code_need(t, c, (uint32_t)a, (uint32_t)next);
    bool in_func = fi >= 0 && a < f[fi].hi;
    if (!have || mi < 0 || mk[mi].addr < r->lo) {
        for (uint64_t k = a; k < next; k += 2)
            set_bit(r->starts, r, k);
    } else if (in_func) {
        decode(r, c->bytes, a, f[fi].hi - f[fi].lo <= 2 || f[fi].hi > next ? next : f[fi].hi, mk[mi].mode);
    } else if (fi < 0 || mk[mi].addr >= f[fi].hi) {
        decode(r, c->bytes, a, next, mk[mi].mode);
    }
    for (uint64_t k = a; k < next; k += 2)
        set_bit(r->known, r, k);
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
    bool ok = m && (m->r = calloc(t->code.n, sizeof *m->r)) != NULL;
    for (size_t i = 0; ok && i < t->code.n; i++) {
        const struct code_section *c = &t->code.v[i];
        if (c->hi <= c->lo)
            continue;
        size_t bytes = (c->hi - c->lo) / 16 + 1; /* (calloc'd: pages never asked about cost nothing) */
        struct code_range *r = &m->r[m->n++];
        *r = (struct code_range){c->lo, c->hi, i, calloc(bytes, 1), calloc(bytes, 1)};
        ok = r->starts && r->known;
    }
    if (!ok) {
        codemap_free(m);
        return NULL;
    }
    m->t = t;
    return m;
}

void codemap_free(struct codemap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->r[i].starts);
        free(m->r[i].known);
    }
    free(m->r);
    free(m);
}

enum codemap_kind codemap_at(struct codemap *m, uint32_t addr)
{
    addr &= ~1u;
    for (size_t i = 0; i < m->n; i++) {
        struct code_range *r = &m->r[i];
        if (addr < r->lo || addr >= r->hi)
            continue;
        if (!bit(r->known, r, addr))
            decode_region(m, r, addr);
        return bit(r->starts, r, addr) ? CODEMAP_START : CODEMAP_NOT_START;
    }
    return CODEMAP_OUTSIDE;
}
