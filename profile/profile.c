/* Profile model: a hash of (PC, tag) -> samples, grouped on demand. */
#include "profile.h"
#include "stacks.h"
#include "pcindex.h"

#include "escape.h"
#include "grow.h"
#include "../decode/event.h"

#include "../symbols/codemap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECENT 8192u /* PCs kept in order for the lockstep test */

struct entry {
    uint32_t pc, tag;
    uint32_t task; /* 1 + the task record the tag named when the sample came, 0: none yet */
    bool has_tag, used;
    bool approximate;
    double count;
};

/* One task: a tag with a name. A tag renamed after it had samples (an RTOS reusing a deleted
 * task's control block for a new task) starts a new record, so the old task keeps its samples. */
struct task {
    uint32_t tag;
    char name[48];
    bool shared;      /* another tag has the same name: rows then show the tag too */
    bool has_samples;
};

/* The counters of one tag's samples while one task record is current (see count_pc). */
struct tag_lane {
    uint32_t tag, task;
    struct pc_index idx;
};

/* Lanes a profile keeps: a firmware has a few tasks; the samples of tags past these go to the hash,
 * and garbage input cannot make a lane per tag. */
#define TAG_LANES 64u
#define LANE_LEAVES_MAX 1024u /* code spans up to 8 MB: a lane's leaf table stays within 8 KB */
/* Leaves of counters all lanes may hold (16 KB each): every read of the profile scans them, so 64
 * tasks sampled all over a large firmware must not make each refresh of the view scan 64 copies of
 * its code. Past it, new places go to the hash. */
#define LANE_LEAF_BUDGET 512u

struct group {
    const void *key_a; /* interned string or NULL */
    uint64_t key_b;    /* line or tag */
    size_t name_off;   /* 1 + offset of the row's name in p->names, or 0 when row.name is set */
    struct prof_row row;
};

struct lockstep {       /* the last lockstep search */
    uint64_t computed_at; /* raw_samples then */
    bool found;
    uint32_t lag, window;
    double rate, expected;
};

struct prof {
    struct sym_table *syms;
    struct lockstep lockstep;
    struct entry *map;
    size_t cap, used;
    struct pc_index direct; /* untagged samples in the ELF's code, counted by address ... */
    struct tag_lane *lanes; /* ... tagged ones too, an index per (tag, task record) ... */
    size_t n_lanes, last_lane; /* (last_lane: 1 + the lane of the sample before, 0: none) */
    size_t lane_leaves;     /* leaves the lanes hold, up to LANE_LEAF_BUDGET */
    bool direct_pending;    /* ... and not yet moved into their entries (settle) */
    double bucket_total;  /* samples from histogram buckets; the total adds raw_samples */
    uint64_t raw_samples; /* PC samples, not buckets; the last RECENT of them in order in recent */
    uint64_t sleep;
    uint32_t recent[RECENT];
    struct task *tasks;
    size_t n_tasks, cap_tasks;
    uint32_t *task_index;   /* open addressing, tag -> 1 + its current record; 0: empty */
    size_t task_index_cap;
    uint32_t last_tag, last_task; /* consecutive samples mostly come from one task */
    bool last_valid, shared_stale;
    bool fold_overhead; /* function and line rows: the library's code as one row */
    size_t unnamed_entries; /* entries of tags that had no name yet */
    uint8_t stream_id[32];
    size_t stream_id_len;
    uint64_t table_full; /* slots of the firmware's task table, when it said the table was full */
    /* grouping results */
    struct group *groups;
    size_t n_groups, cap_groups;
    size_t *gindex;     /* open-addressing index into groups */
    size_t gcap;
    struct prof_row *rows;
    size_t cap_rows;
    char *names;        /* "0x%08x" names and task names for rows */
    size_t names_len, names_cap;
    struct stacks *stacks;       /* samples' call stacks, from a halting source */
    struct prof_call *calls;     /* prof_calls() results */
    size_t cap_calls;
    struct codemap *codemap;     /* the ELF's instruction starts, made when first needed */
    bool codemap_tried;
};

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
    p->syms = syms;
    uint32_t lo, hi;
    if (syms && sym_code_span(syms, &lo, &hi))
        pcidx_init(&p->direct, lo, hi); /* without it (too wide, no memory) the hash does it all */
    return p;
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
    p->raw_samples = p->sleep = 0;
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
    free(p->tasks);
    free(p->task_index);
    free(p->groups);
    free(p->gindex);
    free(p->rows);
    free(p->names);
    stacks_free(p->stacks);
    free(p->calls);
    codemap_free(p->codemap);
    free(p);
}

