/* Format detection and decoder chains in front of the profile model. */
#include "ingest.h"

#include "../decode/hex.h"
#include "../decode/itm.h"
#include "../decode/orbflow.h"
#include "../decode/text.h"
#include "../decode/tpiu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample as its stack evidence finds it: a '^' line's sample is in the line before (64 at most), a
 * dump's among its newest (CMPROF_STACK_RECORDS * CMPROF_STACK_EVERY: 128 by default; 1024 at most). */
#define INGEST_RECENT 1024
struct ingest_recent {
    uint32_t pc, tag;
    bool has_tag, counted;
};

/* What the first bytes are (ingest_losses' "its bytes are UTF-16 text", "... are text, not tpiu"),
 * worked out once per new bytes: the live view asks at every repaint while no sample came. */
struct byte_look {
    size_t n;                   /* the bytes looked at (0 and no scans: not yet) */
    bool utf16;
    enum detect_format judged;  /* with a format forced (-f): what the detection reads them as */
    uint64_t scans;             /* times worked out (ingest_counts' byte_looks) */
};

struct ingest {
    struct prof *profs[INGEST_PROFILES]; /* every event goes to each; the whole run's first */
    size_t n_profs;
    enum detect_format format; /* DETECT_UNKNOWN until decided */
    uint8_t pending[DETECT_WINDOW];
    size_t n_pending;
    uint64_t zeros_held;        /* leading zeros not in pending: a run of them tells no format */
    uint64_t noise;             /* leading bytes the detection found to be noise, not decoded */
    struct text_decoder text;
    struct itm_decoder itm;
    struct tpiu_decoder tpiu;
    struct orbflow_decoder orbflow;
    struct ev_sink sink;
    uint64_t bytes;             /* fed in, whatever the format */
    uint64_t lost;              /* samples the firmware reports it dropped, over every firmware run */
    uint64_t lost_run;          /* ... the count the firmware last reported (cumulative in its run) */
    uint64_t stack_dropped;     /* samples whose stack evidence it dropped, over every firmware run */
    uint64_t stack_dropped_run; /* ... the count the firmware last reported (cumulative in its run) */
    uint64_t max_samples;       /* 0: no limit; else samples past it are not counted (--samples) */
    uint64_t past_limit;        /* samples decoded after the limit was reached */
    bool last_counted, last_has_tag; /* the last sample: counted, and its tag (a stack may follow) */
    uint32_t last_tag;
    void (*on_log)(void *ctx, const char *text, size_t len); /* optional: firmware log lines */
    void *log_ctx;
    struct timeline *timeline;  /* the samples' order (-o trace), from the first sample; NULL before */
    struct ingest_recent recent[INGEST_RECENT]; /* the last stream samples, for the stack evidence after them */
    uint64_t n_recent;
    struct ingest_stacks stacks;
    bool flat_stacks;           /* leave the stack evidence aside */
    bool mid_stream;            /* (ingest_options') */
    bool idle_looked;           /* the idle wait's resume point looked for (at the first sample) */
    uint32_t idle_resume, idle_entry; /* ... its address (0: none) and its function's */
    const char *forced;         /* the user's option that set the format: pending keeps the first bytes, ... */
    size_t n_seen;              /* ... what they are when that format read nothing from them (misread) */
    uint64_t cut;               /* at the end: bytes of the last packet, frame or line the input stopped in */
    const char *cut_what;       /* ... "ITM packet", "TPIU frame", "orbflow frame" or "line" */
    struct byte_look *look;     /* -> look_kept: a cache the const readers fill, not the ingest's state */
    struct byte_look look_kept;
};

/* The whole run's profile: the one --samples counts against. */
static struct prof *whole(const struct ingest *in)
{
    return in->profs[0];
}

/* How many of n samples fit under --samples; the rest are counted as past the limit. */
static uint64_t admit(struct ingest *in, uint64_t n)
{
    if (!in->max_samples)
        return n;
    double total = prof_total(whole(in));
    uint64_t room = total >= (double)in->max_samples ? 0 : in->max_samples - (uint64_t)total;
    uint64_t take = n < room ? n : room;
    in->past_limit += n - take;
    return take;
}

/* "arch=A timer=T": what the firmware runs on. */
/* Eight hex digits (checked by the caller's length); a digit that is not one reads as 0. */
static uint32_t hex32(const char *s)
{
    uint32_t v = 0;
    for (int k = 0; k < 8; k++) {
        int h = hex_digit_value(s[k]);
        v = v << 4 | (uint32_t)(h < 0 ? 0 : h);
    }
    return v;
}

static void take_target(struct prof_stream_info *info, const struct ev *e)
{
    const char *t = e->target.text, *end = e->target.text + e->target.len;
    while (t < end) {
        const char *w = t;
        while (t < end && *t != ' ')
            t++;
        if ((size_t)(t - w) > 5 && memcmp(w, "arch=", 5) == 0)
            snprintf(info->arch, sizeof info->arch, "%.*s", (int)(t - w - 5), w + 5);
        else if ((size_t)(t - w) > 6 && memcmp(w, "timer=", 6) == 0)
            snprintf(info->timer, sizeof info->timer, "%.*s", (int)(t - w - 6), w + 6);
        else if ((size_t)(t - w) == 13 && memcmp(w, "midr=", 5) == 0)
            info->midr = hex32(w + 5);
        while (t < end && *t == ' ')
            t++;
    }
}

/* What the firmware announced, changed by `take`, given to every profile fed. */
static void announce(struct ingest *in, void (*take)(struct prof_stream_info *, const struct ev *), const struct ev *e)
{
    struct prof_stream_info i = *prof_stream_info(whole(in));
    take(&i, e);
    for (size_t k = 0; k < in->n_profs; k++)
        prof_set_stream_info(in->profs[k], &i);
}

/* The firmware's announce: its clocks and period, and its build-id (hex), given to the profile. */
static void take_announce(struct prof_stream_info *i, const struct ev *e)
{
    i->present = true;
    i->clock_hz = e->info.clock_hz;
    i->timer_hz = e->info.timer_hz;
    i->section_hz = e->info.section_hz;
    i->period = e->info.period;
    i->jitter = e->info.jitter;
    i->code_base = e->info.code_base;
    size_t n = e->info.build_id_len < 40 ? e->info.build_id_len : 40;
    memcpy(i->build_id, e->info.build_id, n);
    i->build_id[n] = '\0';
}

static void take_stream_info(struct ingest *in, const struct ev *e)
{
    announce(in, take_announce, e);
    const char *hex = prof_stream_info(whole(in))->build_id;
    size_t n = strlen(hex);
    uint8_t id[20];
    size_t k = 0;
    for (; k < n / 2; k++) {
        unsigned v;
        if (sscanf(hex + 2 * k, "%2x", &v) != 1)
            break;
        id[k] = (uint8_t)v;
    }
    for (size_t p = 0; p < in->n_profs && k; p++) /* a window's snapshot is a report too */
        prof_stream_build_id(in->profs[p], id, k);
}

