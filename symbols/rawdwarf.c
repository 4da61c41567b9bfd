/* The common shapes of DWARF 2-5, read straight from the section bytes (this file: the sections,
 * abbreviations, attribute values and unit headers; rawscopes.c and rawlines.c the rest). libdwarf allocates an object per DIE, attribute and
 * line row; this reads the bytes in place, about ten times faster. Anything outside the common
 * shapes (DWARF64, split DWARF's indexed forms, relocatable objects, odd sizes) or any byte out
 * of place makes a unit "unsupported": nothing of it is kept and libdwarf reads it instead, with
 * its own diagnostics. */
#include "rawdwarf.h"

#include <fcntl.h>
#include <gelf.h>
#include <libdwarf/dwarf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const section_names[SEC_COUNT] = {".debug_info",     ".debug_abbrev",   ".debug_line",  ".debug_str",
                                                     ".debug_line_str", ".debug_rnglists", ".debug_ranges",
                                                     ".debug_aranges"};

/* The big sections (units, lines, range lists) are read from the file a few pages at a time, as
 * units are read: a profile touches a few units, and copying 15 MB of DWARF at open was most of
 * its time. pread, not mmap: a firmware rebuilt in place while the view runs must not fault the
 * reader. */
enum { LAZY_PAGE = 4096 };

struct lazy_section {
    uint8_t *buf;   /* the section's size; only read pages hold its bytes */
    _Atomic uint8_t *have; /* one byte per page: read yet? (set after its bytes are in buf) */
    uint64_t file_off;
};

struct raw_lazy {
    pthread_mutex_t lock;
    struct lazy_section s[SEC_COUNT];
    struct unit_copy {
        uint8_t *buf;
        size_t cap;
    } copy[2], /* each reader thread's copy of the unit it reads (raw_unit_copy) */
      stretch[3]; /* and of the line program it reads (raw_stretch_open); [2]: RAW_OPENER's */
};

static bool lazy_kind(int k)
{
    return k == SEC_INFO || k == SEC_LINE || k == SEC_RNGLISTS || k == SEC_RANGES;
}

/* Keep section k to be read on demand from the file. */
static bool lazy_keep(struct raw_dwarf *d, int k, const GElf_Shdr *sh)
{
    struct lazy_section *l = &d->lazy->s[k];
    size_t pages = (size_t)((sh->sh_size + LAZY_PAGE - 1) / LAZY_PAGE);
    l->buf = malloc(sh->sh_size ? (size_t)sh->sh_size : 1); /* pages never read into cost nothing */
    l->have = calloc(pages + 1, 1);
    if (!l->buf || !l->have)
        return false;
    l->file_off = sh->sh_offset;
    d->sec[k] = l->buf;
    d->len[k] = (size_t)sh->sh_size;
    return true;
}

bool raw_need(const struct raw_dwarf *d, int sec, uint64_t off, uint64_t len)
{
    struct lazy_section *l = &d->lazy->s[sec];
    if (!l->buf || off >= d->len[sec])
        return l->buf == NULL && d->sec[sec] != NULL; /* read whole at open */
    if (len > d->len[sec] - off)
        len = d->len[sec] - off;
    size_t first = (size_t)(off / LAZY_PAGE), last = (size_t)((off + len + LAZY_PAGE - 1) / LAZY_PAGE);
    /* read already (the usual case, asked for by both reader threads): no lock */
    size_t p = first;
    while (p < last && atomic_load_explicit(&l->have[p], memory_order_acquire))
        p++;
    if (p == last)
        return true;
    bool ok = true;
    pthread_mutex_lock(&d->lazy->lock);
    while (ok && p < last) {
        if (atomic_load_explicit(&l->have[p], memory_order_relaxed)) {
            p++;
            continue;
        }
        size_t q = p; /* a run of unread pages: one read */
        while (q < last && !atomic_load_explicit(&l->have[q], memory_order_relaxed))
            q++;
        size_t from = p * LAZY_PAGE, to = q * LAZY_PAGE < d->len[sec] ? q * LAZY_PAGE : d->len[sec];
        ssize_t got = pread(d->fd, l->buf + from, to - from, (off_t)(l->file_off + from));
        ok = got == (ssize_t)(to - from);
        for (size_t k = p; ok && k < q; k++)
            atomic_store_explicit(&l->have[k], 1, memory_order_release);
        p = q;
    }
    pthread_mutex_unlock(&d->lazy->lock);
    return ok;
}

