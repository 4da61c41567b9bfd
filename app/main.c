/* cmprof-top: command line. The live view by default; --batch for a report; --resolve. */
#include "../source/source.h"
#include "../symbols/symbols.h"
#include "../report/baseline.h"
#include "batch.h"
#include "live.h"
#include "outfile.h"
#include "resolve.h"

#include <sys/stat.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMPROF_VERSION "0.2.0"

/* -o and its formats, from report/report.c's table of them, wrapped under the option's text. */
static void usage_formats(FILE *f)
{
    char list[600] = "";
    size_t used = 0;
    for (int i = 0; report_format_info((enum report_format)i) && used < sizeof list; i++) {
        const struct report_format_info *format = report_format_info((enum report_format)i);
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s%s%s",
                                 i == 0 ? "" : report_format_info((enum report_format)(i + 1)) ? ", " : " or ",
                                 format->name, format->note[0] ? " " : "", format->note);
    }
    const int indent = 21, width = 100;
    fprintf(f, "  -o, --output FMT   ");
    for (const char *line = list; *line;) {
        size_t n = strlen(line);
        if (n > (size_t)(width - indent)) { /* cut at the last space that fits */
            n = (size_t)(width - indent);
            while (n > 0 && line[n] != ' ')
                n--;
            if (n == 0) /* one word longer than the line */
                n = (size_t)(width - indent);
        }
        fprintf(f, "%s%.*s\n", line == list ? "" : "                     ", (int)n, line);
        line += n + (line[n] == ' ');
    }
}

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
          "OpenOCD's Tcl server (port 6666), with no halting. openocd:HOST[:PORT],swo=CLOCK: the SWO trace\n"
          "(DWT PC sampling) set up through OpenOCD and read from it, every register put back at the end.\n"
          "rtt:HOST:PORT (a GDB server) or rtt:openocd:HOST[:PORT]: read the firmware's stream out of its\n"
          "RTT buffer (firmware/cmprof_rtt.c, the ELF's _SEGGER_RTT), every 10 ms.\n"
          "\n"
          "  --batch            read SOURCE to its end (or --duration/--samples), print the profile\n"
          "  -b, --baud N       serial speed (default 115200, 8N1)\n"
          "  --rate N           replay a file at N bytes per second; halt a gdb: target N times per second\n"
          "                     (rtt: read its buffer N times per second)\n"
          "                     on average (default: the core halted at most ~10 % of the time; max: as fast\n"
          "                     as the server answers); N from 1 to 1e9\n"
          "  --duration S       stop after S seconds (batch)\n"
          "  --source-dir DIR   where to look for sources whose DWARF paths do not exist here\n"
          "  --cpu-hz HZ        clock of the section timers (default: what the stream announces)\n"
          "  --budget NAME=US   a section's time budget: over it, the row turns red and counts\n"
          "  --window S         the length of the 'last seconds' window (key w; default 5)\n"
          "  --no-color         no colours (also when NO_COLOR is set)\n"
          "  --list-ports       list serial ports with their USB IDs\n",
          f);
    usage_formats(f);
    fputs("  --by KEY           function (default), line, file or task (-o folded: task puts the task first)\n"
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
          "                     .debug_frame (default 16, at most 64; 0: PCs only, one round trip fewer a sample);\n"
          "                     other sources: 0 leaves the firmware's stack evidence aside (a flat profile)\n"
          "  -f, --format FMT   auto (default), text, itm, tpiu or orbflow (orbuculum's port 3402)\n"
          "  --tpiu-id N        ITM source ID inside TPIU frames, or stream tag in orbflow (default 1)\n"
          "  --tpiu-offset N    TPIU frames begin at byte N (0..15) of the input, for a stream without full\n"
          "                     syncs whose alignment by content fails (implies -f tpiu)\n"
          "  --wait-sync        ignore ITM bytes until the first sync packet\n"
          "  --samples N        stop after N samples\n"
          "  -C, --demangle     names for people, as the live view shows them: C++ and Rust demangled (also\n"
          "                     --resolve), GCC's copies as crc32 [constprop]; without it, names as linked:\n"
          "                     crc32.constprop.0\n"
          "  --resolve          print addr2line -a -f -i lines for addresses (or stdin)\n"
          "  -h, --help         this help\n"
          "  -V, --version      print the version\n"
          "\n"
          "Exit status: 0 done; 1 could not run (the ELF, the source, a server not reached, an output file);\n"
          "2 a bad option or argument (a --diff baseline whose rows cannot match: another --by, names against\n"
          "a stripped ELF), or no samples (a sampler announced and silent too); 3 --fail-if-slower\n"
          "found a slower row; 4 the source failed mid-run (the report has what came before, marked partial);\n"
          "5 batch: a wrong ELF (another build-id, most samples outside its code, PCs off its instruction\n"
          "starts; the report is written, JSON wrong_elf); 128+N stopped by signal N\n"
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

/* The first bytes of an ELF file. Only a regular file is opened: reading a port or a FIFO to
 * find out would block until the board sends (a blank screen before the view starts), and opening
 * a serial port can reset the board. */
static bool is_elf(const char *path)
{
    unsigned char magic[4] = {0};
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
}

/* Exactly enough samples to be counted exactly in a double (2^53). */
#define MAX_SAMPLES (1ull << 53)
#define RATE_MIN 1          /* --rate: a byte or a halt a second at the least (a replay that ends) */
#define RATE_MAX 1000000000 /* and at most 1e9 */
#define STRINGIFY(x) #x
#define TEXT(x) STRINGIFY(x)

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

/* A finite number above 0 and at most max. */
static bool parse_positive(const char *s, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v) || v <= 0 || v > max)
        return false;
    *out = v;
    return true;
}