/* The task record is left out: a sample's record may be filled in later, in place. */
static size_t hash_key(uint32_t pc, uint32_t tag, bool has_tag)
{
    uint64_t k = ((uint64_t)pc << 32 | tag) ^ (has_tag ? 0x9E3779B97F4A7C15ull : 0);
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

static struct entry *slot(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag, uint32_t task)
{
    if (p->used * 2 >= p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        struct entry *m = calloc(cap, sizeof *m);
        if (!m)
            return NULL;
        for (size_t i = 0; i < p->cap; i++) {
            if (!p->map[i].used)
                continue;
            size_t j = hash_key(p->map[i].pc, p->map[i].tag, p->map[i].has_tag) & (cap - 1);
            while (m[j].used)
                j = (j + 1) & (cap - 1);
            m[j] = p->map[i];
        }
        free(p->map);
        p->map = m;
        p->cap = cap;
    }
    if (!has_tag)
        tag = 0;
    size_t j = hash_key(pc, tag, has_tag) & (p->cap - 1);
    while (p->map[j].used) {
        struct entry *e = &p->map[j];
        if (e->pc == pc && e->tag == tag && e->has_tag == has_tag && e->task == task)
            return e;
        j = (j + 1) & (p->cap - 1);
    }
    struct entry *e = &p->map[j];
    e->used = true;
    e->pc = pc;
    e->tag = tag;
    e->has_tag = has_tag;
    e->task = task;
    p->used++;
    if (has_tag && !task)
        p->unnamed_entries++;
    return e;
}

static size_t tag_hash(uint32_t tag, size_t cap)
{
    return (size_t)(((uint64_t)tag * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* 1 + the current record of a tag, 0 when it has none. */
static uint32_t current_task(struct prof *p, uint32_t tag)
{
    if (p->last_valid && p->last_tag == tag)
        return p->last_task;
    uint32_t found = 0;
    if (p->task_index)
        for (size_t j = tag_hash(tag, p->task_index_cap); p->task_index[j]; j = (j + 1) & (p->task_index_cap - 1))
            if (p->tasks[p->task_index[j] - 1].tag == tag) {
                found = p->task_index[j];
                break;
            }
    p->last_tag = tag;
    p->last_task = found;
    p->last_valid = true;
    return found;
}

/* Make record r (0-based) the current one of its tag. */
static bool set_current_task(struct prof *p, uint32_t r)
{
    if ((p->n_tasks + 1) * 2 > p->task_index_cap) { /* rebuild at half full from the records */
        size_t cap = p->task_index_cap ? p->task_index_cap * 2 : 64;
        while (cap < (p->n_tasks + 1) * 2)
            cap *= 2;
        uint32_t *m = calloc(cap, sizeof *m);
        if (!m)
            return false;
        uint32_t *old = p->task_index;
        size_t old_cap = p->task_index_cap;
        p->task_index = m;
        p->task_index_cap = cap;
        for (size_t j = 0; j < old_cap; j++)
            if (old[j]) {
                size_t k = tag_hash(p->tasks[old[j] - 1].tag, cap);
                while (m[k])
                    k = (k + 1) & (cap - 1);
                m[k] = old[j];
            }
        free(old);
    }
    uint32_t tag = p->tasks[r].tag;
    size_t j = tag_hash(tag, p->task_index_cap);
    while (p->task_index[j] && p->tasks[p->task_index[j] - 1].tag != tag)
        j = (j + 1) & (p->task_index_cap - 1);
    p->task_index[j] = r + 1;
    p->last_valid = false;
    p->last_lane = 0;
    return true;
}

/* Counts of the direct index into their entries: every reader of the entries settles first. */
static bool take_direct(void *ctx, uint32_t pc, uint32_t count)
{
    struct entry *e = slot(ctx, pc, false, 0, 0);
    if (e)
        e->count += count;
    return e != NULL; /* out of memory: the count waits in its cell */
}

struct lane_drain {
    struct prof *p;
    const struct tag_lane *lane;
};

static bool take_lane(void *ctx, uint32_t pc, uint32_t count)
{
    const struct lane_drain *d = ctx;
    struct entry *e = slot(d->p, pc, true, d->lane->tag, d->lane->task);
    if (e)
        e->count += count;
    return e != NULL;
}

void prof_settle(struct prof *p)
{
    if (!p->direct_pending)
        return;
    bool all = pcidx_drain(&p->direct, take_direct, p);
    for (size_t i = 0; i < p->n_lanes; i++) {
        struct lane_drain d = {p, &p->lanes[i]};
        all &= pcidx_drain(&p->lanes[i].idx, take_lane, &d);
    }
    p->direct_pending = !all;
}

/* The counters of tag's samples under task record task (1-based, 0: none yet), made the first
 * time; NULL past TAG_LANES lanes, without a code range, or out of memory. */
static struct pc_index *lane_for(struct prof *p, uint32_t tag, uint32_t task)
{
    size_t i = 0;
    while (i < p->n_lanes && (p->lanes[i].tag != tag || p->lanes[i].task != task))
        i++;
    if (i == p->n_lanes) {
        if (i == TAG_LANES || !p->direct.span || p->direct.n_leaves > LANE_LEAVES_MAX ||
            (!p->lanes && !(p->lanes = calloc(TAG_LANES, sizeof *p->lanes))) ||
            !pcidx_init(&p->lanes[i].idx, p->direct.lo, p->direct.lo + p->direct.span))
            return NULL;
        p->lanes[i].tag = tag;
        p->lanes[i].task = task;
        p->n_lanes++;
    }
    p->last_lane = i + 1;
    return &p->lanes[i].idx;
}

/* Count one sample (not yet in the recent ring or the raw total); false when out of memory. A
 * sample in the code is a counter in an array, untagged or tagged (its lane, under the tag's
 * current task record), with no hashing; the counters reach the hash when the profile is read
 * (prof_settle). The others (outside the code, an odd PC, no lane or leaf to be had) go to it now. */
static bool count_pc(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag)
{
    uint32_t task = has_tag ? current_task(p, tag) : 0;
    if (task)
        p->tasks[task - 1].has_samples = true;
    struct pc_index *idx = has_tag ? lane_for(p, tag, task) : &p->direct;
    uint32_t *cell = idx ? pcidx_cell(idx, pc) : NULL;
    if (idx && !cell && (!has_tag || p->lane_leaves < LANE_LEAF_BUDGET) && (cell = pcidx_cell_slow(idx, pc)))
        p->lane_leaves += has_tag; /* a leaf was made (the code range's first sample there) */
    if (cell && *cell != UINT32_MAX) {
        ++*cell;
        p->direct_pending = true;
        return true;
    }
    struct entry *e = slot(p, pc, has_tag, tag, task);
    if (!e)
        return false;
    e->count += 1.0;
    return true;
}

static void remember(struct prof *p, uint32_t pc)
{
    p->recent[p->raw_samples++ % RECENT] = pc;
}

static __attribute__((noinline)) void add_pc_slow(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag)
{
    if (count_pc(p, pc, has_tag, tag))
        remember(p, pc);
}

/* The common case inline: a counter that exists, of an untagged sample or of a sample with the
 * same tag as the one before (whose lane serves until a task record changes or the profile is
 * reset: both set last_lane = 0). Anything else takes the call. */
void prof_add_pc(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag)
{
    const struct pc_index *idx = &p->direct;
    if (has_tag) {
        if (!p->last_lane || p->lanes[p->last_lane - 1].tag != tag) {
            add_pc_slow(p, pc, has_tag, tag);
            return;
        }
        idx = &p->lanes[p->last_lane - 1].idx;
    }
    uint32_t *cell = pcidx_cell(idx, pc);
    if (!cell || *cell == UINT32_MAX) {
        add_pc_slow(p, pc, has_tag, tag);
        return;
    }
    ++*cell;
    p->direct_pending = true;
    remember(p, pc);
}

void prof_add_pcs(struct prof *p, const uint32_t *pcs, size_t n)
{
    size_t counted = 0;
    while (counted < n) {
        size_t run = pcidx_count_run(&p->direct, pcs + counted, n - counted); /* most of them */
        p->direct_pending |= run > 0;
        counted += run;
        if (counted == n || !count_pc(p, pcs[counted], false, 0))
            break;
        counted++;
    }
    for (size_t i = counted > RECENT ? counted - RECENT : 0; i < counted; i++) /* only the last RECENT stay */
        p->recent[(p->raw_samples + i) % RECENT] = pcs[i];
    p->raw_samples += counted;
    for (size_t i = counted + 1; i < n; i++) /* out of memory at one sample: the rest one by one */
        prof_add_pc(p, pcs[i], false, 0);
}

void prof_add_stack(struct prof *p, uint32_t pc, const uint32_t *callers, size_t n, bool has_tag, uint32_t tag)
{
    if (!p->stacks && !(p->stacks = stacks_new()))
        return;
    struct stack st = {pc & ~1u, callers, n, has_tag ? current_task(p, tag) : 0u, tag, has_tag, 1.0};
    stacks_add(p->stacks, &st);
}

double prof_stack_samples(const struct prof *p)
{
    return stacks_samples(p->stacks);
}

void prof_add_sleep(struct prof *p)
{
    p->sleep++;
}

static const char *function_at(struct prof *p, uint32_t addr)
{
    if (!p->syms)
        return NULL;
    const struct sym_location *l = sym_lookup(p->syms, addr);
    return l && l->known && l->symbol ? l->symbol : NULL;
}

/* Buckets up to this size are spread per halfword, so line rows stay meaningful; larger ones
 * per function, so the work grows with the functions a bucket covers, not with its bytes. */
#define BUCKET_SPREAD_BYTES 64u

static void add_bucket_per_halfword(struct prof *p, uint32_t addr, uint32_t size, double count)
{
    /* halfwords that belong to a function share the count; padding between functions does not,
     * unless the whole bucket is padding */
    uint32_t owned = 0;
    const char *first = NULL;
    bool straddles = false;
    for (uint32_t k = 0; k < size; k += 2) {
        const char *f = function_at(p, addr + k);
        if (f) {
            owned++;
            if (first && f != first)
                straddles = true;
            first = first ? first : f;
        }
    }
    uint32_t parts = owned ? owned : size / 2;
    double each = count / parts;
    for (uint32_t k = 0; k < size; k += 2) {
        if (owned && !function_at(p, addr + k))
            continue;
        struct entry *e = slot(p, addr + k, false, 0, 0);
        if (!e)
            return;
        e->count += each;
        e->approximate |= straddles;
    }
}

/* Walk the functions that overlap [addr, end): pass 1 sums their bytes, pass 2 charges each its
 * byte share at the first address it owns in the bucket. */
static void add_bucket_per_function(struct prof *p, uint32_t addr, uint64_t end, double count)
{
    uint64_t owned = 0;
    size_t segments = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t a = addr;
        uint32_t lo, hi;
        while (a < end && sym_function_from(p->syms, (uint32_t)a, &lo, &hi) && lo < end) {
            uint64_t seg_lo = lo > a ? lo : a, seg_hi = hi < end ? hi : end;
            if (seg_hi <= seg_lo)
                break;
            if (pass == 0) {
                owned += seg_hi - seg_lo;
                segments++;
            } else {
                struct entry *e = slot(p, (uint32_t)seg_lo, false, 0, 0);
                if (!e)
                    return;
                e->count += count * (double)(seg_hi - seg_lo) / (double)owned;
                e->approximate |= segments > 1;
            }
            a = seg_hi;
        }
        if (owned == 0)
            break;
    }
    if (owned == 0) { /* padding or no symbols: the bucket's own address takes it all */
        struct entry *e = slot(p, addr, false, 0, 0);
        if (e)
            e->count += count;
    }
}

void prof_add_bucket(struct prof *p, uint32_t addr, uint32_t size, uint64_t count)
{
    if (size < 2 || count == 0)
        return;
    uint64_t end = (uint64_t)addr + size;
    if (end > 0x100000000ull) /* a bucket never wraps past the top of the address space */
        end = 0x100000000ull;
    if (size <= BUCKET_SPREAD_BYTES && end - addr == size)
        add_bucket_per_halfword(p, addr, size, (double)count);
    else if (p->syms)
        add_bucket_per_function(p, addr, end, (double)count);
    else
        add_bucket_per_function(p, addr, addr, (double)count); /* no symbols: one row at addr */
    p->bucket_total += (double)count;
}

static int cmp_task_by_name(const void *a, const void *b)
{
    const struct task *x = *(struct task *const *)a, *y = *(struct task *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->tag > y->tag) - (x->tag < y->tag);
}

/* Mark the tasks whose name another tag has too (two "worker" tasks must not look like one row):
 * sort the records by name, then look at neighbours. Done when rows are made, not per name. */
static void mark_shared_names(struct prof *p)
{
    if (!p->shared_stale || p->n_tasks == 0)
        return;
    struct task **order = malloc(p->n_tasks * sizeof *order);
    if (!order)
        return;
    for (size_t i = 0; i < p->n_tasks; i++) {
        order[i] = &p->tasks[i];
        p->tasks[i].shared = false;
    }
    qsort(order, p->n_tasks, sizeof *order, cmp_task_by_name);
    for (size_t i = 1; i < p->n_tasks; i++)
        if (strcmp(order[i - 1]->name, order[i]->name) == 0 && order[i - 1]->tag != order[i]->tag)
            order[i - 1]->shared = order[i]->shared = true;
    free(order);
    p->shared_stale = false;
}

void prof_task_name(struct prof *p, uint32_t tag, const char *name, size_t len)
{
    char want[sizeof p->tasks[0].name];
    snprintf(want, sizeof want, "%.*s", (int)len, name);
    uint32_t cur = current_task(p, tag);
    if (cur && strcmp(p->tasks[cur - 1].name, want) == 0)
        return; /* the periodic re-announce: nothing new */
    prof_settle(p); /* counted samples become entries under the record they came with */
    /* renamed before it ran, or it had no name ("?", a tag the firmware could not name): one record */
    if (cur && (!p->tasks[cur - 1].has_samples || strcmp(p->tasks[cur - 1].name, "?") == 0)) {
        memcpy(p->tasks[cur - 1].name, want, sizeof want);
        p->shared_stale = true;
        return;
    }
    for (size_t i = 0; i < p->n_tasks; i++) /* a name this tag had before, back again */
        if (p->tasks[i].tag == tag && strcmp(p->tasks[i].name, want) == 0) {
            set_current_task(p, (uint32_t)i);
            return;
        }
    if (!prof_grow((void **)&p->tasks, &p->cap_tasks, p->n_tasks + 1, sizeof *p->tasks, 8))
        return;
    struct task *t = &p->tasks[p->n_tasks];
    memset(t, 0, sizeof *t);
    t->tag = tag;
    memcpy(t->name, want, sizeof want);
    p->n_tasks++;
    if (!set_current_task(p, (uint32_t)(p->n_tasks - 1))) {
        p->n_tasks--;
        return;
    }
    p->shared_stale = true;
    if (!cur && p->unnamed_entries) /* the tag's first name also names the samples it had */
        for (size_t i = 0; i < p->cap; i++) {
            struct entry *e = &p->map[i];
            if (e->used && e->has_tag && !e->task && e->tag == tag) {
                e->task = (uint32_t)p->n_tasks;
                p->tasks[p->n_tasks - 1].has_samples = true;
                p->unnamed_entries--;
            }
        }
}

void prof_task_table_full(struct prof *p, uint64_t slots)
{
    p->table_full = slots ? slots : 1;
}

void prof_stream_build_id(struct prof *p, const uint8_t *id, size_t len)
{
    p->stream_id_len = len < sizeof p->stream_id ? len : sizeof p->stream_id;
    memcpy(p->stream_id, id, p->stream_id_len);
}

double prof_total(const struct prof *p)
{
    return p->bucket_total + (double)p->raw_samples;
}

/* The library's own code: functions defined in firmware/cmprof_*.c, by the DWARF file of the
 * outermost frame (inlined helpers count as their caller's). */
static bool in_profiler(const struct sym_location *l)
{
    if (!l || !l->known)
        return false;
    const char *file = sym_frame_at(l, l->n_frames - 1)->file;
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    return base && strncmp(base, "cmprof_", 7) == 0;
}

void prof_fold_overhead(struct prof *p, bool on)
{
    p->fold_overhead = on;
}

double prof_overhead(struct prof *p)
{
    prof_settle(p);
    double total = prof_total(p);
    if (!p->syms || total <= 0)
        return 0;
    double own = 0;
    for (size_t i = 0; i < p->cap; i++)
        if (p->map[i].used && p->map[i].count > 0 && in_profiler(sym_lookup(p->syms, p->map[i].pc)))
            own += p->map[i].count;
    return own / total;
}

double prof_idle(struct prof *p)
{
    prof_settle(p);
    bool named = false;
    for (size_t i = 0; i < p->n_tasks && !named; i++)
        named = strcmp(p->tasks[i].name, PROF_IDLE_TASK) == 0;
    double total = prof_total(p);
    if (!named || total <= 0)
        return -1;
    double idle = 0;
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (e->used && e->task && strcmp(p->tasks[e->task - 1].name, PROF_IDLE_TASK) == 0)
            idle += e->count;
    }
    return idle / total;
}

uint64_t prof_sleep(const struct prof *p)
{
    return p->sleep;
}

/* ---- grouping ---------------------------------------------------------------------------- */

/* Copy a row name into p->names; returns 1 + its offset (the buffer may move until the rows are final). */
static size_t keep_name(struct prof *p, const char *s)
{
    size_t n = strlen(s) + 1;
    if (p->names_len + n > p->names_cap) {
        size_t cap = p->names_cap ? p->names_cap * 2 : 4096;
        while (cap < p->names_len + n)
            cap *= 2;
        char *b = realloc(p->names, cap);
        if (!b)
            return 0;
        p->names = b;
        p->names_cap = cap;
    }
    memcpy(p->names + p->names_len, s, n);
    p->names_len += n;
    return p->names_len - n + 1;
}

static const char *group_name(const struct prof *p, const struct group *g)
{
    return g->name_off ? p->names + g->name_off - 1 : (g->row.name ? g->row.name : "??");
}

static struct group *group_for(struct prof *p, const void *a, uint64_t b)
{
    if (p->n_groups * 2 >= p->gcap) {
        size_t cap = p->gcap ? p->gcap * 2 : 256;
        size_t *idx = malloc(cap * sizeof *idx);
        if (!idx)
            return NULL;
        for (size_t i = 0; i < cap; i++)
            idx[i] = SIZE_MAX;
        for (size_t g = 0; g < p->n_groups; g++) {
            size_t j = hash_key((uint32_t)(uintptr_t)p->groups[g].key_a ^ (uint32_t)((uintptr_t)p->groups[g].key_a >> 32),
                                (uint32_t)p->groups[g].key_b, true) & (cap - 1);
            while (idx[j] != SIZE_MAX)
                j = (j + 1) & (cap - 1);
            idx[j] = g;
        }
        free(p->gindex);
        p->gindex = idx;
        p->gcap = cap;
    }
    size_t j = hash_key((uint32_t)(uintptr_t)a ^ (uint32_t)((uintptr_t)a >> 32), (uint32_t)b, true) & (p->gcap - 1);
    while (p->gindex[j] != SIZE_MAX) {
        struct group *g = &p->groups[p->gindex[j]];
        if (g->key_a == a && g->key_b == b)
            return g;
        j = (j + 1) & (p->gcap - 1);
    }
    if (!prof_grow((void **)&p->groups, &p->cap_groups, p->n_groups + 1, sizeof *p->groups, 256))
        return NULL;
    struct group *g = &p->groups[p->n_groups];
    memset(g, 0, sizeof *g);
    g->key_a = a;
    g->key_b = b;
    p->gindex[j] = p->n_groups++;
    return g;
}

/* The task a sample belongs to: the record its tag named when it came (or, for samples that
 * came before their tag had a name, the tag's first name). */
static const struct task *task_of(const struct prof *p, const struct entry *e)
{
    return e->task ? &p->tasks[e->task - 1] : NULL;
}

/* "ISR: IRQ 6", "ISR: HardFault": an exception whose handler has no name of its own. */
static void exception_label(char *buf, size_t len, uint32_t exc)
{
    static const char *const core[16] = {NULL, NULL, "NMI", "HardFault", "MemManage", "BusFault", "UsageFault",
                                         "SecureFault", NULL, NULL, NULL, "SVCall", "DebugMonitor", NULL,
                                         "PendSV", "SysTick"};
    if (exc >= 16)
        snprintf(buf, len, "ISR: IRQ %u", (unsigned)(exc - 16));
    else if (core[exc])
        snprintf(buf, len, "ISR: %s", core[exc]);
    else
        snprintf(buf, len, "ISR: exception %u", (unsigned)exc);
}

/* A sample taken in an exception handler: its tag is CMPROF_ISR_TAG(exception number). */
static bool in_exception(const struct entry *e)
{
    return e->has_tag && (e->tag & 0xFFFFFE00u) == 0xFFFFFE00u && e->tag != EV_TAG_UNSENT;
}

/* A task the firmware named "?": it sampled the tag before any name came (e.g. 0 before the
 * scheduler ran). */
static bool nameless(const struct task *tk)
{
    return tk && strcmp(tk->name, "?") == 0;
}

/* The task row's name of a sample: in buf, or a string that outlives the call. */
static const char *task_name(const struct prof *p, const struct entry *e, char *buf, size_t len)
{
    bool isr = in_exception(e);
    const struct task *tk = e->has_tag && !isr ? task_of(p, e) : NULL;
    if (isr) { /* interrupt time is its own row, never the interrupted task's */
        uint32_t exc = e->tag & 0x1FFu;
        const char *h = p->syms ? sym_exception_handler(p->syms, exc) : NULL;
        if (h)
            snprintf(buf, len, "ISR: %s", h);
        else
            exception_label(buf, len, exc);
    } else if (e->has_tag && e->tag == EV_TAG_UNSENT) {
        return "(no tag: the firmware's task table was full)";
    } else if (nameless(tk)) { /* never named: its own row, under its tag */
        snprintf(buf, len, "0x%08x", e->tag);
    } else if (tk && tk->shared) { /* two tasks of one name: tell them apart by their tag */
        snprintf(buf, len, "%s (0x%08x)", tk->name, e->tag);
    } else if (tk) {
        return tk->name;
    } else if (e->has_tag) {
        snprintf(buf, len, "0x%08x", e->tag);
    } else {
        return "(no tag)";
    }
    return buf;
}

/* One row per task record (a reused tag's tasks stay apart), per exception, per unnamed tag. */
static struct group *task_group(struct prof *p, const struct entry *e)
{
    const struct task *tk = task_of(p, e);
    if (tk && !in_exception(e))
        return group_for(p, (const void *)(uintptr_t)3, (uint64_t)(tk - p->tasks));
    return group_for(p, (const void *)(uintptr_t)(e->has_tag ? 1 : 2), e->tag);
}

static int cmp_rows(const void *a, const void *b)
{
    const struct prof_row *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The frame of `function` in a sample's inline chain: with inline frames, any frame (the innermost
 * match), so an inlined call site in the function carries its callees' samples; without, only
 * the containing function. */
static const struct sym_frame *frame_in(const struct sym_location *loc, bool inline_frames, const char *function)
{
    if (!loc || !loc->known)
        return NULL;
    if (!inline_frames) {
        const struct sym_frame *out = sym_frame_at(loc, loc->n_frames - 1);
        return strcmp(out->function, function) == 0 ? out : NULL;
    }
    for (uint32_t k = 0; k < loc->n_frames; k++)
        if (strcmp(sym_frame_at(loc, k)->function, function) == 0)
            return sym_frame_at(loc, k);
    return NULL;
}

size_t prof_rows(struct prof *p, enum prof_group by, bool inline_frames, const struct prof_row **rows)
{
    return prof_rows_of(p, by, inline_frames, NULL, rows);
}

size_t prof_rows_of(struct prof *p, enum prof_group by, bool inline_frames, const char *function,
                    const struct prof_row **rows)
{
    prof_settle(p);
    p->n_groups = 0;
    p->names_len = 0;
    if (p->gindex)
        for (size_t i = 0; i < p->gcap; i++)
            p->gindex[i] = SIZE_MAX;
    char buf[64];
    if (by == PROF_BY_TASK)
        mark_shared_names(p);
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        const struct sym_location *loc = p->syms ? sym_lookup(p->syms, e->pc) : NULL;
        const struct sym_frame *fr = function ? frame_in(loc, inline_frames, function) : NULL;
        if (!function && loc && loc->known)
            fr = inline_frames ? sym_frame_at(loc, 0) : sym_frame_at(loc, loc->n_frames - 1);
        if (function && !fr)
            continue;
        struct group *g = NULL;
        const char *name = NULL, *file = NULL;
        uint32_t line = 0;
        if (p->fold_overhead && (by == PROF_BY_FUNCTION || by == PROF_BY_LINE) && in_profiler(loc)) {
            g = group_for(p, (const void *)(uintptr_t)4, 0);
            name = PROF_OVERHEAD_ROW;
        }
        switch (g ? PROF_BY_ADDRESS + 1 : (int)by) {
        case PROF_BY_FUNCTION:
            if (fr && strcmp(fr->function, "??") != 0) {
                g = group_for(p, fr->function, 0);
                name = fr->function;
                file = fr->file;
                if (g && fr != sym_frame_at(loc, loc->n_frames - 1)) /* not the outermost: an inlined copy */
                    g->row.inlined = true;
            } else {
                g = group_for(p, NULL, e->pc); /* unknown: one row per address */
                snprintf(buf, sizeof buf, "0x%08x", e->pc);
                name = buf;
            }
            break;
        case PROF_BY_LINE: {
            /* the line in the function the row is named for: innermost, or the call site in the
             * containing function */
            const struct sym_frame *lf = fr;
            if (lf && strcmp(lf->file, "??") != 0) {
                g = group_for(p, lf->file, lf->line);
                snprintf(buf, sizeof buf, "%s:%u", strrchr(lf->file, '/') ? strrchr(lf->file, '/') + 1 : lf->file,
                         lf->line);
                name = buf;
                file = lf->file;
                line = lf->line;
            } else {
                g = group_for(p, NULL, e->pc);
                snprintf(buf, sizeof buf, "0x%08x", e->pc);
                name = buf;
            }
            break;
        }
        case PROF_BY_FILE:
            if (fr && strcmp(fr->file, "??") != 0) {
                g = group_for(p, fr->file, 0);
                name = fr->file;
                file = fr->file;
            } else {
                g = group_for(p, NULL, 0);
                name = "(unknown file)";
            }
            break;
        case PROF_BY_ADDRESS:
            g = group_for(p, NULL, e->pc);
            snprintf(buf, sizeof buf, "0x%08x", e->pc);
            name = buf;
            if (fr) {
                file = fr->file;
                line = fr->line;
            }
            break;
        case PROF_BY_TASK:
            g = task_group(p, e);
            name = task_name(p, e, buf, sizeof buf);
            break;
        default: /* the folded overhead row, chosen above */
            break;
        }
        if (!g)
            continue;
        if (g->row.samples == 0 && !g->row.name && !g->name_off) {
            if (name == buf || by == PROF_BY_TASK)
                g->name_off = keep_name(p, name);
            else
                g->row.name = name;
            g->row.file = file;
            g->row.line = line;
        }
        g->row.samples += e->count;
        g->row.approximate |= e->approximate;
    }
    if (p->n_groups > p->cap_rows) {
        struct prof_row *r = realloc(p->rows, p->n_groups * sizeof *r);
        if (!r)
            return 0;
        p->rows = r;
        p->cap_rows = p->n_groups;
    }
    const double total = prof_total(p);
    for (size_t g = 0; g < p->n_groups; g++) {
        struct prof_row *r = &p->rows[g];
        *r = p->groups[g].row;
        r->name = group_name(p, &p->groups[g]);
        r->share = total > 0 ? r->samples / total : 0;
        prof_wilson95(r->share, total, &r->lo95, &r->hi95);
        r->ci95 = (r->hi95 - r->lo95) / 2.0;
    }
    if (p->n_groups)
        qsort(p->rows, p->n_groups, sizeof *p->rows, cmp_rows);
    *rows = p->rows;
    return p->n_groups;
}

uint32_t prof_top_pc(struct prof *p, bool inline_frames, const char *function, uint32_t line)
{
    prof_settle(p);
    uint32_t best = 0;
    double best_count = 0;
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count <= best_count || !p->syms)
            continue;
        const struct sym_location *loc = sym_lookup(p->syms, e->pc);
        if (!loc || !loc->known)
            continue;
        const struct sym_frame *fr = frame_in(loc, inline_frames, function);
        if (fr && fr->line == line) {
            best = e->pc;
            best_count = e->count;
        }
    }
    return best;
}

