/* cmprof-top: command line. The live view by default; --batch for a report; --resolve. */
#include "../source/source.h"
#include "../symbols/symbols.h"
#include "baseline.h"
#include "batch.h"
#include "hugeheap.h"
#include "live.h"
#include "resolve.h"

#include <sys/stat.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMPROF_VERSION "0.2.0"

static void usage(FILE *f)
{
    fputs("usage: cmprof-top [options] SOURCE ELF          the live view\n"
          "       cmprof-top --batch [options] SOURCE ELF  a report\n"
          "       cmprof-top --resolve ELF [ADDR...]\n"
          "       cmprof-top --list-ports\n"
          "\n"
          "SOURCE: a serial port (/dev/ttyUSB0), a pty, tcp:HOST:PORT (a probe's SWO server, QEMU -serial\n"
          "tcp), a capture file, or - for stdin. Firmware text (dump or live stream), raw ITM/SWO, or TPIU.\n"
          "gdb:HOST:PORT or gdb:/dev/ttyACM0: sample any firmware, unchanged, by halting it through a GDB\n"
          "server (OpenOCD, pyOCD, J-Link, Black Magic Probe, QEMU -gdb): interrupt, read the PC, resume.\n"
          "openocd:HOST[:PORT]: read the core's PC sampling register (DWT_PCSR) while it runs, through\n"
          "OpenOCD's Tcl server (port 6666), with no halting.\n"
          "\n"
          "  --batch            read SOURCE to its end (or --duration/--samples), print the profile\n"
          "  -b, --baud N       serial speed (default 115200, 8N1)\n"
          "  --rate N           replay a file at N bytes per second; halt a gdb: target N times per second\n"
          "                     on average (default: the core halted at most ~10 % of the time; max: as fast\n"
          "                     as the server answers)\n"
          "  --duration S       stop after S seconds (batch)\n"
          "  --source-dir DIR   where to look for sources whose DWARF paths do not exist here\n"
          "  --cpu-hz HZ        clock of the section timers (default: what the stream announces)\n"
          "  --budget NAME=US   a section's time budget: over it, the row turns red and counts\n"
          "  --window S         the length of the 'last seconds' window (key w; default 5)\n"
          "  --no-color         no colours (also when NO_COLOR is set)\n"
          "  --list-ports       list serial ports with their USB IDs\n"
          "  -o, --output FMT   table (default), csv, json, folded or speedscope (https://www.speedscope.app);\n"
          "                     pprof (gzipped profile.proto), callgrind, lcov, trace (Trace Event JSON)\n"
          "  --by KEY           function (default), line, file or task (-o folded: task puts the task first)\n"
          "  --no-inline        charge inlined code to the function that contains it\n"
          "  --fold-overhead    cmprof's own firmware code as one row (live view: key O)\n"
          "  --diff BASE.json   compare each row with a saved report (-o json): base share, change, and\n"
          "                     '*' when the change is significant at 95 % (two-proportion test)\n"
          "  --fail-if-slower PCT  with --diff: exit 3 when a row grows significantly by more than PCT %\n"
          "  --save-dir DIR     where key o saves its snapshots (default: the current directory)\n"
          "  --record FILE      also write the raw input to FILE: replaying it gives the same profile (never\n"
          "                     over the source, the ELF or --diff's file; over another file only with --force)\n"
          "  --force            let --record write over an existing file\n"
          "  --connect-timeout S  batch: give up on a tcp:, gdb: or openocd: server not reached within S seconds\n"
          "                     (default 10); batch ends when its connection closes, unless --duration is given\n"
          "  --task-var SYMBOL  gdb: sources: read this task pointer (e.g. pxCurrentTCB) with each sample\n"
          "  --task-name-offset N  ... and the task's name N bytes into what it points to (default: found in\n"
          "                   the variable's DWARF type: FreeRTOS's pcTaskName, or a member called name)\n"
          "  --stack-depth N    gdb: sources: walk each sample's call stack up to N callers with the ELF's\n"
          "                     .debug_frame (default 16, at most 64; 0: PCs only, one round trip fewer a sample)\n"
          "  -f, --format FMT   auto (default), text, itm, tpiu or orbflow (orbuculum's port 3402)\n"
          "  --tpiu-id N        ITM source ID inside TPIU frames, or stream tag in orbflow (default 1)\n"
          "  --wait-sync        ignore ITM bytes until the first sync packet\n"
          "  --samples N        stop after N samples\n"
          "  -C, --demangle     C++ and Rust names demangled (batch, --resolve; the live view does it by default)\n"
          "  --resolve          print addr2line -a -f -i lines for addresses (or stdin)\n"
          "  -h, --help         this help\n"
          "  -V, --version      print the version\n"
          "\n"
          "Exit status: 0 done; 1 could not run (the ELF, the source, a server not reached, an output file);\n"
          "2 a bad option or argument, or no samples; 3 --fail-if-slower found a slower row; 4 the source\n"
          "failed mid-run (the report has what came before, marked partial); 128+N stopped by signal N\n"
          "(batch: the report so far, marked interrupted; the live view exits 0 on q and Ctrl-C).\n",
          f);
}