/* status, or EXIT_ERROR with one line when what went to stdout did not all get there (a full disk,
 * /dev/full): never a silent 0 with the output lost. */
static int written(int status, const char *what)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return status;
    fprintf(stderr, "cmprof-top: writing %s to standard output: %s\n", what,
            errno ? strerror(errno) : "a write failed (the disk full?)"); /* (failed before this flush) */
    return status ? status : EXIT_ERROR;
}

/* The command line as parsed: the options of the live view, which hold batch's. */
struct cli {
    struct live_options lo;
    bool batch, resolve;
    const char *diff_path;
};

#define GO_ON (-1) /* a parser's answer when the run goes on; else the exit status */

struct cli_opt;
/* An option's parser: GO_ON, or the exit status. */
typedef int (*cli_parse)(struct cli *c, const struct cli_opt *d, const char *arg);

/* One option: its names, where its value goes (an offset into struct cli), and what it takes. */
struct cli_opt {
    const char *name;     /* first: the table gives it by place */
    char letter;          /* its short form, or 0 */
    bool arg;             /* takes a value */
    bool many;            /* may be given more than once (each value kept); else a second, other value is refused */
    cli_parse parse;
    size_t at, width;     /* (width: a count's field, 1, sizeof(int) or 8 bytes) */
    unsigned long long lo, hi; /* a count's range; a number's too, where given */
    const char *takes;    /* said when the value is refused: "--name takes <takes>, not 'value'" */
};

#define AT(field) offsetof(struct cli, field)
#define COUNT_AT(field) .at = AT(field), .width = sizeof(((struct cli *)0)->field)
#define FIELD(c, d, type) ((type *)((char *)(c) + (d)->at))

static int refuse(const struct cli_opt *d, const char *arg)
{
    fprintf(stderr, "cmprof-top: --%s takes %s, not '%s'\n", d->name, d->takes, arg);
    return EXIT_USAGE;
}

static int set_true(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)arg;
    *FIELD(c, d, bool) = true;
    return GO_ON;
}

static int set_false(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)arg;
    *FIELD(c, d, bool) = false;
    return GO_ON;
}

static int set_text(struct cli *c, const struct cli_opt *d, const char *arg)
{
    *FIELD(c, d, const char *) = arg;
    return GO_ON;
}

/* A count into an int, a uint64_t or a uint8_t field, by the field's width. */
static int set_count(struct cli *c, const struct cli_opt *d, const char *arg)
{
    unsigned long long v;
    if (!parse_count(arg, d->lo, d->hi, &v))
        return refuse(d, arg);
    if (d->width == sizeof(uint8_t))
        *FIELD(c, d, uint8_t) = (uint8_t)v;
    else if (d->width == sizeof(int))
        *FIELD(c, d, int) = (int)v;
    else
        *FIELD(c, d, uint64_t) = v;
    return GO_ON;
}

