/* ncurses(w) glue: a vbuf is drawn cell by cell with a few colour pairs. */
#define _XOPEN_SOURCE_EXTENDED 1
#include "tui.h"

#include <curses.h>
#include <term.h>
#include <locale.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static SCREEN *screen;
static FILE *tty_in, *tty_out;
static bool colors;
static bool open_now;
static struct termios saved_termios;
static int saved_fd = -1;

/* A crash (ours or a library's) must not leave the terminal raw, hidden-cursor, on the alternate
 * screen and reporting the mouse. endwin() is not async-signal-safe: write the resets and put the
 * saved termios back, then let the signal kill the process as it would have. */
static void restore_on_crash(int sig)
{
    static const char reset[] = "\033[0m\033[?25h\033[?1000l\033[?1002l\033[?1006l\033[?1l\033>\033[?1049l\r\n";
    if (saved_fd >= 0) {
        ssize_t ignored = write(saved_fd, reset, sizeof reset - 1);
        (void)ignored;
        tcsetattr(saved_fd, TCSANOW, &saved_termios);
    }
    raise(sig); /* SA_RESETHAND: the default action now */
}

static void catch_crashes(int fd)
{
    if (tcgetattr(fd, &saved_termios) != 0)
        return;
    saved_fd = fd;
    static const int fatal[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
    struct sigaction sa = {0};
    sa.sa_handler = restore_on_crash;
    sa.sa_flags = (int)(SA_RESETHAND | SA_NODEFER);
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaction(fatal[i], &sa, NULL);
}

int tui_open(bool color, bool *unicode, char *err, size_t errlen)
{
    /* the character set only: numbers print as in --batch's reports, and the other categories'
     * locale files stay unmapped */
    setlocale(LC_CTYPE, "");
    const char *cs = setlocale(LC_CTYPE, NULL);
    *unicode = cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8"));
    tty_in = fopen("/dev/tty", "r");
    tty_out = fopen("/dev/tty", "w");
    if (!tty_in || !tty_out) {
        snprintf(err, errlen, "no terminal: the live view needs one (use --batch)");
        return -1;
    }
    catch_crashes(fileno(tty_out));
    screen = newterm(NULL, tty_out, tty_in);
    if (!screen) {
        snprintf(err, errlen, "cannot start the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    open_now = true;
    set_term(screen);
    const char *cup = tigetstr("cup");
    if (!cup || cup == (const char *)-1) { /* TERM=dumb and the like: every row would land on one line */
        tui_close();
        snprintf(err, errlen, "TERM=%s cannot move the cursor: the live view needs a terminal such as xterm "
                 "(or use --batch)", getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    colors = color && has_colors();
    if (colors) {
        start_color();
        use_default_colors();
        init_pair(1, COLOR_CYAN, -1);    /* title */
        init_pair(2, COLOR_BLACK, COLOR_CYAN); /* selection */
        init_pair(3, COLOR_GREEN, -1);   /* bar */
        init_pair(4, COLOR_YELLOW, -1);  /* interval */
        init_pair(5, COLOR_RED, -1);     /* warnings */
        init_pair(6, COLOR_GREEN, -1);   /* good */
        init_pair(7, COLOR_BLACK, COLOR_WHITE); /* key bar */
    }
    return 0;
}

void tui_close(void)
{
    if (!open_now)
        return;
    open_now = false;
    saved_fd = -1;
    endwin();
    delscreen(screen);
    if (tty_in)
        fclose(tty_in);
    if (tty_out)
        fclose(tty_out);
    tty_in = tty_out = NULL;
}

void tui_suspend(void)
{
    if (!open_now)
        return;
    endwin();
    fflush(tty_out);
}

void tui_resume(void)
{
    if (!open_now)
        return;
    reset_prog_mode();
    clearok(curscr, TRUE); /* whatever the shell drew meanwhile is gone at the next draw */
    refresh();
}

void tui_size(int *w, int *h)
{
    getmaxyx(stdscr, *h, *w);
}

int tui_fd(void)
{
    return tty_in ? fileno(tty_in) : -1;
}

int tui_key(void)
{
    int c = getch();
    switch (c) {
    case ERR:
        return -1;
    case KEY_UP:
        return VK_UP;
    case KEY_DOWN:
        return VK_DOWN;
    case KEY_LEFT:
        return VK_LEFT;
    case KEY_RIGHT:
        return VK_RIGHT;
    case KEY_PPAGE:
        return VK_PGUP;
    case KEY_NPAGE:
        return VK_PGDN;
    case KEY_HOME:
        return VK_HOME;
    case KEY_END:
        return VK_END;
    case KEY_ENTER:
    case '\n':
    case '\r':
        return VK_ENTER;
    case 27:
        return VK_ESC;
    case KEY_BACKSPACE:
    case 127:
    case 8:
        return VK_BACKSPACE;
    case KEY_F(1):
        return VK_F1;
    case KEY_F(6):
        return VK_F6;
    case KEY_F(10):
        return VK_F10;
    case KEY_RESIZE:
        clearok(curscr, TRUE); /* the terminal cropped the old screen as it liked: repaint it all */
        return VK_RESIZE;
    case KEY_MOUSE: {
        MEVENT m;
        if (getmouse(&m) == OK) {
            if (m.bstate & BUTTON4_PRESSED)
                return VK_WHEEL_UP;
            if (m.bstate & BUTTON5_PRESSED)
                return VK_WHEEL_DOWN;
        }
        return -1;
    }
    default:
        return c >= 0 && c < 0x110000 ? c : -1;
    }
}

static attr_t attr_of(uint8_t a, short *pair)
{
    *pair = 0;
    switch (a) {
    case VA_DIM:
        return A_DIM;
    case VA_BOLD:
        return A_BOLD;
    case VA_TITLE:
        *pair = 1;
        return A_BOLD;
    case VA_SELECT:
        *pair = 2;
        return colors ? A_NORMAL : A_REVERSE;
    case VA_BAR:
        *pair = 3;
        return A_NORMAL;
    case VA_CI:
        *pair = 4;
        return A_NORMAL;
    case VA_WARN:
        *pair = 5;
        return A_BOLD;
    case VA_GOOD:
        *pair = 6;
        return A_NORMAL;
    case VA_KEY:
        *pair = 7;
        return colors ? A_NORMAL : A_REVERSE;
    default:
        return A_NORMAL;
    }
}

void tui_draw(const struct vbuf *b)
{
    int w, h;
    getmaxyx(stdscr, h, w);
    for (int y = 0; y < b->h && y < h; y++) {
        for (int x = 0; x < b->w && x < w; x++) {
            const struct vcell *c = &b->cells[y * b->w + x];
            short pair;
            attr_t at = attr_of(c->attr, &pair);
            if (!colors)
                pair = 0;
            wchar_t wc[2] = {(wchar_t)c->ch, 0};
            cchar_t cc;
            setcchar(&cc, wc, at, pair, NULL);
            if (y == h - 1 && x == w - 1) /* adding the last cell would scroll; inserting it does not */
                mvins_wch(y, x, &cc);
            else
                mvadd_wch(y, x, &cc);
        }
    }
    refresh();
}
