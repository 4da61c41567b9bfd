/* A stage, the batch of units a reader fills (table.h): its file lists and ranges, what the
 * readers share to fill one, and reading a batch of units on one or two threads through a reader
 * the caller passes in (the one call out of this layer: a function pointer). */
#include "table.h"

#include <libdwarf/dwarf.h> /* (the DW_LANG_ constants only) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

uint32_t symt_stage_files(struct sym_stage *stage, const char *const *names, size_t n)
{
    if (stage->files.n == 0 && !VEC_PUSH(stage->files, NULL))
        return 0;
    if (n >= UINT32_MAX - stage->files.n || !VEC_RESERVE(stage->files, n))
        return 0;
    uint32_t index = (uint32_t)stage->files.n;
    if (n) /* (names may be NULL when n is 0) */
        memcpy(stage->files.v + stage->files.n, names, n * sizeof *names);
    stage->files.n += n;
    return index;
}

bool symt_stage_add_range(struct sym_stage *stage, uint32_t scope, uint32_t depth, bool inline_range, uint32_t lo,
                          uint32_t hi)
{
    if (lo == 0 && depth == 0 && hi < 0x100)
        return true; /* code discarded by the linker keeps debug info at address 0 */
    struct range r = {.lo = lo, .hi = hi, .scope = scope, .depth = depth};
    struct scope *s = &stage->scopes.v[scope];
    if (lo < s->low)
        s->low = lo;
    return inline_range ? VEC_PUSH(stage->inlines, r) : VEC_PUSH(stage->subs, r);
}

bool symt_lang_mangles(unsigned lang)
{
    return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 || lang == DW_LANG_C_plus_plus_11 ||
           lang == DW_LANG_C_plus_plus_14 || lang == DW_LANG_ObjC_plus_plus || lang == DW_LANG_D ||
           lang == DW_LANG_Rust || lang == DW_LANG_Java;
}

/* Move vector src into dst (vectors of one element type), freeing what dst held. */
#define VEC_MOVE(dst, src)                                                                                    \
    do {                                                                                                      \
        free((dst).v);                                                                                        \
        (dst).v = (src).v, (dst).n = (src).n, (dst).cap = (src).cap;                                          \
        (src).v = NULL, (src).n = (src).cap = 0;                                                              \
    } while (0)

void symt_stage_take_index(struct sym_table *t, struct sym_stage *ix)
{
    t->n_units = ix->n_units;
    VEC_MOVE(t->cu_names, ix->cu_names);
    VEC_MOVE(t->unit_ranges, ix->unit_ranges);
    VEC_MOVE(t->unit_hdrs, ix->unit_hdrs);
    ix->n_units = 0;
}

void symt_stage_free(struct sym_stage *stage)
{
    free(stage->rows.v);
    free(stage->files.v);
    free(stage->seqs.v);
    free(stage->scopes.v);
    free(stage->subs.v);
    free(stage->inlines.v);
    free(stage->cu_names.v);
    free(stage->unit_ranges.v);
    free(stage->unit_hdrs.v);
    memset(stage, 0, sizeof *stage);
}

/* ---- reading units on two threads -------------------------------------------------------- */

struct read_work {
    const struct unit_reader *reader;
    const struct unit_ref *refs;
    size_t n;
    _Atomic size_t next;
    struct cu_files *files; /* per position in refs */
    bool *read;
};

struct read_worker {
    struct read_work *w;
    int worker;
    struct sym_stage *stage;
    struct strpool *pool;
    bool failed;
};

static void *read_thread(void *arg)
{
    struct read_worker *k = arg;
    struct read_work *w = k->w;
    for (size_t i; !k->failed && (i = w->next++) < w->n;) {
        struct sym_stage *st = k->stage;
        size_t rows = st->rows.n, files = st->files.n, seqs = st->seqs.n, scopes = st->scopes.n, subs = st->subs.n,
               inl = st->inlines.n;
        enum read_result got = w->reader->read(w->reader->ctx, k->worker, st, k->pool, &w->refs[i], &w->files[i]);
        if (got != READ_OK) { /* not read here: nothing of it stays */
            st->rows.n = rows, st->files.n = files, st->seqs.n = seqs, st->scopes.n = scopes, st->subs.n = subs,
            st->inlines.n = inl;
            free(w->files[i].files);
            w->files[i] = (struct cu_files){NULL, 0, 1};
        }
        k->failed = got == READ_NO_MEMORY;
        w->read[i] = got == READ_OK;
    }
    return NULL;
}

