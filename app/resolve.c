/* cmprof-top --resolve: addr2line -a -f -i, from our own symbol tables. */
#include "resolve.h"

#include "../symbols/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool demangle; /* -C: names as addr2line -C prints them */

static void print_location(FILE *out, struct sym_table *t, const struct sym_location *loc, uint32_t addr)
{
    fprintf(out, "0x%08x\n", addr);
    if (!loc->known) {
        fputs("??\n??:0\n", out);
        return;
    }
    for (uint32_t i = 0; i < loc->n_frames; i++) {
        const struct sym_frame *f = &loc->frames[i];
        fprintf(out, "%s\n%s:", demangle ? sym_demangle(t, f->function) : f->function, f->file);
        if (f->line)
            fprintf(out, "%u", f->line);
        else
            fputc('?', out);
        if (loc->discriminator) /* addr2line repeats it on every frame */
            fprintf(out, " (discriminator %u)", loc->discriminator);
        fputc('\n', out);
    }
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
static int answer_line(struct sym_table *t, char *line, FILE *out, FILE *err)
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
        print_location(out, t, sym_lookup(t, a), a);
    }
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
                status |= answer_line(t, line, out, err);
            }
            fflush(out);
        }
        line[len] = '\0';
        if (len)
            status |= answer_line(t, line, out, err);
    }
    if (*sym_warning(t) && strcmp(sym_warning(t), msg) != 0) /* found while reading a unit */
        fprintf(err, "cmprof-top: warning: %s\n", sym_warning(t));
    sym_close(t);
    return status;
}
