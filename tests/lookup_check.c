/* Batch lookups against lone ones. Every halfword of each ELF's code is looked up one at a time on
 * one table, where every search starts from scratch, and in batches on others, where the addresses
 * are taken in ascending order, each search resumes from the address before and an answer is reused
 * for as long as the entries it weighed say it holds. Both must give the same frames.
 *
 * The batches come in two patterns: the halfwords shuffled (a fixed seed) in batches of 8,192, as
 * --resolve reads a stream; and every third halfword first, then all of them, so that dense runs
 * resume from answers found in an earlier batch. A table opened with its symbols' names left for
 * later (sym_set_symbol_names(0), as --resolve opens one) must give the same frames in shuffled
 * batches too (its answers name no `symbol`): its names are read once an answer needs one; that
 * table maps the file's DWARF (sym_set_mapped_reads(1)), as --resolve does, where the others read it
 * with pread.
 *
 * Usage: lookup-check ELF...  One ok/FAIL line per ELF; exits non-zero on a difference. */
#include "../symbols/symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Where two answers differ, or NULL (not in `symbol` when any_symbol: a table whose answers name none). */
static const char *difference_but(const struct sym_location *a, const struct sym_location *b, bool any_symbol)
{
    if (!a || !b)
        return a == b ? NULL : "one answer is missing";
    if (a->known != b->known || a->n_frames != b->n_frames)
        return "known or frame count";
    if (a->discriminator != b->discriminator)
        return "discriminator";
    if (!any_symbol && (!same_text(a->symbol, b->symbol) || a->symbol_start != b->symbol_start))
        return "symbol";
    for (uint32_t i = 0; i < a->n_frames; i++) {
        const struct sym_frame *x = sym_frame_at(a, i), *y = sym_frame_at(b, i);
        if (!same_text(x->function, y->function) || !same_text(x->file, y->file) || x->line != y->line)
            return "a frame";
    }
    return NULL;
}

static const char *difference(const struct sym_location *a, const struct sym_location *b)
{
    return difference_but(a, b, false);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

enum { BATCH = 8192 };

/* The executable sections' address ranges, read from the ELF's section headers: the walk over the
 * code span skips the gaps between them (a Cortex-R5's vectors sit 4 GB above its SRAM code, and
 * asking sym_in_code about each of the 2^31 halfwords between took most of this check's time).
 * Returns the number of ranges (at most max), or -1 when the headers cannot be read. */
enum { MAX_RANGES = 64 };

static int exec_ranges(const char *path, uint32_t (*ranges)[2], int max)
{
    int fd = open(path, O_RDONLY), n = 0;
    Elf *e = fd >= 0 && elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    GElf_Shdr sh;
    for (Elf_Scn *scn = e ? elf_nextscn(e, NULL) : NULL; scn && n >= 0; scn = elf_nextscn(e, scn)) {
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
            continue;
        if (n == max) {
            n = -1;
            break;
        }
        ranges[n][0] = (uint32_t)sh.sh_addr;
        ranges[n][1] = (uint32_t)(sh.sh_addr + sh.sh_size);
        n++;
    }
    if (!e)
        n = -1;
    elf_end(e);
    if (fd >= 0)
        close(fd);
    return n;
}

/* The first address from a up that lies in one of the ranges (end when none does). */
static uint32_t next_in_ranges(uint32_t a, uint32_t end, const uint32_t (*ranges)[2], int n)
{
    uint32_t next = end;
    for (int i = 0; i < n; i++) {
        if (a >= ranges[i][0] && a < ranges[i][1])
            return a;
        if (ranges[i][0] > a && ranges[i][0] < next)
            next = ranges[i][0];
    }
    return next;
}

static struct sym_table *open_or_say(const char *path)
{
    char err[256];
    struct sym_table *t = sym_open(path, err, sizeof err);
    if (!t)
        printf("FAIL lookup check %s: %s\n", path, err);
    return t;
}

/* 0 when every answer of `got` (addresses addrs[0..n)) matches the lone lookup on `lone`. */
static int compare(const char *path, const char *pattern, struct sym_table *lone, const uint32_t *addrs,
                   const struct sym_location **got, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *why = difference(sym_lookup(lone, addrs[i]), got[i]);
        if (why) {
            printf("FAIL lookup check %s (%s): 0x%08x: %s differs from a lone lookup\n", path, pattern, addrs[i], why);
            return 1;
        }
    }
    return 0;
}

/* Does a lone lookup read a unit a function at a time? The line rows held after looking up the
 * function at addr, then the next function too: more after the second, with no other unit read,
 * when the first read only its own part of their unit (units of a few functions are read whole). */
