/* Symbol tables from libelf and libdwarf, flattened into sorted arrays at load time. */
#include "symbols.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a block arena: results handed out stay put until sym_close() ------------------------- */

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

struct arena {
    struct arena_block *head;
    size_t bytes;
};

static void *arena_alloc(struct arena *a, size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    if (!a->head || a->head->used + n > a->head->cap) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        struct arena_block *b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
        a->bytes += sizeof *b + cap;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void arena_free(struct arena *a)
{
    while (a->head) {
        struct arena_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

/* ---- interned strings -------------------------------------------------------------------- */

struct strpool {
    struct arena arena;
    const char **slots; /* open addressing on the string's hash */
    size_t cap, used;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static const char *intern(struct strpool *p, const char *s)
{
    if (!s)
        return NULL;
    if (p->used * 2 >= p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        const char **slots = calloc(cap, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < p->cap; i++) {
            if (!p->slots[i])
                continue;
            size_t j = hash_str(p->slots[i]) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = p->slots[i];
        }
        free(p->slots);
        p->slots = slots;
        p->cap = cap;
    }
    size_t j = hash_str(s) & (p->cap - 1);
    while (p->slots[j]) {
        if (strcmp(p->slots[j], s) == 0)
            return p->slots[j];
        j = (j + 1) & (p->cap - 1);
    }
    size_t n = strlen(s) + 1;
    char *copy = arena_alloc(&p->arena, n);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    p->slots[j] = copy;
    p->used++;
    return copy;
}

/* ---- growable arrays --------------------------------------------------------------------- */

#define VEC(T)                                                                                                \
    struct {                                                                                                  \
        T *v;                                                                                                 \
        size_t n, cap;                                                                                        \
    }

static bool vec_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need)
        c *= 2;
    void *p = realloc(*v, c * elem);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

#define VEC_PUSH(vec, item)                                                                                   \
    (vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) ? ((vec).v[(vec).n++] = (item), true) \
                                                                          : false)

/* ---- the table --------------------------------------------------------------------------- */

struct func {
    uint32_t lo, hi;
    const char *name;
    uint32_t order;   /* index in the ELF symbol table */
    uint8_t is_func;  /* STT_FUNC (else STT_NOTYPE) */
};

struct row {
    uint32_t addr;
    uint32_t line;
    const char *file;
    uint32_t order; /* position in its line table: ties at one address keep table order */
    uint32_t discriminator;
};

struct seq {
    uint32_t lo, hi;    /* [lo, hi) */
    uint32_t first, n;  /* rows, sorted by address */
    uint32_t cu;        /* compilation unit, in .debug_info order */
};

struct scope {          /* a subprogram or an inlined instance */
    const char *name;
    const char *call_file;
    uint32_t call_fileno; /* DW_AT_call_file, resolved to call_file once the unit's files are known */
    uint32_t call_line;
    int32_t parent;     /* -1 for a subprogram */
    uint32_t cu;
    bool has_decl_file; /* assembler subprograms have none */
};

struct range {
    uint32_t lo, hi;
    uint32_t scope;
    uint32_t depth;
    uint32_t sub;       /* index of the subprogram range this one nests in (inline ranges) */
};

struct code_section {
    uint32_t lo, hi;
    uint8_t *bytes;
};

struct span {           /* an allocated section */
    uint32_t lo, hi;
};

struct cu_files {
    const char **files; /* indexed by file number - base */
    long n, base;
};

struct cache_slot {
    uint32_t addr;
    struct sym_location *loc;
};

struct sym_table {
    char warning[256];
    struct strpool strings;
    struct arena results;
    VEC(struct func) funcs;
    VEC(struct func) labels;   /* FUNC and NOTYPE symbols: addr2line's fallback names */
    VEC(struct span) sections;
    VEC(struct row) rows;
    VEC(struct seq) seqs;
    VEC(struct scope) scopes;
    VEC(struct range) subs;    /* subprogram ranges, sorted */
    VEC(struct range) inlines; /* inline ranges, grouped by subprogram range after sorting */
    uint32_t *sub_first;       /* per subprogram range: first inline range index */
    uint32_t *sub_max_hi;      /* running maximum of subs[0..i].hi: how far back to look */
    uint32_t *seq_max_hi;      /* the same for sequences */
    uint32_t *sub_count;
    VEC(struct code_section) code;
    VEC(const char *) cu_names;  /* DW_AT_name of each unit: addr2line's file when no line row */
    VEC(struct cu_files) cu_files; /* each unit's file table, for DW_AT_call_file */
    uint8_t *build_id;
    size_t build_id_len;
    struct cache_slot *cache;
    size_t cache_cap, cache_used;
};

static void set_err(char *err, size_t len, const char *fmt, const char *path, const char *detail)
{
    if (err && len)
        snprintf(err, len, fmt, path, detail);
}

/* ---- ELF --------------------------------------------------------------------------------- */

static int cmp_func(const void *a, const void *b)
{
    const struct func *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order); /* symbol table order */
}

static bool load_elf(struct sym_table *t, Elf *elf)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if ((sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
            struct span sp = {(uint32_t)sh.sh_addr, (uint32_t)(sh.sh_addr + sh.sh_size)};
            if (!VEC_PUSH(t->sections, sp))
                return false;
        }
        if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
            Elf_Data *d = elf_getdata(scn, NULL);
            struct code_section cs = {(uint32_t)sh.sh_addr, (uint32_t)(sh.sh_addr + sh.sh_size), NULL};
            if (d && d->d_buf && d->d_size == sh.sh_size) {
                cs.bytes = malloc(d->d_size);
                if (cs.bytes)
                    memcpy(cs.bytes, d->d_buf, d->d_size);
            }
            if (!VEC_PUSH(t->code, cs))
                return false;
        } else if (sh.sh_type == SHT_NOTE && !t->build_id) {
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t off = 0, name_off, desc_off;
            GElf_Nhdr nh;
            while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz) {
                    t->build_id = malloc(nh.n_descsz);
                    if (t->build_id) {
                        memcpy(t->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
                        t->build_id_len = nh.n_descsz;
                    }
                    break;
                }
            }
        } else if (sh.sh_type == SHT_SYMTAB) {
            Elf_Data *d = elf_getdata(scn, NULL);
            size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
            for (size_t i = 0; d && i < n; i++) {
                GElf_Sym s;
                if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
                    continue;
                int type = GELF_ST_TYPE(s.st_info);
                const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
                uint32_t lo = (uint32_t)s.st_value & ~1u; /* Thumb bit */
                if ((type == STT_FUNC || type == STT_NOTYPE) && name && name[0] && name[0] != '$') {
                    /* '$t', '$d' are ARM mapping symbols, never names */
                    struct func l = {lo, lo + (uint32_t)s.st_size, intern(&t->strings, name), (uint32_t)i,
                                     type == STT_FUNC};
                    if (!l.name || !VEC_PUSH(t->labels, l))
                        return false;
                }
                if (type != STT_FUNC)
                    continue;
                struct func f = {lo, lo + (uint32_t)(s.st_size ? s.st_size : 2), intern(&t->strings, name ? name : "??"),
                                 (uint32_t)i, 1};
                if (!f.name || !VEC_PUSH(t->funcs, f))
                    return false;
            }
        }
    }
    qsort(t->funcs.v, t->funcs.n, sizeof *t->funcs.v, cmp_func);
    qsort(t->labels.v, t->labels.n, sizeof *t->labels.v, cmp_func);
    /* drop aliases at the same address (keep the first, as nm -n lists them) */
    size_t k = 0;
    for (size_t i = 0; i < t->funcs.n; i++)
        if (k == 0 || t->funcs.v[i].lo != t->funcs.v[k - 1].lo)
            t->funcs.v[k++] = t->funcs.v[i];
    t->funcs.n = k;
    return true;
}

