/* The task table: tags and their names as the firmware sends them, and the name each sample's
 * task row gets (a task, an exception handler, a tag without a name). */
#include "prof_int.h"

#include "../base/grow.h"
#include "../base/hash.h"
#include "../decode/event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_task_by_name(const void *a, const void *b)
{
    const struct task *x = *(struct task *const *)a, *y = *(struct task *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->tag > y->tag) - (x->tag < y->tag);
}

/* Group the records by name (one row per name): sort them by name, then give each run of one
 * name its first record as `same` and the run's distinct tags as that record's `instances`.
 * Records named "?" (never named) stay apart, each under its tag. Done when rows are made, not per
 * name. */
void prof_mark_shared_names(struct prof *p)
{
    if (!p->shared_stale || p->n_tasks == 0)
        return;
    struct task **order = malloc(p->n_tasks * sizeof *order);
    if (!order)
        return;
    for (size_t i = 0; i < p->n_tasks; i++) {
        order[i] = &p->tasks[i];
        p->tasks[i].same = (uint32_t)i;
        p->tasks[i].instances = 1;
    }
    qsort(order, p->n_tasks, sizeof *order, cmp_task_by_name);
    for (size_t a = 0, b; a < p->n_tasks; a = b) { /* order[a, b): one name */
        b = a + 1;
        while (b < p->n_tasks && !prof_nameless(order[a]) && strcmp(order[b]->name, order[a]->name) == 0)
            b++;
        struct task *first = order[a]; /* the name's first record in table order keeps the row */
        uint32_t tags = 1;
        for (size_t k = a + 1; k < b; k++) {
            first = order[k] < first ? order[k] : first;
            tags += order[k]->tag != order[k - 1]->tag;
        }
        for (size_t k = a; k < b; k++)
            order[k]->same = (uint32_t)(first - p->tasks);
        first->instances = tags;
    }
    free(order);
    p->shared_stale = false;
}

#define NAME_GONE UINT32_MAX /* the slot of a key a record had before it was renamed in place */

static size_t name_hash(uint32_t tag, const char *name, size_t cap)
{
    uint64_t h = fnv1a64_step(FNV1A64_BASIS, tag); /* the tag, then the name's bytes */
    for (; *name; name++)
        h = fnv1a64_step(h, (unsigned char)*name);
    return (size_t)(h ^ h >> 32) & (cap - 1);
}

/* 1 + the record of tag under name, 0: none. A tag's names are looked up in the index: under churn
 * with names of their own (a new worker name each time) the records grow without end. */
static uint32_t name_record(const struct prof *p, uint32_t tag, const char *name)
{
    if (!p->name_index)
        return 0;
    size_t mask = p->name_index_cap - 1;
    for (size_t j = name_hash(tag, name, p->name_index_cap); p->name_index[j]; j = (j + 1) & mask) {
        uint32_t r = p->name_index[j];
        if (r != NAME_GONE && p->tasks[r - 1].tag == tag && strcmp(p->tasks[r - 1].name, name) == 0)
            return r;
    }
    return 0;
}

static void name_slot_put(struct prof *p, uint32_t r)
{
    size_t mask = p->name_index_cap - 1, j = name_hash(p->tasks[r].tag, p->tasks[r].name, p->name_index_cap);
    while (p->name_index[j] && p->name_index[j] != NAME_GONE)
        j = (j + 1) & mask;
    p->name_index_used += !p->name_index[j];
    p->name_index[j] = r + 1;
}

/* Index record r (0-based) under its tag and name, with records 0..r-1 indexed already; the table is
 * made again from the records at half full (gone slots counted). False when out of memory. */
static bool name_index_add(struct prof *p, uint32_t r)
{
    if ((p->name_index_used + 1) * 2 > p->name_index_cap) {
        size_t cap = grow_capacity(0, ((size_t)r + 1) * 4, 64); /* a quarter full after */
        uint32_t *m = calloc(cap, sizeof *m);
        if (!m)
            return false;
        free(p->name_index);
        p->name_index = m;
        p->name_index_cap = cap;
        p->name_index_used = 0;
        for (uint32_t i = 0; i < r; i++)
            name_slot_put(p, i);
    }
    name_slot_put(p, r);
    return true;
}