/* A unit header's fields, c at its first byte and `rest` bytes of the section after its length
 * field: the unit's length, version, address size and abbreviations' offset. False when it is
 * not a header the fast reader takes (DWARF64, cut, an unknown version or unit type). */
static bool unit_header(struct cur *c, uint64_t rest, uint64_t *len, struct unit *u, uint64_t *abbrev_off)
{
    *len = cur_fixed(c, 4);
    if (*len >= 0xfffffff0u || *len > rest)
        return false;
    u->version = (uint16_t)cur_fixed(c, 2);
    if (u->version == 5) {
        uint8_t type = (uint8_t)cur_fixed(c, 1);
        if (type != DW_UT_compile && type != DW_UT_partial)
            return false;
        u->addr_size = (uint8_t)cur_fixed(c, 1);
        *abbrev_off = cur_fixed(c, 4);
    } else if (u->version >= 2 && u->version <= 4) {
        *abbrev_off = cur_fixed(c, 4);
        u->addr_size = (uint8_t)cur_fixed(c, 1);
    } else {
        return false;
    }
    return !c->bad && u->addr_size == 4;
}

enum { HEADER_BYTES = 12 }; /* a 32-bit unit header, DWARF 2 to 5 (11 bytes before DWARF 5) */

/* The header of the unit at .debug_info offset off into hdr (up to HEADER_BYTES, fewer at the
 * section's end): from the file when the section is read on demand, so that no page of its buffer
 * is filled for 12 bytes (a unit's DIEs go to its reader's own copy: a first report of a sample in
 * each of the bench ELF's 120 units filled 120 pages with a header each), nor a mapped one faulted
 * in (with 64 KB around it) when `mapped_too`; else from the section's bytes. Returns the bytes
 * read, 0 when none could be. */
static size_t header_bytes(const struct raw_dwarf *d, uint64_t off, uint8_t hdr[HEADER_BYTES], bool mapped_too)
{
    if (d->len[SEC_INFO] <= off)
        return 0;
    size_t n = d->len[SEC_INFO] - off < HEADER_BYTES ? (size_t)(d->len[SEC_INFO] - off) : HEADER_BYTES;
    const struct lazy_section *l = &d->lazy->s[SEC_INFO];
    if (l->buf || (mapped_too && d->map)) {
        uint64_t at = l->buf ? l->file_off : (uint64_t)(d->sec[SEC_INFO] - d->map);
        return pread(d->fd, hdr, n, (off_t)(at + off)) == (ssize_t)n ? n : 0;
    }
    memcpy(hdr, d->sec[SEC_INFO] + off, n);
    return n;
}

bool raw_unit_bounds(const struct raw_dwarf *d, uint64_t off, uint64_t *end)
{
    uint8_t hdr[HEADER_BYTES];
    if (header_bytes(d, off, hdr, true) < HEADER_BYTES) /* (a unit of 12 bytes at least, as before) */
        return false;
    size_t have = d->len[SEC_INFO] - off;
    struct cur c = {hdr, hdr + sizeof hdr, false};
    struct unit u;
    uint64_t len, abbrev_off;
    if (!unit_header(&c, have - 4, &len, &u, &abbrev_off))
        return false;
    *end = off + 4 + len;
    return true;
}

static struct raw_dwarf *open_as(const char *path, bool mapped);

struct raw_dwarf *raw_open(const char *path)
{
    return open_as(path, false);
}

struct raw_dwarf *raw_open_mapped(const char *path)
{
    return open_as(path, true);
}

/* Section k at sh as the mapping's bytes (a section libelf need not read, nor raw_need). */
static bool map_keep(struct raw_dwarf *d, int k, const GElf_Shdr *sh)
{
    if (sh->sh_offset > d->map_len || sh->sh_size > d->map_len - sh->sh_offset)
        return false;
    d->sec[k] = d->map + sh->sh_offset;
    d->len[k] = (size_t)sh->sh_size;
    return true;
}

