/* The keys: one table gives each key its action on each screen, its hint on the bottom bar and its
 * line on the help page. An action returns what the caller must do (redraw, quit, save), as htop's
 * do; REFREEZE asks for the frozen rows to be taken again, once, after it. */
#include "view_int.h"

#include "../profile/timeline.h"
#include "../report/report.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define REFREEZE 0x100 /* the rows changed under a freeze: take them again */
#define KEY_ANY (-1)   /* a binding for every key its screens do not bind otherwise */

#define ON(m) (1u << (m))
#define PAGES (ON(VM_HELP) | ON(VM_DIAG))           /* any other key leaves them */
#define EVERY (ON(VM_TOP) | ON(VM_SOURCE) | ON(VM_SECTIONS) | ON(VM_LOG) | ON(VM_CALLS) | PAGES)
#define LISTS (EVERY & ~PAGES)
#define MOVE_KEYS VK_UP, VK_WHEEL_UP, 'k', VK_DOWN, VK_WHEEL_DOWN, 'j', VK_PGUP, VK_PGDN, VK_HOME, VK_END

/* Key o's formats, in the prompt's order, are report/report.c's table of formats: the prompt, the
 * key check and the help line follow it. */
#define SAVE_FORMAT(i) report_format_info((enum report_format)(i))

/* ---- what each screen's list holds, for the keys that move in it ----------------------------- */

static int top_count(struct view *v)
{
    const struct prof_row *rows;
    return (int)view_top_rows(v, &rows);
}

static int source_count(struct view *v)
{
    const struct prof_row *rows;
    if (v->annotate)
        return v->annot_n;
    return v->n_src_lines ? v->src_n
                          : (int)prof_rows_of(view_current_prof(v), PROF_BY_ADDRESS, v->inline_frames, v->func, &rows);
}

static int sections_count(struct view *v)
{
    (void)v;
    return PROF_SECTIONS;
}

static int log_count(struct view *v)
{
    return v->log_n;
}

static int help_count(struct view *v)
{
    return v->help_rows ? v->help_rows : INT_MAX / 2; /* not drawn yet: its first draw clamps the selection */
}

static int no_count(struct view *v)
{
    (void)v;
    return 0;
}

/* Per screen: its list's length, and the screen whose key bar it shows. */
static const struct {
    int (*count)(struct view *v);
    enum view_mode bar;
} screens[] = {
    [VM_TOP] = {top_count, VM_TOP},
    [VM_SOURCE] = {source_count, VM_SOURCE},
    [VM_SECTIONS] = {sections_count, VM_SECTIONS},
    [VM_LOG] = {log_count, VM_TOP},
    [VM_HELP] = {help_count, VM_TOP},
    [VM_DIAG] = {no_count, VM_TOP},
    [VM_CALLS] = {view_calls_count, VM_CALLS},
};

/* ---- actions ---------------------------------------------------------------------------------- */

static int redraw(struct view *v, int key)
{
    (void)v, (void)key;
    return VIEW_REDRAW;
}

static int quit(struct view *v, int key)
{
    (void)v, (void)key;
    return VIEW_QUIT;
}

static int open_help(struct view *v, int key)
{
    (void)key;
    v->back = v->mode;
    v->mode = VM_HELP;
    v->saved_sel = v->sel;
    v->sel = 0;
    return VIEW_REDRAW;
}

static int close_help(struct view *v, int key)
{
    (void)key;
    v->mode = v->back;
    v->sel = v->saved_sel;
    return VIEW_REDRAW;
}

static int move(struct view *v, int key)
{
    if (key == VK_HOME) {
        v->sel = 0;
        return VIEW_REDRAW;
    }
    int n = screens[v->mode].count(v);
    switch (key) {
    case VK_END:
        v->sel = n - 1 < 0 ? 0 : n - 1;
        return VIEW_REDRAW;
    case VK_UP:
    case VK_WHEEL_UP:
    case 'k':
        v->sel--;
        break;
    case VK_PGUP:
        v->sel -= 10;
        break;
    case VK_PGDN:
        v->sel += 10;
        break;
    default: /* down */
        v->sel++;
        break;
    }
    if (v->sel >= n)
        v->sel = n - 1;
    if (v->sel < 0)
        v->sel = 0;
    return VIEW_REDRAW;
}

