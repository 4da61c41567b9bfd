/* The byte order marks an editor puts before text (UTF-8's, UTF-16's), for every reader of text
 * files: the capture decoder and the --diff baseline. Like grow.h, it includes only the C library. */
#ifndef CMPROF_BASE_BOM_H
#define CMPROF_BASE_BOM_H

#include <stddef.h>
#include <string.h>

struct bom {
    const char *bytes, *name;
    size_t len;
};

#define BOM_MAX 3 /* the longest mark's bytes */

/* The mark that the n bytes at text are (*whole) or begin (!*whole); NULL when they begin none. */
static inline const struct bom *bom_match(const void *text, size_t n, int *whole)
{
    static const struct bom marks[] = {
        {"\xEF\xBB\xBF", "UTF-8", 3}, {"\xFF\xFE", "UTF-16 (little-endian)", 2}, {"\xFE\xFF", "UTF-16 (big-endian)", 2}};
    for (size_t m = 0; m < sizeof marks / sizeof *marks; m++)
        if (n <= marks[m].len && memcmp(marks[m].bytes, text, n) == 0) {
            *whole = n == marks[m].len;
            return &marks[m];
        }
    return NULL;
}

/* The whole mark that len bytes of text start with; NULL when none. */
static inline const struct bom *bom_at(const void *text, size_t len)
{
    int whole = 0;
    for (size_t n = 1; n <= len && n <= BOM_MAX; n++) {
        const struct bom *b = bom_match(text, n, &whole);
        if (!b || whole)
            return b;
    }
    return NULL;
}

#endif
