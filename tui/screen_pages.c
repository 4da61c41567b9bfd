/* The pages: help, the firmware's log, diagnostics. */
#include "view_int.h"

#include <stdio.h>
#include <string.h>

/* The help page after the keys (keys.c gives their lines). */
static const char *const help_lines[] = {
    "",
    "Each share carries its 95 % interval (Wilson's score interval, inside 0-100 % at any N),",
    "shaded around the end of its bar; \u00b1% is half its width. Rows whose interval reaches below",
    "half their share are dimmed: they may be noise. A function marked (inlined) had samples in",
    "copies of it inlined into other functions, all or some of them (i charges those to the callers).",
    "",
    "The header",
    "  samples      PC samples (sleep samples apart), since the start or the last r",
    "  N/s          received per second over the last 5 s; nominal N/s: timer clock / (period +",
    "               jitter/2), in the target's time (under QEMU guest time: the two differ)",
    "  clk          core clock; period P+0..J ticks [of T]: between samples, T the timer's clock",
    "  sections' clock",
    "               the clock the section times use, when not clk (announced, --cpu-hz)",
    "  mm:ss        time since the start or the last r",
    "  bad          lines or packets dropped as malformed (a check failed, a packet was invalid);",
    "               a live port's first, partial line does not count",
    "  overflows    ITM overflow packets: the trace port dropped data in the target",
    "  resyncs      ITM synchronisation packets after the first: the decoder found its place again",
    "  lost         samples the firmware could not queue (its ring was full)",
    "  sleeping     samples taken while the core slept (ITM sleep packets, PCSR 0xFFFFFFFF)",
    "  overhead     share of samples in cmprof's firmware code but its sampling interrupt, which",
    "               cannot sample itself (so more: >); idle-task drain polls are idle, not overhead",
    "  idle         share of samples in the idle task (named idle, IDLE, IDLE0, idle 00...)",
    "  data lost    kinds of loss the decoders counted: d lists them",
    "  joined       joined mid-stream: samples sent before the view could place them (before the",
    "               first announce, or in version 7's first group of 8 lines): where the profile",
    "               begins, not a loss",
    "  [state]      the source: connected (with halts/s and the core's halted share for gdb:),",
    "               reconnecting and why, or end of file",
};

void view_render_log(struct view *v, struct vbuf *b, int y0)
{
    vb_put(b, 0, y0, VA_TITLE, "firmware log (lines that are not profiling data)");
    vb_fill_attr(b, y0, VA_TITLE);
    int h = b->h - 1 - (y0 + 1);
    int first = v->log_n > h ? v->log_n - h : 0;
    for (int i = first; i < v->log_n; i++)
        vb_put(b, 0, y0 + 1 + (i - first), VA_NORMAL, v->log[(v->log_head + i) % VIEW_LOG_LINES]);
    if (!v->log_n)
        vb_put(b, 0, y0 + 1, VA_DIM, "no log lines yet");
}

/* A help line as shown: a slice of a paragraph, indented when it continues one. */
struct shown_line {
    const char *text;
    int bytes, indent;
    bool title;
};

#define HELP_SHOWN_MAX 256

#define HELP_PARAGRAPHS 64

static bool help_title(const char *line) /* "Keys", "The header" */
{
    return line[0] && line[0] != ' ' && strlen(line) < 30 && !strpbrk(line, ".,");
}

/* The help as paragraphs: "Keys" and the key table's lines, then help_lines, where a line
 * indented to the key column, or plain text after plain text, continues the one before; a term too
 * long for the key column stands on a line of its own, its text after a '\n'. */