/* ---- folded stacks ----------------------------------------------------------------------- */

struct sym_table *prof_symbols(const struct prof *p)
{
    return p->syms;
}

#define STACK_NAMES 1024
/* A stack's frame names while prof_calls() or prof_folded() looks at it (one profile user at a time,
 * as everything here): the names, and the hex names of unknown addresses. */
static const char *frame_names[STACK_NAMES];
static char frame_hex[STACK_NAMES][12];

/* A stack's frames by name, the sampled function first: each address's inline chain, innermost
 * first, then its callers'. Unknown addresses are named by hex in hex[] (one slot each). */
static size_t stack_names(struct prof *p, const struct stack *st, const char **names, char (*hex)[12])
{
    size_t n = 0;
    for (size_t k = 0; k <= st->n && n < STACK_NAMES; k++) {
        uint32_t a = k ? st->callers[k - 1] : st->pc;
        const struct sym_location *loc = p->syms ? sym_lookup(p->syms, a) : NULL;
        if (loc && loc->known) {
            for (uint32_t f = 0; f < loc->n_frames && n < STACK_NAMES; f++)
                names[n++] = sym_frame_at(loc, f)->function;
        } else {
            snprintf(hex[n], sizeof hex[n], "0x%08x", (unsigned)a);
            names[n] = hex[n];
            n++;
        }
    }
    return n;
}

