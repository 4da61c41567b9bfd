/* The terminal: ncurses setup and restore, keys, and drawing a view buffer. The only module that
 * calls ncurses. */
#ifndef CMPROF_TUI_H
#define CMPROF_TUI_H

#include "view.h"

#include <stdbool.h>
#include <stddef.h>

/* Take over the terminal (/dev/tty, so stdin can carry data). Returns 0, or -1 with a reason. */
int tui_open(bool color, bool *unicode, char *err, size_t errlen);
/* Give the terminal back; safe to call twice and from atexit. */
void tui_close(void);
/* Job control: the terminal as it was before tui_open() while the process is stopped, and taken
 * over again, to be drawn anew, once it continues. */
void tui_suspend(void);
void tui_resume(void);
void tui_size(int *w, int *h);
int tui_fd(void);
/* The next key as a view key code, or -1 when none is waiting. */
int tui_key(void);
void tui_draw(const struct vbuf *b);

#endif