static int back_to_top(struct view *v, int key)
{
    (void)key;
    v->mode = VM_TOP;
    v->sel = v->top = 0;
    v->annotate = false; /* the next drill-down starts on source lines */
    v->search[0] = '\0';
    return VIEW_REDRAW;
}

static int esc_top(struct view *v, int key)
{
    if (!v->filter[0])
        return back_to_top(v, key);
    v->filter[0] = '\0'; /* Esc in the list: the filter goes first */
    return VIEW_REDRAW;
}

static int esc_source(struct view *v, int key)
{
    if (v->annotate && v->depth <= v->annot_depth) { /* back to the source lines key a came from */
        view_toggle_annotate(v);
        return VIEW_REDRAW;
    }
    if (v->depth == 0)
        return back_to_top(v, key);
    view_drill_back(v);
    return VIEW_REDRAW;
}

static int esc_calls(struct view *v, int key)
{
    (void)key;
    v->mode = v->back == VM_SOURCE ? VM_SOURCE : VM_TOP;
    v->sel = v->top = 0;
    return VIEW_REDRAW;
}

static int esc_help(struct view *v, int key)
{
    (void)key;
    v->sel = v->saved_sel;
    v->mode = v->back == VM_HELP ? VM_TOP : v->back;
    return VIEW_REDRAW;
}

static int esc_page(struct view *v, int key)
{
    (void)key;
    v->mode = v->back == VM_HELP ? VM_TOP : v->back;
    return VIEW_REDRAW;
}

static int leave_page(struct view *v, int key)
{
    (void)key;
    v->mode = v->back;
    return VIEW_REDRAW;
}

/* The selected row's function, or NULL (another grouping, or no row). */
static const char *selected_function(struct view *v)
{
    const struct prof_row *rows;
    if (v->group != PROF_BY_FUNCTION)
        return NULL;
    size_t n = view_top_rows(v, &rows);
    return (size_t)v->sel < n ? rows[v->sel].name : NULL;
}

/* Enter or c on a row that is no function's (a line, file or task row): say so, not nothing. */
static int no_function_here(struct view *v, const char *what)
{
    static const char *const grouping[] = {[PROF_BY_LINE] = "lines", [PROF_BY_FILE] = "files", [PROF_BY_TASK] = "tasks"};
    const char *g = (size_t)v->group < sizeof grouping / sizeof *grouping && grouping[v->group] ? grouping[v->group] : "";
    if (*g)
        snprintf(v->note, sizeof v->note, "%s; rows here are %s (g: by function)", what, g);
    return VIEW_REDRAW;
}

static int drill_in(struct view *v, int key)
{
    (void)key;
    const char *name = selected_function(v);
    if (!name)
        return no_function_here(v, "Enter opens a function's source lines");
    view_enter_function(v, name);
    return VIEW_REDRAW;
}

static int step_into(struct view *v, int key)
{
    (void)key;
    if (v->n_src_lines || v->annotate)
        view_step_into(v);
    return VIEW_REDRAW;
}

static int follow_call(struct view *v, int key)
{
    (void)key;
    view_calls_follow(v);
    return VIEW_REDRAW;
}

static int annotate(struct view *v, int key)
{
    (void)key;
    view_toggle_annotate(v);
    return VIEW_REDRAW;
}

static int open_search(struct view *v, int key)
{
    (void)key;
    v->prompt = VP_SEARCH;
    v->search[0] = '\0';
    return VIEW_REDRAW;
}

static int search_again(struct view *v, int key)
{
    if (v->search[0] && !view_search(v, key == 'n' ? 1 : -1))
        snprintf(v->note, sizeof v->note, "not found: %s", v->search);
    return VIEW_REDRAW;
}

/* Key c: who calls calls_func, and what it calls. */
static int open_calls(struct view *v, const char *function)
{
    snprintf(v->calls_func, sizeof v->calls_func, "%s", function);
    v->back = v->mode;
    v->mode = VM_CALLS;
    v->sel = v->top = 0;
    return VIEW_REDRAW;
}

