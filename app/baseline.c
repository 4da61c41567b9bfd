/* The baseline report for --diff (see baseline.h): a recursive-descent JSON reader, bounded in
 * depth and length, that keeps "total", "group" and the rows' names and sample counts. */
#include "baseline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define MAX_BYTES (256u << 20)

struct reader {
    const char *s, *end, *start;
    const char *error; /* the first thing that went wrong, at pos */
    const char *pos;
    int depth;
};

static void fail(struct reader *r, const char *what)
{
    if (!r->error) {
        r->error = what;
        r->pos = r->s;
    }
}

static void blank(struct reader *r)
{
    while (r->s < r->end && (*r->s == ' ' || *r->s == '\n' || *r->s == '\r' || *r->s == '\t'))
        r->s++;
}

static bool eat(struct reader *r, char c)
{
    blank(r);
    if (r->s < r->end && *r->s == c) {
        r->s++;
        return true;
    }
    return false;
}

/* A string into out (cap bytes, NUL-terminated; longer ones are cut): escapes decoded, \u as '?'
 * outside ASCII. */
static bool string(struct reader *r, char *out, size_t cap)
{
    size_t n = 0;
    if (!eat(r, '"')) {
        fail(r, "a string expected");
        return false;
    }
    while (r->s < r->end && *r->s != '"') {
        char c = *r->s++;
        if ((unsigned char)c < 0x20) {
            fail(r, "a control character in a string");
            return false;
        }
        if (c == '\\') {
            if (r->s >= r->end) {
                fail(r, "a string cut short");
                return false;
            }
            char e = *r->s++;
            const char *simple = strchr("\"\\/bfnrt", e);
            if (simple && e) {
                c = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            } else if (e == 'u' && r->end - r->s >= 4) {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    char h = *r->s++;
                    int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) {
                        fail(r, "a bad \\u escape");
                        return false;
                    }
                    v = v << 4 | (unsigned)d;
                }
                c = v < 0x80 && v >= 0x20 ? (char)v : '?';
            } else {
                fail(r, "a bad escape");
                return false;
            }
        }
        if (out && n + 1 < cap)
            out[n++] = c;
    }
    if (!eat(r, '"')) {
        fail(r, "a string without its end");
        return false;
    }
    if (out && cap)
        out[n] = '\0';
    return true;
}

static bool number(struct reader *r, double *out)
{
    blank(r);
    char buf[64];
    size_t n = 0;
    while (r->s < r->end && n + 1 < sizeof buf && strchr("+-0123456789.eE", *r->s) && *r->s)
        buf[n++] = *r->s++;
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (!n || *end || errno == ERANGE || !isfinite(v)) {
        fail(r, "a number expected");
        return false;
    }
    *out = v;
    return true;
}

static bool value(struct reader *r);

static bool skip_object(struct reader *r)
{
    if (!eat(r, '}')) {
        do {
            if (!string(r, NULL, 0) || !eat(r, ':')) {
                fail(r, "a member expected");
                return false;
            }
            if (!value(r))
                return false;
        } while (eat(r, ','));
        if (!eat(r, '}')) {
            fail(r, "'}' expected");
            return false;
        }
    }
    return true;
}

/* Any value, skipped. */
static bool value(struct reader *r)
{
    blank(r);
    if (r->s >= r->end) {
        fail(r, "the report ends too soon");
        return false;
    }
    if (++r->depth > MAX_DEPTH) {
        fail(r, "nested too deep");
        return false;
    }
    bool ok = true;
    char c = *r->s;
    if (c == '{') {
        r->s++;
        ok = skip_object(r);
    } else if (c == '[') {
        r->s++;
        if (!eat(r, ']')) {
            do
                ok = value(r);
            while (ok && eat(r, ','));
            if (ok && !eat(r, ']')) {
                fail(r, "']' expected");
                ok = false;
            }
        }
    } else if (c == '"') {
        ok = string(r, NULL, 0);
    } else if (r->end - r->s >= 4 && (!memcmp(r->s, "true", 4) || !memcmp(r->s, "null", 4))) {
        r->s += 4;
    } else if (r->end - r->s >= 5 && !memcmp(r->s, "false", 5)) {
        r->s += 5;
    } else {
        double d;
        ok = number(r, &d);
    }
    r->depth--;
    return ok;
}

