/* The baseline report for --diff (see baseline.h): a recursive-descent JSON reader, bounded in
 * depth and length, that keeps "total", "group" and the rows' names and sample counts. */
#include "baseline.h"

#include "../base/bom.h"
#include "../base/grow.h"

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
    char detail[160]; /* an error's text when it carries numbers */
};

static void fail(struct reader *r, const char *what)
{
    if (!r->error) {
        r->error = what;
        r->pos = r->s;
    }
}

/* The same, where the thing that went wrong began. */
static void fail_at(struct reader *r, const char *what, const char *at)
{
    if (!r->error) {
        r->error = what;
        r->pos = at;
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

/* A \u escape's code point as UTF-8 into out (room for 4); '?' for NUL and lone surrogates. */
static size_t utf8(unsigned v, char *out)
{
    if (v == 0 || (v >= 0xD800 && v <= 0xDFFF)) {
        out[0] = '?';
        return 1;
    }
    if (v < 0x80) {
        out[0] = (char)v;
        return 1;
    }
    if (v < 0x800) {
        out[0] = (char)(0xC0 | v >> 6);
        out[1] = (char)(0x80 | (v & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | v >> 12);
    out[1] = (char)(0x80 | (v >> 6 & 0x3F));
    out[2] = (char)(0x80 | (v & 0x3F));
    return 3;
}

/* One escape after its backslash into e (up to 4 bytes); its length, or 0 (r has failed). */
static size_t escape(struct reader *r, char *e)
{
    if (r->s >= r->end)
        return fail(r, "a string cut short"), 0;
    char c = *r->s++;
    const char *simple = strchr("\"\\/bfnrt", c);
    if (simple && c) {
        e[0] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
        return 1;
    }
    if (c != 'u' || r->end - r->s < 4)
        return fail(r, "a bad escape"), 0;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char h = *r->s++;
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0)
            return fail(r, "a bad \\u escape"), 0;
        v = v << 4 | (unsigned)d;
    }
    return utf8(v, e);
}

/* A string into out (cap bytes, NUL-terminated; what does not fit is left out), escapes decoded;
 * out NULL: checked and skipped. */
static bool string(struct reader *r, char *out, size_t cap)
{
    size_t n = 0;
    if (!eat(r, '"')) {
        fail(r, "a string expected");
        return false;
    }
    while (r->s < r->end && *r->s != '"') {
        char e[4] = {*r->s++};
        size_t k = 1;
        if ((unsigned char)e[0] < 0x20) {
            fail(r, "a control character in a string");
            return false;
        }
        if (e[0] == '\\' && !(k = escape(r, e)))
            return false;
        for (size_t i = 0; out && i < k && n + 1 < cap; i++)
            out[n++] = e[i];
    }
    if (!eat(r, '"')) {
        fail(r, "a string without its end");
        return false;
    }
    if (out && cap)
        out[n] = '\0';
    return true;
}

/* A string of any length, whole, in memory the caller frees (NULL: r has failed). Decoded, a
 * string never takes more bytes than its JSON text. */
static char *string_dup(struct reader *r)
{
    blank(r);
    const char *at = r->s, *s = at + (at < r->end);
    while (s < r->end && *s != '"')
        s += *s == '\\' ? 2 : 1;
    size_t cap = (size_t)(s - at) + 1;
    char *out = malloc(cap);
    if (!out)
        return fail(r, "out of memory"), NULL;
    if (!string(r, out, cap)) {
        free(out);
        return NULL;
    }
    return out;
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

/* A sample count: a number from 0 to 2^53, where doubles still count every sample. */
static bool count(struct reader *r, double *out)
{
    blank(r);
    const char *at = r->s;
    if (!number(r, out))
        return false;
    if (*out < 0 || *out > 9007199254740992.0) {
        fail_at(r, "a sample count below 0 or past 2^53", at);
        return false;
    }
    return true;
}

/* One row object: its "name" and "samples". */
static bool row(struct reader *r, struct baseline *b)
{
    char *name = NULL, key[32];
    double samples = -1;
    const char *at = (blank(r), r->s);
    if (!eat(r, '{')) {
        fail(r, "a row object expected");
        return false;
    }
    if (!eat(r, '}')) {
        do {
            if (!string(r, key, sizeof key) || !eat(r, ':'))
                fail(r, "a member expected");
            else if (!strcmp(key, "name"))
                free(name), name = string_dup(r);
            else if (!strcmp(key, "samples"))
                count(r, &samples);
            else
                value(r);
        } while (!r->error && eat(r, ','));
        if (!r->error && !eat(r, '}'))
            fail(r, "'}' expected");
    }
    if (samples < 0)
        fail_at(r, "a row without its samples", at);
    struct baseline_row *rows = r->error ? NULL : realloc(b->rows, (b->n + 1) * sizeof *rows);
    char *copy = r->error ? NULL : name ? name : strdup("");
    if (!rows || !copy) {
        free(name);
        if (rows)
            b->rows = rows;
        return fail(r, "out of memory"), false;
    }
    b->rows = rows;
    b->rows[b->n++] = (struct baseline_row){copy, samples, (size_t)(at - r->start)};
    return true;
}

/* The "stream" object: the firmware's build-id, when it announced one. */
static void stream(struct reader *r, struct baseline *b)
{
    char key[32];
    if (!eat(r, '{')) {
        value(r);
        return;
    }
    if (eat(r, '}'))
        return;
    do {
        if (!string(r, key, sizeof key) || !eat(r, ':'))
            fail(r, "a member expected");
        else if (!strcmp(key, "build_id"))
            string(r, b->build_id, sizeof b->build_id);
        else
            value(r);
    } while (!r->error && eat(r, ','));
    if (!r->error && !eat(r, '}'))
        fail(r, "'}' expected");
}

static void rows(struct reader *r, struct baseline *b)
{
    if (!eat(r, '[')) {
        fail(r, "rows: an array expected");
        return;
    }
    if (eat(r, ']'))
        return;
    while (row(r, b) && eat(r, ','))
        ;
    if (!r->error && !eat(r, ']'))
        fail(r, "']' expected");
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct baseline_row *)a)->name, ((const struct baseline_row *)b)->name);
}

