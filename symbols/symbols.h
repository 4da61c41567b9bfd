/* Address -> function, source line and inline chain, from an ARM ELF's symbol table (libelf)
 * and DWARF 4/5 (libdwarf). Opening reads the symbol table and the index of compilation units;
 * a unit's lines and inline tree are read the first time a lookup falls in it, into sorted
 * arrays: over the one or two of its functions the lookups need, or whole. Lookups use binary
 * search and a per-address cache. */
#ifndef CMPROF_SYMBOLS_H
#define CMPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_table;

/* One frame of an inline chain. Frame 0 is the innermost function with the address's own
 * line; each next frame is the caller, with the line of the call site. */
struct sym_frame {
    const char *function; /* "??" when unknown */
    const char *file;     /* full path as DWARF gives it, "??" when unknown */
    uint32_t line;        /* 0 when unknown */
    uint16_t function_len, file_len; /* their lengths, kept for printing; 0: not kept (ask strlen) */
};

/* What an address resolves to. Addresses with the same answer may share one. Frame i is
 * sym_frame_at(loc, i): frame 0 is the answer's own, the callers' frames are shared by every
 * answer in the same inlined scope (they depend on the scope alone). */
struct sym_location {
    struct sym_frame first;          /* frame 0 */
    const struct sym_frame *outer;   /* frames 1 .. n_frames - 1 */
    uint32_t n_frames;               /* >= 1 */
    uint32_t discriminator;          /* of frame 0's line, 0 when none */
    const char *symbol;              /* ELF function symbol containing addr, or NULL */
    uint32_t symbol_start;
    int known;                       /* 0: nothing at all is known about addr */
};

static inline const struct sym_frame *sym_frame_at(const struct sym_location *loc, uint32_t i)
{
    return i ? &loc->outer[i - 1] : &loc->first;
}

/* Open an ELF. On failure returns NULL and writes a one-line reason naming the file to err. */
struct sym_table *sym_open(const char *path, char *err, size_t errlen);
void sym_close(struct sym_table *t);
/* For a process about to exit: end what the table runs beside this process (the symbol table's
 * thread, the DWARF child) but free none of its memory, which the kernel takes back whole at the
 * exit. Freeing a large firmware's tables block by block cost --resolve 0.5 ms. The table is not
 * used after. */
void sym_end(struct sym_table *t);

/* DWARF is read in a child process by default, so that a crash or hang inside libdwarf on a
 * damaged file costs only the DWARF (a warning), never the tool. 0 reads it in this process:
 * for the fuzzer, which needs the coverage, and for debugging. */
void sym_set_isolation(int on);

/* DWARF is read straight from the section bytes where its shapes allow (nearly always), else
 * by libdwarf. 0: libdwarf reads every unit (the reference the fast reader is tested against). */
void sym_set_fast_reader(int on);

/* 0: tables opened from now on read only their function symbols' extents at the open (what
 * DWARF's subprograms are checked against, and what a lookup searches); the symbols' names, the
 * labels, variables and mapping symbols are read the first time something asks for them, and
 * answers leave `symbol` NULL. For addr2line's answers (--resolve), which name DWARF's functions:
 * the names were a megabyte read and sorted at every open of a large firmware. 1 (the default):
 * the whole symbol table at the open. */
void sym_set_symbol_names(int on);

/* 1: tables opened from now on map the ELF's DWARF sections (read-only) where they would copy them
 * from the file with pread: their pages come from the page cache 64 KB at a fault, where each copied
 * page was a fresh one. For a process that ends soon after (--resolve): a file cut short while a
 * table is open would fault the process (SIGBUS) where reads only fail, so a view, which outlives
 * rebuilds of its firmware, keeps 0 (the default). */
void sym_set_mapped_reads(int on);

/* A warning about missing symbols or DWARF ("" when none). */
const char *sym_warning(const struct sym_table *t);

/* Resolve an address (Thumb bit ignored). The result stays valid until sym_close(). */
const struct sym_location *sym_lookup(struct sym_table *t, uint32_t addr);

/* Resolve n addresses at once into out[0..n): those answered before at once, then for the others
 * the units they need read in one batch, and the addresses taken in address order, so neighbours
 * share the searches' cache lines. */
void sym_lookup_many(struct sym_table *t, const uint32_t *addrs, size_t n, const struct sym_location **out);

/* Read, in one batch, the compilation units that lookups of these addresses will need: faster
 * than unit by unit when many addresses are known at once. Lookups work without it. */
void sym_prefetch(struct sym_table *t, const uint32_t *addrs, size_t n);
/* Read every unit that is not read yet. */
void sym_read_all(struct sym_table *t);