/* ---- DWARF ------------------------------------------------------------------------------- */

struct name_cache_slot {
    Dwarf_Off off;
    const char *name; /* NULL: not resolved (or no name) */
    bool used;
};

struct cu_ctx {
    Dwarf_Debug dbg;
    struct strpool *pool;          /* this thread's strings */
    struct name_cache_slot *names; /* abstract origin offset -> name: inline instances share them */
    size_t names_cap, names_used;
    struct sym_table *t;
    const char **files; /* interned paths, indexed by file number - base */
    Dwarf_Signed n_files, base;
    Dwarf_Addr cu_base;
    Dwarf_Half version; /* of the unit: 5 keeps ranges in .debug_rnglists, older in .debug_ranges */
    uint32_t cu;
    bool failed;
};

static const char *file_name(struct cu_ctx *c, Dwarf_Unsigned fileno)
{
    Dwarf_Signed i = (Dwarf_Signed)fileno - c->base;
    if (i < 0 || i >= c->n_files)
        return NULL;
    return c->files[i];
}

static const char *die_name(struct cu_ctx *c, Dwarf_Die die, int depth);

/* The name of the DIE at a .debug_info offset, cached: thousands of inlined instances point at
 * the same few abstract origins. */
static const char *name_at(struct cu_ctx *c, Dwarf_Off off, int depth)
{
    if (c->names_used * 2 >= c->names_cap) {
        size_t cap = c->names_cap ? c->names_cap * 2 : 1024;
        struct name_cache_slot *n = calloc(cap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < c->names_cap; i++) {
            if (!c->names[i].used)
                continue;
            size_t j = (size_t)(c->names[i].off * 0x9E3779B97F4A7C15ull) & (cap - 1);
            while (n[j].used)
                j = (j + 1) & (cap - 1);
            n[j] = c->names[i];
        }
        free(c->names);
        c->names = n;
        c->names_cap = cap;
    }
    size_t j = (size_t)(off * 0x9E3779B97F4A7C15ull) & (c->names_cap - 1);
    while (c->names[j].used) {
        if (c->names[j].off == off)
            return c->names[j].name;
        j = (j + 1) & (c->names_cap - 1);
    }
    Dwarf_Die target;
    Dwarf_Error err = NULL;
    const char *name = NULL;
    if (dwarf_offdie_b(c->dbg, off, 1, &target, &err) == DW_DLV_OK) {
        name = die_name(c, target, depth + 1);
        dwarf_dealloc_die(target);
    } else if (err) {
        dwarf_dealloc_error(c->dbg, err);
    }
    c->names[j] = (struct name_cache_slot){off, name, true};
    c->names_used++;
    return name;
}

/* DW_AT_name, following abstract_origin / specification links. */
static const char *die_name(struct cu_ctx *c, Dwarf_Die die, int depth)
{
    char *name = NULL;
    Dwarf_Error err = NULL;
    if (dwarf_diename(die, &name, &err) == DW_DLV_OK)
        return intern(c->pool, name);
    if (depth > 3)
        return NULL;
    static const Dwarf_Half links[] = {DW_AT_abstract_origin, DW_AT_specification};
    for (size_t i = 0; i < 2; i++) {
        Dwarf_Attribute attr;
        Dwarf_Off off;
        if (dwarf_attr(die, links[i], &attr, &err) != DW_DLV_OK)
            continue;
        int ok = dwarf_global_formref(attr, &off, &err);
        dwarf_dealloc_attribute(attr);
        const char *n = ok == DW_DLV_OK ? name_at(c, off, depth) : NULL;
        if (n)
            return n;
    }
    return NULL;
}

