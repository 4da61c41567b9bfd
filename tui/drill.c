/* The drill-down's state: a function's source lines or its disassembly (objdump), the annotate
 * rows, entering a function, stepping into a call and back out, searching its lines. */
#include "view_int.h"

#include "../base/grow.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Disassembly of [lo, hi) with arm-none-eabi-objdump, when it is installed: the address view,
 * annotate, and the calls on a line. */
static void load_disasm(struct view *v, uint32_t lo, uint32_t hi)
{
    if (v->disasm && v->disasm_lo == lo && v->disasm_n == (hi - lo) / 2)
        return; /* already loaded */
    for (uint32_t i = 0; i < v->disasm_n; i++)
        free(v->disasm[i]);
    free(v->disasm);
    v->disasm = NULL;
    v->disasm_n = 0;
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

static void free_annotate(struct view *v)
{
    for (int i = 0; i < v->annot_n; i++)
        free(v->annot[i].text);
    free(v->annot);
    v->annot = NULL;
    v->annot_n = 0;
}

static bool push_row(struct view *v, size_t *cap, uint32_t addr, uint32_t line, const char *text)
{
    if (!grow_array((void **)&v->annot, cap, (size_t)v->annot_n + 1, sizeof *v->annot, 256))
        return false;
    char *copy = strdup(text);
    if (!copy)
        return false;
    v->annot[v->annot_n++] = (struct annot_row){addr, line, copy, false};
    return true;
}

/* A row's function's name, without the file a row of one of several functions of a name carries
 * ("work (a.c)"), in buf. */
static const char *bare_name(const char *func, char *buf, size_t len)
{
    const char *file;
    size_t file_len, n = sym_name_part(func, &file, &file_len);
    snprintf(buf, len, "%.*s", (int)n, func);
    return buf;
}

/* A symbol and a row's function are one function when their names read the same, or the same
 * with GCC's copy suffixes taken off: crc32.constprop.0 and crc32.part.0.cold are crc32's code. */
static bool same_function(struct view *v, const char *symbol, const char *row_func)
{
    char buf[sizeof v->func];
    const char *func = bare_name(row_func, buf, sizeof buf); /* (the samples say which file's) */
    if (strcmp(sym_demangle(v->syms, symbol), sym_demangle(v->syms, func)) == 0)
        return true;
    unsigned kinds;
    size_t ns = sym_clone_split(symbol, &kinds), nf = sym_clone_split(func, &kinds);
    ns = ns ? ns : strlen(symbol);
    nf = nf ? nf : strlen(func);
    return ns == nf && strncmp(symbol, func, ns) == 0;
}

static void sort_pieces(struct code_piece *p, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && p[k].lo < p[k - 1].lo; k--) {
            struct code_piece t = p[k];
            p[k] = p[k - 1];
            p[k - 1] = t;
        }
}

/* The function's code, as address ranges in address order: the whole of each ELF symbol of it
 * (or of its GCC copies: .constprop, .isra, .part, .cold) its samples lie in, so the same rows
 * whichever instructions were sampled; else (an inlined function, spread over its callers) the
 * span of its sampled addresses. Returns the number of pieces, 0 when it has no samples. */
