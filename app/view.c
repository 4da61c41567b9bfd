/* The live view: key handling and rendering into a cell buffer. */
#include "view.h"

#include "baseline.h"

#include "../profile/escape.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the cell buffer --------------------------------------------------------------------- */

int vbuf_resize(struct vbuf *b, int w, int h)
{
    if (w < 1 || h < 1)
        return -1;
    struct vcell *c = realloc(b->cells, (size_t)w * (size_t)h * sizeof *c);
    if (!c)
        return -1;
    b->cells = c;
    b->w = w;
    b->h = h;
    return 0;
}

void vbuf_free(struct vbuf *b)
{
    free(b->cells);
    b->cells = NULL;
    b->w = b->h = 0;
}

static size_t utf8_put(char *out, uint32_t c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | c >> 12);
    out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (char)(0x80 | (c & 0x3F));
    return 3;
}

size_t vbuf_text(const struct vbuf *b, char *out, size_t cap)
{
    size_t n = 0;
    for (int y = 0; y < b->h; y++) {
        int last = b->w - 1;
        while (last >= 0 && b->cells[y * b->w + last].ch == ' ')
            last--;
        for (int x = 0; x <= last && n + 4 < cap; x++)
            n += utf8_put(out + n, b->cells[y * b->w + x].ch);
        if (n + 1 < cap)
            out[n++] = '\n';
    }
    if (cap)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

static void clear(struct vbuf *b)
{
    for (int i = 0; i < b->w * b->h; i++)
        b->cells[i] = (struct vcell){' ', VA_NORMAL};
}

static void fill_attr(struct vbuf *b, int y, uint8_t attr)
{
    if (y < 0 || y >= b->h)
        return;
    for (int x = 0; x < b->w; x++)
        b->cells[y * b->w + x].attr = attr;
}

/* Put UTF-8 text at (x, y); returns the column after it. Control characters become '?'. */
static int put(struct vbuf *b, int x, int y, uint8_t attr, const char *s)
{
    if (y < 0 || y >= b->h)
        return x;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && x < b->w) {
        size_t k = esc_char_len((const char *)p); /* names are untrusted: no control byte reaches the screen */
        uint32_t c = *p;
        if (k == 0 || k == 4) /* a cell holds the BMP only */
            c = '?';
        else if (k == 2)
            c = (c & 0x1F) << 6 | (p[1] & 0x3F);
        else if (k == 3)
            c = (c & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
        p += k ? k : 1;
        if (x >= 0)
            b->cells[y * b->w + x] = (struct vcell){c, attr};
        x++;
    }
    return x;
}

static int putf(struct vbuf *b, int x, int y, uint8_t attr, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return put(b, x, y, attr, buf);
}

static void putc_at(struct vbuf *b, int x, int y, uint32_t ch, uint8_t attr)
{
    if (x >= 0 && x < b->w && y >= 0 && y < b->h)
        b->cells[y * b->w + x] = (struct vcell){ch, attr};
}

/* A share bar of `width` cells with the 95 % interval marked: eighth blocks for the share, the
 * interval's cells in VA_CI ('░' where empty). ASCII: '#', and '-' for the interval. */
/* A share as a bar, its 95 % interval [lo, hi] shaded around the bar's end. Every cell the
 * interval touches is shaded, so even a thin interval shows as one cell at any width. */
static void bar(struct vbuf *b, int x, int y, int width, double share, double lo, double hi, bool unicode)
{
    static const uint32_t eighths[] = {' ', 0x258F, 0x258E, 0x258D, 0x258C, 0x258B, 0x258A, 0x2589, 0x2588};
    for (int i = 0; i < width; i++) {
        double c0 = (double)i / width, c1 = (double)(i + 1) / width;
        double fill = (share - c0) / (c1 - c0);
        uint32_t ch = ' ';
        if (fill >= 1)
            ch = unicode ? 0x2588 : '#';
        else if (fill > 0)
            ch = unicode ? eighths[(int)(fill * 8)] : (fill >= 0.5 ? '#' : ' ');
        bool in_ci = hi > lo && hi > c0 && lo < c1;
        uint8_t attr = in_ci ? VA_CI : VA_BAR;
        if (ch == ' ' && in_ci)
            ch = unicode ? 0x2591 : '-';
        putc_at(b, x + i, y, ch, attr);
    }
}

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

static void free_source(struct view *v)
{
    for (int i = 0; i < v->n_src_lines; i++)
        free(v->src_lines[i]);
    free(v->src_lines);
    v->src_lines = NULL;
    v->n_src_lines = 0;
    for (uint32_t i = 0; i < v->disasm_n; i++)
        free(v->disasm[i]);
    free(v->disasm);
    v->disasm = NULL;
    v->disasm_n = 0;
}

/* Disassembly of [lo, hi) with arm-none-eabi-objdump, when it is installed, for the address view. */
static void load_disasm(struct view *v, uint32_t lo, uint32_t hi)
{
    if (!v->st.elf || hi <= lo || hi - lo > 65536)
        return;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "arm-none-eabi-objdump -d --start-address=0x%x --stop-address=0x%x '%s' 2>/dev/null",
             lo, hi, v->st.elf);
    FILE *f = popen(cmd, "r");
    if (!f)
        return;
    v->disasm_n = (hi - lo) / 2;
    v->disasm_lo = lo;
    v->disasm = calloc(v->disasm_n, sizeof *v->disasm);
    char line[512];
    while (v->disasm && fgets(line, sizeof line, f)) {
        unsigned addr;
        char *tab;
        if (sscanf(line, " %x:", &addr) != 1 || !(tab = strchr(line, '\t')) || !(tab = strchr(tab + 1, '\t')))
            continue;
        tab[strcspn(tab, "\n")] = '\0';
        for (char *q = tab; *q; q++)
            if (*q == '\t')
                *q = ' ';
        if (addr >= lo && addr < hi && !v->disasm[(addr - lo) / 2])
            v->disasm[(addr - lo) / 2] = strdup(tab + 1);
    }
    pclose(f);
}

