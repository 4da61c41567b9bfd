/* The base name of a path, for every layer (a file's name in a row, the ELF's in a title, a
 * snapshot's stem): like grow.h, it includes only the C library. */
#ifndef CMPROF_BASE_PATH_H
#define CMPROF_BASE_PATH_H

#include <string.h>

/* The part of path after its last '/' (all of it without one); "" for NULL. */
static inline const char *path_base(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "";
}

#endif
