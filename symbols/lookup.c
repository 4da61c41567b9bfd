/* Address lookups over the flattened table: function, line and inline chain, cached per address. */
#include "units.h"
#include "../base/grow.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookups ----------------------------------------------------------------------------- */

/* Where the last of a run of ascending addresses was found in each sorted array: the next one
 * searches forward from there. -1: search it all. */
struct hints {
    long func, seq, sub;
    const struct seq *row_seq;
    long row;
    /* the last answer and what made it: a neighbour in the same function, scope and line row
     * shares its frames (most do: 100,000 addresses in a few units give 18,000 distinct chains) */
    struct sym_location *last;
    uint32_t last_handle; /* its handle */
    /* the answer before it: optimised code's line rows take turns (a line, its neighbour, the line
     * again), and an answer that reads as this one is shared too (both are in the cache) */
    struct sym_location *prev;
    uint32_t prev_handle;
    const struct func *last_fn;
    const struct row *last_row;
    const char *last_file; /* last_row's */
    long last_scope;
    uint32_t last_frames;
    /* Each search's last answer, and the address below which it holds: the nearest start or end,
     * above the address, of the entries it weighed (0: none). The dense ascending addresses of a
     * batch (the halfwords between close ones) reuse them and step the line row on instead of
     * searching: 100,000 addresses in 5 % of a large firmware's units, 5.6 -> 4.8 ms. They hold
     * for the units read when they were found (loads), and for later addresses only. */
    size_t loads;
    uint32_t at; /* the last address resolved */
    uint64_t fn_until, scope_until, seq_until;
    const struct func *fn;
    long scope, scope_cu;
    uint32_t frames;
    long seq_cu; /* the unit whose sequences line_for weighed (-1: all) */
    /* the last new answer's names and their lengths: its neighbours' are mostly the same strings */
    const char *len_fn, *len_file;
    uint16_t fn_len, file_len;
};

/* The hints' answers as void (a table changed, or an address below the last). */
static void hints_void(struct hints *h)
{
    h->fn_until = h->scope_until = h->seq_until = 0;
}

static const struct func *func_for(const struct sym_table *t, uint32_t addr, struct hints *h)
{
    uint64_t until;
    const struct func *found = symt_func_at(t, addr, h ? &h->func : NULL, &until);
    if (h) {
        h->fn = found;
        h->fn_until = until;
    }
    return found;
}

const char *symt_func_name(struct sym_table *t, const struct func *f)
{
    if (!f->name) /* (names_later: the names are read now) */
        symt_symbols_wait(t);
    if (!f->name)
        return t->load->unknown_name;
    if (!symt_elf_name_kept(t, f->name))
        return f->name;
    const char *kept = symt_intern(&t->strings, f->name);
    if (!kept)
        return f->name; /* (no memory: the kept table's copy serves as well, only not shared) */
    ((struct func *)f)->name = kept; /* the table's own list: asked once */
    return kept;
}

/* A row's file name (NULL: none), q its sequence. */
static const char *row_file(const struct sym_table *t, const struct seq *q, const struct row *row)
{
    return row ? t->files.v[q->file_base + row->file] : NULL;
}

/* The line row for addr, and in *in its sequence. Only sequences of compilation unit `cu` count
 * when cu >= 0; otherwise the first unit (in .debug_info order) whose sequence covers addr, as
 * binutils searches. */
static const struct row *line_for(const struct sym_table *t, uint32_t addr, long cu, struct hints *h,
                                  const struct seq **in)
{
    const struct seq *best = NULL;
    long last = h ? (h->seq = LAST_LE_FROM(t->seqs.v, t->seqs.n, addr, lo, h->seq)) : LAST_LE(t->seqs.v, t->seqs.n, addr, lo);
    /* the choice of sequence holds until the next one starts or one of those weighed ends */
    uint64_t until = (size_t)(last + 1) < t->seqs.n ? t->seqs.v[last + 1].lo : UINT64_MAX;
    for (long s = last; s >= 0 && t->seq_max_hi[s] > addr; s--) {
        const struct seq *q = &t->seqs.v[s];
        if (addr >= q->hi || (cu >= 0 && q->cu != (uint32_t)cu))
            continue;
        until = q->hi < until ? q->hi : until;
        if (!best || q->cu < best->cu)
            best = q;
    }
    if (h) {
        h->seq_until = until;
        h->seq_cu = cu;
    }
    *in = best;
    if (!best) {
        if (h)
            h->row_seq = NULL;
        return NULL;
    }
    long r;
    if (h) {
        r = LAST_LE_FROM(best->rows, best->n, addr, addr, h->row_seq == best ? h->row : -1);
        h->row_seq = best;
        h->row = r;
    } else {
        r = LAST_LE(best->rows, best->n, addr, addr);
    }
    return r >= 0 ? &best->rows[r] : NULL;
}