void view_free(struct view *v)
{
    free_source(v);
    for (int i = 0; i < VIEW_LOG_LINES; i++)
        free(v->log[i]);
    free(v->snap);
    free(v->snap_names);
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

static double section_hz(const struct view *v)
{
    if (v->cpu_hz > 0)
        return v->cpu_hz;
    if (v->in->info.present && v->in->info.section_hz)
        return (double)v->in->info.section_hz;
    if (v->in->info.present && v->in->info.clock_hz)
        return (double)v->in->info.clock_hz;
    return 0;
}

static const struct view_budget *budget_for(const struct view *v, int index, const char *name)
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
    double hz = section_hz(v);
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
        const struct view_budget *bu = budget_for(v, i, s->name);
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
static const char *shown_name(const struct view *v, const char *name)
{
    return v->demangle && v->group == PROF_BY_FUNCTION ? sym_demangle(v->syms, name) : name;
}

static bool contains(const char *s, const char *what)
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
    return !v->filter[0] || contains(name, v->filter) || contains(file, v->filter);
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

static struct prof *current_prof(struct view *v)
{
    return v->window_mode && v->window ? v->window : v->prof;
}

/* The current profile's rows in the chosen grouping (the library's code as one row when folded). */
static size_t grouped_rows(struct view *v, const struct prof_row **rows)
{
    struct prof *p = current_prof(v);
    prof_fold_overhead(p, v->fold_overhead);
    return prof_rows(p, v->group, v->inline_frames, rows);
}

/* The rows of the top list, after freeze, filter and sort. Owned by the view or the profile. */
static size_t top_rows(struct view *v, const struct prof_row **out)
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
    if (n > cap) {
        struct prof_row *f = realloc(filtered, n * sizeof *f);
        if (!f)
            return 0;
        filtered = f;
        cap = n;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (matches(v, shown_name(v, rows[i].name), rows[i].file))
            filtered[k++] = rows[i];
    if (v->sort_by_name && k)
        qsort(filtered, k, sizeof *filtered, cmp_name);
    *out = filtered;
    return k;
}

static void freeze(struct view *v)
{
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

/* ---- drill-down -------------------------------------------------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : (p ? p : "");
}

static void load_source(struct view *v, const char *path)
{
    free_source(v);
    v->src_missing[0] = '\0';
    char tried[512];
    snprintf(tried, sizeof tried, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f && v->source_dir) { /* remap: SOURCE_DIR + the path's last components */
        const char *tail = path;
        for (const char *p = path; *p && !f; p++) {
            if (*p != '/')
                continue;
            tail = p + 1;
            snprintf(tried, sizeof tried, "%s/%s", v->source_dir, tail);
            f = fopen(tried, "r");
        }
    }
    if (!f) {
        snprintf(v->src_missing, sizeof v->src_missing, "source not found: %s%s", path,
                 v->source_dir ? " (nor under --source-dir)" : " (try --source-dir)");
        return;
    }
    snprintf(v->src_path, sizeof v->src_path, "%s", tried);
    char line[1024];
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; *p; p++)
            if (*p == '\t')
                *p = ' ';
        if (v->n_src_lines == cap) {
            cap = cap ? cap * 2 : 256;
            char **l = realloc(v->src_lines, (size_t)cap * sizeof *l);
            if (!l)
                break;
            v->src_lines = l;
        }
        v->src_lines[v->n_src_lines++] = strdup(line);
    }
    fclose(f);
}

