/* The common shapes of DWARF 2-5, read straight from the section bytes: a unit's DIE tree (scopes
 * and their ranges) and its line program. libdwarf allocates an object per DIE, attribute and
 * line row; this reads the bytes in place, about ten times faster. Anything outside the common
 * shapes (DWARF64, split DWARF's indexed forms, relocatable objects, odd sizes) or any byte out
 * of place makes a unit "unsupported": nothing of it is kept and libdwarf reads it instead, with
 * its own diagnostics. */
#include "table.h"

#include <fcntl.h>
#include <gelf.h>
#include <libdwarf/dwarf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SEC_INFO, SEC_ABBREV, SEC_LINE, SEC_STR, SEC_LINE_STR, SEC_RNGLISTS, SEC_RANGES, SEC_COUNT };
static const char *const section_names[SEC_COUNT] = {".debug_info",     ".debug_abbrev",   ".debug_line",  ".debug_str",
                                                     ".debug_line_str", ".debug_rnglists", ".debug_ranges"};

struct raw_dwarf {
    int fd;
    Elf *elf;
    const uint8_t *sec[SEC_COUNT];
    size_t len[SEC_COUNT];
};

struct raw_dwarf *raw_open(const char *path)
{
    struct raw_dwarf *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->fd = open(path, O_RDONLY | O_CLOEXEC);
    elf_version(EV_CURRENT);
    d->elf = d->fd >= 0 ? elf_begin(d->fd, ELF_C_READ, NULL) : NULL;
    GElf_Ehdr eh;
    char *ident = d->elf ? elf_getident(d->elf, NULL) : NULL;
    size_t shstrndx;
    /* relocatable objects need their relocations applied: libdwarf does that */
    bool ok = ident && ident[EI_DATA] == ELFDATA2LSB && gelf_getehdr(d->elf, &eh) && eh.e_type != ET_REL &&
              elf_getshdrstrndx(d->elf, &shstrndx) == 0;
    for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(d->elf, scn)) != NULL;) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(d->elf, shstrndx, sh.sh_name) : NULL;
        for (int k = 0; name && k < SEC_COUNT; k++) {
            if (strcmp(name, section_names[k]) != 0 || sh.sh_type == SHT_NOBITS)
                continue;
            if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) {
                ok = false; /* a compression libelf cannot undo: libdwarf's turn */
                break;
            }
            Elf_Data *data = elf_getdata(scn, NULL);
            if (data && data->d_buf) {
                d->sec[k] = data->d_buf;
                d->len[k] = data->d_size;
            }
        }
    }
    if (!ok || !d->sec[SEC_INFO] || !d->sec[SEC_ABBREV]) {
        raw_close(d);
        return NULL;
    }
    return d;
}

void raw_close(struct raw_dwarf *d)
{
    if (!d)
        return;
    if (d->elf)
        elf_end(d->elf);
    if (d->fd >= 0)
        close(d->fd);
    free(d);
}

/* ---- a bounds-checked cursor: any read past the end sets bad and returns 0 ---------------- */

struct cur {
    const uint8_t *p, *end;
    bool bad;
};

static bool need(struct cur *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        c->p = c->end;
        return false;
    }
    return true;
}

static uint64_t fixed(struct cur *c, unsigned n)
{
    if (!need(c, n))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}

static uint64_t uleb(struct cur *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; need(c, 1); shift += 7) {
        uint8_t b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    return 0;
}

static int64_t sleb(struct cur *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (need(c, 1)) {
        uint8_t b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                v |= ~(uint64_t)0 << shift;
            return (int64_t)v;
        }
    }
    return 0;
}

static void skip(struct cur *c, uint64_t n)
{
    if (n > (uint64_t)(c->end - c->p)) {
        c->bad = true;
        c->p = c->end;
    } else {
        c->p += n;
    }
}

static const char *cstr(struct cur *c)
{
    const uint8_t *z = c->bad ? NULL : memchr(c->p, 0, (size_t)(c->end - c->p));
    if (!z) {
        c->bad = true;
        c->p = c->end;
        return NULL;
    }
    const char *s = (const char *)c->p;
    c->p = z + 1;
    return s;
}

/* ---- abbreviations ----------------------------------------------------------------------- */

struct attr_spec {
    uint16_t at, form;
    int64_t implicit; /* DW_FORM_implicit_const */
};

struct abbrev {
    uint64_t code;
    uint16_t tag;
    bool children;
    uint32_t first, n; /* attr_spec slice */
};

struct abbrevs {
    struct abbrev *v;
    size_t n, cap;
    struct attr_spec *specs;
    size_t n_specs, cap_specs;
    bool dense; /* v[i].code == i + 1 for all i: direct indexing */
};

static bool read_abbrevs(const struct raw_dwarf *d, uint64_t off, struct abbrevs *a)
{
    if (off >= d->len[SEC_ABBREV])
        return false;
    struct cur c = {d->sec[SEC_ABBREV] + off, d->sec[SEC_ABBREV] + d->len[SEC_ABBREV], false};
    a->dense = true;
    for (;;) {
        uint64_t code = uleb(&c);
        if (c.bad)
            return false;
        if (code == 0)
            return true;
        struct abbrev ab = {code, (uint16_t)uleb(&c), false, (uint32_t)a->n_specs, 0};
        ab.children = fixed(&c, 1) != 0;
        for (;;) {
            uint64_t at = uleb(&c), form = uleb(&c);
            int64_t implicit = form == DW_FORM_implicit_const ? sleb(&c) : 0;
            if (c.bad || at > 0xffff || form > 0xffff)
                return false;
            if (at == 0 && form == 0)
                break;
            if (!symt_vec_grow((void **)&a->specs, &a->cap_specs, a->n_specs + 1, sizeof *a->specs))
                return false;
            a->specs[a->n_specs++] = (struct attr_spec){(uint16_t)at, (uint16_t)form, implicit};
            ab.n++;
        }
        if (!symt_vec_grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v))
            return false;
        a->dense &= code == a->n + 1;
        a->v[a->n++] = ab;
    }
}