/* line_for's answer for addr while its choice of sequence holds: that sequence's row at addr, found
 * by stepping on from the last one (rows are a couple of bytes of code apart). */
static const struct row *line_again(struct hints *h, uint32_t addr)
{
    const struct seq *q = h->row_seq;
    if (!q)
        return NULL;
    long r = h->row;
    while ((size_t)(r + 1) < q->n && q->rows[r + 1].addr <= addr)
        r++;
    h->row = r;
    return r >= 0 ? &q->rows[r] : NULL;
}

/* Is symbol c a better name for addr than the current best b? binutils' rule (elf.c better_fit):
 * the nearest start wins; at the same start, when b does not reach addr the larger one wins;
 * when both cover addr, a function beats a non-function, then the smaller one wins; otherwise
 * the first in the symbol table stays. */
static bool better_fit(const struct func *b, const struct func *c, uint32_t addr)
{
    if (!b || c->lo > b->lo)
        return true;
    if (c->lo < b->lo)
        return false;
    uint32_t bsize = b->hi - b->lo, csize = c->hi - c->lo;
    if (b->hi <= addr)
        return csize > bsize;
    if (c->hi <= addr)
        return false;
    if (b->is_func != c->is_func)
        return c->is_func;
    return csize < bsize;
}

/* The symbol addr2line names for addr when DWARF has no function there: the best fit among the
 * symbols at the nearest start at or before addr, in the same section. */
static const struct func *func_before(const struct sym_table *t, uint32_t addr)
{
    symt_symbols_wait(t);
    long i = LAST_LE(t->labels.v, t->labels.n, addr, lo);
    if (i < 0)
        return NULL;
    uint32_t start = t->labels.v[i].lo;
    bool same_section = false;
    for (size_t k = 0; k < t->sections.n && !same_section; k++) {
        const struct span *c = &t->sections.v[k];
        same_section = addr >= c->lo && addr < c->hi && start >= c->lo;
    }
    if (!same_section)
        return NULL;
    while (i > 0 && t->labels.v[i - 1].lo == start)
        i--;
    const struct func *best = NULL;
    for (size_t k = (size_t)i; k < t->labels.n && t->labels.v[k].lo == start; k++)
        if (better_fit(best, &t->labels.v[k], addr))
            best = &t->labels.v[k];
    return best;
}


/* The innermost scope containing addr, or -1, in *frames the scopes in its chain (1: the
 * subprogram itself) and in *cu its compilation unit (-1: none). Among subprograms that cover addr
 * (assembler DWARF can overlap the next function by one byte: a Thumb low_pc), the first
 * compilation unit wins, then the smallest range, as in binutils. */