bool prof_has_stacks(const struct prof *p)
{
    return stacks_distinct(p->stacks) > 0;
}

static const char *call_name(const struct prof_call *c)
{
    return c->name ? c->name : c->hex;
}

static int cmp_call(const void *a, const void *b)
{
    const struct prof_call *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples < y->samples ? 1 : -1;
    return strcmp(call_name(x), call_name(y));
}

size_t prof_calls(struct prof *p, const char *function, bool callers, const struct prof_call **out, double *total)
{
    *total = 0;
    size_t n_calls = 0;
    for (size_t i = 0; i < stacks_distinct(p->stacks); i++) {
        struct stack st;
        stacks_get(p->stacks, i, &st);
        size_t n = stack_names(p, &st, frame_names, frame_hex), at = 0;
        while (at < n && strcmp(frame_names[at], function) != 0)
            at++;
        if (at == n)
            continue;
        *total += st.count;
        const char *other = callers ? (at + 1 < n ? frame_names[at + 1] : PROF_STACK_END) : (at > 0 ? frame_names[at - 1] : PROF_SELF);
        size_t k = 0;
        while (k < n_calls && strcmp(call_name(&p->calls[k]), other) != 0)
            k++;
        if (k == n_calls) {
            if (!prof_grow((void **)&p->calls, &p->cap_calls, n_calls + 1, sizeof *p->calls, 16))
                break;
            struct prof_call *c = &p->calls[n_calls++];
            memset(c, 0, sizeof *c);
            uintptr_t at_ = (uintptr_t)other, lo = (uintptr_t)frame_hex; /* a hex name: copied, the buffer is reused */
            bool made = at_ >= lo && at_ < lo + sizeof frame_hex;
            if (made)
                snprintf(c->hex, sizeof c->hex, "%s", other);
            else
                c->name = other;
        }
        p->calls[k].samples += st.count;
    }
    for (size_t k = 0; k < n_calls; k++) {
        struct prof_call *c = &p->calls[k];
        c->share = *total > 0 ? c->samples / *total : 0;
        prof_wilson95(c->share, *total, &c->lo95, &c->hi95);
    }
    if (n_calls)
        qsort(p->calls, n_calls, sizeof *p->calls, cmp_call);
    for (size_t k = 0; k < n_calls; k++) /* after the sort: a hex name points into its own row */
        if (!p->calls[k].name)
            p->calls[k].name = p->calls[k].hex;
    *out = p->calls;
    return n_calls;
}