static int help_paragraphs(char (*para)[512], int cap)
{
    snprintf(para[0], 512, "Keys");
    int n = 1 + view_key_help(para + 1, cap - 1);
    bool prev_text = false;
    for (size_t i = 0; i < sizeof help_lines / sizeof help_lines[0]; i++) {
        const char *line = help_lines[i];
        bool key_continues = strncmp(line, "               ", 15) == 0 && line[15] != ' ';
        bool text = line[0] && line[0] != ' ' && !help_title(line);
        if (n > 0 && (key_continues || (text && prev_text))) {
            size_t len = strlen(para[n - 1]);
            bool lone_term = key_continues && len > 14 && strspn(para[n - 1], " ") == 2 && !strchr(para[n - 1], '\n') &&
                             !strstr(para[n - 1] + 2, "  "); /* "  sections' clock": no text yet */
            snprintf(para[n - 1] + len, 512 - len, "%c%s", lone_term ? '\n' : ' ', line + strspn(line, " "));
        } else if (n < cap) {
            snprintf(para[n++], 512, "%s", line);
        }
        prev_text = text;
    }
    return n;
}

/* The help wrapped at word boundaries to `width` columns; a key's text continues under itself. */
static int wrap_help(int width, struct shown_line *out, int cap)
{
    static char para[HELP_PARAGRAPHS][512];
    int n = 0, n_para = help_paragraphs(para, HELP_PARAGRAPHS);
    for (int i = 0; i < n_para; i++) {
        const char *line = para[i];
        bool title = help_title(line);
        int lead = (int)strspn(line, " ");
        int indent = lead == 2 && ((strlen(line) > 15 && line[15 - 1] == ' ' && line[15] != ' ') || strchr(line, '\n'))
                         ? 15 : lead;
        const char *rest = line;
        bool first = true;
        do {
            int avail = width - (first ? 0 : indent), cols = 0, cut = -1, end = 0;
            for (; rest[end] && rest[end] != '\n' && cols < avail; end++) {
                cols += ((unsigned char)rest[end] & 0xC0) != 0x80;
                if (rest[end] == ' ' && end > (first ? indent : 0))
                    cut = end;
            }
            while (rest[end] && ((unsigned char)rest[end] & 0xC0) == 0x80)
                end++; /* never split a character */
            int take = rest[end] && rest[end] != '\n' && cut > 0 ? cut : end; /* the last space that fits, else all */
            if (n < cap)
                out[n++] = (struct shown_line){rest, take, first ? 0 : indent, title};
            rest += take;
            while (*rest == ' ' || *rest == '\n')
                rest++;
            first = false;
        } while (*rest);
    }
    return n;
}

void view_render_help(struct view *v, struct vbuf *b, int y0)
{
    static struct shown_line shown[HELP_SHOWN_MAX];
    int n = wrap_help(b->w, shown, HELP_SHOWN_MAX), h = b->h - 1 - y0;
    v->help_rows = n;
    if (v->sel > n - h)
        v->sel = n - h > 0 ? n - h : 0;
    for (int i = 0; i < h && v->sel + i < n; i++) {
        const struct shown_line *l = &shown[v->sel + i];
        vb_putf(b, l->indent, y0 + i, l->title ? VA_TITLE : VA_NORMAL, "%.*s", l->bytes, l->text);
    }
}

#define DIAG_LINES 256 /* the diagnostics page's wrapped lines, at most */

/* A connected source's advice, each clause after a "; " of its state ("connected, 0.50 halts/s, ...;
 * the GDB server limits the samples: ..."), one line each from row y; returns the row after. */
static int source_advice(struct vbuf *page, int y, const char *state)
{
    if (!state || strncmp(state, "connected", 9) != 0)
        return y;
    for (const char *c = strstr(state, "; "); c; c = strstr(c + 2, "; ")) {
        const char *next = strstr(c + 2, "; ");
        char line[600];
        snprintf(line, sizeof line, "source: %.*s", (int)(next ? next - (c + 2) : (ptrdiff_t)strlen(c + 2)), c + 2);
        y = vb_wrap(page, y, VA_WARN, line) + 1;
    }
    return y;
}