/* What a count the firmware keeps cumulative in its run adds to the last one it reported; a smaller
 * count is a restarted firmware's, all new. */
static uint64_t since_last_report(uint64_t *last, uint64_t now)
{
    uint64_t more = now >= *last ? now - *last : now;
    *last = now;
    return more;
}

/* Samples the firmware could not keep: the profiles bound the shares by them (prof_loss_bound). */
static void lost_more(struct ingest *in, uint64_t n)
{
    for (size_t k = 0; k < in->n_profs; k++)
        prof_samples_lost(in->profs[k], n);
}

/* A sample's call stack, in every profile. */
static void add_stack(struct ingest *in, uint32_t pc, const uint32_t *callers, size_t n, bool has_tag, uint32_t tag)
{
    for (size_t k = 0; k < in->n_profs; k++)
        prof_add_stack(in->profs[k], pc, callers, n, has_tag, tag);
}

#define STACK_WALK_MAX 64 /* callers a firmware sample's stack is walked to, at most */

/* A firmware sample's stack evidence: its sample found among the last ones by position and PC,
 * then walked with the ELF's call-frame information; a walk that ends unproven gets its mark. */
static void stack_words(struct ingest *in, const struct ev_stack_words *e)
{
    in->stacks.evidence++;
    if (in->flat_stacks) {
        in->stacks.ignored++;
        return;
    }
    uint64_t back = e->back;
    const struct ingest_recent *r = back < in->n_recent && back < INGEST_RECENT
                                        ? &in->recent[(in->n_recent - 1 - back) % INGEST_RECENT]
                                        : NULL;
    if (!r || r->pc != e->pc) {
        in->stacks.unmatched++;
        return;
    }
    struct sym_table *syms = prof_symbols(whole(in));
    if (!syms) {
        in->stacks.no_symbols++;
        return;
    }
    if (!r->counted)
        return;
    uint32_t callers[STACK_WALK_MAX + 1];
    struct sym_stack_words w = {e->pc, e->lr, e->scanned, (size_t)e->n, e->pairs};
    bool unproven = false;
    size_t n = sym_unwind_words(syms, &w, callers, STACK_WALK_MAX, &unproven);
    if (unproven)
        callers[n++] = PROF_UNPROVEN_PC;
    in->stacks.unwound++;
    in->stacks.unproven += unproven;
    add_stack(in, e->pc, callers, n, r->has_tag, r->tag);
}

void ingest_stacks_note(const struct ingest *in, char *text, size_t len)
{
    const struct ingest_stacks *s = &in->stacks;
    if (len)
        *text = 0;
    if (prof_has_stacks(whole(in)) || !len)
        return;
    if (!s->evidence)
        snprintf(text, len, "no call stacks: this capture carries no stack evidence (build the firmware's sampler "
                 "with CMPROF_STACKS=1 and add cmprof_stack.c, or profile through a gdb: source with --stack-depth)");
    else if (s->ignored == s->evidence)
        snprintf(text, len, "no call stacks: the %llu samples' stack evidence left aside (--stack-depth 0)",
                 (unsigned long long)s->evidence);
    else if (s->no_symbols == s->evidence)
        snprintf(text, len, "no call stacks: %llu samples carry stack evidence, but it takes the ELF's call-frame "
                 "information to unwind them: give the ELF", (unsigned long long)s->evidence);
    else
        snprintf(text, len, "no call stacks: none of the %llu samples' stack evidence matched its sample (%llu "
                 "lines lost between)", (unsigned long long)s->evidence, (unsigned long long)s->unmatched);
}

/* Samples at Zephyr's idle resume point (prof_idle_resume) are charged to arch_cpu_idle's entry: idle
 * shows as idle, not as interrupts-off code before the cpsie i (real interrupts-off code keeps its
 * warning). The host does it, from the ELF, so the firmware's tick pays nothing for it. */
static uint32_t idle_pc(struct ingest *in, uint32_t pc, bool has_tag)
{
    if (!in->idle_looked && has_tag) { /* (the module's samples are tagged: ITM's never pay the look) */
        in->idle_looked = true;
        in->idle_resume = prof_idle_resume(prof_symbols(whole(in)), &in->idle_entry);
    }
    return pc == in->idle_resume && pc ? in->idle_entry : pc;
}

/* A PC sample (or a reservoir's, standing for taken / kept) in every profile. */
static void one_pc(struct ingest *in, const struct ev_pc *e)
{
    uint32_t pc = idle_pc(in, e->addr, e->has_tag != 0);
    in->last_has_tag = e->has_tag != 0; /* for the stack that may follow */
    in->last_tag = e->tag;
    in->last_counted = admit(in, 1) == 1;
    in->recent[in->n_recent++ % INGEST_RECENT] = (struct ingest_recent){e->addr, e->tag, e->has_tag != 0, in->last_counted};
    if (!in->last_counted)
        return;
    if (e->kept) { /* a reservoir's sample, for taken / kept */
        for (size_t k = 0; k < in->n_profs; k++)
            prof_add_pc_weighted(in->profs[k], pc, e->has_tag != 0, e->tag, (double)e->taken / (double)e->kept);
        return; /* not in the timeline: a weighted sample has no place in the order */
    }
    for (size_t k = 0; k < in->n_profs; k++)
        prof_add_pc(in->profs[k], pc, e->has_tag != 0, e->tag);
    if (in->timeline || (in->timeline = timeline_new())) /* made at the first sample */
        timeline_samples(in->timeline, e->has_tag != 0, e->tag, 1);
}

/* A run of untagged PC samples. */
static void pc_run(struct ingest *in, const struct ev_pcs *e)
{
    uint64_t n = admit(in, e->n);
    in->last_has_tag = false;
    in->last_counted = n == e->n;
    for (uint64_t i = e->n > INGEST_RECENT ? e->n - INGEST_RECENT : 0; i < e->n; i++)
        in->recent[in->n_recent++ % INGEST_RECENT] = (struct ingest_recent){e->addrs[i], 0, false, i < n};
    for (size_t k = 0; k < in->n_profs; k++)
        prof_add_pcs(in->profs[k], e->addrs, (size_t)n);
    if (in->timeline || (in->timeline = timeline_new())) /* one call per run of untagged samples */
        timeline_samples(in->timeline, false, 0, n);
}