/* Count samples under a folded stack (its first n characters): the groups are keyed by the
 * text's hash, named by the text. */
static void count_stack(struct prof *p, const char *stack, size_t n, double count)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < n; k++)
        h = (h ^ (unsigned char)stack[k]) * 1099511628211ull;
    struct group *g = group_for(p, (const void *)(uintptr_t)(h | 1), h >> 32);
    if (!g)
        return; /* out of memory: these samples stay out of the stacks */
    if (!g->name_off)
        g->name_off = keep_name(p, stack);
    g->row.samples += count;
}

/* prof_folded() when the samples came with stacks: each stack as it was walked. */
static void folded_stacks(struct prof *p, bool demangle, bool by_task)
{
    char stack[4096];
    for (size_t i = 0; i < stacks_distinct(p->stacks); i++) {
        struct stack st;
        stacks_get(p->stacks, i, &st);
        size_t n_names = stack_names(p, &st, frame_names, frame_hex), n = 0;
        if (by_task) {
            struct entry e = {.pc = st.pc, .tag = st.tag, .task = st.task, .has_tag = st.has_tag};
            char buf[64], frame[256];
            esc_text(frame, sizeof frame, task_name(p, &e, buf, sizeof buf), ";");
            n = (size_t)snprintf(stack, sizeof stack, "%s", frame);
        }
        for (size_t k = n_names; k-- > 0 && n + 2 < sizeof stack;) { /* root first */
            char frame[256];
            esc_text(frame, sizeof frame, demangle ? sym_demangle(p->syms, frame_names[k]) : frame_names[k], ";");
            n += (size_t)snprintf(stack + n, sizeof stack - n, "%s%s", n ? ";" : "", frame);
        }
        count_stack(p, stack, n < sizeof stack ? n : sizeof stack - 1, st.count);
    }
}