/* The ELF function symbol that contains addr, else the first one after it: its [lo, hi).
 * Returns 0 when there is none. */
int sym_function_from(const struct sym_table *t, uint32_t addr, uint32_t *lo, uint32_t *hi);

/* The ELF function symbol called name (the first of that name): its [lo, hi). Returns 0 when there
 * is none. A pass over the symbols: for a few names once, not per sample. */
int sym_function_named(struct sym_table *t, const char *name, uint32_t *lo, uint32_t *hi);

/* The demangled form of a C++ or Rust linkage name, as addr2line -C prints it; any other name
 * comes back unchanged. Valid until sym_close(). */
const char *sym_demangle(struct sym_table *t, const char *name);

/* GCC's copies of a function (-fipa-cp-clone, IPA-SRA, partial inlining, hot/cold splitting) are
 * named after it: "crc32.constprop.0", "f.isra.0", "f.part.0.cold". For such a name: the length
 * of the source name before the suffixes, and the kinds of copy as a mask in *kinds; 0 (and no
 * kinds) for any other name. */
size_t sym_clone_split(const char *name, unsigned *kinds);
/* The kinds of copy the ELF has of a source function (its symbols named function.KIND...), as a
 * mask; 0 when it has none. */
unsigned sym_clone_kinds(const struct sym_table *t, const char *function);
/* A mask of kinds as people read it: "constprop", "part, cold". Returns buf. */
const char *sym_clone_text(unsigned kinds, char *buf, size_t len);
/* The one naming rule for a function (a row's, a frame's) in every view, report and export.
 * For people (demangling on): C++ and Rust demangled, GCC's copies noted after the source name:
 * "crc32 [constprop]" for a function the ELF has copies of, "crc32 [constprop.0]" for a name that
 * is a copy's own symbol. As linked (off): the ELF's symbols as they are: "crc32.constprop.0" for
 * a function whose code is that copy, several joined by ", " ("crc32, crc32.part.0"). A name that
 * carries its file (sym_function_label) keeps it after the function's name, before a copy's note:
 * "crc32 (a.c) [constprop]". Any other name comes back unchanged. Valid until sym_close(). */
const char *sym_shown_name(struct sym_table *t, const char *name, bool for_people);

/* Functions of one name in several files (static functions: FreeRTOS's demos have many) are told
 * apart by the file each is defined in. sym_function_file: that file for the code at addr, the same
 * for every address of a function whatever line information each has: the file of the line where
 * the ELF symbol that names the code starts (the function symbol that contains addr, else the
 * symbol before it, as addr2line names an address past a symbol's end), by its line row or its
 * inline chain's call site; "??" when neither says. Paths are interned with "." and ".." taken out:
 * one file, one pointer. */
const char *sym_function_file(struct sym_table *t, uint32_t addr);
/* The name a row or a view gives frame `function` (a frame's name as sym_lookup gives it) of the
 * code at addr: the name itself, unless the ELF's function symbols of that source name (GCC's copies
 * counted as their function's) are in two files or more: then "name (file)", the file by
 * sym_function_file for addr, by its base name or, when two of the name's files share that, its
 * path ("name (??)" when not known). Such a frame is of the one function in that file: an inlined
 * copy of a static function is in a function of its own file. Valid until sym_close(). */
const char *sym_function_label(struct sym_table *t, const char *function, uint32_t addr);
/* A name that may carry its file as sym_function_label writes it: the length of the function's name
 * in it, and in *file the file (*file_len characters; NULL when the name carries none). */
size_t sym_name_part(const char *name, const char **file, size_t *file_len);

/* The name of exception n's handler, from the ELF's vector table (n = 2..511: NMI, faults, SVC,
 * PendSV, SysTick, IRQ n - 16), or NULL when the table or the name is not known, or when the
 * handler serves other vectors too (a default handler with weak aliases: no name is sure). */
const char *sym_exception_handler(struct sym_table *t, uint32_t n);

/* 1 when the code at addr is A32 (ARM state), by the ELF's mapping symbols ($a, $t); 0 for Thumb,
 * data, or an ELF without them (Cortex-M code is all Thumb). */
int sym_is_arm(const struct sym_table *t, uint32_t addr);

