/* The rows the view shows: the current profile grouped, filtered, sorted and frozen as the keys
 * chose, names as people read them, each grouping's history, the call screen's callers and
 * callees; and the small text helpers every screen uses. */
#include "view_int.h"

#include "../report/baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Rows are keyed by linkage name; people read them demangled, GCC's copies noted, unless they
 * press C (then the ELF's symbols as they are): the rule every report and export follows. */
const char *view_shown_name(const struct view *v, const char *name)
{
    return v->group == PROF_BY_FUNCTION ? sym_shown_name(v->syms, name, v->demangle) : name;
}

bool view_contains(const char *s, const char *what)
{
    size_t n = strlen(what);
    for (const char *p = s; p && *p; p++)
        if (strncasecmp(p, what, n) == 0)
            return true;
    return false;
}

/* The filter matches a row's name (function, line, file or task) or its file, ignoring case. */
static bool matches(const struct view *v, const char *name, const char *file)
{
    return !v->filter[0] || view_contains(name, v->filter) || view_contains(file, v->filter);
}

/* Names as people sort them: case ignored, leading underscores too (__libc_init_array by l). */
static int cmp_name(const void *a, const void *b)
{
    const char *x = ((const struct prof_row *)a)->name, *y = ((const struct prof_row *)b)->name;
    const char *xs = x, *ys = y;
    while (*xs == '_')
        xs++;
    while (*ys == '_')
        ys++;
    int c = strcasecmp(xs, ys);
    return c ? c : strcmp(x, y);
}

/* The other columns, largest first; a row's key is set before the sort (qsort takes no context). */
struct keyed_row {
    struct prof_row row;
    double key;
};

static int cmp_key(const void *a, const void *b)
{
    const struct keyed_row *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return x->row.samples != y->row.samples ? (x->row.samples < y->row.samples ? 1 : -1) : cmp_name(&x->row, &y->row);
}

const char *view_sort_label(const struct view *v)
{
    static const char *const names[] = {"share", "\u00b1%", "name", "base%", "change"};
    return names[v->sort];
}

const char *view_group_label(enum prof_group g)
{
    static const char *const names[] = {"function", "line", "file", "task", "address"};
    return names[g];
}

const struct baseline *view_baseline(const struct view *v)
{
    return v->base && strcmp(v->base->group, view_group_label(v->group)) == 0 ? v->base : NULL;
}

/* The columns there are to sort by: BASE% and CHANGE only with --diff. */
int view_sort_columns(const struct view *v)
{
    return view_baseline(v) ? VS_CHANGE + 1 : VS_NAME + 1;
}

bool view_sort_descending(const struct view *v)
{
    return (v->sort != VS_NAME) != v->sort_reverse;
}

static void reverse_rows(struct prof_row *rows, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        struct prof_row t = rows[i];
        rows[i] = rows[n - 1 - i];
        rows[n - 1 - i] = t;
    }
}

/* By the ±% or --diff's columns, largest first. */
static void sort_by_key(struct view *v, struct prof_row *rows, size_t n)
{
    struct keyed_row *k = malloc(n * sizeof *k);
    if (!k)
        return; /* out of memory: by share */
    double total = prof_total(view_current_prof(v));
    for (size_t i = 0; i < n; i++) {
        k[i].row = rows[i];
        if (v->sort == VS_CI) {
            k[i].key = rows[i].ci95;
        } else {
            struct baseline_delta d = baseline_compare(rows[i].samples, total, baseline_samples(v->base, rows[i].name),
                                                       v->base->total, n);
            k[i].key = v->sort == VS_BASE ? d.base_share : d.delta;
        }
    }
    qsort(k, n, sizeof *k, cmp_key);
    for (size_t i = 0; i < n; i++)
        rows[i] = k[i].row;
    free(k);
}

/* rows[0..n) in the chosen order (share: as they come), reversed with key I. */
static void sort_rows(struct view *v, struct prof_row *rows, size_t n)
{
    if (v->sort == VS_NAME)
        qsort(rows, n, sizeof *rows, cmp_name);
    else if (v->sort != VS_SHARE && (v->sort < VS_BASE || view_baseline(v)))
        sort_by_key(v, rows, n);
    if (v->sort_reverse)
        reverse_rows(rows, n);
}