static const struct abbrev *find_abbrev(const struct abbrevs *a, uint64_t code)
{
    if (a->dense)
        return code >= 1 && code <= a->n ? &a->v[code - 1] : NULL;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].code == code)
            return &a->v[i];
    return NULL;
}

/* ---- attribute values -------------------------------------------------------------------- */

enum val_kind { V_NONE, V_UNSIGNED, V_ADDR, V_REF, V_STRING, V_BLOCK, V_UNSUPPORTED };

struct val {
    enum val_kind kind;
    uint64_t u;      /* constant, address, or reference (.debug_info offset) */
    const char *s;   /* V_STRING */
    const uint8_t *block; /* V_BLOCK: u bytes */
};

struct unit {
    const struct raw_dwarf *d;
    uint64_t start, end; /* the unit's bytes in .debug_info, header included */
    uint16_t version;
    uint8_t addr_size;
    struct abbrevs ab;
};

static const char *str_at(const struct raw_dwarf *d, int sec, uint64_t off)
{
    if (!d->sec[sec] || off >= d->len[sec] || !memchr(d->sec[sec] + off, 0, d->len[sec] - off))
        return NULL;
    return (const char *)d->sec[sec] + off;
}

/* Read (or skip) one attribute value. V_UNSUPPORTED for forms this reader leaves to libdwarf. */
static struct val value(const struct unit *u, struct cur *c, const struct attr_spec *spec)
{
    struct val v = {V_UNSIGNED, 0, NULL, NULL};
    uint16_t form = spec->form;
    switch (form) {
    case DW_FORM_addr:
        v.kind = V_ADDR;
        v.u = fixed(c, u->addr_size);
        break;
    case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
        v.u = fixed(c, 1);
        break;
    case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
        v.u = fixed(c, 2);
        break;
    case DW_FORM_strx3: case DW_FORM_addrx3:
        v.u = fixed(c, 3);
        break;
    case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
    case DW_FORM_sec_offset: case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
        v.u = fixed(c, 4);
        break;
    case DW_FORM_ref_addr:
        v.u = fixed(c, u->version <= 2 ? u->addr_size : 4);
        break;
    case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
        v.u = fixed(c, 8);
        break;
    case DW_FORM_data16:
        skip(c, 16);
        break;
    case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx: case DW_FORM_rnglistx:
    case DW_FORM_loclistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
        v.u = uleb(c);
        break;
    case DW_FORM_sdata:
        v.u = (uint64_t)sleb(c);
        break;
    case DW_FORM_implicit_const:
        v.u = (uint64_t)spec->implicit;
        break;
    case DW_FORM_flag_present:
        v.u = 1;
        break;
    case DW_FORM_string:
        v.kind = V_STRING;
        v.s = cstr(c);
        break;
    case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4: case DW_FORM_block: case DW_FORM_exprloc:
        v.u = form == DW_FORM_block1 ? fixed(c, 1) : form == DW_FORM_block2 ? fixed(c, 2)
                                     : form == DW_FORM_block4 ? fixed(c, 4) : uleb(c);
        v.block = c->p;
        skip(c, v.u);
        v.kind = c->bad ? V_NONE : V_BLOCK;
        break;
    default: /* DW_FORM_indirect and anything unknown: the size is not known here */
        c->bad = true;
        v.kind = V_UNSUPPORTED;
        return v;
    }
    switch (form) { /* what the value means */
    case DW_FORM_ref1: case DW_FORM_ref2: case DW_FORM_ref4: case DW_FORM_ref8: case DW_FORM_ref_udata:
        v.kind = V_REF;
        v.u += u->start;
        break;
    case DW_FORM_ref_addr:
        v.kind = V_REF;
        break;
    case DW_FORM_strp:
        v.kind = V_STRING;
        v.s = str_at(u->d, SEC_STR, v.u);
        break;
    case DW_FORM_line_strp:
        v.kind = V_STRING;
        v.s = str_at(u->d, SEC_LINE_STR, v.u);
        break;
    case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3: case DW_FORM_strx4:
    case DW_FORM_addrx: case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3: case DW_FORM_addrx4:
    case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index: case DW_FORM_GNU_ref_alt:
    case DW_FORM_GNU_strp_alt: case DW_FORM_strp_sup: case DW_FORM_ref_sup4: case DW_FORM_ref_sup8:
    case DW_FORM_ref_sig8:
        v.kind = V_UNSUPPORTED; /* indexed or supplementary: needs bases this reader does not keep */
        break;
    default:
        break;
    }
    return v;
}

static bool is_constant(uint16_t form)
{
    switch (form) {
    case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8: case DW_FORM_udata:
    case DW_FORM_sdata: case DW_FORM_implicit_const:
        return true;
    default:
        return false;
    }
}

/* ---- units ------------------------------------------------------------------------------- */