static int set_positive(struct cli *c, const struct cli_opt *d, const char *arg)
{
    double v;
    if (!parse_positive(arg, d->hi ? (double)d->hi : INFINITY, &v) || v < (double)d->lo)
        return refuse(d, arg);
    *FIELD(c, d, double) = v;
    return GO_ON;
}

static int set_rate(struct cli *c, const struct cli_opt *d, const char *arg)
{
    if (strcmp(arg, "max") == 0) { /* a gdb: target halted as fast as the server answers */
        c->lo.rate = -1;            /* source.h: a negative rate is no limit */
        return GO_ON;
    }
    return set_positive(c, d, arg);
}

static int add_budget(struct cli *c, const struct cli_opt *d, const char *arg)
{
    if (c->lo.n_budgets == 16) {
        fprintf(stderr, "cmprof-top: at most 16 budgets\n");
        return EXIT_USAGE;
    }
    if (!budget_ok(arg)) /* refused in every mode, not only where budgets are shown */
        return refuse(d, arg);
    c->lo.budgets[c->lo.n_budgets++] = arg;
    return GO_ON;
}

static int set_output(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)d;
    int k = report_format_parse(arg);
    if (k < 0) {
        fprintf(stderr, "cmprof-top: unknown output '%s' (%s)\n", arg, report_format_names());
        return EXIT_USAGE;
    }
    c->lo.batch.output = (enum report_format)k;
    return GO_ON;
}

static int set_group(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)d;
    for (int k = PROF_BY_FUNCTION; k <= PROF_BY_TASK; k++)
        if (strcmp(arg, report_group_name((enum prof_group)k)) == 0) {
            c->lo.batch.by = (enum prof_group)k;
            return GO_ON;
        }
    fprintf(stderr, "cmprof-top: unknown grouping '%s' (function, line, file, task)\n", arg);
    return EXIT_USAGE;
}

static int set_format(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)d;
    int k = detect_parse(arg);
    if (k < 0) {
        fprintf(stderr, "cmprof-top: unknown format '%s' (auto, text, itm, tpiu, orbflow)\n", arg);
        return EXIT_USAGE;
    }
    c->lo.batch.format = (enum detect_format)k;
    c->lo.batch.format_option = k ? "-f" : NULL;
    return GO_ON;
}

/* A forced TPIU frame offset means TPIU frames, unless -f says otherwise. */
static int set_tpiu_offset(struct cli *c, const struct cli_opt *d, const char *arg)
{
    unsigned long long v;
    if (!parse_count(arg, 0, 15, &v))
        return refuse(d, arg);
    c->lo.batch.tpiu_offset = (uint8_t)(v + 1);
    if (c->lo.batch.format == DETECT_UNKNOWN) {
        c->lo.batch.format = DETECT_TPIU;
        c->lo.batch.format_option = "--tpiu-offset";
    }
    return GO_ON;
}

/* Checked now: a snapshot that cannot be written is found out at key o, too late. */
static int set_save_dir(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)d;
    struct stat sd;
    if (stat(arg, &sd) != 0 || !S_ISDIR(sd.st_mode) || access(arg, W_OK | X_OK) != 0) {
        fprintf(stderr, "cmprof-top: --save-dir %s: %s\n", arg,
                stat(arg, &sd) != 0 ? strerror(errno) : !S_ISDIR(sd.st_mode) ? "not a directory" : "not writable");
        return EXIT_USAGE;
    }
    c->lo.save_dir = arg;
    return GO_ON;
}

/* Before an answer of more than one buffer (--help, --list-ports): kept whole until written()'s
 * flush, whose errno then names a failed write (a write that failed in printf left errno to be lost). */
static void answer_in_one_write(void)
{
    static char whole[1 << 16]; /* (glibc sizes its own buffer by the file, whatever the size asked) */
    setvbuf(stdout, whole, _IOFBF, sizeof whole);
}

static int list_ports(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)c, (void)d, (void)arg;
    answer_in_one_write();
    if (!src_list_ports(stdout))
        printf("no serial ports found\n");
    return EXIT_DONE;
}

static int help(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)c, (void)d, (void)arg;
    answer_in_one_write();
    usage(stdout);
    return EXIT_DONE;
}

static int version(struct cli *c, const struct cli_opt *d, const char *arg)
{
    (void)c, (void)d, (void)arg;
    printf("cmprof-top %s\n", CMPROF_VERSION);
    return EXIT_DONE;
}

