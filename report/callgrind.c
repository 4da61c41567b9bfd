/* Callgrind's format (valgrind's docs/callgrind-format): a header, then per function a block of
 * "line cost" rows and its calls. Costs are gathered per (function, line) and per call edge,
 * sorted, then written; names are compressed as "(id) name" the first time, "(id)" after. */
#include "callgrind.h"

#include "../base/grow.h"

#include "frames.h"
#include "intern.h"
#include "whole.h"

#include "../profile/escape.h"

#include <stdlib.h>
#include <string.h>

struct cost {   /* a self cost (callee == SIZE_MAX) or a call edge's inclusive cost */
    size_t fn;  /* function: interned "name\x1ffile" */
    uint32_t line;
    size_t callee;
    double samples;
};

struct cg {
    struct sym_table *syms;
    bool demangle;
    struct intern *functions, *files;
    struct cost *costs;
    size_t n, cap;
    struct frame frames[FRAMES_MAX];
    bool failed;
};

static size_t function_id(struct cg *cg, const struct frame *f)
{
    char key[1200], hex[12];
    const char *name = f->function;
    if (!name) {
        snprintf(hex, sizeof hex, "0x%08x", (unsigned)f->addr);
        name = hex;
    } else if (cg->syms) {
        name = sym_shown_name(cg->syms, name, cg->demangle);
    }
    char clean_name[900], clean_file[290]; /* one line per record, whatever the ELF says */
    esc_text(clean_name, sizeof clean_name, name, NULL);
    esc_text(clean_file, sizeof clean_file, f->file && *f->file ? f->file : "??", NULL);
    snprintf(key, sizeof key, "%s\x1f%s", clean_name, clean_file);
    size_t id = intern_id(cg->functions, key);
    cg->failed |= id == SIZE_MAX;
    return id;
}

static void add_cost(struct cg *cg, size_t fn, uint32_t line, size_t callee, double samples)
{
    if (fn == SIZE_MAX) {
        cg->failed = true;
        return;
    }
    if (!grow_array((void **)&cg->costs, &cg->cap, cg->n + 1, sizeof *cg->costs, 1024)) {
        cg->failed = true;
        return;
    }
    cg->costs[cg->n++] = (struct cost){fn, line, callee, samples};
}

static void add_sample(void *ctx, const struct prof_sample *s)
{
    struct cg *cg = ctx;
    size_t n = frames_of(cg->syms, s, cg->frames, FRAMES_MAX);
    size_t inner = function_id(cg, &cg->frames[0]);
    add_cost(cg, inner, cg->frames[0].line, SIZE_MAX, s->count);
    for (size_t k = 1; k < n; k++) { /* frame k called frame k - 1 at its line */
        size_t caller = function_id(cg, &cg->frames[k]);
        if (caller == SIZE_MAX || inner == SIZE_MAX) {
            cg->failed = true;
            return;
        }
        add_cost(cg, caller, cg->frames[k].line, inner, s->count);
        inner = caller;
    }
}

static int cmp_cost(const void *a, const void *b)
{
    const struct cost *x = a, *y = b;
    if (x->fn != y->fn)
        return x->fn < y->fn ? -1 : 1;
    if ((x->callee == SIZE_MAX) != (y->callee == SIZE_MAX)) /* self costs first */
        return x->callee == SIZE_MAX ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return (x->callee > y->callee) - (x->callee < y->callee);
}

/* "fl=(3) name" the first time a file is named, "fl=(3)" after. */
static void name_ref(FILE *out, const char *what, struct intern *seen, size_t id, const char *name, size_t len)
{
    char key[24];
    snprintf(key, sizeof key, "%zu", id);
    size_t before = intern_count(seen);
    size_t at = intern_id(seen, key);
    if (at == before) /* new (or out of memory: then the name is repeated, which is still valid) */
        fprintf(out, "%s=(%zu) %.*s\n", what, id + 1, (int)len, name);
    else
        fprintf(out, "%s=(%zu)\n", what, id + 1);
}

static void function_ref(FILE *out, struct cg *cg, struct intern *seen_fn, struct intern *seen_fl, size_t fn,
                         bool callee)
{
    const char *key = intern_get(cg->functions, fn), *sep = strchr(key, '\x1f');
    size_t file = intern_id(cg->files, sep + 1);
    if (file != SIZE_MAX)
        name_ref(out, callee ? "cfi" : "fl", seen_fl, file, sep + 1, strlen(sep + 1));
    name_ref(out, callee ? "cfn" : "fn", seen_fn, fn, key, (size_t)(sep - key));
}

static void write_costs(FILE *out, struct cg *cg)
{
    struct intern *seen_fn = intern_new(), *seen_fl = intern_new();
    if (!seen_fn || !seen_fl) {
        cg->failed = true;
    } else {
        struct whole self = {0};
        for (size_t i = 0; i < cg->n;) {
            size_t fn = cg->costs[i].fn;
            fputc('\n', out);
            function_ref(out, cg, seen_fn, seen_fl, fn, false);
            if (cg->costs[i].callee != SIZE_MAX) /* calls only: a zero line, so that annotators see the file */
                fprintf(out, "%u 0\n", cg->costs[i].line);
            for (; i < cg->n && cg->costs[i].fn == fn; i++) {
                struct cost c = cg->costs[i];
                while (i + 1 < cg->n && cg->costs[i + 1].fn == fn && cg->costs[i + 1].line == c.line &&
                       cg->costs[i + 1].callee == c.callee)
                    c.samples += cg->costs[++i].samples; /* the same line, or the same call there */
                if (c.callee == SIZE_MAX) {
                    fprintf(out, "%u %lld\n", c.line, (long long)whole_next(&self, c.samples));
                    continue;
                }
                long long n = llround(c.samples);
                function_ref(out, cg, seen_fn, seen_fl, c.callee, true);
                fprintf(out, "calls=%lld 0\n%u %lld\n", n, c.line, n);
            }
        }
        fprintf(out, "\ntotals: %lld\n", (long long)self.given);
    }
    intern_free(seen_fn);
    intern_free(seen_fl);
}

int callgrind_write(FILE *out, struct prof *p, const char *elf, bool demangle, char *err, size_t errlen)
{
    struct cg cg = {.syms = prof_symbols(p), .demangle = demangle};
    cg.functions = intern_new();
    cg.files = intern_new();
    if (cg.functions && cg.files) {
        prof_each_sample(p, add_sample, &cg);
        if (cg.n)
            qsort(cg.costs, cg.n, sizeof *cg.costs, cmp_cost);
    }
    int rc = 0;
    if (!cg.functions || !cg.files || cg.failed) {
        snprintf(err, errlen, "callgrind: out of memory");
        rc = -1;
    } else {
        fprintf(out, "# callgrind format\nversion: 1\ncreator: cmprof-top\ncmd: %s\npositions: line\nevents: Samples\n",
                elf ? elf : "");
        write_costs(out, &cg);
        if (cg.failed) {
            snprintf(err, errlen, "callgrind: out of memory");
            rc = -1;
        }
    }
    intern_free(cg.functions);
    intern_free(cg.files);
    free(cg.costs);
    return rc;
}