/* Record r (0-based) leaves the index (before its name changes in place). */
static void name_index_drop(struct prof *p, uint32_t r)
{
    if (!p->name_index)
        return;
    size_t mask = p->name_index_cap - 1;
    for (size_t j = name_hash(p->tasks[r].tag, p->tasks[r].name, p->name_index_cap); p->name_index[j];
         j = (j + 1) & mask)
        if (p->name_index[j] == r + 1) {
            p->name_index[j] = NAME_GONE;
            return;
        }
}

void prof_task_name(struct prof *p, uint32_t tag, const char *name, size_t len)
{
    char want[sizeof p->tasks[0].name];
    snprintf(want, sizeof want, "%.*s", (int)len, name);
    uint32_t cur = prof_current_task(p, tag);
    if (cur && strcmp(p->tasks[cur - 1].name, want) == 0)
        return; /* the periodic re-announce: nothing new */
    if (!cur) /* the tag's samples counted without a record become entries before it gets one (below); */
        prof_settle(p); /* a tag's later records have lanes of their own: nothing to settle for them */
    /* renamed before it ran, or it had no name ("?", a tag the firmware could not name): one record */
    if (cur && (!p->tasks[cur - 1].has_samples || strcmp(p->tasks[cur - 1].name, "?") == 0)) {
        name_index_drop(p, cur - 1);
        memcpy(p->tasks[cur - 1].name, want, sizeof want);
        name_index_add(p, cur - 1); /* (out of memory: unindexed, a later record of the name is made anew) */
        p->shared_stale = true;
        return;
    }
    uint32_t again = name_record(p, tag, want); /* a name this tag had before, back again */
    if (again) {
        prof_set_current_task(p, again - 1);
        return;
    }
    if (!grow_array((void **)&p->tasks, &p->cap_tasks, p->n_tasks + 1, sizeof *p->tasks, 8))
        return;
    struct task *t = &p->tasks[p->n_tasks];
    memset(t, 0, sizeof *t);
    t->tag = tag;
    memcpy(t->name, want, sizeof want);
    t->same = (uint32_t)p->n_tasks; /* its own row until prof_mark_shared_names says otherwise */
    t->instances = 1;
    if (!name_index_add(p, (uint32_t)p->n_tasks))
        return;
    p->n_tasks++;
    if (!prof_set_current_task(p, (uint32_t)(p->n_tasks - 1))) {
        name_index_drop(p, (uint32_t)(p->n_tasks - 1));
        p->n_tasks--;
        return;
    }
    p->shared_stale = true;
    if (!cur && p->unnamed_entries) /* the tag's first name also names the samples it had */
        prof_name_entries(p, tag, (uint32_t)p->n_tasks);
}

void prof_task_pending_named(struct prof *p, uint32_t pending, uint32_t tag)
{
    uint32_t r = prof_current_task(p, tag);
    if (!r || !ev_tag_pending(pending))
        return;
    if (!p->pending_task && !(p->pending_task = calloc(EV_TAG_PENDING_SPAN, sizeof *p->pending_task)))
        return; /* out of memory: those samples keep their pending row */
    prof_settle(p);
    p->pending_task[pending - EV_TAG_PENDING_BASE] = r;
    p->last_valid = false;
    p->last_lane = 0;
    if (p->unnamed_entries)
        prof_name_entries(p, pending, r);
}

void prof_task_names_unsure(struct prof *p)
{
    if (p->pending_task) /* a pending index's samples wait for its next name, not the one it had */
        memset(p->pending_task, 0, EV_TAG_PENDING_SPAN * sizeof *p->pending_task);
    p->last_valid = false;
    p->last_lane = 0;
}

/* The record of samples whose task's name was lost (EV_TASK_UNKNOWN): one row for all of them. */
#define UNKNOWN_TAG 0xFFFFE000u /* above the pending tags, below the exception handlers' */
#define UNKNOWN_NAME "(task unknown: its name was in a line this host did not read)"