/* By name, then by place in the file: of two rows of one name the later is the one refused. */
static int cmp_row(const void *a, const void *b)
{
    const struct baseline_row *x = a, *y = b;
    int c = cmp_name(a, b);
    return c ? c : (x->offset > y->offset) - (x->offset < y->offset);
}

/* Only blanks may follow the report's closing brace. */
static void check_end(struct reader *r)
{
    blank(r);
    if (!r->error && r->s < r->end)
        fail(r, r->s[0] == '{' ? "a second report after the first (one report a file)"
                               : "data after the end of the report");
}

/* Sorts the rows by name; a name given twice is refused where its second row begins. */
static void sort_rows(struct reader *r, struct baseline *b)
{
    if (r->error || !b->n) /* no rows: rows is NULL, which qsort may not be given */
        return;
    qsort(b->rows, b->n, sizeof *b->rows, cmp_row);
    for (size_t i = 1; i < b->n; i++)
        if (strcmp(b->rows[i - 1].name, b->rows[i].name) == 0) {
            snprintf(r->detail, sizeof r->detail, "a second row named \"%.80s\" (a report has one row a name)",
                     b->rows[i].name);
            fail_at(r, r->detail, r->start + b->rows[i].offset);
            return;
        }
}

/* The whole file in memory (NULL with a reason in err). */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "--diff %s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        /* the capacity doubles from 64 KB, so it meets MAX_BYTES (a power of two) exactly: full there, too large */
        if (*len == cap && (cap >= MAX_BYTES || !grow_array((void **)&text, &cap, cap + 1, 1, 65536))) {
            free(text);
            fclose(f);
            snprintf(err, errlen, "--diff %s: too large for a report", path);
            return NULL;
        }
        size_t got = fread(text + *len, 1, cap - *len, f);
        *len += got;
        if (!got)
            break;
    }
    fclose(f);
    return text;
}