typedef bool (*range_fn)(void *ctx, uint32_t lo, uint32_t hi);

/* The ranges of a DW_AT_ranges attribute: DWARF 5 rnglists or DWARF 4 .debug_ranges. */
static bool ranges_of(struct cu_ctx *c, Dwarf_Die die, Dwarf_Attribute attr, range_fn fn, void *ctx)
{
    Dwarf_Error err = NULL;
    bool ok = true;
    Dwarf_Half theform = 0;
    Dwarf_Unsigned value = 0;
    Dwarf_Off off = 0;
    dwarf_whatform(attr, &theform, &err);
    if (theform == DW_FORM_rnglistx)
        dwarf_formudata(attr, &value, &err);
    else if (dwarf_global_formref(attr, &off, &err) == DW_DLV_OK)
        value = off;
    Dwarf_Rnglists_Head head = NULL;
    Dwarf_Unsigned count = 0, global_off = 0;
    /* a DWARF 4 unit's offset must not be looked up in .debug_rnglists, which DWARF 5 objects in
     * the same link may have brought */
    if (c->version >= 5 &&
        dwarf_rnglists_get_rle_head(attr, theform, value, &head, &count, &global_off, &err) == DW_DLV_OK) {
        for (Dwarf_Unsigned i = 0; i < count && ok; i++) {
            unsigned len = 0, code = 0;
            Dwarf_Unsigned raw1, raw2, c1, c2;
            Dwarf_Bool unavailable = 0;
            if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &unavailable, &c1, &c2,
                                                  &err) != DW_DLV_OK)
                break;
            if (code == DW_RLE_end_of_list)
                break;
            if (code == DW_RLE_base_address || code == DW_RLE_base_addressx || unavailable)
                continue;
            if (c2 > c1)
                ok = fn(ctx, (uint32_t)c1, (uint32_t)c2);
        }
        dwarf_dealloc_rnglists_head(head);
    } else {
        Dwarf_Ranges *r = NULL;
        Dwarf_Signed n = 0;
        Dwarf_Unsigned bytes = 0;
        Dwarf_Off real = 0;
        if (dwarf_get_ranges_b(c->dbg, value, die, &real, &r, &n, &bytes, &err) == DW_DLV_OK) {
            Dwarf_Addr base = c->cu_base;
            for (Dwarf_Signed i = 0; i < n && ok; i++) {
                if (r[i].dwr_type == DW_RANGES_END)
                    break;
                if (r[i].dwr_type == DW_RANGES_ADDRESS_SELECTION) {
                    base = r[i].dwr_addr2;
                    continue;
                }
                if (r[i].dwr_addr2 > r[i].dwr_addr1)
                    ok = fn(ctx, (uint32_t)(base + r[i].dwr_addr1), (uint32_t)(base + r[i].dwr_addr2));
            }
            dwarf_ranges_dealloc(c->dbg, r, n);
        }
    }
    return ok;
}

struct range_add {
    struct sym_table *t;
    uint32_t scope, depth;
    bool inline_range;
};

static bool add_range(void *ctx, uint32_t lo, uint32_t hi)
{
    struct range_add *a = ctx;
    if (lo == 0 && a->depth == 0 && hi < 0x100)
        return true; /* code discarded by the linker keeps debug info at address 0 */
    struct range r = {lo, hi, a->scope, a->depth, 0};
    return a->inline_range ? VEC_PUSH(a->t->inlines, r) : VEC_PUSH(a->t->subs, r);
}

/* What a scope DIE says about itself, read in one pass over its attributes (each dwarf_attr()
 * call would scan the abbreviation again). */
struct scope_attrs {
    const char *name;
    Dwarf_Off origin;
    bool has_origin, has_decl_file, has_call_file, has_call_line, has_low, has_high, high_is_length;
    Dwarf_Unsigned call_file, call_line;
    Dwarf_Addr low, high;
    Dwarf_Attribute ranges; /* owned: dealloc after use */
};

static bool attr_udata(Dwarf_Attribute a, Dwarf_Unsigned *out)
{
    Dwarf_Error err = NULL;
    if (dwarf_formudata(a, out, &err) == DW_DLV_OK)
        return true;
    if (err)
        dwarf_dealloc_error(NULL, err);
    err = NULL;
    Dwarf_Signed sv; /* DW_FORM_implicit_const */
    if (dwarf_formsdata(a, &sv, &err) == DW_DLV_OK && sv >= 0) {
        *out = (Dwarf_Unsigned)sv;
        return true;
    }
    if (err)
        dwarf_dealloc_error(NULL, err);
    return false;
}

