/* cmprof-top: command line. Batch and resolve modes for now; the live view comes with tui/. */
#include "batch.h"
#include "resolve.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define CMPROF_VERSION "0.2.0"

static void usage(FILE *f)
{
    fputs("usage: cmprof-top --batch [options] SOURCE ELF\n"
          "       cmprof-top --resolve ELF [ADDR...]\n"
          "\n"
          "SOURCE is a capture file (firmware text dump, raw ITM/SWO, or TPIU frames) or - for stdin.\n"
          "\n"
          "  --batch            read SOURCE to the end, print the profile, exit\n"
          "  -o, --output FMT   table (default), csv, json or folded\n"
          "  --by KEY           function (default), line, file or task\n"
          "  --no-inline        charge inlined code to the function that contains it\n"
          "  -f, --format FMT   auto (default), text, itm or tpiu\n"
          "  --tpiu-id N        ITM source ID inside TPIU frames (default 1)\n"
          "  --wait-sync        ignore ITM bytes until the first sync packet\n"
          "  --samples N        stop after N samples\n"
          "  --resolve          print addr2line -a -f -i lines for addresses (or stdin)\n"
          "  -h, --help         this help\n"
          "  -V, --version      print the version\n",
          f);
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
    static const char *const outputs[] = {"table", "csv", "json", "folded"};
    static const char *const groups[] = {"function", "line", "file", "task"};
    struct batch_options o = {.format = DETECT_UNKNOWN, .tpiu_id = 1, .by = PROF_BY_FUNCTION, .inline_frames = true};
    bool batch = false, resolve = false;
    enum { OPT_BATCH = 256, OPT_BY, OPT_NO_INLINE, OPT_TPIU_ID, OPT_RESOLVE, OPT_WAIT_SYNC, OPT_SAMPLES };
    static const struct option longopts[] = {
        {"batch", no_argument, NULL, OPT_BATCH},       {"output", required_argument, NULL, 'o'},
        {"by", required_argument, NULL, OPT_BY},       {"no-inline", no_argument, NULL, OPT_NO_INLINE},
        {"format", required_argument, NULL, 'f'},      {"tpiu-id", required_argument, NULL, OPT_TPIU_ID},
        {"resolve", no_argument, NULL, OPT_RESOLVE},   {"wait-sync", no_argument, NULL, OPT_WAIT_SYNC},
        {"samples", required_argument, NULL, OPT_SAMPLES}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},           {NULL, 0, NULL, 0}};
    int c, k;
    char *end;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:f:hV", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BATCH:
            batch = true;
            break;
        case OPT_RESOLVE:
            resolve = true;
            break;
        case 'o':
            if ((k = parse_choice(optarg, outputs, 4)) < 0) {
                fprintf(stderr, "cmprof-top: unknown output '%s' (table, csv, json, folded)\n", optarg);
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
        case 'f':
            if ((k = detect_parse(optarg)) < 0) {
                fprintf(stderr, "cmprof-top: unknown format '%s' (auto, text, itm, tpiu)\n", optarg);
                return 2;
            }
            o.format = (enum detect_format)k;
            break;
        case OPT_TPIU_ID: {
            unsigned long v = strtoul(optarg, &end, 0);
            if (*end || v < 1 || v > 0x6F) {
                fprintf(stderr, "cmprof-top: --tpiu-id takes 1..111, not '%s'\n", optarg);
                return 2;
            }
            o.tpiu_id = (uint8_t)v;
            break;
        }
        case OPT_WAIT_SYNC:
            o.wait_sync = true;
            break;
        case OPT_SAMPLES:
            o.max_samples = strtoull(optarg, &end, 10);
            if (*end || !o.max_samples) {
                fprintf(stderr, "cmprof-top: --samples takes a positive number, not '%s'\n", optarg);
                return 2;
            }
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
        return resolve_main(argv[optind], argv + optind + 1, argc - optind - 1, stdin, stdout, stderr);
    }
    if (!batch) {
        fprintf(stderr, "cmprof-top: the live view is not built yet; use --batch SOURCE ELF (see --help)\n");
        return 2;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "cmprof-top: --batch needs SOURCE and ELF\n");
        return 2;
    }
    o.source = argv[optind];
    o.elf = argv[optind + 1];
    return batch_main(&o, stdout, stderr);
}