static long scope_for(const struct sym_table *t, uint32_t addr, struct hints *h, uint32_t *frames, long *cu)
{
    long found = -1;
    long last = h ? (h->sub = LAST_LE_FROM(t->subs.v, t->subs.n, addr, lo, h->sub)) : LAST_LE(t->subs.v, t->subs.n, addr, lo);
    /* the answer holds until the next range starts or one of those around addr ends */
    uint64_t until = (size_t)(last + 1) < t->subs.n ? t->subs.v[last + 1].lo : UINT64_MAX;
    for (long s = last; s >= 0 && t->sub_max_hi[s] > addr; s--) {
        const struct range *r = &t->subs.v[s];
        if (addr >= r->hi)
            continue;
        until = r->hi < until ? r->hi : until;
        if (found < 0) {
            found = s;
            continue;
        }
        const struct range *f = &t->subs.v[found];
        uint32_t rcu = t->scopes.v[r->scope].cu, fcu = t->scopes.v[f->scope].cu;
        if (rcu < fcu || (rcu == fcu && r->hi - r->lo < f->hi - f->lo))
            found = s;
    }
    *cu = -1;
    if (found < 0) {
        if (h) {
            h->scope = -1;
            h->frames = 1;
            h->scope_until = until;
        }
        return -1;
    }
    const struct range *sub = &t->subs.v[found];
    long best = (long)sub->scope;
    /* its unit, read from the subprogram's scope, which every address in it shares: an inlined
     * scope's own line is often cold, and the answer may not need it (the one before is shared) */
    *cu = (long)t->scopes.v[best].cu;
    uint32_t best_depth = 0;
    *frames = 1; /* a subprogram's scope has no parent */
    /* the deepest inline range around addr, the first of equals: searched backwards from the last
     * one starting at or before addr, only as far as an earlier one can still reach addr (a large
     * function has thousands, and a scan from its first one cost every address all of them) */
    const struct range *in = sub->in_n ? t->inlines.v + sub->in_first : NULL; /* (no inlines: v may be NULL) */
    long k = in ? LAST_LE(in, sub->in_n, addr, lo) : -1;
    if (in && (size_t)(k + 1) < sub->in_n)
        until = in[k + 1].lo < until ? in[k + 1].lo : until;
    for (; k >= 0 && in[k].reach > addr; k--)
        if (addr < in[k].hi) {
            until = in[k].hi < until ? in[k].hi : until;
            if (in[k].depth > best_depth || (in[k].depth == best_depth && best_depth > 0)) {
                best = (long)in[k].scope;
                best_depth = in[k].depth;
                *frames = in[k].chain;
            }
        }
    if (h) {
        h->scope = best;
        h->frames = *frames;
        h->scope_until = until;
    }
    return best;
}

/* Do two answers read the same? (Names are interned: equal strings are equal pointers.) */
static bool same_answer(const struct sym_location *a, const struct sym_location *b)
{
    return a->n_frames == b->n_frames && a->discriminator == b->discriminator && a->known == b->known &&
           a->symbol == b->symbol && a->symbol_start == b->symbol_start && a->outer == b->outer &&
           a->first.function == b->first.function && a->first.file == b->first.file && a->first.line == b->first.line;
}

/* A string's length as a frame keeps it: 0 when too long to keep (a reader then asks strlen). */
static uint16_t kept_len(const char *s)
{
    size_t n = strlen(s);
    return n <= UINT16_MAX ? (uint16_t)n : 0;
}

/* kept_len of s, from *last_len when s is *last (the same string: names are never changed). */
static uint16_t kept_len_again(const char *s, const char **last, uint16_t *last_len)
{
    if (s != *last) {
        *last = s;
        *last_len = kept_len(s);
    }
    return *last_len;
}

/* The callers' frames of every answer whose innermost scope is sc (n frames in all): frame i
 * names scope i of the chain outwards, at the call site of scope i - 1. Made once per scope.
 * NULL when out of memory. */
static const struct sym_frame *outer_frames(struct sym_table *t, long sc, uint32_t n)
{
    if ((size_t)sc >= t->load->outer_frames.n) {
        size_t had = t->load->outer_frames.n;
        if (!VEC_RESERVE(t->load->outer_frames, t->scopes.n - had))
            return NULL;
        memset(t->load->outer_frames.v + had, 0, (t->scopes.n - had) * sizeof *t->load->outer_frames.v);
        t->load->outer_frames.n = t->scopes.n;
    }
    if (t->load->outer_frames.v[sc])
        return t->load->outer_frames.v[sc];
    struct sym_frame *f = symt_alloc(&t->load->results, (n - 1) * sizeof *f);
    if (!f)
        return NULL;
    long s = sc;
    for (uint32_t i = 0; i + 1 < n; i++) {
        const struct scope *inner = &t->scopes.v[s];
        f[i].file = inner->call_file ? inner->call_file : "??";
        f[i].line = inner->call_line;
        s = inner->parent;
        f[i].function = t->scopes.v[s].name;
        f[i].function_len = kept_len(f[i].function); /* once per scope, for every answer in it */
        f[i].file_len = kept_len(f[i].file);
    }
    t->load->outer_frames.v[sc] = f;
    return f;
}

