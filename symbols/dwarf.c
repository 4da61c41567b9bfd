/* DWARF (libdwarf): line tables, subprograms, inlined instances and their ranges, unit names. */
#include "readers.h"

#include <errno.h>
#include <fcntl.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- DWARF ------------------------------------------------------------------------------- */

/* A failed libdwarf call hands over an error object; with allocation tracking off (see
 * ldw_open) nothing else frees it. */
static void drop(Dwarf_Debug dbg, Dwarf_Error *err)
{
    if (*err) {
        dwarf_dealloc_error(dbg, *err);
        *err = NULL;
    }
}

struct cu_ctx {
    Dwarf_Debug dbg;
    struct strpool *pool;          /* this thread's strings */
    struct offmap names; /* abstract origin offset -> name: inline instances share them */
    struct sym_stage *t; /* the stage, or the index, being filled */
    const char **files; /* interned paths, indexed by file number - base */
    Dwarf_Signed n_files, base;
    Dwarf_Addr cu_base;
    Dwarf_Half version; /* of the unit: 5 keeps ranges in .debug_rnglists, older in .debug_ranges */
    bool mangling;      /* the unit's language mangles names (C++, Rust, D, ...) */
    uint32_t cu;
    bool failed;
    char damage[160]; /* the first error libdwarf reported on this pass, "" when none */
};

/* Keep the first error of a pass for the warning, and free it. */
static void damaged(struct cu_ctx *c, Dwarf_Error *err, const char *what)
{
    if (!c->damage[0])
        snprintf(c->damage, sizeof c->damage, "%s of unit %u: %s", what, (unsigned)c->cu,
                 *err ? dwarf_errmsg(*err) : "unreadable");
    drop(c->dbg, err);
}

/* A row's file: the unit's file fileno, whose names begin at first_name in the stage's files. */
static uint32_t file_index(const struct cu_ctx *c, Dwarf_Unsigned fileno, uint32_t first_name)
{
    Dwarf_Signed i = (Dwarf_Signed)fileno - c->base;
    if (i < 0 || i >= c->n_files)
        return 0;
    return first_name + (uint32_t)i;
}

static const char *die_name(struct cu_ctx *c, Dwarf_Die die, int depth);

/* The name of the DIE at a .debug_info offset, cached: thousands of inlined instances point at
 * the same few abstract origins. */
static const char *name_at(struct cu_ctx *c, Dwarf_Off off, int depth)
{
    const char *cached;
    if (symt_offmap_get(&c->names, off, &cached))
        return cached;
    Dwarf_Die target;
    Dwarf_Error err = NULL;
    const char *name = NULL;
    if (dwarf_offdie_b(c->dbg, off, 1, &target, &err) == DW_DLV_OK) {
        name = die_name(c, target, depth + 1);
        dwarf_dealloc_die(target);
    } else if (err) {
        dwarf_dealloc_error(c->dbg, err);
    }
    symt_offmap_put(&c->names, off, name); /* out of memory: only the cache is lost */
    return name;
}

/* A string attribute of a DIE, interned; NULL when absent. */
static const char *string_attr(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at)
{
    Dwarf_Attribute attr;
    Dwarf_Error err = NULL;
    char *str = NULL;
    const char *out = NULL;
    if (dwarf_attr(die, at, &attr, &err) != DW_DLV_OK) {
        drop(c->dbg, &err);
        return NULL;
    }
    if (dwarf_formstring(attr, &str, &err) == DW_DLV_OK)
        out = symt_intern(c->pool, str);
    drop(c->dbg, &err);
    dwarf_dealloc_attribute(attr);
    return out;
}

/* The name addr2line -f prints: the linkage name (C++, Rust) where there is one, else DW_AT_name;
 * both looked up through abstract_origin / specification links as well. */
