/* The fast DWARF reader's DIE trees (rawdwarf.h): a unit's subprograms and inlined instances with
 * their ranges, the unit index, the unit reader, and the layout of what a variable points to. */
#include "rawdwarf.h"

#include <libdwarf/dwarf.h>
#include <stdlib.h>

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
    struct sym_stage *t;
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

/* raw_value's answer for the forms most used values have (references, addresses, lengths, line
 * numbers: 38,000 calls for the 6 units of the bench ELF that 100,000 addresses read), inline;
 * the others through raw_value. */
static inline struct val attr_value(const struct unit *u, struct cur *c, const struct attr_spec *spec)
{
    struct val v = {V_UNSIGNED, 0, NULL, NULL};
    switch (spec->size == 4 || spec->size == 1 ? spec->form : 0) {
    case DW_FORM_ref4:
        v.kind = V_REF;
        v.u = cur_fixed(c, 4) + u->start;
        return v;
    case DW_FORM_addr: /* (4 bytes: spec->size) */
        v.kind = V_ADDR;
        /* fall through */
    case DW_FORM_data4: case DW_FORM_sec_offset:
        v.u = cur_fixed(c, 4);
        return v;
    case DW_FORM_data1:
        v.u = cur_fixed(c, 1);
        return v;
    default:
        return raw_value(u, c, spec);
    }
}

/* Parse the DIE at c (its code already read: ab) and collect its attributes; with extent_only, only
 * those of RAW_EXTENT (the others stepped over; what they would set stays 0). */
static void read_attrs_of(struct scope_reader *r, struct cur *c, const struct abbrev *ab, struct die_attrs *a,
                          bool extent_only)
{
    memset(a, 0, sizeof *a);
    uint8_t wanted = extent_only ? RAW_EXTENT : RAW_USED;
    for (uint32_t i = 0; i < ab->n && !c->bad; i++) {
        const struct attr_spec *spec = &r->u.ab.specs[ab->first + i];
        if (spec->size >= 0 && !(spec->role & wanted)) {
            a->has_decl_file |= spec->at == DW_AT_decl_file; /* (lines, columns, flags, views: half of them) */
            cur_skip(c, (uint64_t)spec->size);
            continue;
        }
        struct val v = attr_value(&r->u, c, spec);
        if (extent_only && !(spec->role & RAW_EXTENT)) {
            r->unsupported |= v.kind == V_UNSUPPORTED; /* (stepped over: its size is all that counts) */
            continue;
        }
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
            a->has_high = v.kind == V_ADDR || raw_is_constant(spec->form);
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
                a->member_offset = cur_uleb(&e);
                a->has_member_offset = !e.bad;
            }
            break;
        default:
            break;
        }
    }
}