static const struct cli_opt options[] = {
    {"batch", .parse = set_true, .at = AT(batch)},
    {"resolve", .parse = set_true, .at = AT(resolve)},
    {"list-ports", .parse = list_ports},
    {"help", .letter = 'h', .parse = help},
    {"version", .letter = 'V', .parse = version},
    {"output", .letter = 'o', .arg = true, .parse = set_output},
    {"by", .arg = true, .parse = set_group},
    {"no-inline", .parse = set_false, .at = AT(lo.batch.inline_frames)},
    {"fold-overhead", .parse = set_true, .at = AT(lo.batch.fold_overhead)},
    {"demangle", .letter = 'C', .parse = set_true, .at = AT(lo.batch.demangle)},
    {"format", .letter = 'f', .arg = true, .parse = set_format},
    {"tpiu-id", .arg = true, .parse = set_count, COUNT_AT(lo.batch.tpiu_id), .lo = 1, .hi = 0x6F, .takes = "1..111"},
    {"tpiu-offset", .arg = true, .parse = set_tpiu_offset, .takes = "0..15"},
    {"wait-sync", .parse = set_true, .at = AT(lo.batch.wait_sync)},
    {"samples", .arg = true, .parse = set_count, COUNT_AT(lo.batch.max_samples), .lo = 1, .hi = MAX_SAMPLES,
     .takes = "a number from 1 to 9007199254740992"},
    {"baud", .letter = 'b', .arg = true, .parse = set_count, COUNT_AT(lo.baud), .lo = 1, .hi = 100000000,
     .takes = "a number from 1 to 100000000"},
    {"rate", .arg = true, .parse = set_rate, .at = AT(lo.rate), .lo = RATE_MIN, .hi = RATE_MAX,
     .takes = "a number from 1 to 1e9 (bytes or halts a second) or 'max'"},
    {"duration", .arg = true, .parse = set_positive, .at = AT(lo.duration), .takes = "a positive number"},
    {"cpu-hz", .arg = true, .parse = set_positive, .at = AT(lo.cpu_hz), .takes = "a positive number"},
    {"window", .arg = true, .parse = set_positive, .at = AT(lo.window_seconds), .takes = "a positive number"},
    {"connect-timeout", .arg = true, .parse = set_positive, .at = AT(lo.connect_timeout), .hi = 86400,
     .takes = "seconds, more than 0 and at most 86400"},
    {"fail-if-slower", .arg = true, .parse = set_positive, .at = AT(lo.batch.fail_if_slower),
     .takes = "a positive percentage"},
    {"budget", .arg = true, .many = true, .parse = add_budget, .takes = "NAME=MICROSECONDS (a positive number)"},
    {"source-dir", .arg = true, .parse = set_text, .at = AT(lo.source_dir)},
    {"no-color", .parse = set_false, .at = AT(lo.color)},
    {"task-var", .arg = true, .parse = set_text, .at = AT(lo.task_var)},
    {"task-name-offset", .arg = true, .parse = set_count, COUNT_AT(lo.task_name_offset), .hi = 4096,
     .takes = "a number from 0 to 4096"},
    {"stack-depth", .arg = true, .parse = set_count, COUNT_AT(lo.stack_depth), .hi = GDB_STACK_DEPTH_MAX,
     .takes = "a number from 0 to " TEXT(GDB_STACK_DEPTH_MAX) " (the most callers kept)"},
    {"diff", .arg = true, .parse = set_text, .at = AT(diff_path)},
    {"record", .arg = true, .parse = set_text, .at = AT(lo.record)},
    {"force", .parse = set_true, .at = AT(lo.force)},
    {"save-dir", .arg = true, .parse = set_save_dir},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

/* A value option given again with another value: refused (which one was meant is not for us to guess);
 * the same value again changes nothing. */
static bool given_twice(const struct cli_opt *d, const char **given, const char *arg)
{
    if (!d->arg || d->many || !*given || strcmp(*given, arg) == 0) {
        *given = arg;
        return false;
    }
    char shrt[8] = "";
    if (d->letter)
        snprintf(shrt, sizeof shrt, "-%c/", d->letter);
    fprintf(stderr, "cmprof-top: %s--%s given twice ('%s', then '%s'): give it once\n", shrt, d->name, *given, arg);
    return true;
}

/* The options into c, by getopt_long from the table above: GO_ON, or the exit status. */
static int parse_options(int argc, char **argv, struct cli *c)
{
    const char *given[N_OPTIONS] = {0};
    struct option longopts[N_OPTIONS + 1] = {{0}};
    char letters[2 * N_OPTIONS + 1] = "", *l = letters;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        /* getopt_long's value for an option: its letter, else 256 + its place in the table */
        int key = options[i].letter ? options[i].letter : 256 + (int)i;
        longopts[i] = (struct option){options[i].name, options[i].arg ? required_argument : no_argument, NULL, key};
        if (options[i].letter) {
            *l++ = options[i].letter;
            if (options[i].arg)
                *l++ = ':';
        }
    }
    *l = '\0';
    opterr = 0;
    int key;
    while ((key = getopt_long(argc, argv, letters, longopts, NULL)) != -1) {
        size_t i = 0;
        while (i < N_OPTIONS && (options[i].letter ? options[i].letter : 256 + (int)i) != key)
            i++;
        if (i == N_OPTIONS) {
            fprintf(stderr, "cmprof-top: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
        if (given_twice(&options[i], &given[i], optarg))
            return EXIT_USAGE;
        int status = options[i].parse(c, &options[i], optarg);
        if (status != GO_ON)
            return status;
    }
    return GO_ON;
}

/* The options that only make sense together, the source's kind, and --diff's baseline read:
 * GO_ON, or the exit status. */
static int check_options(struct cli *c, int argc, char **argv)
{
    struct live_options *lo = &c->lo;
    struct batch_options *o = &lo->batch;
    if (argc - optind != 2) {
        fprintf(stderr, "cmprof-top: needs SOURCE and ELF (see --help)\n");
        return EXIT_USAGE;
    }
    if (!report_format_groups(o->output, o->by)) {
        fprintf(stderr, "cmprof-top: -o %s is by function, or by task with --by task (not by %s)\n",
                report_format_name(o->output), report_group_name(o->by));
        return EXIT_USAGE;
    }
    bool by = o->by != PROF_BY_FUNCTION, no_inline = !o->inline_frames;
    if (c->batch && report_format_info(o->output)->own_layout && (by || no_inline)) /* taken, not in silence */
        fprintf(stderr, "cmprof-top: warning: -o %s has a layout of its own (docs/host.md): %s%s%s%s change%s "
                "nothing in it\n", report_format_name(o->output), by ? "--by " : "", by ? report_group_name(o->by) : "",
                by && no_inline ? " and " : "", no_inline ? "--no-inline" : "", by && no_inline ? "" : "s");
    if (c->batch && o->output == OUT_PPROF && isatty(STDOUT_FILENO)) { /* as gzip does: no binary on a terminal */
        fprintf(stderr, "cmprof-top: -o pprof writes gzipped binary: redirect it to a file (> profile.pb.gz)\n");
        return EXIT_USAGE;
    }
    o->source = argv[optind];
    o->elf = argv[optind + 1];
    if (o->fail_if_slower > 0 && !c->diff_path) {
        fprintf(stderr, "cmprof-top: --fail-if-slower needs --diff BASE.json to compare with\n");
        return EXIT_USAGE;
    }
    if (c->batch && c->diff_path && o->fail_if_slower <= 0 && o->output != OUT_TABLE && o->output != OUT_CSV &&
        o->output != OUT_JSON) { /* the baseline was read and the report had no word of it */
        fprintf(stderr, "cmprof-top: --diff: -o %s has no place for the comparison (the table, -o csv and -o json "
                "show it; with --fail-if-slower any -o checks it)\n", report_format_name(o->output));
        return EXIT_USAGE;
    }
    if (c->batch && lo->n_budgets) /* a CI run must not take it for a gate: it passes whatever the times */
        fprintf(stderr, "cmprof-top: warning: --budget is the live view's (its sections page, key t): --batch checks "
                "no budget\n");
    const char *inputs[] = {src_spec_path(o->source), o->elf, c->diff_path};
    char why[600];
    if (!outfile_stdout_ok(inputs, sizeof inputs / sizeof *inputs, why, sizeof why)) {
        fprintf(stderr, "cmprof-top: %s\n", why);
        return EXIT_USAGE;
    }
    if (c->diff_path) {
        static struct baseline base;
        if (baseline_load(c->diff_path, &base, why, sizeof why) != 0 ||
            baseline_check_group(&base, c->diff_path, report_group_name(o->by), why, sizeof why) != 0) {
            fprintf(stderr, "cmprof-top: %s\n", why);
            return EXIT_USAGE;
        }
        o->base = &base;
        lo->diff_path = c->diff_path;
    }
    if (is_elf(o->source) && !is_elf(o->elf)) { /* the two arguments the wrong way round */
        fprintf(stderr, "cmprof-top: '%s' is an ELF file: the order is SOURCE ELF, e.g. cmprof-top %s %s\n", o->source,
                o->elf, o->source);
        return EXIT_USAGE;
    }
    if (is_elf(o->source)) { /* an ELF as the source too: no capture of samples, however it is read */
        fprintf(stderr, "cmprof-top: '%s' is an ELF file, not a source of samples: give the port, capture file, "
                "tcp:HOST:PORT or gdb:HOST:PORT the samples come from, e.g. cmprof-top /dev/ttyUSB0 %s\n", o->source,
                o->elf);
        return EXIT_USAGE;
    }
    bool gdb_source = src_spec_takes(o->source) & SRC_TAKES_UNWIND; /* a source that walks stacks itself */
    o->flat_stacks = lo->stack_depth == 0 && !gdb_source;
    if (lo->stack_depth < 0 && gdb_source)
        lo->stack_depth = 16; /* elsewhere -1: the firmware's stack evidence used; 0 leaves it aside */
    else if (lo->stack_depth > 0 && !gdb_source) {
        fprintf(stderr, "cmprof-top: --stack-depth works with gdb: sources (the stack is read while halted)\n");
        return EXIT_USAGE;
    }
    if (src_spec_sends_itm(o->source) && o->format == DETECT_UNKNOWN)
        /* tagged samples and stacks come as dump text, bare PCs as ITM */
        o->format = lo->task_var || lo->stack_depth > 0 ? DETECT_TEXT : DETECT_ITM;
    if (lo->task_var && !gdb_source) {
        fprintf(stderr, "cmprof-top: --task-var works with gdb: sources (the core is read while halted)\n");
        return EXIT_USAGE;
    }
    return GO_ON;
}

int main(int argc, char **argv)
{
    if (getenv("CMPROF_DWARF_IN_PROCESS")) /* debugging, and sanitizer runs that must see libdwarf's calls */
        sym_set_isolation(0);
    if (getenv("CMPROF_DWARF_LIBDWARF")) /* every unit through libdwarf: the fast reader's reference */
        sym_set_fast_reader(0);
    struct cli c = {.lo = {.batch = {.format = DETECT_UNKNOWN, .tpiu_id = 1, .by = PROF_BY_FUNCTION,
                                     .inline_frames = true},
                           .color = getenv("NO_COLOR") == NULL, .task_name_offset = -1, .stack_depth = -1}};
    int status = parse_options(argc, argv, &c);
    if (status == EXIT_DONE)
        return written(status, "the answer"); /* --help, --version, --list-ports */
    if (status != GO_ON)
        return status;
    struct batch_options *o = &c.lo.batch;
    if (c.resolve) {
        if (optind >= argc) {
            fprintf(stderr, "cmprof-top: --resolve needs an ELF\n");
            return EXIT_USAGE;
        }
        return written(resolve_main(argv[optind], o->demangle, argv + optind + 1, argc - optind - 1, stdin, stdout,
                                    stderr), "--resolve's answers");
    }
    if ((status = check_options(&c, argc, argv)) != GO_ON)
        return status;
    if (!c.batch)
        return live_main(&c.lo);
    /* a file or stdin reads to its end; a live source needs the poll loop */
    struct stat st;
    bool plain = strcmp(o->source, "-") == 0 || (stat(o->source, &st) == 0 && S_ISREG(st.st_mode));
    if (plain && c.lo.duration == 0 && c.lo.rate <= 0 && !c.lo.record)
        return batch_main(o, stdout, stderr);
    if (plain && c.lo.rate > 0 && c.lo.duration == 0 && S_ISREG(st.st_mode) && st.st_size / c.lo.rate > 60)
        fprintf(stderr, "cmprof-top: replaying %s (%lld bytes) at %g bytes a second takes %.0f s; --duration S "
                "ends it sooner\n", o->source, (long long)st.st_size, c.lo.rate, (double)st.st_size / c.lo.rate);
    c.lo.headless = true;
    return live_main(&c.lo);
}
