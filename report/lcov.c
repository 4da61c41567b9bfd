/* lcov's tracefile (geninfo(1) "TRACEFILE FORMAT"): per source file an SF record with its
 * functions (FN, FNDA, FNF, FNH) and lines (DA, LF, LH). Counts are gathered per line and per
 * function, sorted by file, then written. Every line with code in a sampled function gets a DA
 * record, 0 where no sample fell, so a reader's line summary means "lines sampled" (with only
 * the sampled lines it read 100 % everywhere). */
#include "lcov.h"

#include "../base/grow.h"

#include "frames.h"
#include "intern.h"
#include "whole.h"

#include "../profile/escape.h"

#include <stdlib.h>
#include <string.h>

struct hit {        /* samples on a line (function == SIZE_MAX) or in a function */
    size_t file;
    size_t function; /* interned name */
    uint32_t line;   /* the line, or the function's first line */
    double samples;
};

struct lc {
    struct sym_table *syms;
    bool demangle;
    struct intern *files, *functions;
    struct hit *hits;
    size_t n, cap;
    struct frame frames[FRAMES_MAX];
    uint32_t *ranges; /* the sampled functions' [lo, hi) pairs, as found */
    size_t n_ranges, ranges_cap;
    bool failed;
};

static void add_hit(struct lc *lc, size_t file, size_t function, uint32_t line, double samples)
{
    if (file == SIZE_MAX) {
        lc->failed = true;
        return;
    }
    if (!grow_array((void **)&lc->hits, &lc->cap, lc->n + 1, sizeof *lc->hits, 1024)) {
        lc->failed = true;
        return;
    }
    lc->hits[lc->n++] = (struct hit){file, function, line, samples};
}

/* A name or path on one line of the tracefile: control bytes and invalid UTF-8 as \xNN. */
static size_t clean_id(struct intern *t, const char *s)
{
    char buf[1024];
    esc_text(buf, sizeof buf, s, NULL);
    return intern_id(t, buf);
}

/* Keeps the ELF function around pc (once: the last one found is checked first, samples of a
 * function come together often; duplicates are dropped when the ranges are walked). */
static void add_range(struct lc *lc, uint32_t pc)
{
    uint32_t lo, hi;
    if (!lc->syms || !sym_function_from(lc->syms, pc, &lo, &hi) || lo > pc || pc >= hi)
        return;
    if (lc->n_ranges && lc->ranges[2 * lc->n_ranges - 2] == lo)
        return;
    if (!grow_array((void **)&lc->ranges, &lc->ranges_cap, lc->n_ranges + 1, 2 * sizeof *lc->ranges, 256)) {
        lc->failed = true; /* (two words a range: lo, hi) */
        return;
    }
    lc->ranges[2 * lc->n_ranges] = lo;
    lc->ranges[2 * lc->n_ranges + 1] = hi;
    lc->n_ranges++;
}

