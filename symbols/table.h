/* Private to symbols/: the bottom layer, storage. The arena, string pool, growable arrays, maps and
 * sorts every layer shares (table.c); the flattened table the readers fill and the lookups read;
 * a stage, the batch of units a reader fills before units.c merges it into the table, and the
 * helpers the readers share to fill one (stage.c). Nothing here calls up into symbols/: the one
 * call out is the unit reader a caller passes to symt_read_units (a function pointer).
 * The layers above: loader.h (the table's loader: readers chosen, units read, the symbol table's
 * thread, the warning, the answers kept), readers.h (ELF, symbol table, code bytes, DWARF readers,
 * call frames), then units.h (units read on demand), then the lookups and open.c. */
#ifndef CMPROF_SYMBOLS_TABLE_H
#define CMPROF_SYMBOLS_TABLE_H

#include "symbols.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- a block arena: results handed out stay put until sym_close() ------------------------- */

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    bool pages; /* from symt_pages (else malloc) */
    _Alignas(16) unsigned char data[];
};

struct arena {
    struct arena_block *head;
    size_t bytes;
    bool huge; /* its first block is a 2 MB mapping (symt_pages): the answers of a large firmware */
};

void *symt_alloc(struct arena *a, size_t n);
/* Zeroed memory in whole 2 MB stretches of ordinary pages, mapped on their own (given back at once
 * when freed): for large tables. NULL when out of memory; freed with the same n. */
void *symt_pages(size_t n);
void symt_pages_free(void *p, size_t n);
/* Start fn(arg) on a thread that begins on another core than the caller's, then may move: a new
 * thread is placed beside its creator, and the two took turns on one core while the other idled
 * (1.4 ms lost at the open in most runs on a 2-core machine). False when no thread started. */
bool symt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);
void symt_arena_free(struct arena *a);
/* Whether a second thread pays: a core to spare (the load average, read once, at least one below
 * the cores). On a busy machine two threads that wait for each other wait for their turns on a
 * core too. CMPROF_READ_THREADS=1 or 2 forces either, for timing and for the tests. */
bool symt_core_to_spare(void);

/* ---- interned strings: equal strings are equal pointers ---------------------------------- */

struct pool_slot {
    const char *s;
    uint64_t hash; /* kept: growing the table and most mismatches need no string read */
};

struct strpool {
    struct arena arena;
    struct pool_slot *slots; /* open addressing on the string's hash */
    size_t cap, used;
};

const char *symt_intern(struct strpool *p, const char *s);
/* Make room for n more strings at once (one rehash instead of several); false when out of memory. */
bool symt_intern_reserve(struct strpool *p, size_t n);

/* ---- growable arrays --------------------------------------------------------------------- */

#define VEC(T)                                                                                                \
    struct {                                                                                                  \
        T *v;                                                                                                 \
        size_t n, cap;                                                                                        \
    }

bool symt_vec_grow(void **v, size_t *cap, size_t need, size_t elem);
/* Give back what an array reserved beyond its n items. */
void symt_vec_fit(void **v, size_t *cap, size_t n, size_t elem);

/* (the room check inline: growing is rare, pushing is per line row and per symbol) */
#define VEC_PUSH(vec, item)                                                                                   \
    (((vec).n < (vec).cap || symt_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v))      \
         ? ((vec).v[(vec).n++] = (item), true)                                                                \
         : false)

/* Room for `extra` more items at once (one allocation where pushes would double it several times). */
#define VEC_RESERVE(vec, extra) symt_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + (extra), sizeof *(vec).v)

/* ---- a map from pointers (interned strings) to values ------------------------------------- */

struct ptrmap {
    const void **keys;
    uintptr_t *vals;
    size_t cap, n;
};

/* The value slot of key, added (value 0) when absent: *added tells which. NULL when out of memory. */
uintptr_t *symt_ptrmap_slot(struct ptrmap *m, const void *key, bool *added);
void symt_ptrmap_free(struct ptrmap *m);