static int calls_of_row(struct view *v, int key)
{
    (void)key;
    const char *name = selected_function(v);
    return name ? open_calls(v, name) : no_function_here(v, "c shows a function's callers");
}

static int calls_of_function(struct view *v, int key)
{
    (void)key;
    return open_calls(v, v->func);
}

static int calls_again(struct view *v, int key)
{
    (void)key;
    v->sel = v->top = 0;
    return VIEW_REDRAW;
}

static int sort_by_name(struct view *v, int key)
{
    (void)key;
    v->sort = v->sort == VS_NAME ? VS_SHARE : VS_NAME;
    return VIEW_REDRAW;
}

static int sort_column(struct view *v, int key) /* as htop's < and > cycle it */
{
    int n = view_sort_columns(v);
    v->sort = (v->sort + (key == '>' ? 1 : n - 1)) % n;
    return VIEW_REDRAW;
}

static int sort_reverse(struct view *v, int key) /* htop's I */
{
    (void)key;
    v->sort_reverse = !v->sort_reverse;
    return VIEW_REDRAW;
}

static int open_sort_menu(struct view *v, int key) /* htop's F6: the orders listed at the bottom */
{
    (void)key;
    v->sort_menu = true;
    v->sort_pick = v->sort;
    return VIEW_REDRAW;
}

static int set_group(struct view *v, enum prof_group group)
{
    enum prof_group was = v->group;
    v->group = group;
    view_switch_history(v, was, v->inline_frames);
    v->sel = v->top = 0;
    v->mode = VM_TOP;
    return VIEW_REDRAW | REFREEZE;
}

static int next_group(struct view *v, int key)
{
    (void)key;
    return set_group(v, v->group == PROF_BY_TASK ? PROF_BY_FUNCTION : (enum prof_group)(v->group + 1));
}

static int task_view(struct view *v, int key) /* T: the tasks in one key; again: back to functions */
{
    (void)key;
    return set_group(v, v->group == PROF_BY_TASK ? PROF_BY_FUNCTION : PROF_BY_TASK);
}

static int toggle_inline(struct view *v, int key)
{
    (void)key;
    v->inline_frames = !v->inline_frames;
    view_switch_history(v, v->group, !v->inline_frames);
    return VIEW_REDRAW | REFREEZE;
}

static int toggle_demangle(struct view *v, int key)
{
    (void)key;
    v->demangle = !v->demangle;
    return VIEW_REDRAW;
}

static int toggle_fold(struct view *v, int key)
{
    (void)key;
    v->fold_overhead = !v->fold_overhead;
    return VIEW_REDRAW | REFREEZE;
}

static int open_save(struct view *v, int key)
{
    (void)key;
    v->saving = true;
    v->note[0] = '\0';
    return VIEW_REDRAW;
}

static int open_filter(struct view *v, int key)
{
    (void)key;
    v->prompt = VP_FILTER;
    v->filter[0] = '\0';
    v->mode = VM_TOP;
    return VIEW_REDRAW;
}

static int toggle_freeze(struct view *v, int key)
{
    (void)key;
    v->frozen = !v->frozen;
    return VIEW_REDRAW | REFREEZE;
}

static int reset_all(struct view *v, int key)
{
    (void)key;
    prof_reset(v->prof);
    if (v->window)
        prof_reset(v->window);
    ingest_restart_timeline(v->in); /* -o trace's runs start over with the counts */
    struct ingest_counts c;
    ingest_counts(v->in, &c);
    v->base_bad = c.bad;
    v->base_overflows = c.overflows;
    v->base_syncs = c.syncs;
    v->base_lost = c.lost;
    v->base_elapsed = v->st.elapsed;
    return VIEW_REDRAW | REFREEZE;
}

static int reset_sections(struct view *v, int key)
{
    (void)key;
    view_reset_sections(v); /* from now on: counts, sums, and min/max of what is reported */
    return VIEW_REDRAW;
}