static struct raw_dwarf *open_as(const char *path, bool mapped)
{
    struct raw_dwarf *d = calloc(1, sizeof *d);
    struct raw_lazy *lazy = d ? calloc(1, sizeof *lazy) : NULL;
    if (!lazy) {
        free(d);
        return NULL;
    }
    pthread_mutex_init(&lazy->lock, NULL);
    d->lazy = lazy;
    d->fd = open(path, O_RDONLY | O_CLOEXEC);
    elf_version(EV_CURRENT);
    d->elf = d->fd >= 0 ? elf_begin(d->fd, ELF_C_READ, NULL) : NULL;
    GElf_Ehdr eh;
    char *ident = d->elf ? elf_getident(d->elf, NULL) : NULL;
    size_t shstrndx;
    /* relocatable objects need their relocations applied: libdwarf does that */
    bool ok = ident && ident[EI_DATA] == ELFDATA2LSB && gelf_getehdr(d->elf, &eh) && eh.e_type != ET_REL &&
              elf_getshdrstrndx(d->elf, &shstrndx) == 0;
    struct stat st;
    ok = ok && fstat(d->fd, &st) == 0;
    if (ok && mapped && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, d->fd, 0);
        d->map = m != MAP_FAILED ? m : NULL; /* (else read as without) */
        d->map_len = d->map ? (size_t)st.st_size : 0;
    }
    for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(d->elf, scn)) != NULL;) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(d->elf, shstrndx, sh.sh_name) : NULL;
        for (int k = 0; name && k < SEC_COUNT; k++) {
            if (strcmp(name, section_names[k]) != 0 || sh.sh_type == SHT_NOBITS || d->sec[k])
                continue;
            if (d->map && !(sh.sh_flags & SHF_COMPRESSED)) {
                ok = map_keep(d, k, &sh);
                break;
            }
            if (lazy_kind(k) && !(sh.sh_flags & SHF_COMPRESSED)) {
                ok = sh.sh_offset <= (uint64_t)st.st_size && sh.sh_size <= (uint64_t)st.st_size - sh.sh_offset &&
                     lazy_keep(d, k, &sh);
                break;
            }
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
    if (d->map)
        munmap((void *)d->map, d->map_len);
    for (int k = 0; k < SEC_COUNT; k++) {
        free(d->lazy->s[k].buf);
        free((void *)d->lazy->s[k].have);
    }
    for (int w = 0; w < 3; w++) {
        if (w < 2)
            free(d->lazy->copy[w].buf);
        free(d->lazy->stretch[w].buf);
    }
    pthread_mutex_destroy(&d->lazy->lock);
    free(d->lazy);
    free(d);
}


bool raw_abbrevs_read(const struct raw_dwarf *d, uint64_t off, struct abbrevs *a)
{
    if (off >= d->len[SEC_ABBREV])
        return false;
    struct cur c = {d->sec[SEC_ABBREV] + off, d->sec[SEC_ABBREV] + d->len[SEC_ABBREV], false};
    a->dense = true;
    for (;;) {
        uint64_t code = cur_uleb(&c);
        if (c.bad)
            return false;
        if (code == 0)
            return true;
        struct abbrev ab = {code, (uint16_t)cur_uleb(&c), false, (uint32_t)a->n_specs, 0, -1};
        ab.children = cur_fixed(&c, 1) != 0;
        for (;;) {
            uint64_t at = cur_uleb(&c), form = cur_uleb(&c);
            int64_t implicit = form == DW_FORM_implicit_const ? cur_sleb(&c) : 0;
            if (c.bad || at > 0xffff || form > 0xffff)
                return false;
            if (at == 0 && form == 0)
                break;
            if (!symt_vec_grow((void **)&a->specs, &a->cap_specs, a->n_specs + 1, sizeof *a->specs))
                return false;
            a->specs[a->n_specs++] = (struct attr_spec){(uint16_t)at, (uint16_t)form, -1, implicit, 0};
            ab.n++;
        }
        if (!symt_vec_grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v))
            return false;
        a->dense &= code == a->n + 1;
        a->v[a->n++] = ab;
    }
}

const struct abbrev *raw_abbrev_find(const struct abbrevs *a, uint64_t code)
{
    if (a->dense)
        return code >= 1 && code <= a->n ? &a->v[code - 1] : NULL;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].code == code)
            return &a->v[i];
    return NULL;
}


const char *raw_str_at(const struct raw_dwarf *d, int sec, uint64_t off)
{
    if (!d->sec[sec] || off >= d->len[sec] || !memchr(d->sec[sec] + off, 0, d->len[sec] - off))
        return NULL;
    return (const char *)d->sec[sec] + off;
}

/* The size of a form whose values all have one (in this unit), else -1. */
static inline __attribute__((always_inline)) int fixed_size(const struct unit *u, uint16_t form)
{
    switch (form) {
    case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
        return 1;
    case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
        return 2;
    case DW_FORM_strx3: case DW_FORM_addrx3:
        return 3;
    case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
    case DW_FORM_sec_offset: case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
        return 4;
    case DW_FORM_addr:
        return u->addr_size;
    case DW_FORM_ref_addr:
        return u->version <= 2 ? u->addr_size : 4;
    case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
        return 8;
    case DW_FORM_data16:
        return 16;
    default:
        return -1;
    }
}

