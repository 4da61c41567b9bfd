/* -o csv: one line per row, with a header line; names quoted when they need it. */
#include "emit.h"

#include "../profile/escape.h"

#include <stdbool.h>
#include <string.h>

/* A name or path from the ELF or the firmware (untrusted): control and invalid bytes as \xNN, as in
 * the table (a CSV is read with cat too), then quoted when it holds a comma or a quote. One that a
 * spreadsheet would run as a formula (=, +, -, @ first) is quoted after a ' that keeps it text. */
static void field(FILE *out, const char *raw)
{
    char clean[4096];
    esc_text(clean, sizeof clean, raw, NULL);
    const char *s = clean;
    bool formula = s[0] && strchr("=+-@", s[0]);
    if (!formula && !strpbrk(s, ",\"\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    if (formula)
        fputc('\'', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void report_csv(const struct report_data *d, FILE *out)
{
    const struct report_options *o = d->o;
    fprintf(out, "samples,percent,ci95,lo95,hi95,name,file,line,approximate%s\n",
            o->base ? ",base_percent,delta,significant" : "");
    for (size_t i = 0; i < d->n; i++) {
        const struct prof_row *r = &d->rows[i];
        char buf[32];
        emit_samples(buf, sizeof buf, r->samples);
        fprintf(out, "%s,%.4f,%.4f,%.4f,%.4f,", buf, 100.0 * r->share, 100.0 * r->ci95, 100.0 * r->lo95,
                100.0 * r->hi95);
        field(out, emit_row_name(o, d->p, r));
        fputc(',', out);
        field(out, r->file ? r->file : "");
        fprintf(out, ",%u,%d", r->line, r->approximate ? 1 : 0);
        if (o->base) {
            struct baseline_delta delta = emit_compare_row(o, d->p, r, d->n);
            fprintf(out, ",%.4f,%.4f,%d", 100.0 * delta.base_share, 100.0 * delta.delta, delta.significant ? 1 : 0);
        }
        fputc('\n', out);
    }
}
