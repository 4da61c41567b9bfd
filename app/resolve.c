/* cmprof-top --resolve: addr2line -a -f -i, from our own symbol tables. */
#include "resolve.h"

#include "../symbols/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_location(FILE *out, const struct sym_location *loc, uint32_t addr)
{
    fprintf(out, "0x%08x\n", addr);
    if (!loc->known) {
        fputs("??\n??:0\n", out);
        return;
    }
    for (uint32_t i = 0; i < loc->n_frames; i++) {
        const struct sym_frame *f = &loc->frames[i];
        fprintf(out, "%s\n%s:", f->function, f->file);
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

int resolve_main(const char *elf, char **addrs, int n, FILE *in, FILE *out, FILE *err)
{
    char msg[512];
    struct sym_table *t = sym_open(elf, msg, sizeof msg);
    if (!t) {
        fprintf(err, "cmprof-top: %s\n", msg);
        return 1;
    }
    if (*sym_warning(t))
        fprintf(err, "cmprof-top: warning: %s\n", sym_warning(t));
    int status = 0;
    for (int i = 0; i < n; i++) {
        uint32_t a;
        if (parse_addr(addrs[i], &a) != 0) {
            fprintf(err, "cmprof-top: '%s' is not an address\n", addrs[i]);
            status = 1;
            continue;
        }
        print_location(out, sym_lookup(t, a), a);
    }
    if (n == 0 && in) { /* like addr2line: addresses on stdin, one per line */
        char line[128];
        while (fgets(line, sizeof line, in)) {
            line[strcspn(line, " \t\r\n")] = '\0';
            uint32_t a;
            if (!line[0])
                continue;
            if (parse_addr(line, &a) != 0) {
                fprintf(err, "cmprof-top: '%s' is not an address\n", line);
                status = 1;
                continue;
            }
            print_location(out, sym_lookup(t, a), a);
            fflush(out);
        }
    }
    sym_close(t);
    return status;
}
