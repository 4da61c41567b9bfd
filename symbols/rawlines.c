/* The fast DWARF reader's line programs (rawdwarf.h): the header's directory and file tables, with
 * names composed as libdwarf composes them, and the rows and sequences of the program. */
#include "rawdwarf.h"

#include <libdwarf/dwarf.h>
#include <stdlib.h>

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
    *n = (unsigned)cur_fixed(c, 1);
    if (*n > MAX_ENTRY_FORMATS)
        return false;
    for (unsigned k = 0; k < *n; k++) {
        f[k].content = cur_uleb(c);
        f[k].form = cur_uleb(c);
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
        struct attr_spec spec = {0, (uint16_t)f[k].form, -1, 0, 0};
        struct val v = raw_value(u, c, &spec);
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
        for (const char *s; ok && (s = cur_cstr(c)) != NULL && s[0];)
            ok = symt_vec_grow((void **)&dirs, &cap_dirs, n_dirs + 1, sizeof *dirs) && (dirs[n_dirs++] = s);
        for (const char *name; ok && (name = cur_cstr(c)) != NULL && name[0];) {
            uint64_t dir = cur_uleb(c);
            cur_uleb(c); /* modification time */
            cur_uleb(c); /* length */
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
        uint64_t count = ok ? cur_uleb(c) : 0;
        for (uint64_t k = 0; ok && k < count; k++) {
            const char *path;
            uint64_t unused;
            ok = read_entry(&u, c, f, nf, &path, &unused) &&
                 symt_vec_grow((void **)&dirs, &cap_dirs, n_dirs + 1, sizeof *dirs);
            if (ok)
                dirs[n_dirs++] = path;
        }
        ok = ok && entry_formats(c, f, &nf);
        count = ok ? cur_uleb(c) : 0;
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

/* A line program's header: what its opcodes need. */
struct line_header {
    uint16_t version;
    unsigned min_len, line_range, opcode_base;
    int line_base;
    uint8_t lengths[256]; /* each standard opcode's count of LEB128 operands */
    struct cur files;     /* the directory and file tables */
    struct cur program;   /* the opcodes: read from the file as they are decoded (program_read) */
    const struct raw_dwarf *d;
    struct raw_stretch st; /* the program's bytes, its unit length's on */
};

/* The header of the line program at .debug_line offset off, read by reader thread `worker`; false
 * when it is not one this reader takes. */
static bool line_header(const struct raw_dwarf *d, int worker, uint64_t off, struct line_header *h)
{
    uint8_t unit_length[4];
    if (!raw_read_at(d, SEC_LINE, off, unit_length, sizeof unit_length))
        return false;
    struct cur lc = {unit_length, unit_length + sizeof unit_length, false};
    uint64_t len = cur_fixed(&lc, 4);
    /* the header first (version, sizes, header length: 10 bytes at most), then the rest of it */
    if (len >= 0xfffffff0u || len > d->len[SEC_LINE] - off - 4 || !raw_stretch_open(d, SEC_LINE, worker, off, 4 + len, &h->st) ||
        !raw_stretch_need(d, &h->st, 4 + (len < 10 ? len : 10)))
        return false;
    const uint8_t *base = h->st.bytes;
    struct cur c = {base + 4, base + 4 + len, false};
    h->version = (uint16_t)cur_fixed(&c, 2);
    if (h->version < 2 || h->version > 5)
        return false;
    if (h->version == 5 && (cur_fixed(&c, 1) != 4 || cur_fixed(&c, 1) != 0)) /* address size, segment selector size */
        return false;
    uint64_t header_len = cur_fixed(&c, 4);
    if (c.bad || header_len > len || !raw_stretch_need(d, &h->st, (uint64_t)(c.p - base) + header_len))
        return false;
    const uint8_t *program = c.p + (header_len < (uint64_t)(c.end - c.p) ? header_len : (uint64_t)(c.end - c.p));
    h->min_len = (unsigned)cur_fixed(&c, 1);
    if (h->version >= 4 && cur_fixed(&c, 1) != 1) /* maximum operations per instruction: VLIW only */
        return false;
    cur_fixed(&c, 1); /* default_is_stmt: rows are kept whatever it says */
    h->line_base = (int8_t)cur_fixed(&c, 1);
    h->line_range = (unsigned)cur_fixed(&c, 1);
    h->opcode_base = (unsigned)cur_fixed(&c, 1);
    memset(h->lengths, 0, sizeof h->lengths);
    for (unsigned i = 1; i < h->opcode_base; i++)
        h->lengths[i] = (uint8_t)cur_fixed(&c, 1);
    if (c.bad || h->line_range == 0 || h->opcode_base == 0 || header_len > len)
        return false;
    h->files = (struct cur){c.p, program, false};
    h->program = (struct cur){program, c.end, false};
    h->d = d;
    return true;
}

enum { PROGRAM_AHEAD = 1024, PROGRAM_CHUNK = 4096 };

/* Make sure the program's bytes from c.p on are read from the file, at least `need` of them (or to
 * the end) and PROGRAM_AHEAD when that is less, a chunk at a time: a program decoded only until
 * the sequences it is read for are found is never read whole. *have: where the read bytes end. */
static bool program_read(struct line_header *h, struct cur c, const uint8_t **have, uint64_t need)
{
    if (need < PROGRAM_AHEAD)
        need = PROGRAM_AHEAD;
    if ((uint64_t)(*have - c.p) >= need || *have >= c.end)
        return true;
    const uint8_t *base = h->st.bytes;
    uint64_t to = (uint64_t)(c.p - base) + (need > PROGRAM_CHUNK ? need : PROGRAM_CHUNK);
    uint64_t end = (uint64_t)(c.end - base);
    to = to < end ? to : end;
    if (!raw_stretch_need(h->d, &h->st, to))
        return false;
    *have = base + to;
    return true;
}

/* Addresses a unit is read for: n == 0 (v NULL) is all of them. */
struct windows {
    const struct unit_range *v;
    size_t n;
};

/* Does [lo, hi) meet a window? */
static bool in_windows(const struct windows *w, uint32_t lo, uint32_t hi)
{
    for (size_t k = 0; k < w->n; k++)
        if (lo < w->v[k].hi && w->v[k].lo < hi)
            return true;
    return !w->n;
}

/* Are the windows covered whole by the sequences v[0..n)? */
static bool seqs_cover(const struct seq *v, size_t n, const struct windows *win)
{
    for (size_t k = 0; k < win->n; k++) {
        uint32_t x = win->v[k].lo;
        for (bool moved = true; moved && x < win->v[k].hi;) {
            moved = false;
            for (size_t i = 0; i < n; i++)
                if (v[i].lo <= x && v[i].hi > x) {
                    x = v[i].hi;
                    moved = true;
                }
        }
        if (x < win->v[k].hi)
            return false;
    }
    return true;
}

/* The program's rows and sequences into the stage, its rows' files named from first_name on (the
 * unit's files; files->base is the first's number); with windows, only the sequences that meet
 * them (a sequence whose first row lies outside them is stepped through without its rows, and
 * read again when its end shows it meets one), and no further than where they all have rows. The
 * state machine stays one loop over the
 * opcodes, whose registers every case reads and writes. On failure what it added stays (the
 * caller drops it). */
static enum read_result line_program(struct sym_stage *stage, struct line_header *h, uint32_t cu,
                                     uint32_t first_name, const struct cu_files *files, const struct windows *win)
{
    long base = files->base, n_files = files->n;
    unsigned min_len = h->min_len, line_range = h->line_range, opcode_base = h->opcode_base;
    const uint8_t *lengths = h->lengths;
    /* libdwarf 20210528 starts a DWARF 5 program's file register at 0, not 1 */
    const uint64_t first_file = h->version >= 5 ? 0 : 1;
    /* each special opcode's address and line advance, worked out once (two divisions an op otherwise) */
    uint32_t addr_step[256];
    int32_t line_step[256];
    for (unsigned op = opcode_base; op < 256; op++) {
        addr_step[op] = min_len * ((op - opcode_base) / line_range);
        line_step[op] = h->line_base + (int32_t)((op - opcode_base) % line_range);
    }
    struct cur c = h->program;
    uint32_t seq_start = (uint32_t)stage->rows.n;
    uint64_t addr = 0, file = first_file, discriminator = 0;
    int64_t line = 1;
    bool ok = true;
    uint32_t last_addr = 0; /* the sequence's rows so far ascend */
    bool in_order = true;
    const uint8_t *seq_p = c.p; /* where the sequence began (the registers' first values) */
    bool seq_begun = false, keep = true, again = false; /* again: a sequence read a second time */
    uint32_t seq_lo = 0;
    const uint8_t *have = c.p; /* the program's bytes are read up to here */
    size_t seqs0 = stage->seqs.n;
    /* a program read for all its rows is read from the file in one piece, not a chunk at a time
     * (a unit of the bench ELF: 14 reads of 4 KB) */
    if (!win->n && c.p < c.end && !program_read(h, c, &have, (uint64_t)(c.end - c.p)))
        c.bad = true;
    while (ok && c.p < c.end && !c.bad) {
        if ((size_t)(have - c.p) < PROGRAM_AHEAD && have < c.end && !program_read(h, c, &have, 0)) {
            c.bad = true;
            break;
        }
        unsigned op = (unsigned)cur_fixed(&c, 1);
        if (op < opcode_base && (op == DW_LNS_set_column || op == DW_LNS_negate_stmt) && lengths[op] <= 1 &&
            (lengths[op] == 0 || (c.p < c.end && *c.p < 0x80))) {
            c.p += lengths[op]; /* a third of GCC's opcodes: no row, an operand of one byte at most */
            continue;
        }
        bool emit = false, end_seq = false;
        if (op >= opcode_base) {
            addr += addr_step[op];
            line += line_step[op];
            emit = true;
        } else if (op == 0) {
            uint64_t n = cur_uleb(&c);
            if (n == 0 || n > (uint64_t)(c.end - c.p) || (n > PROGRAM_AHEAD / 2 && !program_read(h, c, &have, n))) {
                c.bad = true;
                break;
            }
            const uint8_t *next = c.p + n;
            switch (cur_fixed(&c, 1)) {
            case DW_LNE_end_sequence:
                emit = end_seq = true;
                break;
            case DW_LNE_set_address:
                if (n != 5)
                    c.bad = true; /* a 4-byte address, or this reader is wrong about the file */
                addr = cur_fixed(&c, 4);
                break;
            case DW_LNE_set_discriminator:
                discriminator = cur_uleb(&c);
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
                addr += (uint64_t)min_len * cur_uleb(&c);
                break;
            case DW_LNS_advance_line:
                line += cur_sleb(&c);
                break;
            case DW_LNS_set_file:
                file = cur_uleb(&c);
                break;
            case DW_LNS_const_add_pc:
                addr += (uint64_t)min_len * ((255 - opcode_base) / line_range);
                break;
            case DW_LNS_fixed_advance_pc:
                addr += cur_fixed(&c, 2);
                break;
            default: /* column, negate_stmt, basic_block, prologue/epilogue, isa and unknown ones */
                for (unsigned k = 0; k < lengths[op]; k++)
                    cur_uleb(&c);
                break;
            }
        }
        if (!emit || c.bad)
            continue;
        addr &= 0xffffffffu;
        if (!seq_begun) { /* the sequence's first row: are its rows wanted? */
            seq_begun = true;
            seq_lo = (uint32_t)addr;
            keep = again || in_windows(win, seq_lo, seq_lo + 1);
        }
        if (end_seq && !keep && !again && in_windows(win, seq_lo, (uint32_t)addr)) {
            c.p = seq_p; /* it meets a window after all: once more, with its rows */
            again = true;
            seq_begun = false;
            addr = 0, file = first_file, line = 1, discriminator = 0;
            continue;
        }
        if (end_seq) {
            uint32_t first = seq_start, cnt = (uint32_t)stage->rows.n - seq_start;
            if (cnt && !(stage->rows.v[first].addr == 0 && addr < 0x100)) { /* discarded code */
                struct seq s = {.lo = stage->rows.v[first].addr, .hi = (uint32_t)addr, .first = first, .n = cnt,
                                .cu = cu, .in_order = in_order};
                ok = VEC_PUSH(stage->seqs, s);
                if (ok && win->n && seqs_cover(stage->seqs.v + seqs0, stage->seqs.n - seqs0, win))
                    c.end = c.p; /* every window has its rows: the rest of the program is not read */
            }
            seq_start = (uint32_t)stage->rows.n;
            seq_p = c.p;
            seq_begun = again = false;
            last_addr = 0;
            in_order = true;
            addr = 0;
            file = first_file;
            line = 1;
        } else if (keep) {
            long k = (long)file - base;
            struct row rw = {(uint32_t)addr, (uint32_t)line, k >= 0 && k < n_files ? first_name + (uint32_t)k : 0,
                             (uint32_t)discriminator};
            in_order &= rw.addr >= last_addr;
            last_addr = rw.addr;
            /* of the rows at one address in a row, only the last ever answers (lookups take the
             * last at or below an address, and sorting keeps their order): it takes the place of
             * the one before, which halves the rows of code compiled with views (GCC 8 on) */
            if (stage->rows.n > seq_start && stage->rows.v[stage->rows.n - 1].addr == rw.addr)
                stage->rows.v[stage->rows.n - 1] = rw;
            else
                ok = VEC_PUSH(stage->rows, rw);
        }
        discriminator = 0;
    }
    if (!ok || c.bad)
        return ok ? READ_LEFT : READ_NO_MEMORY;
    stage->rows.n = seq_start; /* a sequence without an end row is not trusted */
    return READ_OK;
}

enum read_result raw_lines(struct raw_dwarf *d, int worker, struct sym_stage *stage, struct strpool *pool,
                           uint32_t cu, uint64_t off, const char *comp_dir, struct cu_files *files,
                           const struct unit_range *win, size_t n_win)
{
    const struct windows w = {win, n_win};
    memset(files, 0, sizeof *files);
    struct line_header h;
    if (!line_header(d, worker, off, &h))
        return READ_LEFT;
    size_t files0 = stage->files.n, rows0 = stage->rows.n, seqs0 = stage->seqs.n;
    struct cur head = h.files;
    enum read_result res = READ_LEFT;
    if (line_files(d, &head, h.version, comp_dir, pool, files)) {
        uint32_t first_name = symt_stage_files(stage, files->files, (size_t)files->n);
        res = first_name ? line_program(stage, &h, cu, first_name, files, &w) : READ_NO_MEMORY;
    }
    if (res != READ_OK) { /* nothing of it stays */
        stage->rows.n = rows0;
        stage->seqs.n = seqs0;
        stage->files.n = files0;
        free(files->files);
        memset(files, 0, sizeof *files);
    }
    return res;
}