struct prof *view_current_prof(struct view *v)
{
    return v->window_mode && v->window ? v->window : v->prof;
}

/* The current profile's rows in the chosen grouping (the library's code as one row when folded). */
static size_t grouped_rows(struct view *v, const struct prof_row **rows)
{
    struct prof *p = view_current_prof(v);
    prof_fold_overhead(p, v->fold_overhead);
    return prof_rows(p, v->group, v->inline_frames, rows);
}

/* A buffer of at least n rows, grown when needed; false when out of memory. */
static bool room_for(struct prof_row **buf, size_t *cap, size_t n)
{
    if (n <= *cap)
        return true;
    struct prof_row *b = realloc(*buf, n * sizeof *b);
    if (!b)
        return false;
    *buf = b;
    *cap = n;
    return true;
}

/* The rows of the top list, after freeze, filter and sort. Owned by the view or the profile. */
size_t view_top_rows(struct view *v, const struct prof_row **out)
{
    const struct prof_row *rows;
    size_t n;
    if (v->frozen && v->snap) {
        rows = v->snap;
        n = v->n_snap;
    } else {
        n = grouped_rows(v, &rows);
    }
    static struct prof_row *filtered; /* one view per process */
    static size_t cap;
    if (!room_for(&filtered, &cap, n))
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (matches(v, view_shown_name(v, rows[i].name), rows[i].file))
            filtered[k++] = rows[i];
    if (k)
        sort_rows(v, filtered, k);
    *out = filtered;
    return k;
}

void view_freeze(struct view *v)
{
    free(v->frozen_history); /* the sparklines stop with the rows */
    v->frozen_history = malloc(sizeof *v->frozen_history);
    if (v->frozen_history)
        *v->frozen_history = v->history;
    free(v->snap);
    free(v->snap_names);
    v->snap = NULL;
    v->snap_names = NULL;
    const struct prof_row *rows;
    size_t n = grouped_rows(v, &rows), bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(rows[i].name) + 1;
    v->snap = malloc((n + 1) * sizeof *v->snap);
    v->snap_names = malloc(bytes + 1);
    if (!v->snap || !v->snap_names)
        return;
    char *p = v->snap_names;
    for (size_t i = 0; i < n; i++) {
        v->snap[i] = rows[i];
        size_t len = strlen(rows[i].name) + 1;
        memcpy(p, rows[i].name, len);
        v->snap[i].name = p;
        p += len;
    }
    v->n_snap = n;
}

#define GROUPINGS ((PROF_BY_ADDRESS + 1) * 2) /* a history for each grouping, with inline frames or not */

static int grouping(enum prof_group g, bool inline_frames)
{
    return (int)g * 2 + inline_frames;
}

const struct history *view_history(const struct view *v)
{
    return v->frozen && v->frozen_history ? v->frozen_history : &v->history;
}

/* g or i: the current grouping's history is kept, and the new one's comes back. */
void view_switch_history(struct view *v, enum prof_group old_group, bool old_inline)
{
    if (!v->kept || grouping(old_group, old_inline) == grouping(v->group, v->inline_frames))
        return;
    v->kept[grouping(old_group, old_inline)] = v->history;
    v->history = v->kept[grouping(v->group, v->inline_frames)];
}

/* One grouping's rows for its history: those the filter matches first, so that a filtered row
 * far down the list has one too, then the rest. */
static size_t history_rows(struct view *v, enum prof_group g, bool inline_frames, struct prof_row **out)
{
    const struct prof_row *rows;
    size_t n = prof_rows(v->prof, g, inline_frames, &rows);
    static struct prof_row *order; /* one view per process */
    static size_t cap;
    if (!room_for(&order, &cap, n))
        return 0;
    size_t k = 0;
    bool first = g == v->group && inline_frames == v->inline_frames && v->filter[0];
    for (size_t i = 0; first && i < n; i++)
        if (matches(v, view_shown_name(v, rows[i].name), rows[i].file))
            order[k++] = rows[i];
    for (size_t i = 0; i < n; i++)
        if (!first || !matches(v, view_shown_name(v, rows[i].name), rows[i].file))
            order[k++] = rows[i];
    *out = order;
    return k;
}

