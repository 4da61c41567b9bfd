/* lcov's tracefile (geninfo(1) "TRACEFILE FORMAT"): per source file an SF record with its
 * functions (FN, FNDA, FNF, FNH) and lines (DA, LF, LH). Counts are gathered per line and per
 * function, sorted by file, then written. */
#include "lcov.h"

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
    bool failed;
};

static void add_hit(struct lc *lc, size_t file, size_t function, uint32_t line, double samples)
{
    if (file == SIZE_MAX) {
        lc->failed = true;
        return;
    }
    if (lc->n == lc->cap) {
        size_t cap = lc->cap ? lc->cap * 2 : 1024;
        struct hit *v = realloc(lc->hits, cap * sizeof *v);
        if (!v) {
            lc->failed = true;
            return;
        }
        lc->hits = v;
        lc->cap = cap;
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
    const char *name = lc->demangle && lc->syms ? sym_demangle(lc->syms, f->function) : f->function;
    size_t fn = clean_id(lc->functions, name);
    if (fn == SIZE_MAX) {
        lc->failed = true;
        return;
    }
    uint32_t start = f->inlined ? 0 : frames_start_line(lc->syms, s->pc, f->function);
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
    size_t n_lines = 0;
    while (i < n) {
        size_t j = i;
        double samples = 0;
        for (; j < n && h[j].line == h[i].line; j++)
            samples += h[j].samples;
        fprintf(out, "DA:%u,%lld\n", h[i].line, (long long)whole_next(lines, samples));
        n_lines++;
        i = j;
    }
    fprintf(out, "LF:%zu\nLH:%zu\nend_of_record\n", n_lines, n_lines);
}

int lcov_write(FILE *out, struct prof *p, bool demangle, char *err, size_t errlen)
{
    struct lc lc = {.syms = prof_symbols(p), .demangle = demangle};
    lc.files = intern_new();
    lc.functions = intern_new();
    if (lc.files && lc.functions)
        prof_each_sample(p, add_sample, &lc);
    int rc = 0;
    if (!lc.files || !lc.functions || lc.failed) {
        snprintf(err, errlen, "lcov: out of memory");
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
    return rc;
}