/* The answer for addr into loc, with its n frames; false when out of memory. */
static bool fill(struct sym_table *t, uint32_t addr, const struct func *fn, long sc, const struct row *row,
                 const char *file, uint32_t n, struct sym_location *loc)
{
    struct sym_frame *f = &loc->first;
    loc->n_frames = n;
    loc->outer = NULL;
    loc->symbol = fn && !t->load->names_later ? symt_func_name(t, fn) : NULL;
    loc->symbol_start = fn ? fn->lo : 0;
    loc->known = row != NULL || sc >= 0;
    f->file = file ? file : "??";
    /* no line row inside a known function: addr2line names the function's own file */
    if (!row && sc >= 0 && t->scopes.v[sc].has_decl_file && t->scopes.v[sc].cu < t->cu_names.n &&
        t->cu_names.v[t->scopes.v[sc].cu])
        f->file = t->cu_names.v[t->scopes.v[sc].cu];
    f->line = row ? row->line : 0;
    loc->discriminator = row ? row->discriminator : 0;
    if (sc < 0) {
        const struct func *near = func_before(t, addr);
        f->function = near ? symt_func_name(t, near) : "??";
        loc->known |= near != NULL;
        /* no unit covers addr (a linker's veneer, code built without -g): addr2line names the file
         * from the symbol table's STT_FILE before the symbol */
        const char *named = near && !row && !symt_unit_covers(t, addr) ? symt_file_before(t, near) : NULL;
        if (named)
            f->file = named;
        return true;
    }
    const struct scope *inner = &t->scopes.v[sc];
    f->function = inner->name;
    /* binutils: a C++ function DWARF names without a linkage name (a static one) takes the name of
     * the ELF symbol that starts where it starts, e.g. _ZN5motorL5clampElll */
    if (inner->plain_name && inner->parent < 0 && fn && fn->lo == inner->low)
        f->function = symt_func_name(t, fn);
    if (n > 1 && !(loc->outer = outer_frames(t, sc, n)))
        return false;
    return true;
}

/* Answers live in blocks of ANSWER_BLOCK: by_pc's slots hold 32-bit handles (1 + an answer's
 * number), half the pages and cache lines of pointers. 100,000 addresses in 6 of the bench ELF's
 * 120 units touch 1.3 MB of slots; sorted lookups and the answers themselves stay in address order.
 * Small blocks (7 KB): malloc serves them from the memory the units' reading freed, pages already
 * in, where blocks of 900 KB were fresh mappings, a page fault every 73 answers (those 100,000
 * addresses: 1,813 -> 1,698 faults; 100,000 random ones: 17,452 -> 17,300). */
enum { ANSWER_BLOCK_BITS = 7, ANSWER_BLOCK = 1 << ANSWER_BLOCK_BITS };

static struct sym_location *new_answer(struct sym_table *t, uint32_t *handle)
{
    struct sym_loader *l = t->load;
    size_t i = l->n_answers & (ANSWER_BLOCK - 1);
    if (i == 0) {
        struct sym_location *b = l->n_answers < UINT32_MAX - ANSWER_BLOCK ? malloc(sizeof *b * ANSWER_BLOCK) : NULL;
        if (!b || !VEC_PUSH(l->answer_blocks, b)) {
            free(b);
            return NULL;
        }
    }
    *handle = (uint32_t)(l->n_answers + 1);
    return &l->answer_blocks.v[l->n_answers++ >> ANSWER_BLOCK_BITS][i];
}

static const struct sym_location *answer_at(const struct sym_table *t, uint32_t handle)
{
    uint32_t k = handle - 1;
    return &t->load->answer_blocks.v[k >> ANSWER_BLOCK_BITS][k & (ANSWER_BLOCK - 1)];
}