void prof_folded(struct prof *p, bool demangle, bool by_task, void (*emit)(void *ctx, const char *stack, double count),
                 void *ctx)
{
    prof_settle(p);
    /* group by the chain's innermost frame pointer sequence: PCs with equal chains merge */
    char stack[1024];
    /* the group table again, keyed by a hash of the chain string */
    p->n_groups = 0;
    p->names_len = 0;
    if (p->gindex)
        for (size_t i = 0; i < p->gcap; i++)
            p->gindex[i] = SIZE_MAX;
    if (prof_has_stacks(p)) {
        folded_stacks(p, demangle, by_task);
        for (size_t g = 0; g < p->n_groups; g++)
            emit(ctx, group_name(p, &p->groups[g]), p->groups[g].row.samples);
        return;
    }
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        const struct sym_location *loc = p->syms ? sym_lookup(p->syms, e->pc) : NULL;
        size_t n = 0;
        if (by_task) { /* the task (or interrupt) as the root frame */
            char buf[64], frame[256];
            esc_text(frame, sizeof frame, task_name(p, e, buf, sizeof buf), ";");
            n = (size_t)snprintf(stack, sizeof stack, "%s", frame);
        }
        if (loc && loc->known) {
            for (uint32_t k = loc->n_frames; k-- > 0 && n + 2 < sizeof stack;) {
                char frame[256]; /* ';' separates frames and a newline ends the line: neither may pass */
                const char *fn = sym_frame_at(loc, k)->function;
                esc_text(frame, sizeof frame, demangle ? sym_demangle(p->syms, fn) : fn, ";");
                n += (size_t)snprintf(stack + n, sizeof stack - n, "%s%s", n ? ";" : "", frame);
            }
        } else {
            n += (size_t)snprintf(stack + n, sizeof stack - n, "%s0x%08x", n ? ";" : "", e->pc);
        }
        count_stack(p, stack, n < sizeof stack ? n : sizeof stack - 1, e->count);
    }
    for (size_t g = 0; g < p->n_groups; g++)
        emit(ctx, group_name(p, &p->groups[g]), p->groups[g].row.samples);
}