/* The task events, in every profile: the live view's w window names its tasks too. */
static void task_event(struct ingest *in, const struct ev *e)
{
    for (size_t k = 0; k < in->n_profs; k++) {
        struct prof *p = in->profs[k];
        if (e->type == EV_TASK_NAME) {
            prof_task_name(p, e->task_name.tag, e->task_name.name, e->task_name.name_len);
            if (e->task_name.pending)
                prof_task_pending_named(p, e->task_name.pending, e->task_name.tag);
        } else if (e->type == EV_NAMES_UNSURE) {
            prof_task_names_unsure(p);
        } else if (e->type == EV_TASK_UNKNOWN) {
            prof_task_unknown(p, e->task_unknown.tag);
        } else if (e->type == EV_TABLE_FULL) {
            prof_task_table_full(p, e->table_full.slots);
        }
    }

}

/* A section's figures, one of its PMU events' or its name, in every profile. */
static void section_event(struct ingest *in, const struct ev *e)
{
    const struct ev_run *r = e->type == EV_SECTION ? &e->section.run
                             : e->type == EV_SECTION_EVENT ? &e->section_event.run
                                                           : NULL;
    struct prof_run run = {0};
    if (r)
        run = (struct prof_run){r->current, r->count, r->min, r->max, r->sum, r->long_runs};
    for (size_t k = 0; k < in->n_profs; k++) {
        if (e->type == EV_SECTION)
            prof_section_run(in->profs[k], e->section.index, &run);
        else if (e->type == EV_SECTION_EVENT)
            prof_section_event(in->profs[k], e->section_event.section, e->section_event.slot,
                               e->section_event.pmu_event, &run);
        else
            prof_section_name(in->profs[k], e->section_name.index, e->section_name.name, e->section_name.name_len);
    }
    if (e->type == EV_SECTION && e->section.index < PROF_SECTIONS && (in->timeline || (in->timeline = timeline_new())))
        timeline_section(in->timeline, e->section.index, r->count, r->current, r->sum);
}

static void on_event(void *ctx, const struct ev *e)
{
    struct ingest *in = ctx;
    uint64_t n;
    switch (e->type) {
    case EV_PC:
        one_pc(in, &e->pc);
        break;
    case EV_PCS:
        pc_run(in, &e->pcs);
        break;
    case EV_SLEEP:
        /* past a sample the limit refused, a sleep is past it too: how far the stream was read
         * beyond the limit depends on how it arrived, and the sleep count must not */
        if (in->past_limit) {
            in->past_limit++;
            break;
        }
        for (size_t k = 0; k < in->n_profs; k++)
            prof_add_sleep(in->profs[k]);
        break;
    case EV_BUCKET:
        n = admit(in, e->bucket.samples);
        for (size_t k = 0; k < in->n_profs; k++)
            prof_add_bucket(in->profs[k], e->bucket.addr, e->bucket.bytes, n);
        break;
    case EV_TASK_NAME:
    case EV_NAMES_UNSURE:
    case EV_TASK_UNKNOWN:
    case EV_TABLE_FULL:
        task_event(in, e);
        break;
    case EV_LOG:
        if (in->on_log)
            in->on_log(in->log_ctx, e->log.line, e->log.len);
        break;
    case EV_SECTION:
    case EV_SECTION_EVENT:
    case EV_SECTION_NAME:
        section_event(in, e);
        break;
    case EV_TARGET:
        announce(in, take_target, e);
        break;
    case EV_STACK: /* the call stack of the sample just counted */
        if (in->last_counted)
            add_stack(in, e->stack.pc, e->stack.callers, (size_t)e->stack.n, in->last_has_tag, in->last_tag);
        break;
    case EV_STACK_WORDS:
        stack_words(in, &e->stack_words);
        break;
    case EV_STACK_DROPPED: /* both counts cumulative in the firmware's run */
        in->stack_dropped += since_last_report(&in->stack_dropped_run, e->stack_dropped.records);
        break;
    case EV_LOST: {
        uint64_t more = since_last_report(&in->lost_run, e->lost.samples);
        in->lost += more;
        lost_more(in, more);
        break;
    }
    case EV_STREAM_INFO:
        take_stream_info(in, e);
        break;
    default:
        break;
    }
}

static void tpiu_to_itm(void *ctx, const uint8_t *buf, size_t len)
{
    struct ingest *in = ctx;
    itm_feed(&in->itm, buf, len, &in->sink);
}

static void tpiu_hole_to_itm(void *ctx)
{
    struct ingest *in = ctx;
    itm_hole(&in->itm);
}

/* Where TPIU and orbflow pass the ITM stream they unwrap: the ITM decoder, told of its holes. */
static struct byte_sink to_itm(struct ingest *in)
{
    return (struct byte_sink){tpiu_to_itm, in, tpiu_hole_to_itm};
}

/* The format, once: the text decoder is set up only for text (its tables, 55 KB, stay untouched for
 * ITM; until then its zeroed stats read as a fresh decoder's). */
static void set_format(struct ingest *in, enum detect_format format)
{
    in->format = format;
    if (format == DETECT_TEXT) {
        text_init(&in->text);
        in->text.joined_mid_line = in->mid_stream;
    }
}

struct ingest *ingest_new(struct prof *prof, const struct ingest_options *o)
{
    struct ingest *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->profs[0] = prof;
    in->n_profs = 1;
    in->sink = (struct ev_sink){on_event, in};
    in->look = &in->look_kept;
    in->mid_stream = o->mid_stream;
    in->forced = o->format != DETECT_UNKNOWN ? o->format_option : NULL;
    set_format(in, o->format);
    itm_init(&in->itm, o->wait_sync);
    in->itm.batch_pcs = true; /* on_event takes EV_PCS: one call per run of PC samples */
    tpiu_init(&in->tpiu, o->tpiu_id);
    if (o->tpiu_offset)
        tpiu_force_offset(&in->tpiu, o->tpiu_offset - 1u);
    orbflow_init(&in->orbflow, o->tpiu_id);
    in->flat_stacks = o->flat_stacks;
    in->max_samples = o->max_samples;
    in->on_log = o->on_log;
    in->log_ctx = o->log_ctx;
    return in;
}

void ingest_set_profiles(struct ingest *in, struct prof *const *profs, size_t n)
{
    in->n_profs = 0;
    for (size_t k = 0; k < n && k < INGEST_PROFILES; k++)
        if (profs[k])
            in->profs[in->n_profs++] = profs[k];
}

/* Bytes that no format reads: taken for ITM (the detection's last resort), and no ITM sync in them,
 * nearly all skipped looking for one. A serial line read at another baud rate than the firmware's gives
 * such bytes (and so does an SWO pin at another rate than the probe's). */
static bool unreadable(const struct ingest *in)
{
    const struct itm_stats *i = &in->itm.stats;
    return in->format == DETECT_ITM && i->syncs == 0 && i->bytes >= 1024 && i->hunted >= i->bytes / 10 * 9;
}

