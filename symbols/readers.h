/* Private to symbols/: the readers, the layer above the table and its loader (table.h, loader.h).
 * Each reads one part of the ELF into the table or into a stage, and calls only the table, stage.c
 * and readers listed before it here; none calls the units layer (units.h), the lookups or open.c. */
#ifndef CMPROF_SYMBOLS_READERS_H
#define CMPROF_SYMBOLS_READERS_H

#include "loader.h"

/* ---- the symbol table (symtab.c) --------------------------------------------------------- */

/* n_symtabs SHT_SYMTAB sections, the first at first_symtab (libelf handles). It may go on being
 * read on a thread after this returns: see symt_symbols_wait. False when out of memory. */
bool symt_symtab_load(struct sym_table *t, void *elf, void *first_symtab, size_t n_symtabs);

/* The symbol table may still be read on a thread after sym_open: whatever reads funcs, labels,
 * objects, modes or strtab waits for it first. */
void symt_symbols_join(struct symtab_job *job);
static inline void symt_symbols_wait(const struct sym_table *t)
{
    if (t->load->symbols)
        symt_symbols_join(t->load->symbols);
}
bool symt_symbols_read(const struct sym_table *t); /* it is in (no thread reads it), or the part the warning needs */
/* What needs the function symbols' extents alone (funcs' lo, hi) waits here: for the thread, but
 * without reading the names that names_later leaves for later. */
void symt_funcs_wait(const struct sym_table *t);
void symt_symbols_free(struct sym_table *t);

/* The ELF function symbol containing addr, or NULL; *until: the address below which that answer
 * holds (where the next symbol starts or the one found ends). hint: as LAST_LE_FROM's, kept
 * between calls with ascending addresses (NULL: a plain search). */
const struct func *symt_func_at(const struct sym_table *t, uint32_t addr, long *hint, uint64_t *until);
const struct func *symt_func_for(const struct sym_table *t, uint32_t addr); /* the same, no hint */
/* The file binutils names for function symbol f where no DWARF covers it: the STT_FILE symbol
 * before it in the table (none for a global one after a file symbol that followed another symbol),
 * or NULL. Needs the whole symbol table read (symt_symbols_wait, and the names: symt_func_name). */
const char *symt_file_before(const struct sym_table *t, const struct func *f);
/* Does name point into the kept string table? */
bool symt_elf_name_kept(const struct sym_table *t, const char *name);

/* ---- the ELF: sections, vectors, build-id (elf.c) ---------------------------------------- */

/* Open path, check that it is a whole 32-bit ARM ELF, and read its sections, vector table and
 * build-id into t, then its symbol table (symt_symtab_load). t->code_fd keeps the file. False with
 * one line naming the file in err. */
bool symt_elf_open(struct sym_table *t, const char *path, char *err, size_t errlen);

/* ---- the code bytes (code.c) ------------------------------------------------------------- */

/* Make room for a code section's bytes (once; on failure it stays without). */
void symt_code_load(struct sym_table *t, struct code_section *c);
/* Read its bytes [lo, hi) (addresses, clamped to the section) from the ELF, if not read yet: a
 * profile needs a few functions' code, not a large firmware's megabytes. False when the file no
 * longer holds them. */
bool symt_code_need(struct sym_table *t, struct code_section *c, uint32_t lo, uint32_t hi);

/* ---- DWARF through libdwarf (dwarf.c), for the units the fast reader leaves --------------- */

/* ldw_open returns NULL when there is no DWARF (has_dwarf false) or libdwarf refuses it (then why
 * holds the warning's one line; else ""). */
struct ldw_reader;
struct ldw_reader *ldw_open(const char *path, bool *has_dwarf, char *why, size_t len);
void ldw_close(struct ldw_reader *r);
/* The unit index, from unit headers and root DIEs only, into ix (n_units, unit_ranges, cu_names,
 * unit_hdrs, dwarf_error), strings in pool. False when out of memory. */
bool ldw_index(struct ldw_reader *r, struct sym_stage *ix, struct strpool *pool);
/* Lines and scopes of the units into stage, strings in pool. Damage goes to stage->dwarf_error. */
bool ldw_load_units(struct ldw_reader *r, struct sym_stage *stage, struct strpool *pool, const struct unit_ref *refs,
                    size_t n);

/* ---- DWARF read straight from the section bytes (rawdwarf.c, rawscopes.c, rawlines.c) ----- */

/* For the shapes compilers commonly emit (rawdwarf.h has what those files share); a unit it leaves
 * goes to libdwarf. */
struct raw_dwarf;
struct raw_dwarf *raw_open(const char *path); /* NULL: libdwarf reads every unit */
/* raw_open with the file mapped (read-only) in place of the sections' buffers: their bytes are the
 * page cache's own pages, mapped 64 KB at a fault, never copied. Only for a process that ends soon
 * after (--resolve): a file cut short while mapped faults the reader (SIGBUS), where pread fails. */
struct raw_dwarf *raw_open_mapped(const char *path);
void raw_close(struct raw_dwarf *d);
/* The unit index, as ldw_index: each unit's ranges from its .debug_aranges set, else from its root
 * DIE; false when any unit without a set is not readable here (then libdwarf makes the index). A
 * range outside the allocated sections (sections[0..n_sections)) is damage. A unit indexed from
 * its set has no name in cu_names until raw_unit_name is asked. */
bool raw_index(struct raw_dwarf *d, const struct span *sections, size_t n_sections, struct sym_stage *ix,
               struct strpool *pool);
/* The DW_AT_name of the unit at .debug_info offset hdr, interned; NULL when it has none or the
 * fast reader cannot read its root. */
const char *raw_unit_name(struct raw_dwarf *d, uint64_t hdr, struct strpool *pool);
/* The offset of the first of members[] found in the structure that variable var points to
 * (through typedefs and qualifiers), *found naming it; -1 when none. */
long raw_pointee_member(struct raw_dwarf *d, const char *var, const char *const *members, size_t n_members,
                        const char **found);
/* Whether variable var holds one value (a pointer or a number, through typedefs and qualifiers): 1
 * yes, 0 no (a structure, union or array), -1 not known (no such variable with a type). */
int raw_variable_is_scalar(struct raw_dwarf *d, const char *var);
/* The unit_reader's read for this reader (ctx: the raw_dwarf). */
enum read_result raw_read(void *ctx, int worker, struct sym_stage *stage, struct strpool *pool,
                          const struct unit_ref *ref, struct cu_files *files);
/* The same over windows of the unit's addresses, win[0..n_win) (sorted by lo; n_win 0: all of it):
 * the subprograms and line sequences with code in them (and perhaps others: the caller clips). */
enum read_result raw_read_part(struct raw_dwarf *d, int worker, struct sym_stage *stage, struct strpool *pool,
                               const struct unit_ref *ref, struct cu_files *files, const struct unit_range *win,
                               size_t n_win);

/* ---- libdwarf in a child process (isolate.c) --------------------------------------------- */

/* So that a crash or hang in libdwarf costs only the DWARF. Start: fork the child and, with
 * want_index, take its unit index into t (false only when no child can start; a failed child
 * leaves the reason in t->load->dwarf_error). Fetch: the child's stage for refs. */
bool isolate_start(struct sym_table *t, const char *path, bool want_index);
bool isolate_fetch(struct sym_table *t, struct sym_stage *stage, const struct unit_ref *refs, size_t n);
void isolate_end(struct sym_table *t);

/* ---- call frames (frames.c; sym_unwind is public) ----------------------------------------- */

void symt_frames_free(struct sym_table *t);

#endif