static bool unit_open(const struct raw_dwarf *d, uint64_t off, struct unit *u)
{
    memset(u, 0, sizeof *u);
    u->d = d;
    u->start = off;
    if (off >= d->len[SEC_INFO])
        return false;
    struct cur c = {d->sec[SEC_INFO] + off, d->sec[SEC_INFO] + d->len[SEC_INFO], false};
    uint64_t len = fixed(&c, 4);
    if (len >= 0xfffffff0u || len > (uint64_t)(c.end - c.p)) /* DWARF64 or cut */
        return false;
    u->end = off + 4 + len;
    u->version = (uint16_t)fixed(&c, 2);
    uint64_t abbrev_off;
    if (u->version == 5) {
        uint8_t type = (uint8_t)fixed(&c, 1);
        if (type != DW_UT_compile && type != DW_UT_partial)
            return false;
        u->addr_size = (uint8_t)fixed(&c, 1);
        abbrev_off = fixed(&c, 4);
    } else if (u->version >= 2 && u->version <= 4) {
        abbrev_off = fixed(&c, 4);
        u->addr_size = (uint8_t)fixed(&c, 1);
    } else {
        return false;
    }
    return !c.bad && u->addr_size == 4 && read_abbrevs(d, abbrev_off, &u->ab);
}

static void unit_close(struct unit *u)
{
    free(u->ab.v);
    free(u->ab.specs);
}

/* Offset of the first DIE after the header. */
static uint64_t first_die(const struct unit *u)
{
    return u->start + (u->version == 5 ? 12 : 11);
}

/* ---- scopes ------------------------------------------------------------------------------ */

/* What the unit's root DIE says. */
struct raw_unit_info {
    uint64_t language;
    bool has_stmt_list, has_low;
    uint64_t stmt_list; /* the unit's line program in .debug_line */
    uint64_t low;
    const char *comp_dir, *name; /* in the section's bytes, or NULL */
};

struct scope_reader {
    struct unit u;
    struct sym_table *t;
    struct strpool *pool;
    uint32_t cu;
    bool mangling;
    uint64_t cu_base;
    bool unsupported;
    struct offmap names; /* abstract origin offset -> name */
};

/* What a DIE says about itself: the attributes the scope table needs. */
struct die_attrs {
    const char *name, *linkage;
    uint64_t origin;
    bool has_origin, has_decl_file, has_call_file, has_call_line, has_low, has_high, high_is_length, has_ranges;
    uint64_t call_file, call_line, low, high, ranges, stmt_list, language;
    bool has_stmt_list, has_sibling;
    uint64_t sibling;
    const char *comp_dir;
    bool has_type, has_member_offset;
    uint64_t type, member_offset; /* DW_AT_type; DW_AT_data_member_location as a constant */
};

/* Parse the DIE at c (its code already read: ab) and collect its attributes. */
static void read_attrs(struct scope_reader *r, struct cur *c, const struct abbrev *ab, struct die_attrs *a)
{
    memset(a, 0, sizeof *a);
    for (uint32_t i = 0; i < ab->n && !c->bad; i++) {
        const struct attr_spec *spec = &r->u.ab.specs[ab->first + i];
        struct val v = value(&r->u, c, spec);
        bool unsupported = v.kind == V_UNSUPPORTED;
        switch (spec->at) {
        case DW_AT_name:
            if (v.kind == V_STRING)
                a->name = v.s;
            r->unsupported |= unsupported || v.kind != V_STRING || !v.s;
            break;
        case DW_AT_linkage_name:
        case DW_AT_MIPS_linkage_name:
            if (v.kind == V_STRING)
                a->linkage = v.s;
            r->unsupported |= unsupported || v.kind != V_STRING || !v.s;
            break;
        case DW_AT_abstract_origin:
        case DW_AT_specification:
            a->has_origin = v.kind == V_REF;
            a->origin = v.u;
            r->unsupported |= v.kind != V_REF;
            break;
        case DW_AT_decl_file:
            a->has_decl_file = true;
            break;
        case DW_AT_call_file:
            a->has_call_file = v.kind == V_UNSIGNED;
            a->call_file = v.u;
            break;
        case DW_AT_call_line:
            a->has_call_line = v.kind == V_UNSIGNED;
            a->call_line = v.u;
            break;
        case DW_AT_low_pc:
            a->has_low = v.kind == V_ADDR;
            a->low = v.u;
            r->unsupported |= unsupported;
            break;
        case DW_AT_high_pc:
            a->has_high = v.kind == V_ADDR || is_constant(spec->form);
            a->high_is_length = v.kind != V_ADDR;
            a->high = v.u;
            r->unsupported |= unsupported;
            break;
        case DW_AT_ranges:
            a->has_ranges = true;
            a->ranges = v.u;
            r->unsupported |= unsupported || (spec->form != DW_FORM_sec_offset && spec->form != DW_FORM_data4);
            break;
        case DW_AT_stmt_list:
            a->has_stmt_list = v.kind == V_UNSIGNED;
            a->stmt_list = v.u;
            break;
        case DW_AT_language:
            a->language = v.u;
            break;
        case DW_AT_comp_dir:
            a->comp_dir = v.kind == V_STRING ? v.s : NULL;
            r->unsupported |= v.kind != V_STRING || !v.s;
            break;
        case DW_AT_sibling:
            a->has_sibling = v.kind == V_REF;
            a->sibling = v.u;
            break;
        case DW_AT_type:
            a->has_type = v.kind == V_REF;
            a->type = v.u;
            break;
        case DW_AT_data_member_location:
            if (v.kind == V_UNSIGNED) {
                a->has_member_offset = true;
                a->member_offset = v.u;
            } else if (v.kind == V_BLOCK && v.u >= 2 && v.block[0] == DW_OP_plus_uconst) { /* DWARF 2 style */
                struct cur e = {v.block + 1, v.block + v.u, false};
                a->member_offset = uleb(&e);
                a->has_member_offset = !e.bad;
            }
            break;
        default:
            break;
        }
    }
}

static const char *die_name_at(struct scope_reader *r, uint64_t off, int depth);