/* NAME=MICROSECONDS with a name and a positive, finite number. */
static bool budget_ok(const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || eq - spec >= 32)
        return false;
    char *end;
    errno = 0;
    double us = strtod(eq + 1, &end);
    return end != eq + 1 && !*end && errno != ERANGE && isfinite(us) && us > 0;
}

/* The first bytes of an ELF file. */
static bool is_elf(const char *path)
{
    unsigned char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
}

/* Exactly enough samples to be counted exactly in a double (2^53). */
#define MAX_SAMPLES (1ull << 53)

/* A decimal count in [lo, hi]; anything else (sign, blanks, overflow, trailing text) is refused,
 * never clamped. */
static bool parse_count(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out)
{
    if (!isdigit((unsigned char)s[0]))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int parse_choice(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    hugeheap_setup((size_t)HUGEHEAP_RESERVE_MB << 20); /* (before any thread: a hint, malloc works either way) */
    if (getenv("CMPROF_DWARF_IN_PROCESS")) /* debugging, and sanitizer runs that must see libdwarf's calls */
        sym_set_isolation(0);
    if (getenv("CMPROF_DWARF_LIBDWARF")) /* every unit through libdwarf: the fast reader's reference */
        sym_set_fast_reader(0);
    static const char *const outputs[] = {"table", "csv", "json", "folded", "speedscope", "pprof", "callgrind", "lcov", "trace"};
    static const char *const groups[] = {"function", "line", "file", "task"};
    struct live_options lo = {.batch = {.format = DETECT_UNKNOWN, .tpiu_id = 1, .by = PROF_BY_FUNCTION,
                                        .inline_frames = true},
                              .color = getenv("NO_COLOR") == NULL, .task_name_offset = -1,
                              .stack_depth = -1};
    struct batch_options o = lo.batch;
    bool batch = false, resolve = false;
    const char *diff_path = NULL;
    enum {
        OPT_BATCH = 256, OPT_BY, OPT_NO_INLINE, OPT_TPIU_ID, OPT_RESOLVE, OPT_WAIT_SYNC, OPT_SAMPLES, OPT_RATE,
        OPT_DURATION, OPT_SOURCE_DIR, OPT_CPU_HZ, OPT_BUDGET, OPT_WINDOW, OPT_NO_COLOR, OPT_LIST_PORTS, OPT_FOLD_OVERHEAD,
        OPT_TASK_VAR, OPT_TASK_NAME_OFFSET, OPT_DIFF, OPT_FAIL_IF_SLOWER, OPT_RECORD, OPT_STACK_DEPTH,
        OPT_FORCE, OPT_CONNECT_TIMEOUT
    };
    enum { OPT_SAVE_DIR = 1000 };
    static const struct option longopts[] = {
        {"batch", no_argument, NULL, OPT_BATCH},       {"output", required_argument, NULL, 'o'},
        {"by", required_argument, NULL, OPT_BY},       {"no-inline", no_argument, NULL, OPT_NO_INLINE},
        {"format", required_argument, NULL, 'f'},      {"tpiu-id", required_argument, NULL, OPT_TPIU_ID},
        {"resolve", no_argument, NULL, OPT_RESOLVE},   {"wait-sync", no_argument, NULL, OPT_WAIT_SYNC},
        {"samples", required_argument, NULL, OPT_SAMPLES}, {"help", no_argument, NULL, 'h'},
        {"demangle", no_argument, NULL, 'C'},
        {"version", no_argument, NULL, 'V'},           {"baud", required_argument, NULL, 'b'},
        {"rate", required_argument, NULL, OPT_RATE},   {"duration", required_argument, NULL, OPT_DURATION},
        {"source-dir", required_argument, NULL, OPT_SOURCE_DIR}, {"cpu-hz", required_argument, NULL, OPT_CPU_HZ},
        {"budget", required_argument, NULL, OPT_BUDGET}, {"window", required_argument, NULL, OPT_WINDOW},
        {"no-color", no_argument, NULL, OPT_NO_COLOR}, {"list-ports", no_argument, NULL, OPT_LIST_PORTS},
        {"fold-overhead", no_argument, NULL, OPT_FOLD_OVERHEAD},
        {"task-var", required_argument, NULL, OPT_TASK_VAR},
        {"diff", required_argument, NULL, OPT_DIFF},
        {"record", required_argument, NULL, OPT_RECORD},
        {"save-dir", required_argument, NULL, OPT_SAVE_DIR},
        {"fail-if-slower", required_argument, NULL, OPT_FAIL_IF_SLOWER},
        {"task-name-offset", required_argument, NULL, OPT_TASK_NAME_OFFSET},
        {"stack-depth", required_argument, NULL, OPT_STACK_DEPTH},
        {"force", no_argument, NULL, OPT_FORCE},
        {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
        {NULL, 0, NULL, 0}};
    int c, k;
    char *end;
    opterr = 0;
    double num;
    unsigned long long count;
    while ((c = getopt_long(argc, argv, "o:f:hVb:C", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (!parse_count(optarg, 1, 100000000, &count)) {
                fprintf(stderr, "cmprof-top: --baud takes a number from 1 to 100000000, not '%s'\n", optarg);
                return 2;
            }
            lo.baud = (int)count;
            break;
        case OPT_RATE: /* "max": a gdb: target halted as fast as the server answers */
            errno = 0;
            num = strtod(optarg, &end);
            bool max = strcmp(optarg, "max") == 0;
            if (!max && (end == optarg || *end || errno == ERANGE || !isfinite(num) || num <= 0)) {
                fprintf(stderr, "cmprof-top: --rate takes a positive number or 'max', not '%s'\n", optarg);
                return 2;
            }
            lo.rate = max ? -1 : num; /* source.h: a negative rate is no limit */
            break;
        case OPT_DURATION:
        case OPT_CPU_HZ:
        case OPT_WINDOW:
            errno = 0;
            num = strtod(optarg, &end);
            if (end == optarg || *end || errno == ERANGE || !isfinite(num) || num <= 0) {
                fprintf(stderr, "cmprof-top: %s takes a positive number, not '%s'\n", argv[optind - 1], optarg);
                return 2;
            }
            if (c == OPT_DURATION)
                lo.duration = num;
            else if (c == OPT_CPU_HZ)
                lo.cpu_hz = num;
            else
                lo.window_seconds = num;
            break;
        case OPT_SOURCE_DIR:
            lo.source_dir = optarg;
            break;
        case OPT_BUDGET:
            if (lo.n_budgets == 16) {
                fprintf(stderr, "cmprof-top: at most 16 budgets\n");
                return 2;
            }
            if (!budget_ok(optarg)) { /* refused in every mode, not only where budgets are shown */
                fprintf(stderr, "cmprof-top: --budget takes NAME=MICROSECONDS (a positive number), not '%s'\n",
                        optarg);
                return 2;
            }
            lo.budgets[lo.n_budgets++] = optarg;
            break;
        case OPT_NO_COLOR:
            lo.color = false;
            break;
        case OPT_LIST_PORTS: {
            int n = src_list_ports(stdout);
            if (!n)
                printf("no serial ports found\n");
            return 0;
        }
        case OPT_BATCH:
            batch = true;
            break;
        case OPT_RESOLVE:
            resolve = true;
            break;
        case 'o':
            if ((k = parse_choice(optarg, outputs, 9)) < 0) {
                fprintf(stderr, "cmprof-top: unknown output '%s' (table, csv, json, folded, speedscope, pprof, "
                        "callgrind, lcov, trace)\n", optarg);
                return 2;
            }
            o.output = (enum batch_output)k;
            break;
        case OPT_BY:
            if ((k = parse_choice(optarg, groups, 4)) < 0) {
                fprintf(stderr, "cmprof-top: unknown grouping '%s' (function, line, file, task)\n", optarg);
                return 2;
            }
            o.by = (enum prof_group)k;
            break;
        case OPT_NO_INLINE:
            o.inline_frames = false;
            break;
        case OPT_FOLD_OVERHEAD:
            o.fold_overhead = true;
            break;
        case OPT_TASK_VAR:
            lo.task_var = optarg;
            break;
        case OPT_DIFF:
            diff_path = optarg;
            break;
        case OPT_RECORD:
            lo.record = optarg;
            break;
        case OPT_SAVE_DIR: { /* checked now: a snapshot that cannot be written is found out at o, too late */
            struct stat sd;
            if (stat(optarg, &sd) != 0 || !S_ISDIR(sd.st_mode) || access(optarg, W_OK | X_OK) != 0) {
                fprintf(stderr, "cmprof-top: --save-dir %s: %s\n", optarg,
                        stat(optarg, &sd) != 0 ? strerror(errno) : !S_ISDIR(sd.st_mode) ? "not a directory" : "not writable");
                return 2;
            }
            lo.save_dir = optarg;
            break;
        }
        case OPT_FORCE:
            lo.force = true;
            break;
        case OPT_CONNECT_TIMEOUT:
            errno = 0;
            num = strtod(optarg, &end);
            if (end == optarg || *end || errno == ERANGE || !isfinite(num) || num <= 0 || num > 86400) {
                fprintf(stderr, "cmprof-top: --connect-timeout takes seconds, more than 0 and at most 86400, not "
                        "'%s'\n", optarg);
                return 2;
            }
            lo.connect_timeout = num;
            break;
        case OPT_FAIL_IF_SLOWER:
            errno = 0;
            num = strtod(optarg, &end);
            if (end == optarg || *end || errno == ERANGE || !isfinite(num) || num <= 0) {
                fprintf(stderr, "cmprof-top: --fail-if-slower takes a positive percentage, not '%s'\n", optarg);
                return 2;
            }
            o.fail_if_slower = num;
            break;
        case OPT_STACK_DEPTH:
            if (!parse_count(optarg, 0, GDB_STACK_DEPTH_MAX, &count)) {
                fprintf(stderr, "cmprof-top: --stack-depth takes a number from 0 to %d (the most callers kept), "
                        "not '%s'\n", GDB_STACK_DEPTH_MAX, optarg);
                return 2;
            }
            lo.stack_depth = (int)count;
            break;
        case OPT_TASK_NAME_OFFSET:
            if (!parse_count(optarg, 0, 4096, &count)) {
                fprintf(stderr, "cmprof-top: --task-name-offset takes a number from 0 to 4096, not '%s'\n", optarg);
                return 2;
            }
            lo.task_name_offset = (int)count;
            break;
        case 'f':
            if ((k = detect_parse(optarg)) < 0) {
                fprintf(stderr, "cmprof-top: unknown format '%s' (auto, text, itm, tpiu, orbflow)\n", optarg);
                return 2;
            }
            o.format = (enum detect_format)k;
            break;
        case OPT_TPIU_ID:
            if (!parse_count(optarg, 1, 0x6F, &count)) {
                fprintf(stderr, "cmprof-top: --tpiu-id takes 1..111, not '%s'\n", optarg);
                return 2;
            }
            o.tpiu_id = (uint8_t)count;
            break;
        case OPT_WAIT_SYNC:
            o.wait_sync = true;
            break;
        case OPT_SAMPLES:
            if (!parse_count(optarg, 1, MAX_SAMPLES, &count)) {
                fprintf(stderr, "cmprof-top: --samples takes a number from 1 to %llu, not '%s'\n",
                        (unsigned long long)MAX_SAMPLES, optarg);
                return 2;
            }
            o.max_samples = count;
            break;
        case 'C':
            o.demangle = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("cmprof-top %s\n", CMPROF_VERSION);
            return 0;
        default:
            fprintf(stderr, "cmprof-top: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (resolve) {
        if (optind >= argc) {
            fprintf(stderr, "cmprof-top: --resolve needs an ELF\n");
            return 2;
        }
        return resolve_main(argv[optind], o.demangle, argv + optind + 1, argc - optind - 1, stdin, stdout, stderr);
    }
    if (argc - optind != 2) {
        fprintf(stderr, "cmprof-top: needs SOURCE and ELF (see --help)\n");
        return 2;
    }
    if ((o.output == OUT_FOLDED || o.output == OUT_SPEEDSCOPE) && (o.by == PROF_BY_LINE || o.by == PROF_BY_FILE)) {
        fprintf(stderr, "cmprof-top: -o %s is by function, or by task with --by task (not by %s)\n",
                o.output == OUT_FOLDED ? "folded" : "speedscope", o.by == PROF_BY_LINE ? "line" : "file");
        return 2;
    }
    o.source = argv[optind];
    o.elf = argv[optind + 1];
    static struct baseline base;
    if (o.fail_if_slower > 0 && !diff_path) {
        fprintf(stderr, "cmprof-top: --fail-if-slower needs --diff BASE.json to compare with\n");
        return 2;
    }
    if (diff_path) {
        char why[600];
        if (baseline_load(diff_path, &base, why, sizeof why) != 0 ||
            baseline_check_group(&base, diff_path, groups[o.by], why, sizeof why) != 0) {
            fprintf(stderr, "cmprof-top: %s\n", why);
            return 2;
        }
        o.base = &base;
        lo.diff_path = diff_path;
    }
    if (is_elf(o.source) && !is_elf(o.elf)) { /* the two arguments the wrong way round */
        fprintf(stderr, "cmprof-top: '%s' is an ELF file: the order is SOURCE ELF, e.g. cmprof-top %s %s\n", o.source,
                o.elf, o.source);
        return 2;
    }
    bool gdb_source = strncmp(o.source, "gdb:", 4) == 0;
    if (lo.stack_depth < 0)
        lo.stack_depth = gdb_source ? 16 : 0;
    else if (lo.stack_depth > 0 && !gdb_source) {
        fprintf(stderr, "cmprof-top: --stack-depth works with gdb: sources (the stack is read while halted)\n");
        return 2;
    }
    if ((gdb_source || strncmp(o.source, "openocd:", 8) == 0) && o.format == DETECT_UNKNOWN)
        /* tagged samples and stacks come as dump text, bare PCs as ITM */
        o.format = lo.task_var || lo.stack_depth > 0 ? DETECT_TEXT : DETECT_ITM;
    if (lo.task_var && strncmp(o.source, "gdb:", 4) != 0) {
        fprintf(stderr, "cmprof-top: --task-var works with gdb: sources (the core is read while halted)\n");
        return 2;
    }
    if (batch && o.output == OUT_PPROF && isatty(STDOUT_FILENO)) { /* as gzip does: no binary on a terminal */
        fprintf(stderr, "cmprof-top: -o pprof writes gzipped binary: redirect it to a file (> profile.pb.gz)\n");
        return 2;
    }
    lo.batch = o;
    if (!batch)
        return live_main(&lo);
    /* a file or stdin reads to its end; a live source needs the poll loop */
    struct stat st;
    bool plain = strcmp(o.source, "-") == 0 || (stat(o.source, &st) == 0 && S_ISREG(st.st_mode));
    if (plain && lo.duration == 0 && lo.rate <= 0 && !lo.record)
        return batch_main(&o, stdout, stderr);
    lo.headless = true;
    return live_main(&lo);
}