/* ---- a map from .debug_info offsets to names (abstract origins' names, cached) ----------- */

struct offmap {
    struct offmap_slot {
        uint64_t off;
        const char *name;
        bool used;
    } *v;
    size_t cap, n;
};

/* true with *name when off is in the map. */
bool symt_offmap_get(const struct offmap *m, uint64_t off, const char **name);
/* Add off -> name (absent before); false when out of memory. */
bool symt_offmap_put(struct offmap *m, uint64_t off, const char *name);
void symt_offmap_free(struct offmap *m);

/* qsort that accepts an empty (NULL) array */
void symt_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Index of the last element whose uint32_t key (at byte offset `key`) is <= addr, or -1. The
 * array is sorted by that key. */
/* Sort n elements of `size` bytes by the uint32_t at offset key, keeping the order of equal keys
 * (a radix sort: the symbol table's tens of thousands of entries, at every open). */
bool symt_sort_by_u32(void *v, size_t n, size_t size, size_t key);
long symt_last_le(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr);
/* The running maximum of the uint32_t at offset hi_at over the n elements of a sorted array: how far
 * back a search must look. NULL when out of memory. */
uint32_t *symt_running_max(const void *arr, size_t n, size_t elem, size_t hi_at);
#define LAST_LE(arr, n, addr, field) \
    symt_last_le((arr), (n), sizeof *(arr), offsetof(__typeof__(*(arr)), field), (addr))
/* The same, searching forward from index `from` when it is at or before the answer: addresses
 * taken in ascending order find theirs in a step or two. */
long symt_last_le_from(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr, long from);
/* Its common case inline: the answer is `from` or the entry after it. */
static inline long symt_last_le_near(const void *arr, size_t n, size_t elem, size_t key, uint32_t addr, long from)
{
    const unsigned char *base = arr;
    uint32_t v;
    if (from >= 0 && (size_t)from + 1 < n) {
        memcpy(&v, base + (size_t)from * elem + key, sizeof v);
        if (v <= addr) {
            memcpy(&v, base + ((size_t)from + 1) * elem + key, sizeof v);
            if (v > addr)
                return from;
        }
    }
    return symt_last_le_from(arr, n, elem, key, addr, from);
}
#define LAST_LE_FROM(arr, n, addr, field, from) \
    symt_last_le_near((arr), (n), sizeof *(arr), offsetof(__typeof__(*(arr)), field), (addr), (from))

/* ---- the table --------------------------------------------------------------------------- */

struct sym_clone {      /* a symbol of one of GCC's copies of a function: crc32.constprop.0 */
    const char *name;   /* the symbol */
    size_t base;        /* the source name's length: crc32 */
    unsigned kinds;     /* sym_clone_split's mask */
    bool original;      /* the ELF has a function symbol of the source name too */
};

struct func {
    uint32_t lo, hi;
    const char *name; /* interned, or in the kept string table until symt_func_name interns it */
    uint32_t order;   /* index in the ELF symbol table */
    uint8_t is_func;  /* STT_FUNC (else STT_NOTYPE) */
    uint8_t is_local; /* STB_LOCAL: binutils names such a symbol's file from the STT_FILE before it */
};

/* 16 bytes: a large firmware's units have millions of rows, and a lookup steps through them */
struct row {
    uint32_t addr;
    uint32_t line;
    uint32_t file; /* in its stage's files (0: none); in the table, files[seq.file_base + file] */
    uint32_t discriminator;
};

