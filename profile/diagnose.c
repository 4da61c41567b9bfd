/* What the profile says about its own trustworthiness: samples in lockstep with code, skid after
 * interrupts were masked, PCs the ELF does not have (another build), unnamed tasks. */
#include "escape.h"
#include "prof_int.h"

#include "../decode/event.h"
#include "../symbols/codemap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pc_count {
    uint32_t pc;
    double count;
};

static int cmp_pc_count(const void *a, const void *b)
{
    const struct pc_count *x = a, *y = b;
    return x->pc < y->pc ? -1 : (x->pc > y->pc);
}

/* The samples per PC, tags merged, in PC order (NULL when out of memory: *n is 0). distinct: the
 * entries with samples. */
static struct pc_count *merged_pcs(const struct prof *p, size_t distinct, size_t *n)
{
    struct pc_count *pcs = malloc((distinct + 1) * sizeof *pcs);
    size_t n_pcs = 0;
    for (size_t i = 0; pcs && i < p->cap; i++)
        if (p->map[i].used && p->map[i].count > 0)
            pcs[n_pcs++] = (struct pc_count){p->map[i].pc, p->map[i].count};
    if (pcs)
        qsort(pcs, n_pcs, sizeof *pcs, cmp_pc_count);
    *n = 0;
    for (size_t i = 0; i < n_pcs; i++) {
        if (*n && pcs[*n - 1].pc == pcs[i].pc)
            pcs[*n - 1].count += pcs[i].count;
        else
            pcs[(*n)++] = pcs[i];
    }
    return pcs;
}

/* The ELF's map of instruction starts, made the first time it is asked for (NULL: it cannot be). */
static struct codemap *code_map(struct prof *p)
{
    if (!p->codemap_tried) {
        p->codemap = codemap_new(p->syms);
        p->codemap_tried = true;
    }
    return p->codemap;
}

static void note_bad(struct prof_code_check *out, uint32_t at, double count, double *worst)
{
    out->bad_pcs++;
    out->bad_samples += count;
    if (count > *worst) {
        *worst = count;
        out->example = at;
    }
}

/* Buckets larger than this are not checked: one is rarely all data, and its halfwords are many. */
#define BUCKET_CHECK_BYTES 1024u

/* What a histogram bucket [at, at + bytes) holds: an instruction start, nothing of the ELF's code,
 * or code without a start (data in the code, padding: no core runs there). */
static enum codemap_kind bucket_kind(struct codemap *m, uint32_t at, uint32_t bytes)
{
    enum codemap_kind kind = CODEMAP_OUTSIDE;
    for (uint64_t a = at; a < (uint64_t)at + bytes && a <= UINT32_MAX; a += 2) {
        enum codemap_kind k = codemap_at(m, (uint32_t)a);
        if (k == CODEMAP_START)
            return k;
        if (k == CODEMAP_NOT_START)
            kind = k;
    }
    return kind;
}

/* The histogram's buckets against the ELF's code: each sample was a PC, so a bucket with samples
 * holds an instruction start on the right ELF. Its samples were spread over its halfwords (count.c):
 * the PCs, in order, are grouped back into buckets by the buckets' layout. */
static void check_buckets(struct prof *p, const struct pc_count *pcs, size_t n, struct prof_code_check *out)
{
    uint32_t size = p->bucket_bytes;
    if (size < 2 || size > BUCKET_CHECK_BYTES || p->raw_samples) /* (PCs and buckets mixed: neither checked) */
        return;
    out->checked = true;
    double worst = 0;
    for (size_t i = 0; i < n;) {
        uint32_t at = p->bucket_at + (pcs[i].pc - p->bucket_at) / size * size; /* (mod 2^32, as the buckets) */
        double count = 0;
        for (; i < n && pcs[i].pc - at < size; i++)
            count += pcs[i].count;
        enum codemap_kind k = bucket_kind(p->codemap, at, size);
        out->pcs += k != CODEMAP_OUTSIDE;
        if (k == CODEMAP_NOT_START)
            note_bad(out, at, count, &worst);
    }
    out->buckets = true;
    out->share = out->bad_samples / p->bucket_total;
    out->wrong = out->bad_pcs >= PROF_BAD_PCS_MIN && out->share >= PROF_BAD_SHARE_MIN;
}

