/* Call stacks (from a halting source): a function's callers and callees, and the folded stacks
 * that -o folded and speedscope write. */
#include "prof_int.h"

#include "escape.h"
#include "../base/grow.h"
#include "../base/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_NAMES 1024
/* A stack's frame names while prof_calls() or prof_folded() looks at it (one profile user at a time,
 * as everything here): the names, and the hex names of unknown addresses. */
static const char *frame_names[STACK_NAMES];
static char frame_hex[STACK_NAMES][12];
/* each frame's function by its own name (NULL: a hex or marker name), where frame_names may add its file */
static const char *frame_functions[STACK_NAMES];

/* A stack's frames by name, the sampled function first: each address's inline chain, innermost
 * first, then its callers'; one of several functions of a name as "name (file)". Unknown addresses
 * are named by hex in hex[] (one slot each). */
static size_t stack_names(struct prof *p, const struct stack *st, const char **names, char (*hex)[12])
{
    size_t n = 0;
    for (size_t k = 0; k <= st->n && n < STACK_NAMES; k++) {
        uint32_t a = k ? st->callers[k - 1] : st->pc;
        const struct sym_location *loc = p->syms && a != PROF_UNPROVEN_PC ? sym_lookup(p->syms, a) : NULL;
        frame_functions[n] = NULL;
        if (a == PROF_UNPROVEN_PC) {
            names[n++] = PROF_STACK_UNPROVEN;
        } else if (loc && loc->known) {
            for (uint32_t f = 0; f < loc->n_frames && n < STACK_NAMES; f++) {
                frame_functions[n] = sym_frame_at(loc, f)->function;
                names[n] = sym_function_label(p->syms, frame_functions[n], a);
                n++;
            }
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
        /* a row's name, or a function's name for every function of that name */
        while (at < n && strcmp(frame_names[at], function) != 0 &&
               !(frame_functions[at] && strcmp(frame_functions[at], function) == 0))
            at++;
        if (at == n)
            continue;
        *total += st.count;
        const char *other = callers ? (at + 1 < n ? frame_names[at + 1] : PROF_STACK_END) : (at > 0 ? frame_names[at - 1] : PROF_SELF);
        size_t k = 0;
        while (k < n_calls && strcmp(call_name(&p->calls[k]), other) != 0)
            k++;
        if (k == n_calls) {
            if (!grow_array((void **)&p->calls, &p->cap_calls, n_calls + 1, sizeof *p->calls, 16))
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

/* What a folded frame escapes as \xNN besides control bytes: ';' separates frames (esc_text
 * writes each '\' as \\, so that esc_decode gives the name back: profile.h). */
#define FOLDED_ESCAPED ";"

/* Count samples under a folded stack (its first n characters): the groups are keyed by the
 * text's hash, named by the text. */
static void count_stack(struct prof *p, const char *stack, size_t n, double count)
{
    uint64_t h = fnv1a64(stack, n);
    struct group *g = prof_group_for(p, (const void *)(uintptr_t)(h | 1), h >> 32);
    if (!g)
        return; /* out of memory: these samples stay out of the stacks */
    if (!g->name_off)
        g->name_off = prof_keep_name(p, stack);
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
            esc_text(frame, sizeof frame, prof_task_label(p, &e, buf, sizeof buf), FOLDED_ESCAPED);
            n = (size_t)snprintf(stack, sizeof stack, "%s", frame);
        }
        for (size_t k = n_names; k-- > 0 && n + 2 < sizeof stack;) { /* root first */
            char frame[256];
            esc_text(frame, sizeof frame, sym_shown_name(p->syms, frame_names[k], demangle), FOLDED_ESCAPED);
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
            emit(ctx, prof_group_name(p, &p->groups[g]), p->groups[g].row.samples);
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
            esc_text(frame, sizeof frame, prof_task_label(p, e, buf, sizeof buf), FOLDED_ESCAPED);
            n = (size_t)snprintf(stack, sizeof stack, "%s", frame);
        }
        if (loc && loc->known) {
            for (uint32_t k = loc->n_frames; k-- > 0 && n + 2 < sizeof stack;) {
                char frame[256]; /* ';' separates frames and a newline ends the line: neither may pass */
                const char *fn = sym_function_label(p->syms, sym_frame_at(loc, k)->function, e->pc);
                esc_text(frame, sizeof frame, sym_shown_name(p->syms, fn, demangle), FOLDED_ESCAPED);
                n += (size_t)snprintf(stack + n, sizeof stack - n, "%s%s", n ? ";" : "", frame);
            }
        } else {
            n += (size_t)snprintf(stack + n, sizeof stack - n, "%s0x%08x", n ? ";" : "", e->pc);
        }
        count_stack(p, stack, n < sizeof stack ? n : sizeof stack - 1, e->count);
    }
    for (size_t g = 0; g < p->n_groups; g++)
        emit(ctx, prof_group_name(p, &p->groups[g]), p->groups[g].row.samples);
}


/* ---- samples by address, for writers that keep addresses (pprof, callgrind, lcov) ------------ */

void prof_each_sample(struct prof *p, void (*emit)(void *ctx, const struct prof_sample *s), void *ctx)
{
    prof_settle(p);
    prof_mark_shared_names(p);
    char buf[64];
    if (prof_has_stacks(p)) {
        for (size_t i = 0; i < stacks_distinct(p->stacks); i++) {
            struct stack st;
            stacks_get(p->stacks, i, &st);
            struct entry e = {.pc = st.pc, .tag = st.tag, .task = st.task, .has_tag = st.has_tag};
            struct prof_sample s = {st.pc, st.callers, st.n,
                                    st.has_tag ? prof_task_label(p, &e, buf, sizeof buf) : NULL, st.count};
            emit(ctx, &s);
        }
        return;
    }
    prof_each_place(p, emit, ctx);
}

void prof_each_place(struct prof *p, void (*emit)(void *ctx, const struct prof_sample *s), void *ctx)
{
    prof_settle(p);
    prof_mark_shared_names(p);
    char buf[64];
    for (size_t i = 0; i < p->cap; i++) {
        const struct entry *e = &p->map[i];
        if (!e->used || e->count == 0)
            continue;
        struct prof_sample s = {e->pc, NULL, 0, e->has_tag ? prof_task_label(p, e, buf, sizeof buf) : NULL, e->count};
        emit(ctx, &s);
    }
}

const char *prof_tag_label(struct prof *p, uint32_t tag, char *buf, size_t len)
{
    struct entry e = {.tag = tag, .has_tag = true, .task = prof_current_task(p, tag)};
    prof_mark_shared_names(p);
    return prof_task_label(p, &e, buf, len);
}
