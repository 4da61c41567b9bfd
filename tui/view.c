/* The live view: its state's start and end, the header, the key bar, and which screen draws the
 * rest (screen_*.c); keys are in keys.c, the rows in rows.c, the cell buffer in draw.c. */
#include "view_int.h"

#include "../profile/starved.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void view_init(struct view *v, struct prof *prof, struct prof *window, struct ingest *in, struct sym_table *syms)
{
    memset(v, 0, offsetof(struct view, history));
    history_clear(&v->history);
    section_history_clear(&v->sect_history);
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
            const char *t = used + vb_columns(f[i].text) <= b->w || (rank == 0 && !used) ? f[i].text
                            : f[i].alt[0] && used + vb_columns(f[i].alt) <= b->w ? f[i].alt : NULL;
            if (t) {
                shown[i] = t;
                used += vb_columns(t) + 2;
            }
        }
    for (int i = 0, x = 0; i < n; i++)
        if (shown[i])
            x = vb_putf(b, x, y, f[i].attr, "%s  ", shown[i]);
}

/* A state's shorter form: its clauses up to the last ", ", "; " or ": " that leaves it within alt's
 * size and the `room` columns the row has for it ("[connected, 812 halts/s, core halted 9.8 %]"
 * without "at most ... at once"; "[ended]" for "[ended: the target exited with status 3]" on a
 * narrow terminal); "" when the text fits the room whole, or no clause does. */
static void state_short(char *alt, size_t size, const char *text, int room)
{
    alt[0] = '\0';
    size_t most = room >= 0 && (size_t)room < size ? (size_t)room + 1 : size; /* bytes, its NUL included */
    if (strlen(text) < most)
        return; /* it fits: the text itself */
    size_t cut = 0;
    for (size_t i = 1; text[i] && text[i + 1] && i + 2 <= most; i++)
        if (text[i + 1] == ' ' && strchr(",;:", text[i]))
            cut = i;
    if (cut) { /* (alt and text are two fields of one struct: copied, not printed into each other) */
        memcpy(alt, text, cut);
        memcpy(alt + cut, "]", 2);
    }
}

/* Row 0: the tool, the source and its state, the ELF and its build-id check. */
static void header_source(struct view *v, struct vbuf *b, bool id_bad, bool code_bad)
{
    struct field f[FIELDS];
    int n = 0;
    field(f, &n, 0, VA_TITLE, "cmprof-top");
    field(f, &n, 2, VA_TITLE, "%s", v->st.source ? v->st.source : "?");
    const char *src = v->st.source ? v->st.source : "?"; /* a file's name; a device's after /dev/ ("pts/2", not "2") */
    snprintf(f[n - 1].alt, sizeof f[n - 1].alt, "%s", strncmp(src, "/dev/", 5) == 0 ? src + 5 : path_base(src));
    bool bad_state = v->st.state && strncmp(v->st.state, "connected", 9) != 0;
    field(f, &n, 0, bad_state ? VA_WARN : VA_GOOD, "[%s]", v->st.state ? v->st.state : "?");
    state_short(f[n - 1].alt, sizeof f[n - 1].alt, f[n - 1].text, b->w - vb_columns(f[0].text) - 2); /* after f[0] */
    field(f, &n, 3, VA_TITLE, "%s", path_base(v->st.elf));
    if (prof_stream_info(v->prof)->present && prof_stream_info(v->prof)->build_id[0])
        field(f, &n, 1, id_bad ? VA_WARN : VA_GOOD, "build-id %s", id_bad ? "MISMATCH" : "ok");
    if (code_bad)
        field(f, &n, 0, VA_WARN, "WRONG ELF? (d)");
    if (v->st.elf_changed)
        field(f, &n, 0, VA_WARN, "ELF CHANGED (d)");
    /* a connected state's figures give up their last clauses before the source's name goes (what is
     * profiled stays said), beside the fields placed before the name (the warnings, the build-id's
     * check); a bad state's cause keeps its place */
    int beside = b->w;
    for (int i = 0; i < n; i++)
        if (i != 2 && f[i].rank <= f[1].rank)
            beside -= vb_columns(i == 1 && f[i].alt[0] ? f[i].alt : f[i].text) + 2;
    char kept[sizeof f[2].text];
    state_short(kept, sizeof kept, f[2].text, beside);
    if (kept[0] && !bad_state)
        snprintf(f[2].text, sizeof f[2].text, "%s", kept);
    put_fields(b, 0, f, n);
    vb_fill_attr(b, 0, VA_TITLE);
}