struct seq {
    uint32_t lo, hi;    /* [lo, hi) */
    uint32_t first, n;  /* rows, sorted by address (ties in table order): in a stage, rows.v[first, first + n) */
    uint32_t cu;        /* compilation unit, in .debug_info order */
    uint32_t file_base; /* in the table: where its stage's files begin in the table's */
    const struct row *rows; /* in the table: its n rows, where its stage read them */
    bool in_order;      /* its reader saw the rows come in order: the merge need not check them */
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
    union {
        struct {
            uint32_t in_first, in_n; /* a subprogram range: the inline ranges inside it, in inlines */
        };
        struct {            /* an inline range: */
            uint32_t reach; /* the highest hi of its subprogram's inline ranges up to it (a search
                               backwards from an address stops where none reaches it) */
            uint32_t chain; /* its scope and the scopes around it: an answer's frames */
        };
    };
};

struct unit_range {     /* addresses a compilation unit says it covers */
    uint32_t lo, hi;
    uint32_t unit;
};

enum unit_state { UNIT_UNLOADED, UNIT_PART, UNIT_LOADED, UNIT_FAILED }; /* UNIT_PART: some of its ranges read */
/* Each unit range is read on its own when the unit's other ranges are not needed: a sample in each
 * of a large firmware's units reads one function of each. */
enum range_state { RANGE_UNLOADED, RANGE_LOADING, RANGE_LOADED };

struct mode_mark {      /* an ARM mapping symbol: $a (A32 code follows), $t (Thumb), $d (data) */
    uint32_t addr;
    uint8_t mode;       /* MODE_ARM, MODE_THUMB, MODE_DATA */
};
enum { MODE_ARM, MODE_THUMB, MODE_DATA };

struct code_section {
    uint32_t lo, hi;
    uint8_t *bytes;    /* the section's size, its pages read from the file as they are first asked
                        * for (symt_code_need); NULL: not yet, or unreadable */
    uint64_t file_off;
    bool tried;
    uint8_t *have;     /* per 4 KB page of bytes: read yet? */
};

struct span {           /* an allocated section */
    uint32_t lo, hi;
};

struct cu_files {
    const char **files; /* indexed by file number - base */
    long n, base;
};

/* A batch of units as a reader leaves them (units.c merges it into the table), or the unit index
 * an index reader finds (moved into the table at the open). Scope parents and row indexes are
 * relative to the stage; its strings are interned in the pool its reader was given. */
struct sym_stage {
    VEC(struct row) rows;
    VEC(const char *) files;   /* each unit's file names in turn, each list led by NULL (none) */
    VEC(struct seq) seqs;
    VEC(struct scope) scopes;
    VEC(struct range) subs;    /* subprogram ranges, unsorted */
    VEC(struct range) inlines; /* inline ranges, unsorted */
    /* the unit index */
    size_t n_units;
    VEC(const char *) cu_names;
    VEC(struct unit_range) unit_ranges; /* unsorted */
    VEC(uint64_t) unit_hdrs;
    bool has_dwarf;
    char dwarf_error[256];     /* damage met on the way ("" when none) */
};

struct sym_loader; /* how the table is filled, and the answers kept: loader.h */

/* What the lookups read: the ELF's symbols, sections and code, and the units read so far, merged
 * into sorted arrays. How they are read (the readers, which units are in, the symbol table's
 * thread, the warning) and the answers and names made from them are the loader's (loader.h). */