static const char *die_name(struct cu_ctx *c, Dwarf_Die die, int depth)
{
    Dwarf_Error err = NULL;
    const char *linkage = string_attr(c, die, DW_AT_linkage_name);
    if (!linkage)
        linkage = string_attr(c, die, DW_AT_MIPS_linkage_name);
    if (linkage)
        return linkage;
    const char *plain = string_attr(c, die, DW_AT_name);
    if (depth > 3)
        return plain;
    static const Dwarf_Half links[] = {DW_AT_abstract_origin, DW_AT_specification};
    for (size_t i = 0; i < 2; i++) {
        Dwarf_Attribute attr;
        Dwarf_Off off;
        if (dwarf_attr(die, links[i], &attr, &err) != DW_DLV_OK) {
            drop(c->dbg, &err);
            continue;
        }
        int ok = dwarf_global_formref(attr, &off, &err);
        drop(c->dbg, &err);
        dwarf_dealloc_attribute(attr);
        const char *n = ok == DW_DLV_OK ? name_at(c, off, depth) : NULL;
        if (n)
            return n;
    }
    return plain;
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
    drop(c->dbg, &err);
    if (theform == DW_FORM_rnglistx)
        dwarf_formudata(attr, &value, &err);
    else if (dwarf_global_formref(attr, &off, &err) == DW_DLV_OK)
        value = off;
    drop(c->dbg, &err);
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
                                                  &err) != DW_DLV_OK) {
                drop(c->dbg, &err);
                break;
            }
            if (code == DW_RLE_end_of_list)
                break;
            if (code == DW_RLE_base_address || code == DW_RLE_base_addressx || unavailable)
                continue;
            if (c2 > c1)
                ok = fn(ctx, (uint32_t)c1, (uint32_t)c2);
        }
        dwarf_dealloc_rnglists_head(head);
    } else {
        drop(c->dbg, &err);
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
    drop(c->dbg, &err);
    return ok;
}

struct range_add {
    struct sym_stage *t;
    uint32_t scope, depth;
    bool inline_range;
};

static bool add_range(void *ctx, uint32_t lo, uint32_t hi)
{
    struct range_add *a = ctx;
    return symt_stage_add_range(a->t, a->scope, a->depth, a->inline_range, lo, hi);
}

/* What a scope DIE says about itself, read in one pass over its attributes (each dwarf_attr()
 * call would scan the abbreviation again). */
