/* Profile model: a hash of (PC, tag) -> samples, grouped on demand. This file: the profile's
 * life (new, reset, free), its totals, and the confidence intervals every share gets. */
#include "prof_int.h"

#include "../symbols/codemap.h"
#include "../base/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double prof_ci95(double share, double n)
{
    return n > 0 ? 1.96 * sqrt(share * (1.0 - share) / n) : 0.0;
}

void prof_wilson95(double share, double n, double *lo, double *hi)
{
    if (n <= 0) {
        *lo = 0;
        *hi = 1;
        return;
    }
    const double z2 = 1.96 * 1.96;
    double denom = 1.0 + z2 / n;
    double center = (share + z2 / (2.0 * n)) / denom;
    double half = 1.96 * sqrt(share * (1.0 - share) / n + z2 / (4.0 * n * n)) / denom;
    *lo = center - half < 0 ? 0 : center - half;
    *hi = center + half > 1 ? 1 : center + half;
}

struct prof *prof_new(struct sym_table *syms)
{
    struct prof *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->recent = malloc(RECENT * sizeof *p->recent); /* (read only where written: not cleared) */
    if (!p->recent) {
        free(p);
        return NULL;
    }
    p->syms = syms;
    uint32_t lo, hi;
    if (syms && sym_code_span(syms, &lo, &hi))
        pcidx_init(&p->direct, lo, hi); /* without it (too wide, no memory) the hash does it all */
    return p;
}

void prof_share_order(struct prof *p, const struct prof *whole)
{
    free(p->recent);
    p->recent = NULL;
    p->order_from = whole;
}

void prof_reset(struct prof *p)
{
    pcidx_clear(&p->direct);
    for (size_t i = 0; i < p->n_lanes; i++)
        pcidx_free(&p->lanes[i].idx);
    p->n_lanes = p->last_lane = p->lane_leaves = 0;
    p->direct_pending = false;
    free(p->map);
    p->map = NULL;
    p->cap = p->used = p->unnamed_entries = 0;
    p->bucket_total = 0;
    p->bucket_at = p->bucket_bytes = 0;
    p->raw_samples = p->sleep = 0;
    p->lost = 0;
    p->weight_extra = p->weight_sq_extra = 0;
    memset(&p->lockstep, 0, sizeof p->lockstep);
    for (size_t i = 0; i < p->n_tasks; i++)
        p->tasks[i].has_samples = false;
    if (p->stacks)
        stacks_reset(p->stacks);
}

void prof_free(struct prof *p)
{
    if (!p)
        return;
    prof_reset(p);
    pcidx_free(&p->direct);
    free(p->lanes);
    free(p->recent);
    free(p->tasks);
    free(p->task_index);
    free(p->name_index);
    free(p->pending_task);
    free(p->groups);
    free(p->gindex);
    free(p->rows);
    free(p->names);
    stacks_free(p->stacks);
    free(p->calls);
    codemap_free(p->codemap);
    free(p);
}

void prof_stream_build_id(struct prof *p, const uint8_t *id, size_t len)
{
    p->stream_id_len = len < sizeof p->stream_id ? len : sizeof p->stream_id;
    memcpy(p->stream_id, id, p->stream_id_len);
}

double prof_total(const struct prof *p)
{
    return p->bucket_total + (double)p->raw_samples + p->weight_extra;
}

/* The firmware library's functions that do not carry its cmprof_ prefix (static helpers, and the
 * timer ports' handlers and the Zephyr hooks it defines), and the library's files they are defined in:
 * such a name counts only in one of these (an application's own send() or put_str() is not the
 * library's). tests/test_cli.py checks the list against every function the library's objects define. */
static const char *const library_statics[] = {
    "DUALTIMER_Handler", "SysTick_Handler", "TIM3_IRQHandler", "TIMER1_Handler", "TIMER1_IRQHandler", "before_mark",
    "calibrate", "cap_credit", "clock_cycles", "clock_zero", "copy_of", "cycle_counter_enable", "def_fits",
    "defs_superseded", "freed_append", "freed_link", "freed_unlink",
    "due_names", "due_names_rare", "due_queue", "flush_repeats", "forget_thread", "group_head", "group_start",
    "hash_find", "hash_insert", "hash_remove", "index_chars", "irq_off", "irq_restore", "isr_chars", "isr_timer_0",
    "keep_frame_pointer", "keep_gone_name", "keep_name", "kept_name",
    "learn_tag", "name_room", "name_thread", "new_name_sent", "other_tag", "owe_name", "owed_stop", "put_owed",
    "name_id", "put_tag6", "put_def_entry", "forget_names_sent", "pc_chars", "put3", "put_dec", "put_def",
    "after_call", "put_b64", "put_dropped", "put_entry", "put_field", "put_hex", "put_hex8",
    "put_ring", "put_samples", "put_stats", "put_str", "put_tail",
    "put_task_head", "put_text", "put_text_upto", "put_u64", "publish", "reannounce_after", "register_task", "repeat_add",
    "repeat_affordable", "repeat_names", "reservoir_flush", "reservoir_keep", "run_length", "same_name", "send",
    "send_announce", "stream_putc", "rtt_drain_lines", "set_quiet", "put_far_pc", "page_line", "put_name7", "num_code", "num_code_at", "num_keep", "ends_in_digits", "put_numbered", "retired_code", "put_retired_in", "copy_len", "epoch_unmark",
    "send_due_names", "send_full", "send_hist", "send_line", "send_lost", "send_task", "send_task_as", "send_unnamed",
    "slot_waits", "spend_on_names", "start_round", "round_due", "sum_fold", "supersede", "sys_trace_thread_abort_user",
    "sys_trace_thread_create_user", "sys_trace_thread_name_set_user", "sys_trace_thread_switched_in_user",
    "sys_trace_thread_switched_out_user", "tag_index", "tag_slot", "take_slot", "task_root", "until_due",
    "__wrap_sys_trace_k_thread_switched_in", "__wrap_sys_trace_k_thread_switched_out",
    "__wrap_sys_trace_thread_create", "__wrap_sys_trace_thread_name_set", "__wrap_sys_trace_thread_abort",
    "block_name", "copy_name", "forget", "idle_alias", "same_copy", "index_free", "retire", "name_ways", "named_index", "unname_index", "place_name", "release_index", "move_entry", "unpark", "read_name", "block_named", "take_index", "word_chars", "read_words", "mix", "index_append", "index_unlink", "count_spares", "sweep", "copy_is", "learn_offset", "gone_short", "drop_stale", "rename_rest",
    "block_renamed", "name_hash", "name_kept", "keep_name", "put_copy", "rekey", "thread_abort_hook",
    "wire_index", "wire_chars", "repeat_retired", "retire_name",
    "copy_dump_name", "dump_earlier", "dump_renamed", "put_word", "put_task", "dump_table_state",
    "same_copy_name", "nameless",
};
static const char *const library_files[] = {
    "cmprof_sampler.c", "cmprof_section.c", "cmprof_stream.c", "cmprof_stack.c", "cmprof_tasks.c", "cmprof_dwt.c",
    "cmprof_zephyr.c", "cmprof_port.h", "cmprof_tasks.h",
    "cmprof_pmu.h", "cmprof.h", "cmprof_freertos.h", "cmprof_zephyr.h", "cmprof_regs.h",
    "cmprof_rtt.c", "cmprof_rtt.h",
};

