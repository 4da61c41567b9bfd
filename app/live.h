/* The live loop: one thread, poll() over the source, the keyboard and a redraw timer. Also runs
 * batch mode on live sources (serial, pty, TCP), without a terminal. */
#ifndef CMPROF_APP_LIVE_H
#define CMPROF_APP_LIVE_H

#include "batch.h"

struct live_options {
    struct batch_options batch;  /* source, ELF, format, grouping, output (for batch) */
    bool headless;               /* batch mode: no terminal, report at the end */
    int baud;
    double rate;                 /* replay pacing, bytes/s */
    double duration;             /* stop after this many seconds (0: no limit) */
    const char *source_dir;
    double cpu_hz;
    const char *budgets[16];
    int n_budgets;
    double window_seconds;
    bool color;
    const char *task_var;        /* gdb: sources: a task pointer read with each sample, or NULL */
    const char *record;          /* --record: the raw input is also written here, for replay */
    const char *save_dir;        /* --save-dir: where key o's snapshots go (NULL: the current directory) */
    int task_name_offset;        /* of the task's name in what it points to; -1: no names */
    int stack_depth;             /* gdb: sources: callers walked per sample (0: none; -1: the default) */
    bool force;                  /* --force: --record may write over an existing file */
    const char *diff_path;       /* --diff's file: read, so never written */
    double connect_timeout;      /* batch: seconds to reach a server before giving up (0: the default) */
};

#define LIVE_CONNECT_TIMEOUT 10.0 /* seconds: --connect-timeout's default */

int live_main(const struct live_options *o);

#endif