static int toggle_window(struct view *v, int key)
{
    (void)key;
    if (!v->window_mode && v->st.rate_of != VIEW_RATE_STREAM) { /* its windows would be of reading time */
        snprintf(v->note, sizeof v->note, "w counts a stream's last seconds: a file has no time");
        v->note_path[0] = '\0';
        return VIEW_REDRAW;
    }
    v->window_mode = !v->window_mode;
    return VIEW_REDRAW;
}

static int toggle_graph(struct view *v, int key)
{
    (void)key;
    v->graph = !v->graph;
    return VIEW_REDRAW;
}

static int open_sections(struct view *v, int key)
{
    (void)key;
    v->mode = VM_SECTIONS;
    v->sel = v->top = 0;
    return VIEW_REDRAW;
}

static int close_sections(struct view *v, int key)
{
    (void)key;
    v->mode = VM_TOP;
    v->sel = v->top = 0;
    return VIEW_REDRAW;
}

static int toggle_ticks(struct view *v, int key)
{
    (void)key;
    v->ticks = !v->ticks;
    return VIEW_REDRAW;
}

static int open_log(struct view *v, int key)
{
    (void)key;
    v->back = v->mode;
    v->mode = VM_LOG;
    return VIEW_REDRAW;
}

static int close_log(struct view *v, int key)
{
    (void)key;
    v->back = v->mode = VM_TOP;
    return VIEW_REDRAW;
}

static int open_diag(struct view *v, int key)
{
    (void)key;
    v->back = v->mode;
    v->mode = VM_DIAG;
    v->diag_top = 0;
    return VIEW_REDRAW;
}

/* The diagnostics page scrolls on its own line count (its draw clamps it), the list's selection
 * under it kept. */
static int scroll_diag(struct view *v, int key)
{
    int page = v->diag_page > 1 ? v->diag_page - 1 : 1;
    switch (key) {
    case VK_HOME:
        v->diag_top = 0;
        break;
    case VK_END:
        v->diag_top = INT_MAX / 2;
        break;
    case VK_UP:
    case VK_WHEEL_UP:
    case 'k':
        v->diag_top--;
        break;
    case VK_PGUP:
        v->diag_top -= page;
        break;
    case VK_PGDN:
        v->diag_top += page;
        break;
    default: /* down */
        v->diag_top++;
        break;
    }
    if (v->diag_top < 0)
        v->diag_top = 0;
    return VIEW_REDRAW;
}

/* ---- the table ------------------------------------------------------------------------------- */

struct binding {
    int keys[12];          /* key codes, 0-terminated; KEY_ANY: every other key */
    unsigned screens;      /* ON(mode) of the screens it works on */
    int (*run)(struct view *v, int key);
    struct view_hint hints[4]; /* on those screens' bars ({0}: none) */
    const char *help_key, *help; /* its help line, on one binding of the key; {formats}: key o's */
};

/* The first binding for a key on a screen is the one that runs; the help page and each key bar
 * list theirs in this order. */
