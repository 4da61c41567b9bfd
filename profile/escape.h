/* Untrusted names (ELF symbols, DWARF names, stream task names) on their way to a terminal, a
 * report or another tool: valid UTF-8 text passes, control characters (C0, DEL, C1) and bytes
 * that are not valid UTF-8 never do. */
#ifndef CMPROF_ESCAPE_H
#define CMPROF_ESCAPE_H

#include <stddef.h>

/* Length (1-4) of the valid, printable UTF-8 character at s; 0 for a control character, an
 * invalid, overlong or truncated sequence, a surrogate, or the end of the string. */
size_t esc_char_len(const char *s);

/* Copy src to dst (always terminated, cut at cap), writing each control character, each byte
 * that is not valid UTF-8 and each byte in `also` (e.g. ";" for folded stacks) as \xNN, and
 * each backslash as \\: every \ in the text begins an escape, so a name that holds the four
 * characters \x1b reads \\x1b, never as the ESC byte's \x1b. */
void esc_text(char *dst, size_t cap, const char *src, const char *also);

/* The bytes esc_text wrote from (its first n bytes of text), each \\ and \xNN back as its byte,
 * into dst (room for n + 1, terminated). Exact for esc_text's text; the text of releases that
 * wrote a backslash as itself (all but the folded stacks, which wrote \x5c) reads the same
 * unless a backslash stood before "x" and two hex digits or before another backslash. */
void esc_decode(char *dst, const char *text, size_t n);

#endif