/* The answer for addr, and in *handle its handle; NULL when out of memory. */
static struct sym_location *resolve(struct sym_table *t, uint32_t addr, struct hints *h, uint32_t *handle)
{
    const struct func *fn;
    uint32_t n = 1;
    long sc;
    const struct row *row;
    const struct seq *q;
    if (h) {
        if (h->loads != t->load->loads || addr < h->at) {
            hints_void(h);
            h->loads = t->load->loads;
        }
        h->at = addr;
        fn = addr < h->fn_until ? h->fn : func_for(t, addr, h);
        long cu;
        if (addr < h->scope_until) {
            sc = h->scope;
            n = h->frames;
            cu = h->scope_cu; /* (not read from the scope: its cache line is often cold) */
        } else {
            sc = scope_for(t, addr, h, &n, &cu);
            h->scope_cu = cu;
        }
        if (addr < h->seq_until && cu == h->seq_cu) {
            q = h->row_seq;
            row = line_again(h, addr);
        } else {
            row = line_for(t, addr, cu, h, &q);
        }
        if (h->last && sc >= 0 && sc == h->last_scope && fn == h->last_fn && n == h->last_frames &&
            (row == h->last_row || (row && h->last_row && row->line == h->last_row->line &&
                                    row->discriminator == h->last_row->discriminator &&
                                    row_file(t, q, row) == h->last_file)))
        {
            *handle = h->last_handle;
            return h->last; /* the same answer as the address before: shared, not copied */
        }
    } else {
        fn = func_for(t, addr, NULL);
        long cu;
        sc = scope_for(t, addr, NULL, &n, &cu);
        row = line_for(t, addr, cu, NULL, &q);
    }
    const char *file = row_file(t, q, row);
    /* built here first: when it reads as the answer before (the next line row often names the
     * same line), that one is shared and no memory is touched */
    struct sym_location local, *answer;
    if (!fill(t, addr, fn, sc, row, file, n, &local))
        return NULL;
    if (h && h->last && same_answer(&local, h->last)) {
        answer = h->last;
        *handle = h->last_handle;
    } else if (h && h->prev && same_answer(&local, h->prev)) {
        answer = h->prev;
        *handle = h->prev_handle;
    } else {
        if (!(answer = new_answer(t, handle)))
            return NULL;
        *answer = local;
        /* once per answer, not per print */
        answer->first.function_len = h ? kept_len_again(answer->first.function, &h->len_fn, &h->fn_len)
                                       : kept_len(answer->first.function);
        answer->first.file_len = h ? kept_len_again(answer->first.file, &h->len_file, &h->file_len)
                                   : kept_len(answer->first.file);
    }
    if (h && sc >= 0) {
        if (answer != h->last) {
            h->prev = h->last;
            h->prev_handle = h->last_handle;
        }
        h->last = answer;
        h->last_handle = *handle;
        h->last_fn = fn;
        h->last_row = row;
        h->last_file = file;
        h->last_scope = sc;
        h->last_frames = n;
    }
    return answer;
}

static const struct sym_location *lookup(struct sym_table *t, uint32_t addr, bool units_read, struct hints *h);
static uint32_t *by_pc_slot(struct sym_table *t, uint32_t addr);
static uint32_t *slot_of(const struct sym_table *t, uint32_t addr);

/* The slots are read only on pages written before: a read of an untouched page maps the zero page,
 * and the write that follows faults it in again (on the bench's 27 MB ELF, 81 of 1,876 faults of
 * 100,000 addresses in 6 of its 120 units, 1,736 of 19,169 of 100,000 random ones). */
enum { SLOTS_PAGE_BITS = 10 }; /* 1024 slots: 4 KB */

static bool slot_page_written(const struct sym_table *t, const uint32_t *slot)
{
    size_t page = (size_t)(slot - t->load->by_pc) >> SLOTS_PAGE_BITS;
    return t->load->by_pc_written[page / 64] >> (page % 64) & 1;
}

/* A slot's handle, 0: none yet. */
static uint32_t slot_get(const struct sym_table *t, const uint32_t *slot)
{
    return slot_page_written(t, slot) ? *slot : 0;
}

static void slot_set(struct sym_table *t, uint32_t *slot, uint32_t handle)
{
    size_t page = (size_t)(slot - t->load->by_pc) >> SLOTS_PAGE_BITS;
    t->load->by_pc_written[page / 64] |= 1ull << (page % 64);
    *slot = handle;
}

/* Two addresses of a batch this close: the halfwords between them are answered too, into their
 * slots. In such a run every search moves on by an entry or two, so an answer costs a fraction of
 * a lone one (100,000 addresses in 5 % of a large firmware's units: 8.0 -> 5.0 ms), and a profile
 * that samples two addresses this close samples those between them before long. Sparse addresses
 * are rarely this close: 100,000 over all of that firmware take as long as before. */
enum { ANSWER_GAP = 48 };