/* A DIE's name as the scope table gives it: linkage name, else its origin's or specification's
 * name (at most 4 links deep), else DW_AT_name. */
static const char *name_of(struct scope_reader *r, const struct die_attrs *a, int depth)
{
    if (a->linkage)
        return a->linkage;
    if (depth <= 3 && a->has_origin) {
        const char *n = die_name_at(r, a->origin, depth);
        if (n)
            return n;
    }
    return a->name;
}

/* The name of the DIE at a .debug_info offset inside this unit, cached: thousands of inlined
 * instances point at the same few abstract origins. Another unit's DIE: unsupported here. */
static const char *die_name_at(struct scope_reader *r, uint64_t off, int depth)
{
    if (off < first_die(&r->u) || off >= r->u.end) {
        r->unsupported = true;
        return NULL;
    }
    const char *cached;
    if (symt_offmap_get(&r->names, off, &cached))
        return cached;
    struct cur c = {r->u.d->sec[SEC_INFO] + off, r->u.d->sec[SEC_INFO] + r->u.end, false};
    const struct abbrev *ab = find_abbrev(&r->u.ab, uleb(&c));
    const char *name = NULL;
    if (ab) {
        struct die_attrs a;
        read_attrs(r, &c, ab, &a);
        name = c.bad ? NULL : name_of(r, &a, depth + 1);
        if (name)
            name = symt_intern(r->pool, name);
    } else {
        r->unsupported = true;
    }
    if (!symt_offmap_put(&r->names, off, name))
        r->unsupported = true;
    return name;
}

struct range_sink {
    struct sym_table *t;
    uint32_t scope, depth; /* a scope's range; for a unit's range, scope is the unit */
    bool inline_range, unit;
};

static bool sink_range(struct range_sink *s, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return true;
    if (s->unit)
        return VEC_PUSH(s->t->unit_ranges, ((struct unit_range){(uint32_t)lo, (uint32_t)hi, s->scope}));
    return dwarf_add_range(s->t, s->scope, s->depth, s->inline_range, (uint32_t)lo, (uint32_t)hi);
}

/* DW_AT_ranges: a DWARF 5 range list in .debug_rnglists, or a DWARF 2-4 one in .debug_ranges,
 * at a section offset. False: unsupported or out of memory. */
static bool read_ranges(struct scope_reader *r, uint64_t off, struct range_sink *s)
{
    const struct raw_dwarf *d = r->u.d;
    int sec = r->u.version >= 5 ? SEC_RNGLISTS : SEC_RANGES;
    if (!d->sec[sec] || off >= d->len[sec])
        return false;
    struct cur c = {d->sec[sec] + off, d->sec[sec] + d->len[sec], false};
    uint64_t base = r->cu_base;
    for (int guard = 0; guard < 1 << 20 && !c.bad; guard++) {
        if (sec == SEC_RANGES) {
            uint64_t a = fixed(&c, 4), b = fixed(&c, 4);
            if (c.bad)
                return false;
            if (a == 0 && b == 0)
                return true;
            if (a == 0xffffffffu) {
                base = b;
                continue;
            }
            if (!sink_range(s, (base + a) & 0xffffffffu, (base + b) & 0xffffffffu))
                return false;
            continue;
        }
        uint64_t lo, hi;
        switch (fixed(&c, 1)) {
        case DW_RLE_end_of_list:
            return !c.bad;
        case DW_RLE_base_address:
            base = fixed(&c, 4);
            continue;
        case DW_RLE_offset_pair:
            lo = base + uleb(&c);
            hi = base + uleb(&c);
            break;
        case DW_RLE_start_end:
            lo = fixed(&c, 4);
            hi = fixed(&c, 4);
            break;
        case DW_RLE_start_length:
            lo = fixed(&c, 4);
            hi = lo + uleb(&c);
            break;
        default: /* the indexed kinds need .debug_addr: libdwarf's */
            return false;
        }
        if (c.bad || !sink_range(s, lo & 0xffffffffu, hi & 0xffffffffu))
            return false;
    }
    return false;
}

/* A scope for a subprogram or inlined instance: the same record dwarf.c's walk makes. */
static bool add_scope(struct scope_reader *r, const struct die_attrs *a, uint16_t tag, int32_t parent, uint32_t depth)
{
    struct scope s = {a->linkage, NULL, UINT32_MAX, 0, tag == DW_TAG_subprogram ? -1 : parent, r->cu,
                      a->has_decl_file, false, UINT32_MAX};
    if (s.name)
        s.name = symt_intern(r->pool, s.name);
    if (!s.name && a->has_origin)
        s.name = die_name_at(r, a->origin, 0);
    if (!s.name && a->name)
        s.name = symt_intern(r->pool, a->name);
    if (tag == DW_TAG_inlined_subroutine) {
        if (a->has_call_file)
            s.call_fileno = (uint32_t)a->call_file;
        if (a->has_call_line)
            s.call_line = (uint32_t)a->call_line;
    }
    if (!s.name)
        s.name = symt_intern(r->pool, "??");
    s.plain_name = r->mangling && !(s.name[0] == '_' && (s.name[1] == 'Z' || s.name[1] == 'R'));
    uint32_t index = (uint32_t)r->t->scopes.n;
    if (!s.name || !VEC_PUSH(r->t->scopes, s))
        return false;
    struct range_sink sink = {r->t, index, tag == DW_TAG_subprogram ? 0 : depth, tag != DW_TAG_subprogram, false};
    if (a->has_low && a->has_high) {
        uint64_t hi = a->high_is_length ? a->low + a->high : a->high;
        return sink_range(&sink, a->low, hi & 0xffffffffu);
    }
    if (a->has_ranges)
        return read_ranges(r, a->ranges, &sink);
    return true;
}