static int function_pieces(struct view *v, struct code_piece *out, int max)
{
    const struct prof_row *ar;
    size_t na = prof_rows_of(v->prof, PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
    uint32_t lo = UINT32_MAX, hi = 0;
    int n = 0;
    bool whole = v->syms != NULL;
    for (size_t i = 0; i < na; i++) {
        uint32_t a = (uint32_t)strtoul(ar[i].name, NULL, 16) & ~1u, flo, fhi;
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
        bool seen = false;
        for (int k = 0; whole && k < n && !seen; k++)
            seen = a >= out[k].lo && a < out[k].hi;
        if (!whole || seen)
            continue;
        const struct sym_location *l = sym_lookup(v->syms, a);
        whole = n < max && l && l->symbol && same_function(v, l->symbol, v->func) &&
                sym_function_from(v->syms, a, &flo, &fhi) && (flo & ~1u) <= a && a < fhi;
        if (whole)
            out[n++] = (struct code_piece){flo & ~1u, fhi, l->symbol};
    }
    if (!na)
        return 0;
    if (!whole) {
        out[0] = (struct code_piece){lo, hi + 4, NULL};
        n = 1;
    }
    sort_pieces(out, n);
    for (int k = 0; k < n; k++)
        if (out[k].hi - out[k].lo > 65536)
            out[k].hi = out[k].lo + 65536; /* objdump's output for one screen: a huge function is cut */
    return n;
}

/* The instructions of [lo, hi), each under the source line it comes from. */
static bool annotate_piece(struct view *v, size_t *cap, uint32_t lo, uint32_t hi)
{
    load_disasm(v, lo, hi);
    const char *prev_file = NULL;
    uint32_t prev_line = 0;
    for (uint32_t i = 0; i < v->disasm_n; i++) {
        if (!v->disasm[i])
            continue;
        uint32_t addr = v->disasm_lo + 2 * i;
        const struct sym_location *l = v->syms ? sym_lookup(v->syms, addr) : NULL;
        const char *file = l && l->known ? sym_frame_at(l, 0)->file : "??";
        uint32_t line = l && l->known ? sym_frame_at(l, 0)->line : 0;
        if (file != prev_file || line != prev_line) { /* the source line these instructions come from */
            char text[1200];
            bool here = v->n_src_lines && line >= 1 && (int)line <= v->n_src_lines &&
                        strcmp(path_base(file), path_base(v->src_path)) == 0;
            if (here)
                snprintf(text, sizeof text, "%s", v->src_lines[line - 1]);
            else
                snprintf(text, sizeof text, "%s:%u", path_base(file), line);
            if (!push_row(v, cap, 0, line, text))
                return false;
            prev_file = file;
            prev_line = line;
        }
        if (!push_row(v, cap, addr, line, v->disasm[i]))
            return false;
    }
    return true;
}

static void build_annotate(struct view *v)
{
    free_annotate(v);
    struct code_piece pieces[8];
    int n = function_pieces(v, pieces, 8);
    size_t cap = 0;
    for (int k = 0; k < n; k++) {
        if (n > 1 && pieces[k].symbol) { /* a function in several places (f, f.cold): each one named */
            if (!push_row(v, &cap, 0, 0, pieces[k].symbol))
                return;
            v->annot[v->annot_n - 1].heading = true;
        }
        if (!annotate_piece(v, &cap, pieces[k].lo, pieces[k].hi))
            return;
    }
}

void view_free_source(struct view *v)
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
    free_annotate(v);
}

static void load_source(struct view *v, const char *path)
{
    view_free_source(v);
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
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; *p; p++)
            if (*p == '\t')
                *p = ' ';
        if (!grow_array((void **)&v->src_lines, &cap, (size_t)v->n_src_lines + 1, sizeof *v->src_lines, 256))
            break;
        v->src_lines[v->n_src_lines++] = strdup(line);
    }
    fclose(f);
}

/* Key a, or entering a function while annotating: the rows built from the disassembly. */
static void annotate_on(struct view *v)
{
    build_annotate(v);
    double best = 0; /* the hottest instruction is preselected, as the hottest line is */
    const struct prof_row *ar;
    size_t na = prof_rows_of(v->prof, PROF_BY_ADDRESS, v->inline_frames, v->func, &ar);
    v->sel = 0;
    for (size_t i = 0; i < na; i++)
        if (ar[i].samples > best) {
            uint32_t a = (uint32_t)strtoul(ar[i].name, NULL, 16);
            for (int k = 0; k < v->annot_n; k++)
                if (v->annot[k].addr == a) {
                    best = ar[i].samples;
                    v->sel = k;
                    break;
                }
        }
    v->top = -1; /* placed by the first draw, which knows the screen's height */
}

/* The file a function's lines are in, and its hottest line: from its samples, else (a callee
 * with none, entered from a call) from the call's target address. NULL when neither says. */
static const char *function_file(struct view *v, const char *name, const struct prof_row *rows, size_t n,
                                 uint32_t *hottest)
{
    const char *file = NULL;
    double best = -1;
    *hottest = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].file && rows[i].samples > best) {
            best = rows[i].samples;
            file = rows[i].file;
            *hottest = rows[i].line;
        }
    const struct sym_location *at = !file && v->enter_at && v->syms ? sym_lookup(v->syms, v->enter_at) : NULL;
    for (uint32_t k = 0; at && at->known && k < at->n_frames && !file; k++) /* no samples: where a call goes */
        if (prof_frame_is(v->prof, v->enter_at, sym_frame_at(at, k), name) &&
            strcmp(sym_frame_at(at, k)->file, "??") != 0) {
            file = sym_frame_at(at, k)->file;
            *hottest = sym_frame_at(at, k)->line;
        }
    return file;
}

/* The address view (no source lines): the instructions around the function's samples. */
static void enter_addresses(struct view *v)
{
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
}

