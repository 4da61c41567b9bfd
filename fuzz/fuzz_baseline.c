/* libFuzzer target: the --diff baseline reader (report/baseline.c) through its public API. The input
 * is the report file; a report that loads must answer for each of its rows, and comparing those
 * rows with themselves and with a profile must give numbers, never NaN or a crash. */
#include "../report/baseline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input as a file: baseline_load takes a path, as --diff does. */
static int as_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("baseline", 0);
    if (fd < 0)
        abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0)
            abort();
        off += (size_t)w;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

static void check_rows(const struct baseline *b)
{
    if (!(b->total > 0) || !isfinite(b->total) || strlen(b->group) >= sizeof b->group)
        abort(); /* the reader promised a report with samples */
    for (size_t i = 0; i < b->n; i++) {
        const struct baseline_row *r = &b->rows[i];
        if (i && strcmp(b->rows[i - 1].name, r->name) > 0)
            abort(); /* rows are sorted by name */
        double got = baseline_samples(b, r->name); /* one of the rows of that name */
        bool found = false;
        for (size_t k = i; k < b->n && !strcmp(b->rows[k].name, r->name) && !found; k++)
            found = b->rows[k].samples == got;
        for (size_t k = i; k-- > 0 && !strcmp(b->rows[k].name, r->name) && !found;)
            found = b->rows[k].samples == got;
        if (!found || r->samples < 0 || !isfinite(r->samples))
            abort();
        struct baseline_delta d = baseline_compare(r->samples, b->total, r->samples, b->total, b->n);
        struct baseline_delta e = baseline_compare(1, 3, r->samples, b->total, b->n);
        if (isnan(d.z) || isnan(d.delta) || isnan(e.z) || isnan(e.delta) || d.significant)
            abort();
    }
    baseline_samples(b, "no such row, surely");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[256];
    int fd = as_file(data, size, path, sizeof path);
    struct baseline b;
    if (baseline_load(path, &b, err, sizeof err) == 0) {
        check_rows(&b);
        baseline_free(&b);
    } else if (!*err || strchr(err, '\n') || strncmp(err, "--diff ", 7) != 0) {
        abort(); /* one line naming the option and the file */
    }
    close(fd);
    return 0;
}