static void read_scope_attrs(struct cu_ctx *c, Dwarf_Die die, struct scope_attrs *sa)
{
    Dwarf_Attribute *list = NULL;
    Dwarf_Signed n = 0;
    Dwarf_Error err = NULL;
    memset(sa, 0, sizeof *sa);
    if (dwarf_attrlist(die, &list, &n, &err) != DW_DLV_OK)
        return;
    for (Dwarf_Signed i = 0; i < n; i++) {
        Dwarf_Half at = 0, form = 0;
        Dwarf_Attribute a = list[i];
        bool keep = false;
        dwarf_whatattr(a, &at, &err);
        switch (at) {
        case DW_AT_name: {
            char *str = NULL;
            if (dwarf_formstring(a, &str, &err) == DW_DLV_OK)
                sa->name = intern(c->pool, str);
            break;
        }
        case DW_AT_abstract_origin:
        case DW_AT_specification:
            sa->has_origin = dwarf_global_formref(a, &sa->origin, &err) == DW_DLV_OK;
            break;
        case DW_AT_decl_file:
            sa->has_decl_file = true;
            break;
        case DW_AT_call_file:
            sa->has_call_file = attr_udata(a, &sa->call_file);
            break;
        case DW_AT_call_line:
            sa->has_call_line = attr_udata(a, &sa->call_line);
            break;
        case DW_AT_low_pc:
            sa->has_low = dwarf_formaddr(a, &sa->low, &err) == DW_DLV_OK;
            break;
        case DW_AT_high_pc:
            dwarf_whatform(a, &form, &err);
            if (form == DW_FORM_addr || form == DW_FORM_addrx || form == DW_FORM_GNU_addr_index) {
                sa->has_high = dwarf_formaddr(a, &sa->high, &err) == DW_DLV_OK;
            } else {
                Dwarf_Unsigned len;
                sa->has_high = sa->high_is_length = attr_udata(a, &len); /* high_pc as a length */
                sa->high = len;
            }
            break;
        case DW_AT_ranges:
            sa->ranges = a;
            keep = true;
            break;
        default:
            break;
        }
        if (err) {
            dwarf_dealloc_error(c->dbg, err);
            err = NULL;
        }
        if (!keep)
            dwarf_dealloc_attribute(a);
    }
    dwarf_dealloc(c->dbg, list, DW_DLA_LIST);
}

static void walk(struct cu_ctx *c, Dwarf_Die die, int32_t parent, uint32_t depth)
{
    Dwarf_Error err = NULL;
    Dwarf_Half tag;
    if (c->failed || dwarf_tag(die, &tag, &err) != DW_DLV_OK)
        return;
    int32_t self = parent;
    uint32_t child_depth = depth;
    if (tag == DW_TAG_subprogram || (tag == DW_TAG_inlined_subroutine && parent >= 0)) {
        struct scope_attrs sa;
        read_scope_attrs(c, die, &sa);
        struct scope s = {sa.name, NULL, UINT32_MAX, 0, tag == DW_TAG_subprogram ? -1 : parent, c->cu,
                          sa.has_decl_file};
        if (!s.name && sa.has_origin)
            s.name = name_at(c, sa.origin, 0);
        if (tag == DW_TAG_inlined_subroutine) {
            if (sa.has_call_file)
                s.call_fileno = (uint32_t)sa.call_file;
            if (sa.has_call_line)
                s.call_line = (uint32_t)sa.call_line;
        }
        if (!s.name)
            s.name = intern(c->pool, "??");
        uint32_t index = (uint32_t)c->t->scopes.n;
        bool ok = VEC_PUSH(c->t->scopes, s);
        struct range_add a = {c->t, index, tag == DW_TAG_subprogram ? 0 : depth, tag != DW_TAG_subprogram};
        if (ok && sa.has_low && sa.has_high) {
            Dwarf_Addr hi = sa.high_is_length ? sa.low + sa.high : sa.high;
            ok = hi > sa.low ? add_range(&a, (uint32_t)sa.low, (uint32_t)hi) : true;
        } else if (ok && sa.ranges) {
            ok = ranges_of(c, die, sa.ranges, add_range, &a);
        }
        if (sa.ranges)
            dwarf_dealloc_attribute(sa.ranges);
        if (!ok) {
            c->failed = true;
            return;
        }
        self = (int32_t)index;
        child_depth = tag == DW_TAG_subprogram ? 1 : depth + 1;
    }
    /* only these can contain code scopes; types, variables and parameters are skipped whole */
    if (tag != DW_TAG_compile_unit && tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
        tag != DW_TAG_lexical_block && tag != DW_TAG_partial_unit)
        return;
    Dwarf_Die child;
    if (dwarf_child(die, &child, &err) != DW_DLV_OK)
        return;
    for (;;) {
        /* Nested subprograms are not expected in C; lexical blocks pass their parent through. */
        walk(c, child, self, child_depth);
        Dwarf_Die next;
        int res = dwarf_siblingof_b(c->dbg, child, 1, &next, &err);
        dwarf_dealloc_die(child);
        if (res != DW_DLV_OK)
            break;
        child = next;
    }
}