void prof_task_unknown(struct prof *p, uint32_t pending)
{
    if (!ev_tag_pending(pending))
        return;
    prof_task_name(p, UNKNOWN_TAG, UNKNOWN_NAME, strlen(UNKNOWN_NAME));
    prof_task_pending_named(p, pending, UNKNOWN_TAG);
    if (p->pending_task) /* the index's next samples carry its new name's tag, or wait again */
        p->pending_task[pending - EV_TAG_PENDING_BASE] = 0;
    p->last_valid = false;
}

void prof_task_table_full(struct prof *p, uint64_t slots)
{
    p->table_full = slots ? slots : 1;
}

const struct task *prof_task_of(const struct prof *p, const struct entry *e)
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
        snprintf(buf, len, PROF_ISR_PREFIX "IRQ %u", (unsigned)(exc - 16));
    else if (core[exc])
        snprintf(buf, len, PROF_ISR_PREFIX "%s", core[exc]);
    else
        snprintf(buf, len, PROF_ISR_PREFIX "exception %u", (unsigned)exc);
}

/* A sample taken in an exception handler: its tag is CMPROF_ISR_TAG(exception number). */
bool prof_in_exception(const struct entry *e)
{
    return e->has_tag && (e->tag & 0xFFFFFE00u) == 0xFFFFFE00u && e->tag != EV_TAG_UNSENT;
}

/* A task the firmware named "?": it sampled the tag before any name came (e.g. 0 before the
 * scheduler ran). */
bool prof_nameless(const struct task *tk)
{
    return tk && strcmp(tk->name, "?") == 0;
}

/* The task row's name of a sample: in buf, or a string that outlives the call. */
/* A tag never named: the variable it is, when a variable of the ELF starts there (a statically
 * defined control block: Zephyr's z_idle_threads, K_THREAD_DEFINE's), with the address; else the
 * address (a control block inside a heap or pool says nothing by the pool's name). */
static void tag_label(const struct prof *p, uint32_t tag, char *buf, size_t len)
{
    uint32_t off = 1;
    const char *var = p->syms && tag ? sym_object_at(p->syms, tag, &off) : NULL;
    if (var && off == 0)
        snprintf(buf, len, "%s (0x%08x)", var, tag);
    else
        snprintf(buf, len, "0x%08x", tag);
}

const char *prof_task_label(const struct prof *p, const struct entry *e, char *buf, size_t len)
{
    bool isr = prof_in_exception(e);
    const struct task *tk = e->has_tag && !isr ? prof_task_of(p, e) : NULL;
    if (isr) { /* interrupt time is its own row, never the interrupted task's */
        uint32_t exc = e->tag & 0x1FFu;
        const char *h = p->syms ? sym_exception_handler(p->syms, exc) : NULL;
        if (h)
            snprintf(buf, len, PROF_ISR_PREFIX "%s", h);
        else
            exception_label(buf, len, exc);
    } else if (e->has_tag && e->tag == EV_TAG_UNSENT) {
        return "(no tag: the firmware's task table was full)";
    } else if (prof_nameless(tk)) { /* never named: its own row, under its tag (the record's: a sample
                                       that waited for the index's name carries EV_TAG_PENDING) */
        tag_label(p, tk->tag, buf, len);
    } else if (tk) { /* tasks of one name share its row, however many tags had it */
        return tk->name;
    } else if (e->has_tag && ev_tag_pending(e->tag)) { /* attached mid-stream: its name comes soon */
        snprintf(buf, len, "task #%u (name pending)", (unsigned)(e->tag - EV_TAG_PENDING_BASE));
    } else if (e->has_tag) {
        tag_label(p, e->tag, buf, len);
    } else {
        return PROF_UNTAGGED;
    }
    return buf;
}

bool prof_rows_untagged(const struct prof_row *rows, size_t n)
{
    bool untagged = false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].name, PROF_UNTAGGED) == 0)
            untagged = true;
        else if (strncmp(rows[i].name, PROF_ISR_PREFIX, strlen(PROF_ISR_PREFIX)) != 0)
            return false;
    }
    return untagged;
}