/* One row object: its "name" and "samples". */
static bool row(struct reader *r, struct baseline *b)
{
    char name[512] = "", key[32];
    double samples = -1;
    if (!eat(r, '{')) {
        fail(r, "a row object expected");
        return false;
    }
    if (!eat(r, '}')) {
        do {
            if (!string(r, key, sizeof key) || !eat(r, ':'))
                return fail(r, "a member expected"), false;
            if (!strcmp(key, "name")) {
                if (!string(r, name, sizeof name))
                    return false;
            } else if (!strcmp(key, "samples")) {
                if (!number(r, &samples))
                    return false;
            } else if (!value(r)) {
                return false;
            }
        } while (eat(r, ','));
        if (!eat(r, '}'))
            return fail(r, "'}' expected"), false;
    }
    if (samples < 0)
        return fail(r, "a row without its samples"), false;
    struct baseline_row *rows = realloc(b->rows, (b->n + 1) * sizeof *rows);
    char *copy = strdup(name);
    if (!rows || !copy) {
        free(copy);
        if (rows)
            b->rows = rows;
        return fail(r, "out of memory"), false;
    }
    b->rows = rows;
    b->rows[b->n++] = (struct baseline_row){copy, samples};
    return true;
}

static int cmp_row(const void *a, const void *b)
{
    return strcmp(((const struct baseline_row *)a)->name, ((const struct baseline_row *)b)->name);
}

int baseline_load(const char *path, struct baseline *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "--diff %s: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *t = cap <= MAX_BYTES ? realloc(text, cap) : NULL;
            if (!t) {
                free(text);
                fclose(f);
                snprintf(err, errlen, "--diff %s: too large for a report", path);
                return -1;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (!got)
            break;
    }
    fclose(f);
    struct reader r = {text, text + len, text, NULL, NULL, 0};
    bool have_total = false, have_rows = false;
    if (!eat(&r, '{'))
        fail(&r, "not a JSON report (cmprof-top --batch -o json)");
    else if (!eat(&r, '}')) {
        do {
            char key[32];
            if (!string(&r, key, sizeof key) || !eat(&r, ':'))
                break;
            if (!strcmp(key, "total")) {
                have_total = number(&r, &b->total);
            } else if (!strcmp(key, "group")) {
                string(&r, b->group, sizeof b->group);
            } else if (!strcmp(key, "rows")) {
                if (!eat(&r, '[')) {
                    fail(&r, "rows: an array expected");
                    break;
                }
                have_rows = true;
                if (!eat(&r, ']')) {
                    do
                        if (!row(&r, b))
                            break;
                    while (eat(&r, ','));
                    if (!r.error && !eat(&r, ']'))
                        fail(&r, "']' expected");
                }
            } else {
                value(&r);
            }
        } while (!r.error && eat(&r, ','));
        if (!r.error && !eat(&r, '}'))
            fail(&r, "'}' expected");
    }
    if (!r.error && (!have_total || !have_rows || b->total <= 0))
        fail(&r, "no \"total\" and \"rows\": not a cmprof-top JSON report with samples");
    if (r.error) {
        snprintf(err, errlen, "--diff %s: %s, at byte offset %zu", path, r.error, (size_t)(r.pos - text));
        free(text);
        baseline_free(b);
        return -1;
    }
    free(text);
    if (b->n) /* no rows: rows is NULL, which qsort may not be given */
        qsort(b->rows, b->n, sizeof *b->rows, cmp_row);
    return 0;
}

void baseline_free(struct baseline *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->rows[i].name);
    free(b->rows);
    b->rows = NULL;
    b->n = 0;
}

double baseline_samples(const struct baseline *b, const char *name)
{
    struct baseline_row key = {(char *)name, 0};
    const struct baseline_row *r = b->n ? bsearch(&key, b->rows, b->n, sizeof *b->rows, cmp_row) : NULL;
    return r ? r->samples : 0;
}

/* The two-sided normal quantile for a tail probability: erfc(z / sqrt 2) = alpha, by bisection. */
static double z_for(double alpha)
{
    double lo = 0, hi = 40;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (erfc(mid / sqrt(2.0)) > alpha)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

struct baseline_delta baseline_compare(double k, double n, double kb, double nb, size_t rows)
{
    struct baseline_delta d = {0};
    double p = n > 0 ? k / n : 0, pb = nb > 0 ? kb / nb : 0;
    d.base_share = pb;
    d.delta = p - pb;
    double pooled = n + nb > 0 ? (k + kb) / (n + nb) : 0;
    double se = sqrt(pooled * (1 - pooled) * ((n > 0 ? 1 / n : 0) + (nb > 0 ? 1 / nb : 0)));
    d.z = se > 0 ? d.delta / se : 0;
    d.significant = se > 0 && fabs(d.z) > z_for(0.05 / (double)(rows ? rows : 1));
    return d;
}