/* Every diagnostic and loss, wrapped to the page's width from its row 0; returns its line count. */
static int diag_lines(struct view *v, struct vbuf *page)
{
    struct prof_diag d[16];
    size_t nd = prof_diagnose(v->prof, d, 16);
    int y = 0;
    bool ended = v->st.ended && *v->st.ended;
    if (ended) /* first: after it nothing more comes, whatever the rest says */
        y = vb_wrap(page, y, VA_WARN, v->st.ended) + 1;
    for (size_t i = 0; i < nd; i++)
        y = vb_wrap(page, y, VA_WARN, d[i].text) + 1;
    if (*v->st.elf_warning)
        y = vb_wrap(page, y, VA_WARN, v->st.elf_warning) + 1;
    char losses[24][INGEST_LOSS_TEXT];
    size_t nl = ingest_losses(v->in, losses, 24);
    for (size_t i = 0; i < nl; i++) {
        char line[INGEST_LOSS_TEXT + 16];
        snprintf(line, sizeof line, "data lost: %.*s", INGEST_LOSS_TEXT, losses[i]);
        y = vb_wrap(page, y, VA_WARN, line) + 1;
    }
    char notes[6][INGEST_LOSS_TEXT];
    size_t nn = ingest_notes(v->in, notes, 6);
    for (size_t i = 0; i < nn; i++) { /* no loss: how the trace was read */
        char line[INGEST_LOSS_TEXT + 16];
        snprintf(line, sizeof line, "note: %.*s", INGEST_LOSS_TEXT, notes[i]);
        y = vb_wrap(page, y, VA_NORMAL, line) + 1;
    }
    bool gaps = v->st.gaps && *v->st.gaps;
    if (gaps)
        y = vb_wrap(page, y, VA_WARN, v->st.gaps) + 1;
    int advice = y;
    y = source_advice(page, y, v->st.state);
    advice = y != advice;
    bool none = !nd && !*v->st.elf_warning && !nl && !gaps;
    if (none)
        y = vb_wrap_as(page, y, VA_GOOD, "", ended ? "otherwise none: no sign of lockstep, interrupt skid, a wrong "
                       "ELF or a wrong stack; no data lost" : "none: no sign of lockstep, interrupt skid, a wrong ELF "
                       "or a wrong stack; no data lost");
    char joined[INGEST_LOSS_TEXT + 100];
    struct ingest_joined j;
    ingest_joined(v->in, &j, joined, sizeof joined); /* no loss: said once, not as one */
    if (j.skipped || j.bytes)
        y = vb_wrap_as(page, y + none, VA_NORMAL, "  ", joined) + 1;
    bool said = nd || nl || nn || *v->st.elf_warning || gaps || advice || j.skipped || j.bytes;
    return said ? y - 1 : y; /* not the blank after the last */
}

/* The page scrolls (keys.c's scroll_diag): what does not fit under the header stays reachable, and
 * its last row says so. */
void view_render_diag(struct view *v, struct vbuf *b, int y0)
{
    static struct vbuf page;
    vb_put(b, 0, y0, VA_TITLE, "diagnostics");
    vb_fill_attr(b, y0, VA_TITLE);
    if (vbuf_resize(&page, b->w, DIAG_LINES) != 0)
        return;
    vb_clear(&page);
    int n = diag_lines(v, &page), rows = b->h - 1 - (y0 + 1);
    bool more = n > rows;
    rows -= more; /* the last row: where the rest is */
    v->diag_page = rows;
    if (v->diag_top > n - rows)
        v->diag_top = n - rows > 0 ? n - rows : 0;
    for (int i = 0; i < rows && v->diag_top + i < n; i++)
        memcpy(&b->cells[(size_t)(y0 + 1 + i) * (size_t)b->w], &page.cells[(size_t)(v->diag_top + i) * (size_t)b->w],
               (size_t)b->w * sizeof *b->cells);
    if (more)
        vb_putf(b, 0, y0 + 1 + rows, VA_DIM, "lines %d-%d of %d: \u2191\u2193 PgUp PgDn Home End", v->diag_top + 1,
                v->diag_top + rows, n);
}