static const struct binding bindings[] = {
    {.keys = {'?', 'h', VK_F1}, .screens = EVERY & ~ON(VM_HELP), .run = open_help,
     .hints = {{VM_TOP, "? help", 0}, {VM_SOURCE, "? help", 0}, {VM_SECTIONS, "? help", 0}, {VM_CALLS, "? help", 0}}},
    {.keys = {'?', 'h', VK_F1}, .screens = ON(VM_HELP), .run = close_help},
    {.keys = {MOVE_KEYS}, .screens = ON(VM_DIAG), .run = scroll_diag},
    {.keys = {MOVE_KEYS}, .screens = EVERY, .run = move,
     .hints = {{VM_SOURCE, "\u2191\u2193 move", 6}, {VM_CALLS, "\u2191\u2193 move", 4},
               {VM_SECTIONS, "\u2191\u2193 move", 4}},
     .help_key = "\u2191 \u2193 PgUp PgDn Home End, mouse wheel", .help = "move (scrolls this help and d's page)"},
    {.keys = {VK_ENTER}, .screens = ON(VM_TOP), .run = drill_in, .hints = {{VM_TOP, "Enter drill", 2}},
     .help_key = "Enter",
     .help = "drill into the selected function's source lines; on a line, step into the function inlined there, or the"
     " one a call there calls (bl); in annotate, the function the selected instruction calls"},
    {.keys = {VK_ENTER}, .screens = ON(VM_SOURCE), .run = step_into, .hints = {{VM_SOURCE, "Enter step into call", 3}}},
    {.keys = {VK_ENTER}, .screens = ON(VM_CALLS), .run = follow_call, .hints = {{VM_CALLS, "Enter follow", 3}}},
    {.keys = {'a'}, .screens = ON(VM_SOURCE), .run = annotate, .hints = {{VM_SOURCE, "a annotate", 4}}, .help_key = "a",
     .help = "in the drill-down: annotate, the instructions under their source lines, each with its share; \u25c0 skid"
     " marks an instruction right after interrupts come back on"},
    {.keys = {'/'}, .screens = ON(VM_SOURCE), .run = open_search, .hints = {{VM_SOURCE, "/ search", 5}},
     .help_key = "/ n N", .help = "in the drill-down: search its lines (or instructions), next and previous match"},
    {.keys = {'n', 'N'}, .screens = ON(VM_SOURCE), .run = search_again, .hints = {{VM_SOURCE, "n/N next", 7}}},
    {.keys = {VK_ESC}, .screens = ON(VM_SOURCE), .run = esc_source, .hints = {{VM_SOURCE, "Esc back", 1}},
     .help_key = "Esc", .help = "back"},
    {.keys = {VK_ESC}, .screens = ON(VM_CALLS), .run = esc_calls, .hints = {{VM_CALLS, "Esc back", 1}}},
    {.keys = {VK_ESC}, .screens = ON(VM_TOP), .run = esc_top},
    {.keys = {VK_ESC}, .screens = ON(VM_SECTIONS), .run = back_to_top},
    {.keys = {VK_ESC}, .screens = ON(VM_HELP), .run = esc_help},
    {.keys = {VK_ESC}, .screens = ON(VM_DIAG) | ON(VM_LOG), .run = esc_page},
    {.keys = {'c'}, .screens = ON(VM_TOP), .run = calls_of_row, .hints = {{VM_TOP, "c callers", 15}}, .help_key = "c",
     .help = "who calls the selected function and what it calls, with shares (call stacks: a gdb: source halting the"
     " core, or the sampler's stack evidence, CMPROF_STACKS=1); Enter follows a row"},
    {.keys = {'c'}, .screens = ON(VM_SOURCE), .run = calls_of_function},
    {.keys = {'c'}, .screens = ON(VM_CALLS), .run = calls_again},
    /* the keys above, on the other lists: nothing */
    {.keys = {VK_ENTER, 'a', 'n', 'N', 'c'}, .screens = LISTS, .run = redraw},
    {.keys = {'s'}, .screens = LISTS, .run = sort_by_name, .hints = {{VM_TOP, "s sort", 5}},
     .help_key = "s < > F6 I",
     .help = "sort: s by share or name, < > by the previous or next column, F6 from a list, I reverses; the sorted"
     " column's title has the arrow"},
    {.keys = {'<', '>'}, .screens = LISTS, .run = sort_column},
    {.keys = {VK_F6}, .screens = LISTS, .run = open_sort_menu},
    {.keys = {'I'}, .screens = LISTS, .run = sort_reverse},
    {.keys = {'g'}, .screens = LISTS, .run = next_group, .hints = {{VM_TOP, "g group", 3}}, .help_key = "g T",
     .help = "group by function, line, file, task (T: tasks at once)"},
    {.keys = {'T'}, .screens = LISTS, .run = task_view, .hints = {{VM_TOP, "T tasks", 16}}},
    {.keys = {'i'}, .screens = LISTS, .run = toggle_inline,
     .hints = {{VM_TOP, "i inline", 9}, {VM_SOURCE, "i inline", 8}}, .help_key = "i",
     .help = "charge inlined code to the inlined function, or to its caller"},
    {.keys = {'C'}, .screens = LISTS, .run = toggle_demangle, .help_key = "C",
     .help = "C++ and Rust names demangled (default) or as linked"},
    {.keys = {'O'}, .screens = LISTS, .run = toggle_fold, .hints = {{VM_TOP, "O fold", 14}}, .help_key = "O",
     .help = "cmprof's own firmware code as one row, " PROF_OVERHEAD_ROW ", or by function"},
    {.keys = {'o'}, .screens = LISTS, .run = open_save, .hints = {{VM_TOP, "o save", 10}}, .help_key = "o",
     .help = "save a snapshot: {formats}, in --save-dir or here (said at the bottom)"},
    {.keys = {'/'}, .screens = LISTS, .run = open_filter, .hints = {{VM_TOP, "/ filter", 4}}, .help_key = "/",
     .help = "in the list: filter by function, file or task name (Enter keeps it, Esc clears it)"},
    {.keys = {' '}, .screens = LISTS, .run = toggle_freeze, .hints = {{VM_TOP, "space freeze", 10}},
     .help_key = "space", .help = "freeze the display and its sparklines (counting goes on)"},
    {.keys = {'r'}, .screens = LISTS & ~ON(VM_SECTIONS), .run = reset_all, .hints = {{VM_TOP, "r reset", 7}},
     .help_key = "r", .help = "reset the counts, counters, clock and the trace's runs (in the section view: the section statistics)"},
    {.keys = {'r'}, .screens = ON(VM_SECTIONS), .run = reset_sections, .hints = {{VM_SECTIONS, "r reset", 3}}},
    {.keys = {'w'}, .screens = LISTS, .run = toggle_window, .hints = {{VM_TOP, "w window", 12}}, .help_key = "w",
     .help = "cumulative, or the last seconds (--window) in every count shown"},
    {.keys = {'G'}, .screens = LISTS, .run = toggle_graph,
     .hints = {{VM_TOP, "G graph", 6}, {VM_SECTIONS, "G graph", 6}}, .help_key = "G",
     .help = "history pane: the selected row's share (or section's mean time), the last minutes"},
    {.keys = {'t'}, .screens = LISTS & ~ON(VM_SECTIONS), .run = open_sections, .hints = {{VM_TOP, "t sections", 8}},
     .help_key = "t", .help = "section timings (u: microseconds or timer ticks); OVER/LIMIT (wide: OVER BUDGET): the runs "
                              "longer than the section's --budget NAME=US, and that limit in the columns' unit (? with no clock)"},
    {.keys = {'t'}, .screens = ON(VM_SECTIONS), .run = close_sections, .hints = {{VM_SECTIONS, "t/Esc back", 1}}},
    {.keys = {'u'}, .screens = LISTS, .run = toggle_ticks, .hints = {{VM_SECTIONS, "u \u00b5s/ticks", 5}}},
    {.keys = {'l'}, .screens = LISTS & ~ON(VM_LOG), .run = open_log, .hints = {{VM_TOP, "l log", 13}}, .help_key = "l",
     .help = "the firmware's log lines"},
    {.keys = {'l'}, .screens = ON(VM_LOG), .run = close_log},
    {.keys = {'d'}, .screens = LISTS, .run = open_diag, .hints = {{VM_TOP, "d diag", 11}}, .help_key = "d",
     .help = "diagnostics"},
    {.keys = {'q', 'Q', VK_F10}, .screens = EVERY, .run = quit,
     .hints = {{VM_TOP, "q quit", 1}, {VM_SOURCE, "q quit", 2}, {VM_SECTIONS, "q quit", 2}, {VM_CALLS, "q quit", 2}},
     .help_key = "q F10", .help = "quit"},
    {.keys = {VK_RESIZE}, .screens = EVERY, .run = redraw},
    {.keys = {KEY_ANY}, .screens = PAGES, .run = leave_page},
};
#define N_BINDINGS (sizeof bindings / sizeof *bindings)