static void answer_between(struct sym_table *t, uint32_t a, uint32_t b, struct hints *h, long *unit_hint)
{
    if (b - a <= 2 || b - a > ANSWER_GAP || !slot_of(t, a) || !slot_of(t, b) || !symt_units_between(t, a, b, unit_hint))
        return;
    for (uint32_t x = a + 2; x < b; x += 2)
        lookup(t, x, true, h);
}

const struct sym_location *sym_lookup(struct sym_table *t, uint32_t addr)
{
    return lookup(t, addr & ~1u, false, NULL);
}

void sym_lookup_many(struct sym_table *t, const uint32_t *addrs, size_t n, const struct sym_location **out)
{
    struct pair {
        uint32_t addr, index;
    } *order = n <= UINT32_MAX ? malloc(n * sizeof *order) : NULL;
    uint32_t *distinct = order ? malloc(n * sizeof *distinct) : NULL;
    if (!distinct) {
        for (size_t i = 0; i < n; i++) /* no memory to sort: one by one */
            out[i] = sym_lookup(t, addrs[i]);
        free(order);
        return;
    }
    /* an address answered before is answered at once, from its slot: only the others are sorted
     * and looked up (after the first batches of a profile, most of its addresses) */
    size_t n_new = 0;
    uint32_t handle;
    for (size_t i = 0; i < n; i++) {
        uint32_t addr = addrs[i] & ~1u;
        const uint32_t *slot = slot_of(t, addr);
        if (slot && (handle = slot_get(t, slot)) != 0)
            out[i] = answer_at(t, handle);
        else
            order[n_new++] = (struct pair){addr, (uint32_t)i};
    }
    if (!symt_sort_by_u32(order, n_new, sizeof *order, offsetof(struct pair, addr))) {
        for (size_t k = 0; k < n_new; k++) /* no memory to sort: one by one */
            out[order[k].index] = sym_lookup(t, order[k].addr);
        n_new = 0;
    }
    size_t n_distinct = 0;
    for (size_t k = 0; k < n_new; k++)
        if (k == 0 || order[k].addr != order[k - 1].addr)
            distinct[n_distinct++] = order[k].addr;
    bool units_read = symt_require_many(t, distinct, n_distinct);
    const struct sym_location *loc = NULL;
    struct hints h = {.func = -1, .seq = -1, .sub = -1, .row = -1, .last_scope = -1};
    long unit_hint = -1;
    for (size_t k = 0; k < n_new; k++) {
        if (k > 0 && order[k].addr != order[k - 1].addr && units_read)
            answer_between(t, order[k - 1].addr, order[k].addr, &h, &unit_hint);
        if (k == 0 || order[k].addr != order[k - 1].addr)
            loc = lookup(t, order[k].addr, units_read, &h);
        out[order[k].index] = loc;
    }
    free(order);
    free(distinct);
}

/* Where an address's search starts in a hashed cache of cap slots (a power of two). */
static size_t cache_home(uint32_t addr, size_t cap)
{
    return (addr * 2654435761u) & (cap - 1);
}

/* Room in the hashed cache for one more address at under half load; false when out of memory. */
static bool cache_room(struct sym_table *t)
{
    if ((t->load->cache_used + 1) * 2 < t->load->cache_cap)
        return true;
    size_t cap = grow_capacity(t->load->cache_cap, (t->load->cache_used + 1) * 2, 4096);
    struct cache_slot *c = calloc(cap, sizeof *c);
    if (!c)
        return false;
    for (size_t i = 0; i < t->load->cache_cap; i++) {
        if (!t->load->cache[i].loc)
            continue;
        size_t j = cache_home(t->load->cache[i].addr, cap);
        while (c[j].loc)
            j = (j + 1) & (cap - 1);
        c[j] = t->load->cache[i];
    }
    free(t->load->cache);
    t->load->cache = c;
    t->load->cache_cap = cap;
    return true;
}

#define BY_PC_MAX (8u << 20) /* slots: code spans up to 16 MB (64 MB of address space, mostly untouched) */

/* The answer slot of an address, once the slots are made; else NULL. */
static uint32_t *slot_of(const struct sym_table *t, uint32_t addr)
{
    uint32_t i = (addr - t->load->by_pc_lo) >> 1;
    return t->load->by_pc && addr >= t->load->by_pc_lo && i < t->load->by_pc_n ? &t->load->by_pc[i] : NULL;
}