/* Stream samples came and no announce yet, in the first seconds: a view that joined a running stream
 * waits for the firmware's next one (repeated every second), and says so without alarm. */
static bool announce_due(const struct view *v, const struct ingest_counts *c)
{
    return c->unplaced && v->st.elapsed < STARVED_AFTER_S;
}

/* A per cent the header shows after ">": one decimal, or under 0.1 % down to its first digit that is
 * not 0 (0.03, not 0.0; 0 under 0.0001), cut rather than rounded up so that the ">" stays true. */
static void overhead_text(char *buf, size_t len, double pct)
{
    int decimals = 1;
    while (decimals < 4 && pct < 0.1 / pow(10, decimals - 1))
        decimals++;
    double unit = pow(10, decimals), cut = decimals > 1 ? floor(pct * unit) / unit : pct;
    snprintf(buf, len, "%.*f", cut > 0 ? decimals : 0, cut);
}

/* Row 1: the counters. What matters stays as the terminal narrows; a counter at zero goes first. */

static void header_counters(struct view *v, struct vbuf *b)
{
    struct ingest_counts c;
    ingest_counts(v->in, &c);
    struct prof *cur = view_current_prof(v); /* under w, the header counts the window too */
    double total = prof_total(cur);
    double elapsed = v->st.elapsed - v->base_elapsed; /* since the start, or the last r */
    uint64_t bad = c.bad - v->base_bad;
    uint64_t syncs = c.syncs - v->base_syncs, resync = syncs > 1 ? syncs - 1 : 0;
    uint64_t overflows = c.overflows - v->base_overflows, lost = c.lost - v->base_lost;
    char losses[24][INGEST_LOSS_TEXT];
    size_t nl = ingest_losses(v->in, losses, 24);
    struct field f[FIELDS];
    int n = 0;
    field(f, &n, 0, VA_NORMAL, "samples %.0f", total);
    if (v->st.rate_of == VIEW_RATE_STREAM)
        field(f, &n, 1, VA_NORMAL, "%.0f/s", v->st.rate);
    else if (v->st.rate_of == VIEW_RATE_FILE_READING) /* no rate of the firmware's: the host's reading */
        field(f, &n, 1, VA_NORMAL, "reading %.0f samples/s", v->st.rate);
    field(f, &n, 4, VA_NORMAL, "%02d:%02d", (int)elapsed / 60, (int)elapsed % 60);
    field(f, &n, bad ? 2 : 7, bad ? VA_WARN : VA_NORMAL, "bad %llu", (unsigned long long)bad);
    field(f, &n, overflows ? 2 : 8, overflows ? VA_WARN : VA_NORMAL, "overflows %llu", (unsigned long long)overflows);
    field(f, &n, resync ? 3 : 9, VA_NORMAL, "resyncs %llu", (unsigned long long)resync);
    field(f, &n, lost ? 2 : 6, lost ? VA_WARN : VA_NORMAL, "lost %llu", (unsigned long long)lost);
    if (prof_sleep(cur))
        field(f, &n, 5, VA_NORMAL, "sleeping %llu", (unsigned long long)prof_sleep(cur));
    if (prof_effective_n(cur) < total) /* a full ring's kept samples stand for many: the intervals say so */
        field(f, &n, 3, VA_NORMAL, "weighted: %.0f effective", prof_effective_n(cur));
    double overhead = prof_overhead(cur, NULL); /* the drain's idle polls are in the idle share */
    if (overhead > 0) {                         /* more: + the sampling interrupt's (? page) */
        char pct[16];
        overhead_text(pct, sizeof pct, 100 * overhead);
        field(f, &n, 5, VA_NORMAL, "overhead %s%s %%", overhead < 0.9995 ? ">" : "", pct);
    }
    double idle = prof_idle(cur);
    if (idle >= 0)
        field(f, &n, 3, VA_NORMAL, "idle %.1f %%", 100 * idle);
    if (announce_due(v, &c) && nl)
        nl--; /* (the samples that wait for it, a kind of their own in the list: row 2 says it) */
    if (nl)
        field(f, &n, 0, VA_WARN, "data lost: %zu kind%s (d)", nl, nl > 1 ? "s" : "");
    if (c.joined || c.joined_bytes) { /* what came before the view could place samples: no loss */
        if (c.joined)
            field(f, &n, 9, VA_DIM, "joined mid-stream: %llu not counted (d)", (unsigned long long)c.joined);
        else
            field(f, &n, 9, VA_DIM, "joined mid-stream: %llu bytes skipped (d)", (unsigned long long)c.joined_bytes);
        snprintf(f[n - 1].alt, sizeof f[n - 1].alt, "joined mid-stream");
    }
    if (v->st.gaps && *v->st.gaps)
        field(f, &n, 0, VA_WARN, "gaps (d)");
    put_fields(b, 1, f, n);
}