/* The instruction-start check over PCs merged by merged_pcs (histogram buckets: check_buckets). The
 * ELF's map is made the first time there are PCs. */
static void check_code(struct prof *p, const struct pc_count *pcs, size_t n, struct prof_code_check *out)
{
    *out = (struct prof_code_check){0};
    if (!p->syms || !n || !code_map(p))
        return;
    if (p->bucket_total > 0) {
        check_buckets(p, pcs, n, out);
        return;
    }
    out->checked = true;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        enum codemap_kind k = pcs[i].pc ? codemap_at(p->codemap, pcs[i].pc) : CODEMAP_OUTSIDE; /* 0: a wrong stack */
        out->pcs += k != CODEMAP_OUTSIDE;
        if (k == CODEMAP_NOT_START)
            note_bad(out, pcs[i].pc, pcs[i].count, &worst);
    }
    out->share = p->raw_samples ? out->bad_samples / (double)p->raw_samples : 0;
    out->wrong = out->bad_pcs >= PROF_BAD_PCS_MIN && out->share >= PROF_BAD_SHARE_MIN;
}

void prof_check_code(struct prof *p, struct prof_code_check *out)
{
    prof_settle(p);
    size_t distinct = 0, n;
    for (size_t i = 0; i < p->cap; i++)
        distinct += p->map[i].used && p->map[i].count > 0;
    struct pc_count *pcs = merged_pcs(p, distinct, &n);
    check_code(p, pcs, n, out);
    free(pcs);
}

/* Lockstep: sampling in step with the program makes each sample repeat the PC of one a fixed
 * number of samples earlier. Independent samples match at any lag with probability sum(p_pc^2),
 * the profile's own spread. The test: over lags 1..n/4, the best lag's match rate is >= 90 % and
 * its mismatch rate is under half the expected one. An idle loop holding most samples expects
 * many matches anyway and stays quiet; a near-periodic run (a few per cent of its samples
 * perturbed) does not. */
#define LOCKSTEP_MIN_RATE 0.90
#define LOCKSTEP_WINDOW_MIN 200u

/* Heapsort in place: qsort's merge sort would take a second copy of the window for its own. */
static void sift_down(uint32_t *a, size_t root, size_t n)
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[root] >= a[child])
            return;
        uint32_t t = a[root];
        a[root] = a[child];
        a[child] = t;
    }
}