static bool in_list(const char *s, size_t n, const char *const *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(list[i]) == n && strncmp(list[i], s, n) == 0)
            return true;
    return false;
}

/* The library's own code, by the name of the function that holds the PC (the outermost frame:
 * inlined helpers count as their caller's): the library's cmprof_ prefix, or one of its other
 * functions in one of its files. Never by file name alone: an application's cmprof_app.c is the
 * application's. */
bool prof_in_profiler(const struct sym_location *l)
{
    if (!l || !l->known)
        return false;
    const struct sym_frame *f = sym_frame_at(l, l->n_frames - 1);
    const char *name = f->function ? f->function : l->symbol;
    if (!name)
        return false;
    if (strncmp(name, "cmprof_", 7) == 0)
        return true;
    size_t n = strcspn(name, "."); /* a GCC clone: "send_due_names.isra.0" */
    if (!in_list(name, n, library_statics, sizeof library_statics / sizeof *library_statics))
        return false;
    const char *base = path_base(f->file);
    return *base && in_list(base, strlen(base), library_files, sizeof library_files / sizeof *library_files);
}

void prof_fold_overhead(struct prof *p, bool on)
{
    p->fold_overhead = on;
}

bool prof_idle_name(const char *name)
{
    for (int i = 0; i < 4; i++, name++) /* "idle" in any letter case */
        if (*name != "idle"[i] && *name != "IDLE"[i])
            return false;
    if (*name == ' ' && name[1]) /* Zephyr's "idle 00" */
        name++;
    while (*name >= '0' && *name <= '9')
        name++;
    return *name == '\0';
}

/* A sample of a task with an idle task's name (never an interrupt that came while it ran). */
static bool in_idle_task(const struct prof *p, const struct entry *e)
{
    const struct task *tk = prof_in_exception(e) ? NULL : prof_task_of(p, e);
    return tk && prof_idle_name(tk->name);
}

/* The drain's quick exit: cmprof_stream_drain itself or a copy the compiler made of it
 * ("cmprof_stream_drain.constprop.0"), never cmprof_stream_drain_lines, where the work is. */
static bool in_drain_wrapper(const struct sym_location *l)
{
    static const char wrapper[] = "cmprof_stream_drain";
    const size_t n = sizeof wrapper - 1;
    const char *f = l->symbol ? l->symbol : sym_frame_at(l, l->n_frames - 1)->function;
    return f && strncmp(f, wrapper, n) == 0 && (f[n] == '\0' || f[n] == '.');
}

bool prof_idle_poll(const struct prof *p, const struct entry *e, const struct sym_location *l)
{
    return prof_in_profiler(l) && in_drain_wrapper(l) && in_idle_task(p, e);
}

double prof_overhead(struct prof *p, double *idle_polls)
{
    prof_settle(p);
    double total = prof_total(p), own = 0, polls = 0;
    for (size_t i = 0; p->syms && total > 0 && i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count <= 0)
            continue;
        const struct sym_location *l = sym_lookup(p->syms, e->pc);
        if (!prof_in_profiler(l))
            continue;
        if (in_drain_wrapper(l) && in_idle_task(p, e))
            polls += e->count;
        else
            own += e->count;
    }
    if (idle_polls)
        *idle_polls = total > 0 ? polls / total : 0;
    return total > 0 ? own / total : 0;
}

double prof_idle(struct prof *p)
{
    prof_settle(p);
    bool named = false;
    for (size_t i = 0; i < p->n_tasks && !named; i++)
        named = prof_idle_name(p->tasks[i].name);
    double total = prof_total(p);
    if (!named || total <= 0)
        return -1;
    double idle = 0;
    for (size_t i = 0; i < p->cap; i++)
        if (p->map[i].used && in_idle_task(p, &p->map[i]))
            idle += p->map[i].count;
    return idle / total;
}

uint64_t prof_sleep(const struct prof *p)
{
    return p->sleep;
}

struct sym_table *prof_symbols(const struct prof *p)
{
    return p->syms;
}