/* The answer slot of an address in the code range, or NULL (outside it, or no memory); the slots
 * are made at the first call. */
static uint32_t *by_pc_slot(struct sym_table *t, uint32_t addr)
{
    if (!t->load->by_pc_tried) {
        t->load->by_pc_tried = true;
        uint32_t lo, hi;
        if (sym_code_span(t, &lo, &hi) && hi > lo && (hi - lo) / 2 + 1 <= BY_PC_MAX) {
            t->load->by_pc_n = (hi - lo) / 2 + 1;
            t->load->by_pc = symt_pages(t->load->by_pc_n * sizeof *t->load->by_pc);
            t->load->by_pc_written = calloc(((t->load->by_pc_n >> SLOTS_PAGE_BITS) + 64) / 64, sizeof(uint64_t));
            if (!t->load->by_pc_written) {
                symt_pages_free(t->load->by_pc, t->load->by_pc_n * sizeof *t->load->by_pc);
                t->load->by_pc = NULL;
            }
            t->load->by_pc_lo = lo & ~1u;
        }
    }
    return slot_of(t, addr);
}

static const struct sym_location *lookup(struct sym_table *t, uint32_t addr, bool units_read, struct hints *h)
{
    uint32_t *direct = by_pc_slot(t, addr), handle;
    if (direct && (handle = slot_get(t, direct)) != 0)
        return answer_at(t, handle);
    if (!direct && !cache_room(t)) {
        if (!units_read)
            symt_require(t, addr);
        return resolve(t, addr, h, &handle);
    }
    size_t j = 0;
    if (!direct) {
        j = cache_home(addr, t->load->cache_cap);
        while (t->load->cache[j].loc) {
            if (t->load->cache[j].addr == addr)
                return t->load->cache[j].loc;
            j = (j + 1) & (t->load->cache_cap - 1);
        }
    }
    if (!units_read)
        symt_require(t, addr); /* the units that cover addr, read the first time */
    struct sym_location *loc = resolve(t, addr, h, &handle);
    if (loc && direct) {
        slot_set(t, direct, handle);
        t->load->by_pc_used++;
    } else if (loc) {
        t->load->cache[j].addr = addr;
        t->load->cache[j].loc = loc;
        t->load->cache_used++;
    }
    return loc;
}

/* ---- the file a function is defined in ------------------------------------------------------ */

/* path with its "." components and each "name/.." taken out, into buf; false when it does not fit. */
static bool plain_path_text(const char *path, char *buf, size_t len)
{
    size_t n = 0, at[128], depth = 0, ups = 0; /* at[k]: where component k starts (its '/' before it) */
    bool root = path[0] == '/';
    for (const char *p = path; *p;) {
        size_t c = strcspn(p, "/");
        bool dot = c == 1 && p[0] == '.', up = c == 2 && p[0] == '.' && p[1] == '.';
        if (up && depth > ups) {
            n = at[--depth];
        } else if (c && !dot && !(up && root)) { /* ("/.." is "/") */
            if (depth == sizeof at / sizeof *at || n + c + 2 > len)
                return false;
            at[depth++] = n;
            ups += up; /* a relative path's leading ".."s stay */
            if (n || root)
                buf[n++] = '/';
            memcpy(buf + n, p, c);
            n += c;
        }
        p += c;
        while (*p == '/')
            p++;
    }
    if (!n && root)
        buf[n++] = '/';
    buf[n] = '\0';
    return true;
}

/* An interned path as sym_function_file gives it: interned again without "." and "..", so that
 * the units that spell one file two ways give one pointer. */
static const char *plain_path(struct sym_table *t, const char *path)
{
    bool added;
    uintptr_t *slot = symt_ptrmap_slot(&t->load->plain_paths, path, &added);
    if (slot && !added)
        return (const char *)*slot;
    char buf[1024];
    const char *plain = plain_path_text(path, buf, sizeof buf) ? symt_intern(&t->strings, buf) : NULL;
    plain = plain ? plain : path;
    if (slot)
        *slot = (uintptr_t)plain;
    return plain;
}