static void sort_u32(uint32_t *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        uint32_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

static void find_lockstep(struct prof *p)
{
    struct lockstep *ls = &p->lockstep;
    const struct prof *ring = p->order_from ? p->order_from : p; /* whose ring holds p's last PCs */
    uint64_t n = p->raw_samples < RECENT ? p->raw_samples : RECENT;
    n = n < ring->order_count ? n : ring->order_count;
    ls->found = false;
    ls->window = (uint32_t)n;
    ls->computed_at = p->raw_samples;
    if (n < LOCKSTEP_WINDOW_MIN)
        return;
    /* one copy of the window (32 KB), sorted first for the expected rate, then in order again */
    uint32_t *w = malloc(n * sizeof *w);
    if (!w)
        return;
    uint64_t start = ring->order_count - n;
    for (uint64_t i = 0; i < n; i++)
        w[i] = ring->recent[(start + i) % RECENT];
    /* expected match rate from the window's own PC shares */
    sort_u32(w, n);
    double expected = 0;
    for (uint64_t i = 0, run = 1; i < n; i++, run++)
        if (i + 1 == n || w[i + 1] != w[i]) {
            expected += ((double)run / n) * ((double)run / n);
            run = 0;
        }
    ls->expected = expected;
    for (uint64_t i = 0; i < n; i++)
        w[i] = ring->recent[(start + i) % RECENT];
    if (1.0 - expected < 0.05) /* (almost) one PC: the constant-PC check speaks for that */
        goto done;
    uint64_t allowed = (uint64_t)((1.0 - LOCKSTEP_MIN_RATE) * (double)n); /* mismatches a lag may have */
    for (uint32_t lag = 1; lag < n / 4; lag++) {
        uint64_t pairs = n - lag, miss = 0, limit = allowed < pairs ? allowed : pairs;
        /* most lags fail at once: twice the allowed rate in the first 512 pairs rejects them (a lag
         * at the allowed 10 % shows 51 +- 7 mismatches there, never 102) */
        uint64_t first = pairs < 512 ? pairs : 512, quick = 2 * (first * limit / pairs) + 1;
        for (uint64_t i = 0; i < first && miss <= quick; i++)
            miss += w[i] != w[i + lag];
        if (miss > quick)
            continue;
        for (uint64_t i = first; i < pairs && miss <= limit; i++)
            miss += w[i] != w[i + lag];
        if (miss > limit)
            continue;
        double rate = 1.0 - (double)miss / (double)pairs;
        if (!ls->found || rate > ls->rate) {
            ls->found = true;
            ls->rate = rate;
            ls->lag = lag;
            allowed = miss; /* later lags must do at least as well */
        }
    }
    ls->found = ls->found && 1.0 - ls->rate < 0.5 * (1.0 - expected);
done:
    free(w);
}

/* The instruction just before pc enables interrupts or lowers the masking level: Thumb (Cortex-M,
 * or Thumb code on Cortex-A/R), or A32 where the ELF's mapping symbols say ARM state. */
static const char *enables_interrupts(const struct prof *p, uint32_t pc)
{
    uint8_t b[4];
    if (!p->syms || pc < 4 || sym_read_code(p->syms, pc - 4, b, 4) != 4)
        return NULL;
    if (sym_is_arm(p->syms, pc - 4)) {
        uint32_t w = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        if ((w & 0xFFFDFE20u) == 0xF1080000u && (w & 0x80u)) /* CPS with imod = enable, the I bit */
            return "cpsie i";
        if ((w & 0x0FFFFFF0u) == 0x0121F000u) /* MSR CPSR_c, Rn: may clear the I bit */
            return "msr cpsr_c";
        if ((w & 0x0FFFF000u) == 0x0321F000u && !(w & 0x80u)) /* MSR CPSR_c, #imm with I clear */
            return "msr cpsr_c";
        return NULL;
    }
    uint16_t h1 = (uint16_t)(b[0] | b[1] << 8), h2 = (uint16_t)(b[2] | b[3] << 8);
    if (h2 == 0xB662)
        return "cpsie i";
    if ((h1 & 0xFFF0u) == 0xF380u && (h2 & 0xFF00u) == 0x8800u) {
        switch (h2 & 0xFFu) {
        case 0x10:
            return "msr primask";
        case 0x11:
            return "msr basepri";
        case 0x12:
            return "msr basepri_max";
        default:
            break;
        }
    }
    return NULL;
}

const char *prof_skid_cause(const struct prof *p, uint32_t pc)
{
    return enables_interrupts(p, pc);
}

/* Thumb code: is the halfword the first of a 32-bit instruction? */
static bool thumb32(uint16_t hw)
{
    return (hw >> 11) >= 0x1Du;
}

uint32_t prof_idle_resume_in(const uint16_t *code, uint32_t halfwords)
{
    bool waited = false;
    for (uint32_t i = 0; i < halfwords; i += thumb32(code[i]) ? 2u : 1u) {
        if (code[i] == 0xBF30u) /* wfi */
            waited = true;
        else if (waited && code[i] == 0xB662u) /* cpsie i */
            return 2u * (i + 1u);
    }
    return 0u;
}

uint32_t prof_idle_resume(struct sym_table *syms, uint32_t *entry)
{
    uint32_t lo, hi;
    uint8_t b[128];
    uint16_t code[64];
    if (!syms || !sym_function_named(syms, "arch_cpu_idle", &lo, &hi))
        return 0u;
    lo &= ~1u;
    size_t n = sym_read_code(syms, lo, b, hi - lo < sizeof b ? hi - lo : sizeof b);
    for (size_t i = 0; i + 1 < n; i += 2)
        code[i / 2] = (uint16_t)(b[i] | b[i + 1] << 8);
    uint32_t at = prof_idle_resume_in(code, (uint32_t)(n / 2));
    *entry = lo;
    return at ? lo + at : 0u;
}

/* Samples whose task tag has no name (interrupt handlers have theirs): all of them, those the
 * firmware sent no tag for, those of tag 0, and one such tag (the most sampled); apart from them,
 * those of stream indexes whose name has not come yet (the host attached mid-stream), and one such. */
struct unnamed {
    double all, unsent, zero, top;
    uint32_t example;
    double pending, top_pending;
    uint32_t pending_example;
};

static struct unnamed count_unnamed(const struct prof *p)
{
    struct unnamed u = {0};
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0 || !e->has_tag || prof_in_exception(e))
            continue;
        const struct task *tk = prof_task_of(p, e);
        if (tk && !prof_nameless(tk))
            continue;
        if (!tk && ev_tag_pending(e->tag)) {
            u.pending += e->count;
            if (e->count > u.top_pending) {
                u.top_pending = e->count;
                u.pending_example = e->tag - EV_TAG_PENDING_BASE;
            }
            continue;
        }
        uint32_t tag = tk ? tk->tag : e->tag; /* a sample that waited for its index's name: the name's tag */
        u.all += e->count;
        u.unsent += tag == EV_TAG_UNSENT ? e->count : 0;
        u.zero += tag == 0 ? e->count : 0;
        if (tag != EV_TAG_UNSENT && e->count > u.top) {
            u.top = e->count;
            u.example = tag;
        }
    }
    return u;
}

