/* The live view's logic: state, key handling, and rendering into a cell buffer. No terminal
 * calls here (tui.c draws the buffer), so every screen can be tested headlessly. */
#ifndef CMPROF_TUI_VIEW_H
#define CMPROF_TUI_VIEW_H

#include "../profile/ingest.h"
#include "../profile/profile.h"
#include "draw.h"
#include "history.h"

#include <stdbool.h>
#include <stdint.h>

/* Keys: printable characters as themselves, the rest here. */
enum {
    VK_UP = 0x110000, VK_DOWN, VK_LEFT, VK_RIGHT, VK_PGUP, VK_PGDN, VK_HOME, VK_END, VK_ENTER, VK_ESC,
    VK_BACKSPACE, VK_F1, VK_WHEEL_UP, VK_WHEEL_DOWN, VK_RESIZE, VK_F6, VK_F10
};
#define VIEW_REDRAW 1
#define VIEW_QUIT 2
#define VIEW_SAVE 4 /* write a snapshot in v->save_format: the caller does the I/O */

/* The top list's orders: one per column (SAMPLES and the bar sort as % does); each has its natural
 * direction (names A to Z, the figures largest first), which key I reverses. */
enum view_sort { VS_SHARE, VS_CI, VS_NAME, VS_BASE, VS_CHANGE };

enum view_mode { VM_TOP, VM_SOURCE, VM_SECTIONS, VM_LOG, VM_HELP, VM_DIAG, VM_CALLS };

#define VIEW_LOG_LINES 200
#define VIEW_BUDGETS 16

struct view_budget {
    char name[32];
    double us;
};

struct view_status {          /* what the main loop tells the view about the outside */
    const char *source;        /* name of the source */
    const char *state;         /* "connected", "reconnecting: ...", "end of file" */
    const char *elf;
    const char *elf_warning;   /* from symbols, or "" */
    double elapsed;            /* seconds since start */
    double rate;               /* samples per second, recent */
    double quiet_s;            /* a firmware stream, connected: seconds since its last sample (0: flowing) */
    double last_sample_s;      /* ... when that was, in seconds since start */
    int starved_from;          /* enum starved_from: what can keep samples away from this source */
    const char *gaps;          /* the source went away and came back: how often, how long, why; "" never */
    int rate_of;               /* enum view_rate: what `rate` measures */
    bool elf_changed;          /* the ELF changed on disk since it was read (elf_warning says how) */
    const char *ended;         /* the source ended: why, when and what was counted (the diagnostics page); "" or NULL while it runs */
};
/* A stream's samples/s is the firmware's rate; a file's is how fast the host reads it, and once it is
 * read there is none. */
enum view_rate { VIEW_RATE_STREAM, VIEW_RATE_FILE_READING, VIEW_RATE_FILE_READ };