struct val raw_value(const struct unit *u, struct cur *c, const struct attr_spec *spec)
{
    struct val v = {V_UNSIGNED, 0, NULL, NULL};
    uint16_t form = spec->form;
    int size = fixed_size(u, form);
    if (size >= 0) {
        if (form == DW_FORM_addr)
            v.kind = V_ADDR;
        if (size == 4) /* the common sizes with a constant, for the compiler to unroll */
            v.u = cur_fixed(c, 4);
        else if (size == 1)
            v.u = cur_fixed(c, 1);
        else if (size <= 8)
            v.u = cur_fixed(c, (unsigned)size);
        else
            cur_skip(c, (uint64_t)size); /* data16: no use here */
    } else {
        switch (form) {
        case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx: case DW_FORM_rnglistx:
        case DW_FORM_loclistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
            v.u = cur_uleb(c);
            break;
        case DW_FORM_sdata:
            v.u = (uint64_t)cur_sleb(c);
            break;
        case DW_FORM_implicit_const:
            v.u = (uint64_t)spec->implicit;
            break;
        case DW_FORM_flag_present:
            v.u = 1;
            break;
        case DW_FORM_string:
            v.kind = V_STRING;
            v.s = cur_cstr(c);
            break;
        case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4: case DW_FORM_block: case DW_FORM_exprloc:
            v.u = form == DW_FORM_block1 ? cur_fixed(c, 1) : form == DW_FORM_block2 ? cur_fixed(c, 2)
                                         : form == DW_FORM_block4 ? cur_fixed(c, 4) : cur_uleb(c);
            v.block = c->p;
            cur_skip(c, v.u);
            v.kind = c->bad ? V_NONE : V_BLOCK;
            break;
        default: /* DW_FORM_indirect and anything unknown: the size is not known here */
            c->bad = true;
            v.kind = V_UNSUPPORTED;
            return v;
        }
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
        v.s = raw_str_at(u->d, SEC_STR, v.u);
        break;
    case DW_FORM_line_strp:
        v.kind = V_STRING;
        v.s = raw_str_at(u->d, SEC_LINE_STR, v.u);
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

void raw_skip_attrs(const struct unit *u, struct cur *c, const struct abbrev *ab)
{
    if (ab->fixed >= 0) { /* (most of the DIEs stepped over: parameters, variables, blocks) */
        cur_skip(c, (uint64_t)ab->fixed);
        return;
    }
    for (uint32_t i = 0; i < ab->n && !c->bad; i++) {
        const struct attr_spec *spec = &u->ab.specs[ab->first + i];
        int size = fixed_size(u, spec->form);
        if (size >= 0)
            cur_skip(c, (uint64_t)size);
        else /* LEB128s, strings and blocks: their bytes say their size (unknown forms: bad) */
            raw_value(u, c, spec);
    }
}

/* Each attribute's bytes in unit u when its form has one size there (a present flag and an
 * implicit constant take none), and each abbreviation's when all of its attributes have: the DIEs
 * stepped over (raw_skip_attrs) and the attributes a reader does not use are passed at once, where
 * each form was weighed. */
/* What the scope reader (rawscopes.c) takes of an attribute: RAW_USED, RAW_EXTENT. Worked out once
 * per abbreviation, where a switch on each attribute of each DIE cost the first report of a sample
 * in each of the bench ELF's 120 units 3.7M instructions. */
static uint8_t attr_role(uint16_t at)
{
    switch (at) {
    case DW_AT_low_pc: case DW_AT_high_pc: case DW_AT_ranges: case DW_AT_sibling:
        return RAW_USED | RAW_EXTENT;
    case DW_AT_name: case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name: case DW_AT_abstract_origin:
    case DW_AT_specification: case DW_AT_call_file: case DW_AT_call_line: case DW_AT_stmt_list:
    case DW_AT_language: case DW_AT_comp_dir: case DW_AT_type: case DW_AT_data_member_location:
        return RAW_USED;
    default:
        return 0;
    }
}

static void fixed_sizes(struct unit *u)
{
    for (size_t k = 0; k < u->ab.n; k++) {
        struct abbrev *ab = &u->ab.v[k];
        int64_t total = 0;
        for (uint32_t i = 0; i < ab->n; i++) {
            struct attr_spec *spec = &u->ab.specs[ab->first + i];
            int size = spec->form == DW_FORM_flag_present || spec->form == DW_FORM_implicit_const ? 0
                                                                                               : fixed_size(u, spec->form);
            spec->size = (int8_t)(size >= 0 && size <= INT8_MAX ? size : -1);
            spec->role = attr_role(spec->at);
            total = size >= 0 && total >= 0 && total + size <= INT32_MAX ? total + size : -1;
        }
        ab->fixed = (int32_t)total;
    }
}

bool raw_is_constant(uint16_t form)
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

bool raw_unit_open(const struct raw_dwarf *d, uint64_t off, struct unit *u)
{
    memset(u, 0, sizeof *u);
    u->d = d;
    u->start = off;
    uint8_t hdr[HEADER_BYTES]; /* (the header's bytes are read again with the unit's: raw_unit_copy, raw_need) */
    size_t got = header_bytes(d, off, hdr, false);
    if (!got)
        return false;
    struct cur c = {hdr, hdr + got, false};
    uint64_t have = d->len[SEC_INFO] - off, len, abbrev_off; /* (a cut length field sets c.bad) */
    if (!unit_header(&c, have > 4 ? have - 4 : 0, &len, u, &abbrev_off))
        return false;
    u->end = off + 4 + len;
    u->bytes = d->sec[SEC_INFO] + off;
    if (!raw_abbrevs_read(d, abbrev_off, &u->ab))
        return false;
    fixed_sizes(u);
    return true;
}

bool raw_read_at(const struct raw_dwarf *d, int sec, uint64_t off, void *out, size_t n)
{
    const struct lazy_section *l = &d->lazy->s[sec];
    if (!d->sec[sec] || off > d->len[sec] || d->len[sec] - off < n)
        return false;
    if (l->buf) /* (no page of the section's buffer filled for a few bytes) */
        return pread(d->fd, out, n, (off_t)(l->file_off + off)) == (ssize_t)n;
    memcpy(out, d->sec[sec] + off, n);
    return true;
}

bool raw_stretch_open(const struct raw_dwarf *d, int sec, int worker, uint64_t off, uint64_t len,
                      struct raw_stretch *s)
{
    const struct lazy_section *l = &d->lazy->s[sec];
    if (!d->sec[sec] || off > d->len[sec] || d->len[sec] - off < len)
        return false;
    *s = (struct raw_stretch){d->sec[sec] + off, off, len, len, sec};
    if (!l->buf) /* read whole at the open, or mapped */
        return true;
    struct unit_copy *cp = &d->lazy->stretch[worker == RAW_OPENER ? 2 : worker & 1];
    if (cp->cap < len) {
        uint8_t *buf = realloc(cp->buf, len ? len : 1);
        if (!buf)
            return false;
        cp->buf = buf;
        cp->cap = len;
    }
    s->bytes = cp->buf;
    s->got = 0;
    return true;
}

bool raw_stretch_need(const struct raw_dwarf *d, struct raw_stretch *s, uint64_t upto)
{
    upto = upto < s->len ? upto : s->len;
    if (upto <= s->got)
        return true;
    const struct lazy_section *l = &d->lazy->s[s->sec];
    ssize_t want = (ssize_t)(upto - s->got);
    if (pread(d->fd, (uint8_t *)s->bytes + s->got, (size_t)want, (off_t)(l->file_off + s->off + s->got)) != want)
        return false;
    s->got = upto;
    return true;
}

bool raw_unit_copy(const struct raw_dwarf *d, struct unit *u, int worker)
{
    const struct lazy_section *l = &d->lazy->s[SEC_INFO];
    size_t len = (size_t)(u->end - u->start);
    if (!l->buf) /* the section was read whole at the open */
        return true;
    struct unit_copy *cp = &d->lazy->copy[worker & 1];
    if (cp->cap < len) {
        uint8_t *buf = realloc(cp->buf, len);
        if (!buf)
            return false;
        cp->buf = buf;
        cp->cap = len;
    }
    if (pread(d->fd, cp->buf, len, (off_t)(l->file_off + u->start)) != (ssize_t)len)
        return false;
    u->bytes = cp->buf;
    return true;
}

void raw_unit_close(struct unit *u)
{
    free(u->ab.v);
    free(u->ab.specs);
}

uint64_t raw_first_die(const struct unit *u)
{
    return u->start + (u->version == 5 ? 12 : 11);
}