/* The file function symbol fn is defined in: the file of its first address's outermost frame, by
 * that address's line row or by its inline chain's call site, never by a fallback (the unit's or
 * the symbol table's file name, which spell a file otherwise); unknown_name when neither says. */
static const char *symbol_file(struct sym_table *t, const struct func *fn)
{
    bool added;
    uintptr_t *slot = symt_ptrmap_slot(&t->load->symbol_files, fn, &added);
    if (slot && !added)
        return (const char *)*slot;
    uint32_t lo = fn->lo & ~1u, n;
    const struct sym_location *at = sym_lookup(t, lo); /* (its units read) */
    const char *file = NULL;
    if (at && at->known && at->n_frames > 1) {
        file = sym_frame_at(at, at->n_frames - 1)->file;
    } else if (at && at->known) {
        long cu;
        const struct seq *q;
        scope_for(t, lo, NULL, &n, &cu);
        const struct row *row = line_for(t, lo, cu, NULL, &q);
        file = row ? row_file(t, q, row) : NULL;
    }
    file = file && strcmp(file, "??") != 0 ? plain_path(t, file) : t->load->unknown_name;
    if (slot)
        *slot = (uintptr_t)file;
    return file;
}

const char *sym_function_file(struct sym_table *t, uint32_t addr)
{
    addr &= ~1u;
    const struct func *fn = symt_func_for(t, addr);
    fn = fn ? fn : func_before(t, addr); /* (what names an address past a symbol's end) */
    return fn && t->load->unknown_name ? symbol_file(t, fn) : "??";
}

const char *sym_exception_handler(struct sym_table *t, uint32_t n)
{
    if (n >= t->n_vectors || n < 2 || !t->vectors[n])
        return NULL;
    /* one handler behind several vectors is a default handler under weak aliases: its symbol
     * names any one of them, so no name is better than a wrong one */
    for (size_t k = 2; k < t->n_vectors; k++)
        if (k != n && t->vectors[k] == t->vectors[n])
            return NULL;
    const struct sym_location *l = sym_lookup(t, t->vectors[n] & ~1u);
    return l && l->known ? (l->symbol ? l->symbol : sym_frame_at(l, l->n_frames - 1)->function) : NULL;
}

int sym_function_named(struct sym_table *t, const char *name, uint32_t *lo, uint32_t *hi)
{
    symt_funcs_wait(t);
    symt_symbols_wait(t); /* the names (names_later: read now); compared where they are, none interned */
    for (size_t i = 0; i < t->funcs.n; i++) {
        const struct func *f = &t->funcs.v[i];
        if (f->name && strcmp(f->name, name) == 0) {
            *lo = f->lo;
            *hi = f->hi;
            return 1;
        }
    }
    return 0;
}

int sym_object(const struct sym_table *t, const char *name, uint32_t *addr, uint32_t *size)
{
    symt_symbols_wait(t);
    for (size_t i = 0; i < t->objects.n; i++)
        if (strcmp(t->objects.v[i].name, name) == 0) {
            *addr = t->objects.v[i].lo;
            *size = t->objects.v[i].hi - t->objects.v[i].lo;
            return 1;
        }
    return 0;
}

const char *sym_object_at(const struct sym_table *t, uint32_t addr, uint32_t *offset)
{
    symt_symbols_wait(t);
    long i = LAST_LE(t->objects.v, t->objects.n, addr, lo); /* a search: it labels rows every redraw */
    if (i < 0 || addr >= t->objects.v[i].hi)
        return NULL;
    *offset = addr - t->objects.v[i].lo;
    return t->objects.v[i].name;
}

long sym_task_name_offset(struct sym_table *t, const char *var, const char **member)
{
    static const char *const names[] = {"pcTaskName", "name", "task_name"};
    struct raw_dwarf *d = t->load->src.raw;
    return d ? raw_pointee_member(d, var, names, sizeof names / sizeof names[0], member) : -1;
}

int sym_object_is_scalar(struct sym_table *t, const char *var)
{
    return t->load->src.raw ? raw_variable_is_scalar(t->load->src.raw, var) : -1;
}

int sym_is_arm(const struct sym_table *t, uint32_t addr)
{
    symt_symbols_wait(t);
    long i = LAST_LE(t->modes.v, t->modes.n, addr & ~1u, addr);
    return i >= 0 && t->modes.v[i].mode == MODE_ARM;
}
