/* What the view's files share inside the view (view.c: state, keys, header; screen_*.c: one
 * screen each). Not for callers of the view: they use view.h. */
#ifndef CMPROF_TUI_VIEW_INT_H
#define CMPROF_TUI_VIEW_INT_H

#include "view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* rows */
/* The --diff baseline when it is grouped as the view is now, else NULL: rows of another grouping
 * would all look new. */
const struct baseline *view_baseline(const struct view *v);
struct prof *view_current_prof(struct view *v);                            /* cumulative, or the window */
size_t view_top_rows(struct view *v, const struct prof_row **out);         /* after freeze, filter, sort */
const char *view_sort_label(const struct view *v);
const struct history *view_history(const struct view *v);                  /* the sparklines' (frozen too) */                         /* "share", "name", ... */
const char *view_shown_name(const struct view *v, const char *name);       /* demangled when asked */
/* A function's name as shown, with the GCC copies it stands for noted after it in note_attr:
 * "crc32 [constprop]" (a source function with clones), "crc32 [constprop.1]" (a row named by a
 * clone's symbol, when there is no DWARF). Returns the next x. */
int view_put_function(struct view *v, struct vbuf *b, int x, int y, uint8_t attr, uint8_t note_attr, const char *name);
void view_clamp_scroll(struct view *v, int n, int rows);
const char *view_base_name(const char *path);
/* A path in `width` columns: normalized, and when too long its end from a directory on ("..."). */
const char *view_fit_path(const char *path, int width, char *buf, size_t len);
bool view_contains(const char *s, const char *what); /* ignoring case */
/* sections */
double view_section_hz(const struct view *v);
const struct view_budget *view_budget_for(const struct view *v, int index, const char *name);
/* the drill-down (screen_source.c) */
void view_enter_function(struct view *v, const char *name);
void view_step_into(struct view *v);
void view_free_source(struct view *v);
/* The drill-down's title row: the function, the ones drilled through while room is left, then
 * stats and file, each whole or not at all. */
void view_title(struct view *v, struct vbuf *b, int y, const char *stats, const char *file);
/* annotate (screen_annotate.c): rows built on entry, freed with the source */
struct annot_row {
    uint32_t addr;   /* an instruction, or 0 for a source line */
    uint32_t line;   /* the source line (both kinds) */
    char *text;      /* the instruction, or the source text (file:line when the source is not at hand) */
};
void view_build_annotate(struct view *v);
void view_annotate_on(struct view *v); /* build, and select the hottest instruction */
void view_load_disasm(struct view *v, uint32_t lo, uint32_t hi); /* kept while the range is the same */
void view_free_annotate(struct view *v);
void view_render_annotate(struct view *v, struct vbuf *b, int y0);
/* search in the drill-down: the next (dir 1) or previous (-1) row after the selection whose text
 * contains v->search, ignoring case; false when there is none */
bool view_search(struct view *v, int dir);
/* the screens */
void view_render_rows(struct view *v, struct vbuf *b, int y0, const struct prof_row *rows, size_t n, bool lines);
void view_render_top(struct view *v, struct vbuf *b, int y0);
void view_render_source(struct view *v, struct vbuf *b, int y0);
void view_render_sections(struct view *v, struct vbuf *b, int y0);
void view_render_log(struct view *v, struct vbuf *b, int y0);
void view_render_help(struct view *v, struct vbuf *b, int y0);
void view_render_diag(struct view *v, struct vbuf *b, int y0);
void view_render_calls(struct view *v, struct vbuf *b, int y0);
/* the history pane under the top or sections table (key G), `height` rows from y */
void view_render_graph(struct view *v, struct vbuf *b, int y, int height);
int view_calls_count(struct view *v);
void view_calls_follow(struct view *v); /* Enter: the selected caller or callee's own calls */
int view_help_count(void);

#endif
