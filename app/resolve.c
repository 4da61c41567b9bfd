/* cmprof-top --resolve: addr2line -a -f -i, from our own symbol tables. */
#include "resolve.h"

#include "../symbols/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool demangle; /* -C: names as addr2line -C prints them */

/* Text appended to a buffer: the output is formatted by hand, as printf's parsing cost more
 * than the lookups on large inputs. */
struct text {
    char *p;
    size_t len, cap;
};

static void put(struct text *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->len + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return; /* out of memory: the text is cut, fwrite reports nothing worse */
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void put_str(struct text *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_uint(struct text *b, uint32_t v)
{
    char d[10];
    int n = 0;
    do
        d[sizeof d - 1 - n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    put(b, d + sizeof d - n, (size_t)n);
}

static void print_location(struct text *b, struct sym_table *t, const struct sym_location *loc, uint32_t addr)
{
    static const char hex[] = "0123456789abcdef";
    char a[11] = "0x";
    for (int i = 0; i < 8; i++)
        a[2 + i] = hex[(addr >> (28 - 4 * i)) & 15];
    a[10] = '\n';
    put(b, a, sizeof a);
    if (!loc->known) {
        put_str(b, "??\n??:0\n");
        return;
    }
    for (uint32_t i = 0; i < loc->n_frames; i++) {
        const struct sym_frame *f = &loc->frames[i];
        put_str(b, demangle ? sym_demangle(t, f->function) : f->function);
        put(b, "\n", 1);
        put_str(b, f->file);
        put(b, ":", 1);
        if (f->line)
            put_uint(b, f->line);
        else
            put(b, "?", 1);
        if (loc->discriminator) { /* addr2line repeats it on every frame */
            put_str(b, " (discriminator ");
            put_uint(b, loc->discriminator);
            put(b, ")", 1);
        }
        put(b, "\n", 1);
    }
}

static void flush_text(struct text *b, FILE *out)
{
    if (b->len)
        fwrite(b->p, 1, b->len, out);
    b->len = 0;
    fflush(out);
}

static int parse_addr(const char *s, uint32_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 16); /* addr2line reads hex, with or without 0x */
    if (end == s || *end != '\0' || v > 0xFFFFFFFFull)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* One address line from stdin; blank lines are skipped. Returns 1 for a line that is not one. */
static int answer_line(struct sym_table *t, char *line, struct text *out, FILE *err)
{
    line[strcspn(line, " \t")] = '\0';
    uint32_t a;
    if (!line[0])
        return 0;
    if (parse_addr(line, &a) != 0) {
        fprintf(err, "cmprof-top: '%s' is not an address\n", line);
        return 1;
    }
    print_location(out, t, sym_lookup(t, a), a);
    return 0;
}

/* The addresses on a chunk's lines, for sym_prefetch; a line cut by the chunk's end may be
 * missed or misread, which costs only its unit being read on its own. */
static size_t chunk_addrs(const char *chunk, size_t len, uint32_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        char tok[24];
        size_t k = 0;
        while (i < len && chunk[i] != '\n' && chunk[i] != '\r' && chunk[i] != ' ' && chunk[i] != '\t' &&
               k + 1 < sizeof tok)
            tok[k++] = chunk[i++];
        tok[k] = '\0';
        while (i < len && chunk[i] != '\n' && chunk[i] != '\r')
            i++; /* the rest of the line */
        i++;
        if (k && parse_addr(tok, &out[n]) == 0)
            n++;
    }
    return n;
}

int resolve_main(const char *elf, bool demangle_names, char **addrs, int n, FILE *in, FILE *out, FILE *err)
{
    struct text text = {0};
    demangle = demangle_names;
    char msg[512];
    struct sym_table *t = sym_open(elf, msg, sizeof msg);
    if (!t) {
        fprintf(err, "cmprof-top: %s\n", msg);
        return 1;
    }
    snprintf(msg, sizeof msg, "%s", sym_warning(t));
    if (*msg)
        fprintf(err, "cmprof-top: warning: %s\n", msg);
    int status = 0;
    uint32_t *listed = malloc(((size_t)n + 1) * sizeof *listed);
    size_t n_listed = 0;
    for (int i = 0; listed && i < n; i++)
        n_listed += parse_addr(addrs[i], &listed[n_listed]) == 0;
    sym_prefetch(t, listed, n_listed);
    free(listed);
    for (int i = 0; i < n; i++) {
        uint32_t a;
        if (parse_addr(addrs[i], &a) != 0) {
            fprintf(err, "cmprof-top: '%s' is not an address\n", addrs[i]);
            status = 1;
            continue;
        }
        print_location(&text, t, sym_lookup(t, a), a);
    }
    flush_text(&text, out);
    if (n == 0 && in) {
        /* like addr2line: addresses on stdin, one per line. Whole chunks are read and answered
         * before one flush, so a pipe is fast and an interactive user still sees each answer. */
        char chunk[65536], line[128];
        size_t len = 0, got;
        int fd = fileno(in);
        static uint32_t ahead[sizeof chunk / 2 + 1];
        while ((got = (size_t)read(fd, chunk, sizeof chunk)) > 0 && got != (size_t)-1) {
            sym_prefetch(t, ahead, chunk_addrs(chunk, got, ahead));
            for (size_t i = 0; i < got; i++) {
                char ch = chunk[i];
                if (ch != '\n' && ch != '\r') {
                    if (len + 1 < sizeof line)
                        line[len++] = ch;
                    continue;
                }
                line[len] = '\0';
                len = 0;
                status |= answer_line(t, line, &text, err);
            }
            flush_text(&text, out);
        }
        line[len] = '\0';
        if (len)
            status |= answer_line(t, line, &text, err);
        flush_text(&text, out);
    }
    if (*sym_warning(t) && strcmp(sym_warning(t), msg) != 0) /* found while reading a unit */
        fprintf(err, "cmprof-top: warning: %s\n", sym_warning(t));
    free(text.p);
    sym_close(t);
    return status;
}