/* Walk a halted core's stack with the ELF's call-frame information (.debug_frame): regs are r0-r15
 * as read from the core, read32 reads a word of its memory (false: unreadable). Writes up to max
 * frames to out, the innermost caller first: each a call site (an address inside the call
 * instruction), or the interrupted instruction where an exception handler's caller was on the
 * main stack. Stops where the information ends, a read fails or the stack does not grow back, and
 * at a return to code on the process stack, setting *psp_return (when not NULL; 0 otherwise) to
 * the EXC_RETURN value that sent it there: the caller may then read PSP's frame, whose size that
 * value gives, and walk on from it. Returns how many it wrote. A Secure context's frame with FP state
 * holds S16-S31 too when FPCCR.TS is set (ARMv8-M): read32 is asked for SYM_FPCCR then, and a false
 * answer sizes the frame as with TS clear. */
#define SYM_FPCCR 0xE000EF34u
#define SYM_FPCCR_TS (1u << 26)
size_t sym_unwind(struct sym_table *t, const uint32_t regs[16],
                  bool (*read32)(void *ctx, uint32_t addr, uint32_t *value), void *ctx, uint32_t *out, size_t max,
                  uint32_t *psp_return);

/* A sample's stack evidence from a firmware sampler (cmprof_stack.c): the interrupted PC and LR, how
 * many words above the interrupted SP it looked at, and the (word index, word) pairs of those that
 * looked like Thumb return addresses into the code, by rising index. A pair whose word is
 * SYM_FRAME_POINTER_WORD says instead that the interrupted r7 pointed at that word (a frame
 * pointer into the scanned stack); the word itself was no return address. */
#define SYM_FRAME_POINTER_WORD 0xFFFFFFFEu
struct sym_stack_words {
    uint32_t pc, lr;
    uint32_t scanned;
    size_t n;
    const uint32_t *pairs;
};
/* The sample's callers from that evidence and the ELF's call-frame information (.debug_frame), as
 * sym_unwind writes them. Each frame is proven: the CFI at its PC says at which offset from the SP
 * its return address lies (or that it is still in LR), and a return address was seen exactly there;
 * a word anywhere else is never taken. A CFA on r7 (a frame pointer) is followed while r7's offset
 * is known: from the evidence, and unchanged up the walk until a frame restores r7 from the stack.
 * The walk ends where a frame cannot be proven (no CFI, a CFA on another register than SP, or on r7
 * when its offset is not known, no return address where it must lie, or beyond the words scanned):
 * then *unproven is set. It ends proven in the reset handler, at an exception's entry (EXC_RETURN),
 * and at a return address a function starts at (an RTOS task's exit trap). */
size_t sym_unwind_words(struct sym_table *t, const struct sym_stack_words *w, uint32_t *out, size_t max,
                        bool *unproven);

/* 1 when addr lies in an executable section of the ELF. */
int sym_in_code(const struct sym_table *t, uint32_t addr);
/* A variable's address and size, from the symbol table; 0 when there is no such object. */
int sym_object(const struct sym_table *t, const char *name, uint32_t *addr, uint32_t *size);
/* The variable whose storage holds addr, the last to start at or before it (its name, *offset into
 * it); NULL when that one ends before addr. */
const char *sym_object_at(const struct sym_table *t, uint32_t addr, uint32_t *offset);
/* Where a task's name lies in the control block a task pointer variable points to, from the
 * ELF's DWARF: the offset of FreeRTOS's pcTaskName (or a member called name or task_name), *member
 * naming it; -1 when the variable, its structure or such a member is not found. */
long sym_task_name_offset(struct sym_table *t, const char *var, const char **member);
/* Whether the variable holds one value by its DWARF type (a pointer or a number): 1 yes, 0 no (a
 * structure, union or array), -1 not known (no DWARF for it). */
int sym_object_is_scalar(struct sym_table *t, const char *var);
/* The lowest and end address of the code sections together; 0 when there is no code. */
int sym_code_span(const struct sym_table *t, uint32_t *lo, uint32_t *hi);

/* Copy n bytes of the ELF's code at addr; returns the number copied (0 outside code). */
size_t sym_read_code(struct sym_table *t, uint32_t addr, uint8_t *buf, size_t n);

/* The GNU build-id note, or NULL (len 0). */
const uint8_t *sym_build_id(const struct sym_table *t, size_t *len);

struct sym_stats {
    size_t functions;     /* ELF function symbols */
    size_t line_rows;
    size_t scopes;        /* DWARF subprograms and inlined instances */
    size_t cache_entries;
    size_t units, units_loaded; /* compilation units: read (in part or whole) when a lookup first needs one */
    size_t units_fast;          /* units read by the fast reader (the rest by libdwarf) */
    size_t bytes;         /* memory held by the table */
};
void sym_get_stats(const struct sym_table *t, struct sym_stats *out);

#endif