#define UNREADABLE_HINT                                                                                            \
    "no format reads these bytes (no ITM sync, no stream line in them): a serial line read at another baud "     \
    "rate than the firmware's UART gives such bytes (-b BAUD: the rate the firmware sets), and so does an SWO "  \
    "capture at another rate than the pin's"

void ingest_counts(const struct ingest *in, struct ingest_counts *out)
{
    const struct text_stats *t = &in->text.stats;
    *out = (struct ingest_counts){
        .format = in->format,
        .undecided = in->format == DETECT_UNKNOWN && in->n_pending,
        .byte_looks = in->look->scans,
        .bytes = in->bytes,
        .samples = prof_total(whole(in)),
        .announced = prof_stream_info(whole(in))->present,
        .bad = t->bad_lines + in->itm.stats.errors,
        .overflows = in->itm.stats.overflows,
        .syncs = in->itm.stats.syncs,
        .lost = in->lost,
        .missing = t->missing,
        .past_limit = in->past_limit,
        .log_lines = t->log_lines,
        .stream_lines = t->stream_lines,
        .blocks = t->blocks,
        .no_base = t->no_base,
        .unplaced = prof_stream_info(whole(in))->present ? 0 : t->no_base,
        .stacks = in->stacks,
        .unreadable = unreadable(in),
    };
    struct ingest_joined j;
    ingest_joined(in, &j, NULL, 0);
    out->joined = j.skipped;
    out->joined_bytes = j.bytes;
}

/* Whether a trace stream (ITM, TPIU, orbflow) was read: a sync, a whole frame or a delimiter came,
 * and samples after it. What came before is then the cost of joining it, no loss. */
static bool trace_read(const struct ingest *in)
{
    const struct itm_stats *i = &in->itm.stats;
    bool synced = in->format == DETECT_TPIU ? in->tpiu.stats.frames > 0
                  : in->format == DETECT_ORBFLOW ? in->orbflow.stats.frames > 0
                  : in->format == DETECT_ITM && i->syncs > 0;
    return synced && i->packets > i->syncs;
}

/* ITM bytes skipped looking for a sync that are lost: all of them, or once the stream was read those
 * after its first sync (the ones before it are joining's: trace_joined). */
static uint64_t hunted_lost(const struct ingest *in)
{
    const struct itm_stats *i = &in->itm.stats;
    return i->hunted - (trace_read(in) ? i->hunted_before_sync : 0);
}

/* The bytes of a trace stream before it could be read, once it was (noise before it apart). */
static uint64_t trace_joined(const struct ingest *in)
{
    if (!trace_read(in))
        return 0;
    return in->itm.stats.hunted_before_sync +
           (in->format == DETECT_TPIU ? in->tpiu.stats.unsynced : 0) +
           (in->format == DETECT_ORBFLOW ? in->orbflow.stats.unsynced : 0);
}

void ingest_joined(const struct ingest *in, struct ingest_joined *out, char *text, size_t len)
{
    const struct text_stats *t = &in->text.stats;
    uint64_t before = prof_stream_info(whole(in))->present ? t->no_base : 0;
    *out = (struct ingest_joined){before + t->unread_joining, before, t->unread_joining, trace_joined(in)};
    if (!len)
        return;
    *text = '\0';
    if (out->bytes && !out->skipped)
        snprintf(text, len, "joined a running stream: its first %llu bytes skipped (before the %s stream could be "
                 "read: its first %s); the profile begins there, no loss", (unsigned long long)out->bytes,
                 detect_name(in->format), in->format == DETECT_TPIU ? "whole frame" : in->format == DETECT_ORBFLOW ?
                 "delimiter" : "sync packet");
    if (!out->skipped)
        return;
    char parts[160];
    if (before && t->unread_joining)
        snprintf(parts, sizeof parts, ": %llu before its first announce, %llu before its first whole group of 8 "
                 "sample lines", (unsigned long long)before, (unsigned long long)t->unread_joining);
    else
        snprintf(parts, sizeof parts, " (before its first %s)",
                 before ? "announce" : "whole group of 8 sample lines, which carries the code pages");
    snprintf(text, len, "joined a running stream: the first %llu samples not counted%s; the profile begins "
             "there, no loss", (unsigned long long)out->skipped, parts);
}

enum detect_format ingest_format(const struct ingest *in)
{
    return in->format;
}

const struct timeline *ingest_timeline(const struct ingest *in)
{
    return in->timeline;
}

void ingest_restart_timeline(struct ingest *in)
{
    if (in->timeline)
        timeline_reset(in->timeline);
}

void ingest_waiting(const struct ingest *in, char *buf, size_t len)
{
    const struct text_stats *t = &in->text.stats;
    if (in->bytes == 0)
        snprintf(buf, len, "no data from the source yet");
    else if (t->no_base && !prof_stream_info(whole(in))->present)
        snprintf(buf, len, "no announce yet: clock, period and code base unknown, %llu stream samples wait for one "
                 "(the firmware repeats it every second; one that announces only at boot needs a restart)",
                 (unsigned long long)t->no_base);
    else if (in->format == DETECT_TEXT && t->log_lines && !t->stream_lines && !t->blocks)
        snprintf(buf, len, "%llu log lines and no samples so far: is the sampler started, and the stream drained "
                 "(or the dump written)?", (unsigned long long)t->log_lines);
    else if (in->format == DETECT_UNKNOWN)
        snprintf(buf, len, "%llu bytes so far: not enough to tell the format yet", (unsigned long long)in->bytes);
    else
        snprintf(buf, len, "no samples yet (%s stream, %llu bytes)", detect_name(in->format),
                 (unsigned long long)in->bytes);
}

static void decode(struct ingest *in, const uint8_t *buf, size_t len)
{
    switch (in->format) {
    case DETECT_TEXT:
        text_feed(&in->text, buf, len, &in->sink);
        break;
    case DETECT_TPIU: {
        struct byte_sink bs = to_itm(in);
        tpiu_feed(&in->tpiu, buf, len, &bs);
        break;
    }
    case DETECT_ORBFLOW: {
        struct byte_sink bs = to_itm(in);
        orbflow_feed(&in->orbflow, buf, len, &bs);
        break;
    }
    default:
        itm_feed(&in->itm, buf, len, &in->sink);
        break;
    }
}

/* Whether the first bytes are UTF-16 text (what a Windows console's redirect or an editor's "Unicode"
 * makes of a capture): a byte order mark, or ASCII with a zero byte after (or before) each character. */
static bool utf16_scan(const uint8_t *b, size_t n)
{
    if (n >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF)))
        return true;
    size_t pairs = 0, ascii = 0;
    for (size_t i = 0; i + 1 < n; i += 2, pairs++) {
        uint8_t c = b[i] ? b[i] : b[i + 1], z = b[i] ? b[i + 1] : b[i];
        ascii += z == 0 && c && (c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7F));
    }
    return pairs >= 32 && ascii * 10 >= pairs * 9;
}

