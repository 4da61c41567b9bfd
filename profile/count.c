/* Counting samples: PCs (through per-address indexes for the ELF's code, a hash for the rest),
 * tagged samples by task record, call stacks, sleep, and histogram buckets. */
#include "prof_int.h"

#include "../base/grow.h"
#include "../decode/event.h"

#include <stdlib.h>
#include <string.h>

/* An entry's place: its task record in the hash too, as a tag under churn (a block or a name index
 * taken by worker after worker) has entries at one PC under thousands of records. */
static size_t entry_hash(uint32_t pc, uint32_t tag, bool has_tag, uint32_t task)
{
    return prof_hash_key(pc, tag, has_tag) ^ (size_t)((uint64_t)task * 0x9E3779B97F4A7C15ull >> 16);
}

/* The entries placed again in a table of cap slots, those of tag counted with no record (task 0)
 * given record `task` on the way (0: none is); how many were, or -1 when out of memory (then
 * nothing changed). */
static long rehash(struct prof *p, size_t cap, uint32_t tag, uint32_t task)
{
    struct entry *m = calloc(cap, sizeof *m);
    if (!m)
        return -1;
    long named = 0;
    for (size_t i = 0; i < p->cap; i++) {
        struct entry e = p->map[i];
        if (!e.used)
            continue;
        if (task && e.has_tag && !e.task && e.tag == tag) {
            e.task = task;
            named++;
        }
        size_t j = entry_hash(e.pc, e.tag, e.has_tag, e.task) & (cap - 1);
        while (m[j].used)
            j = (j + 1) & (cap - 1);
        m[j] = e;
    }
    free(p->map);
    p->map = m;
    p->cap = cap;
    return named;
}

long prof_name_entries(struct prof *p, uint32_t tag, uint32_t task)
{
    long named = p->cap ? rehash(p, p->cap, tag, task) : 0;
    if (named > 0) {
        p->tasks[task - 1].has_samples = true;
        p->unnamed_entries -= (size_t)named;
    }
    return named;
}

static struct entry *slot(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag, uint32_t task)
{
    if (p->used * 2 >= p->cap && rehash(p, grow_capacity(p->cap, (p->used + 1) * 2, 128), 0, 0) < 0)
        return NULL;
    if (!has_tag)
        tag = 0;
    size_t j = entry_hash(pc, tag, has_tag, task) & (p->cap - 1);
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
uint32_t prof_current_task(struct prof *p, uint32_t tag)
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
    if (!found && p->pending_task && ev_tag_pending(tag)) /* its index has been named since */
        found = p->pending_task[tag - EV_TAG_PENDING_BASE];
    p->last_tag = tag;
    p->last_task = found;
    p->last_valid = true;
    return found;
}

/* Make record r (0-based) the current one of its tag. */
bool prof_set_current_task(struct prof *p, uint32_t r)
{
    if ((p->n_tasks + 1) * 2 > p->task_index_cap) { /* rebuild at half full from the records */
        size_t cap = grow_capacity(p->task_index_cap, (p->n_tasks + 1) * 2, 64);
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
    uint32_t task = has_tag ? prof_current_task(p, tag) : 0;
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
    if (p->recent)
        p->recent[p->order_count++ % RECENT] = pc;
    p->raw_samples++;
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

void prof_add_pc_weighted(struct prof *p, uint32_t pc, bool has_tag, uint32_t tag, double weight)
{
    prof_add_pc(p, pc, has_tag, tag);
    if (!(weight > 1) && !(weight < 1))
        return;
    struct entry *e = slot(p, pc, has_tag, tag, has_tag ? prof_current_task(p, tag) : 0);
    if (!e)
        return;
    e->count += weight - 1; /* the sample itself is counted above */
    p->weight_extra += weight - 1;
    p->weight_sq_extra += weight * weight - 1;
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
    for (size_t i = counted > RECENT ? counted - RECENT : 0; p->recent && i < counted; i++) /* the last RECENT stay */
        p->recent[(p->order_count + i) % RECENT] = pcs[i];
    p->order_count += p->recent ? counted : 0;
    p->raw_samples += counted;
    for (size_t i = counted + 1; i < n; i++) /* out of memory at one sample: the rest one by one */
        prof_add_pc(p, pcs[i], false, 0);
}

void prof_add_stack(struct prof *p, uint32_t pc, const uint32_t *callers, size_t n, bool has_tag, uint32_t tag)
{
    if (!p->stacks && !(p->stacks = stacks_new()))
        return;
    struct stack st = {pc & ~1u, callers, n, has_tag ? prof_current_task(p, tag) : 0u, tag, has_tag, 1.0};
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
        const char *f = prof_function_at(p, addr + k);
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
        if (owned && !prof_function_at(p, addr + k))
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
    p->bucket_at = addr;
    p->bucket_bytes = size;
}

