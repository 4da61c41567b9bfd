/* Reports of a finished profile: the output formats (-o) and the one table that dispatches to
 * their writers, and --fail-if-slower's check against a --diff baseline. */
#ifndef CMPROF_REPORT_REPORT_H
#define CMPROF_REPORT_REPORT_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The output formats, in the order of report/report.c's table of them (the last four: other
 * tools' formats, report/exports.h). */
enum report_format { OUT_TABLE, OUT_CSV, OUT_JSON, OUT_FOLDED, OUT_SPEEDSCOPE,
                     OUT_PPROF, OUT_CALLGRIND, OUT_LCOV, OUT_TRACE, OUT_N_FORMATS };

/* What the command line, --help and the live view know of a format. */
struct report_format_info {
    const char *name;  /* -o NAME */
    const char *label; /* as the live view's key o names it ("CSV") */
    char key;          /* the key that picks it after o */
    const char *ext;   /* a snapshot's file extension */
    const char *note;  /* what --help says after its name ("(default)"), or "" */
    bool stacks;       /* writes call stacks (function or task first), not rows: by function or task only */
    bool own_layout;   /* its own (functions, lines, tasks as its readers want them): --by, --no-inline do nothing */
};

struct baseline;
struct ingest;

/* A run the source failed in: what ended it (or, when the source came back, its first failure),
 * every failure and reconnect counted, and the distinct reasons with how often each came. */
#define REPORT_REASONS 8
struct report_partial {
    const char *reason;
    unsigned failures, reconnects;
    double lost_s;             /* seconds without the source after its failures */
    size_t n_reasons;
    const char *reasons[REPORT_REASONS];
    unsigned times[REPORT_REASONS];
};

/* What a report shows and how, and what the run that made it said about itself. */
/* What a live view's snapshot (key o) is of: written at the head of its table and JSON. */
struct report_snapshot {
    const char *source, *elf;
    const char *build_id;      /* as the firmware announced it, "" when it did not */
    double from_s, to_s;       /* the counts' span, in seconds since the view started */
    double window_s;           /* the last-seconds window shown, 0 when cumulative */
    const char *saved_at;      /* local time, "YYYY-MM-DD HH:MM:SS" */
};

struct report_options {
    enum report_format format;
    enum prof_group by;
    bool inline_frames;
    bool demangle;             /* -C: C++ and Rust names demangled, as addr2line -C prints them */
    bool fold_overhead;        /* the library's code as one row in function and line rows */
    const char *elf;           /* the ELF's path (speedscope's title is its file name) */
    const char *source;        /* the capture or port read (named in pprof's comment), or NULL */
    const struct baseline *base; /* --diff: each row compared with this report, or NULL */
    bool halting;              /* a gdb: source: what halting cost */
    double halt_rate, halted_share;
    const char *source_detail; /* what a sampling source measured about itself, or NULL */
    const char *interrupted;   /* the signal that stopped the run ("SIGTERM"), or NULL */
    const struct report_partial *partial; /* the source failed during the run, or NULL */
    const char *source_format; /* what delivered the samples, when no decoder's format says it, or NULL */
    const struct report_snapshot *snapshot; /* a live view's snapshot, or NULL */
    const char *stalled;       /* the stream stopped before the run ended: why, or NULL */
};

/* A format's line in the table, NULL past the last (a loop over every format stops there). */
const struct report_format_info *report_format_info(enum report_format format);
/* The format called name ("table", "csv", ...); -1 when there is none. */
int report_format_parse(const char *name);
/* The format the live view's key o then key picks; -1 when none. */
int report_format_of_key(int key);
/* The formats' names, comma-separated, for a usage message. */
const char *report_format_names(void);
/* Whether the format can show rows grouped this way (the stack formats show functions or tasks). */
bool report_format_groups(enum report_format format, enum prof_group by);
const char *report_format_name(enum report_format format);
/* "function", "line", "file" or "task". */
const char *report_group_name(enum prof_group by);

/* The report for a finished profile in o->format; warning: what reading the ELF found, or "".
 * Returns 0, or -1 with a one-line reason in err (out of memory; a write error also shows in
 * ferror(out)). */
int report_write(const struct report_options *o, struct prof *p, const struct ingest *in, const char *warning,
                 FILE *out, char *err, size_t errlen);

/* --fail-if-slower: the rows that grew significantly (--diff's test) by more than `percent` of their
 * baseline share, one line each on err; returns how many. */
int report_regressions(const struct report_options *o, struct prof *p, double percent, FILE *err);
/* --diff: the share (0..1) of this report's samples in rows the baseline has too (*now), and of the
 * baseline's in rows this report has (*then). Both small: the baseline is of another program. */
void report_baseline_overlap(const struct report_options *o, struct prof *p, double *now, double *then);
/* A halting source's advice: the clauses after the figures in its detail ("figures; advice; advice"),
 * one "PREFIXwarning: CLAUSE" line each (prefix "" in the table, "cmprof-top: " on stderr). */
void report_source_advice(FILE *out, const char *detail, const char *prefix);

#endif
