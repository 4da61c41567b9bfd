/* libFuzzer target: bytes through ingest (format detection, text, ITM and TPIU decoders) into a
 * profile with symbols, with a histogram-friendly ELF, then every report the batch mode prints.
 * The first input byte picks the format and how the rest is split, so chunking is fuzzed too. */
#include "../profile/ingest.h"
#include "every_report.h"

#include <stdio.h>
#include <stdlib.h>

static struct sym_table *syms;

static void load_symbols(void)
{
    char err[256];
    const char *elf = getenv("FUZZ_ELF"); /* optional: a scenario ELF, for names and buckets */
    if (elf && !syms)
        syms = sym_open(elf, err, sizeof err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    load_symbols();
    uint8_t mode = data[0];
    data++, size--;
    struct prof *p = prof_new(syms);
    struct ingest_options io = {.format = (enum detect_format)(mode & 3), .tpiu_id = 1 + (mode >> 2 & 1),
                                .wait_sync = (mode >> 3) & 1, .max_samples = (mode & 0x10) ? 100 : 0};
    struct ingest *in = p ? ingest_new(p, &io) : NULL;
    if (!in)
        abort();
    size_t step = (mode >> 5) ? (size_t)(mode >> 5) * 7 : size; /* 1 piece, or pieces of 7..49 bytes */
    for (size_t off = 0; off < size; off += step)
        ingest_feed(in, data + off, size - off < step ? size - off : step);
    ingest_finish(in);
    every_report(p, in, mode);
    ingest_free(in);
    prof_free(p);
    return 0;
}