/* Sampled lines [lo, hi] widened to the function's own: from its signature above (the name, and
 * a return type or attributes on the lines over it) down to the closing brace below (C: a line
 * that starts with "}"). */
static void widen_to_function(struct view *v, const char *name, int *lo, int *hi)
{
    size_t nl = strlen(name);
    for (int k = *lo; k >= 0 && k > *lo - 400; k--) {
        const char *hit = strstr(v->src_lines[k], name);
        if (hit && (hit == v->src_lines[k] || !(isalnum((unsigned char)hit[-1]) || hit[-1] == '_')) &&
            (hit[nl] == '(' || hit[nl] == ' ' || hit[nl] == ',' || hit[nl] == '\0')) {
            *lo = k;
            while (*lo > 0 && v->src_lines[*lo - 1][0] && !strchr(";}{#", v->src_lines[*lo - 1][0]) &&
                   !strstr(v->src_lines[*lo - 1], "*/") && *lo > k - 3)
                (*lo)--;
            break;
        }
    }
    for (int k = *hi; k < v->n_src_lines && k < *hi + 2000; k++)
        if (v->src_lines[k][0] == '}') {
            *hi = k;
            break;
        }
}

void view_enter_function(struct view *v, const char *name)
{
    if (v->mode == VM_SOURCE && v->depth < 8)
        snprintf(v->stack[v->depth++], sizeof v->stack[0], "%s", v->func);
    else if (v->mode != VM_SOURCE)
        v->depth = 0;
    snprintf(v->func, sizeof v->func, "%s", name);
    v->mode = VM_SOURCE;
    const struct prof_row *rows;
    size_t n = prof_rows_of(v->prof, PROF_BY_LINE, v->inline_frames, v->func, &rows);
    uint32_t hottest;
    const char *file = function_file(v, name, rows, n, &hottest);
    v->enter_at = 0;
    view_free_source(v);
    if (file)
        load_source(v, file);
    else
        snprintf(v->src_missing, sizeof v->src_missing, "no line information for %s", name);
    if (!v->n_src_lines) {
        enter_addresses(v);
        return;
    }
    int lo = v->n_src_lines, hi = -1; /* the lines of this file sampled */
    for (size_t i = 0; i < n; i++)
        if (rows[i].file && strcmp(path_base(rows[i].file), path_base(v->src_path)) == 0 && rows[i].line >= 1 &&
            (int)rows[i].line <= v->n_src_lines) {
            lo = (int)rows[i].line - 1 < lo ? (int)rows[i].line - 1 : lo;
            hi = (int)rows[i].line - 1 > hi ? (int)rows[i].line - 1 : hi;
        }
    if (hi < 0 && hottest >= 1 && (int)hottest <= v->n_src_lines)
        lo = hi = (int)hottest - 1; /* none sampled: the function's entry, widened to it below */
    if (hi < 0) { /* no line of this file sampled: the whole file */
        lo = 0;
        hi = v->n_src_lines - 1;
    } else {
        char bare[sizeof v->func];
        widen_to_function(v, bare_name(name, bare, sizeof bare), &lo, &hi);
    }
    v->src_first = lo;
    v->src_n = hi - lo + 1;
    v->sel = hottest && (int)hottest - 1 >= lo && (int)hottest - 1 <= hi ? (int)hottest - 1 - lo : 0;
    v->top = -1;
    if (v->annotate)
        annotate_on(v);
}

bool view_search(struct view *v, int dir)
{
    int n = v->annotate ? v->annot_n : (v->n_src_lines ? v->src_n : 0);
    for (int step = 1; v->search[0] && step <= n; step++) {
        int i = ((v->sel + dir * step) % n + n) % n; /* wraps around, as less does */
        const char *text = v->annotate ? v->annot[i].text : v->src_lines[v->src_first + i];
        if (view_contains(text, v->search)) {
            v->sel = i;
            return true;
        }
    }
    return false;
}

/* The function an instruction calls ("bl 8000164 <name>"), into name; false when it is no call to
 * the start of a function. The name is the one rows carry: the DWARF function at the target
 * address when there is one, so a call to GCC's copy "crc32.constprop.0" opens crc32's lines. */
