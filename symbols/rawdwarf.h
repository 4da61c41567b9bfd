/* Private to symbols/: the pieces the fast DWARF reader's files share (rawdwarf.c: sections,
 * abbreviations, attribute values, unit headers; rawscopes.c: DIE trees, ranges, the unit index;
 * rawlines.c: line programs and file tables). readers.h has what the rest of symbols/ calls. */
#ifndef CMPROF_SYMBOLS_RAWDWARF_H
#define CMPROF_SYMBOLS_RAWDWARF_H

#include "readers.h"

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum { SEC_INFO, SEC_ABBREV, SEC_LINE, SEC_STR, SEC_LINE_STR, SEC_RNGLISTS, SEC_RANGES, SEC_ARANGES, SEC_COUNT };
struct raw_lazy;
struct raw_dwarf {
    int fd;
    Elf *elf;
    const uint8_t *sec[SEC_COUNT]; /* the whole section's address; .debug_info and .debug_line */
    size_t len[SEC_COUNT];         /* fill in as raw_need asks for them */
    struct raw_lazy *lazy;
    const uint8_t *map; /* the whole file, mapped (raw_open_mapped); NULL: sections read with pread */
    size_t map_len;
};

/* Read bytes [off, off + len) of a section from the file, if not read yet (clamped to the
 * section). Thread-safe. False when the file no longer holds them. */
bool raw_need(const struct raw_dwarf *d, int sec, uint64_t off, uint64_t len);

/* The end of the unit whose header is at .debug_info offset off, read from the header alone (not
 * through the section's buffer); false when the header is not one the fast reader takes. */
bool raw_unit_bounds(const struct raw_dwarf *d, uint64_t off, uint64_t *end);

/* ---- a bounds-checked cursor: any read past the end sets bad and returns 0 ---------------- */

struct cur {
    const uint8_t *p, *end;
    bool bad;
};

static inline bool cur_need(struct cur *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        c->p = c->end;
        return false;
    }
    return true;
}

static inline uint64_t cur_fixed(struct cur *c, unsigned n)
{
    if (!cur_need(c, n))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}

static inline uint64_t cur_uleb(struct cur *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; cur_need(c, 1); shift += 7) {
        uint8_t b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    return 0;
}

