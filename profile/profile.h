/* The profile model: sample counts per PC and tag, grouped by function, line, file or task,
 * each share with its 95 % confidence interval, and the diagnostics that explain a profile that
 * cannot be trusted. No I/O: the views (batch report, TUI) read rows and diagnostics from here. */
#ifndef CMPROF_PROFILE_H
#define CMPROF_PROFILE_H

#include "../symbols/symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct prof;

enum prof_group { PROF_BY_FUNCTION, PROF_BY_LINE, PROF_BY_FILE, PROF_BY_TASK, PROF_BY_ADDRESS };

#define PROF_UNTAGGED "(no tag)" /* the task row of samples that carry no task */
#define PROF_ISR_PREFIX "ISR: "   /* task rows of interrupt time begin so */

struct prof_row {
    const char *name;   /* function, "file:line", file, or task */
    const char *file;   /* for function and line rows, else NULL */
    uint32_t line;      /* for line rows */
    double samples;     /* fractional when histogram buckets were spread */
    double share;       /* of all samples, 0..1 */
    double ci95;        /* half-width of the 95 % interval, 0..1 */
    double lo95, hi95;  /* the 95 % interval itself (Wilson's: inside [0, 1], honest at small N) */
    bool approximate;   /* some of it came from a bucket that straddles a function boundary */
    bool inlined;       /* function rows: some of its samples are in copies inlined into callers */
    uint32_t instances; /* task rows: the tasks (tags) of this name, all in this one row; else 0 */
};
/* Whether task rows name no task but PROF_UNTAGGED (interrupt time aside): the samples carry no task. */
bool prof_rows_untagged(const struct prof_row *rows, size_t n);

enum prof_diag_kind { DIAG_LOCKSTEP, DIAG_SKID, DIAG_WRONG_ELF, DIAG_WRONG_STACK, DIAG_BUILD_ID, DIAG_NOT_STARTS,
                     DIAG_UNNAMED_TAGS, DIAG_MEMORY_FAULT, DIAG_LOSS_BIAS };

struct prof_diag {
    enum prof_diag_kind kind;
    char text[448];     /* one sentence with its evidence */
};

/* The instruction before pc when it re-enables interrupts ("cpsie i", "msr primask", ...), else
 * NULL: samples on pc then include time spent with interrupts disabled (skid). */
const char *prof_skid_cause(const struct prof *p, uint32_t pc);

/* Zephyr's idle wait (arch_cpu_idle: wfi with interrupts masked, then cpsie i): the sampling
 * interrupt that ends the wait is taken right after the cpsie i, so every idle sample would sit
 * there, as if interrupts-off code ran before it. The address of that resume point (after the first
 * cpsie i that follows a wfi in arch_cpu_idle), *entry the function's; 0 without one. */
uint32_t prof_idle_resume(struct sym_table *syms, uint32_t *entry);
/* The same from arch_cpu_idle's code (Thumb, halfwords from its entry): the resume point's offset
 * in bytes, 0 without one. */
uint32_t prof_idle_resume_in(const uint16_t *code, uint32_t halfwords);

/* syms may be NULL: rows then name raw addresses. */
struct prof *prof_new(struct sym_table *syms);
void prof_free(struct prof *p);
void prof_reset(struct prof *p);
/* p keeps no ring of its recent PCs (32 KB) of its own: it takes every sample `whole` takes, from its
 * own start or reset on, so its last PCs are the last ones of whole's ring (the live view's window
 * beside the whole run's profile). Before whole moves on past p's samples (p takes no more),
 * prof_order_done(p) does now what needs them. */
void prof_share_order(struct prof *p, const struct prof *whole);
void prof_order_done(struct prof *p);