/* The first bytes looked at, again only once more came (they are only ever appended to). */
static const struct byte_look *look_at_bytes(const struct ingest *in)
{
    struct byte_look *l = in->look;
    size_t n = in->forced ? in->n_seen : in->n_pending;
    if (l->scans && l->n == n)
        return l;
    l->n = n;
    l->scans++;
    l->utf16 = utf16_scan(in->pending, n);
    l->judged = DETECT_UNKNOWN;
    if (in->forced && n) {
        struct detect_verdict v;
        detect_judge(in->pending, n, &v);
        l->judged = v.format;
    }
    return l;
}

static bool utf16_text(const struct ingest *in)
{
    return look_at_bytes(in)->utf16;
}

/* Takes the format and decodes what was held back: the leading zeros, then pending; or, after
 * leading noise, only what follows it. */
static void decide(struct ingest *in, const struct detect_verdict *v)
{
    static const uint8_t zeros[4096];
    set_format(in, v->format);
    if (v->skip) { /* the zeros held came before the noise */
        in->noise = in->zeros_held + v->skip;
        in->zeros_held = 0;
    }
    while (in->zeros_held) {
        size_t n = in->zeros_held < sizeof zeros ? (size_t)in->zeros_held : sizeof zeros;
        decode(in, zeros, n);
        in->zeros_held -= n;
    }
    decode(in, in->pending + v->skip, in->n_pending - v->skip);
}

static void judge_and_decide(struct ingest *in)
{
    struct detect_verdict v;
    detect_judge(in->pending, in->n_pending, &v);
    if (utf16_text(in)) /* a capture saved as UTF-16: text whose every other byte is 0 (the text decoder drops NULs) */
        v = (struct detect_verdict){DETECT_TEXT, 0, 1000};
    decide(in, &v);
}

void ingest_feed(struct ingest *in, const uint8_t *buf, size_t len)
{
    in->bytes += len;
    if (in->forced && in->n_seen < DETECT_WINDOW) {
        size_t take = len < DETECT_WINDOW - in->n_seen ? len : DETECT_WINDOW - in->n_seen;
        memcpy(in->pending + in->n_seen, buf, take);
        in->n_seen += take;
    }
    if (in->format == DETECT_UNKNOWN) {
        if (in->n_pending == 0) { /* leading zeros: counted, and the window waits for what follows */
            size_t z = detect_leading_zeros(buf, len);
            in->zeros_held += z;
            buf += z;
            len -= z;
            if (!len)
                return;
            /* up to a sync's five stay in the window: the detection reads an ITM sync packet whole (with
             * one, a capture's first sync read as 6 bytes of noise), and one is the delimiter before an
             * orbflow frame */
            size_t keep = in->zeros_held < 5u ? (size_t)in->zeros_held : 5u;
            memset(in->pending, 0, keep);
            in->n_pending = keep;
            in->zeros_held -= keep;
        }
        size_t take = DETECT_WINDOW - in->n_pending;
        if (take > len)
            take = len;
        memcpy(in->pending + in->n_pending, buf, take);
        in->n_pending += take;
        buf += take;
        len -= take;
        if (in->n_pending < DETECT_WINDOW)
            return;
        judge_and_decide(in);
    }
    if (len)
        decode(in, buf, len);
}

void ingest_rejoin(struct ingest *in)
{
    if (!in->bytes) /* nothing came before: a first connection, a live start (joined_mid_line, wait_sync) */
        return;
    if (in->format == DETECT_TEXT)
        text_rejoin(&in->text);
    else if (in->format == DETECT_ITM || in->format == DETECT_TPIU || in->format == DETECT_ORBFLOW) {
        struct byte_sink bs = to_itm(in);
        if (in->format == DETECT_TPIU) /* (a frame cut by the gap put the rest out of step) */
            tpiu_rejoin(&in->tpiu, &bs);
        else if (in->format == DETECT_ORBFLOW)
            orbflow_rejoin(&in->orbflow);
        itm_rejoin(&in->itm); /* (the frames' ITM, cut inside a packet too) */
    }
}

void ingest_settle(struct ingest *in)
{
    if (in->format != DETECT_UNKNOWN || !in->n_pending)
        return;
    struct detect_verdict v;
    detect_judge_so_far(in->pending, in->n_pending, &v);
    if (v.format != DETECT_UNKNOWN)
        decide(in, &v);
}

/* What the input stopped inside, once it ended: its samples (a PC packet, a line of them) are not
 * counted (ingest_ended_inside). */
static void note_cut(struct ingest *in)
{
    uint64_t itm = in->format == DETECT_ITM || in->format == DETECT_TPIU || in->format == DETECT_ORBFLOW
                       ? itm_cut(&in->itm) : 0;
    uint64_t frame = in->format == DETECT_TPIU ? tpiu_cut(&in->tpiu)
                     : in->format == DETECT_ORBFLOW ? orbflow_cut(&in->orbflow) : 0;
    in->cut = frame ? frame : itm ? itm : in->format == DETECT_TEXT ? in->text.stats.partial_last_bytes : 0;
    in->cut_what = frame ? (in->format == DETECT_TPIU ? "TPIU frame" : "orbflow frame") : itm ? "ITM packet" : "line";
}

void ingest_finish(struct ingest *in)
{
    if (in->format == DETECT_UNKNOWN && in->n_pending)
        judge_and_decide(in);
    else if (in->format == DETECT_UNKNOWN && in->zeros_held)
        decide(in, &(struct detect_verdict){DETECT_ITM, 0, 0}); /* zeros alone: ITM sync, as detect_format tells them */
    if (in->format == DETECT_TEXT)
        text_finish(&in->text, &in->sink);
    if (in->format == DETECT_TPIU) { /* a short capture with no full sync: aligned on what came */
        struct byte_sink bs = to_itm(in);
        tpiu_finish(&in->tpiu, &bs);
    }
    note_cut(in);
}

uint64_t ingest_unread(const struct ingest *in, uint64_t *total)
{
    *total = in->bytes;
    if (prof_total(whole(in)) <= 0) /* (no sample at all: "no samples" says what the bytes were) */
        return 0;
    if (in->format != DETECT_ITM && in->format != DETECT_TPIU && in->format != DETECT_ORBFLOW)
        return 0;
    return in->noise + hunted_lost(in);
}

uint64_t ingest_ended_inside(const struct ingest *in, const char **what, uint64_t *offset)
{
    *what = in->cut_what ? in->cut_what : "";
    *offset = in->bytes - in->cut;
    return prof_total(whole(in)) > 0 ? in->cut : 0; /* (no sample at all: "no samples" says what the bytes were) */
}

