/* QEMU TCG plugin: the ground truth for cmprof scenarios.
 *
 * Counts every executed instruction per guest PC with an inline counter, and optionally records
 * the global instruction index each time one address executes (e.g. the sampling handler's entry,
 * which gives the exact interval between samples).
 *
 *   qemu-system-arm ... -plugin truth.so,out=counts.txt[,mark=0x08000123,marks=marks.txt]
 *
 * With begin=ADDR,end=ADDR the plugin also keeps a window count per PC: instructions executed
 * between an execution of `begin` and the next execution of `end` (windows add up). Scenarios
 * mark the stretch that sampling covers this way, so setup and the dump stay out of the truth.
 *
 * counts.txt: "total N", "window N", then "pc count window" lines (hex pc, decimal counts) in
 * address order.
 *
 * Contexts (who ran each instruction; the FreeRTOS scenario): tasks=ADDR:N names N 4-byte marker
 * stubs from ADDR; executing stub k makes task k the running task. isrs=ADDR:N does the same for
 * handler entries (stub k pushes handler k) and leave=ADDR pops one; skip=LO:HI (repeatable) keeps
 * instructions in [LO, HI) out of every context (the sampler). ctx=FILE gets "task K N" and
 * "isr K N" lines: window instructions run by each task outside handlers, and by each handler.
 * marks.txt:  one decimal instruction index per line.
 *
 * Debian ships no qemu-plugin.h, so the few API entry points used are declared here as in the
 * QEMU 7.2 plugin API, version 1. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op, void *ptr,
                                                uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct pc_count {
    uint64_t pc;
    uint64_t count;  /* inline-incremented on every execution */
    uint64_t base;   /* count when the open window began */
    uint64_t window; /* executions inside closed windows */
};

#define TABLE_BITS 20u
#define TABLE_SIZE (1u << TABLE_BITS)

static struct pc_count *table; /* open addressing; entries never move, so inline ops may point in */
static size_t table_used;
static uint32_t *used_slots;   /* the table's indexes in use, in claim order: the scans visit only these,
                                * not the whole table (32 MB, 35 ms of every QEMU run) */
static uint64_t total;         /* every instruction, for mark indexes */
static char *out_path;
static uint64_t mark_pc = UINT64_MAX;
static FILE *marks_file;
static bool table_full;
static uint64_t begin_pc = UINT64_MAX, end_pc = UINT64_MAX;
static bool window_open;
static uint64_t window_total, window_base_total;

/* contexts: a stack of handlers over the running task, switched by marker stubs */
#define CTX_MAX 16384u /* task ids: the field harness (bench/field) numbers tasks by the kernel's uxTCBNumber, which a delete advances too */
#define CTX_DEPTH 16u
#define SKIP_MAX 8u
static char *ctx_path;
static uint64_t task_base = UINT64_MAX, isr_base = UINT64_MAX, leave_pc = UINT64_MAX;
static uint64_t n_tasks, n_isrs, skipped, ctx_mark;
static uint64_t skip_lo[SKIP_MAX], skip_hi[SKIP_MAX];
static unsigned n_skips;
static uint64_t task_insns[CTX_MAX], isr_insns[CTX_MAX];
static unsigned ctx_stack[CTX_DEPTH], ctx_depth; /* [0]: the task; above it, handlers */
static bool ctx_overflow;

/* Charge the instructions since the last context event to the context that ran them. */
static void ctx_charge(void)
{
    uint64_t now = total - skipped;
    if (window_open) {
        unsigned k = ctx_stack[ctx_depth];
        if (ctx_depth)
            isr_insns[k] += now - ctx_mark;
        else
            task_insns[k] += now - ctx_mark;
    }
    ctx_mark = now;
}

static struct pc_count *slot_for(uint64_t pc)
{
    size_t i = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> (64u - TABLE_BITS));
    for (;;) {
        struct pc_count *e = &table[i];
        if (e->count == 0 && e->pc == 0 && table_used < TABLE_SIZE - 1) {
            e->pc = pc;
            used_slots[table_used++] = (uint32_t)i;
            return e;
        }
        if (e->pc == pc)
            return e;
        if (table_used >= TABLE_SIZE - 1) {
            table_full = true;
            return NULL;
        }
        i = (i + 1) & (TABLE_SIZE - 1u);
    }
}

static void on_mark(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    fprintf(marks_file, "%" PRIu64 "\n", total);
}

static void on_begin(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    if (window_open)
        return;
    for (size_t k = 0; k < table_used; k++)
        table[used_slots[k]].base = table[used_slots[k]].count;
    window_base_total = total;
    ctx_charge(); /* what ran before the window goes nowhere */
    window_open = true;
}

static void on_end(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    if (!window_open)
        return;
    for (size_t k = 0; k < table_used; k++) {
        struct pc_count *e = &table[used_slots[k]];
        e->window += e->count - e->base;
    }
    window_total += total - window_base_total;
    ctx_charge();
    window_open = false;
}

static void on_task_in(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    ctx_charge();
    ctx_stack[0] = (unsigned)(uintptr_t)udata;
}

static void on_isr_enter(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    ctx_charge();
    if (ctx_depth + 1u < CTX_DEPTH)
        ctx_stack[++ctx_depth] = (unsigned)(uintptr_t)udata;
    else
        ctx_overflow = true;
}

static void on_isr_leave(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    ctx_charge();
    if (ctx_depth)
        ctx_depth--;
    else
        ctx_overflow = true;
}