/* The likely reason tags have no name, from what the stream showed. */
static void unnamed_cause(const struct prof *p, const struct unnamed *u, char *buf, size_t len)
{
    if (u->unsent || p->table_full)
        snprintf(buf, len, "the firmware's task table was full (%sraise CMPROF_STREAM_TASKS, or CONFIG_CMPROF_TASKS "
                 "in a Zephyr prj.conf)%s", p->table_full ? "" : "older firmware had 62 slots; ",
                 u->unsent ? ", so no tag was sent" : "");
    else if (u->zero >= u->all / 2)
        snprintf(buf, len, "tag 0: samples taken before the RTOS ran its first task (start sampling after the "
                 "scheduler starts)");
    else
        snprintf(buf, len, "no name was given for them: the RTOS hook or cmprof_stream_task() missed these "
                 "tasks, or the capture began after their names");
}

/* The diagnostics found so far, up to max. */
struct diags {
    struct prof_diag *out;
    size_t n, max;
};

static void add(struct diags *d, enum prof_diag_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(struct diags *d, enum prof_diag_kind kind, const char *fmt, ...)
{
    if (d->n >= d->max)
        return;
    va_list ap;
    va_start(ap, fmt);
    d->out[d->n].kind = kind;
    char raw[sizeof d->out[0].text];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* the names in it (a function, a task) are the ELF's and the firmware's: no control byte of theirs
     * reaches a terminal, a CI log or a report (the table printed a skid's function raw) */
    esc_text(d->out[d->n].text, sizeof d->out[d->n].text, raw, NULL);
    d->n++;
}

/* Per-PC totals (tags merged) of the samples at 0, outside the ELF's code, outside its functions. */
struct places {
    double zero, outside_code, outside_funcs;
    uint32_t example_out;
    size_t distinct;
};
#define PROF_OUTSIDE_MIN 5     /* samples outside the ELF's code that make a diagnostic (and a wrong ELF) */
#define PROF_ZERO_MIN 5        /* samples at PC 0 for the memory-fault diagnostic... */
#define PROF_ZERO_SHARE 0.01   /* ... and their share of all samples */

static struct places count_places(struct prof *p)
{
    struct places w = {0};
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        w.distinct++;
        if (e->pc == 0) {
            w.zero += e->count;
            continue;
        }
        if (p->syms && !sym_in_code(p->syms, e->pc)) {
            w.outside_code += e->count;
            w.example_out = e->pc;
        } else if (p->syms && !prof_function_at(p, e->pc)) {
            w.outside_funcs += e->count;
        }
    }
    return w;
}

/* What breaks the lockstep, for the sampler that took the samples: only the firmware's timer takes
 * CMPROF_JITTER; the DWT's sampler has a fixed period of POSTPRESET and CYCTAP; a probe's halts
 * follow --rate. */
static const char *lockstep_advice(enum prof_sampler s)
{
    switch (s) {
    case PROF_SAMPLER_FIRMWARE:
        return "randomize the period (build with CMPROF_JITTER)";
    case PROF_SAMPLER_DWT:
        return "the DWT's PC sampler has a fixed period ((POSTPRESET + 1) x 64 cycles, x 1024 with CYCTAP): "
               "pick a reload or tap whose period is no multiple of the loop's, or sample with the firmware's "
               "timer and CMPROF_JITTER";
    case PROF_SAMPLER_HALTING:
        return "the probe's halts kept a steady pace: try another --rate (a slow server sets the pace itself)";
    case PROF_SAMPLER_PCSR:
        return "the probe's reads of DWT_PCSR kept the loop's pace (they are not randomized): sample through "
               "gdb: (random halts) or with the firmware's timer and CMPROF_JITTER";
    default:
        return "randomize the period (the firmware's sampler: build with CMPROF_JITTER; the DWT's: another "
               "POSTPRESET/CYCTAP; a probe's halts: another --rate)";
    }
}

void prof_set_sampler(struct prof *p, enum prof_sampler s)
{
    p->sampler = s;
}

/* A share of samples at PC 0 too large for chance and too small for a wrong stack (that check
 * speaks above 90 %): the sampler read memory that holds nothing, e.g. a ring placed past the
 * machine's RAM (reads 0, writes ignored). */
static void memory_fault_check(const struct places *w, double total, struct diags *d)
{
    if (total <= 0 || w->zero < PROF_ZERO_MIN || w->zero / total < PROF_ZERO_SHARE || w->zero / total >= 0.9)
        return;
    add(d, DIAG_MEMORY_FAULT,
        "memory fault? %.1f %% of samples (%.0f) read PC 0x00000000, where no code runs: the samples' buffer "
        "(the ring) or the stack may lie in memory the machine does not have (reads 0, writes lost); check the "
        "linker script's RAM against the board's memory map", 100.0 * w->zero / total, w->zero);
}

/* A PC that never changes (a prologue reading the wrong stack), or PCs in step with the program. */
static void sampling_checks(struct prof *p, const struct places *w, const struct pc_count *pcs, size_t merged,
                            double total, struct diags *d)
{
    double top_count = 0;
    uint32_t top_pc = 0;
    for (size_t i = 0; i < merged; i++)
        if (pcs[i].count > top_count) {
            top_count = pcs[i].count;
            top_pc = pcs[i].pc;
        }
    memory_fault_check(w, total, d);
    if (total >= 20 && w->zero / total >= 0.9)
        add(d, DIAG_WRONG_STACK,
            "wrong stack in the prologue: %.0f of %.0f samples read PC 0x00000000; the handler reads the frame from "
            "MSP while the code runs on PSP (pick the stack by EXC_RETURN bit 2)",
            w->zero, total);
    else if (p->raw_samples >= 100 && merged == 1)
        add(d, DIAG_WRONG_STACK,
            "constant PC: all %.0f samples are 0x%08x; a prologue reading the wrong stack, or sampling in exact "
            "step with the program",
            total, top_pc);
    /* once the window is full, search again only when half of it is new: the live view asks ten
     * times a second, and a search is not cheap */
    uint64_t since = p->raw_samples - p->lockstep.computed_at;
    if (since && (p->raw_samples < RECENT || since >= RECENT / 2))
        find_lockstep(p);
    if (p->lockstep.found && !d->n) /* a constant PC says it already */
        add(d, DIAG_LOCKSTEP,
            "lockstep suspected: the PCs repeat every %u samples (%.1f %% of the last %u match, %.1f %% expected "
            "from the profile's spread), so most of the program is never sampled; %s",
            p->lockstep.lag, 100.0 * p->lockstep.rate, p->lockstep.window, 100.0 * p->lockstep.expected,
            lockstep_advice(p->sampler));
    /* skid: a large share right after an instruction that re-enables interrupts */
    for (size_t i = 0; i < merged && p->syms; i++) {
        if (pcs[i].count < 20 || pcs[i].count / total < 0.02)
            continue;
        const char *what = enables_interrupts(p, pcs[i].pc);
        if (!what)
            continue;
        const struct sym_location *l = sym_lookup(p->syms, pcs[i].pc);
        add(d, DIAG_SKID,
            "interrupts-disabled skid: %.1f %% of samples sit on 0x%08x in %s, right after '%s'; that time was "
            "spent with interrupts disabled before it",
            100.0 * pcs[i].count / total, pcs[i].pc, l && l->known ? sym_frame_at(l, l->n_frames - 1)->function : "??",
            what);
    }
}

/* Why the build-id the firmware announced is not the ELF's, or NULL when it is (or none came). */
static const char *build_id_mismatch(const struct prof *p)
{
    if (!p->syms || !p->stream_id_len)
        return NULL;
    size_t len;
    const uint8_t *id = sym_build_id(p->syms, &len);
    if (!id)
        return "the ELF does not have";
    return len != p->stream_id_len || memcmp(id, p->stream_id, len) != 0 ? "differs from the ELF's" : NULL;
}

/* Signs that the ELF is not the sampled firmware's. */
static void elf_checks(struct prof *p, const struct places *w, const struct prof_code_check *cc, double total,
                       struct diags *d)
{
    if (cc->wrong && cc->buckets)
        add(d, DIAG_NOT_STARTS,
            "wrong ELF? %zu of %zu histogram buckets with samples hold none of its instructions' starts (%.1f %% "
            "of samples; data or padding), e.g. the bucket at 0x%08x: the capture is of another build",
            cc->bad_pcs, cc->pcs, 100.0 * cc->share, cc->example);
    else if (cc->wrong)
        add(d, DIAG_NOT_STARTS,
            "wrong ELF? %zu of %zu sampled addresses are not where any of its instructions starts (%.1f %% of "
            "samples; inside one, in data or padding), e.g. 0x%08x: the capture is of another build",
            cc->bad_pcs, cc->pcs, 100.0 * cc->share, cc->example);
    else if (cc->bad_pcs >= PROF_BAD_PCS_MIN && !cc->buckets) /* few samples, but the right ELF has none */
        add(d, DIAG_NOT_STARTS,
            "another build? %zu of %zu sampled addresses are not where any of the ELF's instructions starts (%.2f %% "
            "of samples, e.g. 0x%08x), where the right ELF has none: the rows may name the wrong code (or PCs were "
            "garbled on the way)", cc->bad_pcs, cc->pcs, 100.0 * cc->share, cc->example);
    if (p->syms && w->outside_code >= PROF_OUTSIDE_MIN && w->outside_code / total >= 0.01)
        add(d, DIAG_WRONG_ELF, "wrong ELF? %.1f %% of samples (%.0f) fall outside the ELF's code, e.g. 0x%08x",
            100.0 * w->outside_code / total, w->outside_code, w->example_out);
    struct sym_stats st = {0};
    if (p->syms)
        sym_get_stats(p->syms, &st);
    if (p->syms && !st.functions) /* stripped: no function to fall in, and no way to tell a wrong ELF */
        add(d, DIAG_WRONG_ELF, "the ELF has no function symbols (stripped?): the samples can be neither named nor "
            "checked against it; give the ELF the linker wrote");
    else if (p->syms && w->outside_funcs >= 5 && w->outside_funcs / total >= 0.05)
        add(d, DIAG_WRONG_ELF, "wrong ELF? %.1f %% of samples fall outside every function of the ELF",
            100.0 * w->outside_funcs / total);
    const char *id_why = build_id_mismatch(p);
    if (id_why)
        add(d, DIAG_BUILD_ID, "wrong ELF: the firmware announces a build-id that %s", id_why);
}

void prof_trust(struct prof *p, struct prof_trust *out)
{
    prof_settle(p);
    *out = (struct prof_trust){0};
    double total = prof_total(p);
    if (total <= 0)
        return;
    struct places w = count_places(p);
    struct prof_code_check cc;
    prof_check_code(p, &cc);
    out->build_id = build_id_mismatch(p) != NULL;
    out->outside_share = p->syms ? w.outside_code / total : 0;
    out->zero_share = w.zero / total;
    out->outside = out->outside_share > PROF_OUTSIDE_MOST && w.outside_code >= PROF_OUTSIDE_MIN; /* as elf_checks */
    out->not_starts = cc.wrong;
    out->wrong_elf = out->build_id || out->outside || out->not_starts;
}

static void task_checks(struct prof *p, double total, struct diags *d)
{
    struct unnamed u = count_unnamed(p);
    if (u.pending > 0 && total > 0)
        add(d, DIAG_UNNAMED_TAGS, "unnamed tasks: %.1f %% of samples (%.0f) came before their task's name (e.g. task "
            "#%u, shown as its own row until then); likely cause: the capture or the view attached mid-stream; the "
            "firmware repeats names, so they arrive within seconds", 100.0 * u.pending / total, u.pending,
            (unsigned)u.pending_example);
    if (u.all <= 0 || total <= 0)
        return;
    char cause[190];
    unnamed_cause(p, &u, cause, sizeof cause);
    if (u.top > 0)
        add(d, DIAG_UNNAMED_TAGS, "unnamed tasks: %.1f %% of samples (%.0f) carry task tags that were never named "
            "(e.g. 0x%08x, shown as its own row); likely cause: %s", 100.0 * u.all / total, u.all, u.example,
            cause);
    else
        add(d, DIAG_UNNAMED_TAGS, "unnamed tasks: %.1f %% of samples (%.0f) carry no task tag; likely cause: %s",
            100.0 * u.all / total, u.all, cause);
}

/* Which rows the loss bound reaches past their 95 % intervals, by their sample counts (rows are
 * not at hand here: a caller may hold them), in words: "every row", "no row", "rows of 120 to
 * 9,000 samples". */
static void loss_rows(const struct prof *p, double total, char *buf, size_t len)
{
    double step = total > 1000 ? total / 1000 : 1, first = -1, last = -1;
    bool all = true;
    for (double c = 1; c <= total; c += step) {
        double lo, hi, wlo, whi;
        prof_loss_bound(p, c, &lo, &hi);
        prof_wilson95(c / total, total, &wlo, &whi);
        if (lo < wlo || hi > whi) {
            first = first < 0 ? c : first;
            last = c;
        } else {
            all = false;
        }
    }
    if (all)
        snprintf(buf, len, "every row");
    else if (first < 0)
        snprintf(buf, len, "no row (too few lost to matter)");
    else
        snprintf(buf, len, "rows of %.0f to %.0f samples", first, last);
}

/* Samples lost in the firmware: the shares' bound, never a silent bias. */
static void loss_checks(const struct prof *p, double total, struct diags *d)
{
    uint64_t lost = prof_lost(p);
    if (!lost || total <= 0)
        return;
    double taken = total + (double)lost, share = (double)lost / taken;
    char rows[80];
    loss_rows(p, total, rows, sizeof rows);
    add(d, DIAG_LOSS_BIAS,
        "shares may be biased: %llu of %.0f samples taken (%.1f %%) lost in the firmware's full ring while "
        "its drain could not run, not at random: a row of c samples had c/%.0f to (c+%llu)/%.0f of the time, "
        "up to %.1f points more or %.1f %% less than shown; past the 95 %% interval of %s",
        (unsigned long long)lost, taken, 100.0 * share, taken, (unsigned long long)lost, taken, 100.0 * share,
        100.0 * share, rows);
}

void prof_order_done(struct prof *p)
{
    if (p->raw_samples != p->lockstep.computed_at)
        find_lockstep(p); /* (prof_diagnose searches again only when samples came since) */
}

size_t prof_diagnose(struct prof *p, struct prof_diag *out, size_t max)
{
    prof_settle(p);
    struct diags d = {out, 0, max};
    double total = prof_total(p);
    if (p->raw_samples == 0 && total == 0)
        return 0;
    struct places w = count_places(p);
    /* per-PC counts with tags merged, for the constant-PC, skid and instruction-start checks */
    size_t merged;
    struct pc_count *pcs = merged_pcs(p, w.distinct, &merged);
    sampling_checks(p, &w, pcs, merged, total, &d);
    struct prof_code_check cc;
    check_code(p, pcs, merged, &cc);
    free(pcs);
    elf_checks(p, &w, &cc, total, &d);
    task_checks(p, total, &d);
    loss_checks(p, total, &d);
    return d.n;
}
