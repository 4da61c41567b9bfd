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

/* Opens path for writing as outfile_open says; a FIFO without blocking until its reader comes. */
static int open_for_writing(const char *path, bool force, bool fifo, char *err, size_t errlen)
{
    int flags = O_WRONLY | O_CREAT | O_NOCTTY | O_NOFOLLOW | (force ? O_TRUNC : O_EXCL);
    int fd = open(path, flags | (fifo ? O_NONBLOCK : 0), 0666);
    if (fd < 0 && fifo && errno == ENXIO)
        snprintf(err, errlen, "%s is a FIFO that nothing reads yet: start its reader first", path);
    else if (fd < 0)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    else if (fifo && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        fd = -1;
    }
    return fd;
}

FILE *outfile_open(const char *path, bool force, const char *const *inputs, size_t n, bool *created, char *err,
                   size_t errlen)
{
    struct stat st, link;
    bool exists = stat(path, &st) == 0;
    bool is_link = lstat(path, &link) == 0 && S_ISLNK(link.st_mode);
    *created = false;
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && same_file(path, exists ? &st : NULL, inputs[i])) {
            snprintf(err, errlen, "%s is %s, which this run reads: choose another file", path,
                     strcmp(inputs[i], "-") == 0 ? "standard input" : inputs[i]);
            return NULL;
        }
    if (exists && !is_link && S_ISDIR(st.st_mode)) { /* --force would not help: no advice to give it */
        snprintf(err, errlen, "%s is a directory: give a file's path", path);
        return NULL;
    }
    if ((exists || is_link) && !force) {
        snprintf(err, errlen, "%s exists%s: give --force to write over it", path,
                 is_link ? " (a symbolic link: --force replaces the link, not what it points to)" : "");
        return NULL;
    }
    /* the path named is the output: a link is replaced, never followed to a file nobody named */
    if (is_link && unlink(path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    bool fifo = exists && !is_link && S_ISFIFO(st.st_mode);
    int fd = open_for_writing(path, force && !is_link, fifo, err, errlen);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    *created = !exists || is_link;
    return f;
}

bool outfile_stdout_ok(const char *const *inputs, size_t n, char *err, size_t errlen)
{
    struct stat out;
    if (fstat(STDOUT_FILENO, &out) != 0 || !S_ISREG(out.st_mode))
        return true; /* a terminal, a pipe, /dev/null: nothing this run reads */
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && same_file("(standard output)", &out, inputs[i])) {
            snprintf(err, errlen, "standard output is %s, which this run reads: send the report elsewhere",
                     strcmp(inputs[i], "-") == 0 ? "the file on standard input" : inputs[i]);
            return false;
        }
    return true;
}