static void read_attrs(struct scope_reader *r, struct cur *c, const struct abbrev *ab, struct die_attrs *a)
{
    read_attrs_of(r, c, ab, a, false);
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

/* The unit's bytes at .debug_info offset off (inside it), and back. */
static const uint8_t *unit_at(const struct unit *u, uint64_t off)
{
    return u->bytes + (off - u->start);
}

static uint64_t unit_off(const struct unit *u, const uint8_t *p)
{
    return u->start + (uint64_t)(p - u->bytes);
}

/* The name of the DIE at a .debug_info offset inside this unit, cached: thousands of inlined
 * instances point at the same few abstract origins. Another unit's DIE: unsupported here. */
static const char *die_name_at(struct scope_reader *r, uint64_t off, int depth)
{
    if (off < raw_first_die(&r->u) || off >= r->u.end) {
        r->unsupported = true;
        return NULL;
    }
    const char *cached;
    if (symt_offmap_get(&r->names, off, &cached))
        return cached;
    struct cur c = {unit_at(&r->u, off), unit_at(&r->u, r->u.end), false};
    const struct abbrev *ab = raw_abbrev_find(&r->u.ab, cur_uleb(&c));
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
    struct sym_stage *t;
    uint32_t scope, depth; /* a scope's range; for a unit's range, scope is the unit */
    bool inline_range, unit;
    const struct unit_range *win; /* set: the ranges are only weighed against these windows, */
    size_t n_win;                 /* and *meets says whether one meets them */
    bool *meets;
};

/* Does [lo, hi) meet one of win[0..n)? */
static bool meets_windows(const struct unit_range *win, size_t n, uint64_t lo, uint64_t hi)
{
    for (size_t k = 0; k < n; k++)
        if (lo < win[k].hi && win[k].lo < hi)
            return true;
    return false;
}

static bool sink_range(struct range_sink *s, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return true;
    if (s->win) {
        *s->meets |= meets_windows(s->win, s->n_win, lo, hi);
        return true;
    }
    if (s->unit)
        return VEC_PUSH(s->t->unit_ranges, ((struct unit_range){(uint32_t)lo, (uint32_t)hi, s->scope}));
    return symt_stage_add_range(s->t, s->scope, s->depth, s->inline_range, (uint32_t)lo, (uint32_t)hi);
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
        /* the section is read from the file as needed: the entry's bytes first (at most 21) */
        if (!raw_need(d, sec, (uint64_t)(c.p - d->sec[sec]), 24))
            return false;
        if (sec == SEC_RANGES) {
            uint64_t a = cur_fixed(&c, 4), b = cur_fixed(&c, 4);
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
        switch (cur_fixed(&c, 1)) {
        case DW_RLE_end_of_list:
            return !c.bad;
        case DW_RLE_base_address:
            base = cur_fixed(&c, 4);
            continue;
        case DW_RLE_offset_pair:
            lo = base + cur_uleb(&c);
            hi = base + cur_uleb(&c);
            break;
        case DW_RLE_start_end:
            lo = cur_fixed(&c, 4);
            hi = cur_fixed(&c, 4);
            break;
        case DW_RLE_start_length:
            lo = cur_fixed(&c, 4);
            hi = lo + cur_uleb(&c);
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
    struct range_sink sink = {r->t, index, tag == DW_TAG_subprogram ? 0 : depth, tag != DW_TAG_subprogram, false,
                              NULL, 0, NULL};
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

/* Is each window win[0..n_win) (sorted by lo) covered whole by the subprogram ranges subs[0..n)?
 * Then a read over the windows found all there is in them (compilers emit one window per function
 * section, and the function covers it); else the unit's whole tree is walked, as code in them may
 * belong to a subprogram nested in one outside them. */
static bool windows_covered(const struct range *subs, size_t n, const struct unit_range *win, size_t n_win)
{
    for (size_t k = 0; k < n_win; k++) {
        uint32_t x = win[k].lo;
        for (bool moved = true; moved && x < win[k].hi;) {
            moved = false;
            for (size_t i = 0; i < n; i++)
                if (subs[i].lo <= x && subs[i].hi > x) {
                    x = subs[i].hi;
                    moved = true;
                }
        }
        if (x < win[k].hi)
            return false;
    }
    return true;
}

/* With windows (n_win > 0): does the subprogram whose attributes are a have code in them? Its
 * ranges are weighed without being kept. */
static bool subprogram_wanted(struct scope_reader *r, const struct die_attrs *a, const struct unit_range *win,
                              size_t n_win)
{
    if (!n_win)
        return true;
    if (a->has_low && a->has_high)
        return meets_windows(win, n_win, a->low, (a->high_is_length ? a->low + a->high : a->high) & 0xffffffffu);
    bool meets = false;
    struct range_sink test = {.t = r->t, .win = win, .n_win = n_win, .meets = &meets};
    if (a->has_ranges && !read_ranges(r, a->ranges, &test))
        return true; /* (a list it cannot read: add_scope finds out) */
    return meets;
}

/* The unit's subprograms and inlined instances into the stage, and what its root says into info.
 * With windows (win[0..n_win), n_win > 0), only the subprograms with code in them, and their
 * trees, until they cover the windows: the others are stepped over by their sibling links. */
static enum read_result raw_unit(struct raw_dwarf *d, int worker, struct sym_stage *stage, struct strpool *pool,
                                 uint32_t cu, uint64_t hdr, struct raw_unit_info *info, const struct unit_range *win,
                                 size_t n_win)
{
    struct scope_reader r = {.t = stage, .pool = pool, .cu = cu};
    memset(info, 0, sizeof *info);
    if (!raw_unit_open(d, hdr, &r.u) || !raw_unit_copy(d, &r.u, worker)) {
        raw_unit_close(&r.u);
        return READ_LEFT;
    }
    struct cur c = {unit_at(&r.u, raw_first_die(&r.u)), unit_at(&r.u, r.u.end), false};
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
    size_t subs0 = stage->subs.n, weighed = subs0;
    while (ok && !c.bad && c.p < c.end && !r.unsupported) {
        if (n_win && top == 1 && stage->subs.n > weighed) { /* between the root's children */
            weighed = stage->subs.n;
            if (windows_covered(stage->subs.v + subs0, weighed - subs0, win, n_win))
                break; /* every window has its subprograms: the rest of the tree is not walked */
        }
        uint64_t code = cur_uleb(&c);
        if (code == 0) { /* the end of a level's children */
            if (top == 0)
                break;
            top--;
            continue;
        }
        const struct abbrev *ab = raw_abbrev_find(&r.u.ab, code);
        if (!ab) {
            r.unsupported = true;
            break;
        }
        struct die_attrs a;
        const struct level *lv = &stack[top];
        bool scope = lv->walk && (ab->tag == DW_TAG_subprogram ||
                                  (ab->tag == DW_TAG_inlined_subroutine && lv->parent >= 0));
        bool walk_children = lv->walk && descends(ab->tag);
        /* attributes are read where they are used: the root, a scope, and a subtree passed over
         * (its sibling link); parameters, variables and blocks are stepped over */
        if (n_win && scope && ab->tag == DW_TAG_subprogram && !first) {
            /* a subprogram weighed against the windows: its extent first, the rest only when it has
             * code in them (the windows hold a function or two of a unit's hundreds) */
            struct cur at = c;
            read_attrs_of(&r, &c, ab, &a, true);
            if (subprogram_wanted(&r, &a, win, n_win)) {
                c = at;
                read_attrs(&r, &c, ab, &a);
            }
        } else if (first || scope || (ab->children && !walk_children)) {
            read_attrs(&r, &c, ab, &a);
        } else {
            raw_skip_attrs(&r.u, &c, ab); /* (a stays unread: none of the uses below is reached) */
        }
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
            r.mangling = symt_lang_mangles((unsigned)a.language);
            r.cu_base = a.has_low ? a.low : 0;
        }
        if (scope && ab->tag == DW_TAG_subprogram && !subprogram_wanted(&r, &a, win, n_win))
            scope = walk_children = false;
        int32_t self = lv->parent;
        uint32_t child_depth = lv->depth;
        if (scope) {
            self = (int32_t)stage->scopes.n;
            ok = add_scope(&r, &a, ab->tag, lv->parent, lv->depth);
            child_depth = ab->tag == DW_TAG_subprogram ? 1 : lv->depth + 1;
        }
        if (!ab->children)
            continue;
        if (!walk_children && a.has_sibling && a.sibling > unit_off(&r.u, c.p) && a.sibling <= r.u.end) {
            c.p = unit_at(&r.u, a.sibling); /* jump over a type's or a variable's children */
            continue;
        }
        if (++top >= (int)(sizeof stack / sizeof stack[0])) {
            r.unsupported = true;
            break;
        }
        stack[top] = (struct level){self, child_depth, walk_children};
    }
    symt_offmap_free(&r.names);
    raw_unit_close(&r.u);
    if (!ok)
        return READ_NO_MEMORY;
    return r.unsupported || c.bad ? READ_LEFT : READ_OK;
}


/* ---- the unit index and the unit reader -------------------------------------------------- */

/* The ELF's allocated sections, against which the index's ranges are weighed. */
struct sections {
    const struct span *v;
    size_t n;
};

/* A unit range that lies in no allocated section (nor starts at a linker's tombstone, 0 or -1/-2)
 * is damage the fast reader cannot tell from data: libdwarf then reads the index and reports. */
static bool plausible(const struct sections *sec, const struct unit_range *r)
{
    if (r->lo == 0 || r->lo >= 0xFFFFFFFEu || sec->n == 0)
        return true;
    for (size_t i = 0; i < sec->n; i++)
        if (r->lo >= sec->v[i].lo && r->hi <= sec->v[i].hi)
            return true;
    return false;
}

enum { INDEX_WINDOW = 2048 };

/* The attributes of the first DIE of the unit at .debug_info offset off: read from the file a
 * page or two of the unit, all of it when the DIE reaches further (the bounds make the reader
 * stop at what was read). On success r->u is open (for raw_unit_close) and ends at the unit's
 * end. False when the unit or its root is not one the fast reader takes. */
static bool root_die(struct raw_dwarf *d, uint64_t off, struct scope_reader *r, struct die_attrs *a)
{
    bool ok = raw_unit_open(d, off, &r->u);
    uint64_t next = r->u.end;
    const struct abbrev *ab = NULL;
    /* (read into the opener's own buffer, not into pages of the section's: a first report of a
     * sample in each of the bench ELF's 120 units read each root DIE's page there, 178 pages) */
    struct raw_stretch st;
    ok = ok && raw_stretch_open(d, SEC_INFO, RAW_OPENER, off, next - off, &st);
    if (ok)
        r->u.bytes = st.bytes;
    for (uint64_t window = INDEX_WINDOW; ok; window = next - off) {
        r->u.end = next - off > window ? off + window : next;
        ok = raw_stretch_need(d, &st, r->u.end - off);
        struct cur c = {unit_at(&r->u, raw_first_die(&r->u)), unit_at(&r->u, r->u.end), false};
        ab = ok ? raw_abbrev_find(&r->u.ab, cur_uleb(&c)) : NULL;
        r->unsupported = false;
        if (ab)
            read_attrs(r, &c, ab, a);
        if (!c.bad || r->u.end == next) {
            ok = ok && ab && !c.bad;
            break;
        }
    }
    r->u.end = next;
    return ok && !r->unsupported && (ab->tag == DW_TAG_compile_unit || ab->tag == DW_TAG_partial_unit);
}

/* A unit's ranges from its aranges set. In place (*in_place): the index's ranges are the sets' own
 * vector, each set's kept ranges moved down over those of the sets before (sets in the units'
 * order: none is overwritten before it is read), where they were copied into a vector of their own
 * (21,600 ranges of the bench's 27 MB ELF: 260 KB of fresh pages, 63 page faults of the open). */
static bool index_from_set(struct sym_stage *t, const struct aranges *ar, const struct arange_set *set, bool in_place)
{
    if (in_place && set->first < t->unit_ranges.n)
        return false; /* (not the sets' order: see raw_index) */
    const struct unit_range *from = in_place ? t->unit_ranges.v : ar->ranges.v;
    for (uint32_t i = set->first; i < set->first + set->n; i++) {
        struct unit_range r = from[i];
        r.unit = (uint32_t)t->n_units;
        if (r.hi <= r.lo)
            continue;
        if (in_place)
            t->unit_ranges.v[t->unit_ranges.n++] = r;
        else if (!VEC_PUSH(t->unit_ranges, r))
            return false;
    }
    return true;
}

/* The sets' vector as the index's ranges, when the sets follow the units' order in the section and
 * the index has none yet; false: the ranges are copied. */
static bool ranges_in_place(struct sym_stage *t, struct aranges *ar)
{
    if (t->unit_ranges.v)
        return false;
    for (size_t i = 1; i < ar->sets.n; i++) /* (sorted by unit: their ranges must be too) */
        if (ar->sets.v[i].first < ar->sets.v[i - 1].first + ar->sets.v[i - 1].n)
            return false;
    t->unit_ranges.v = ar->ranges.v;
    t->unit_ranges.cap = ar->ranges.cap;
    t->unit_ranges.n = 0;
    ar->ranges.v = NULL; /* (now the index's) */
    ar->ranges.cap = 0;
    return true;
}

/* A unit with no set reads its own ranges, pushed onto the index's: ranges in place stop there, the
 * index's copied out of the sets' vector (ar->ranges, given back: the sets not read yet lie above
 * what was moved down). False when out of memory. */
static bool ranges_apart(struct sym_stage *t, struct aranges *ar)
{
    struct unit_range *own = malloc((t->unit_ranges.n + 1) * sizeof *own);
    if (!own)
        return false;
    memcpy(own, t->unit_ranges.v, t->unit_ranges.n * sizeof *own);
    ar->ranges.v = t->unit_ranges.v;
    ar->ranges.cap = t->unit_ranges.cap;
    t->unit_ranges.v = own;
    t->unit_ranges.cap = t->unit_ranges.n + 1;
    return true;
}

/* Are all the aranges plausible? One that is not is damage: the units' own DIEs are asked. */
static bool aranges_plausible(const struct sections *sec, const struct aranges *ar)
{
    for (size_t i = 0; i < ar->ranges.n; i++)
        if (ar->ranges.v[i].hi > ar->ranges.v[i].lo && !plausible(sec, &ar->ranges.v[i]))
            return false;
    return true;
}

bool raw_index(struct raw_dwarf *d, const struct span *sections, size_t n_sections, struct sym_stage *t,
               struct strpool *pool)
{
    struct sections sec = {sections, n_sections};
    struct aranges ar = {0};
    bool have_sets = raw_aranges_read(d, &ar) && aranges_plausible(&sec, &ar);
    bool in_place = have_sets && ranges_in_place(t, &ar);
    /* (each range once, each set a unit: no copy as they grow) */
    bool ok = !have_sets || ((in_place || VEC_RESERVE(t->unit_ranges, ar.ranges.n)) &&
                             VEC_RESERVE(t->cu_names, ar.sets.n) && VEC_RESERVE(t->unit_hdrs, ar.sets.n));
    for (uint64_t off = 0; ok && off < d->len[SEC_INFO];) {
        const struct arange_set *set = have_sets ? raw_aranges_for(&ar, off) : NULL;
        uint64_t next;
        if (set && raw_unit_bounds(d, off, &next)) {
            /* its name is read with the unit (raw_unit_name) */
            ok = index_from_set(t, &ar, set, in_place) && VEC_PUSH(t->cu_names, NULL) && VEC_PUSH(t->unit_hdrs, off);
            t->n_units += ok;
            off = next;
            continue;
        }
        if (in_place && !(ok = ranges_apart(t, &ar)))
            break;
        in_place = false;
        struct scope_reader r = {.t = t, .pool = pool, .cu = (uint32_t)t->n_units};
        struct die_attrs a;
        ok = root_die(d, off, &r, &a);
        next = r.u.end;
        const char *name = ok && a.name ? symt_intern(pool, a.name) : NULL;
        struct range_sink sink = {t, (uint32_t)t->n_units, 0, false, true, NULL, 0, NULL};
        size_t ranges0 = t->unit_ranges.n;
        r.cu_base = ok && a.has_low ? a.low : 0;
        if (ok && a.has_ranges)
            ok = read_ranges(&r, a.ranges, &sink);
        else if (ok && a.has_low && a.has_high)
            ok = sink_range(&sink, a.low, (a.high_is_length ? a.low + a.high : a.high) & 0xffffffffu);
        for (size_t i = ranges0; ok && i < t->unit_ranges.n; i++)
            ok = plausible(&sec, &t->unit_ranges.v[i]);
        ok = ok && VEC_PUSH(t->cu_names, name) && VEC_PUSH(t->unit_hdrs, off);
        raw_unit_close(&r.u);
        t->n_units += ok;
        off = next;
    }
    raw_aranges_free(&ar);
    return ok;
}

const char *raw_unit_name(struct raw_dwarf *d, uint64_t hdr, struct strpool *pool)
{
    struct scope_reader r = {.pool = pool};
    struct die_attrs a;
    const char *name = root_die(d, hdr, &r, &a) && a.name ? symt_intern(pool, a.name) : NULL;
    raw_unit_close(&r.u);
    return name;
}

enum read_result raw_read_part(struct raw_dwarf *d, int worker, struct sym_stage *stage, struct strpool *pool,
                               const struct unit_ref *ref, struct cu_files *files, const struct unit_range *win,
                               size_t n_win)
{
    struct raw_unit_info info;
    size_t scopes = stage->scopes.n, subs = stage->subs.n, inlines = stage->inlines.n;
    enum read_result res = raw_unit(d, worker, stage, pool, ref->id, ref->hdr, &info, win, n_win);
    if (res == READ_OK && n_win && !windows_covered(stage->subs.v + subs, stage->subs.n - subs, win, n_win)) {
        stage->scopes.n = scopes, stage->subs.n = subs, stage->inlines.n = inlines;
        res = raw_unit(d, worker, stage, pool, ref->id, ref->hdr, &info, NULL, 0);
    }
    if (res == READ_OK && info.has_stmt_list)
        res = raw_lines(d, worker, stage, pool, ref->id, info.stmt_list, info.comp_dir, files, win, n_win);
    return res;
}

enum read_result raw_read(void *ctx, int worker, struct sym_stage *stage, struct strpool *pool,
                          const struct unit_ref *ref, struct cu_files *files)
{
    return raw_read_part(ctx, worker, stage, pool, ref, files, NULL, 0);
}

/* ---- the layout of what a variable points to --------------------------------------------- */

/* The DIE at .debug_info offset off inside u: its abbreviation and attributes, and where its
 * children (or its next sibling) begin. */
static const struct abbrev *die_at(struct scope_reader *r, uint64_t off, struct die_attrs *a, uint64_t *after)
{
    if (off < raw_first_die(&r->u) || off >= r->u.end)
        return NULL;
    struct cur c = {r->u.d->sec[SEC_INFO] + off, r->u.d->sec[SEC_INFO] + r->u.end, false};
    const struct abbrev *ab = raw_abbrev_find(&r->u.ab, cur_uleb(&c));
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

/* Each unit's first variable DIE named var with a type goes to fn (its unit open in r), until fn
 * returns >= 0; returns that, or -1. */
typedef long (*variable_fn)(struct scope_reader *r, const struct die_attrs *a, void *ctx);

static long each_variable(struct raw_dwarf *d, const char *var, variable_fn fn, void *ctx)
{
    for (uint64_t off = 0; off < d->len[SEC_INFO];) {
        struct scope_reader r = {0};
        if (!raw_unit_open(d, off, &r.u) || !raw_need(d, SEC_INFO, r.u.start, r.u.end - r.u.start)) {
            raw_unit_close(&r.u);
            return -1;
        }
        long result = -1;
        struct cur c = {d->sec[SEC_INFO] + raw_first_die(&r.u), d->sec[SEC_INFO] + r.u.end, false};
        while (!c.bad && c.p < c.end) { /* every DIE of the unit, in order */
            uint64_t code = cur_uleb(&c);
            const struct abbrev *ab = code ? raw_abbrev_find(&r.u.ab, code) : NULL;
            if (!code)
                continue;
            if (!ab)
                break;
            struct die_attrs a;
            read_attrs(&r, &c, ab, &a);
            if (ab->tag == DW_TAG_variable && a.name && strcmp(a.name, var) == 0 && a.has_type) {
                result = fn(&r, &a, ctx);
                break;
            }
        }
        uint64_t next = r.u.end;
        raw_unit_close(&r.u);
        symt_offmap_free(&r.names);
        if (result >= 0)
            return result;
        off = next;
    }
    return -1;
}

struct member_query {
    const char *const *members;
    size_t n_members;
    const char **found;
};

/* The offset of the first wanted member of the structure the variable points to, or -1. */
static long pointee_member(struct scope_reader *r, const struct die_attrs *a, void *ctx)
{
    const struct member_query *q = ctx;
    const struct raw_dwarf *d = r->u.d;
    struct die_attrs t;
    uint64_t after;
    int pointers = 0;
    const struct abbrev *st = strip_type(r, a->type, &t, &after, &pointers);
    if (!st || pointers != 1 || (st->tag != DW_TAG_structure_type && st->tag != DW_TAG_class_type) || !st->children)
        return -1; /* not a pointer to a structure this unit defines */
    long result = -1;
    struct cur m = {d->sec[SEC_INFO] + after, d->sec[SEC_INFO] + r->u.end, false};
    for (int depth = 1; depth > 0 && !m.bad && m.p < m.end && result < 0;) { /* the members */
        uint64_t mc = cur_uleb(&m);
        if (!mc) {
            depth--;
            continue;
        }
        const struct abbrev *mab = raw_abbrev_find(&r->u.ab, mc);
        if (!mab)
            break;
        struct die_attrs ma;
        read_attrs(r, &m, mab, &ma);
        for (size_t k = 0; depth == 1 && mab->tag == DW_TAG_member && ma.name && ma.has_member_offset &&
                           k < q->n_members; k++)
            if (strcmp(ma.name, q->members[k]) == 0) {
                result = (long)ma.member_offset;
                *q->found = q->members[k];
                break;
            }
        depth += mab->children;
    }
    return result;
}

long raw_pointee_member(struct raw_dwarf *d, const char *var, const char *const *members, size_t n_members,
                        const char **found)
{
    struct member_query q = {members, n_members, found};
    return each_variable(d, var, pointee_member, &q);
}

/* 1: the variable holds one value (a pointer, a number, an enum), through typedefs and qualifiers;
 * 0: it is a structure, a union, a class or an array. */
static long scalar_type(struct scope_reader *r, const struct die_attrs *a, void *ctx)
{
    (void)ctx;
    struct die_attrs t;
    uint64_t after;
    int pointers = 0;
    const struct abbrev *st = strip_type(r, a->type, &t, &after, &pointers);
    if (pointers > 0) /* void * has no pointee type: still a pointer */
        return 1;
    if (!st)
        return -1;
    return st->tag != DW_TAG_structure_type && st->tag != DW_TAG_union_type && st->tag != DW_TAG_class_type &&
           st->tag != DW_TAG_array_type;
}

int raw_variable_is_scalar(struct raw_dwarf *d, const char *var)
{
    return (int)each_variable(d, var, scalar_type, NULL);
}