/* ---- samples by address, for writers that keep addresses (pprof, callgrind, lcov) ------------ */

void prof_each_sample(struct prof *p, void (*emit)(void *ctx, const struct prof_sample *s), void *ctx)
{
    prof_settle(p);
    mark_shared_names(p);
    char buf[64];
    if (prof_has_stacks(p)) {
        for (size_t i = 0; i < stacks_distinct(p->stacks); i++) {
            struct stack st;
            stacks_get(p->stacks, i, &st);
            struct entry e = {.pc = st.pc, .tag = st.tag, .task = st.task, .has_tag = st.has_tag};
            struct prof_sample s = {st.pc, st.callers, st.n, st.has_tag ? task_name(p, &e, buf, sizeof buf) : NULL,
                                    st.count};
            emit(ctx, &s);
        }
        return;
    }
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        struct prof_sample s = {e->pc, NULL, 0, e->has_tag ? task_name(p, e, buf, sizeof buf) : NULL, e->count};
        emit(ctx, &s);
    }
}

const char *prof_tag_label(struct prof *p, uint32_t tag, char *buf, size_t len)
{
    struct entry e = {.tag = tag, .has_tag = true, .task = current_task(p, tag)};
    mark_shared_names(p);
    return task_name(p, &e, buf, len);
}

/* ---- diagnostics ------------------------------------------------------------------------- */

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

/* The instruction-start check over PCs merged by merged_pcs. The ELF's map is made the first time
 * there are PCs. */
static void check_code(struct prof *p, const struct pc_count *pcs, size_t n, struct prof_code_check *out)
{
    *out = (struct prof_code_check){0};
    if (!p->syms || p->bucket_total > 0 || !n)
        return;
    if (!p->codemap_tried) {
        p->codemap = codemap_new(p->syms);
        p->codemap_tried = true;
    }
    if (!p->codemap)
        return;
    out->checked = true;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        enum codemap_kind k = pcs[i].pc ? codemap_at(p->codemap, pcs[i].pc) : CODEMAP_OUTSIDE; /* 0: a wrong stack */
        out->pcs += k != CODEMAP_OUTSIDE;
        if (k != CODEMAP_NOT_START)
            continue;
        out->bad_pcs++;
        out->bad_samples += pcs[i].count;
        if (pcs[i].count > worst) {
            worst = pcs[i].count;
            out->example = pcs[i].pc;
        }
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

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

static void find_lockstep(struct prof *p)
{
    struct lockstep *ls = &p->lockstep;
    uint64_t n = p->raw_samples < RECENT ? p->raw_samples : RECENT;
    ls->found = false;
    ls->window = (uint32_t)n;
    ls->computed_at = p->raw_samples;
    if (n < LOCKSTEP_WINDOW_MIN)
        return;
    uint32_t *w = malloc(2 * n * sizeof *w);
    if (!w)
        return;
    uint64_t start = p->raw_samples - n;
    for (uint64_t i = 0; i < n; i++)
        w[i] = w[n + i] = p->recent[(start + i) % RECENT];
    /* expected match rate from the window's own PC shares */
    qsort(w + n, n, sizeof *w, cmp_u32);
    double expected = 0;
    for (uint64_t i = 0, run = 1; i < n; i++, run++)
        if (i + 1 == n || w[n + i + 1] != w[n + i]) {
            expected += ((double)run / n) * ((double)run / n);
            run = 0;
        }
    ls->expected = expected;
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

/* Samples whose task tag has no name (interrupt handlers have theirs): all of them, those the
 * firmware sent no tag for, those of tag 0, and one such tag (the most sampled). */
struct unnamed {
    double all, unsent, zero, top;
    uint32_t example;
};

static struct unnamed count_unnamed(const struct prof *p)
{
    struct unnamed u = {0};
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0 || !e->has_tag || in_exception(e))
            continue;
        const struct task *tk = task_of(p, e);
        if (tk && !nameless(tk))
            continue;
        u.all += e->count;
        u.unsent += e->tag == EV_TAG_UNSENT ? e->count : 0;
        u.zero += e->tag == 0 ? e->count : 0;
        if (e->tag != EV_TAG_UNSENT && e->count > u.top) {
            u.top = e->count;
            u.example = e->tag;
        }
    }
    return u;
}