void prof_add_pc(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag);
/* n untagged samples at once: the same as n calls of prof_add_pc. */
void prof_add_pcs(struct prof *p, const uint32_t *pcs, size_t n);
void prof_add_sleep(struct prof *p);
/* A histogram bucket: count samples spread over [addr, addr + size) by byte share. */
void prof_add_bucket(struct prof *p, uint32_t addr, uint32_t size, uint64_t count);
void prof_task_name(struct prof *p, uint32_t tag, const char *name, size_t len);
/* A stream index's first name came (after prof_task_name for tag): the samples that carried
 * pending (EV_TAG_PENDING of that index) while they waited for it become tag's task's. */
void prof_task_pending_named(struct prof *p, uint32_t pending, uint32_t tag);
/* A stream line that may have named tasks was dropped (EV_NAMES_UNSURE): pending indexes' samples
 * wait for their next name, whatever name the index had before. */
void prof_task_names_unsure(struct prof *p);
/* The samples that carried pending while they waited get no name: their task's was lost
 * (EV_TASK_UNKNOWN). They join one row, "(task unknown: ...)". */
void prof_task_unknown(struct prof *p, uint32_t pending);
/* The build-id the stream announced (compared with the ELF's). */
void prof_stream_build_id(struct prof *p, const uint8_t *id, size_t len);
/* The firmware said its task name table (slots) was full: the unnamed-tags diagnostic says so. */
void prof_task_table_full(struct prof *p, uint64_t slots);

double prof_total(const struct prof *p);    /* samples with a PC, buckets included */

/* The firmware took `lost` more samples than it could keep (its ring was full). Such a loss is
 * never a random subset: the ring fills exactly while the drain cannot run, so every share may be
 * biased. With L lost of T = N + L taken, a row with c samples had between c / T and (c + L) / T
 * of the time, whatever the loss hit: prof_loss_bound gives that range (false when none was
 * lost), prof_loss_beyond whether it reaches past the row's 95 % interval. */
void prof_samples_lost(struct prof *p, uint64_t lost);
uint64_t prof_lost(const struct prof *p);
bool prof_loss_bound(const struct prof *p, double samples, double *lo, double *hi);
bool prof_loss_beyond(const struct prof *p, const struct prof_row *r);
/* A sample that stands for `weight` samples (a firmware reservoir kept it for many taken while its
 * ring was full): counted so in every row. */
void prof_add_pc_weighted(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag, double weight);
/* The samples the intervals rest on: the total, less what weighting costs in precision (Kish's
 * effective sample size, total^2 / sum of the squared weights); the total when none is weighted. */
double prof_effective_n(const struct prof *p);
/* Untagged samples in the code are counted per address and moved into the rows' entries when
 * something reads them; this does it now (every reader below calls it). */
void prof_settle(struct prof *p);
/* Share of the samples in cmprof's own firmware code (the drain, formatting; the sampling
 * interrupt cannot sample itself), 0..1; 0 without symbols. The stream drain's quick exit
 * (cmprof_stream_drain with less than a line waiting) taken in an idle task is not in it: an idle
 * hook polls only because nothing else can run, so that is idle time. *idle_polls (when not NULL)
 * gets the share of those polls. Polls from any other context (a bare-metal main loop) are overhead. */
double prof_overhead(struct prof *p, double *idle_polls);
/* Function and line rows show the library's code as one row, named PROF_OVERHEAD_ROW (the
 * idle polls above stay out of it, in their function's row). */
#define PROF_OVERHEAD_ROW "[cmprof overhead]"
void prof_fold_overhead(struct prof *p, bool on);
uint64_t prof_sleep(const struct prof *p);
/* Whether a task name is an idle task's: "idle" in any letter case, alone or followed by a CPU
 * number (digits, after at most one space). That covers FreeRTOS ("IDLE", "IDLE0", "IDLE1"... on
 * SMP), Zephyr ("idle", "idle 00", "idle 01"... with one per CPU) and the name the firmware
 * library streams for both (CMPROF_IDLE_NAME, "idle"). */
bool prof_idle_name(const char *name);
/* Share of the samples in idle tasks (prof_idle_name), 0..1; negative when no task has such a
 * name (untagged, or the idle task is not named). */