/* Only these can contain code scopes; types, variables and parameters are skipped whole. */
static bool descends(uint16_t tag)
{
    return tag == DW_TAG_compile_unit || tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_lexical_block || tag == DW_TAG_partial_unit;
}

static int raw_unit(struct raw_dwarf *d, struct sym_table *stage, struct strpool *pool, uint32_t cu, uint64_t hdr,
                    struct raw_unit_info *info)
{
    struct scope_reader r = {.t = stage, .pool = pool, .cu = cu};
    memset(info, 0, sizeof *info);
    if (!unit_open(d, hdr, &r.u)) {
        unit_close(&r.u);
        return RAW_UNSUPPORTED;
    }
    struct cur c = {d->sec[SEC_INFO] + first_die(&r.u), d->sec[SEC_INFO] + r.u.end, false};
    /* the tree as a stack: per open level, the scope its children hang under, their depth and
     * whether they are walked at all */
    struct level {
        int32_t parent;
        uint32_t depth;
        bool walk;
    } stack[256];
    int top = 0;
    stack[0] = (struct level){-1, 0, true};
    bool first = true, ok = true;
    while (ok && !c.bad && c.p < c.end && !r.unsupported) {
        uint64_t code = uleb(&c);
        if (code == 0) { /* the end of a level's children */
            if (top == 0)
                break;
            top--;
            continue;
        }
        const struct abbrev *ab = find_abbrev(&r.u.ab, code);
        if (!ab) {
            r.unsupported = true;
            break;
        }
        struct die_attrs a;
        read_attrs(&r, &c, ab, &a);
        const struct level *lv = &stack[top];
        if (first) { /* the unit's root */
            first = false;
            if (ab->tag != DW_TAG_compile_unit && ab->tag != DW_TAG_partial_unit) {
                r.unsupported = true;
                break;
            }
            info->language = a.language;
            info->has_stmt_list = a.has_stmt_list;
            info->stmt_list = a.stmt_list;
            info->comp_dir = a.comp_dir;
            info->name = a.name;
            info->low = a.low;
            info->has_low = a.has_low;
            r.mangling = dwarf_lang_mangles((unsigned)a.language);
            r.cu_base = a.has_low ? a.low : 0;
        }
        int32_t self = lv->parent;
        uint32_t child_depth = lv->depth;
        bool walk_children = lv->walk && descends(ab->tag);
        if (lv->walk && (ab->tag == DW_TAG_subprogram || (ab->tag == DW_TAG_inlined_subroutine && lv->parent >= 0))) {
            self = (int32_t)stage->scopes.n;
            ok = add_scope(&r, &a, ab->tag, lv->parent, lv->depth);
            child_depth = ab->tag == DW_TAG_subprogram ? 1 : lv->depth + 1;
        }
        if (!ab->children)
            continue;
        if (!walk_children && a.has_sibling && a.sibling > (uint64_t)(c.p - d->sec[SEC_INFO]) && a.sibling <= r.u.end) {
            c.p = d->sec[SEC_INFO] + a.sibling; /* jump over a type's or a variable's children */
            continue;
        }
        if (++top >= (int)(sizeof stack / sizeof stack[0])) {
            r.unsupported = true;
            break;
        }
        stack[top] = (struct level){self, child_depth, walk_children};
    }
    symt_offmap_free(&r.names);
    unit_close(&r.u);
    if (!ok)
        return RAW_NO_MEMORY;
    return r.unsupported || c.bad ? RAW_UNSUPPORTED : RAW_OK;
}

/* ---- the line program -------------------------------------------------------------------- */

