/* cmprof-top --batch: read a source to the end and print the profile. */
#ifndef CMPROF_APP_BATCH_H
#define CMPROF_APP_BATCH_H

#include "exit.h"

#include "../decode/detect.h"
#include "../profile/profile.h"
#include "../report/report.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct batch_options {
    const char *source;   /* a file, or "-" for stdin */
    const char *elf;
    enum detect_format format;
    const char *format_option; /* the option that set format ("-f", "--tpiu-offset"), NULL: not the user */
    uint8_t tpiu_id;
    uint8_t tpiu_offset;  /* --tpiu-offset N: N + 1 (TPIU frames begin at input byte N); 0: by sync or content */
    bool wait_sync;
    bool flat_stacks;     /* --stack-depth 0 on a firmware's capture: its stack evidence left aside */
    enum prof_group by;
    bool inline_frames;
    enum report_format output;
    uint64_t max_samples; /* 0: no limit */
    bool demangle;        /* -C: C++ and Rust names demangled, as addr2line -C prints them */
    bool fold_overhead;   /* the library's code as one row in function and line rows */
    bool halting;         /* set by the live loop for a gdb: source: what halting cost */
    double halt_rate, halted_share;
    const char *source_detail; /* what a sampling source measured about itself, or NULL */
    const struct baseline *base; /* --diff: each row compared with this report, or NULL */
    double fail_if_slower;     /* > 0: exit 3 when a row grows significantly by more than this % */
    const char *interrupted;   /* the signal that stopped the run ("SIGTERM"), or NULL */
    const struct report_partial *partial; /* the source failed during the run, or NULL */
    const char *source_format; /* a sampling source's own label ("openocd PCSR"), or NULL */
    const struct report_snapshot *snapshot; /* the live view's key o: what the snapshot is of, or NULL */
    const char *stalled;       /* a stream that stopped before the run ended: why, or NULL */
};

int batch_main(const struct batch_options *o, FILE *out, FILE *err);
/* After a stopping signal (stop.h): the report marked interrupted, a line on err, and the exit
 * status (128 + the signal); 0 when no signal came. */
int batch_interrupted(struct batch_options *o, double samples, FILE *err);

/* --fail-if-slower: the rows that grew significantly (--diff's test) by more than the given
 * percentage of their baseline share, one line each on err; returns how many. */
int batch_regressions(const struct batch_options *o, struct prof *p, FILE *err);

struct sym_table;
/* --diff's rows and this ELF's that cannot match by name: an ELF without symbols or DWARF (stripped)
 * against a baseline of named rows, or a baseline of raw addresses against an ELF that names them
 * (every row would compare as new, and --fail-if-slower fail a packaging mistake as a slowdown).
 * One line on err and EXIT_USAGE, as for a baseline of another --by; 0 when they can be compared. */
int batch_diff_refused(const struct batch_options *o, const struct sym_table *syms, FILE *err);
struct ingest;
struct baseline;
/* The report for a finished profile, in the chosen output format: 0, or -1 when its writer failed
 * (out of memory), with why in one line (the stream's own errors are the caller's to check). */
int batch_report(const struct batch_options *o, struct prof *p, const struct ingest *in, const char *warning,
                 FILE *out, char *why, size_t whylen);
/* Warnings a report's reader might miss in it, one line each on err: PCs where the ELF has no
 * instruction (another build's capture), a share of PC 0 (a memory fault), a --diff baseline of
 * another build. */
void batch_warnings(const struct batch_options *o, struct prof *p, FILE *err);
/* The samples o->output holds: the stacked ones alone in folded, speedscope, pprof and callgrind
 * when only some samples carry a stack (a firmware's evidence: 1 in 16), else all of them. */
double batch_written_samples(const struct batch_options *o, struct prof *p);
/* A capture file that ends inside a packet, frame or line (ingest_ended_inside): one warning naming it and the
 * offset; and one when most of a trace capture's bytes could not be read (ingest_unread). Not for a live
 * source a stop cut: that is how a stop ends. */
void batch_cut_warning(const char *file, const struct ingest *in, FILE *err);
/* Why the report cannot be trusted, one line each on err, and the exit status it calls for: the ELF is
 * not the sampled program's (EXIT_WRONG_ELF: the live view's words, from prof_trust()), or the firmware
 * announced a sampler and sent no sample, or sent samples and no announce (ingest_quiet(): EXIT_USAGE,
 * as for no samples). A capture with neither samples nor section timings was said already
 * (no_samples_said) and is not said again. 0 when nothing is wrong. */
int batch_doubts(struct prof *p, const struct ingest *in, const char *elf, bool no_samples_said, FILE *err);
/* Who took the samples, from the source's kind and the decoded format (the lockstep advice's). */
enum prof_sampler batch_sampler(const char *source, const struct ingest *in);
/* The decoders' settings the options give (format, TPIU id and offset, --samples...). */
struct ingest_options batch_ingest_options(const struct batch_options *o);
/* batch_report(), and its writer's failure or an error writing it (a full disk) said on err: -1
 * then, else 0. */
int batch_write(const struct batch_options *o, struct prof *p, const struct ingest *in, const char *warning, FILE *out,
                FILE *err);

#endif
