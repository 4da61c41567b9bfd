/* --diff BASE: a saved JSON report (cmprof-top --batch -o json) as the baseline each row is
 * compared with, by a two-proportion test. The report is untrusted input: a small JSON reader
 * takes what it needs ("total", and each row's "name" and "samples") and refuses the rest. */
#ifndef CMPROF_REPORT_BASELINE_H
#define CMPROF_REPORT_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

struct baseline_row {
    char *name;
    double samples;
    size_t offset; /* where the row begins in the file, to name it when it is refused */
};

struct baseline {
    double total;
    char group[16];            /* "function", "line", "file", "task" as the report says */
    char build_id[41];         /* the firmware's, when its stream announced one ("" when not) */
    struct baseline_row *rows; /* sorted by name */
    size_t n;
};

/* Read a report; 0, or -1 with a one-line reason naming the file, the line and the byte offset.
 * Refused besides damaged JSON: counts that are negative or past 2^53, a total the rows' counts
 * do not add up to, a report that does not say its grouping, two rows of one name (a report has
 * one row a name: a copy would count twice), anything but blanks after the report (two
 * reports run together, or a report with trailing data), and a report that said its samples were
 * not its ELF's ("wrong_elf": true: its rows' names are wrong). */
int baseline_load(const char *path, struct baseline *b, char *err, size_t errlen);
/* 0 when the baseline's rows are grouped by `group` ("function", ...), else -1 with a one-line
 * reason naming the file: rows of another grouping would all look new. */
int baseline_check_group(const struct baseline *b, const char *path, const char *group, char *err, size_t errlen);
/* True when the baseline and this capture both announce a build-id and they differ (*why says
 * so in one line): the rows are then compared by name across two builds of the firmware. */
bool baseline_other_build(const struct baseline *b, const char *capture_id, char *why, size_t whylen);
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