/* libdwarf's test for a path that needs no directory before it ('/', or a drive letter). */
static bool full_path(const char *s)
{
    return s[0] == '/' || (((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && s[1] == ':');
}

/* A file's name composed as libdwarf's dwarf_srcfiles composes it (so that names match whichever
 * reader read a unit): the name alone when it is a full path; directory 0 is the compilation
 * directory; a full include directory goes before the name, a relative one after the
 * compilation directory. */
static const char *compose(struct strpool *pool, const char *comp_dir, const char *dir, bool dir_zero,
                           const char *name)
{
    if (full_path(name))
        return symt_intern(pool, name);
    const char *parts[3] = {NULL, NULL, name};
    if (dir_zero)
        parts[0] = comp_dir;
    else if (dir && full_path(dir))
        parts[1] = dir;
    else
        parts[0] = comp_dir, parts[1] = dir;
    size_t len = 1;
    for (int k = 0; k < 3; k++)
        len += parts[k] ? strlen(parts[k]) + 1 : 0;
    char *buf = malloc(len), *o = buf;
    if (!buf)
        return NULL;
    for (int k = 0; k < 3; k++) {
        if (!parts[k] || !parts[k][0])
            continue;
        size_t n = strlen(parts[k]);
        memcpy(o, parts[k], n);
        o += n;
        if (k < 2)
            *o++ = '/';
    }
    *o = '\0';
    const char *out = symt_intern(pool, buf);
    free(buf);
    return out;
}

struct entry_format {
    uint64_t content, form;
};

#define MAX_ENTRY_FORMATS 32

/* A DWARF 5 directory or file entry format list; false when it is not readable here. */
static bool entry_formats(struct cur *c, struct entry_format *f, unsigned *n)
{
    *n = (unsigned)fixed(c, 1);
    if (*n > MAX_ENTRY_FORMATS)
        return false;
    for (unsigned k = 0; k < *n; k++) {
        f[k].content = uleb(c);
        f[k].form = uleb(c);
        if (f[k].form > 0xffff)
            return false;
    }
    return !c->bad;
}

/* One DWARF 5 entry: its path and directory index. False: a form this reader leaves to libdwarf. */
static bool read_entry(const struct unit *u, struct cur *c, const struct entry_format *f, unsigned n,
                       const char **path, uint64_t *dir)
{
    *path = NULL;
    *dir = 0;
    for (unsigned k = 0; k < n; k++) {
        struct attr_spec spec = {0, (uint16_t)f[k].form, 0};
        struct val v = value(u, c, &spec);
        if (v.kind == V_UNSUPPORTED || c->bad)
            return false;
        if (f[k].content == DW_LNCT_path) {
            if (v.kind != V_STRING || !v.s)
                return false;
            *path = v.s;
        } else if (f[k].content == DW_LNCT_directory_index) {
            *dir = v.u;
        }
    }
    return *path != NULL;
}

/* The directory and file tables of a line program header (c after standard_opcode_lengths), into
 * files; false when they are not readable here. */
static bool line_files(const struct raw_dwarf *d, struct cur *c, uint16_t version, const char *comp_dir,
                       struct strpool *pool, struct cu_files *files)
{
    const char **dirs = NULL;
    size_t n_dirs = 0, cap_dirs = 0, cap_files = 0;
    bool ok = true;
    files->base = version >= 5 ? 0 : 1;
    if (version < 5) {
        for (const char *s; ok && (s = cstr(c)) != NULL && s[0];)
            ok = symt_vec_grow((void **)&dirs, &cap_dirs, n_dirs + 1, sizeof *dirs) && (dirs[n_dirs++] = s);
        for (const char *name; ok && (name = cstr(c)) != NULL && name[0];) {
            uint64_t dir = uleb(c);
            uleb(c); /* modification time */
            uleb(c); /* length */
            ok = !c->bad && dir <= n_dirs &&
                 symt_vec_grow((void **)&files->files, &cap_files, (size_t)files->n + 1, sizeof *files->files);
            const char *full = ok ? compose(pool, comp_dir, dir ? dirs[dir - 1] : NULL, dir == 0, name) : NULL;
            ok = ok && full;
            if (ok)
                files->files[files->n++] = full;
        }
    } else {
        struct unit u = {.d = d, .version = 5, .addr_size = 4};
        struct entry_format f[MAX_ENTRY_FORMATS];
        unsigned nf = 0;
        ok = entry_formats(c, f, &nf);
        uint64_t count = ok ? uleb(c) : 0;
        for (uint64_t k = 0; ok && k < count; k++) {
            const char *path;
            uint64_t unused;
            ok = read_entry(&u, c, f, nf, &path, &unused) &&
                 symt_vec_grow((void **)&dirs, &cap_dirs, n_dirs + 1, sizeof *dirs);
            if (ok)
                dirs[n_dirs++] = path;
        }
        ok = ok && entry_formats(c, f, &nf);
        count = ok ? uleb(c) : 0;
        for (uint64_t k = 0; ok && k < count; k++) {
            const char *path;
            uint64_t dir;
            /* libdwarf 20210528 finds directory n at its include-directory n - 1 slot, which for
             * DWARF 5 holds table entry n: entry 0 stands for the compilation directory */
            ok = read_entry(&u, c, f, nf, &path, &dir) && dir < n_dirs &&
                 symt_vec_grow((void **)&files->files, &cap_files, (size_t)files->n + 1, sizeof *files->files);
            const char *full = ok ? compose(pool, comp_dir, dir ? dirs[dir] : NULL, dir == 0, path) : NULL;
            ok = ok && full;
            if (ok)
                files->files[files->n++] = full;
        }
    }
    free(dirs);
    return ok && !c->bad;
}

static int raw_lines(struct raw_dwarf *d, struct sym_table *stage, struct strpool *pool, uint32_t cu, uint64_t off,
                     const char *comp_dir, struct cu_files *files)
{
    memset(files, 0, sizeof *files);
    if (!d->sec[SEC_LINE] || off >= d->len[SEC_LINE])
        return RAW_UNSUPPORTED;
    struct cur c = {d->sec[SEC_LINE] + off, d->sec[SEC_LINE] + d->len[SEC_LINE], false};
    uint64_t len = fixed(&c, 4);
    if (len >= 0xfffffff0u || len > (uint64_t)(c.end - c.p))
        return RAW_UNSUPPORTED;
    c.end = c.p + len;
    uint16_t version = (uint16_t)fixed(&c, 2);
    if (version < 2 || version > 5)
        return RAW_UNSUPPORTED;
    if (version == 5 && (fixed(&c, 1) != 4 || fixed(&c, 1) != 0)) /* address size, segment selector size */
        return RAW_UNSUPPORTED;
    uint64_t header_len = fixed(&c, 4);
    const uint8_t *program = c.p + (header_len < (uint64_t)(c.end - c.p) ? header_len : (uint64_t)(c.end - c.p));
    unsigned min_len = (unsigned)fixed(&c, 1);
    if (version >= 4 && fixed(&c, 1) != 1) /* maximum operations per instruction: VLIW only */
        return RAW_UNSUPPORTED;
    fixed(&c, 1); /* default_is_stmt: rows are kept whatever it says */
    int line_base = (int8_t)fixed(&c, 1);
    unsigned line_range = (unsigned)fixed(&c, 1), opcode_base = (unsigned)fixed(&c, 1);
    uint8_t lengths[256] = {0};
    for (unsigned i = 1; i < opcode_base; i++)
        lengths[i] = (uint8_t)fixed(&c, 1);
    if (c.bad || line_range == 0 || opcode_base == 0 || header_len > len)
        return RAW_UNSUPPORTED;
    struct cur head = {c.p, program, false};
    if (!line_files(d, &head, version, comp_dir, pool, files)) {
        free(files->files);
        memset(files, 0, sizeof *files);
        return RAW_UNSUPPORTED;
    }
    const char *const *names = files->files;
    long base = files->base, n_files = files->n;
    /* libdwarf 20210528 starts a DWARF 5 program's file register at 0, not 1 */
    const uint64_t first_file = version >= 5 ? 0 : 1;
    c.p = program;
    size_t rows0 = stage->rows.n, seqs0 = stage->seqs.n;
    uint32_t seq_start = (uint32_t)stage->rows.n;
    uint64_t addr = 0, file = first_file, discriminator = 0;
    int64_t line = 1;
    bool ok = true;
    while (ok && c.p < c.end && !c.bad) {
        unsigned op = (unsigned)fixed(&c, 1);
        bool emit = false, end_seq = false;
        if (op >= opcode_base) {
            unsigned adj = op - opcode_base;
            addr += (uint64_t)min_len * (adj / line_range);
            line += line_base + (int)(adj % line_range);
            emit = true;
        } else if (op == 0) {
            uint64_t n = uleb(&c);
            if (n == 0 || n > (uint64_t)(c.end - c.p)) {
                c.bad = true;
                break;
            }
            const uint8_t *next = c.p + n;
            switch (fixed(&c, 1)) {
            case DW_LNE_end_sequence:
                emit = end_seq = true;
                break;
            case DW_LNE_set_address:
                if (n != 5)
                    c.bad = true; /* a 4-byte address, or this reader is wrong about the file */
                addr = fixed(&c, 4);
                break;
            case DW_LNE_set_discriminator:
                discriminator = uleb(&c);
                break;
            default: /* DW_LNE_define_file and vendor opcodes: nothing a row needs */
                break;
            }
            c.p = next;
        } else {
            switch (op) {
            case DW_LNS_copy:
                emit = true;
                break;
            case DW_LNS_advance_pc:
                addr += (uint64_t)min_len * uleb(&c);
                break;
            case DW_LNS_advance_line:
                line += sleb(&c);
                break;
            case DW_LNS_set_file:
                file = uleb(&c);
                break;
            case DW_LNS_const_add_pc:
                addr += (uint64_t)min_len * ((255 - opcode_base) / line_range);
                break;
            case DW_LNS_fixed_advance_pc:
                addr += fixed(&c, 2);
                break;
            default: /* column, negate_stmt, basic_block, prologue/epilogue, isa and unknown ones */
                for (unsigned k = 0; k < lengths[op]; k++)
                    uleb(&c);
                break;
            }
        }
        if (!emit || c.bad)
            continue;
        addr &= 0xffffffffu;
        if (end_seq) {
            uint32_t first = seq_start, cnt = (uint32_t)stage->rows.n - seq_start;
            if (cnt && !(stage->rows.v[first].addr == 0 && addr < 0x100)) { /* discarded code */
                struct seq s = {stage->rows.v[first].addr, (uint32_t)addr, first, cnt, cu};
                ok = VEC_PUSH(stage->seqs, s);
            }
            seq_start = (uint32_t)stage->rows.n;
            addr = 0;
            file = first_file;
            line = 1;
        } else {
            long k = (long)file - base;
            struct row rw = {(uint32_t)addr, (uint32_t)line, k >= 0 && k < n_files ? names[k] : NULL,
                             (uint32_t)stage->rows.n, (uint32_t)discriminator};
            ok = VEC_PUSH(stage->rows, rw);
        }
        discriminator = 0;
    }
    if (!ok || c.bad) {
        stage->rows.n = rows0;
        stage->seqs.n = seqs0;
        free(files->files);
        memset(files, 0, sizeof *files);
        return ok ? RAW_UNSUPPORTED : RAW_NO_MEMORY;
    }
    stage->rows.n = seq_start; /* a sequence without an end row is not trusted */
    return RAW_OK;
}

/* ---- the unit index and the unit reader -------------------------------------------------- */

/* A unit range that lies in no allocated section (nor starts at a linker's tombstone, 0 or -1/-2)
 * is damage the fast reader cannot tell from data: libdwarf then reads the index and reports. */
static bool plausible(const struct sym_table *t, const struct unit_range *r)
{
    if (r->lo == 0 || r->lo >= 0xFFFFFFFEu || t->sections.n == 0)
        return true;
    for (size_t i = 0; i < t->sections.n; i++)
        if (r->lo >= t->sections.v[i].lo && r->hi <= t->sections.v[i].hi)
            return true;
    return false;
}

bool raw_index(struct raw_dwarf *d, struct sym_table *t, struct strpool *pool)
{
    for (uint64_t off = 0; off < d->len[SEC_INFO];) {
        struct scope_reader r = {.t = t, .pool = pool, .cu = (uint32_t)t->n_units};
        bool ok = unit_open(d, off, &r.u);
        struct cur c = {d->sec[SEC_INFO] + first_die(&r.u), d->sec[SEC_INFO] + r.u.end, false};
        const struct abbrev *ab = ok ? find_abbrev(&r.u.ab, uleb(&c)) : NULL;
        struct die_attrs a;
        if (ab)
            read_attrs(&r, &c, ab, &a);
        ok = ab && !c.bad && !r.unsupported && (ab->tag == DW_TAG_compile_unit || ab->tag == DW_TAG_partial_unit);
        const char *name = ok && a.name ? symt_intern(pool, a.name) : NULL;
        struct range_sink sink = {t, (uint32_t)t->n_units, 0, false, true};
        r.cu_base = ok && a.has_low ? a.low : 0;
        if (ok && a.has_ranges)
            ok = read_ranges(&r, a.ranges, &sink);
        else if (ok && a.has_low && a.has_high)
            ok = sink_range(&sink, a.low, (a.high_is_length ? a.low + a.high : a.high) & 0xffffffffu);
        for (size_t i = 0; ok && i < t->unit_ranges.n; i++)
            ok = t->unit_ranges.v[i].unit != t->n_units || plausible(t, &t->unit_ranges.v[i]);
        ok = ok && VEC_PUSH(t->cu_names, name) && VEC_PUSH(t->unit_hdrs, off);
        uint64_t next = r.u.end;
        unit_close(&r.u);
        if (!ok)
            return false;
        t->n_units++;
        off = next;
    }
    return true;
}

int raw_read(void *ctx, int worker, struct sym_table *stage, struct strpool *pool, const struct unit_ref *ref,
             struct cu_files *files)
{
    (void)worker; /* the section bytes are shared read-only */
    struct raw_dwarf *d = ctx;
    struct raw_unit_info info;
    int res = raw_unit(d, stage, pool, ref->id, ref->hdr, &info);
    if (res == RAW_OK && info.has_stmt_list)
        res = raw_lines(d, stage, pool, ref->id, info.stmt_list, info.comp_dir, files);
    return res == RAW_OK ? 1 : res == RAW_NO_MEMORY ? -1 : 0;
}

/* ---- the layout of what a variable points to --------------------------------------------- */

/* The DIE at .debug_info offset off inside u: its abbreviation and attributes, and where its
 * children (or its next sibling) begin. */
static const struct abbrev *die_at(struct scope_reader *r, uint64_t off, struct die_attrs *a, uint64_t *after)
{
    if (off < first_die(&r->u) || off >= r->u.end)
        return NULL;
    struct cur c = {r->u.d->sec[SEC_INFO] + off, r->u.d->sec[SEC_INFO] + r->u.end, false};
    const struct abbrev *ab = find_abbrev(&r->u.ab, uleb(&c));
    if (!ab)
        return NULL;
    read_attrs(r, &c, ab, a);
    *after = (uint64_t)(c.p - r->u.d->sec[SEC_INFO]);
    return c.bad ? NULL : ab;
}

/* Through typedefs and qualifiers; pointers counts the pointer types passed. */
static const struct abbrev *strip_type(struct scope_reader *r, uint64_t off, struct die_attrs *a, uint64_t *after,
                                       int *pointers)
{
    for (int hops = 0; hops < 16; hops++) {
        const struct abbrev *ab = die_at(r, off, a, after);
        if (!ab)
            return NULL;
        bool through = ab->tag == DW_TAG_typedef || ab->tag == DW_TAG_volatile_type || ab->tag == DW_TAG_const_type ||
                       ab->tag == DW_TAG_restrict_type || ab->tag == DW_TAG_atomic_type;
        if (ab->tag == DW_TAG_pointer_type)
            ++*pointers;
        else if (!through)
            return ab;
        if (!a->has_type)
            return NULL;
        off = a->type;
    }
    return NULL;
}

long raw_pointee_member(struct raw_dwarf *d, const char *var, const char *const *members, size_t n_members,
                        const char **found)
{
    for (uint64_t off = 0; off < d->len[SEC_INFO];) {
        struct scope_reader r = {0};
        if (!unit_open(d, off, &r.u)) {
            unit_close(&r.u);
            return -1;
        }
        long result = -1;
        struct cur c = {d->sec[SEC_INFO] + first_die(&r.u), d->sec[SEC_INFO] + r.u.end, false};
        while (result < 0 && !c.bad && c.p < c.end) { /* every DIE of the unit, in order */
            uint64_t code = uleb(&c);
            const struct abbrev *ab = code ? find_abbrev(&r.u.ab, code) : NULL;
            if (!code)
                continue;
            if (!ab)
                break;
            struct die_attrs a;
            read_attrs(&r, &c, ab, &a);
            if (ab->tag != DW_TAG_variable || !a.name || strcmp(a.name, var) != 0 || !a.has_type)
                continue;
            struct die_attrs t;
            uint64_t after;
            int pointers = 0;
            const struct abbrev *st = strip_type(&r, a.type, &t, &after, &pointers);
            if (!st || pointers != 1 || (st->tag != DW_TAG_structure_type && st->tag != DW_TAG_class_type) ||
                !st->children)
                break; /* not a pointer to a structure this unit defines */
            struct cur m = {d->sec[SEC_INFO] + after, d->sec[SEC_INFO] + r.u.end, false};
            for (int depth = 1; depth > 0 && !m.bad && m.p < m.end && result < 0;) { /* the members */
                uint64_t mc = uleb(&m);
                if (!mc) {
                    depth--;
                    continue;
                }
                const struct abbrev *mab = find_abbrev(&r.u.ab, mc);
                if (!mab)
                    break;
                struct die_attrs ma;
                read_attrs(&r, &m, mab, &ma);
                for (size_t k = 0; depth == 1 && mab->tag == DW_TAG_member && ma.name && ma.has_member_offset &&
                                   k < n_members; k++)
                    if (strcmp(ma.name, members[k]) == 0) {
                        result = (long)ma.member_offset;
                        *found = members[k];
                        break;
                    }
                depth += mab->children;
            }
            break;
        }
        uint64_t next = r.u.end;
        unit_close(&r.u);
        symt_offmap_free(&r.names);
        if (result >= 0)
            return result;
        off = next;
    }
    return -1;
}