static void load_cu_lines(struct cu_ctx *c, Dwarf_Die cu)
{
    Dwarf_Error err = NULL;
    Dwarf_Unsigned version;
    Dwarf_Small table_count;
    Dwarf_Line_Context lc;
    char **srcfiles = NULL;
    Dwarf_Signed n_src = 0;
    c->files = NULL;
    c->n_files = 0;
    c->base = 1;
    if (dwarf_srcfiles(cu, &srcfiles, &n_src, &err) == DW_DLV_OK) {
        c->files = calloc((size_t)n_src + 1, sizeof *c->files);
        for (Dwarf_Signed i = 0; c->files && i < n_src; i++) {
            c->files[i] = intern(c->pool, srcfiles[i]);
            dwarf_dealloc(c->dbg, srcfiles[i], DW_DLA_STRING);
        }
        dwarf_dealloc(c->dbg, srcfiles, DW_DLA_LIST);
        c->n_files = c->files ? n_src : 0;
    }
    if (dwarf_srclines_b(cu, &version, &table_count, &lc, &err) != DW_DLV_OK)
        return;
    Dwarf_Signed base = 1, count = 0, end = 0;
    if (dwarf_srclines_files_indexes(lc, &base, &count, &end, &err) == DW_DLV_OK)
        c->base = base;
    Dwarf_Line *lines;
    Dwarf_Signed n = 0;
    if (dwarf_srclines_from_linecontext(lc, &lines, &n, &err) == DW_DLV_OK) {
        uint32_t seq_start = (uint32_t)c->t->rows.n;
        for (Dwarf_Signed i = 0; i < n; i++) {
            Dwarf_Addr addr;
            Dwarf_Unsigned lineno = 0, fileno = 0;
            Dwarf_Bool end_seq = 0, prologue_end = 0, epilogue_begin = 0;
            Dwarf_Unsigned isa = 0, discriminator = 0;
            if (dwarf_lineaddr(lines[i], &addr, &err) != DW_DLV_OK)
                continue;
            dwarf_prologue_end_etc(lines[i], &prologue_end, &epilogue_begin, &isa, &discriminator, &err);
            dwarf_lineno(lines[i], &lineno, &err);
            dwarf_line_srcfileno(lines[i], &fileno, &err);
            dwarf_lineendsequence(lines[i], &end_seq, &err);
            if (end_seq) {
                uint32_t first = seq_start, cnt = (uint32_t)c->t->rows.n - seq_start;
                if (cnt && !(c->t->rows.v[first].addr == 0 && addr < 0x100)) { /* discarded code */
                    struct seq s = {c->t->rows.v[first].addr, (uint32_t)addr, first, cnt, c->cu};
                    if (!VEC_PUSH(c->t->seqs, s))
                        c->failed = true;
                }
                seq_start = (uint32_t)c->t->rows.n;
                continue;
            }
            struct row r = {(uint32_t)addr, (uint32_t)lineno, file_name(c, fileno), (uint32_t)c->t->rows.n,
                            (uint32_t)discriminator};
            if (!VEC_PUSH(c->t->rows, r))
                c->failed = true;
        }
        c->t->rows.n = seq_start; /* a sequence without an end row is not trusted */
    }
    dwarf_srclines_dealloc_b(lc);
}

/* Open a second view of the DWARF: each loader thread needs its own Dwarf_Debug. */
static bool open_dwarf(int fd, Dwarf_Debug *dbg)
{
    Dwarf_Error err = NULL;
    int res = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, &err);
    if (res == DW_DLV_ERROR && err)
        dwarf_dealloc_error(NULL, err);
    return res == DW_DLV_OK;
}

/* Visit every compilation unit; lines: read line tables (rows, sequences, file tables), else
 * read the DIE tree (scopes, ranges, unit names). */
static void each_cu(struct cu_ctx *c, bool lines)
{
    Dwarf_Error err = NULL;
    struct sym_table *t = c->t;
    for (;;) {
        Dwarf_Unsigned hdr_len, next_off, typeoff;
        Dwarf_Half version, addr_size, len_size, ext_size, cu_type;
        Dwarf_Sig8 sig;
        Dwarf_Off abbrev_off;
        if (dwarf_next_cu_header_d(c->dbg, 1, &hdr_len, &version, &abbrev_off, &addr_size, &len_size, &ext_size,
                                   &sig, &typeoff, &next_off, &cu_type, &err) != DW_DLV_OK)
            break;
        Dwarf_Die cu;
        if (dwarf_siblingof_b(c->dbg, NULL, 1, &cu, &err) != DW_DLV_OK) {
            if (lines)
                VEC_PUSH(t->cu_files, ((struct cu_files){NULL, 0, 1}));
            else
                VEC_PUSH(t->cu_names, NULL);
            c->cu++;
            continue;
        }
        c->version = version;
        c->cu_base = 0;
        dwarf_lowpc(cu, &c->cu_base, &err);
        if (lines) {
            load_cu_lines(c, cu);
            struct cu_files f = {c->files, c->n_files, c->base};
            if (!VEC_PUSH(t->cu_files, f)) {
                free(c->files);
                c->failed = true;
            }
            c->files = NULL;
        } else {
            char *cu_name = NULL;
            Dwarf_Error name_err = NULL;
            const char *name = dwarf_diename(cu, &cu_name, &name_err) == DW_DLV_OK ? intern(c->pool, cu_name) : NULL;
            if (!VEC_PUSH(t->cu_names, name))
                c->failed = true;
            walk(c, cu, -1, 0);
        }
        c->cu++;
        dwarf_dealloc_die(cu);
    }
    free(c->names);
    c->names = NULL;
}

static void *scope_thread(void *arg)
{
    each_cu(arg, false);
    return NULL;
}

/* Line tables on this thread, the DIE tree on another: each has its own libdwarf handle and
 * string pool; strings are merged into the table's pool afterwards. */
static bool load_dwarf(struct sym_table *t, const char *path, bool *has_dwarf)
{
    *has_dwarf = false;
    /* Skip libdwarf's allocation-tracking tree: it costs a third of the load time, and we free
     * every object we are handed (dies, attributes, strings, line contexts, range lists). */
    dwarf_set_de_alloc_flag(0);
    int fd_lines = open(path, O_RDONLY), fd_scopes = open(path, O_RDONLY);
    Dwarf_Debug dbg_lines = NULL, dbg_scopes = NULL;
    bool ok = true;
    if (fd_lines >= 0 && fd_scopes >= 0 && open_dwarf(fd_lines, &dbg_lines) && open_dwarf(fd_scopes, &dbg_scopes)) {
        *has_dwarf = true;
        struct strpool scope_strings = {0};
        struct cu_ctx lines = {.dbg = dbg_lines, .t = t, .pool = &t->strings};
        struct cu_ctx scopes = {.dbg = dbg_scopes, .t = t, .pool = &scope_strings};
        pthread_t th;
        bool threaded = pthread_create(&th, NULL, scope_thread, &scopes) == 0;
        each_cu(&lines, true);
        if (threaded)
            pthread_join(th, NULL);
        else
            each_cu(&scopes, false);
        ok = !lines.failed && !scopes.failed;
        /* one pool, so equal strings are equal pointers; then call sites get their file names */
        for (size_t i = 0; i < t->scopes.n; i++) {
            struct scope *sc = &t->scopes.v[i];
            sc->name = intern(&t->strings, sc->name);
            if (sc->call_fileno != UINT32_MAX && sc->cu < t->cu_files.n) {
                const struct cu_files *f = &t->cu_files.v[sc->cu];
                long k = (long)sc->call_fileno - f->base;
                sc->call_file = f->files && k >= 0 && k < f->n ? f->files[k] : NULL;
            }
        }
        for (size_t i = 0; i < t->cu_names.n; i++)
            t->cu_names.v[i] = intern(&t->strings, t->cu_names.v[i]);
        arena_free(&scope_strings.arena);
        free(scope_strings.slots);
    }
    Dwarf_Error err = NULL;
    if (dbg_lines)
        dwarf_finish(dbg_lines, &err);
    if (dbg_scopes)
        dwarf_finish(dbg_scopes, &err);
    if (fd_lines >= 0)
        close(fd_lines);
    if (fd_scopes >= 0)
        close(fd_scopes);
    return ok;
}