static void enter_function(struct view *v, const char *name)
{
    if (v->mode == VM_SOURCE && v->depth < 8)
        snprintf(v->stack[v->depth++], sizeof v->stack[0], "%s", v->func);
    else if (v->mode != VM_SOURCE)
        v->depth = 0;
    snprintf(v->func, sizeof v->func, "%s", name);
    v->mode = VM_SOURCE;
    const struct prof_row *rows;
    size_t n = prof_rows_of(v->prof, PROF_BY_LINE, v->inline_frames, v->func, &rows);
    const char *file = NULL;
    uint32_t hottest = 0;
    double best = -1;
    for (size_t i = 0; i < n; i++)
        if (rows[i].file && rows[i].samples > best) {
            best = rows[i].samples;
            file = rows[i].file;
            hottest = rows[i].line;
        }
    free_source(v);
    if (file) {
        load_source(v, file);
    } else {
        snprintf(v->src_missing, sizeof v->src_missing, "no line information for %s", name);
    }
    if (!v->n_src_lines) { /* the address view shows the instructions */
        const struct prof_row *ar;
        size_t na = prof_rows_of(v->prof, PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
        uint32_t lo = UINT32_MAX, hi = 0;
        for (size_t i = 0; i < na; i++) {
            uint32_t a = (uint32_t)strtoul(ar[i].name, NULL, 16);
            lo = a < lo ? a : lo;
            hi = a > hi ? a : hi;
        }
        if (na)
            load_disasm(v, lo & ~1u, hi + 4);
        v->sel = v->top = 0;
        return;
    }
    /* the function's own lines: from its signature above the first sampled line down to the
     * closing brace below the last one (C: a line that starts with "}") */
    int lo = v->n_src_lines, hi = -1;
    for (size_t i = 0; i < n; i++)
        if (rows[i].file && strcmp(base_name(rows[i].file), base_name(v->src_path)) == 0 && rows[i].line >= 1 &&
            (int)rows[i].line <= v->n_src_lines) {
            lo = (int)rows[i].line - 1 < lo ? (int)rows[i].line - 1 : lo;
            hi = (int)rows[i].line - 1 > hi ? (int)rows[i].line - 1 : hi;
        }
    if (hi < 0) { /* no line of this file sampled: the whole file */
        lo = 0;
        hi = v->n_src_lines - 1;
    } else {
        size_t nl = strlen(name);
        for (int k = lo; k >= 0 && k > lo - 400; k--) {
            const char *at = strstr(v->src_lines[k], name);
            if (at && (at == v->src_lines[k] || !(isalnum((unsigned char)at[-1]) || at[-1] == '_')) &&
                (at[nl] == '(' || at[nl] == ' ' || at[nl] == ',' || at[nl] == '\0')) {
                lo = k;
                while (lo > 0 && v->src_lines[lo - 1][0] && !strchr(";}{#", v->src_lines[lo - 1][0]) &&
                       !strstr(v->src_lines[lo - 1], "*/") && lo > k - 3)
                    lo--; /* a return type or attributes on the lines above the name */
                break;
            }
        }
        for (int k = hi; k < v->n_src_lines && k < hi + 2000; k++)
            if (v->src_lines[k][0] == '}') {
                hi = k;
                break;
            }
    }
    v->src_first = lo;
    v->src_n = hi - lo + 1;
    v->sel = hottest && (int)hottest - 1 >= lo && (int)hottest - 1 <= hi ? (int)hottest - 1 - lo : 0;
    v->top = v->sel > 5 ? v->sel - 5 : 0;
}

/* Enter on a source line: step into the function inlined at that line, if any. */
static void step_into(struct view *v)
{
    uint32_t line = (uint32_t)(v->src_first + v->sel) + 1;
    uint32_t pc = prof_top_pc(v->prof, false, v->func, line); /* outermost frame at this line */
    const struct sym_location *loc = pc && v->syms ? sym_lookup(v->syms, pc) : NULL;
    if (!loc || loc->n_frames < 2)
        return;
    /* frames: innermost first; the frame after ours (toward the inside) is the callee */
    for (uint32_t k = loc->n_frames - 1; k > 0; k--)
        if (strcmp(loc->frames[k].function, v->func) == 0) {
            v->inline_frames = true; /* inside the inlined callee, its own samples are what count */
            enter_function(v, loc->frames[k - 1].function);
            return;
        }
}

/* ---- keys -------------------------------------------------------------------------------- */

static const char *const help_lines[] = {
    "Keys",
    "  \u2191 \u2193 PgUp PgDn Home End, mouse wheel   move (here: scroll this help)",
    "  Enter        drill into the selected function's source lines; on a line, step into the",
    "               function inlined there",
    "  Esc          back",
    "  s            sort by share or by name",
    "  g            group by function, line, file, task",
    "  i            charge inlined code to the inlined function, or to its caller",
    "  C            C++ and Rust names demangled (default) or as linked",
    "  O            cmprof's own firmware code as one row, " PROF_OVERHEAD_ROW ", or by function",
    "  o            save a snapshot: table, CSV, JSON, folded or speedscope, named after the ELF and the time",
    "  /            filter by function, file or task name (Enter keeps it, Esc clears it)",
    "  space        freeze the display (counting goes on)",
    "  r            reset the counts, counters and clock (in the section view: the section statistics)",
    "  w            cumulative, or the last window of seconds",
    "  t            section timings (u: microseconds or timer ticks)",
    "  l            the firmware's log lines",
    "  d            diagnostics",
    "  q            quit",
    "",
    "Each share carries its 95 % interval (Wilson's score interval, inside 0-100 % at any N),",
    "shaded around the end of its bar; \u00b1% is half its width. Rows whose interval reaches below",
    "half their share are dimmed: they may be noise.",
    "",
    "The header",
    "  samples      PC samples counted (sleep samples apart), since the start or the last r",
    "  N/s          samples per second over the last 5 s; nominal N/s: what the firmware's timer",
    "               clock and period ask for (clk / (period + jitter/2))",
    "  mm:ss        time since the start or the last r",
    "  bad          lines or packets dropped as malformed (a check failed, a packet was invalid);",
    "               a live port's first, partial line does not count",
    "  overflows    ITM overflow packets: the trace port dropped data in the target",
    "  resyncs      ITM synchronisation packets after the first: the decoder found its place again",
    "  lost         samples the firmware could not queue (its ring was full)",
    "  sleeping     samples taken while the core slept (ITM sleep packets, PCSR 0xFFFFFFFF)",
    "  overhead     share of samples in cmprof's own firmware code",
    "  data lost    kinds of loss the decoders counted: d lists them",
    "  [state]      the source: connected (with halts/s and the core's halted share for gdb:),",
    "               reconnecting and why, or end of file",
};

static int list_length(struct view *v)
{
    const struct prof_row *rows;
    switch (v->mode) {
    case VM_TOP:
        return (int)top_rows(v, &rows);
    case VM_SOURCE:
        return v->n_src_lines ? v->src_n
                              : (int)prof_rows_of(v->prof, PROF_BY_ADDRESS, v->inline_frames, v->func, &rows);
    case VM_SECTIONS:
        return INGEST_SECTIONS;
    case VM_LOG:
        return v->log_n;
    case VM_HELP:
        return (int)(sizeof help_lines / sizeof help_lines[0]);
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
        v->note[0] = '\0'; /* a note stays until the next key */
    if (v->saving) { /* key o asked for a format */
        v->saving = false;
        if (key < 0x80 && strchr("tcjfs", key)) {
            v->save_format = key;
            return VIEW_SAVE | VIEW_REDRAW;
        }
        snprintf(v->note, sizeof v->note, "snapshot cancelled");
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
            enter_function(v, prev);
            v->depth = keep;
        } else if (v->mode == VM_HELP || v->mode == VM_DIAG || v->mode == VM_LOG) {
            if (v->mode == VM_HELP)
                v->sel = v->saved_sel;
            v->mode = v->back == VM_HELP ? VM_TOP : v->back;
        } else if (v->mode == VM_TOP && v->filter[0]) {
            v->filter[0] = '\0'; /* Esc in the list: the filter goes first */
        } else {
            v->mode = VM_TOP;
            v->sel = v->top = 0;
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
            size_t n = top_rows(v, &rows);
            if ((size_t)v->sel < n)
                enter_function(v, rows[v->sel].name);
        } else if (v->mode == VM_SOURCE && v->n_src_lines) {
            step_into(v);
        }
        return VIEW_REDRAW;
    case 's':
        v->sort_by_name = !v->sort_by_name;
        return VIEW_REDRAW;
    case 'g':
        v->group = v->group == PROF_BY_TASK ? PROF_BY_FUNCTION : (enum prof_group)(v->group + 1);
        v->sel = v->top = 0;
        v->mode = VM_TOP;
        if (v->frozen)
            freeze(v);
        return VIEW_REDRAW;
    case 'C':
        v->demangle = !v->demangle;
        return VIEW_REDRAW;
    case 'i':
        v->inline_frames = !v->inline_frames;
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

static const char *group_label(enum prof_group g)
{
    static const char *const names[] = {"function", "line", "file", "task", "address"};
    return names[g];
}

static void header(struct view *v, struct vbuf *b)
{
    const struct ingest *in = v->in;
    int x = put(b, 0, 0, VA_TITLE, "cmprof-top  ");
    x = putf(b, x, 0, VA_TITLE, "%s  ", v->st.source ? v->st.source : "?");
    bool bad_state = v->st.state && strncmp(v->st.state, "connected", 9) != 0;
    x = putf(b, x, 0, bad_state ? VA_WARN : VA_GOOD, "[%s]", v->st.state ? v->st.state : "?");
    const char *elf = v->st.elf ? strrchr(v->st.elf, '/') : NULL;
    x = putf(b, x, 0, VA_TITLE, "  %s", elf ? elf + 1 : (v->st.elf ? v->st.elf : ""));
    struct prof_diag d[8];
    size_t nd = prof_diagnose(v->prof, d, 8);
    bool id_bad = false;
    for (size_t i = 0; i < nd; i++)
        id_bad |= d[i].kind == DIAG_BUILD_ID;
    if (in->info.present && in->info.build_id[0])
        putf(b, x, 0, id_bad ? VA_WARN : VA_GOOD, "  build-id %s", id_bad ? "MISMATCH" : "ok");
    fill_attr(b, 0, VA_TITLE);
    double total = prof_total(v->prof);
    double elapsed = v->st.elapsed - v->base_elapsed; /* since the start, or the last r */
    x = putf(b, 0, 1, VA_NORMAL, "samples %.0f  %.0f/s  %02d:%02d  ", total, v->st.rate, (int)elapsed / 60,
             (int)elapsed % 60);
    uint64_t bad = in->text.stats.bad_lines + in->itm.stats.errors - v->base_bad;
    uint64_t syncs = in->itm.stats.syncs - v->base_syncs, resync = syncs > 1 ? syncs - 1 : 0;
    uint64_t overflows = in->itm.stats.overflows - v->base_overflows, lost = in->lost - v->base_lost;
    x = putf(b, x, 1, bad || lost || overflows ? VA_WARN : VA_NORMAL,
             "bad %llu  overflows %llu  resyncs %llu  lost %llu", (unsigned long long)bad,
             (unsigned long long)overflows, (unsigned long long)resync, (unsigned long long)lost);
    if (prof_sleep(v->prof))
        x = putf(b, x, 1, VA_NORMAL, "  sleeping %llu", (unsigned long long)prof_sleep(v->prof));
    double overhead = prof_overhead(v->prof);
    if (overhead > 0)
        x = putf(b, x, 1, VA_NORMAL, "  overhead %.1f %%", 100 * overhead);
    char losses[24][INGEST_LOSS_TEXT];
    size_t nl = ingest_losses(in, losses, 24);
    if (nl)
        putf(b, x, 1, VA_WARN, "  data lost: %zu kind%s (d)", nl, nl > 1 ? "s" : "");
    x = 0;
    if (in->info.present) {
        x = putf(b, 0, 2, VA_NORMAL, "clk %.1f MHz  period %llu+0..%llu ticks  ", in->info.clock_hz / 1e6,
                 (unsigned long long)in->info.period, (unsigned long long)in->info.jitter);
        /* the rate the firmware asked for: the timer's clock over the mean period */
        double mean = (double)in->info.period + (double)in->info.jitter / 2.0;
        if (in->info.timer_hz && mean > 0)
            x = putf(b, x, 2, VA_NORMAL, "nominal %.0f/s  ", (double)in->info.timer_hz / mean);
    }
    else if (in->text.stats.no_base)
        x = put(b, 0, 2, VA_WARN, "no announce yet: clock and period unknown  ");
    x = putf(b, x, 2, VA_BOLD, "by %s%s  sort %s", group_label(v->group), v->inline_frames ? "" : " (no inline)",
             v->sort_by_name ? "name" : "share");
    if (v->window_mode)
        x = putf(b, x, 2, VA_BOLD, "  last %.0f s", v->window_seconds);
    if (v->frozen)
        x = put(b, x, 2, VA_WARN, "  FROZEN");
    if (v->filter[0] && !v->filtering)
        putf(b, x, 2, VA_BOLD, "  filter: %s (Esc clears)", v->filter);
    if (nd) {
        putf(b, 0, 3, VA_WARN, "! %s%s", d[0].text, nd > 1 ? "  (d: all diagnostics)" : "  (d: details)");
        fill_attr(b, 3, VA_WARN);
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
    int cols[16] = {0}, used = 1;
    bool shown[16] = {false};
    for (int i = 0; i < n && i < 16; i++) {
        for (const char *p = k[i].text; *p; p++)
            cols[i] += ((unsigned char)*p & 0xC0) != 0x80; /* UTF-8 continuation bytes take no column */
    }
    for (int rank = 0; rank < 16; rank++)
        for (int i = 0; i < n && i < 16; i++)
            if (k[i].rank == rank && used + cols[i] + 2 <= b->w) {
                shown[i] = true;
                used += cols[i] + 2;
            }
    char line[512];
    size_t len = 0;
    line[len++] = ' ';
    for (int i = 0; i < n && i < 16; i++)
        if (shown[i])
            len += (size_t)snprintf(line + len, sizeof line - len, "%s  ", k[i].text);
    line[len < sizeof line ? len : sizeof line - 1] = '\0';
    put(b, 0, b->h - 1, VA_KEY, line);
    fill_attr(b, b->h - 1, VA_KEY);
}

static void keybar(struct view *v, struct vbuf *b)
{
    if (v->saving) {
        put(b, 0, b->h - 1, VA_KEY, " save a snapshot as: t table  c CSV  j JSON  f folded  s speedscope   (Esc: no)");
        fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    if (v->note[0]) { /* until the next key */
        put(b, 0, b->h - 1, VA_KEY, " ");
        put(b, 1, b->h - 1, VA_KEY, v->note);
        fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    if (v->filtering) { /* the prompt sits at the bottom, as in less */
        int x = putf(b, 0, b->h - 1, VA_KEY, "/%s_", v->filter);
        put(b, x, b->h - 1, VA_KEY, "   (function, file or task; Enter keeps it, Esc clears it)");
        fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    static const struct key_hint source[] = {{"Esc back", 1}, {"Enter step into inlined call", 3},
                                             {"\u2191\u2193 move", 4}, {"i inline", 5}, {"? help", 0}, {"q quit", 2}};
    static const struct key_hint sections[] = {{"t/Esc back", 1}, {"r reset", 3}, {"u \u00b5s/ticks", 5},
                                               {"\u2191\u2193 move", 4}, {"? help", 0}, {"q quit", 2}};
    static const struct key_hint top[] = {{"? help", 0}, {"Enter drill", 2}, {"s sort", 5}, {"g group", 3},
                                          {"i inline", 8}, {"/ filter", 4}, {"space freeze", 9}, {"r reset", 7},
                                          {"w window", 11}, {"t sections", 6}, {"l log", 12}, {"d diag", 10},
                                          {"O fold", 13}, {"o save", 9}, {"q quit", 1}};
    switch (v->mode) {
    case VM_SOURCE:
        keybar_fit(b, source, (int)(sizeof source / sizeof *source));
        break;
    case VM_SECTIONS:
        keybar_fit(b, sections, (int)(sizeof sections / sizeof *sections));
        break;
    default:
        keybar_fit(b, top, (int)(sizeof top / sizeof *top));
        break;
    }
}

static void clamp_scroll(struct view *v, int n, int rows)
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


/* A path as a reader wants it in a column of `width`: "a/./b/../c" as "a/c", and when too long,
 * its end kept ("...gcc/config/arm/lib1funcs.S"), where the file's own name is. */
static const char *fit_path(const char *path, int width, char *buf, size_t len)
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
    snprintf(buf, len, "...%s", norm + n - (size_t)(width - 3));
    return buf;
}

static void render_rows(struct view *v, struct vbuf *b, int y0, const struct prof_row *rows, size_t n, bool lines)
{
    int bw = b->w >= 100 ? 24 : (b->w >= 90 ? 16 : 10);
    bool diff = v->base && !lines && v->group != PROF_BY_ADDRESS;
    if (diff) /* --diff: the baseline's share and the change, '*' when significant */
        putf(b, 0, y0, VA_TITLE, "%-*s %7s %7s %9s %7s %8s  %s", bw, "SHARE \u00b195%", "%", "\u00b1%", "SAMPLES", "BASE%",
             "CHANGE", "NAME");
    else
        putf(b, 0, y0, VA_TITLE, "%-*s %7s %7s %9s  %s", bw, "SHARE \u00b195%", "%", "\u00b1%", "SAMPLES",
             lines ? "LINE" : "NAME");
    fill_attr(b, y0, VA_TITLE);
    int rows_h = b->h - 1 - (y0 + 1);
    clamp_scroll(v, (int)n, rows_h);
    for (int r = 0; r < rows_h && (size_t)(v->top + r) < n; r++) {
        const struct prof_row *row = &rows[v->top + r];
        int y = y0 + 1 + r;
        bool sel = v->top + r == v->sel;
        bool zero = row->lo95 < row->share / 2; /* it may well be half as much: could be noise */
        bar(b, 0, y, bw, row->share, row->lo95, row->hi95, v->unicode);
        uint8_t attr = sel ? VA_SELECT : (zero ? VA_DIM : VA_NORMAL);
        char samples[32];
        snprintf(samples, sizeof samples, row->samples == floor(row->samples) ? "%.0f" : "%.1f", row->samples);
        char path[600];
        const char *name = lines ? row->name : shown_name(v, row->name);
        if (v->group == PROF_BY_FILE && !lines)
            name = fit_path(row->name, b->w - (bw + 1 + 28), path, sizeof path);
        int x;
        if (diff) {
            struct baseline_delta d = baseline_compare(row->samples, prof_total(current_prof(v)),
                                                       baseline_samples(v->base, row->name), v->base->total, n);
            x = putf(b, bw + 1, y, attr, "%6.2f%% %6.2f%% %9s %6.2f%% %+7.2f%s %s", 100 * row->share, 100 * row->ci95,
                     samples, 100 * d.base_share, 100 * d.delta, d.significant ? "*" : " ", name);
        } else {
            x = putf(b, bw + 1, y, attr, "%6.2f%% %6.2f%% %9s  %s", 100 * row->share, 100 * row->ci95, samples, name);
        }
        if (row->inlined && v->group == PROF_BY_FUNCTION && !lines)
            x = putf(b, x, y, sel ? VA_SELECT : VA_DIM, " (inlined)");
        if (row->file && v->group == PROF_BY_FUNCTION)
            x = putf(b, x, y, sel ? VA_SELECT : VA_DIM, "  %s", base_name(row->file));
        if (row->approximate)
            x = putf(b, x, y, VA_WARN, "  ~approx");
        if (lines && v->disasm) {
            uint32_t a = (uint32_t)strtoul(row->name, NULL, 16);
            if (a >= v->disasm_lo && (a - v->disasm_lo) / 2 < v->disasm_n && v->disasm[(a - v->disasm_lo) / 2])
                putf(b, x, y, sel ? VA_SELECT : VA_BOLD, "  %s", v->disasm[(a - v->disasm_lo) / 2]);
        }
        if (sel)
            for (int cx = bw; cx < b->w; cx++)
                b->cells[y * b->w + cx].attr = VA_SELECT;
    }
}

static int wrap(struct vbuf *b, int y, uint8_t attr, const char *text);

/* Why there is nothing to show yet, as precisely as the input allows: never a bare "waiting". */
static void why_empty(const struct view *v, char *buf, size_t len)
{
    const struct ingest *in = v->in;
    const struct text_stats *t = &in->text.stats;
    if (v->window_mode && prof_total(v->prof) > 0)
        snprintf(buf, len, "no samples in the last window yet");
    else if (in->bytes == 0)
        snprintf(buf, len, "no data from the source yet");
    else if (t->no_base && !in->info.present)
        snprintf(buf, len, "no announce yet: clock, period and code base unknown, %llu stream samples wait for one "
                 "(the firmware repeats it every second; one that announces only at boot needs a restart)",
                 (unsigned long long)t->no_base);
    else if (in->format == DETECT_TEXT && t->log_lines && !t->stream_lines && !t->blocks)
        snprintf(buf, len, "%llu log lines and no samples so far: is the sampler started, and the stream drained "
                 "(or the dump written)?", (unsigned long long)t->log_lines);
    else if (in->format == DETECT_UNKNOWN)
        snprintf(buf, len, "%llu bytes so far: not enough to tell the format yet", (unsigned long long)in->bytes);
    else
        snprintf(buf, len, "no samples yet (%s stream, %llu bytes)", detect_name(in->format),
                 (unsigned long long)in->bytes);
}

static void render_top(struct view *v, struct vbuf *b, int y0)
{
    const struct prof_row *rows;
    size_t n = top_rows(v, &rows);
    if (prof_total(current_prof(v)) == 0) {
        char why[400];
        why_empty(v, why, sizeof why);
        wrap(b, y0 + 1, VA_DIM, why);
        return;
    }
    render_rows(v, b, y0, rows, n, false);
}

static void chain_line(struct view *v, struct vbuf *b, int y, uint32_t pc)
{
    const struct sym_location *loc = pc && v->syms ? sym_lookup(v->syms, pc) : NULL;
    if (!loc || !loc->known)
        return;
    int x = putf(b, 0, y, VA_BOLD, "at 0x%08x: ", pc);
    for (uint32_t k = 0; k < loc->n_frames; k++)
        x = putf(b, x, y, VA_NORMAL, "%s%s (%s:%u)", k ? " \u2190 " : "", loc->frames[k].function,
                 base_name(loc->frames[k].file), loc->frames[k].line);
}

static void render_source(struct view *v, struct vbuf *b, int y0)
{
    const struct prof_row *rows;
    size_t n = prof_rows_of(v->prof, PROF_BY_LINE, v->inline_frames, v->func, &rows);
    double fsum = 0;
    for (size_t i = 0; i < n; i++)
        fsum += rows[i].samples;
    double total = prof_total(v->prof);
    int x = putf(b, 0, y0, VA_TITLE, "%s", v->func);
    for (int d = v->depth - 1; d >= 0; d--)
        x = putf(b, x, y0, VA_TITLE, " \u2190 %s", v->stack[d]);
    putf(b, x, y0, VA_TITLE, "   %.0f samples, %.2f%%   %s", fsum, total ? 100 * fsum / total : 0,
         v->n_src_lines ? base_name(v->src_path) : "");
    fill_attr(b, y0, VA_TITLE);
    int list_h = b->h - 1 - (y0 + 1) - 3;
    if (!v->n_src_lines) { /* address view */
        put(b, 0, y0 + 1, VA_WARN, v->src_missing);
        const struct prof_row *ar;
        size_t na = prof_rows_of(v->prof, PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
        render_rows(v, b, y0 + 2, ar, na, true);
        return;
    }
    clamp_scroll(v, v->src_n, list_h);
    int bw = 10;
    for (int r = 0; r < list_h && v->top + r < v->src_n; r++) {
        int line = v->src_first + v->top + r + 1, y = y0 + 1 + r;
        double samples = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i].line == (uint32_t)line && rows[i].file && strcmp(base_name(rows[i].file), base_name(v->src_path)) == 0)
                samples += rows[i].samples;
        bool sel = v->top + r == v->sel;
        if (samples > 0) { /* the share within the function, its bar, and the share of all samples */
            bar(b, 0, y, bw, fsum ? samples / fsum : 0, 0, 0, v->unicode);
            putf(b, bw, y, sel ? VA_SELECT : VA_BOLD, " %6.2f%% %6.2f%%", fsum ? 100 * samples / fsum : 0,
                 total ? 100 * samples / total : 0);
        }
        putf(b, bw + 17, y, sel ? VA_SELECT : (samples > 0 ? VA_BOLD : VA_DIM), "%5d  %s", line,
             v->src_lines[line - 1]);
        if (sel)
            for (int cx = bw; cx < b->w; cx++)
                b->cells[y * b->w + cx].attr = VA_SELECT;
    }
    putf(b, 0, b->h - 4, VA_DIM, "%%: of this function's samples, then of all; lines %d-%d of %s",
         v->src_first + 1, v->src_first + v->src_n, base_name(v->src_path));
    uint32_t pc = prof_top_pc(v->prof, v->inline_frames, v->func, (uint32_t)(v->src_first + v->sel) + 1);
    put(b, 0, b->h - 3, VA_TITLE, "inline chain of the selected line:");
    if (pc)
        chain_line(v, b, b->h - 2, pc);
    else
        put(b, 0, b->h - 2, VA_DIM, "no samples on this line");
}

/* Sections like an oscilloscope panel: times in microseconds (ticks on key u), runs per second,
 * and runs over budget counted whenever one is known (the latest, a new maximum, or all when even
 * the minimum is over). */
static void render_sections(struct view *v, struct vbuf *b, int y0)
{
    double hz = section_hz(v);
    bool us = !v->ticks && hz > 0, rate = b->w >= 96;
    const char *unit = us ? (v->unicode ? "\u00b5s" : "us") : "tk";
    char h_cur[16], h_min[16], h_max[16], h_mean[16];
    snprintf(h_cur, sizeof h_cur, "CUR %s", unit);
    snprintf(h_min, sizeof h_min, "MIN %s", unit);
    snprintf(h_max, sizeof h_max, "MAX %s", unit);
    snprintf(h_mean, sizeof h_mean, "MEAN %s", unit);
    int x = putf(b, 0, y0, VA_TITLE, "%-2s %-16s %9s", "#", "SECTION", "COUNT");
    if (rate)
        x = putf(b, x, y0, VA_TITLE, " %9s", "RATE/s");
    putf(b, x, y0, VA_TITLE, " %10s %10s %10s %10s  %s", h_cur, h_min, h_max, h_mean, "OVER BUDGET");
    fill_attr(b, y0, VA_TITLE);
    double since = v->st.elapsed - v->sect_reset_at;
    int y = y0 + 1, shown = 0;
    for (int i = 0; i < INGEST_SECTIONS && y < b->h - 2; i++) {
        const struct ingest_section *s = &v->in->section[i];
        if (!s->seen)
            continue;
        const struct view_budget *bu = budget_for(v, i, s->name);
        struct ingest_section now = *s;
        if (v->sect_reset[i]) { /* since the reset: a baseline for count and sum, min/max as seen */
            now.count = s->count - v->sect_base_count[i];
            now.sum = s->sum - v->sect_base_sum[i];
            now.min = v->sect_max[i] ? v->sect_min[i] : 0;
            now.max = v->sect_max[i];
        }
        s = &now;
        double mean = s->count ? (double)s->sum / (double)s->count : 0, scale = us ? 1e6 / hz : 1;
        bool over = bu && hz > 0 && v->budget_violations[i] > 0;
        uint8_t attr = shown == v->sel ? VA_SELECT : (over ? VA_WARN : VA_NORMAL);
        x = putf(b, 0, y, attr, "%-2d %-16.16s %9llu", i, s->name[0] ? s->name : "-", (unsigned long long)s->count);
        if (rate)
            x = since > 0 ? putf(b, x, y, attr, " %9.1f", (double)s->count / since) : putf(b, x, y, attr, " %9s", "-");
        x = putf(b, x, y, attr, " %10.2f %10.2f %10.2f %10.2f", (double)s->current * scale, (double)s->min * scale,
                 (double)s->max * scale, mean * scale);
        if (bu)
            putf(b, x, y, over ? VA_WARN : attr, "  %5llu > %.1f %s", (unsigned long long)v->budget_violations[i],
                 bu->us, v->unicode ? "\u00b5s" : "us");
        y++;
        shown++;
    }
    if (!shown)
        put(b, 0, y0 + 1, VA_DIM, "no section timings in the stream (cmprof_stream_sections() sends them)");
    else
        putf(b, 0, b->h - 2, VA_DIM, "%s; clock %.3f MHz (%s)%s", us ? "u: timer ticks" : "u: microseconds",
             hz / 1e6, v->cpu_hz > 0 ? "--cpu-hz" : "announced", hz > 0 ? "" : ": unknown, give --cpu-hz");
    for (int i = 0; i < 32; i++)
        if (v->sect_reset[i]) {
            putf(b, 0, b->h - 3, VA_BOLD, "since r %.0f s ago: count, mean and rate from then on; min and max from "
                 "the reports since", since);
            break;
        }
}

static void render_log(struct view *v, struct vbuf *b, int y0)
{
    put(b, 0, y0, VA_TITLE, "firmware log (lines that are not profiling data)");
    fill_attr(b, y0, VA_TITLE);
    int h = b->h - 1 - (y0 + 1);
    int first = v->log_n > h ? v->log_n - h : 0;
    for (int i = first; i < v->log_n; i++)
        put(b, 0, y0 + 1 + (i - first), VA_NORMAL, v->log[(v->log_head + i) % VIEW_LOG_LINES]);
    if (!v->log_n)
        put(b, 0, y0 + 1, VA_DIM, "no log lines yet");
}


static void render_help(struct view *v, struct vbuf *b, int y0)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]), h = b->h - 1 - y0;
    if (v->sel > n - h)
        v->sel = n - h > 0 ? n - h : 0;
    for (int i = 0; i < h && v->sel + i < n; i++)
        put(b, 0, y0 + i, help_lines[v->sel + i][0] && help_lines[v->sel + i][0] != ' ' && !strchr(help_lines[v->sel + i], '.')
                              ? VA_TITLE : VA_NORMAL, help_lines[v->sel + i]);
}

/* Word-wrap text at width w from (0, y); returns the next free row. */
static int wrap(struct vbuf *b, int y, uint8_t attr, const char *text)
{
    char line[512];
    const char *p = text;
    while (*p && y < b->h - 1) {
        size_t n = strlen(p);
        size_t take = n < (size_t)b->w - 2 ? n : (size_t)b->w - 2;
        if (take < n)
            while (take > 10 && p[take] != ' ')
                take--;
        snprintf(line, sizeof line, "%s%.*s", p == text ? "! " : "  ", (int)take, p);
        put(b, 0, y++, attr, line);
        p += take;
        while (*p == ' ')
            p++;
    }
    return y;
}

static void render_diag(struct view *v, struct vbuf *b, int y0)
{
    struct prof_diag d[16];
    size_t nd = prof_diagnose(v->prof, d, 16);
    put(b, 0, y0, VA_TITLE, "diagnostics");
    fill_attr(b, y0, VA_TITLE);
    int y = y0 + 1;
    for (size_t i = 0; i < nd; i++)
        y = wrap(b, y, VA_WARN, d[i].text) + 1;
    if (*v->st.elf_warning)
        y = wrap(b, y, VA_WARN, v->st.elf_warning) + 1;
    char losses[24][INGEST_LOSS_TEXT];
    size_t nl = ingest_losses(v->in, losses, 24);
    for (size_t i = 0; i < nl; i++) {
        char line[INGEST_LOSS_TEXT + 16];
        snprintf(line, sizeof line, "data lost: %.*s", INGEST_LOSS_TEXT, losses[i]);
        y = wrap(b, y, VA_WARN, line) + 1;
    }
    if (!nd && !*v->st.elf_warning && !nl)
        put(b, 0, y, VA_GOOD, "none: no sign of lockstep, interrupt skid, a wrong ELF or a wrong stack; no data lost");
}

void view_render(struct view *v, struct vbuf *b)
{
    clear(b);
    if (b->w < 20 || b->h < 8) {
        put(b, 0, 0, VA_WARN, "too small");
        return;
    }
    header(v, b);
    int y0 = 4;
    switch (v->mode) {
    case VM_TOP:
        render_top(v, b, y0);
        break;
    case VM_SOURCE:
        render_source(v, b, y0);
        break;
    case VM_SECTIONS:
        render_sections(v, b, y0);
        break;
    case VM_LOG:
        render_log(v, b, y0);
        break;
    case VM_HELP:
        render_help(v, b, y0);
        break;
    case VM_DIAG:
        render_diag(v, b, y0);
        break;
    }
    keybar(v, b);
    if (!v->unicode) /* a terminal without UTF-8: plain ASCII for the few symbols we use */
        for (int i = 0; i < b->w * b->h; i++) {
            uint32_t c = b->cells[i].ch;
            if (c < 0x80)
                continue;
            b->cells[i].ch = c == 0x00B1 ? '+' : c == 0x2191 ? '^' : c == 0x2193 ? 'v' : c == 0x2190 ? '<' : '?';
        }
}