/* Context events of one instruction, and whether the sampler's code (skipped) holds it. */
static void ctx_instrument(struct qemu_plugin_insn *insn, uint64_t pc)
{
    if (pc >= task_base && pc < task_base + 4u * n_tasks && (pc - task_base) % 4u == 0)
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_task_in, QEMU_PLUGIN_CB_NO_REGS,
                                               (void *)(uintptr_t)((pc - task_base) / 4u));
    if (pc >= isr_base && pc < isr_base + 4u * n_isrs && (pc - isr_base) % 4u == 0)
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_isr_enter, QEMU_PLUGIN_CB_NO_REGS,
                                               (void *)(uintptr_t)((pc - isr_base) / 4u));
    if (pc == leave_pc)
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_isr_leave, QEMU_PLUGIN_CB_NO_REGS, NULL);
    for (unsigned i = 0; i < n_skips; i++)
        if (pc >= skip_lo[i] && pc < skip_hi[i])
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &skipped, 1);
}

static void write_contexts(void)
{
    ctx_charge();
    FILE *f = fopen(ctx_path, "w");
    if (!f) {
        qemu_plugin_outs("truth: cannot write the contexts file\n");
        return;
    }
    if (ctx_overflow)
        fprintf(f, "error context stack\n");
    for (uint64_t k = 0; k < n_tasks; k++)
        fprintf(f, "task %" PRIu64 " %" PRIu64 "\n", k, task_insns[k]);
    for (uint64_t k = 0; k < n_isrs; k++)
        fprintf(f, "isr %" PRIu64 " %" PRIu64 "\n", k, isr_insns[k]);
    fclose(f);
}

/* "ADDR:N" or "LO:HI" */
static bool parse_pair(const char *s, uint64_t *a, uint64_t *b)
{
    char *end;
    *a = strtoull(s, &end, 0);
    if (*end != ':')
        return false;
    *b = strtoull(end + 1, &end, 0);
    return *end == '\0';
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t k = 0; k < n; k++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        /* PC 0 is a real address on parts with flash at 0; keep it apart from empty slots. */
        struct pc_count *e = slot_for(pc == 0 ? UINT64_MAX : pc);
        if (pc == begin_pc)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (pc == end_pc)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (e)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &e->count, 1);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &total, 1);
        if (pc == mark_pc && marks_file)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (ctx_path)
            ctx_instrument(insn, pc);
    }
}

static int cmp_pc(const void *a, const void *b)
{
    const struct pc_count *x = a, *y = b;
    return (x->pc > y->pc) - (x->pc < y->pc);
}

static void on_exit_cb(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    if (marks_file)
        fclose(marks_file);
    size_t n = 0;
    if (window_open)
        on_end(0, NULL);
    if (ctx_path)
        write_contexts();
    /* the entries that ran, copied out of the table and sorted by address */
    struct pc_count *ran = malloc((table_used ? table_used : 1u) * sizeof *ran);
    if (!ran) {
        qemu_plugin_outs("truth: out of memory\n");
        return;
    }
    for (size_t k = 0; k < table_used; k++)
        if (table[used_slots[k]].count)
            ran[n++] = table[used_slots[k]];
    qsort(ran, n, sizeof ran[0], cmp_pc);
    FILE *f = fopen(out_path, "w");
    if (!f) {
        qemu_plugin_outs("truth: cannot write the counts file\n");
        free(ran);
        return;
    }
    fprintf(f, "total %" PRIu64 "\n", total);
    fprintf(f, "window %" PRIu64 "\n", window_total);
    if (table_full)
        fprintf(f, "error table full\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", ran[i].pc == UINT64_MAX ? 0 : ran[i].pc, ran[i].count,
                ran[i].window);
    fclose(f);
    free(ran);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                                int argc, char **argv)
{
    (void)info;
    const char *marks_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0)
            out_path = strdup(argv[i] + 4);
        else if (strncmp(argv[i], "mark=", 5) == 0)
            mark_pc = strtoull(argv[i] + 5, NULL, 0);
        else if (strncmp(argv[i], "begin=", 6) == 0)
            begin_pc = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "end=", 4) == 0)
            end_pc = strtoull(argv[i] + 4, NULL, 0);
        else if (strncmp(argv[i], "marks=", 6) == 0)
            marks_path = argv[i] + 6;
        else if (strncmp(argv[i], "ctx=", 4) == 0)
            ctx_path = strdup(argv[i] + 4);
        else if (strncmp(argv[i], "leave=", 6) == 0)
            leave_pc = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "tasks=", 6) == 0 && parse_pair(argv[i] + 6, &task_base, &n_tasks) &&
                 n_tasks <= CTX_MAX) {
        } else if (strncmp(argv[i], "isrs=", 5) == 0 && parse_pair(argv[i] + 5, &isr_base, &n_isrs) &&
                   n_isrs <= CTX_MAX) {
        } else if (strncmp(argv[i], "skip=", 5) == 0 && n_skips < SKIP_MAX &&
                   parse_pair(argv[i] + 5, &skip_lo[n_skips], &skip_hi[n_skips])) {
            n_skips++;
        } else {
            fprintf(stderr, "truth: unknown argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (!out_path) {
        fprintf(stderr, "truth: out=FILE is required\n");
        return -1;
    }
    if (marks_path && !(marks_file = fopen(marks_path, "w"))) {
        fprintf(stderr, "truth: cannot open %s\n", marks_path);
        return -1;
    }
    table = calloc(TABLE_SIZE, sizeof *table);
    used_slots = malloc(TABLE_SIZE * sizeof *used_slots);
    if (!table || !used_slots)
        return -1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