static const struct binding *binding_for(const struct view *v, int key)
{
    for (size_t i = 0; i < N_BINDINGS; i++) {
        if (!(bindings[i].screens & ON(v->mode)))
            continue;
        for (const int *k = bindings[i].keys; *k; k++)
            if (*k == key || *k == KEY_ANY)
                return &bindings[i];
    }
    return NULL;
}

int view_key_hints(const struct view *v, struct view_hint *out, int max)
{
    int n = 0;
    enum view_mode bar = screens[v->mode].bar;
    for (size_t i = 0; i < N_BINDINGS; i++)
        for (size_t h = 0; h < sizeof bindings[i].hints / sizeof *bindings[i].hints; h++)
            if (bindings[i].hints[h].text && bindings[i].hints[h].bar == (int)bar && n < max)
                out[n++] = bindings[i].hints[h];
    return n;
}

/* "table, CSV, JSON, folded or speedscope" */
static void format_names(char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; SAVE_FORMAT(i) && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i == 0 ? "" : SAVE_FORMAT(i + 1) ? ", " : " or ",
                                 SAVE_FORMAT(i)->label);
}

int view_key_help(char (*para)[512], int cap)
{
    int n = 0;
    for (size_t i = 0; i < N_BINDINGS && n < cap; i++) {
        const struct binding *k = &bindings[i];
        if (!k->help)
            continue;
        /* the text from column 15, or three spaces after a key too long for the column */
        int pad = vb_columns(k->help_key) < 13 ? 13 - vb_columns(k->help_key) : 3;
        const char *formats = strstr(k->help, "{formats}");
        char names[128] = "";
        if (formats)
            format_names(names, sizeof names);
        snprintf(para[n++], 512, "  %s%*s%.*s%s%s", k->help_key, pad, "", formats ? (int)(formats - k->help) : 512,
                 k->help, names, formats ? formats + strlen("{formats}") : "");
    }
    return n;
}

