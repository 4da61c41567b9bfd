/* What every report writer shares (internal to report/): the profile's rows and diagnostics,
 * worked out once, and the ways a name, a count or a string is written in each format. */
#ifndef CMPROF_REPORT_EMIT_H
#define CMPROF_REPORT_EMIT_H

#include "baseline.h"
#include "report.h"

#include "../base/path.h"
#include "../profile/ingest.h"

#include <stdio.h>

#define EMIT_DIAGS 16
#define EMIT_LOSSES 24

struct report_data {
    const struct report_options *o;
    struct prof *p;
    const struct ingest *in;
    const char *warning;          /* what reading the ELF found, or "" */
    const struct prof_row *rows;  /* none for the stack formats */
    size_t n;
    struct prof_diag diags[EMIT_DIAGS];
    size_t nd;
    char losses[EMIT_LOSSES][INGEST_LOSS_TEXT];
    size_t n_loss;
    char notes[6][INGEST_LOSS_TEXT]; /* what the decoders did that is no loss (ingest_notes) */
    size_t n_notes;
};

/* A count as an integer when it is one, else with two decimals. */
void emit_samples(char *buf, size_t len, double v);
/* A JSON string; bytes that are not valid UTF-8 become U+FFFD, so the document always parses. */
void emit_json_string(FILE *out, const char *s);
/* A name for the terminal: control and invalid bytes as \xNN, so no escape sequence gets through. */
void emit_terminal(FILE *out, const char *s);
/* A row's name as shown: function rows are keyed by linkage name (overloads stay apart); -C
 * shows them demangled. */
const char *emit_row_name(const struct report_options *o, struct prof *p, const struct prof_row *r);
/* A row against the baseline: its share then and now, and whether the change is significant
 * (two-proportion test, Bonferroni over the n rows of this report). */
struct baseline_delta emit_compare_row(const struct report_options *o, struct prof *p, const struct prof_row *r,
                                       size_t n);

/* The writers, one per format (report.c's table). Those that cannot fail but on the stream (its
 * errors are the caller's: fflush, ferror) return nothing; the others 0, or -1 with one line in err
 * (docs/architecture.md, "Results and failures"). */
void report_table(const struct report_data *d, FILE *out);
void report_csv(const struct report_data *d, FILE *out);
void report_json(const struct report_data *d, FILE *out);
void report_folded(const struct report_data *d, FILE *out);
int report_speedscope(const struct report_data *d, FILE *out, char *err, size_t errlen); /* out of memory */

#endif
