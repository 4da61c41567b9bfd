/* The live view: its state, keys, header and key bar; each screen is in a screen_*.c file, the
 * cell buffer and drawing in draw.c. */
#include "view.h"

#include "baseline.h"
#include "draw.h"
#include "view_int.h"

#include "../profile/escape.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>









/* ---- state ------------------------------------------------------------------------------- */

void view_init(struct view *v, struct prof *prof, struct prof *window, struct ingest *in, struct sym_table *syms)
{
    memset(v, 0, sizeof *v);
    v->prof = prof;
    v->window = window;
    v->in = in;
    v->syms = syms;
    v->group = PROF_BY_FUNCTION;
    v->inline_frames = true;
    v->demangle = true;
    v->window_seconds = 5;
    v->color = true;
    v->unicode = true;
}



void view_free(struct view *v)
{
    view_free_source(v);
    for (int i = 0; i < VIEW_LOG_LINES; i++)
        free(v->log[i]);
    free(v->snap);
    free(v->snap_names);
    free(v->kept);
    free(v->frozen_history);
}

void view_log(struct view *v, const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int slot = (v->log_head + v->log_n) % VIEW_LOG_LINES;
    if (v->log_n == VIEW_LOG_LINES) {
        free(v->log[v->log_head]);
        v->log_head = (v->log_head + 1) % VIEW_LOG_LINES;
        slot = (v->log_head + v->log_n - 1) % VIEW_LOG_LINES;
    } else {
        v->log_n++;
    }
    v->log[slot] = copy;
}

int view_add_budget(struct view *v, const char *spec)
{
    const char *eq = strchr(spec, '=');
    char *end;
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof v->budgets[0].name || v->n_budgets == VIEW_BUDGETS)
        return -1;
    double us = strtod(eq + 1, &end);
    if (*end || us <= 0)
        return -1;
    struct view_budget *bu = &v->budgets[v->n_budgets++];
    memcpy(bu->name, spec, (size_t)(eq - spec));
    bu->name[eq - spec] = '\0';
    bu->us = us;
    return 0;
}

double view_section_hz(const struct view *v)
{
    if (v->cpu_hz > 0)
        return v->cpu_hz;
    if (v->in->info.present && v->in->info.section_hz)
        return (double)v->in->info.section_hz;
    if (v->in->info.present && v->in->info.clock_hz)
        return (double)v->in->info.clock_hz;
    return 0;
}

const struct view_budget *view_budget_for(const struct view *v, int index, const char *name)
{
    char idx[16];
    snprintf(idx, sizeof idx, "%d", index);
    for (int i = 0; i < v->n_budgets; i++)
        if ((name[0] && strcmp(v->budgets[i].name, name) == 0) || strcmp(v->budgets[i].name, idx) == 0)
            return &v->budgets[i];
    return NULL;
}

void view_check_budgets(struct view *v)
{
    double hz = view_section_hz(v);
    for (int i = 0; i < INGEST_SECTIONS && i < 32; i++) {
        const struct ingest_section *s = &v->in->section[i];
        if (!s->seen || s->count == v->seen_count[i])
            continue;
        uint64_t runs = s->count - v->seen_count[i]; /* since the last report looked at */
        if (v->sect_reset[i]) {                       /* min/max since the reset */
            if (s->current < v->sect_min[i])
                v->sect_min[i] = s->current;
            if (s->current > v->sect_max[i])
                v->sect_max[i] = s->current;
        }
        const struct view_budget *bu = view_budget_for(v, i, s->name);
        if (bu && hz > 0) {
            double limit = bu->us * hz / 1e6; /* in ticks */
            /* runs over budget among the new ones: all of them when even the minimum is over; else
             * the latest, and the one that set a new maximum */
            uint64_t over = 0;
            if ((double)s->min > limit)
                over = runs;
            else
                over = ((double)s->current > limit) +
                       (s->max > v->seen_max[i] && (double)s->max > limit && s->max != s->current && runs > 1);
            v->budget_violations[i] += over;
        }
        v->seen_max[i] = s->max;
        v->seen_count[i] = s->count;
    }
}

/* ---- rows -------------------------------------------------------------------------------- */

/* Rows are keyed by linkage name; people read them demangled unless they press C. */
const char *view_shown_name(const struct view *v, const char *name)
{
    return v->demangle && v->group == PROF_BY_FUNCTION ? sym_demangle(v->syms, name) : name;
}