/* ---- prompts ------------------------------------------------------------------------------------ */

static const char *const prompt_hints[] = {
    [VP_FILTER] = "   (function, file or task; Enter keeps it, Esc clears it)",
    [VP_SEARCH] = "   (search these lines; Enter finds, n/N repeat, Esc cancels)",
};

static char *prompt_text(struct view *v)
{
    return v->prompt == VP_FILTER ? v->filter : v->search;
}

/* F6's list: each order the top list has, the one under the cursor in brackets. */
static void sort_menu_line(const struct view *v, char *line, size_t len)
{
    static const char *const names[] = {"% share", "\u00b1% interval", "name", "base%", "change"};
    size_t used = (size_t)snprintf(line, len, " sort by:");
    for (int i = 0; i < view_sort_columns(v) && used < len; i++)
        used += (size_t)snprintf(line + used, len - used, i == v->sort_pick ? " [%s]" : "  %s ", names[i]);
    if (used < len)
        snprintf(line + used, len - used, "   (\u2190\u2192 choose, Enter sorts, I reverses, Esc: no)");
}

/* F6's list open: arrows (and < >) move, Enter sorts by the choice, I reverses it, Esc leaves. */
static int sort_menu_key(struct view *v, int key)
{
    int n = view_sort_columns(v);
    if (key == VK_LEFT || key == VK_UP || key == '<')
        v->sort_pick = (v->sort_pick + n - 1) % n;
    else if (key == VK_RIGHT || key == VK_DOWN || key == '>' || key == VK_F6)
        v->sort_pick = (v->sort_pick + 1) % n;
    else if (key == 'I')
        v->sort_reverse = !v->sort_reverse;
    else if (key == VK_ENTER)
        v->sort = v->sort_pick, v->sort_menu = false;
    else if (key == VK_ESC || key == 'q' || key == VK_F10)
        v->sort_menu = false;
    return VIEW_REDRAW;
}

bool view_prompt_line(const struct view *v, char *line, size_t len)
{
    if (v->sort_menu) {
        sort_menu_line(v, line, len);
        return true;
    }
    if (v->saving) {
        char lines[1][VIEW_PROMPT_LEN];
        view_save_prompt(1 << 20, lines, 1);
        snprintf(line, len, "%s", lines[0]);
        return true;
    }
    if (v->prompt == VP_NONE)
        return false;
    snprintf(line, len, "/%s_%s", prompt_text((struct view *)v), prompt_hints[v->prompt]); /* as in less */
    return true;
}