static bool read_in_part(const char *path, uint32_t addr)
{
    struct sym_table *t = open_or_say(path);
    uint32_t lo, hi, lo2, hi2;
    bool part = false;
    if (t && sym_function_from(t, addr, &lo, &hi) && sym_function_from(t, hi, &lo2, &hi2)) {
        struct sym_stats a, b;
        sym_lookup(t, lo);
        sym_get_stats(t, &a);
        sym_lookup(t, lo2);
        sym_get_stats(t, &b);
        part = b.line_rows > a.line_rows && b.units_loaded == a.units_loaded;
    }
    sym_close(t);
    return part;
}

static int check_elf(const char *path)
{
    struct sym_table *lone = open_or_say(path), *shuffled = lone ? open_or_say(path) : NULL,
                     *thirds = shuffled ? open_or_say(path) : NULL;
    uint32_t lo, hi;
    if (!thirds || !sym_code_span(lone, &lo, &hi) || hi <= lo) {
        if (thirds)
            printf("FAIL lookup check %s: no code\n", path);
        if (shuffled)
            sym_close(shuffled);
        if (lone)
            sym_close(lone);
        return 1;
    }
    uint32_t ranges[MAX_RANGES][2];
    int n_ranges = exec_ranges(path, ranges, MAX_RANGES);
    size_t cap = 1, n = 0; /* room for the halfwords of every executable section */
    for (int i = 0; i < n_ranges; i++)
        cap += (ranges[i][1] - ranges[i][0]) / 2 + 1;
    uint32_t *ascending = malloc(cap * sizeof *ascending), *work = malloc(cap * sizeof *work);
    const struct sym_location **got = malloc(cap * sizeof *got);
    int bad = !ascending || !work || !got;
    if (bad)
        printf("FAIL lookup check %s: out of memory\n", path);
    else if (n_ranges < 0) {
        printf("FAIL lookup check %s: cannot read its section headers\n", path);
        bad = 1;
    }
    for (uint32_t a = lo & ~1u; !bad && a < hi; a += 2) {
        a = next_in_ranges(a, hi, (const uint32_t(*)[2])ranges, n_ranges) & ~1u;
        if (a < hi && sym_in_code(lone, a) && n < cap)
            ascending[n++] = a;
    }
    if (!bad) { /* shuffled, in batches as --resolve takes a stream */
        memcpy(work, ascending, n * sizeof *work);
        for (size_t i = n; i > 1; i--) {
            size_t j = next_random() % i;
            uint32_t x = work[i - 1];
            work[i - 1] = work[j];
            work[j] = x;
        }
        for (size_t k = 0; k < n; k += BATCH)
            sym_lookup_many(shuffled, work + k, n - k < BATCH ? n - k : BATCH, got + k);
        bad = compare(path, "shuffled batches", lone, work, got, n);
    }
    if (!bad) { /* every third halfword first, then all */
        size_t k = 0;
        for (size_t i = 0; i < n; i += 3)
            work[k++] = ascending[i];
        sym_lookup_many(thirds, work, k, got);
        sym_lookup_many(thirds, ascending, n, got);
        bad = compare(path, "thirds, then all", lone, ascending, got, n);
    }
    if (!bad) { /* the names left for later: shuffled batches again, on a table opened so */
        sym_set_symbol_names(0);
        sym_set_mapped_reads(1); /* (as --resolve opens it: its DWARF mapped, not read with pread) */
        struct sym_table *later = open_or_say(path);
        sym_set_symbol_names(1);
        sym_set_mapped_reads(0);
        size_t half = 0; /* every second halfword first, then the others: batches as a stream brings them */
        for (size_t i = 0; i < n; i += 2)
            work[half++] = ascending[i];
        for (size_t i = 1; i < n; i += 2)
            work[half++] = ascending[i];
        for (size_t k = 0; later && k < n; k += BATCH)
            sym_lookup_many(later, work + k, n - k < BATCH ? n - k : BATCH, got + k);
        for (size_t i = 0; later && !bad && i < n; i++) {
            const char *why = difference_but(sym_lookup(lone, work[i]), got[i], true);
            if (why || (got[i] && got[i]->symbol)) {
                printf("FAIL lookup check %s (names later, mapped): 0x%08x: %s\n", path, work[i],
                       why ? why : "an answer names a symbol");
                bad = 1;
            }
        }
        bad |= !later;
        sym_close(later);
    }
    if (!bad)
        printf("ok   lookup check %s: %zu halfwords, batches as lone lookups, names later and mapped too; a unit read %s\n", path, n,
               read_in_part(path, lo) ? "a function at a time" : "whole");
    free(ascending);
    free(work);
    free(got);
    sym_close(thirds);
    sym_close(shuffled);
    sym_close(lone);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++)
        bad |= check_elf(argv[i]);
    if (argc < 2) {
        printf("FAIL lookup check: no ELF given\n");
        bad = 1;
    }
    return bad;
}