struct sym_table {
    struct sym_loader *load;
    int code_fd;               /* the ELF kept open for its code bytes, read when first asked */
    struct strpool strings;
    VEC(struct func) funcs;
    VEC(struct func) labels;   /* FUNC and NOTYPE symbols: addr2line's fallback names */
    VEC(struct func) objects;  /* OBJECT symbols (variables), in address order (sym_object_at) */
    VEC(struct span) sections;
    VEC(struct mode_mark) modes; /* sorted by address */
    VEC(struct row *) row_blocks; /* each merged stage's rows, kept where its reader wrote them */
    VEC(const char *) files;   /* the rows' file names (interned): each stage's in turn, each list led by NULL (none) */
    size_t n_rows, row_bytes;
    VEC(struct seq) seqs;
    VEC(struct scope) scopes;
    VEC(struct range) subs;    /* subprogram ranges, sorted */
    VEC(struct range) inlines; /* inline ranges, grouped by subprogram range */
    uint32_t *sub_max_hi;      /* running maximum of subs[0..i].hi: how far back to look */
    uint32_t *seq_max_hi;      /* the same for sequences */
    size_t n_units;            /* compilation units, in .debug_info order */
    VEC(struct unit_range) unit_ranges; /* sorted by lo */
    VEC(uint64_t) unit_hdrs;   /* each unit's header offset in .debug_info */
    uint32_t *unit_max_hi;     /* running maximum of unit_ranges[0..i].hi */
    VEC(const char *) cu_names;  /* DW_AT_name of each unit: addr2line's file when no line row */
    VEC(struct code_section) code;
    uint32_t *vectors;         /* the vector table's words (handler addresses), host byte order */
    size_t n_vectors;
    uint8_t *build_id;
    size_t build_id_len;
    uint8_t *debug_frame;      /* .debug_frame's bytes (call-frame information), read when first */
    size_t debug_frame_len;    /* needed; NULL when the file no longer holds them */
    uint64_t debug_frame_off;
    struct frames *frames;     /* its FDE index, made on the first unwind (frames.c) */
    bool frames_failed;
};

/* ---- filling a stage (stage.c) ---------------------------------------------------------- */

/* A unit's file names, names[0..n), added to a stage's files (a NULL first when the list is new:
 * row file 0 names none): a row names names[k] as file index + k. 0 when out of memory. */
uint32_t symt_stage_files(struct sym_stage *stage, const char *const *names, size_t n);
/* A subprogram's or inlined instance's range into the stage's subs or inlines (code the linker
 * dropped at 0 is left out); false when out of memory. */
bool symt_stage_add_range(struct sym_stage *stage, uint32_t scope, uint32_t depth, bool inline_range, uint32_t lo,
                          uint32_t hi);
/* Whether a DW_AT_language mangles its names (C++, Rust, D...). */
bool symt_lang_mangles(unsigned lang);
/* Free a stage's arrays (it is empty after). */
void symt_stage_free(struct sym_stage *stage);
/* Move the unit index an index reader left in ix into t (n_units, cu_names, unit_ranges,
 * unit_hdrs; what t had is freed). */
void symt_stage_take_index(struct sym_table *t, struct sym_stage *ix);

/* A unit to read: its number (in .debug_info order) and its header's offset, by which every
 * reader finds it, whoever numbered the units. */
struct unit_ref {
    uint64_t hdr;
    uint32_t id, pad;
};

/* What a reader did with its part of the file (a unit, a line program, the symbol table): the one
 * result of symbols/ with three outcomes (the others are bool: false is out of memory, or a refusal
 * whose reason is kept in a buffer). */
enum read_result {
    READ_OK,        /* read (into the stage) */
    READ_LEFT,      /* not read here (a shape it does not take, damage): another reader's turn, and the
                     * caller drops what was added */
    READ_NO_MEMORY,
};

/* Reads one unit into stage (strings in pool) and its file table into files. worker is 0 or 1. */
struct unit_reader {
    enum read_result (*read)(void *ctx, int worker, struct sym_stage *stage, struct strpool *pool,
                             const struct unit_ref *ref, struct cu_files *files);
    void *ctx;
    int workers; /* 1 or 2: libdwarf 20210528 crashes now and then with two threads, even on two handles */
};

/* Read units refs[0..n) into stage and, on a second thread, into second (NULL: one thread), every
 * string in pool: units are shared out one at a time; call sites get their file names. read[k]
 * (may be NULL) tells which were read. False when out of memory. */
bool symt_read_units(const struct unit_reader *reader, struct sym_stage *stage, struct sym_stage *second,
                     struct strpool *pool, const struct unit_ref *refs, size_t n, bool *read);

#endif