static int cmp_range(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A line record of 0 samples for each line with code in the sampled functions (by the innermost
 * frame at each halfword, as samples are placed). */
static void add_unsampled_lines(struct lc *lc)
{
    if (lc->n_ranges)
        qsort(lc->ranges, lc->n_ranges, 2 * sizeof *lc->ranges, cmp_range);
    for (size_t r = 0; r < lc->n_ranges && !lc->failed; r++) {
        if (r && lc->ranges[2 * r] == lc->ranges[2 * r - 2])
            continue;
        uint32_t prev_line = 0;
        const char *prev_file = NULL;
        for (uint32_t a = lc->ranges[2 * r]; a < lc->ranges[2 * r + 1] && a >= lc->ranges[2 * r]; a += 2) {
            const struct sym_location *loc = sym_lookup(lc->syms, a);
            const struct sym_frame *f = loc && loc->n_frames ? sym_frame_at(loc, 0) : NULL;
            if (!f || !f->file || strcmp(f->file, "??") == 0 || !f->line ||
                (f->line == prev_line && f->file == prev_file))
                continue;
            prev_line = f->line;
            prev_file = f->file;
            add_hit(lc, clean_id(lc->files, f->file), SIZE_MAX, f->line, 0);
        }
    }
}

static void add_sample(void *ctx, const struct prof_sample *s)
{
    struct lc *lc = ctx;
    struct prof_sample pc_only = *s; /* the innermost frame is all lcov shows */
    pc_only.n_callers = 0;
    size_t n = frames_of(lc->syms, &pc_only, lc->frames, FRAMES_MAX);
    const struct frame *f = &lc->frames[0];
    if (!n || !f->function || !f->file || strcmp(f->file, "??") == 0 || !f->line)
        return;
    size_t file = clean_id(lc->files, f->file);
    const char *name = lc->syms ? sym_shown_name(lc->syms, f->function, lc->demangle) : f->function;
    size_t fn = clean_id(lc->functions, name);
    if (fn == SIZE_MAX) {
        lc->failed = true;
        return;
    }
    uint32_t start = f->inlined ? 0 : frames_start_line(lc->syms, s->pc, f->function);
    add_range(lc, s->pc);
    add_hit(lc, file, SIZE_MAX, f->line, s->count);
    add_hit(lc, file, fn, start ? start : f->line, s->count);
}

static int cmp_hit(const void *a, const void *b)
{
    const struct hit *x = a, *y = b;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->function != y->function)
        return x->function < y->function ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* One file's record: hits[0..n) are its functions (sorted by name number), then its lines. */
static void write_file(FILE *out, struct lc *lc, struct hit *h, size_t n, struct whole *lines, struct whole *fns)
{
    fprintf(out, "SF:%s\n", intern_get(lc->files, h[0].file));
    size_t i = 0, n_fn = 0;
    while (i < n && h[i].function != SIZE_MAX) { /* a function: its first line is the lowest given */
        size_t j = i;
        double samples = 0;
        for (; j < n && h[j].function == h[i].function; j++)
            samples += h[j].samples;
        const char *name = intern_get(lc->functions, h[i].function);
        fprintf(out, "FN:%u,%s\nFNDA:%lld,%s\n", h[i].line, name, (long long)whole_next(fns, samples), name);
        n_fn++;
        i = j;
    }
    fprintf(out, "FNF:%zu\nFNH:%zu\n", n_fn, n_fn);
    size_t n_lines = 0, n_hit = 0;
    while (i < n) {
        size_t j = i;
        double samples = 0;
        for (; j < n && h[j].line == h[i].line; j++)
            samples += h[j].samples;
        long long count = (long long)whole_next(lines, samples);
        fprintf(out, "DA:%u,%lld\n", h[i].line, count);
        n_lines++;
        n_hit += count > 0;
        i = j;
    }
    fprintf(out, "LF:%zu\nLH:%zu\nend_of_record\n", n_lines, n_hit);
}

int lcov_write(FILE *out, struct prof *p, const char *elf, bool demangle, char *err, size_t errlen)
{
    struct lc lc = {.syms = prof_symbols(p), .demangle = demangle};
    lc.files = intern_new();
    lc.functions = intern_new();
    if (lc.files && lc.functions) {
        prof_each_place(p, add_sample, &lc); /* every sample: lcov shows no callers */
        add_unsampled_lines(&lc);
    }
    int rc = 0;
    if (!lc.files || !lc.functions || lc.failed) {
        snprintf(err, errlen, "lcov: out of memory");
        rc = -1;
    } else if (!lc.n && prof_total(p) > 0) {
        snprintf(err, errlen, "-o lcov: none of the %.0f samples is on a source line of %s (no DWARF line "
                 "information: built without -g, or stripped?): no tracefile written", prof_total(p),
                 elf ? elf : "the ELF");
        rc = -1;
    } else {
        if (lc.n)
            qsort(lc.hits, lc.n, sizeof *lc.hits, cmp_hit);
        fputs("TN:cmprof\n", out);
        struct whole lines = {0}, fns = {0};
        for (size_t i = 0; i < lc.n;) {
            size_t j = i;
            while (j < lc.n && lc.hits[j].file == lc.hits[i].file)
                j++;
            write_file(out, &lc, lc.hits + i, j - i, &lines, &fns);
            i = j;
        }
    }
    intern_free(lc.files);
    intern_free(lc.functions);
    free(lc.hits);
    free(lc.ranges);
    return rc;
}
