/* Shares over time for the live view's sparklines and graph pane: once a second, each top row's
 * share of the samples that arrived in that second, for the last HISTORY_POINTS seconds. */
#ifndef CMPROF_TUI_HISTORY_H
#define CMPROF_TUI_HISTORY_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_POINTS 300 /* five minutes */
#define HISTORY_ROWS 64

struct history_row {
    uint64_t key; /* the row's whole name, hashed (FNV-1a): names of any length, no copy */
    double last;  /* its cumulative samples at the last tick */
    long born;    /* the tick it was first followed at: earlier seconds of its column read 0 */
    bool seen;    /* among the rows at the last tick */
};

/* The shares are kept one second after another (each second the shares of every row), not one row
 * after another: a tick writes one short stretch, so only the seconds recorded take memory, and
 * the live view keeps one of these for each grouping. */
struct history {
    struct history_row rows[HISTORY_ROWS];
    int n;          /* rows in use */
    int len, pos;   /* points recorded (up to HISTORY_POINTS), and where the next one goes */
    long ticks;     /* points recorded since the last clear, not capped */
    double last_total;
    int group;      /* the grouping the rows are of: another grouping starts over */
    bool inline_frames;
    float share[HISTORY_POINTS][HISTORY_ROWS]; /* a ring of seconds: row i's share at pos */
};

void history_clear(struct history *h);
/* A tick: rows (most samples first, cumulative) and the profile's total now. The first
 * HISTORY_ROWS rows are followed; a row that drops out gives its place to a new one. */
void history_tick(struct history *h, const struct prof_row *rows, size_t n, double total, int group,
                  bool inline_frames);
/* A row's last `span` seconds (at most HISTORY_POINTS) as `points` values, oldest first, each the
 * mean share (0..1) of its stretch of seconds, -1 where the history has not begun; returns 0 when
 * the row has no history. */
int history_of(const struct history *h, const char *name, float *out, int points, int span);

/* Section times over time: once a second, each section's mean run time in that second (its runs'
 * added time over their count), -1 for a second with no run. */
#define HISTORY_SECTIONS 32
struct section_history {
    uint64_t last_count[HISTORY_SECTIONS], last_sum[HISTORY_SECTIONS];
    int len, pos;
    float mean[HISTORY_POINTS][HISTORY_SECTIONS]; /* a ring of seconds, as struct history's shares */
};
void section_history_clear(struct section_history *h);
void section_history_tick(struct section_history *h, const uint64_t *counts, const uint64_t *sums, int n);
/* As history_of(), for section i: the mean of the seconds that had runs, -1 where none had. */
int section_history_of(const struct section_history *h, int i, float *out, int points, int span);

#endif