/* Row 2: the view's own state first, the firmware's settings after; what does not fit whole goes. */
static void header_settings(struct view *v, struct vbuf *b)
{
    const struct prof_stream_info *info = prof_stream_info(v->prof);
    struct ingest_counts c;
    ingest_counts(v->in, &c);
    struct field f[FIELDS];
    int n = 0;
    if (v->filter[0] && v->prompt != VP_FILTER)
        field(f, &n, 0, VA_BOLD, "filter: %s (Esc clears)", v->filter);
    field(f, &n, 0, VA_BOLD, "by %s%s", view_group_label(v->group), v->inline_frames ? "" : " (no inline)");
    field(f, &n, 1, VA_BOLD, "sort %s%s", view_sort_label(v), v->sort_reverse ? " (reversed)" : "");
    if (v->window_mode)
        field(f, &n, 0, VA_BOLD, "last %.0f s", v->window_seconds);
    if (v->frozen)
        field(f, &n, 0, VA_WARN, "FROZEN");
    if (info->present) {
        field(f, &n, 2, VA_NORMAL, "clk %.1f MHz", info->clock_hz / 1e6);
        double shz = view_section_hz(v); /* the sections' clock, when another: say which is which */
        if (shz > 0 && fabs(shz - (double)info->clock_hz) > 0.5)
            field(f, &n, 3, VA_NORMAL, "sections' clock %.3f MHz%s", shz / 1e6, v->cpu_hz > 0 ? " (--cpu-hz)" : "");
        char tclk[32] = ""; /* the period counts the timer's own clock, when it is not the core's */
        if (info->timer_hz && info->timer_hz != info->clock_hz)
            snprintf(tclk, sizeof tclk, " of %g %s", info->timer_hz >= 1000000 ? info->timer_hz / 1e6
                     : info->timer_hz / 1e3, info->timer_hz >= 1000000 ? "MHz" : "kHz");
        field(f, &n, 5, VA_NORMAL, "period %llu+0..%llu ticks%s", (unsigned long long)info->period,
              (unsigned long long)info->jitter, tclk);
        snprintf(f[n - 1].alt, sizeof f[n - 1].alt, "period %llu+0..%llu", (unsigned long long)info->period,
                 (unsigned long long)info->jitter);
        /* the rate the firmware asked for: the timer's clock over the mean period */
        double mean = (double)info->period + (double)info->jitter / 2.0;
        if (info->timer_hz && mean > 0)
            field(f, &n, 4, VA_NORMAL, "nominal %.0f/s", (double)info->timer_hz / mean);
        /* received and nominal apart: the target's clock is not the wall's (QEMU's guest time) */
        double nominal = info->timer_hz && mean > 0 ? (double)info->timer_hz / mean : 0;
        if (nominal > 0 && v->st.elapsed > 5 && v->st.rate > 0 && fabs(v->st.rate / nominal - 1) > 0.25)
            field(f, &n, 7, VA_DIM, "(N/s received, nominal in target time)");
        if (info->arch[0]) /* what the firmware runs on and samples with */
            field(f, &n, 6, VA_NORMAL, "%s %s", info->arch, info->timer);
    } else if (announce_due(v, &c)) {
        field(f, &n, 1, VA_NORMAL, "waiting for the firmware's announce");
    } else if (c.no_base) {
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
    if (v->st.quiet_s >= STARVED_AFTER_S) { /* a stream that stopped: first, it makes the rest stale */
        char why[600];
        starved_stalled_short(v->st.quiet_s, v->st.last_sample_s, why, sizeof why);
        vb_putf(b, 0, 3, VA_WARN, "! %s", why);
        vb_fill_attr(b, 3, VA_WARN);
    } else if (nd) {
        const char *hint = nd > 1 ? "  (d: all diagnostics)" : "  (d: details)";
        vb_putf(b, 0, 3, VA_WARN, "! %s%s", d[0].text, hint);
        if ((int)(strlen(d[0].text) + strlen(hint) + 2) > b->w && b->w > 12) /* cut: say where the rest is */
            vb_put(b, b->w - 8, 3, VA_WARN, "... (d) ");
        vb_fill_attr(b, 3, VA_WARN);
    }
}

/* The keys that fit the width, in the key table's order, dropping the least useful first ("? help" has
 * rank 0 and always stays). Width is counted in characters, not bytes. */
static void keybar_fit(struct vbuf *b, const struct view_hint *k, int n)
{
    int cols[24] = {0}, used = 1;
    bool shown[24] = {false};
    for (int i = 0; i < n && i < 24; i++)
        cols[i] = vb_columns(k[i].text);
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

/* A row of the key bar's colour, blank but for text. */
static int key_row(struct vbuf *b, int y, const char *text)
{
    for (int x = 0; x < b->w; x++)
        vb_putc(b, x, y, ' ', VA_KEY);
    return vb_put(b, 0, y, VA_KEY, text);
}

/* Key o's prompt at the bottom (on as many rows as the width needs), and where the snapshot goes
 * on the row under it, before it goes there: "save a snapshot as: ... into DIR" reads in order. */
static void save_prompt(struct view *v, struct vbuf *b)
{
    char lines[8][VIEW_PROMPT_LEN];
    int into = v->save_dir[0] && b->h > 2, room = b->h - 2 - into;
    int n = view_save_prompt(b->w, lines, room < 8 ? (room > 1 ? room : 1) : 8);
    for (int k = 0; k < n; k++)
        key_row(b, b->h - n - into + k, lines[k]);
    int y = b->h - 1;
    if (into) {
        char fitted[sizeof v->save_dir];
        int x = key_row(b, y, " into ");
        vb_put(b, x, y, VA_KEY, view_fit_path(v->save_dir, b->w - x - 1, fitted, sizeof fitted));
    }
}

static void keybar(struct view *v, struct vbuf *b)
{
    char line[512];
    bool prompt = view_prompt_line(v, line, sizeof line);
    if (v->note[0] && !v->saving) { /* until the next key; over a prompt being typed too */
        vb_put(b, 0, b->h - 1, VA_KEY, " ");
        int x = vb_put(b, 1, b->h - 1, VA_KEY, v->note);
        char fitted[sizeof v->note_path];
        if (v->note_path[0])
            vb_put(b, x, b->h - 1, VA_KEY, view_fit_path(v->note_path, b->w - x - 1, fitted, sizeof fitted));
        vb_fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    if (v->saving) {
        save_prompt(v, b);
        return;
    }
    if (prompt) {
        vb_put(b, 0, b->h - 1, VA_KEY, line);
        vb_fill_attr(b, b->h - 1, VA_KEY);
        return;
    }
    struct view_hint hints[24];
    keybar_fit(b, hints, view_key_hints(v, hints, 24));
}

/* The drill-down shows its lines, or under key a its instructions. */
static void render_drill(struct view *v, struct vbuf *b, int y0)
{
    (v->annotate ? view_render_annotate : view_render_source)(v, b, y0);
}

static void (*const screens[])(struct view *v, struct vbuf *b, int y0) = {
    [VM_TOP] = view_render_top, [VM_SOURCE] = render_drill, [VM_SECTIONS] = view_render_sections,
    [VM_LOG] = view_render_log, [VM_HELP] = view_render_help, [VM_DIAG] = view_render_diag,
    [VM_CALLS] = view_render_calls,
};

void view_render(struct view *v, struct vbuf *b)
{
    vb_clear(b);
    if (b->w < 20 || b->h < 8) { /* what it needs, the way out, and that the samples still come */
        vb_put(b, 0, 0, VA_WARN, "too small: 20x8 min");
        vb_put(b, 0, 1, VA_NORMAL, "q quits");
        vb_putf(b, 0, 2, VA_NORMAL, "samples %.0f", prof_total(v->prof));
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
    screens[v->mode](v, b, y0);
    b->h = full_h;
    if (graph_h)
        view_render_graph(v, b, full_h - 1 - graph_h, graph_h);
    keybar(v, b);
    if (!v->unicode) /* a terminal without UTF-8: plain ASCII for the few symbols we use */
        for (int i = 0; i < b->w * b->h; i++) {
            uint32_t c = b->cells[i].ch;
            if (c < 0x80)
                continue;
            b->cells[i].ch = c == 0x00B1 ? '+' : c == 0x2191 || c == 0x25B2 ? '^' : c == 0x2193 || c == 0x25BC ? 'v'
                             : c == 0x2190 ? '<' : c == 0x2192 ? '>' : '?';
        }
}