static bool call_target(struct view *v, const char *insn, char *name, size_t len)
{
    while (*insn == ' ')
        insn++;
    /* objdump's text after the encoding: "bl 80002f4 <hot_c>" */
    const char *op = strncmp(insn, "bl ", 3) == 0 || strncmp(insn, "blx ", 4) == 0 ? insn : NULL;
    const char *lt = op ? strchr(op, '<') : NULL, *gt = lt ? strchr(lt, '>') : NULL;
    if (!gt || memchr(lt, '+', (size_t)(gt - lt)) || (size_t)(gt - lt - 1) >= len)
        return false;
    memcpy(name, lt + 1, (size_t)(gt - lt - 1));
    name[gt - lt - 1] = '\0';
    const char *digits = op + strcspn(op, " ");
    char *end;
    uint32_t to = (uint32_t)strtoul(digits, &end, 16);
    const struct sym_location *loc = end != digits && v->syms ? sym_lookup(v->syms, to) : NULL;
    v->enter_at = loc ? to : 0; /* for a callee with no samples: its lines from its address */
    const struct sym_frame *outer = loc && loc->known ? sym_frame_at(loc, loc->n_frames - 1) : NULL;
    if (outer && strcmp(outer->function, "??") != 0) /* (one of several functions of its name: "name (file)") */
        snprintf(name, len, "%s", sym_function_label(v->syms, outer->function, to));
    return name[0] != '\0';
}

/* A real call on the selected source line: its callee, from the instructions the line compiled to. */
static bool call_on_line(struct view *v, uint32_t line, char *name, size_t len)
{
    struct code_piece pieces[8];
    int n = v->syms ? function_pieces(v, pieces, 8) : 0;
    if (n == 1 && !pieces[0].symbol) { /* inlined: the calls of the function it is inlined into */
        uint32_t lo, hi;
        if (!sym_function_from(v->syms, pieces[0].lo, &lo, &hi) || hi <= (lo & ~1u) || hi - (lo & ~1u) > 65536)
            return false;
        pieces[0] = (struct code_piece){lo & ~1u, hi, NULL};
    }
    for (int k = 0; k < n; k++) {
        load_disasm(v, pieces[k].lo, pieces[k].hi);
        for (uint32_t i = 0; i < v->disasm_n; i++) {
            if (!v->disasm[i] || !call_target(v, v->disasm[i], name, len))
                continue;
            const struct sym_location *l = sym_lookup(v->syms, v->disasm_lo + 2 * i);
            for (uint32_t f = 0; l && f < l->n_frames; f++) /* this function's own line for the address */
                if (prof_frame_is(v->prof, v->disasm_lo + 2 * i, sym_frame_at(l, f), v->func) &&
                    sym_frame_at(l, f)->line == line)
                    return true;
        }
    }
    return false;
}

/* Enter on a source line: step into the function inlined at that line, else the function a call
 * on that line calls (bl); in annotate, the function the selected instruction calls. */
void view_step_into(struct view *v)
{
    char callee[128];
    if (v->annotate) {
        if (v->sel < v->annot_n && v->annot[v->sel].addr && call_target(v, v->annot[v->sel].text, callee, sizeof callee))
            view_enter_function(v, callee);
        v->enter_at = 0;
        return;
    }
    uint32_t line = (uint32_t)(v->src_first + v->sel) + 1;
    uint32_t pc = prof_top_pc(v->prof, false, v->func, line); /* outermost frame at this line */
    const struct sym_location *loc = pc && v->syms ? sym_lookup(v->syms, pc) : NULL;
    /* frames: innermost first; the frame after ours (toward the inside) is the callee */
    for (uint32_t k = loc ? loc->n_frames - 1 : 0; k > 0; k--)
        if (prof_frame_is(v->prof, pc, sym_frame_at(loc, k), v->func)) {
            v->inline_frames = true; /* inside the inlined callee, its own samples are what count */
            view_enter_function(v, sym_function_label(v->syms, sym_frame_at(loc, k - 1)->function, pc));
            return;
        }
    if (call_on_line(v, line, callee, sizeof callee))
        view_enter_function(v, callee);
    v->enter_at = 0;
}

/* Esc in the drill-down: back to the function drilled from. */
void view_drill_back(struct view *v)
{
    char prev[128];
    snprintf(prev, sizeof prev, "%s", v->stack[--v->depth]);
    int keep = v->depth;
    view_enter_function(v, prev);
    v->depth = keep;
}

/* Key a: the instructions under their source lines, or back to the lines (the hottest one, as on
 * entry). */
void view_toggle_annotate(struct view *v)
{
    v->annotate = !v->annotate;
    if (v->annotate) {
        v->annot_depth = v->depth;
        annotate_on(v);
        return;
    }
    char func[sizeof v->func];
    snprintf(func, sizeof func, "%s", v->func);
    int depth = v->depth;
    v->mode = VM_TOP;
    view_enter_function(v, func);
    v->depth = depth;
}