struct view {
    struct prof *prof;         /* cumulative */
    struct prof *window;       /* the last complete window (window mode) */
    struct ingest *in;
    struct sym_table *syms;
    enum view_mode mode, back; /* back: where Esc returns from help, log, diagnostics */
    enum prof_group group;
    bool inline_frames;
    bool fold_overhead;        /* the library's code as one row (key O, --fold-overhead) */
    const struct baseline *base; /* --diff: each row's change against this report, or NULL */
    bool saving;               /* key o: asking for the snapshot's format */
    int saved_sel;             /* the selection under the help page, which scrolls with it */
    int help_rows;             /* the help's lines at the width last drawn: how far it scrolls */
    int diag_top, diag_page;   /* the diagnostics page: its first line shown; its rows last drawn */
    struct history *kept;      /* every grouping's, ticked as well (by group and inline): g and i keep them */
    struct history *frozen_history; /* the sparklines as they were at space: frozen with the rows */
    int save_format;           /* chosen: 't'able, 'c'sv, 'j'son, 'f'olded, 's'peedscope */
    char save_dir[4096];       /* where key o saves, in full: the save prompt says it ("": not known) */
    char note[200];            /* a short message for the user (where a snapshot went), "" when none */
    char note_path[4096];      /* a path after the note (that directory), its end kept when narrow */
    bool demangle;          /* C++/Rust names demangled (key C) */
    int sort;                  /* the top list's order: enum view_sort (keys s, < >, F6) */
    bool sort_reverse;         /* key I: against the order's natural direction */
    bool sort_menu;            /* F6: picking the order from a list at the bottom */
    int sort_pick;             /* ... the one under the cursor there */
    bool frozen;
    bool window_mode;
    bool graph;                /* key G: the history pane under the top and sections tables */
    double window_seconds;
    int prompt;                /* a line being typed at the bottom: enum view_prompt (view_int.h) */
    char filter[64];
    int sel, top;              /* selection and scroll in the current list */
    /* the call screen (key c): its function */
    char calls_func[128];
    /* drill-down */
    char func[128];
    uint32_t enter_at;         /* a call's target while entering its function: lines when it has no samples */
    char stack[8][128];        /* functions drilled through, for Esc */
    int depth;
    char **src_lines;          /* the function's source file, or NULL */
    int n_src_lines;
    int src_first, src_n;      /* the function's own lines: src_lines[src_first .. + src_n) */
    char src_path[512];
    char src_missing[600];     /* why the source is not shown */
    char **disasm;             /* address view: objdump text per halfword from disasm_lo, or NULL */
    uint32_t disasm_lo, disasm_n;
    const char *source_dir;    /* --source-dir */
    bool annotate;             /* key a in the drill-down: instructions under their source lines */
    int annot_depth;           /* the drill-down's depth where key a turned it on: Esc there goes back to lines */
    struct annot_row *annot;
    int annot_n;
    char search[64];           /* the drill-down's search (/ there; n, N repeat it) */
    /* sections */
    double cpu_hz;             /* --cpu-hz, or 0: the clock the stream announces */
    struct view_budget budgets[VIEW_BUDGETS];
    int n_budgets;
    uint64_t budget_violations[32];
    uint64_t seen_count[32];
    uint64_t seen_max[32];      /* the max at the last report looked at: a new max is a new run */
    bool ticks;                 /* section view: timer ticks instead of microseconds (key u) */
    double sect_reset_at;       /* elapsed time of the section view's last r */
    /* section reset (the link is one-way: the host keeps a baseline) */
    bool sect_reset[32];
    /* the header's counters and clock as they were at the last r: shown relative to it */
    uint64_t base_bad, base_overflows, base_syncs, base_lost;
    double base_elapsed;
    uint64_t sect_base_count[32], sect_base_sum[32], sect_min[32], sect_max[32];
    /* log */
    char *log[VIEW_LOG_LINES];
    int log_head, log_n;
    bool color, unicode;
    struct view_status st;
    /* frozen rows */
    struct prof_row *snap;
    size_t n_snap;
    char *snap_names;
    /* last, the histories: view_init clears their heads only, their seconds stay untouched memory
     * until recorded */
    struct history history;    /* each top row's share, second by second: the sparklines */
    struct section_history sect_history; /* each section's mean time, second by second */
};

void view_init(struct view *v, struct prof *prof, struct prof *window, struct ingest *in, struct sym_table *syms);
void view_free(struct view *v);
int view_key(struct view *v, int key);
void view_render(struct view *v, struct vbuf *b);
void view_log(struct view *v, const char *text, size_t len);
/* Call when new section statistics arrive, to count budget violations. */
void view_check_budgets(struct view *v);
/* Once a second: the rows' shares of what arrived since the last call, for the sparklines. */
void view_tick(struct view *v);
/* "NAME=US": a section budget in microseconds. Returns 0, or -1 for a malformed one. */
int view_add_budget(struct view *v, const char *spec);

#endif
