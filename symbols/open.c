/* Opening and closing a symbol table: the top of symbols/. The ELF part first (elf.c, with the
 * symbol table on a thread), then the choice of DWARF reader for the unit index: the fast reader
 * when it can index every unit, else libdwarf in a child process, else libdwarf here. Units are
 * read later, on demand (units.c). */
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool isolation = true;

void sym_set_isolation(int on)
{
    isolation = on != 0;
}

static bool fast_reader = true;

void sym_set_fast_reader(int on)
{
    fast_reader = on != 0;
}

/* The unit index through libdwarf in this process (t->src.reader); false when out of memory. */
static bool index_in_process(struct sym_table *t, const char *path)
{
    t->src.reader = ldw_open(path, &t->has_dwarf, t->dwarf_error, sizeof t->dwarf_error);
    if (!t->src.reader)
        return true;
    struct sym_stage ix = {0};
    bool ok = ldw_index(t->src.reader, &ix, &t->strings);
    if (ok)
        symt_stage_take_index(t, &ix);
    if (ok && ix.dwarf_error[0])
        memcpy(t->dwarf_error, ix.dwarf_error, sizeof t->dwarf_error);
    symt_stage_free(&ix);
    return ok;
}

/* The fast reader, when the file suits it and it can index every unit (libdwarf is started later,
 * for the units it leaves): t->src.raw and its index, else t->src.raw stays NULL. */
static void index_fast(struct sym_table *t, const char *path)
{
    if (!(t->src.raw = raw_open(path)))
        return;
    struct sym_stage ix = {0};
    if (raw_index(t->src.raw, t->sections.v, t->sections.n, &ix, &t->strings)) {
        symt_stage_take_index(t, &ix);
        t->has_dwarf = true;
    } else {
        raw_close(t->src.raw); /* libdwarf's index, here or from the child, takes its place */
        t->src.raw = NULL;
    }
    symt_stage_free(&ix);
}

/* The unit index, from the reader chosen for the file (t->src.raw, the child, or t->src.reader);
 * false when out of memory. */
static bool index_units(struct sym_table *t, const char *path)
{
    t->src.isolated = isolation;
    if (!t->dwarf_skip && fast_reader)
        index_fast(t, path);
    if (t->src.raw)
        return true;
    symt_symbols_wait(t); /* (no thread while the DWARF child forks, nor beside libdwarf) */
    if (t->dwarf_skip || (isolation && isolate_start(t, path, true)))
        return true;
    t->src.isolated = false; /* no child possible: read here, unprotected */
    return index_in_process(t, path);
}

struct sym_table *sym_open(const char *path, char *err, size_t errlen)
{
    struct sym_table *t = calloc(1, sizeof *t);
    bool opened = false, ok = false;
    if (t) {
        t->src.sock = -1;
        t->code_fd = -1;
        opened = symt_elf_open(t, path, err, errlen); /* (its own reason when it fails) */
        uint32_t code_lo, code_hi; /* a large firmware's answers: tens of thousands, in one 2 MB page */
        t->results.huge = opened && sym_code_span(t, &code_lo, &code_hi) && code_hi - code_lo >= (1u << 20);
        ok = opened && (t->path = strdup(path)) != NULL && index_units(t, path) && symt_units_ready(t);
    }
    if (!ok) {
        if ((!t || opened) && err && errlen)
            snprintf(err, errlen, "%s: out of memory while loading symbols", path);
        sym_close(t);
        return NULL;
    }
    if (symt_symbols_read(t))
        symt_set_warning(t); /* (else when the symbol table is in) */
    return t;
}

void sym_close(struct sym_table *t)
{
    if (!t)
        return;
    symt_symbols_free(t);
    symt_arena_free(&t->strings.arena);
    free(t->strings.slots);
    symt_arena_free(&t->results);
    free(t->funcs.v);
    if (t->labels.v != t->funcs.v) /* (else one list serves both) */
        free(t->labels.v);
    free(t->objects.v);
    free(t->sections.v);
    free(t->modes.v);
    for (size_t i = 0; i < t->row_blocks.n; i++)
        free(t->row_blocks.v[i]);
    free(t->row_blocks.v);
    free(t->files.v);
    free(t->seqs.v);
    free(t->scopes.v);
    free(t->outer_frames.v);
    free(t->subs.v);
    free(t->inlines.v);
    free(t->cu_names.v);
    free(t->sub_max_hi);
    free(t->seq_max_hi);
    free(t->unit_state);
    free(t->unit_ranges.v);
    free(t->unit_hdrs.v);
    raw_close(t->src.raw);
    free(t->unit_max_hi);
    free(t->range_state);
    free(t->unit_left);
    for (size_t i = 0; i < t->code.n; i++) {
        free(t->code.v[i].bytes);
        free(t->code.v[i].have);
    }
    if (t->code_fd >= 0)
        close(t->code_fd);
    free(t->code.v);
    free(t->build_id);
    free(t->debug_frame);
    symt_frames_free(t);
    free(t->cache);
    symt_pages_free(t->by_pc, t->by_pc_n * sizeof *t->by_pc);
    free(t->strtab);
    symt_ptrmap_free(&t->demangled);
    symt_ptrmap_free(&t->shown[0]);
    symt_ptrmap_free(&t->shown[1]);
    free(t->clones);
    ldw_close(t->src.reader);
    isolate_end(t);
    free(t->vectors);
    free(t->path);
    free(t);
}

const char *sym_warning(const struct sym_table *t)
{
    symt_symbols_wait(t);
    return t->warning;
}

void sym_get_stats(const struct sym_table *t, struct sym_stats *out)
{
    symt_symbols_wait(t);
    out->functions = t->funcs.n;
    out->line_rows = t->n_rows;
    out->scopes = t->scopes.n;
    out->cache_entries = t->cache_used + t->by_pc_used;
    out->units = t->n_units;
    out->units_loaded = t->units_loaded;
    out->units_fast = t->units_fast;
    out->bytes = t->strings.arena.bytes + t->results.bytes + t->funcs.cap * sizeof *t->funcs.v +
                 t->row_bytes + t->seqs.cap * sizeof *t->seqs.v +
                 t->scopes.cap * sizeof *t->scopes.v + t->outer_frames.cap * sizeof *t->outer_frames.v +
                 t->subs.cap * sizeof *t->subs.v +
                 t->inlines.cap * sizeof *t->inlines.v + t->cache_cap * sizeof *t->cache +
                 t->unit_ranges.cap * sizeof *t->unit_ranges.v;
}