/* ---- indexes ----------------------------------------------------------------------------- */

static int cmp_row_in_seq(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

static int cmp_seq(const void *a, const void *b)
{
    const struct seq *x = a, *y = b;
    return x->lo < y->lo ? -1 : (x->lo > y->lo);
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    return x->depth < y->depth ? -1 : (x->depth > y->depth);
}

/* Index of the last element whose uint32_t key (at byte offset `key`) is <= addr, or -1. The
 * array is sorted by that key. */
static long last_le(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr)
{
    const unsigned char *base = arr;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t v;
        memcpy(&v, base + mid * elem + key, sizeof v);
        if (v <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

#define LAST_LE(arr, n, addr, field) last_le((arr), (n), sizeof *(arr), offsetof(__typeof__(*(arr)), field), (addr))

static bool build_indexes(struct sym_table *t)
{
    /* rows: sort within each sequence (ties keep table order), then sequences by start */
    for (size_t i = 0; i < t->seqs.n; i++) {
        struct seq *s = &t->seqs.v[i];
        qsort(t->rows.v + s->first, s->n, sizeof *t->rows.v, cmp_row_in_seq);
    }
    qsort(t->seqs.v, t->seqs.n, sizeof *t->seqs.v, cmp_seq);
    qsort(t->subs.v, t->subs.n, sizeof *t->subs.v, cmp_range);
    qsort(t->inlines.v, t->inlines.n, sizeof *t->inlines.v, cmp_range);
    /* give each subprogram range the inline ranges that lie inside it */
    t->sub_first = calloc(t->subs.n + 1, sizeof *t->sub_first);
    t->sub_count = calloc(t->subs.n + 1, sizeof *t->sub_count);
    if (!t->sub_first || !t->sub_count)
        return false;
    struct range *grouped = malloc((t->inlines.n + 1) * sizeof *grouped);
    if (!grouped)
        return false;
    size_t k = 0;
    for (size_t s = 0; s < t->subs.n; s++) {
        const struct range *sub = &t->subs.v[s];
        t->sub_first[s] = (uint32_t)k;
        long i = LAST_LE(t->inlines.v, t->inlines.n, sub->lo, lo) + 1;
        while (i > 0 && t->inlines.v[i - 1].lo >= sub->lo)
            i--;
        for (size_t j = (size_t)i; j < t->inlines.n && t->inlines.v[j].lo < sub->hi; j++) {
            const struct range *r = &t->inlines.v[j];
            /* an inline range belongs to the subprogram whose scope is its root */
            uint32_t root = r->scope;
            while (t->scopes.v[root].parent >= 0)
                root = (uint32_t)t->scopes.v[root].parent;
            if (root == sub->scope && r->hi <= sub->hi) {
                grouped[k] = *r;
                grouped[k].sub = (uint32_t)s;
                k++;
            }
        }
        t->sub_count[s] = (uint32_t)k - t->sub_first[s];
    }
    free(t->inlines.v);
    t->inlines.v = grouped;
    t->inlines.n = k;
    t->inlines.cap = t->inlines.n + 1;
    t->sub_max_hi = malloc((t->subs.n + 1) * sizeof *t->sub_max_hi);
    t->seq_max_hi = malloc((t->seqs.n + 1) * sizeof *t->seq_max_hi);
    if (!t->sub_max_hi || !t->seq_max_hi)
        return false;
    for (size_t i = 0; i < t->subs.n; i++)
        t->sub_max_hi[i] = i && t->sub_max_hi[i - 1] > t->subs.v[i].hi ? t->sub_max_hi[i - 1] : t->subs.v[i].hi;
    for (size_t i = 0; i < t->seqs.n; i++)
        t->seq_max_hi[i] = i && t->seq_max_hi[i - 1] > t->seqs.v[i].hi ? t->seq_max_hi[i - 1] : t->seqs.v[i].hi;
    return true;
}

/* ---- public API -------------------------------------------------------------------------- */

struct sym_table *sym_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        set_err(err, errlen, "cannot open ELF '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        set_err(err, errlen, "%s: %s", path, "libelf is too old");
        return NULL;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        if (elf)
            elf_end(elf);
        close(fd);
        set_err(err, errlen, "'%s' is not an ELF file%s", path, "");
        return NULL;
    }
    if (eh.e_machine != EM_ARM || gelf_getclass(elf) != ELFCLASS32) {
        char detail[64];
        snprintf(detail, sizeof detail, " (e_machine %u), not a 32-bit ARM one", (unsigned)eh.e_machine);
        elf_end(elf);
        close(fd);
        set_err(err, errlen, "'%s' is an ELF for another machine%s", path, detail);
        return NULL;
    }
    struct sym_table *t = calloc(1, sizeof *t);
    bool has_dwarf = false;
    bool ok = t && load_elf(t, elf);
    elf_end(elf);
    ok = ok && load_dwarf(t, path, &has_dwarf) && build_indexes(t);
    close(fd);
    if (!ok) {
        sym_close(t);
        set_err(err, errlen, "%s: %s", path, "out of memory while loading symbols");
        return NULL;
    }
    if (t->funcs.n == 0 && !has_dwarf)
        snprintf(t->warning, sizeof t->warning, "%s has no symbols and no DWARF: addresses stay raw", path);
    else if (!has_dwarf)
        snprintf(t->warning, sizeof t->warning, "%s has no DWARF: functions only, no lines or inline chains", path);
    else if (t->funcs.n == 0)
        snprintf(t->warning, sizeof t->warning, "%s has no symbol table: names come from DWARF only", path);
    return t;
}

void sym_close(struct sym_table *t)
{
    if (!t)
        return;
    arena_free(&t->strings.arena);
    free(t->strings.slots);
    arena_free(&t->results);
    free(t->funcs.v);
    free(t->labels.v);
    free(t->sections.v);
    free(t->rows.v);
    free(t->seqs.v);
    free(t->scopes.v);
    free(t->subs.v);
    free(t->inlines.v);
    free(t->cu_names.v);
    for (size_t i = 0; i < t->cu_files.n; i++)
        free(t->cu_files.v[i].files);
    free(t->cu_files.v);
    free(t->sub_first);
    free(t->sub_max_hi);
    free(t->seq_max_hi);
    free(t->sub_count);
    for (size_t i = 0; i < t->code.n; i++)
        free(t->code.v[i].bytes);
    free(t->code.v);
    free(t->build_id);
    free(t->cache);
    free(t);
}

const char *sym_warning(const struct sym_table *t)
{
    return t->warning;
}

/* The line row for addr. Only sequences of compilation unit `cu` count when cu >= 0; otherwise
 * the first unit (in .debug_info order) whose sequence covers addr, as binutils searches. */
static const struct row *line_for(const struct sym_table *t, uint32_t addr, long cu)
{
    const struct seq *best = NULL;
    for (long s = LAST_LE(t->seqs.v, t->seqs.n, addr, lo); s >= 0 && t->seq_max_hi[s] > addr; s--) {
        const struct seq *q = &t->seqs.v[s];
        if (addr >= q->hi || (cu >= 0 && q->cu != (uint32_t)cu))
            continue;
        if (!best || q->cu < best->cu)
            best = q;
    }
    if (!best)
        return NULL;
    long r = LAST_LE(t->rows.v + best->first, best->n, addr, addr);
    return r >= 0 ? &t->rows.v[best->first + (size_t)r] : NULL;
}

/* Is symbol c a better name for addr than the current best b? binutils' rule (elf.c better_fit):
 * the nearest start wins; at the same start, when b does not reach addr the larger one wins;
 * when both cover addr, a function beats a non-function, then the smaller one wins; otherwise
 * the first in the symbol table stays. */
static bool better_fit(const struct func *b, const struct func *c, uint32_t addr)
{
    if (!b || c->lo > b->lo)
        return true;
    if (c->lo < b->lo)
        return false;
    uint32_t bsize = b->hi - b->lo, csize = c->hi - c->lo;
    if (b->hi <= addr)
        return csize > bsize;
    if (c->hi <= addr)
        return false;
    if (b->is_func != c->is_func)
        return c->is_func;
    return csize < bsize;
}

/* The symbol addr2line names for addr when DWARF has no function there: the best fit among the
 * symbols at the nearest start at or before addr, in the same section. */
static const struct func *func_before(const struct sym_table *t, uint32_t addr)
{
    long i = LAST_LE(t->labels.v, t->labels.n, addr, lo);
    if (i < 0)
        return NULL;
    uint32_t start = t->labels.v[i].lo;
    bool same_section = false;
    for (size_t k = 0; k < t->sections.n && !same_section; k++) {
        const struct span *c = &t->sections.v[k];
        same_section = addr >= c->lo && addr < c->hi && start >= c->lo;
    }
    if (!same_section)
        return NULL;
    while (i > 0 && t->labels.v[i - 1].lo == start)
        i--;
    const struct func *best = NULL;
    for (size_t k = (size_t)i; k < t->labels.n && t->labels.v[k].lo == start; k++)
        if (better_fit(best, &t->labels.v[k], addr))
            best = &t->labels.v[k];
    return best;
}

static const struct func *func_for(const struct sym_table *t, uint32_t addr)
{
    long i = LAST_LE(t->funcs.v, t->funcs.n, addr, lo);
    for (; i >= 0 && (size_t)i < t->funcs.n; i--) {
        const struct func *f = &t->funcs.v[i];
        if (addr < f->hi)
            return f;
        if (i > 0 && t->funcs.v[i - 1].hi <= f->lo)
            break;
    }
    return NULL;
}

/* The innermost scope containing addr, or -1. Among subprograms that cover addr (assembler
 * DWARF can overlap the next function by one byte: a Thumb low_pc), the first compilation unit
 * wins, then the smallest range, as in binutils. */
static long scope_for(const struct sym_table *t, uint32_t addr)
{
    long found = -1;
    for (long s = LAST_LE(t->subs.v, t->subs.n, addr, lo); s >= 0 && t->sub_max_hi[s] > addr; s--) {
        const struct range *r = &t->subs.v[s];
        if (addr >= r->hi)
            continue;
        if (found < 0) {
            found = s;
            continue;
        }
        const struct range *f = &t->subs.v[found];
        uint32_t rcu = t->scopes.v[r->scope].cu, fcu = t->scopes.v[f->scope].cu;
        if (rcu < fcu || (rcu == fcu && r->hi - r->lo < f->hi - f->lo))
            found = s;
    }
    if (found < 0)
        return -1;
    const struct range *sub = &t->subs.v[found];
    long best = (long)sub->scope;
    uint32_t best_depth = 0;
    const struct range *in = t->inlines.v + t->sub_first[found];
    for (uint32_t k = 0; k < t->sub_count[found] && in[k].lo <= addr; k++)
        if (addr < in[k].hi && in[k].depth > best_depth) {
            best = (long)in[k].scope;
            best_depth = in[k].depth;
        }
    return best;
}

static struct sym_location *resolve(struct sym_table *t, uint32_t addr)
{
    const struct func *fn = func_for(t, addr);
    long sc = scope_for(t, addr);
    const struct row *row = line_for(t, addr, sc >= 0 ? (long)t->scopes.v[sc].cu : -1);
    uint32_t n = 1;
    for (long s = sc; s >= 0 && t->scopes.v[s].parent >= 0; s = t->scopes.v[s].parent)
        n++;
    struct sym_location *loc = arena_alloc(&t->results, sizeof *loc + n * sizeof(struct sym_frame));
    if (!loc)
        return NULL;
    struct sym_frame *f = (struct sym_frame *)(loc + 1);
    loc->addr = addr;
    loc->n_frames = n;
    loc->frames = f;
    loc->symbol = fn ? fn->name : NULL;
    loc->symbol_start = fn ? fn->lo : 0;
    loc->known = row != NULL || sc >= 0;
    f[0].file = row && row->file ? row->file : "??";
    /* no line row inside a known function: addr2line names the function's own file */
    if (!row && sc >= 0 && t->scopes.v[sc].has_decl_file && t->scopes.v[sc].cu < t->cu_names.n &&
        t->cu_names.v[t->scopes.v[sc].cu])
        f[0].file = t->cu_names.v[t->scopes.v[sc].cu];
    f[0].line = row ? row->line : 0;
    loc->discriminator = row ? row->discriminator : 0;
    if (sc < 0) {
        const struct func *near = func_before(t, addr);
        f[0].function = near ? near->name : "??";
        loc->known |= near != NULL;
        return loc;
    }
    long s = sc;
    for (uint32_t i = 0; i < n; i++) {
        const struct scope *cur = &t->scopes.v[s];
        f[i].function = cur->name;
        if (i + 1 < n) {
            f[i + 1].file = cur->call_file ? cur->call_file : "??";
            f[i + 1].line = cur->call_line;
            s = cur->parent;
        }
    }
    return loc;
}

const struct sym_location *sym_lookup(struct sym_table *t, uint32_t addr)
{
    addr &= ~1u;
    if (t->cache_used * 2 >= t->cache_cap) {
        size_t cap = t->cache_cap ? t->cache_cap * 2 : 4096;
        struct cache_slot *c = calloc(cap, sizeof *c);
        if (!c)
            return resolve(t, addr);
        for (size_t i = 0; i < t->cache_cap; i++) {
            if (!t->cache[i].loc)
                continue;
            size_t j = (t->cache[i].addr * 2654435761u) & (cap - 1);
            while (c[j].loc)
                j = (j + 1) & (cap - 1);
            c[j] = t->cache[i];
        }
        free(t->cache);
        t->cache = c;
        t->cache_cap = cap;
    }
    size_t j = (addr * 2654435761u) & (t->cache_cap - 1);
    while (t->cache[j].loc) {
        if (t->cache[j].addr == addr)
            return t->cache[j].loc;
        j = (j + 1) & (t->cache_cap - 1);
    }
    struct sym_location *loc = resolve(t, addr);
    if (loc) {
        t->cache[j].addr = addr;
        t->cache[j].loc = loc;
        t->cache_used++;
    }
    return loc;
}

int sym_function_from(const struct sym_table *t, uint32_t addr, uint32_t *lo, uint32_t *hi)
{
    const struct func *f = func_for(t, addr);
    if (!f) {
        size_t next = (size_t)(LAST_LE(t->funcs.v, t->funcs.n, addr, lo) + 1);
        if (next >= t->funcs.n)
            return 0;
        f = &t->funcs.v[next];
    }
    *lo = f->lo;
    *hi = f->hi;
    return 1;
}

int sym_in_code(const struct sym_table *t, uint32_t addr)
{
    for (size_t i = 0; i < t->code.n; i++)
        if (addr >= t->code.v[i].lo && addr < t->code.v[i].hi)
            return 1;
    return 0;
}

size_t sym_read_code(const struct sym_table *t, uint32_t addr, uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < t->code.n; i++) {
        const struct code_section *c = &t->code.v[i];
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

void sym_get_stats(const struct sym_table *t, struct sym_stats *out)
{
    out->functions = t->funcs.n;
    out->line_rows = t->rows.n;
    out->scopes = t->scopes.n;
    out->cache_entries = t->cache_used;
    out->bytes = t->strings.arena.bytes + t->results.bytes + t->funcs.cap * sizeof *t->funcs.v +
                 t->rows.cap * sizeof *t->rows.v + t->seqs.cap * sizeof *t->seqs.v +
                 t->scopes.cap * sizeof *t->scopes.v + t->subs.cap * sizeof *t->subs.v +
                 t->inlines.cap * sizeof *t->inlines.v + t->cache_cap * sizeof *t->cache;
}
