/* Guarded output files (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The absolute path of a file that may not exist yet: its directory resolved, its name kept. */
static bool resolve(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    if (realpath(path, real)) {
        snprintf(out, len, "%s", real);
        return true;
    }
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (!realpath(dir, real))
        return false;
    snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, name);
    return true;
}

/* Whether path (st: its stat, or NULL when it does not exist) names the input `in`. */
static bool same_file(const char *path, const struct stat *st, const char *in)
{
    struct stat is;
    if (strcmp(in, "-") == 0 ? fstat(STDIN_FILENO, &is) == 0 : stat(in, &is) == 0) {
        if (st && st->st_dev == is.st_dev && st->st_ino == is.st_ino)
            return true;
    }
    if (st || strcmp(in, "-") == 0)
        return false;
    char a[PATH_MAX + 256], b[PATH_MAX + 256];
    return resolve(path, a, sizeof a) && resolve(in, b, sizeof b) && strcmp(a, b) == 0;
}

FILE *outfile_open(const char *path, bool force, const char *const *inputs, size_t n, bool *created, char *err,
                   size_t errlen)
{
    struct stat st;
    bool exists = stat(path, &st) == 0;
    *created = false;
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && same_file(path, exists ? &st : NULL, inputs[i])) {
            snprintf(err, errlen, "%s is %s, which this run reads: choose another file", path,
                     strcmp(inputs[i], "-") == 0 ? "standard input" : inputs[i]);
            return NULL;
        }
    if (exists && !force) {
        snprintf(err, errlen, "%s exists: give --force to write over it", path);
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_NOCTTY | (force ? O_TRUNC : O_EXCL), 0666);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    *created = !exists;
    return f;
}
