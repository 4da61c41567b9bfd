/* The view's inside, for its own files; callers of the view use view.h. The layers, each using only
 * those above it: rows.c, table.c, budgets.c and drill.c (the state every screen reads); the
 * screen_*.c files (one screen each, none using another); keys.c (the key table: bindings, key
 * bar hints and help lines); view.c (header, key bar, which screen draws). */
#ifndef CMPROF_TUI_VIEW_INT_H
#define CMPROF_TUI_VIEW_INT_H

#include "view.h"

#include "../base/path.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* rows.c: the rows as the keys chose them */
/* The --diff baseline when it is grouped as the view is now, else NULL: rows of another grouping
 * would all look new. */
const struct baseline *view_baseline(const struct view *v);
struct prof *view_current_prof(struct view *v);                            /* cumulative, or the window */
size_t view_top_rows(struct view *v, const struct prof_row **out);         /* after freeze, filter, sort */
const char *view_sort_label(const struct view *v);                         /* "share", "name", ... */
int view_sort_columns(const struct view *v);                               /* how many orders < and > cycle */
bool view_sort_descending(const struct view *v);                           /* the order shown, largest first */
const char *view_group_label(enum prof_group g);                           /* "function", "line", ... */
void view_freeze(struct view *v);                                          /* the rows and sparklines now */
const struct history *view_history(const struct view *v);                  /* the sparklines' (frozen too) */
/* g or i changed the grouping: the old one's history is kept, the new one's comes back. */
void view_switch_history(struct view *v, enum prof_group old_group, bool old_inline);
const char *view_shown_name(const struct view *v, const char *name);       /* demangled when asked */
void view_clamp_scroll(struct view *v, int n, int rows);
/* A path in `width` columns: normalized, and when too long its end from a directory on ("..."). */
const char *view_fit_path(const char *path, int width, char *buf, size_t len);
bool view_contains(const char *s, const char *what); /* ignoring case */
int view_calls_count(struct view *v);   /* the call screen's rows: callers, then callees */
void view_calls_follow(struct view *v); /* Enter there: the selected caller or callee's own calls */

/* table.c: what more than one screen draws */
/* A function's name as shown, with the GCC copies it stands for noted after it in note_attr:
 * "crc32 [constprop]" (a source function with clones), "crc32 [constprop.1]" (a row named by a
 * clone's symbol, when there is no DWARF). Returns the next x. */
int view_put_function(struct view *v, struct vbuf *b, int x, int y, uint8_t attr, uint8_t note_attr, const char *name);
/* The table of rows; returns the columns it had room for, VIEW_SHOWN_BAR | VIEW_SHOWN_CI (narrow: neither),
 * so that a legend names only what is on the screen. */
#define VIEW_SHOWN_BAR 1u
#define VIEW_SHOWN_CI 2u
unsigned view_render_rows(struct view *v, struct vbuf *b, int y0, const struct prof_row *rows, size_t n, bool lines);
/* The drill-down's title row: the function, the ones drilled through while room is left, then
 * stats and file, each whole or not at all. */
void view_title(struct view *v, struct vbuf *b, int y, const char *stats, const char *file);

/* budgets.c: section timings */
double view_section_hz(const struct view *v);
int view_section_time(char *buf, size_t len, double value, bool us, int width);
const struct view_budget *view_budget_for(const struct view *v, int index, const char *name);
void view_reset_sections(struct view *v); /* key r in the section view */

/* drill.c: the drill-down */
struct annot_row {   /* annotate's rows, built on entry and freed with the source */
    uint32_t addr;   /* an instruction, or 0 for a source line */
    uint32_t line;   /* the source line (both kinds) */
    char *text;      /* the instruction, or the source text (file:line when the source is not at hand) */
    bool heading;    /* instead: the name of the symbol whose instructions follow (f, then f.cold) */
};
struct code_piece {  /* a function's code in one place: an ELF symbol's [lo, hi), or sampled span */
    uint32_t lo, hi;
    const char *symbol; /* NULL for a span of samples */
};
void view_enter_function(struct view *v, const char *name);
void view_step_into(struct view *v);
void view_drill_back(struct view *v);      /* Esc: the function drilled from */
void view_toggle_annotate(struct view *v); /* key a */
void view_free_source(struct view *v);
/* search in the drill-down: the next (dir 1) or previous (-1) row after the selection whose text
 * contains v->search, ignoring case; false when there is none */
bool view_search(struct view *v, int dir);

/* the screens: each draws from row y0 down to the key bar */
void view_render_top(struct view *v, struct vbuf *b, int y0);
void view_render_source(struct view *v, struct vbuf *b, int y0);
void view_render_annotate(struct view *v, struct vbuf *b, int y0);
void view_render_sections(struct view *v, struct vbuf *b, int y0);
void view_render_log(struct view *v, struct vbuf *b, int y0);
void view_render_help(struct view *v, struct vbuf *b, int y0);
void view_render_diag(struct view *v, struct vbuf *b, int y0);
void view_render_calls(struct view *v, struct vbuf *b, int y0);
/* the history pane under the top or sections table (key G), `height` rows from y */
void view_render_graph(struct view *v, struct vbuf *b, int y, int height);

/* keys.c: the key table */
enum view_prompt { VP_NONE, VP_FILTER, VP_SEARCH }; /* the line being typed (struct view's prompt) */
struct view_hint {   /* a key on the bottom bar */
    int bar;         /* the screen whose bar shows it (VM_TOP: the top list, log, help, diagnostics) */
    const char *text;
    int rank;        /* the lower, the longer it stays as the terminal narrows */
};
/* The current screen's key bar hints, in the table's order; returns how many (at most max). */
int view_key_hints(const struct view *v, struct view_hint *out, int max);
/* The bottom line while a prompt is open (the filter, the search, the snapshot's format); false
 * when none is. */
bool view_prompt_line(const struct view *v, char *line, size_t len);
/* Key o's prompt in lines of at most width columns, top first (at most max): one line when it fits,
 * else a heading over the formats, as many to a line as fit. Returns how many. */
#define VIEW_PROMPT_LEN 512
int view_save_prompt(int width, char (*lines)[VIEW_PROMPT_LEN], int max);
/* The help page's key lines as paragraphs ("  Enter        drill into ..."); returns how many. */
int view_key_help(char (*para)[512], int cap);

#endif