/* The likely reason tags have no name, from what the stream showed. */
static void unnamed_cause(const struct prof *p, const struct unnamed *u, char *buf, size_t len)
{
    if (u->unsent || p->table_full)
        snprintf(buf, len, "the firmware's task table was full (%sraise CMPROF_STREAM_TASKS)%s",
                 p->table_full ? "" : "62 slots before issue 30; ", u->unsent ? ", so no tag was sent" : "");
    else if (u->zero >= u->all / 2)
        snprintf(buf, len, "tag 0: samples taken before the RTOS ran its first task (start sampling after the "
                 "scheduler starts)");
    else
        snprintf(buf, len, "no name was given for them: the RTOS hook or cmprof_stream_task() missed these "
                 "tasks, or the capture began after their names");
}

size_t prof_diagnose(struct prof *p, struct prof_diag *out, size_t max)
{
    prof_settle(p);
    size_t n = 0;
#define ADD(kind_, ...)                                                                                              \
    do {                                                                                                             \
        if (n < max) {                                                                                               \
            out[n].kind = (kind_);                                                                                   \
            snprintf(out[n].text, sizeof out[n].text, __VA_ARGS__);                                                  \
            n++;                                                                                                     \
        }                                                                                                            \
    } while (0)
    double total = prof_total(p);
    if (p->raw_samples == 0 && total == 0)
        return 0;
    /* per-PC totals (tags merged) for the checks below */
    double zero = 0, outside_code = 0, outside_funcs = 0, top_count = 0;
    uint32_t top_pc = 0, example_out = 0;
    size_t distinct = 0;
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        distinct++;
        if (e->pc == 0) {
            zero += e->count;
            continue;
        }
        if (p->syms && !sym_in_code(p->syms, e->pc)) {
            outside_code += e->count;
            example_out = e->pc;
        } else if (p->syms && !function_at(p, e->pc)) {
            outside_funcs += e->count;
        }
    }
    /* per-PC counts with tags merged, for the constant-PC, skid and instruction-start checks */
    size_t merged;
    struct pc_count *pcs = merged_pcs(p, distinct, &merged);
    for (size_t i = 0; i < merged; i++)
        if (pcs[i].count > top_count) {
            top_count = pcs[i].count;
            top_pc = pcs[i].pc;
        }
    if (total >= 20 && zero / total >= 0.9)
        ADD(DIAG_WRONG_STACK,
            "wrong stack in the prologue: %.0f of %.0f samples read PC 0x00000000; the handler reads the frame from "
            "MSP while the code runs on PSP (pick the stack by EXC_RETURN bit 2)",
            zero, total);
    else if (p->raw_samples >= 100 && merged == 1)
        ADD(DIAG_WRONG_STACK,
            "constant PC: all %.0f samples are 0x%08x; a prologue reading the wrong stack, or sampling in exact "
            "step with the program",
            total, top_pc);
    /* once the window is full, search again only when half of it is new: the live view asks ten
     * times a second, and a search can cost a millisecond */
    uint64_t since = p->raw_samples - p->lockstep.computed_at;
    if (since && (p->raw_samples < RECENT || since >= RECENT / 2))
        find_lockstep(p);
    if (p->lockstep.found && !n) /* a constant PC says it already */
        ADD(DIAG_LOCKSTEP,
            "lockstep suspected: the PCs repeat every %u samples (%.1f %% of the last %u match, %.1f %% expected "
            "from the profile's spread), so most of the program is never sampled; randomize the period (build with "
            "CMPROF_JITTER)",
            p->lockstep.lag, 100.0 * p->lockstep.rate, p->lockstep.window, 100.0 * p->lockstep.expected);
    /* skid: a large share right after an instruction that re-enables interrupts */
    for (size_t i = 0; i < merged && p->syms; i++) {
        if (pcs[i].count < 20 || pcs[i].count / total < 0.02)
            continue;
        const char *what = enables_interrupts(p, pcs[i].pc);
        if (!what)
            continue;
        const struct sym_location *l = sym_lookup(p->syms, pcs[i].pc);
        ADD(DIAG_SKID,
            "interrupts-disabled skid: %.1f %% of samples sit on 0x%08x in %s, right after '%s'; that time was "
            "spent with interrupts disabled before it",
            100.0 * pcs[i].count / total, pcs[i].pc, l && l->known ? sym_frame_at(l, l->n_frames - 1)->function : "??",
            what);
    }
    struct prof_code_check cc;
    check_code(p, pcs, merged, &cc);
    free(pcs);
    if (cc.wrong)
        ADD(DIAG_NOT_STARTS,
            "wrong ELF? %zu of the %zu sampled addresses in its code (%.1f %% of samples) are not where any of its "
            "instructions starts (inside one, in data or padding), e.g. 0x%08x: the capture is of another build",
            cc.bad_pcs, cc.pcs, 100.0 * cc.share, cc.example);
    if (p->syms && outside_code >= 5 && outside_code / total >= 0.01)
        ADD(DIAG_WRONG_ELF,
            "wrong ELF? %.1f %% of samples (%.0f) fall outside the ELF's code, e.g. 0x%08x",
            100.0 * outside_code / total, outside_code, example_out);
    if (p->syms && outside_funcs >= 5 && outside_funcs / total >= 0.05)
        ADD(DIAG_WRONG_ELF, "wrong ELF? %.1f %% of samples fall outside every function of the ELF",
            100.0 * outside_funcs / total);
    if (p->syms && p->stream_id_len) {
        size_t len;
        const uint8_t *id = sym_build_id(p->syms, &len);
        if (!id || len != p->stream_id_len || memcmp(id, p->stream_id, len) != 0)
            ADD(DIAG_BUILD_ID, "wrong ELF: the firmware announces a build-id that %s",
                id ? "differs from the ELF's" : "the ELF does not have");
    }
    struct unnamed u = count_unnamed(p);
    if (u.all > 0 && total > 0) {
        char cause[150];
        unnamed_cause(p, &u, cause, sizeof cause);
        if (u.top > 0)
            ADD(DIAG_UNNAMED_TAGS, "unnamed tasks: %.1f %% of samples (%.0f) carry task tags that were never named "
                "(e.g. 0x%08x, shown as its own row); likely cause: %s", 100.0 * u.all / total, u.all, u.example,
                cause);
        else
            ADD(DIAG_UNNAMED_TAGS, "unnamed tasks: %.1f %% of samples (%.0f) carry no task tag; likely cause: %s",
                100.0 * u.all / total, u.all, cause);
    }
#undef ADD
    return n;
}