struct scope_attrs {
    const char *name, *linkage;
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
    if (dwarf_attrlist(die, &list, &n, &err) != DW_DLV_OK) {
        drop(c->dbg, &err);
        return;
    }
    for (Dwarf_Signed i = 0; i < n; i++) {
        Dwarf_Half at = 0, form = 0;
        Dwarf_Attribute a = list[i];
        bool keep = false;
        dwarf_whatattr(a, &at, &err);
        switch (at) {
        case DW_AT_name:
        case DW_AT_linkage_name:
        case DW_AT_MIPS_linkage_name: {
            char *str = NULL;
            if (dwarf_formstring(a, &str, &err) == DW_DLV_OK) {
                if (at == DW_AT_name)
                    sa->name = symt_intern(c->pool, str);
                else
                    sa->linkage = symt_intern(c->pool, str);
            }
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
    if (c->failed || dwarf_tag(die, &tag, &err) != DW_DLV_OK) {
        drop(c->dbg, &err);
        return;
    }
    int32_t self = parent;
    uint32_t child_depth = depth;
    if (tag == DW_TAG_subprogram || (tag == DW_TAG_inlined_subroutine && parent >= 0)) {
        struct scope_attrs sa;
        read_scope_attrs(c, die, &sa);
        /* linkage name first (addr2line -f), then what the origin says, then DW_AT_name */
        struct scope s = {sa.linkage, NULL, UINT32_MAX, 0, tag == DW_TAG_subprogram ? -1 : parent, c->cu,
                          sa.has_decl_file, false, UINT32_MAX};
        if (!s.name && sa.has_origin)
            s.name = name_at(c, sa.origin, 0);
        if (!s.name)
            s.name = sa.name;
        if (tag == DW_TAG_inlined_subroutine) {
            if (sa.has_call_file)
                s.call_fileno = (uint32_t)sa.call_file;
            if (sa.has_call_line)
                s.call_line = (uint32_t)sa.call_line;
        }
        if (!s.name)
            s.name = symt_intern(c->pool, "??");
        s.plain_name = c->mangling && !(s.name[0] == '_' && (s.name[1] == 'Z' || s.name[1] == 'R'));
        s.low = UINT32_MAX;
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
    if (dwarf_child(die, &child, &err) != DW_DLV_OK) {
        drop(c->dbg, &err);
        return;
    }
    for (;;) {
        /* Nested subprograms are not expected in C; lexical blocks pass their parent through. */
        walk(c, child, self, child_depth);
        Dwarf_Die next;
        int res = dwarf_siblingof_b(c->dbg, child, 1, &next, &err);
        dwarf_dealloc_die(child);
        if (res != DW_DLV_OK) {
            drop(c->dbg, &err);
            break;
        }
        child = next;
    }
}

/* The unit's file table as libdwarf composes the names (directory and file): c->files. */
static void load_cu_files(struct cu_ctx *c, Dwarf_Die cu)
{
    Dwarf_Error err = NULL;
    char **srcfiles = NULL;
    Dwarf_Signed n_src = 0;
    c->files = NULL;
    c->n_files = 0;
    c->base = 1;
    if (dwarf_srcfiles(cu, &srcfiles, &n_src, &err) == DW_DLV_OK) {
        c->files = calloc((size_t)n_src + 1, sizeof *c->files);
        for (Dwarf_Signed i = 0; c->files && i < n_src; i++) {
            c->files[i] = symt_intern(c->pool, srcfiles[i]);
            dwarf_dealloc(c->dbg, srcfiles[i], DW_DLA_STRING);
        }
        dwarf_dealloc(c->dbg, srcfiles, DW_DLA_LIST);
        c->n_files = c->files ? n_src : 0;
    } else {
        drop(c->dbg, &err);
    }
}

static void load_cu_lines(struct cu_ctx *c, Dwarf_Die cu)
{
    Dwarf_Error err = NULL;
    Dwarf_Unsigned version;
    Dwarf_Small table_count;
    Dwarf_Line_Context lc;
    load_cu_files(c, cu);
    int res = dwarf_srclines_b(cu, &version, &table_count, &lc, &err);
    if (res != DW_DLV_OK) {
        if (res == DW_DLV_ERROR)
            damaged(c, &err, "line table");
        return;
    }
    Dwarf_Signed base = 1, count = 0, end = 0;
    if (dwarf_srclines_files_indexes(lc, &base, &count, &end, &err) == DW_DLV_OK)
        c->base = base;
    drop(c->dbg, &err);
    Dwarf_Line *lines;
    Dwarf_Signed n = 0;
    uint32_t first_name = symt_stage_files(c->t, c->files, (size_t)c->n_files);
    if (!first_name) {
        c->failed = true;
        dwarf_srclines_dealloc_b(lc);
        return;
    }
    if (dwarf_srclines_from_linecontext(lc, &lines, &n, &err) == DW_DLV_OK) {
        uint32_t seq_start = (uint32_t)c->t->rows.n;
        for (Dwarf_Signed i = 0; i < n; i++) {
            Dwarf_Addr addr;
            Dwarf_Unsigned lineno = 0, fileno = 0;
            Dwarf_Bool end_seq = 0, prologue_end = 0, epilogue_begin = 0;
            Dwarf_Unsigned isa = 0, discriminator = 0;
            if (dwarf_lineaddr(lines[i], &addr, &err) != DW_DLV_OK) {
                drop(c->dbg, &err);
                continue;
            }
            dwarf_prologue_end_etc(lines[i], &prologue_end, &epilogue_begin, &isa, &discriminator, &err);
            drop(c->dbg, &err);
            dwarf_lineno(lines[i], &lineno, &err);
            drop(c->dbg, &err);
            dwarf_line_srcfileno(lines[i], &fileno, &err);
            drop(c->dbg, &err);
            dwarf_lineendsequence(lines[i], &end_seq, &err);
            drop(c->dbg, &err);
            if (end_seq) {
                uint32_t first = seq_start, cnt = (uint32_t)c->t->rows.n - seq_start;
                if (cnt && !(c->t->rows.v[first].addr == 0 && addr < 0x100)) { /* discarded code */
                    struct seq s = {.lo = c->t->rows.v[first].addr, .hi = (uint32_t)addr, .first = first, .n = cnt,
                                    .cu = c->cu};
                    if (!VEC_PUSH(c->t->seqs, s))
                        c->failed = true;
                }
                seq_start = (uint32_t)c->t->rows.n;
                continue;
            }
            struct row r = {(uint32_t)addr, (uint32_t)lineno, file_index(c, fileno, first_name), (uint32_t)discriminator};
            if (!VEC_PUSH(c->t->rows, r))
                c->failed = true;
        }
        c->t->rows.n = seq_start; /* a sequence without an end row is not trusted */
    } else {
        damaged(c, &err, "line rows");
    }
    dwarf_srclines_dealloc_b(lc);
}

/* Open a second view of the DWARF: each loader thread needs its own Dwarf_Debug. NO_ENTRY is a
 * file without DWARF; an error is a file whose DWARF libdwarf refuses (message in why). */
static int open_dwarf(int fd, Dwarf_Debug *dbg, char *why, size_t len)
{
    Dwarf_Error err = NULL;
    int res = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, &err);
    if (res == DW_DLV_ERROR) {
        snprintf(why, len, "%s", err ? dwarf_errmsg(err) : "unreadable");
        if (err)
            dwarf_dealloc_error(NULL, err);
    }
    return res;
}

struct unit_info {
    Dwarf_Off hdr, die; /* the unit's header and root DIE in .debug_info */
    Dwarf_Half version; /* 5 keeps ranges in .debug_rnglists */
};

/* The file's DWARF through libdwarf, and the units found by ldw_index(). */
struct ldw_reader {
    int fd;
    Dwarf_Debug dbg;
    struct unit_info *units; /* by header offset, from ldw_index() */
    size_t n_units;
};

struct ldw_reader *ldw_open(const char *path, bool *has_dwarf, char *why, size_t len)
{
    *has_dwarf = false;
    why[0] = '\0';
    /* Skip libdwarf's allocation-tracking tree: it costs a third of the load time, and we free
     * every object we are handed (dies, attributes, strings, line contexts, range lists). */
    dwarf_set_de_alloc_flag(0);
    struct ldw_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    char refused[160] = "";
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    int res = r->fd >= 0 ? open_dwarf(r->fd, &r->dbg, refused, sizeof refused) : DW_DLV_NO_ENTRY;
    if (res != DW_DLV_OK) {
        if (refused[0])
            snprintf(why, len, "libdwarf cannot read the DWARF (%s): functions from the ELF symbol table only",
                     refused);
        ldw_close(r);
        return NULL;
    }
    *has_dwarf = true;
    return r;
}

void ldw_close(struct ldw_reader *r)
{
    if (!r)
        return;
    Dwarf_Error err = NULL;
    if (r->dbg)
        dwarf_finish(r->dbg, &err);
    drop(NULL, &err);
    if (r->fd >= 0)
        close(r->fd);
    free(r->units);
    free(r);
}

/* The unit's root DIE, with what reading its scopes needs to know (version, language, base). */
static bool unit_begin(struct cu_ctx *c, const struct unit_info *u, uint32_t id, Dwarf_Die *cu)
{
    Dwarf_Error err = NULL;
    c->cu = id;
    if (dwarf_offdie_b(c->dbg, u->die, 1, cu, &err) != DW_DLV_OK) {
        damaged(c, &err, "root DIE");
        return false;
    }
    c->version = u->version;
    Dwarf_Unsigned lang = 0;
    if (dwarf_srclang(*cu, &lang, &err) != DW_DLV_OK)
        drop(c->dbg, &err);
    c->mangling = symt_lang_mangles((unsigned)lang);
    c->cu_base = 0;
    dwarf_lowpc(*cu, &c->cu_base, &err);
    drop(c->dbg, &err);
    return true;
}

struct unit_range_add {
    struct sym_stage *t;
    uint32_t unit;
};

static bool add_unit_range(void *ctx, uint32_t lo, uint32_t hi)
{
    struct unit_range_add *a = ctx;
    return VEC_PUSH(a->t->unit_ranges, ((struct unit_range){lo, hi, a->unit}));
}

/* One pass over the unit headers and root DIEs only: where each unit is, its name and the
 * addresses it covers. A unit that states no addresses gets no range (it is loaded at once). */
bool ldw_index(struct ldw_reader *r, struct sym_stage *t, struct strpool *pool)
{
    struct cu_ctx c = {.dbg = r->dbg, .t = t, .pool = pool};
    Dwarf_Error err = NULL;
    size_t cap = 0;
    Dwarf_Unsigned hdr = 0;
    for (;;) {
        Dwarf_Unsigned hdr_len, next_off, typeoff;
        Dwarf_Half version, addr_size, len_size, ext_size, cu_type;
        Dwarf_Sig8 sig;
        Dwarf_Off abbrev_off;
        int res = dwarf_next_cu_header_d(c.dbg, 1, &hdr_len, &version, &abbrev_off, &addr_size, &len_size, &ext_size,
                                         &sig, &typeoff, &next_off, &cu_type, &err);
        if (res == DW_DLV_ERROR)
            damaged(&c, &err, "header"); /* the units after a broken header are lost */
        if (res != DW_DLV_OK)
            break;
        if (!symt_vec_grow((void **)&r->units, &cap, r->n_units + 1, sizeof *r->units))
            return false;
        struct unit_info *u = &r->units[r->n_units];
        *u = (struct unit_info){hdr, 0, version};
        hdr = next_off;
        c.cu = (uint32_t)r->n_units++;
        Dwarf_Die cu;
        const char *name = NULL;
        if (dwarf_siblingof_b(c.dbg, NULL, 1, &cu, &err) != DW_DLV_OK) {
            damaged(&c, &err, "root DIE");
        } else {
            if (dwarf_dieoffset(cu, &u->die, &err) != DW_DLV_OK)
                damaged(&c, &err, "root DIE");
            char *cu_name = NULL;
            if (dwarf_diename(cu, &cu_name, &err) == DW_DLV_OK)
                name = symt_intern(pool, cu_name);
            drop(c.dbg, &err);
            struct scope_attrs sa;
            read_scope_attrs(&c, cu, &sa);
            struct unit_range_add a = {t, c.cu};
            bool ok = true;
            c.version = version;
            c.cu_base = sa.has_low ? sa.low : 0;
            if (sa.ranges)
                ok = ranges_of(&c, cu, sa.ranges, add_unit_range, &a);
            else if (sa.has_low && sa.has_high)
                ok = add_unit_range(&a, (uint32_t)sa.low,
                                    (uint32_t)(sa.high_is_length ? sa.low + sa.high : sa.high));
            if (sa.ranges)
                dwarf_dealloc_attribute(sa.ranges);
            dwarf_dealloc_die(cu);
            if (!ok)
                return false;
        }
        if (!VEC_PUSH(t->cu_names, name) || !VEC_PUSH(t->unit_hdrs, u->hdr))
            return false;
    }
    if (c.damage[0])
        snprintf(t->dwarf_error, sizeof t->dwarf_error, "damaged DWARF, some lines or names are missing (%s)",
                 c.damage);
    t->n_units = r->n_units;
    return true;
}

/* The unit whose header is at .debug_info offset hdr, or NULL. */
static const struct unit_info *unit_at(const struct ldw_reader *r, uint64_t hdr)
{
    size_t lo = 0, hi = r->n_units;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->units[mid].hdr == hdr)
            return &r->units[mid];
        if (r->units[mid].hdr < hdr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

struct libdwarf_job {
    struct ldw_reader *r;
    struct cu_ctx c; /* name cache and first damage */
};

/* One unit through libdwarf: lines and file table, then the DIE tree. */
static enum read_result libdwarf_read(void *ctx, int worker, struct sym_stage *stage, struct strpool *pool,
                                      const struct unit_ref *ref, struct cu_files *files)
{
    struct libdwarf_job *job = ctx;
    struct cu_ctx *c = &job->c;
    (void)worker; /* one: libdwarf 20210528 is not safe on two threads, even with two handles */
    c->t = stage;
    c->pool = pool;
    const struct unit_info *u = unit_at(job->r, ref->hdr);
    Dwarf_Die cu;
    c->cu = ref->id;
    if (!u) {
        if (!c->damage[0])
            snprintf(c->damage, sizeof c->damage, "no unit at .debug_info offset %llu", (unsigned long long)ref->hdr);
        return READ_LEFT;
    }
    if (!unit_begin(c, u, ref->id, &cu))
        return READ_LEFT;
    load_cu_lines(c, cu);
    *files = (struct cu_files){c->files, (long)c->n_files, (long)c->base};
    c->files = NULL;
    walk(c, cu, -1, 0);
    dwarf_dealloc_die(cu);
    return c->failed ? READ_NO_MEMORY : READ_OK;
}

bool ldw_load_units(struct ldw_reader *r, struct sym_stage *stage, struct strpool *pool, const struct unit_ref *refs,
                    size_t n)
{
    struct libdwarf_job job = {r, {.dbg = r->dbg}};
    struct unit_reader reader = {libdwarf_read, &job, 1};
    bool ok = symt_read_units(&reader, stage, NULL, pool, refs, n, NULL);
    symt_offmap_free(&job.c.names);
    if (job.c.damage[0])
        snprintf(stage->dwarf_error, sizeof stage->dwarf_error, "damaged DWARF, some lines or names are missing (%s)",
                 job.c.damage);
    return ok;
}
