/* Private to symbols/: the flattened table that the loader stages fill and the lookups read, and
 * the arena, string pool and growable arrays they share. Stages, in order: symt_elf_load (symbol
 * table, sections, build-id), dwarf_load or dwarf_load_isolated (lines and scopes), symt_index. */
#ifndef CMPROF_SYMBOLS_TABLE_H
#define CMPROF_SYMBOLS_TABLE_H

#include "symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

void *symt_alloc(struct arena *a, size_t n);
void symt_arena_free(struct arena *a);

/* ---- interned strings: equal strings are equal pointers ---------------------------------- */

struct strpool {
    struct arena arena;
    const char **slots; /* open addressing on the string's hash */
    size_t cap, used;
};

const char *symt_intern(struct strpool *p, const char *s);

/* ---- growable arrays --------------------------------------------------------------------- */

#define VEC(T)                                                                                                \
    struct {                                                                                                  \
        T *v;                                                                                                 \
        size_t n, cap;                                                                                        \
    }

bool symt_vec_grow(void **v, size_t *cap, size_t need, size_t elem);

#define VEC_PUSH(vec, item)                                                                                   \
    (symt_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) ? ((vec).v[(vec).n++] = (item), true) \
                                                                          : false)

/* ---- a map from pointers (interned strings) to values ------------------------------------- */

struct ptrmap {
    const void **keys;
    uintptr_t *vals;
    size_t cap, n;
};

/* The value slot of key, added (value 0) when absent: *added tells which. NULL when out of memory. */
uintptr_t *symt_ptrmap_slot(struct ptrmap *m, const void *key, bool *added);
void symt_ptrmap_free(struct ptrmap *m);

/* qsort that accepts an empty (NULL) array */
void symt_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Index of the last element whose uint32_t key (at byte offset `key`) is <= addr, or -1. The
 * array is sorted by that key. */
long symt_last_le(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr);
#define LAST_LE(arr, n, addr, field) \
    symt_last_le((arr), (n), sizeof *(arr), offsetof(__typeof__(*(arr)), field), (addr))

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
    bool plain_name;    /* a C++/Rust scope named by DW_AT_name, not by a linkage name */
    uint32_t low;       /* lowest address of its ranges (UINT32_MAX: none) */
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
    char warning[320];
    char dwarf_error[256];     /* why DWARF is missing or partial: crash, damage, compression */
    bool dwarf_skip;           /* the ELF part found DWARF we must not hand to libdwarf */
    int dwarf_child;           /* the DWARF loader's pid, to reap at sym_close (0: none) */
    struct strpool strings;
    struct arena results;
    VEC(struct func) funcs;
    VEC(struct func) labels;   /* FUNC and NOTYPE symbols: addr2line's fallback names */
    VEC(struct func) objects;  /* OBJECT symbols (variables), by name for sym_object() */
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
    uint32_t *vectors;         /* the vector table's words (handler addresses), host byte order */
    size_t n_vectors;
    uint32_t vectors_at;       /* address of the section it came from; named sections win */
    bool vectors_named;
    uint8_t *build_id;
    size_t build_id_len;
    struct ptrmap demangled;   /* interned linkage name -> interned display name */
    struct cache_slot *cache;
    size_t cache_cap, cache_used;
};

/* ELF part: sections, code bytes, build-id, function symbols. False on a malformed ELF or no
 * memory, with the reason in t->warning. */
bool symt_elf_load(struct sym_table *t, void *elf);

/* DWARF part, in this process: lines, scopes and ranges, unit names. Returns false when out of
 * memory; a damaged DWARF is not a failure but leaves its first error in t->dwarf_error. */
bool dwarf_load(struct sym_table *t, const char *path, bool *has_dwarf);

/* The same in a child process that hands back the flattened tables, so that a crash or hang in
 * libdwarf costs only the DWARF: then false with the reason in t->dwarf_error. */
bool dwarf_load_isolated(struct sym_table *t, const char *path, bool *has_dwarf);

/* Sort and index what the loaders filled. */
bool symt_index(struct sym_table *t);

/* Wait for the DWARF child to end (it has sent its reply and is tearing its memory down, which
 * sym_open overlaps with symt_index), so no zombie outlives sym_open. */
void symt_reap(struct sym_table *t);

#endif