/* The kinds of copy the ELF has of a source function, from the view's cache (a pass over the
 * symbols the first time a name is asked). */
static unsigned clone_kinds_of(struct view *v, const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h |= 1; /* never 0: 0 marks a free slot */
    const int n = (int)(sizeof v->clones / sizeof *v->clones);
    if (v->n_clones >= n * 3 / 4) { /* full enough to slow the probes: start over */
        memset(v->clones, 0, sizeof v->clones);
        v->n_clones = 0;
    }
    int i = (int)(h % (uint64_t)n);
    while (v->clones[i].hash && v->clones[i].hash != h)
        i = (i + 1) % n;
    if (!v->clones[i].hash) {
        v->clones[i].hash = h;
        v->clones[i].kinds = sym_clone_kinds(v->syms, name);
        v->n_clones++;
    }
    return v->clones[i].kinds;
}

int view_put_function(struct view *v, struct vbuf *b, int x, int y, uint8_t attr, uint8_t note_attr, const char *name)
{
    const char *shown = view_shown_name(v, name);
    if (!v->demangle || v->group != PROF_BY_FUNCTION || shown != name || !v->syms) /* C++ says "[clone ...]" */
        return vb_put(b, x, y, attr, shown);
    unsigned kinds;
    size_t base = sym_clone_split(name, &kinds);
    char note[64];
    if (base) /* a copy's own symbol: its suffix, the number too, as two copies are two rows */
        snprintf(note, sizeof note, "%s", name + base + 1);
    else
        sym_clone_text(clone_kinds_of(v, name), note, sizeof note);
    x = vb_putf(b, x, y, attr, "%.*s", base ? (int)base : (int)strlen(name), name);
    return note[0] ? vb_putf(b, x, y, note_attr, " [%s]", note) : x;
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

static const char *group_label(enum prof_group g)
{
    static const char *const names[] = {"function", "line", "file", "task", "address"};
    return names[g];
}

const struct baseline *view_baseline(const struct view *v)
{
    return v->base && strcmp(v->base->group, group_label(v->group)) == 0 ? v->base : NULL;
}

/* The columns there are to sort by: BASE% and CHANGE only with --diff. */
static int sort_columns(const struct view *v)
{
    return view_baseline(v) ? VS_CHANGE + 1 : VS_NAME + 1;
}

/* rows[0..n) in the chosen order (share: as they come). */
static void sort_rows(struct view *v, struct prof_row *rows, size_t n)
{
    if (v->sort == VS_NAME) {
        qsort(rows, n, sizeof *rows, cmp_name);
        return;
    }
    if (v->sort == VS_SHARE || (v->sort >= VS_BASE && !view_baseline(v)))
        return;
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

static void freeze(struct view *v)
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

/* ---- history ---------------------------------------------------------------------------- */

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
static void switch_history(struct view *v, enum prof_group old_group, bool old_inline)
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
    uint64_t counts[INGEST_SECTIONS], sums[INGEST_SECTIONS];
    for (int i = 0; i < INGEST_SECTIONS; i++) {
        counts[i] = v->in->section[i].count;
        sums[i] = v->in->section[i].sum;
    }
    section_history_tick(&v->sect_history, counts, sums, INGEST_SECTIONS);
}

/* ---- drill-down -------------------------------------------------------------------------- */





/* ---- keys -------------------------------------------------------------------------------- */


static int list_length(struct view *v)
{
    const struct prof_row *rows;
    switch (v->mode) {
    case VM_TOP:
        return (int)view_top_rows(v, &rows);
    case VM_SOURCE:
        if (v->annotate)
            return v->annot_n;
        return v->n_src_lines ? v->src_n
                              : (int)prof_rows_of(view_current_prof(v), PROF_BY_ADDRESS, v->inline_frames, v->func, &rows);
    case VM_SECTIONS:
        return INGEST_SECTIONS;
    case VM_LOG:
        return v->log_n;
    case VM_HELP:
        return view_help_count();
    case VM_CALLS:
        return view_calls_count(v);
    default:
        return 0;
    }
}

static void move(struct view *v, int delta, int page)
{
    int n = list_length(v);
    v->sel += delta * (page ? 10 : 1);
    if (v->sel >= n)
        v->sel = n - 1;
    if (v->sel < 0)
        v->sel = 0;
}

int view_key(struct view *v, int key)
{
    if (key != VK_RESIZE)
        v->note[0] = v->note_path[0] = '\0'; /* a note stays until the next key */
    if (v->saving) { /* key o asked for a format */
        v->saving = false;
        if (key < 0x80 && strchr("tcjfspkle", key)) {
            v->save_format = key;
            return VIEW_SAVE | VIEW_REDRAW;
        }
        snprintf(v->note, sizeof v->note, "snapshot cancelled");
        return VIEW_REDRAW;
    }
    if (v->searching) { /* the drill-down's search prompt */
        size_t n = strlen(v->search);
        if (key == VK_ENTER) {
            v->searching = false;
            if (!view_search(v, 1) && v->search[0])
                snprintf(v->note, sizeof v->note, "not found: %s", v->search);
        } else if (key == VK_ESC) {
            v->searching = false;
            v->search[0] = '\0';
        } else if (key == VK_BACKSPACE) {
            if (n)
                v->search[n - 1] = '\0';
        } else if (key >= 0x20 && key < 0x7F && n + 1 < sizeof v->search) {
            v->search[n] = (char)key;
            v->search[n + 1] = '\0';
        }
        return VIEW_REDRAW;
    }
    if (v->filtering) {
        size_t n = strlen(v->filter);
        if (key == VK_ENTER || key == VK_ESC) {
            v->filtering = false;
            if (key == VK_ESC)
                v->filter[0] = '\0';
        } else if (key == VK_BACKSPACE) {
            if (n)
                v->filter[n - 1] = '\0';
        } else if (key >= 0x20 && key < 0x7F && n + 1 < sizeof v->filter) {
            v->filter[n] = (char)key;
            v->filter[n + 1] = '\0';
            v->sel = 0;
        }
        return VIEW_REDRAW;
    }
    switch (key) {
    case 'q':
    case 'Q':
        return VIEW_QUIT;
    case '?':
    case 'h':
    case VK_F1:
        if (v->mode == VM_HELP) {
            v->mode = v->back;
            v->sel = v->saved_sel;
        } else {
            v->back = v->mode;
            v->mode = VM_HELP;
            v->saved_sel = v->sel;
            v->sel = 0;
        }
        return VIEW_REDRAW;
    case VK_ESC:
        if (v->mode == VM_SOURCE && v->depth > 0) {
            char prev[128];
            snprintf(prev, sizeof prev, "%s", v->stack[--v->depth]);
            int keep = v->depth;
            view_enter_function(v, prev);
            v->depth = keep;
        } else if (v->mode == VM_CALLS) {
            v->mode = v->back == VM_SOURCE ? VM_SOURCE : VM_TOP;
            v->sel = v->top = 0;
        } else if (v->mode == VM_HELP || v->mode == VM_DIAG || v->mode == VM_LOG) {
            if (v->mode == VM_HELP)
                v->sel = v->saved_sel;
            v->mode = v->back == VM_HELP ? VM_TOP : v->back;
        } else if (v->mode == VM_TOP && v->filter[0]) {
            v->filter[0] = '\0'; /* Esc in the list: the filter goes first */
        } else {
            v->mode = VM_TOP;
            v->sel = v->top = 0;
            v->annotate = false; /* the next drill-down starts on source lines */
            v->search[0] = '\0';
        }
        return VIEW_REDRAW;
    case VK_UP:
    case VK_WHEEL_UP:
    case 'k':
        move(v, -1, 0);
        return VIEW_REDRAW;
    case VK_DOWN:
    case VK_WHEEL_DOWN:
    case 'j':
        move(v, 1, 0);
        return VIEW_REDRAW;
    case VK_PGUP:
        move(v, -1, 1);
        return VIEW_REDRAW;
    case VK_PGDN:
        move(v, 1, 1);
        return VIEW_REDRAW;
    case VK_HOME:
        v->sel = 0;
        return VIEW_REDRAW;
    case VK_END:
        v->sel = list_length(v) - 1;
        if (v->sel < 0)
            v->sel = 0;
        return VIEW_REDRAW;
    case VK_RESIZE:
        return VIEW_REDRAW;
    default:
        break;
    }
    if (v->mode == VM_HELP || v->mode == VM_DIAG) {
        v->mode = v->back;
        return VIEW_REDRAW;
    }
    switch (key) {
    case VK_ENTER:
        if (v->mode == VM_TOP && v->group == PROF_BY_FUNCTION) {
            const struct prof_row *rows;
            size_t n = view_top_rows(v, &rows);
            if ((size_t)v->sel < n)
                view_enter_function(v, rows[v->sel].name);
        } else if (v->mode == VM_SOURCE && (v->n_src_lines || v->annotate)) {
            view_step_into(v);
        } else if (v->mode == VM_CALLS) {
            view_calls_follow(v);
        }
        return VIEW_REDRAW;
    case 'c': /* who calls the selected function, and what it calls */
        if (v->mode == VM_TOP && v->group == PROF_BY_FUNCTION) {
            const struct prof_row *rows;
            size_t n = view_top_rows(v, &rows);
            if ((size_t)v->sel >= n)
                return VIEW_REDRAW;
            snprintf(v->calls_func, sizeof v->calls_func, "%s", rows[v->sel].name);
        } else if (v->mode == VM_SOURCE) {
            snprintf(v->calls_func, sizeof v->calls_func, "%s", v->func);
        } else if (v->mode != VM_CALLS) {
            return VIEW_REDRAW;
        }
        if (v->mode != VM_CALLS)
            v->back = v->mode;
        v->mode = VM_CALLS;
        v->sel = v->top = 0;
        return VIEW_REDRAW;
    case 'a':
        if (v->mode == VM_SOURCE) {
            v->annotate = !v->annotate;
            if (v->annotate) {
                view_annotate_on(v);
            } else { /* back to the lines: the hottest one, as on entry */
                char func[sizeof v->func];
                snprintf(func, sizeof func, "%s", v->func);
                int depth = v->depth;
                v->mode = VM_TOP;
                view_enter_function(v, func);
                v->depth = depth;
            }
        }
        return VIEW_REDRAW;
    case 'n':
    case 'N':
        if (v->mode == VM_SOURCE && v->search[0] && !view_search(v, key == 'n' ? 1 : -1))
            snprintf(v->note, sizeof v->note, "not found: %s", v->search);
        return VIEW_REDRAW;
    case 's':
        v->sort = v->sort == VS_NAME ? VS_SHARE : VS_NAME;
        return VIEW_REDRAW;
    case '<': /* the sort column, as htop's < and > cycle it */
    case '>':
        v->sort = (v->sort + (key == '>' ? 1 : sort_columns(v) - 1)) % sort_columns(v);
        return VIEW_REDRAW;
    case 'g': {
        enum prof_group was = v->group;
        v->group = v->group == PROF_BY_TASK ? PROF_BY_FUNCTION : (enum prof_group)(v->group + 1);
        switch_history(v, was, v->inline_frames);
        v->sel = v->top = 0;
        v->mode = VM_TOP;
        if (v->frozen)
            freeze(v);
        return VIEW_REDRAW;
    }
    case 'C':
        v->demangle = !v->demangle;
        return VIEW_REDRAW;
    case 'i':
        v->inline_frames = !v->inline_frames;
        switch_history(v, v->group, !v->inline_frames);
        if (v->frozen)
            freeze(v);
        return VIEW_REDRAW;
    case 'o':
        v->saving = true;
        v->note[0] = '\0';
        return VIEW_REDRAW;
    case 'u':
        v->ticks = !v->ticks;
        return VIEW_REDRAW;
    case 'O':
        v->fold_overhead = !v->fold_overhead;
        if (v->frozen)
            freeze(v);
        return VIEW_REDRAW;
    case '/':
        if (v->mode == VM_SOURCE) { /* in the drill-down: search its lines */
            v->searching = true;
            v->search[0] = '\0';
            return VIEW_REDRAW;
        }
        v->filtering = true;
        v->filter[0] = '\0';
        v->mode = VM_TOP;
        return VIEW_REDRAW;
    case ' ':
        v->frozen = !v->frozen;
        if (v->frozen)
            freeze(v);
        return VIEW_REDRAW;
    case 'r':
        if (v->mode == VM_SECTIONS) { /* from now on: counts, sums, and min/max of what is reported */
            for (int i = 0; i < INGEST_SECTIONS && i < 32; i++) {
                v->sect_reset[i] = true;
                v->sect_base_count[i] = v->in->section[i].count;
                v->sect_base_sum[i] = v->in->section[i].sum;
                v->sect_min[i] = UINT64_MAX;
                v->sect_max[i] = 0;
                v->budget_violations[i] = 0;
            }
            v->sect_reset_at = v->st.elapsed;
            return VIEW_REDRAW;
        }
        prof_reset(v->prof);
        if (v->window)
            prof_reset(v->window);
        if (v->in->timeline) /* -o trace's runs start over with the counts */
            timeline_reset(v->in->timeline);
        v->base_bad = v->in->text.stats.bad_lines + v->in->itm.stats.errors;
        v->base_overflows = v->in->itm.stats.overflows;
        v->base_syncs = v->in->itm.stats.syncs;
        v->base_lost = v->in->lost;
        v->base_elapsed = v->st.elapsed;
        if (v->frozen)
            freeze(v);
        return VIEW_REDRAW;
    case 'w':
        v->window_mode = !v->window_mode;
        return VIEW_REDRAW;
    case 'G':
        v->graph = !v->graph;
        return VIEW_REDRAW;
    case 't':
        v->mode = v->mode == VM_SECTIONS ? VM_TOP : VM_SECTIONS;
        v->sel = v->top = 0;
        return VIEW_REDRAW;
    case 'l':
        v->back = v->mode == VM_LOG ? VM_TOP : v->mode;
        v->mode = v->mode == VM_LOG ? VM_TOP : VM_LOG;
        return VIEW_REDRAW;
    case 'd':
        v->back = v->mode;
        v->mode = VM_DIAG;
        return VIEW_REDRAW;
    default:
        return 0;
    }
}

/* ---- rendering --------------------------------------------------------------------------- */


/* A header field: shown whole or not at all, so a number is never cut between its digits. */
struct field {
    char text[160];
    char alt[64]; /* a shorter form, whole too, for when the text does not fit ("" when none) */
    uint8_t attr;
    int rank; /* the lower, the longer it stays as the terminal narrows */
};

#define FIELDS 16

/* Append a field (printf-style); fields past FIELDS are left out. */
static void __attribute__((format(printf, 5, 6))) field(struct field *f, int *n, int rank, uint8_t attr, const char *fmt, ...)
{
    if (*n >= FIELDS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f[*n].text, sizeof f[*n].text, fmt, ap);
    va_end(ap);
    f[*n].alt[0] = '\0';
    f[*n].attr = attr;
    f[(*n)++].rank = rank;
}

static int columns(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80; /* columns, not bytes */
    return w;
}

/* The fields that fit row y whole (or in their shorter form), lowest rank first, drawn in their
 * own order two spaces apart. A rank-0 field stays even when it alone is wider than the row (the
 * edge clips it). */
static void put_fields(struct vbuf *b, int y, const struct field *f, int n)
{
    const char *shown[FIELDS] = {NULL};
    int used = 0;
    for (int rank = 0; rank < 16; rank++)
        for (int i = 0; i < n; i++) {
            if (f[i].rank != rank)
                continue;
            const char *t = used + columns(f[i].text) <= b->w || (rank == 0 && !used) ? f[i].text
                            : f[i].alt[0] && used + columns(f[i].alt) <= b->w ? f[i].alt : NULL;
            if (t) {
                shown[i] = t;
                used += columns(t) + 2;
            }
        }
    for (int i = 0, x = 0; i < n; i++)
        if (shown[i])
            x = vb_putf(b, x, y, f[i].attr, "%s  ", shown[i]);
}

/* Row 0: the tool, the source and its state, the ELF and its build-id check. */
static void header_source(struct view *v, struct vbuf *b, bool id_bad, bool code_bad)
{
    struct field f[FIELDS];
    int n = 0;
    field(f, &n, 0, VA_TITLE, "cmprof-top");
    field(f, &n, 2, VA_TITLE, "%s", v->st.source ? v->st.source : "?");
    snprintf(f[n - 1].alt, sizeof f[n - 1].alt, "%s", view_base_name(v->st.source)); /* a file's name */
    bool bad_state = v->st.state && strncmp(v->st.state, "connected", 9) != 0;
    field(f, &n, 0, bad_state ? VA_WARN : VA_GOOD, "[%s]", v->st.state ? v->st.state : "?");
    const char *elf = v->st.elf ? strrchr(v->st.elf, '/') : NULL;
    field(f, &n, 3, VA_TITLE, "%s", elf ? elf + 1 : (v->st.elf ? v->st.elf : ""));
    if (v->in->info.present && v->in->info.build_id[0])
        field(f, &n, 1, id_bad ? VA_WARN : VA_GOOD, "build-id %s", id_bad ? "MISMATCH" : "ok");
    if (code_bad)
        field(f, &n, 0, VA_WARN, "WRONG ELF? (d)");
    put_fields(b, 0, f, n);
    vb_fill_attr(b, 0, VA_TITLE);
}

/* Row 1: the counters. What matters stays as the terminal narrows; a counter at zero goes first. */
static void header_counters(struct view *v, struct vbuf *b)
{
    const struct ingest *in = v->in;
    struct prof *cur = view_current_prof(v); /* under w, the header counts the window too */
    double total = prof_total(cur);
    double elapsed = v->st.elapsed - v->base_elapsed; /* since the start, or the last r */
    uint64_t bad = in->text.stats.bad_lines + in->itm.stats.errors - v->base_bad;
    uint64_t syncs = in->itm.stats.syncs - v->base_syncs, resync = syncs > 1 ? syncs - 1 : 0;
    uint64_t overflows = in->itm.stats.overflows - v->base_overflows, lost = in->lost - v->base_lost;
    char losses[24][INGEST_LOSS_TEXT];
    size_t nl = ingest_losses(in, losses, 24);
    struct field f[FIELDS];
    int n = 0;
    field(f, &n, 0, VA_NORMAL, "samples %.0f", total);
    field(f, &n, 1, VA_NORMAL, "%.0f/s", v->st.rate);
    field(f, &n, 4, VA_NORMAL, "%02d:%02d", (int)elapsed / 60, (int)elapsed % 60);
    field(f, &n, bad ? 2 : 7, bad ? VA_WARN : VA_NORMAL, "bad %llu", (unsigned long long)bad);
    field(f, &n, overflows ? 2 : 8, overflows ? VA_WARN : VA_NORMAL, "overflows %llu", (unsigned long long)overflows);
    field(f, &n, resync ? 3 : 9, VA_NORMAL, "resyncs %llu", (unsigned long long)resync);
    field(f, &n, lost ? 2 : 6, lost ? VA_WARN : VA_NORMAL, "lost %llu", (unsigned long long)lost);
    if (prof_sleep(cur))
        field(f, &n, 5, VA_NORMAL, "sleeping %llu", (unsigned long long)prof_sleep(cur));
    double overhead = prof_overhead(cur);
    if (overhead > 0)
        field(f, &n, 5, VA_NORMAL, "overhead %.1f %%", 100 * overhead);
    double idle = prof_idle(cur);
    if (idle >= 0)
        field(f, &n, 3, VA_NORMAL, "idle %.1f %%", 100 * idle);
    if (nl)
        field(f, &n, 0, VA_WARN, "data lost: %zu kind%s (d)", nl, nl > 1 ? "s" : "");
    put_fields(b, 1, f, n);
}

/* Row 2: the view's own state first, the firmware's settings after; what does not fit whole goes. */
static void header_settings(struct view *v, struct vbuf *b)
{
    const struct ingest *in = v->in;
    struct field f[FIELDS];
    int n = 0;
    if (v->filter[0] && !v->filtering)
        field(f, &n, 0, VA_BOLD, "filter: %s (Esc clears)", v->filter);
    field(f, &n, 0, VA_BOLD, "by %s%s", group_label(v->group), v->inline_frames ? "" : " (no inline)");
    field(f, &n, 1, VA_BOLD, "sort %s", view_sort_label(v));
    if (v->window_mode)
        field(f, &n, 0, VA_BOLD, "last %.0f s", v->window_seconds);
    if (v->frozen)
        field(f, &n, 0, VA_WARN, "FROZEN");
    if (in->info.present) {
        field(f, &n, 2, VA_NORMAL, "clk %.1f MHz", in->info.clock_hz / 1e6);
        double shz = view_section_hz(v); /* the sections' clock, when another: say which is which */
        if (shz > 0 && fabs(shz - (double)in->info.clock_hz) > 0.5)
            field(f, &n, 3, VA_NORMAL, "sections' clock %.3f MHz%s", shz / 1e6, v->cpu_hz > 0 ? " (--cpu-hz)" : "");
        field(f, &n, 5, VA_NORMAL, "period %llu+0..%llu ticks", (unsigned long long)in->info.period,
              (unsigned long long)in->info.jitter);
        snprintf(f[n - 1].alt, sizeof f[n - 1].alt, "period %llu+0..%llu", (unsigned long long)in->info.period,
                 (unsigned long long)in->info.jitter);
        /* the rate the firmware asked for: the timer's clock over the mean period */
        double mean = (double)in->info.period + (double)in->info.jitter / 2.0;
        if (in->info.timer_hz && mean > 0)
            field(f, &n, 4, VA_NORMAL, "nominal %.0f/s", (double)in->info.timer_hz / mean);
        if (in->info.arch[0]) /* what the firmware runs on and samples with */
            field(f, &n, 6, VA_NORMAL, "%s %s", in->info.arch, in->info.timer);
    } else if (in->text.stats.no_base) {
        field(f, &n, 1, VA_WARN, "no announce yet: clock and period unknown");
    }
    put_fields(b, 2, f, n);
}

static void header(struct view *v, struct vbuf *b)
{
    struct prof_diag d[8];
    size_t nd = prof_diagnose(v->prof, d, 8);
    bool id_bad = false, code_bad = false;
    for (size_t i = 0; i < nd; i++) {
        id_bad |= d[i].kind == DIAG_BUILD_ID;
        code_bad |= d[i].kind == DIAG_NOT_STARTS; /* PCs where the ELF has no instruction */
    }
    header_source(v, b, id_bad, code_bad);
    header_counters(v, b);
    header_settings(v, b);
    if (nd) {
        vb_putf(b, 0, 3, VA_WARN, "! %s%s", d[0].text, nd > 1 ? "  (d: all diagnostics)" : "  (d: details)");
        vb_fill_attr(b, 3, VA_WARN);
    }
}

/* One key of the bottom bar; the lower its rank, the longer it stays as the terminal narrows. */
struct key_hint {
    const char *text;
    int rank;
};

/* The keys that fit the width, in their own order, dropping the least useful first ("? help" has
 * rank 0 and always stays). Width is counted in characters, not bytes. */
static void keybar_fit(struct vbuf *b, const struct key_hint *k, int n)
{
    int cols[24] = {0}, used = 1;
    bool shown[24] = {false};
    for (int i = 0; i < n && i < 24; i++) {
        for (const char *p = k[i].text; *p; p++)
            cols[i] += ((unsigned char)*p & 0xC0) != 0x80; /* UTF-8 continuation bytes take no column */
    }
    for (int rank = 0; rank < 24; rank++)
        for (int i = 0; i < n && i < 24; i++)
            if (k[i].rank == rank && used + cols[i] + 2 <= b->w) {
                shown[i] = true;
                used += cols[i] + 2;
            }
    char line[512];
    size_t len = 0;
    line[len++] = ' ';
    for (int i = 0; i < n && i < 24; i++)
        if (shown[i])
            len += (size_t)snprintf(line + len, sizeof line - len, "%s  ", k[i].text);
    line[len < sizeof line ? len : sizeof line - 1] = '\0';
    vb_put(b, 0, b->h - 1, VA_KEY, line);
    vb_fill_attr(b, b->h - 1, VA_KEY);
}

static void keybar(struct view *v, struct vbuf *b)
{
    if (v->saving) {
        vb_put(b, 0, b->h - 1, VA_KEY, " save a snapshot as: t table  c CSV  j JSON  f folded  s speedscope  p pprof  k callgrind  l lcov  e trace   (Esc: no)");
        vb_fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    if (v->note[0]) { /* until the next key */
        vb_put(b, 0, b->h - 1, VA_KEY, " ");
        int x = vb_put(b, 1, b->h - 1, VA_KEY, v->note);
        char fitted[sizeof v->note_path];
        if (v->note_path[0])
            vb_put(b, x, b->h - 1, VA_KEY, view_fit_path(v->note_path, b->w - x - 1, fitted, sizeof fitted));
        vb_fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    if (v->filtering) { /* the prompt sits at the bottom, as in less */
        int x = vb_putf(b, 0, b->h - 1, VA_KEY, "/%s_", v->filter);
        vb_put(b, x, b->h - 1, VA_KEY, "   (function, file or task; Enter keeps it, Esc clears it)");
        vb_fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    if (v->searching) {
        int x = vb_putf(b, 0, b->h - 1, VA_KEY, "/%s_", v->search);
        vb_put(b, x, b->h - 1, VA_KEY, "   (search these lines; Enter finds, n/N repeat, Esc cancels)");
        vb_fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    static const struct key_hint source[] = {{"Esc back", 1}, {"Enter step into call", 3}, {"a annotate", 4},
                                             {"/ search", 5}, {"n/N next", 7}, {"\u2191\u2193 move", 6},
                                             {"i inline", 8}, {"? help", 0}, {"q quit", 2}};
    static const struct key_hint calls[] = {{"Esc back", 1}, {"Enter follow", 3}, {"\u2191\u2193 move", 4},
                                            {"? help", 0}, {"q quit", 2}};
    static const struct key_hint sections[] = {{"t/Esc back", 1}, {"r reset", 3}, {"u \u00b5s/ticks", 5},
                                               {"G graph", 6}, {"\u2191\u2193 move", 4}, {"? help", 0}, {"q quit", 2}};
    /* G stays at 80 columns: the history pane is found by its key, not by reading the help */
    static const struct key_hint top[] = {{"? help", 0}, {"Enter drill", 2}, {"s sort", 5}, {"g group", 3},
                                          {"i inline", 9}, {"/ filter", 4}, {"space freeze", 10}, {"r reset", 7},
                                          {"w window", 12}, {"t sections", 8}, {"l log", 13}, {"d diag", 11},
                                          {"O fold", 14}, {"o save", 10}, {"c callers", 15}, {"G graph", 6},
                                          {"q quit", 1}};
    switch (v->mode) {
    case VM_SOURCE:
        keybar_fit(b, source, (int)(sizeof source / sizeof *source));
        break;
    case VM_SECTIONS:
        keybar_fit(b, sections, (int)(sizeof sections / sizeof *sections));
        break;
    case VM_CALLS:
        keybar_fit(b, calls, (int)(sizeof calls / sizeof *calls));
        break;
    default:
        keybar_fit(b, top, (int)(sizeof top / sizeof *top));
        break;
    }
}

void view_clamp_scroll(struct view *v, int n, int rows)
{
    if (v->sel >= n)
        v->sel = n - 1;
    if (v->sel < 0)
        v->sel = 0;
    if (v->sel < v->top)
        v->top = v->sel;
    if (v->sel >= v->top + rows)
        v->top = v->sel - rows + 1;
    if (v->top < 0)
        v->top = 0;
}




int vb_wrap(struct vbuf *b, int y, uint8_t attr, const char *text);











void view_render(struct view *v, struct vbuf *b)
{
    vb_clear(b);
    if (b->w < 20 || b->h < 8) {
        vb_put(b, 0, 0, VA_WARN, "too small");
        return;
    }
    header(v, b);
    int y0 = 4;
    /* the history pane takes the table's last rows; the table is drawn as on a shorter screen */
    int full_h = b->h, graph_h = 0;
    if (v->graph && (v->mode == VM_TOP || v->mode == VM_SECTIONS))
        graph_h = b->h >= 40 ? 14 : b->h >= 30 ? 10 : 7;
    if (graph_h > b->h - 9) /* a short terminal: the table keeps a few rows, the pane what is left */
        graph_h = b->h - 9 >= 3 ? b->h - 9 : 0;
    b->h -= graph_h;
    switch (v->mode) {
    case VM_TOP:
        view_render_top(v, b, y0);
        break;
    case VM_SOURCE:
        view_render_source(v, b, y0);
        break;
    case VM_SECTIONS:
        view_render_sections(v, b, y0);
        break;
    case VM_LOG:
        view_render_log(v, b, y0);
        break;
    case VM_HELP:
        view_render_help(v, b, y0);
        break;
    case VM_DIAG:
        view_render_diag(v, b, y0);
        break;
    case VM_CALLS:
        view_render_calls(v, b, y0);
        break;
    }
    b->h = full_h;
    if (graph_h)
        view_render_graph(v, b, full_h - 1 - graph_h, graph_h);
    keybar(v, b);
    if (!v->unicode) /* a terminal without UTF-8: plain ASCII for the few symbols we use */
        for (int i = 0; i < b->w * b->h; i++) {
            uint32_t c = b->cells[i].ch;
            if (c < 0x80)
                continue;
            b->cells[i].ch = c == 0x00B1 ? '+' : c == 0x2191 ? '^' : c == 0x2193 ? 'v' : c == 0x2190 ? '<' : '?';
        }
}
