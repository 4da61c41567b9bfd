/* Private to symbols/: the table's loader, the layer above the table (table.h). What the table is
 * read with and how far (the readers open.c chose, the units and ranges read, the symbol table's
 * thread), why it is incomplete (the warning), and what the lookups make from it and keep (answers,
 * callers' frames, display names). A lookup reads struct sym_table; these are for the code that
 * fills it (readers.h, units.h, open.c) and for the answers' caches (lookup.c, demangle.c). */
#ifndef CMPROF_SYMBOLS_LOADER_H
#define CMPROF_SYMBOLS_LOADER_H

#include "table.h"

struct symtab_job;

/* Where the table's units come from after the open: the readers open.c chose (units.c uses them). */
struct unit_source {
    struct raw_dwarf *raw;     /* the fast reader (in this process), when the file suits it */
    struct ldw_reader *reader; /* libdwarf in this process (NULL: in the child, or none) */
    bool isolated;             /* libdwarf runs in a child process */
    int child;                 /* that child's pid, to end at sym_close (0: none) */
    int sock;                  /* requests to it and its replies (-1: none) */
    bool dead;                 /* the child failed: no more units can be loaded */
};

struct cache_slot {
    uint32_t addr;
    struct sym_location *loc;
};

/* An STT_FILE symbol: where in the symbol table, and its name (interned) */
struct file_mark {
    uint32_t index;
    const char *name;
};

/* A function symbol under the hash of its source name (GCC's copies under their function's):
 * samename.c */
struct named_symbol {
    uint32_t hash;
    uint32_t fn; /* in funcs */
};

struct sym_loader {
    /* ---- reading ---- */
    char *path;                /* the ELF, for warnings */
    bool has_dwarf;
    char dwarf_error[256];     /* why DWARF is missing or partial: crash, damage, compression */
    bool dwarf_skip;           /* the ELF part found DWARF we must not hand to libdwarf */
    struct unit_source src;
    struct symtab_job *symbols; /* the symbol table, read on a thread from sym_open on (symtab.c) */
    bool symbols_failed;       /* out of memory while the symbol table's thread read it (set at its join) */
    bool names_later;          /* sym_set_symbol_names(0): the functions' extents at the open, the rest when asked;
                                * answers without `symbol` */
    bool labels_follow;        /* while the symbol table is read: labels so far are funcs so far (not copied);
                                * after, labels.v may be funcs.v itself (sized functions only, no aliases) */
    const char *unknown_name;  /* "??", interned: what a function symbol without a name is called */
    VEC(struct file_mark) file_marks; /* the STT_FILE symbols, in table order (symt_file_before) */
    uint32_t files_after_symbols; /* index of the first STT_FILE after another symbol (0: none) */
    bool symbol_seen;          /* while the table is read: a symbol other than STT_FILE came */
    char *strtab;              /* the ELF's string table, when kept: symbol names point into it */
    size_t strtab_len;         /* until symt_func_name interns them */
    uint32_t vectors_at;       /* address of the section the vector table came from; named sections win */
    bool vectors_named;
    uint8_t *unit_state;       /* enum unit_state of each unit */
    size_t units_loaded;       /* units read in whole or in part */
    uint8_t *range_state;      /* enum range_state of each of the table's unit_ranges */
    uint32_t *unit_left;       /* per unit: its ranges not read yet */
    size_t ranges_loaded;
    size_t loads;              /* batches read so far: a lookup's hints hold while it stays */
    size_t units_fast;         /* of those, read by the fast reader */
    char warning[320];         /* sym_warning's text ("" when none) */
    /* ---- answers made and kept (results stay until sym_close) ---- */
    struct arena results;
    VEC(const struct sym_frame *) outer_frames; /* per scope: its answers' callers' frames, made on first use */
    struct cache_slot *cache;  /* answers outside the code range, hashed by address */
    size_t cache_cap, cache_used;
    /* the answers, in blocks of their own (lookup.c): an answer's handle, 1 + its number, takes 32
     * bits where a pointer takes 64 */
    VEC(struct sym_location *) answer_blocks;
    size_t n_answers;
    /* answers in the code range, one slot per halfword from by_pc_lo, each an answer's handle (0:
     * none yet): sorted lookups walk it in order, where a hash scatters them (calloc'd: untouched
     * pages cost nothing) */
    uint32_t *by_pc;
    uint64_t *by_pc_written; /* a bit per 4 KB of slots: written yet? (else they read as 0, unread) */
    uint32_t by_pc_lo, by_pc_n;
    size_t by_pc_used;
    bool by_pc_tried;
    struct ptrmap demangled;   /* interned linkage name -> interned display name */
    struct ptrmap shown[2];    /* interned function name -> its name as linked [0], for people [1] */
    struct sym_clone *clones;  /* GCC's copies (crc32.constprop.0), by source name, made when first */
    size_t n_clones;           /* asked (demangle.c) */
    bool clones_made;
    /* functions of one name told apart (lookup.c, samename.c) */
    struct ptrmap symbol_files; /* function symbol -> the file it is defined in (interned; unknown_name: not known) */
    struct ptrmap plain_paths;  /* interned path -> the same with "." and ".." taken out, interned */
    struct ptrmap name_files;   /* a frame's function name -> what sym_function_label needs to know of it */
    struct named_symbol *by_name; /* the function symbols by their source names' hashes, made when first asked */
    size_t n_by_name;
    bool by_name_made;
};

/* Rebuild the warning from what is known (at the open, when a unit load fails, when the symbol
 * table's thread is joined). The caller has waited for that thread. */
void symt_set_warning(struct sym_table *t);

#endif