void ingest_free(struct ingest *in)
{
    if (!in)
        return;
    text_free(&in->text);
    timeline_free(in->timeline);
    free(in);
}

/* What the bytes are when the format given (-f) read no sample from them and the detection reads
 * them as another: that one, else DETECT_UNKNOWN (-f is there for when the detection is wrong). */
static enum detect_format misread(const struct ingest *in)
{
    if (!in->forced || !in->n_seen || prof_total(whole(in)) > 0 || prof_sections_seen(whole(in)))
        return DETECT_UNKNOWN;
    enum detect_format judged = look_at_bytes(in)->judged;
    return judged != in->format ? judged : DETECT_UNKNOWN;
}

static const char *format_words(enum detect_format f)
{
    switch (f) {
    case DETECT_TEXT:
        return "text (the firmware's lines)";
    case DETECT_ITM:
        return "raw ITM";
    case DETECT_TPIU:
        return "TPIU frames";
    case DETECT_ORBFLOW:
        return "orbflow frames";
    default:
        return "of no known format";
    }
}

/* Why the bytes read as no sample, when they are of another format than the one they were read as:
 * UTF-16 text (any source), or another format than -f gave ("its bytes are text (...), not tpiu:
 * drop -f tpiu"); else "". */
static const char *misread_text(const struct ingest *in, char *buf, size_t len)
{
    if (prof_total(whole(in)) <= 0 && !prof_sections_seen(whole(in)) && utf16_text(in)) {
        snprintf(buf, len, "its bytes are UTF-16 text (a Windows console's redirect, or an editor's \"Unicode\"), "
                 "not the bytes the port sent: convert it, e.g. iconv -f UTF-16 -t UTF-8 FILE > FILE.txt");
        return buf;
    }
    enum detect_format looks = misread(in);
    if (looks == DETECT_UNKNOWN)
        return "";
    char opt[32];
    snprintf(opt, sizeof opt, strcmp(in->forced, "-f") == 0 ? "-f %s" : "%.20s", strcmp(in->forced, "-f") == 0
             ? detect_name(in->format) : in->forced);
    snprintf(buf, len, "%s read it as %s and found no sample: its bytes are %s; drop %s (the format is detected) "
             "or give -f %s", opt, format_words(in->format), format_words(looks), opt, detect_name(looks));
    return buf;
}

struct loss_list {
    char (*out)[INGEST_LOSS_TEXT];
    size_t n, max;
};

static void loss(struct loss_list *l, uint64_t count, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void loss(struct loss_list *l, uint64_t count, const char *fmt, ...)
{
    if (!count || l->n == l->max)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->out[l->n++], INGEST_LOSS_TEXT, fmt, ap);
    va_end(ap);
}