/* The report's members; *total_at: where "total"'s value is. */
static void report(struct reader *r, struct baseline *b, const char **total_at)
{
    bool have_total = false, have_rows = false;
    if (!eat(r, '{'))
        fail(r, "not a JSON report (cmprof-top --batch -o json)");
    else if (!eat(r, '}')) {
        do {
            char key[32];
            if (!string(r, key, sizeof key) || !eat(r, ':'))
                break;
            if (!strcmp(key, "total")) {
                *total_at = (blank(r), r->s);
                have_total = count(r, &b->total);
            } else if (!strcmp(key, "group")) {
                string(r, b->group, sizeof b->group);
            } else if (!strcmp(key, "stream")) {
                stream(r, b);
            } else if (!strcmp(key, "rows")) {
                have_rows = true;
                rows(r, b);
            } else if (!strcmp(key, "wrong_elf") && (blank(r), r->end - r->s >= 4 && !memcmp(r->s, "true", 4))) {
                fail(r, "its samples are not its ELF's program (\"wrong_elf\": true): its rows name the wrong "
                        "functions; write the baseline again with the ELF that firmware was built as");
            } else {
                value(r);
            }
        } while (!r->error && eat(r, ','));
        if (!r->error && !eat(r, '}'))
            fail(r, "'}' expected");
    }
    if (!r->error && have_total && have_rows && b->total <= 0)
        fail(r, "\"total\" is 0: a report of no samples cannot be a baseline");
    else if (!r->error && (!have_total || !have_rows))
        fail(r, "no \"total\" and \"rows\": not a cmprof-top JSON report with samples");
}

/* A report's rows cover every sample: their counts add up to the total (each is written to two
 * decimals at most, so within half a hundredth each). */
static void check_sum(struct reader *r, const struct baseline *b, const char *total_at)
{
    double sum = 0;
    for (size_t i = 0; i < b->n; i++)
        sum += b->rows[i].samples;
    if (r->error || fabs(sum - b->total) <= 0.005 * (double)(b->n + 1))
        return;
    snprintf(r->detail, sizeof r->detail, "\"total\" is %.15g but the rows' samples add up to %.15g", b->total,
             sum);
    fail_at(r, r->detail, total_at);
}

int baseline_load(const char *path, struct baseline *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    size_t len;
    char *text = slurp(path, &len, err, errlen);
    if (!text)
        return -1;
    struct reader r = {text, text + len, text, NULL, NULL, 0, ""};
    const struct bom *mark = bom_at(text, len); /* an editor's: UTF-8's is no JSON, UTF-16 no UTF-8 */
    if (mark && mark->len == 2) {
        snprintf(err, errlen, "--diff %s: the file is %s text (its byte order mark says so): save it as UTF-8, or "
                 "write it again with -o json", path, mark->name);
        free(text);
        return -1;
    }
    if (mark)
        r.s += mark->len;
    const char *total_at = text;
    report(&r, b, &total_at);
    check_end(&r);
    sort_rows(&r, b);
    check_sum(&r, b, total_at);
    if (r.error) {
        size_t line = 1;
        for (const char *c = text; c < r.pos; c++)
            line += *c == '\n';
        snprintf(err, errlen, "--diff %s line %zu: %s, at byte offset %zu", path, line, r.error,
                 (size_t)(r.pos - text));
        free(text);
        baseline_free(b);
        return -1;
    }
    free(text);
    return 0;
}

int baseline_check_group(const struct baseline *b, const char *path, const char *group, char *err, size_t errlen)
{
    if (!b->group[0])
        snprintf(err, errlen, "--diff %s: the report does not say how its rows are grouped (\"group\"); write it "
                 "again with cmprof-top --batch -o json", path);
    else if (strcmp(b->group, group) != 0)
        snprintf(err, errlen, "--diff %s: its rows are by %s, this report's by %s: write the baseline with --by %s, "
                 "or compare --by %s", path, b->group, group, group, b->group);
    else
        return 0;
    return -1;
}

bool baseline_other_build(const struct baseline *b, const char *capture_id, char *why, size_t whylen)
{
    if (!b->build_id[0] || !capture_id || !capture_id[0] || strcmp(b->build_id, capture_id) == 0)
        return false;
    snprintf(why, whylen, "--diff: the baseline's firmware has build-id %s, this capture's %s: the rows are "
             "compared by name across two builds", b->build_id, capture_id);
    return true;
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
    struct baseline_row key = {(char *)name, 0, 0};
    const struct baseline_row *r = b->n ? bsearch(&key, b->rows, b->n, sizeof *b->rows, cmp_name) : NULL;
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
