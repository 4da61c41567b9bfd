/* Names, counts and strings as the report formats write them (emit.h). */
#include "emit.h"

#include "../profile/escape.h"
#include "../symbols/symbols.h"

#include <math.h>
#include <string.h>

/* (report.h: here, so that the writers need nothing of report.c, which calls them) */
const char *report_group_name(enum prof_group by)
{
    static const char *const names[] = {"function", "line", "file", "task"};
    return names[by];
}

void emit_samples(char *buf, size_t len, double v)
{
    if (v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.2f", v);
}

void emit_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        size_t k = esc_char_len(s);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (k)
            fwrite(s, 1, k, out);
        else if (c < 0x20 || c == 0x7F)
            fprintf(out, "\\u%04x", c);
        else if (c == 0xC2 && ((unsigned char)s[1] & 0xC0) == 0x80) { /* a C1 control, U+0080..U+009F */
            fprintf(out, "\\u%04x", (unsigned char)s[1]);
            k = 2;
        }
        else
            fputs("\\ufffd", out);
        s += k ? k : 1;
    }
    fputc('"', out);
}

void emit_terminal(FILE *out, const char *s)
{
    char buf[1024];
    esc_text(buf, sizeof buf, s, NULL);
    fputs(buf, out);
}

const char *emit_row_name(const struct report_options *o, struct prof *p, const struct prof_row *r)
{
    return o->by == PROF_BY_FUNCTION ? sym_shown_name(prof_symbols(p), r->name, o->demangle) : r->name;
}

struct baseline_delta emit_compare_row(const struct report_options *o, struct prof *p, const struct prof_row *r,
                                       size_t n)
{
    double kb = baseline_samples(o->base, emit_row_name(o, p, r));
    return baseline_compare(r->samples, prof_total(p), kb, o->base->total, n);
}