double prof_idle(struct prof *p);

/* Rows of a grouping, most samples first, covering every sample. inline_frames: attribute to
 * the innermost inlined function (true) or to the function that contains the code (false).
 * The array is owned by p and valid until the next call that changes p. */
size_t prof_rows(struct prof *p, enum prof_group by, bool inline_frames, const struct prof_row **rows);

/* The same, for the samples of one function only (a row's name: prof_frame_is): a drill-down. With
 * inline frames a sample counts when the function is anywhere in its inline chain, at that frame's
 * line (an inlined call site carries its callees' samples). Shares stay relative to all samples. */
size_t prof_rows_of(struct prof *p, enum prof_group by, bool inline_frames, const char *function,
                    const struct prof_row **rows);

/* Whether frame fr of the code at addr is of the function a row or a view names: by its name
 * (every function of the name), or as one of several functions of a name, "name (file)"
 * (sym_function_label). The drill-down, the callers and callees, and the function's lines all
 * select a function's frames so. */
bool prof_frame_is(struct prof *p, uint32_t addr, const struct sym_frame *fr, const char *function);

/* One PC of a row's samples (the most sampled one), to show its inline chain; 0 when none. */
uint32_t prof_top_pc(struct prof *p, bool inline_frames, const char *function, uint32_t line);

/* A sample's call stack (a halting source walked it): its PC and its callers' call sites,
 * innermost first. The sample itself is counted by prof_add_pc(), as any other. */
void prof_add_stack(struct prof *p, uint32_t pc, const uint32_t *callers, size_t n, bool has_tag, uint32_t tag);
bool prof_has_stacks(const struct prof *p);
double prof_stack_samples(const struct prof *p);

/* Who calls a function, or what it calls, over the samples whose stack holds it (its innermost
 * occurrence; inline frames count as calls): one row per caller (callers = true) or callee, with
 * PROF_STACK_END for the outermost frame and PROF_SELF for samples in the function itself.
 * *total: the samples whose stack holds it. Rows are most samples first, valid until the next
 * prof_calls(). */
#define PROF_STACK_END "[stack ends]"
/* The outermost caller of a stack (firmware stack evidence) whose walk reached a frame it could not
 * prove: not a guess, a mark, shown by this name. */
#define PROF_UNPROVEN_PC 0xFFFFFFFFu
#define PROF_STACK_UNPROVEN "[unproven caller]"
#define PROF_SELF "[self]"
struct prof_call {
    const char *name;
    double samples, share, lo95, hi95; /* share of *total, with its 95 % interval (Wilson's) */
    char hex[12];                      /* an unknown address's name */
};
size_t prof_calls(struct prof *p, const char *function, bool callers, const struct prof_call **out, double *total);

/* One line per distinct inline chain, "outer;...;inner count", for flame graphs; when samples came
 * with stacks (prof_add_stack), one per distinct stack, outermost caller first; by_task puts
 * the task (or "ISR: handler") first, as the root. Calls emit for each; the strings are valid
 * during the call only. A frame's name is esc_text's, with ';' escaped too (\x3b):
 * esc_decode gives back its bytes. */
void prof_folded(struct prof *p, bool demangle, bool by_task, void (*emit)(void *ctx, const char *stack, double count),
                 void *ctx);

/* One place samples were counted at: its PC, its callers' call sites when samples came with
 * stacks, its task row's name (NULL: untagged) and how many samples. */
struct prof_sample {
    uint32_t pc;
    const uint32_t *callers; /* innermost first */
    size_t n_callers;
    const char *task;
    double count;           /* fractional when histogram buckets were spread */
};
/* Every place once: each distinct stack when samples came with stacks (prof_has_stacks), else
 * each (PC, task). The sample and its strings are valid during the call only. */
void prof_each_sample(struct prof *p, void (*emit)(void *ctx, const struct prof_sample *s), void *ctx);
/* Every (PC, task) place once with all its samples, stacks or not (no callers): for the writers
 * that show the PC alone, which the stacked samples (1 in 16 from the firmware) would starve. */