void view_tick(struct view *v)
{
    prof_fold_overhead(v->prof, v->fold_overhead);
    if (!v->kept)
        v->kept = calloc(GROUPINGS, sizeof *v->kept); /* without it (no memory), only the current one */
    for (int s = 0; s < GROUPINGS; s++) {
        enum prof_group g = (enum prof_group)(s / 2);
        bool inl = s % 2, current = s == grouping(v->group, v->inline_frames);
        if (!current && (!v->kept || g == PROF_BY_ADDRESS)) /* address rows: only while shown */
            continue;
        struct prof_row *rows = NULL;
        size_t n = history_rows(v, g, inl, &rows);
        history_tick(current ? &v->history : &v->kept[s], rows, n, prof_total(v->prof), g, inl);
    }
    uint64_t counts[PROF_SECTIONS], sums[PROF_SECTIONS];
    for (int i = 0; i < PROF_SECTIONS; i++) {
        counts[i] = prof_section(v->prof, i)->count;
        sums[i] = prof_section(v->prof, i)->sum;
    }
    section_history_tick(&v->sect_history, counts, sums, PROF_SECTIONS);
}

/* Both lists, callers first: the name of row i of the screen's selection, copied into name
 * (each prof_calls() reuses the profile's rows, so a pointer into the first list would read the
 * second). Returns how many rows there are. */
static size_t calls_of(struct view *v, int i, char *name, size_t len)
{
    struct prof *p = view_current_prof(v);
    const struct prof_call *c;
    double total;
    size_t up = prof_calls(p, v->calls_func, true, &c, &total);
    if (name && i >= 0 && (size_t)i < up)
        snprintf(name, len, "%s", c[i].name);
    size_t down = prof_calls(p, v->calls_func, false, &c, &total);
    if (name && i >= 0 && (size_t)i >= up && (size_t)i < up + down)
        snprintf(name, len, "%s", c[(size_t)i - up].name);
    return up + down;
}

int view_calls_count(struct view *v)
{
    return (int)calls_of(v, -1, NULL, 0);
}

void view_calls_follow(struct view *v)
{
    char name[sizeof v->calls_func] = "";
    calls_of(v, v->sel, name, sizeof name);
    if (!name[0] || strcmp(name, PROF_SELF) == 0 || strcmp(name, PROF_STACK_END) == 0)
        return;
    snprintf(v->calls_func, sizeof v->calls_func, "%s", name);
    v->sel = v->top = 0;
}

void view_clamp_scroll(struct view *v, int n, int rows)
{
    if (v->sel >= n)
        v->sel = n - 1;
    if (v->sel < 0)
        v->sel = 0;
    if (v->top < 0) /* a function just entered: from its first line when the selection shows */
        v->top = v->sel < rows - 1 ? 0 : v->sel - 5; /* there, else the selection five lines down */
    if (v->sel < v->top)
        v->top = v->sel;
    if (v->sel >= v->top + rows)
        v->top = v->sel - rows + 1;
    if (v->top < 0)
        v->top = 0;
}

/* A path as a reader wants it in a column of `width`: "a/./b/../c" as "a/c", and when too long,
 * its end kept from a directory on ("...config/arm/lib1funcs.S"), where the file's own name is;
 * no directory's name is cut unless the file's own name alone is too long. */
const char *view_fit_path(const char *path, int width, char *buf, size_t len)
{
    char norm[512];
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < sizeof norm;) {
        if (p[0] == '.' && (p[1] == '/' || !p[1]) && (p == path || p[-1] == '/')) { /* "./" */
            p += p[1] ? 2 : 1;
            continue;
        }
        if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]) && (p == path || p[-1] == '/') && n > 1) {
            /* "../": drop the directory before it, unless that is ".." or the root */
            size_t k = n - 1;
            while (k > 0 && norm[k - 1] != '/')
                k--;
            if (!(n - k == 3 && memcmp(norm + k, "../", 3) == 0)) {
                n = k;
                p += p[2] ? 3 : 2;
                continue;
            }
        }
        norm[n++] = *p++;
    }
    norm[n] = '\0';
    if (width < 4 || (int)n <= width) {
        snprintf(buf, len, "%s", norm);
        return buf;
    }
    const char *tail = norm + n - (size_t)(width - 3), *slash = strchr(tail, '/');
    snprintf(buf, len, "...%s", slash && slash != tail ? slash : tail);
    return buf;
}
