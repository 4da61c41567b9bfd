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

static bool symbol_names = true;

void sym_set_symbol_names(int on)
{
    symbol_names = on != 0;
}

static bool mapped_reads = false;

void sym_set_mapped_reads(int on)
{
    mapped_reads = on != 0;
}

static bool fast_reader = true;

void sym_set_fast_reader(int on)
{
    fast_reader = on != 0;
}

/* The unit index through libdwarf in this process (t->load->src.reader); false when out of memory. */
static bool index_in_process(struct sym_table *t, const char *path)
{
    t->load->src.reader = ldw_open(path, &t->load->has_dwarf, t->load->dwarf_error, sizeof t->load->dwarf_error);
    if (!t->load->src.reader)
        return true;
    struct sym_stage ix = {0};
    bool ok = ldw_index(t->load->src.reader, &ix, &t->strings);
    if (ok)
        symt_stage_take_index(t, &ix);
    if (ok && ix.dwarf_error[0])
        memcpy(t->load->dwarf_error, ix.dwarf_error, sizeof t->load->dwarf_error);
    symt_stage_free(&ix);
    return ok;
}

/* The fast reader, when the file suits it and it can index every unit (libdwarf is started later,
 * for the units it leaves): t->load->src.raw and its index, else t->load->src.raw stays NULL. */
static void index_fast(struct sym_table *t, const char *path)
{
    if (!(t->load->src.raw = mapped_reads ? raw_open_mapped(path) : raw_open(path)))
        return;
    struct sym_stage ix = {0};
    if (raw_index(t->load->src.raw, t->sections.v, t->sections.n, &ix, &t->strings)) {
        symt_stage_take_index(t, &ix);
        t->load->has_dwarf = true;
    } else {
        raw_close(t->load->src.raw); /* libdwarf's index, here or from the child, takes its place */
        t->load->src.raw = NULL;
    }
    symt_stage_free(&ix);
}

/* The unit index, from the reader chosen for the file (t->load->src.raw, the child, or t->load->src.reader);
 * false when out of memory. */
static bool index_units(struct sym_table *t, const char *path)
{
    t->load->src.isolated = isolation;
    if (!t->load->dwarf_skip && fast_reader)
        index_fast(t, path);
    if (t->load->src.raw)
        return true;
    symt_funcs_wait(t); /* (no thread while the DWARF child forks, nor beside libdwarf) */
    if (t->load->dwarf_skip || (isolation && isolate_start(t, path, true)))
        return true;
    t->load->src.isolated = false; /* no child possible: read here, unprotected */
    return index_in_process(t, path);
}

struct sym_table *sym_open(const char *path, char *err, size_t errlen)
{
    /* the table and its loader in one block: the loader lives as long as the table */
    struct opened {
        struct sym_table table;
        struct sym_loader loader;
    } *both = calloc(1, sizeof *both);
    struct sym_table *t = both ? &both->table : NULL;
    bool opened = false, ok = false;
    if (t) {
        t->load = &both->loader;
        t->load->src.sock = -1;
        t->code_fd = -1;
        t->load->names_later = !symbol_names;
        opened = symt_elf_open(t, path, err, errlen); /* (its own reason when it fails) */
        uint32_t code_lo, code_hi; /* a large firmware's answers: tens of thousands, in one 2 MB page */
        t->load->results.huge = opened && sym_code_span(t, &code_lo, &code_hi) && code_hi - code_lo >= (1u << 20);
        ok = opened && (t->load->path = strdup(path)) != NULL && index_units(t, path) && symt_units_ready(t);
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
    symt_arena_free(&t->load->results);
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
    free(t->load->outer_frames.v);
    free(t->load->file_marks.v);
    free(t->subs.v);
    free(t->inlines.v);
    free(t->cu_names.v);
    free(t->sub_max_hi);
    free(t->seq_max_hi);
    free(t->load->unit_state);
    free(t->unit_ranges.v);
    free(t->unit_hdrs.v);
    raw_close(t->load->src.raw);
    free(t->unit_max_hi);
    free(t->load->range_state);
    free(t->load->unit_left);
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
    free(t->load->cache);
    symt_pages_free(t->load->by_pc, t->load->by_pc_n * sizeof *t->load->by_pc);
    free(t->load->by_pc_written);
    for (size_t i = 0; i < t->load->answer_blocks.n; i++)
        free(t->load->answer_blocks.v[i]);
    free(t->load->answer_blocks.v);
    free(t->load->strtab);
    symt_ptrmap_free(&t->load->demangled);
    symt_ptrmap_free(&t->load->shown[0]);
    symt_ptrmap_free(&t->load->shown[1]);
    symt_ptrmap_free(&t->load->symbol_files);
    symt_ptrmap_free(&t->load->plain_paths);
    symt_ptrmap_free(&t->load->name_files);
    free(t->load->by_name);
    free(t->load->clones);
    ldw_close(t->load->src.reader);
    isolate_end(t);
    free(t->vectors);
    free(t->load->path);
    free(t); /* (and its loader: one block) */
}

void sym_end(struct sym_table *t)
{
    if (!t)
        return;
    symt_symbols_free(t); /* (its thread joined, if one runs) */
    isolate_end(t);
}

const char *sym_warning(const struct sym_table *t)
{
    symt_funcs_wait(t);
    return t->load->warning;
}

void sym_get_stats(const struct sym_table *t, struct sym_stats *out)
{
    symt_symbols_wait(t);
    out->functions = t->funcs.n;
    out->line_rows = t->n_rows;
    out->scopes = t->scopes.n;
    out->cache_entries = t->load->cache_used + t->load->by_pc_used;
    out->units = t->n_units;
    out->units_loaded = t->load->units_loaded;
    out->units_fast = t->load->units_fast;
    out->bytes = t->strings.arena.bytes + t->load->results.bytes + t->funcs.cap * sizeof *t->funcs.v +
                 t->row_bytes + t->seqs.cap * sizeof *t->seqs.v +
                 t->scopes.cap * sizeof *t->scopes.v + t->load->outer_frames.cap * sizeof *t->load->outer_frames.v +
                 t->subs.cap * sizeof *t->subs.v +
                 t->inlines.cap * sizeof *t->inlines.v + t->load->cache_cap * sizeof *t->load->cache +
                 t->unit_ranges.cap * sizeof *t->unit_ranges.v;
}