size_t ingest_losses(const struct ingest *in, char (*out)[INGEST_LOSS_TEXT], size_t max)
{
    struct loss_list l = {out, 0, max};
    const struct text_stats *t = &in->text.stats;
    char misread_why[INGEST_LOSS_TEXT];
    bool misread_ = *misread_text(in, misread_why, sizeof misread_why); /* (then no advice about its format) */
    loss(&l, misread_, "%s", misread_why);
    /* only a histogram's 16-bit buckets saturate: a raw block that delivered fewer lost lines */
    const char *why = !t->missing_hist ? "capture cut short, or its lines lost on the way"
                      : t->missing_hist == t->missing ? "histogram buckets saturated, or capture cut short"
                      : "capture cut short or lines lost; in histograms, buckets saturated";
    loss(&l, t->missing, "%llu samples missing: dump headers announced more than their blocks delivered (%s)",
         (unsigned long long)t->missing, why);
    loss(&l, t->unended, "the dump ends without its \"end\" line: the capture was cut short (what came after its "
         "samples, their task tags, task names or stacks, may be missing)");
    loss(&l, t->not_kept, "%llu samples taken but not kept: the firmware's ring holds fewer than it took (raise "
         "CMPROF_RING_N, lower the limit, or stream)", (unsigned long long)t->not_kept);
    loss(&l, t->bad_lines, "%llu malformed lines dropped (%llu failed their check), first at byte offset %llu",
         (unsigned long long)t->bad_lines, (unsigned long long)t->bad_checks, (unsigned long long)(t->first_bad ? t->first_bad - 1 : 0));
    char unknown[96] = "";
    if (t->names_unknown)
        snprintf(unknown, sizeof unknown, "; %llu went to \"(task unknown)\": a new task took the index first",
                 (unsigned long long)t->names_unknown);
    loss(&l, t->names_waited, "%llu samples waited for their task's name after a dropped line that may have named "
         "tasks (at most %llu of one task)%s", (unsigned long long)t->names_waited,
         (unsigned long long)t->max_wait, unknown);
    loss(&l, t->other_version_lines, "%llu sample lines of stream version %u under a version %u announce not decoded: "
         "the firmware sending them is not the one that announced itself (a stale announce, or two builds on one "
         "port)", (unsigned long long)t->other_version_lines, (unsigned)t->other_version,
         (unsigned)t->announced_version);
    loss(&l, t->newer_version, "the stream announces version %llu: a newer firmware than this host understands (it "
         "reads versions 1 to %u); %llu of its sample lines not read: update cmprof-top",
         (unsigned long long)t->newer_version, text_stream_version(), (unsigned long long)t->newer_lines);
    loss(&l, t->unread_paged, "%llu stream samples not read: they came after a sample line this host missed, and "
         "refer to pages that line gave", (unsigned long long)t->unread_paged);
    loss(&l, t->skipped_lines, "%llu stream sample lines missing: their numbers were skipped (lost whole on the "
         "way: a serial adapter's or driver's overrun), their samples not counted", (unsigned long long)t->skipped_lines);
    loss(&l, t->refused_announces, "%llu announce lines refused: %s=%llu is out of range (%s)",
         (unsigned long long)t->refused_announces, t->refused_field ? t->refused_field : "?",
         (unsigned long long)t->refused_value, t->refused_range ? t->refused_range : "?");
    loss(&l, t->long_lines, "%llu lines over %u bytes dropped", (unsigned long long)t->long_lines, TEXT_LINE_MAX);
    loss(&l, t->tag_mismatch, "%llu dump blocks whose task tags did not match their samples: tags dropped",
         (unsigned long long)t->tag_mismatch);
    loss(&l, t->orphan_lines, "%llu h/g lines outside any dump block dropped", (unsigned long long)t->orphan_lines);
    loss(&l, prof_stream_info(whole(in))->present ? 0 : t->no_base, "%llu stream samples came and no announce to "
         "place them", (unsigned long long)t->no_base); /* once one came: the cost of joining (ingest_joined) */
    loss(&l, t->glued, "%llu stream lines were glued onto log lines (a shared UART): cut off and decoded, "
         "the log lines are partial", (unsigned long long)t->glued);
    /* (a capture saved as UTF-16 is all NULs between its characters: read whole, nothing lost) */
    loss(&l, utf16_text(in) ? 0 : t->nul_bytes, "%llu NUL bytes removed from lines (line noise)",
         (unsigned long long)t->nul_bytes);
    loss(&l, t->hist_out, "%llu histogram samples fell outside the buckets", (unsigned long long)t->hist_out);
    /* what came before a trace stream that was then read is joining's (ingest_joined); noise the detection
     * found before any stream is named here: it may be the stream's own bytes, garbled */
    bool trace_ok = trace_read(in);
    loss(&l, in->noise, "%llu bytes of noise before the %s stream skipped (the format's detection found "
         "where it begins)", (unsigned long long)in->noise, detect_name(in->format));
    const struct itm_stats *i = &in->itm.stats;
    loss(&l, i->errors, "%llu bad ITM packets, first at byte offset %llu%s", (unsigned long long)i->errors,
         (unsigned long long)(i->first_error ? i->first_error - 1 : 0),
         unreadable(in) ? " (no sync in them: a wrong baud rate, -b? or TPIU frames read as ITM, -f tpiu?)"
         : in->format == DETECT_ITM && in->tpiu.stats.frames == 0 && !misread_ ? " (TPIU frames read as ITM? try -f tpiu)"
                                                                              : "");
    loss(&l, i->overflows, "%llu ITM overflow packets: the trace port dropped data", (unsigned long long)i->overflows);
    uint64_t hunted = hunted_lost(in);
    loss(&l, hunted, "%llu bytes skipped looking for ITM sync%s", (unsigned long long)hunted,
         trace_ok ? " (after a packet that did not decode)" : "");
    const struct tpiu_stats *f = &in->tpiu.stats;
    loss(&l, trace_ok ? 0 : f->unsynced, "%llu TPIU bytes before the first whole frame skipped",
         (unsigned long long)f->unsynced);
    loss(&l, f->realigns, "%llu TPIU re-alignments: the frames slipped (bytes lost or added on the line), %llu bytes "
         "of cut frames dropped", (unsigned long long)f->realigns, (unsigned long long)f->cut);
    loss(&l, f->stray_ids, "%llu stray TPIU ID changes (a byte hit, or noise, on the line): read on as source %u's, "
         "the rest of each such frame dropped (%llu bytes)%s",
         (unsigned long long)f->stray_ids, (unsigned)in->tpiu.wanted_id, (unsigned long long)f->stray_bytes,
         f->wanted_ids > 1 ? "; but the stream wrote that source's ID again after, as only a stream of two sources "
                             "does: up to 1 KB of another source's bytes after each may have been read as its" : "");
    const struct orbflow_stats *of = &in->orbflow.stats;
    loss(&l, of->bad_sums + of->bad_cobs + of->too_long,
         "%llu orbflow frames dropped (%llu bad sums, %llu bad COBS codes, %llu too long)",
         (unsigned long long)(of->bad_sums + of->bad_cobs + of->too_long), (unsigned long long)of->bad_sums,
         (unsigned long long)of->bad_cobs, (unsigned long long)of->too_long);
    loss(&l, in->format == DETECT_ORBFLOW && !trace_ok ? of->unsynced : 0, "%llu orbflow bytes before the first delimiter "
         "skipped",
         (unsigned long long)of->unsynced);
    loss(&l, of->after_gap, "%llu orbflow bytes after a gap skipped (no delimiter within a frame's length)",
         (unsigned long long)of->after_gap);
    loss(&l, in->lost, "%llu samples lost in the firmware (its ring was full)", (unsigned long long)in->lost);
    loss(&l, in->stack_dropped, "%llu samples' stack evidence dropped in the firmware (its drain fell behind: raise "
         "CMPROF_STACK_RECORDS or CMPROF_STACK_EVERY)",
         (unsigned long long)in->stack_dropped);
    loss(&l, in->past_limit, "%llu samples after --samples %llu not counted", (unsigned long long)in->past_limit,
         (unsigned long long)in->max_samples);
    return l.n;
}

size_t ingest_notes(const struct ingest *in, char (*out)[INGEST_LOSS_TEXT], size_t max)
{
    struct loss_list l = {out, 0, max};
    char misread_why[INGEST_LOSS_TEXT];
    const char *hint = *misread_text(in, misread_why, sizeof misread_why) ? "" : " (--tpiu-id)";
    const struct tpiu_stats *f = &in->tpiu.stats;
    if (f->other_ids) { /* another source's trace (an ETM's, a second core's): not this run's to read */
        char ids[120];
        tpiu_other_ids(f, ids, sizeof ids);
        loss(&l, f->other_ids, "%llu TPIU bytes of other source IDs (%s) skipped; this run reads ID %u%s",
             (unsigned long long)f->other_ids, ids, (unsigned)in->tpiu.wanted_id, hint);
    }
    char aligned[INGEST_LOSS_TEXT];
    loss(&l, in->format == DETECT_TPIU && tpiu_alignment_text(f, aligned, sizeof aligned), "%s", aligned);
    loss(&l, in->format == DETECT_TPIU && tpiu_source_text(f, aligned, sizeof aligned), "%s", aligned);
    const struct text_stats *t = &in->text.stats;
    loss(&l, t->restarts, "the firmware's stream began again %llu time%s, first at byte offset %llu (a reset, or "
         "cmprof_stream_announce() called again): the profile holds the samples of every run",
         (unsigned long long)t->restarts, t->restarts == 1 ? "" : "s", (unsigned long long)t->first_restart);
    const struct orbflow_stats *of = &in->orbflow.stats;
    if (of->other_tags) {
        char tags[120];
        orbflow_other_tags(of, tags, sizeof tags);
        loss(&l, of->other_tags, "%llu orbflow frames of other streams (%s) skipped; this run reads stream %u%s",
             (unsigned long long)of->other_tags, tags, (unsigned)in->orbflow.wanted_tag, hint);
    }
    return l.n;
}

size_t ingest_counters(const struct ingest *in, struct dec_counter out[INGEST_COUNTERS])
{
    size_t n = 0;
    out[n++] = (struct dec_counter){"bytes", in->bytes};
    n += text_counters(&in->text.stats, out + n);
    n += itm_counters(&in->itm.stats, out + n);
    n += tpiu_counters(&in->tpiu.stats, out + n);
    n += orbflow_counters(&in->orbflow.stats, out + n);
    return n;
}

