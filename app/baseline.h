/* --diff BASE: a saved JSON report (cmprof-top --batch -o json) as the baseline each row is
 * compared with, by a two-proportion test. The report is untrusted input: a small JSON reader
 * takes what it needs ("total", and each row's "name" and "samples") and refuses the rest. */
#ifndef CMPROF_APP_BASELINE_H
#define CMPROF_APP_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

struct baseline_row {
    char *name;
    double samples;
};

struct baseline {
    double total;
    char group[16];            /* "function", "line", "file", "task" as the report says */
    struct baseline_row *rows; /* sorted by name */
    size_t n;
};

/* Read a report; 0, or -1 with a one-line reason naming the file and the byte offset. */
int baseline_load(const char *path, struct baseline *b, char *err, size_t errlen);
void baseline_free(struct baseline *b);
/* The baseline's samples for a row name (0 when the baseline has no such row). */
double baseline_samples(const struct baseline *b, const char *name);

struct baseline_delta {
    double base_share;  /* 0..1 */
    double delta;       /* share now - share then */
    double z;           /* two-proportion z statistic */
    bool significant;   /* |z| beyond the two-sided 95 % bound, Bonferroni over `rows` comparisons */
};
/* Compare k of n samples now with kb of nb then, as one of `rows` comparisons. */
struct baseline_delta baseline_compare(double k, double n, double kb, double nb, size_t rows);

#endif