/* A string of another pool, interned in `to`; the map remembers each pointer's answer. */
static const char *moved(struct ptrmap *m, struct strpool *to, const char *s, bool *ok)
{
    if (!s)
        return NULL;
    bool added;
    uintptr_t *slot = symt_ptrmap_slot(m, s, &added);
    if (!slot) {
        *ok = false;
        return s;
    }
    if (added)
        *slot = (uintptr_t)symt_intern(to, s);
    *ok &= *slot != 0;
    return (const char *)*slot;
}

/* Stage b's strings (in another pool) interned in `to`, in place. */
static bool adopt_strings(struct sym_stage *b, struct strpool *to)
{
    struct ptrmap m = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < b->files.n; i++)
        b->files.v[i] = moved(&m, to, b->files.v[i], &ok);
    for (size_t i = 0; ok && i < b->scopes.n; i++) {
        struct scope *sc = &b->scopes.v[i];
        sc->name = moved(&m, to, sc->name, &ok);
        sc->call_file = moved(&m, to, sc->call_file, &ok);
    }
    symt_ptrmap_free(&m);
    return ok;
}

/* Call sites get their file names, from the file table of the unit that read them: unit id's
 * position in the batch is pos[id] (ids up to max_id). */
static void name_call_sites(struct sym_stage *stage, const struct read_work *w, const uint32_t *pos, uint32_t max_id)
{
    for (size_t i = 0; i < stage->scopes.n; i++) {
        struct scope *sc = &stage->scopes.v[i];
        if (sc->call_fileno == UINT32_MAX || sc->cu > max_id)
            continue;
        const struct cu_files *f = &w->files[pos[sc->cu]];
        long j = (long)sc->call_fileno - f->base;
        sc->call_file = f->files && j >= 0 && j < f->n ? f->files[j] : NULL;
    }
}

/* The batch read (on two threads when a second stage is given), call sites named and the second
 * thread's strings moved into pool; false when out of memory. */
static bool read_batch(struct read_work *w, struct sym_stage *stage, struct sym_stage *second, struct strpool *pool,
                       struct strpool *second_strings)
{
    for (size_t i = 0; i < w->n; i++)
        w->files[i].base = 1;
    struct read_worker one = {w, 0, stage, pool, false}, two = {w, 1, second, second_strings, false};
    pthread_t th;
    bool threaded = second && w->n > 1 && w->reader->workers > 1 && symt_thread_start(&th, read_thread, &two);
    read_thread(&one);
    if (threaded)
        pthread_join(th, NULL);
    uint32_t max_id = 0;
    for (size_t k = 0; k < w->n; k++)
        max_id = w->refs[k].id > max_id ? w->refs[k].id : max_id;
    uint32_t *pos = malloc(((size_t)max_id + 1) * sizeof *pos);
    bool ok = !one.failed && !two.failed && pos;
    for (size_t k = 0; ok && k < w->n; k++)
        pos[w->refs[k].id] = (uint32_t)k;
    if (ok) {
        name_call_sites(stage, w, pos, max_id);
        if (threaded)
            name_call_sites(second, w, pos, max_id);
    }
    /* the second thread's strings, in its own pool until now, join the rest: in place, as its
     * stage is merged as it is */
    ok = ok && (!threaded || adopt_strings(second, pool));
    free(pos);
    return ok;
}

bool symt_read_units(const struct unit_reader *reader, struct sym_stage *stage, struct sym_stage *second,
                     struct strpool *pool, const struct unit_ref *refs, size_t n, bool *read)
{
    struct strpool second_strings = {0};
    bool *read_here = read ? read : calloc(n + 1, sizeof *read_here);
    struct read_work w = {reader, refs, n, 0, calloc(n + 1, sizeof *w.files), read_here};
    bool ok = w.files && read_here && read_batch(&w, stage, second, pool, &second_strings);
    for (size_t k = 0; w.files && k < n; k++)
        free(w.files[k].files);
    free(w.files);
    if (!read)
        free(read_here);
    symt_arena_free(&second_strings.arena);
    free(second_strings.slots);
    return ok;
}