void ingest_describe(const struct ingest *in, char *buf, size_t len)
{
    char saw[300];
    if (*misread_text(in, saw, sizeof saw)) { /* the format's own advice would be wrong */
        snprintf(buf, len, "%s", saw);
        return;
    }
    if (in->format == DETECT_TEXT)
        text_describe(&in->text.stats, saw, sizeof saw);
    else if (in->format == DETECT_ORBFLOW)
        orbflow_describe(&in->orbflow.stats, saw, sizeof saw);
    else if (in->format != DETECT_TPIU || !tpiu_describe(&in->tpiu.stats, saw, sizeof saw))
        itm_describe(&in->itm.stats, saw, sizeof saw); /* (TPIU frames with ITM in them: the ITM's) */
    int n = snprintf(buf, len, "%s stream, %s", detect_name(in->format), saw);
    uint64_t first = in->format == DETECT_TEXT ? in->text.stats.first_bad : in->itm.stats.first_error;
    if (first && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; first bad %s at byte offset %llu",
                 in->format == DETECT_TEXT ? "line" : "byte", (unsigned long long)(first - 1));
}

/* Why an announced sampler sent nothing: the words ingest_no_samples_hint() and ingest_quiet() share. */
#define QUIET_R5_PMU "a Cortex-R sampling on its PMU's overflow: QEMU (vexpress-a15) wires no interrupt to the R5's " \
                     "PMU, so under QEMU no sample is ever taken; sample with a timer there (CMPROF_PORT_SP804)"
#define QUIET_PMU "is cmprof_start() called, and the PMU's overflow interrupt routed to the core (its GIC line " \
                  "enabled, IRQs unmasked)?"
#define QUIET_TIMER "is cmprof_start() called, and does its timer ever fire (its interrupt enabled, and routed to the " \
                    "sampler's vector)?"
#define QUIET_USER_TIMER "a timer of your own (CMPROF_PORT_USER) that never fires? cmprof_user_timer_start() must " \
                         "start a timer this chip has, and its interrupt line reach the sampler's vector (Zephyr: " \
                         "CONFIG_CMPROF_TIMER_USER_IRQ or a chosen cmprof,timer); and is cmprof_start() called?"
#define QUIET_ANNOUNCED "; the firmware announced itself but sent no samples: "

static bool pmu_sampler(const struct prof_stream_info *i)
{
    return strncmp(i->timer, "PMU", 3) == 0;
}

static bool user_timer(const struct prof_stream_info *i)
{
    return strcmp(i->timer, "user") == 0; /* CMPROF_PORT_USER's label */
}

static bool r_profile(const struct prof_stream_info *i)
{
    return strstr(i->arch, "-R") != NULL;
}

/* Whether the input began in a stream that ran before it: its first line a tail (a live source), or
 * its first version 7 sample line numbered past 0 (the firmware numbers them from its announce). */
static bool began_mid_stream(const struct ingest *in)
{
    const struct text_stats *t = &in->text.stats;
    return t->first_number > 1 || t->partial_first;
}

#define JOINED_NO_ANNOUNCE "the input began in a running stream and ended before the firmware's next announce " \
                           "(repeated every second of samples): read longer; a firmware that announces only at " \
                           "boot needs a restart"

/* Why no sample came, when the stream tells: a sentence that outlives the call, or NULL. */
static const char *no_samples_why(const struct ingest *in)
{
    const struct text_stats *t = &in->text.stats;
    const struct prof_stream_info *i = prof_stream_info(whole(in));
    if (unreadable(in))
        return "; " UNREADABLE_HINT;
    if (t->newer_version)
        return "; the stream is of a newer firmware than this host understands: update cmprof-top";
    if (t->refused_announces && !i->present)
        return NULL; /* (its numbers: the caller's) */
    if (t->other_version_lines && i->present)
        return "; its sample lines are of another stream version than its announce: the firmware that announced "
               "itself is not the one sending samples (a stale announce, or two builds on one port)";
    if (!i->present && t->no_base && began_mid_stream(in))
        return "; stream samples came, but no announce to place them: " JOINED_NO_ANNOUNCE;
    if (!i->present)
        return t->no_base ? "; stream samples came, but no announce to place them: the firmware never called "
                            "cmprof_stream_announce() (call it at start)"
                          : "";
    if (pmu_sampler(i))
        return r_profile(i) ? QUIET_ANNOUNCED QUIET_R5_PMU : QUIET_ANNOUNCED QUIET_PMU;
    return user_timer(i) ? QUIET_ANNOUNCED QUIET_USER_TIMER : QUIET_ANNOUNCED QUIET_TIMER;
}

void ingest_no_samples_hint(const struct ingest *in, char *buf, size_t len)
{
    const struct text_stats *t = &in->text.stats;
    const char *why = no_samples_why(in);
    if (why)
        snprintf(buf, len, "%s", why);
    else
        snprintf(buf, len, "; the firmware's announce was refused: %s=%llu is out of range (%s)",
                 t->refused_field ? t->refused_field : "?", (unsigned long long)t->refused_value,
                 t->refused_range ? t->refused_range : "?");
}

/* Why an announced sampler may send nothing, by what it announced. */
static const char *quiet_sampler_hint(const struct prof_stream_info *i)
{
    if (pmu_sampler(i))
        return r_profile(i) ? QUIET_R5_PMU : QUIET_PMU;
    return user_timer(i) ? QUIET_USER_TIMER : QUIET_TIMER;
}

enum ingest_quiet ingest_quiet(const struct ingest *in, char *text, size_t len)
{
    const struct prof_stream_info *i = prof_stream_info(whole(in));
    if (len)
        *text = '\0';
    if (!i->present && in->text.stats.no_base) {
        if (began_mid_stream(in))
            snprintf(text, len, "no announce: %llu stream samples came, and none could be placed: " JOINED_NO_ANNOUNCE,
                     (unsigned long long)in->text.stats.no_base);
        else
            snprintf(text, len, "no announce: %llu stream samples came, but the firmware never announced itself, "
                     "so none could be placed (call cmprof_stream_announce() at start; it is repeated every second)",
                     (unsigned long long)in->text.stats.no_base);
        return INGEST_QUIET_NO_ANNOUNCE;
    }
    if (!i->present || !i->period || prof_total(whole(in)) > 0)
        return INGEST_QUIET_NONE;
    bool timed = prof_sections_seen(whole(in));
    snprintf(text, len, "no samples: the firmware announced a sampler (%s%s%s, period %llu) but sent no sample%s; %s",
             i->arch[0] ? i->arch : "", i->arch[0] ? " " : "", i->timer[0] ? i->timer : "timer",
             (unsigned long long)i->period, timed ? ", only section timings" : "", quiet_sampler_hint(i));
    return INGEST_QUIET_NO_SAMPLES;
}

const char *ingest_quiet_name(enum ingest_quiet q)
{
    return q == INGEST_QUIET_NO_SAMPLES ? "no_samples" : q == INGEST_QUIET_NO_ANNOUNCE ? "no_announce" : NULL;
}