void prof_each_place(struct prof *p, void (*emit)(void *ctx, const struct prof_sample *s), void *ctx);
/* A tag's name as the task rows show it ("motor", "ISR: SysTick_Handler", "0x20001000"): in
 * buf, or a string that outlives the call. */
const char *prof_tag_label(struct prof *p, uint32_t tag, char *buf, size_t len);

/* The symbol table the profile resolves with (NULL without one). */
struct sym_table *prof_symbols(const struct prof *p);

/* The sampled PCs against where the ELF's instructions start (symbols/codemap.h): on the right
 * ELF each is a start, so many that are not say it is another build, even one linked at the same
 * address and without a build-id. */
struct prof_code_check {
    bool checked;         /* false: no symbols, the ELF cannot say, or buckets over 1 KB (or mixed with PCs) */
    bool buckets;         /* the places are histogram buckets, not PCs: bad ones hold no instruction's start */
    size_t pcs, bad_pcs;  /* distinct PCs in the ELF's code; of those, not an instruction's start */
    double bad_samples;   /* the samples on those */
    double share;         /* bad_samples over all PC (or bucket) samples, 0..1 */
    uint32_t example;     /* the most sampled bad PC */
    bool wrong;           /* far beyond chance for the right ELF: PROF_BAD_PCS_MIN and PROF_BAD_SHARE_MIN */
};
#define PROF_BAD_PCS_MIN 3 /* the right ELF gives none in any scenario capture: 3 is far beyond chance */
#define PROF_BAD_SHARE_MIN 0.05
void prof_check_code(struct prof *p, struct prof_code_check *out);

/* Current diagnostics; returns how many were written (at most max). */
size_t prof_diagnose(struct prof *p, struct prof_diag *out, size_t max);

/* Who took the samples, for the lockstep diagnostic's advice: the firmware's timer (jitter), the
 * DWT's PC sampler (its period is POSTPRESET and CYCTAP), a probe halting the core (--rate), or a
 * probe reading DWT_PCSR. PROF_SAMPLER_UNKNOWN (the default) gives the firmware's advice and the others. */
enum prof_sampler { PROF_SAMPLER_UNKNOWN, PROF_SAMPLER_FIRMWARE, PROF_SAMPLER_DWT, PROF_SAMPLER_HALTING,
                    PROF_SAMPLER_PCSR };
void prof_set_sampler(struct prof *p, enum prof_sampler s);

/* Whether the profile is of the ELF's program at all, from the same checks as the diagnostics
 * (DIAG_BUILD_ID, DIAG_WRONG_ELF, DIAG_NOT_STARTS): a batch run fails on wrong_elf. */
struct prof_trust {
    bool wrong_elf;       /* build_id, outside or not_starts */
    bool build_id;        /* the firmware announced a build-id that is not the ELF's */
    bool outside;         /* most samples (over PROF_OUTSIDE_MOST, 5 at least) fall outside the ELF's code */
    bool not_starts;      /* prof_check_code()'s wrong */
    double outside_share; /* of all samples, 0..1: PCs outside the ELF's code (PC 0 not counted) */
    double zero_share;    /* of all samples, 0..1: PC 0, a memory fault or a wrong stack (never code) */
};
#define PROF_OUTSIDE_MOST 0.5
void prof_trust(struct prof *p, struct prof_trust *out);

/* 95 % half-width for share p of n samples: 1.96 sqrt(p (1 - p) / n) (the normal approximation). */
double prof_ci95(double share, double n);
/* Wilson's 95 % score interval for share p of n samples: never outside [0, 1], not empty at p = 0
 * or 1, and not negative at small n (6.25 % of 16 is 1.1 % to 28.3 %, not -5.6 % to 18.1 %). */
void prof_wilson95(double share, double n, double *lo, double *hi);

#endif