static inline int64_t cur_sleb(struct cur *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (cur_need(c, 1)) {
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

static inline void cur_skip(struct cur *c, uint64_t n)
{
    if (n > (uint64_t)(c->end - c->p)) {
        c->bad = true;
        c->p = c->end;
    } else {
        c->p += n;
    }
}

static inline const char *cur_cstr(struct cur *c)
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


/* ---- .debug_aranges (aranges.c) --------------------------------------------------------- */

struct arange_set {
    uint64_t info_off;  /* the unit's header in .debug_info */
    uint32_t first, n;  /* its ranges: a slice of aranges.ranges (unit field unset) */
};

struct aranges {
    VEC(struct arange_set) sets; /* by info_off */
    VEC(struct unit_range) ranges;
};

/* The section's sets; false (and nothing kept) when it is absent or any set has a shape the
 * index does not take: then every unit's own first DIE gives its ranges. */
bool raw_aranges_read(const struct raw_dwarf *d, struct aranges *a);
const struct arange_set *raw_aranges_for(const struct aranges *a, uint64_t info_off);
void raw_aranges_free(struct aranges *a);

/* ---- abbreviations ----------------------------------------------------------------------- */

struct attr_spec {
    uint16_t at, form;
    int8_t size; /* its value's bytes when its form has one size in its unit (raw_unit_open), else -1 */
    int64_t implicit; /* DW_FORM_implicit_const */
    uint8_t role; /* RAW_USED, RAW_EXTENT: what the scope reader takes of it (raw_unit_open) */
};

/* An attribute whose value the scope reader uses (DW_AT_decl_file: only that it is there), and one
 * of those a subprogram's extent and its sibling link are read from. */
enum { RAW_USED = 1, RAW_EXTENT = 2 };

struct abbrev {
    uint64_t code;
    uint16_t tag;
    bool children;
    uint32_t first, n; /* attr_spec slice */
    int32_t fixed; /* the bytes of its attributes when every form has one size in its unit, else -1 */
};

struct abbrevs {
    struct abbrev *v;
    size_t n, cap;
    struct attr_spec *specs;
    size_t n_specs, cap_specs;
    bool dense; /* v[i].code == i + 1 for all i: direct indexing */
};

bool raw_abbrevs_read(const struct raw_dwarf *d, uint64_t off, struct abbrevs *a);
const struct abbrev *raw_abbrev_find(const struct abbrevs *a, uint64_t code);

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
    const uint8_t *bytes; /* byte `start` on: in the section's buffer, or a reader's copy (raw_unit_copy) */
    uint16_t version;
    uint8_t addr_size;
    struct abbrevs ab;
};

/* A string at an offset of .debug_str or .debug_line_str, or NULL. */
const char *raw_str_at(const struct raw_dwarf *d, int sec, uint64_t off);
/* Read (or skip) one attribute value. V_UNSUPPORTED for forms this reader leaves to libdwarf. */
struct val raw_value(const struct unit *u, struct cur *c, const struct attr_spec *spec);
/* Step over a DIE's attributes without reading them (a DIE the caller does not look at). */
void raw_skip_attrs(const struct unit *u, struct cur *c, const struct abbrev *ab);
bool raw_is_constant(uint16_t form);
/* The unit whose header is at .debug_info offset off (32-bit DWARF 2-5, 4-byte addresses). */
bool raw_unit_open(const struct raw_dwarf *d, uint64_t off, struct unit *u);
void raw_unit_close(struct unit *u);
/* Read the whole unit from the file into the buffer of reader thread `worker` (0 or 1), kept from
 * unit to unit, and point u->bytes at it: a unit read for its scopes then costs a copy into warm
 * pages, not the section buffer's fresh ones (tens of thousands of page faults on a large
 * firmware). False when the file no longer holds it. */
bool raw_unit_copy(const struct raw_dwarf *d, struct unit *u, int worker);
uint64_t raw_first_die(const struct unit *u); /* offset of the first DIE after the header */

/* n bytes of section sec at offset off into out (from the file when the section is read on
 * demand: no page of its buffer is filled for them). False when they cannot be read. */
bool raw_read_at(const struct raw_dwarf *d, int sec, uint64_t off, void *out, size_t n);
/* Bytes [off, off + len) of section sec: the section's own bytes when it was read whole or is
 * mapped; else reader thread `worker`'s copy (or RAW_OPENER's, never while units are read), kept from stretch to stretch (valid until its next
 * raw_stretch_open), read from the file as raw_stretch_need asks (a line program decoded until its
 * sequences are found is never read whole). Its copy's pages serve every stretch that thread reads,
 * where each stretch's bytes were fresh pages of the section's buffer. */
enum { RAW_OPENER = -1 }; /* a stretch's reader outside the reader threads: the open, a unit's name */
struct raw_stretch {
    const uint8_t *bytes; /* byte `off`'s copy */
    uint64_t off, len;
    uint64_t got; /* [0, got) of it is read */
    int sec;
};
bool raw_stretch_open(const struct raw_dwarf *d, int sec, int worker, uint64_t off, uint64_t len,
                      struct raw_stretch *s);
/* The stretch's first `upto` bytes read (at most its length); false when the file no longer holds
 * them. */
bool raw_stretch_need(const struct raw_dwarf *d, struct raw_stretch *s, uint64_t upto);

/* Rows and sequences of the line program at .debug_line offset off, and its file table (names
 * composed as dwarf_srcfiles composes them, interned in pool; files->files is malloc'd). With
 * windows (win[0..n_win), n_win > 0), only the sequences that meet them. On READ_LEFT or
 * READ_NO_MEMORY nothing of it stays in the stage. */
enum read_result raw_lines(struct raw_dwarf *d, int worker, struct sym_stage *stage, struct strpool *pool,
                           uint32_t cu, uint64_t off, const char *comp_dir, struct cu_files *files,
                           const struct unit_range *win, size_t n_win);

#endif