int view_save_prompt(int width, char (*lines)[VIEW_PROMPT_LEN], int max)
{
    char one[VIEW_PROMPT_LEN];
    size_t used = (size_t)snprintf(one, sizeof one, " save a snapshot as:");
    for (size_t i = 0; SAVE_FORMAT(i) && used < sizeof one; i++)
        used += (size_t)snprintf(one + used, sizeof one - used, "%s%c %s", i ? "  " : " ", SAVE_FORMAT(i)->key,
                                 SAVE_FORMAT(i)->label);
    if (used < sizeof one)
        snprintf(one + used, sizeof one - used, "   (Esc: no)");
    if (max < 1)
        return 0;
    if (vb_columns(one) <= width || max < 2) {
        snprintf(lines[0], VIEW_PROMPT_LEN, "%s", one);
        return 1;
    }
    snprintf(lines[0], VIEW_PROMPT_LEN, "%s", width >= 31 ? " save a snapshot as (Esc: no):" : " save as (Esc: no):");
    int n = 1;
    lines[1][0] = '\0';
    for (size_t i = 0; SAVE_FORMAT(i); i++) { /* greedily, two spaces apart, a format never split */
        char entry[64];
        snprintf(entry, sizeof entry, "%c %s", SAVE_FORMAT(i)->key, SAVE_FORMAT(i)->label);
        int at = vb_columns(lines[n]);
        if (at > 0 && at + 2 + vb_columns(entry) > width) {
            if (n + 1 == max)
                break; /* no room for another line: the formats after are left out */
            lines[++n][0] = '\0';
            at = 0;
        }
        snprintf(lines[n] + strlen(lines[n]), VIEW_PROMPT_LEN - strlen(lines[n]), "%s%s", at ? "  " : " ", entry);
    }
    return n + 1;
}

/* Key o asked for a format: one of the formats' keys picks it, any other cancels. */
static int save_key(struct view *v, int key)
{
    v->saving = false;
    if (report_format_of_key(key) >= 0) {
        v->save_format = key;
        return VIEW_SAVE | VIEW_REDRAW;
    }
    snprintf(v->note, sizeof v->note, "snapshot cancelled");
    return VIEW_REDRAW;
}

_Static_assert(sizeof ((struct view *)0)->filter == sizeof ((struct view *)0)->search, "one prompt, one length");

/* A line being typed, the filter's or the search's: printable keys add to it, Backspace takes the
 * last off, Enter keeps it and Esc empties it, both closing the prompt. */
static int prompt_key(struct view *v, int key)
{
    char *text = prompt_text(v);
    size_t n = strlen(text), cap = sizeof v->filter; /* the search's is as long */
    enum view_prompt p = (enum view_prompt)v->prompt;
    if (key == VK_ENTER || key == VK_ESC) {
        v->prompt = VP_NONE;
        if (key == VK_ESC)
            text[0] = '\0';
        else if (p == VP_SEARCH && !view_search(v, 1) && text[0])
            snprintf(v->note, sizeof v->note, "not found: %s", text);
    } else if (key == VK_BACKSPACE) {
        if (n)
            text[n - 1] = '\0';
    } else if (key >= 0x20 && key < 0x7F && n + 1 < cap) {
        text[n] = (char)key;
        text[n + 1] = '\0';
        if (p == VP_FILTER)
            v->sel = 0; /* the rows change under the selection */
    }
    return VIEW_REDRAW;
}

int view_key(struct view *v, int key)
{
    if (key != VK_RESIZE)
        v->note[0] = v->note_path[0] = '\0'; /* a note stays until the next key */
    if (v->saving)
        return save_key(v, key);
    if (v->sort_menu)
        return sort_menu_key(v, key);
    if (v->prompt != VP_NONE)
        return prompt_key(v, key);
    const struct binding *k = binding_for(v, key);
    if (!k && key > 0 && key != VK_RESIZE) { /* say so, as htop's unbound keys do not */
        snprintf(v->note, sizeof v->note, "no such key here: ? for help");
        return VIEW_REDRAW;
    }
    int flags = k ? k->run(v, key) : 0;
    if ((flags & REFREEZE) && v->frozen)
        view_freeze(v);
    return flags & ~REFREEZE;
}
