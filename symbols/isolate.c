/* DWARF in a child process. libdwarf (20210528 in Debian 12) can abort or loop on damaged input,
 * e.g. a double free on a corrupted .debug_rnglists. The child runs dwarf_load() and writes the
 * flattened tables down a pipe: a header, the arrays as they are, then every string once. Any
 * crash, non-zero exit, short or inconsistent reply or timeout in the child leaves the parent with
 * ELF symbols only and a one-line reason in t->dwarf_error. */
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOAD_TIMEOUT_MS 120000 /* the 27 MB benchmark ELF loads in 0.5 s */
#define WIRE_MAGIC 0x636d7066u
#define WIRE_END 0x646e6521u /* after the last byte: the reply is whole */

struct wire_header {
    uint32_t magic;
    uint8_t ok, has_dwarf;
    uint64_t n_rows, n_seqs, n_scopes, n_subs, n_inlines, n_cu_names, n_strings, blob_bytes;
    char dwarf_error[sizeof(((struct sym_table *)0)->dwarf_error)];
};

/* In the reply, a string pointer travels as its 1-based index in the string list (NULL as 0). */
static const char *as_id(uint64_t id)
{
    return (const char *)(uintptr_t)id;
}

/* ---- child: pointer -> string index, and the string list ---------------------------------- */

struct string_ids {
    struct ptrmap ids; /* string pointer -> 1-based index */
    const char *last;  /* rows come in runs of one file: the last pointer and its index */
    uintptr_t last_id;
    size_t n;
    char *blob;
    size_t blob_len, blob_cap;
};

/* Replace *p by its string's index, adding the string to the list the first time. */
static bool to_id(struct string_ids *s, const char **p)
{
    if (!*p)
        return true;
    if (*p == s->last) {
        *p = as_id(s->last_id);
        return true;
    }
    bool added;
    uintptr_t *id = symt_ptrmap_slot(&s->ids, *p, &added);
    if (!id)
        return false;
    if (added) {
        size_t len = strlen(*p) + 1;
        if (!symt_vec_grow((void **)&s->blob, &s->blob_cap, s->blob_len + len, 1))
            return false;
        memcpy(s->blob + s->blob_len, *p, len);
        s->blob_len += len;
        *id = ++s->n;
    }
    s->last = *p;
    s->last_id = *id;
    *p = as_id(*id);
    return true;
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        len -= (size_t)k;
    }
    return true;
}

static void child(struct sym_table *t, const char *path, int fd)
{
    /* a crash here is expected now and then: no terminal-restoring handler, no message on the
     * parent's terminal (glibc writes fatal errors to /dev/tty unless told otherwise) */
    static const int fatal[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    setenv("LIBC_FATAL_STDERR_", "1", 1);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
        dup2(devnull, STDERR_FILENO);
        close(devnull);
    }
    struct wire_header h = {.magic = WIRE_MAGIC};
    bool has_dwarf = false;
    h.ok = dwarf_load(t, path, &has_dwarf);
    h.has_dwarf = has_dwarf;
    memcpy(h.dwarf_error, t->dwarf_error, sizeof h.dwarf_error);
    struct string_ids s = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < t->rows.n; i++)
        ok = to_id(&s, &t->rows.v[i].file);
    for (size_t i = 0; ok && i < t->scopes.n; i++)
        ok = to_id(&s, &t->scopes.v[i].name) && to_id(&s, &t->scopes.v[i].call_file);
    for (size_t i = 0; ok && i < t->cu_names.n; i++)
        ok = to_id(&s, &t->cu_names.v[i]);
    if (!ok)
        _exit(3);
    h.n_rows = t->rows.n;
    h.n_seqs = t->seqs.n;
    h.n_scopes = t->scopes.n;
    h.n_subs = t->subs.n;
    h.n_inlines = t->inlines.n;
    h.n_cu_names = t->cu_names.n;
    h.n_strings = s.n;
    h.blob_bytes = s.blob_len;
    ok = write_all(fd, &h, sizeof h) && write_all(fd, t->rows.v, t->rows.n * sizeof *t->rows.v) &&
         write_all(fd, t->seqs.v, t->seqs.n * sizeof *t->seqs.v) &&
         write_all(fd, t->scopes.v, t->scopes.n * sizeof *t->scopes.v) &&
         write_all(fd, t->subs.v, t->subs.n * sizeof *t->subs.v) &&
         write_all(fd, t->inlines.v, t->inlines.n * sizeof *t->inlines.v) &&
         write_all(fd, t->cu_names.v, t->cu_names.n * sizeof *t->cu_names.v) && write_all(fd, s.blob, s.blob_len);
    uint32_t end = WIRE_END;
    ok = ok && write_all(fd, &end, sizeof end);
    close(fd); /* the parent sees the end now, not after this process's memory is torn down */
    _exit(ok ? 0 : 4); /* no atexit handlers, no leak report: the process ends here */
}

/* ---- parent: read the reply, check it, rebuild the pointers ------------------------------- */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly len bytes before the deadline. 0: done; -1: EOF or error first; -2: timed out. */
static int read_exact(int fd, void *dst, size_t len, long long deadline)
{
    char *p = dst;
    while (len) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return -2;
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue;
        ssize_t k = read(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Read n elements of `elem` bytes straight into a vector of the table. */
static int read_vec(int fd, void **v, size_t *vn, size_t *vcap, uint64_t n, size_t elem, long long deadline)
{
    if (n > ((uint64_t)1 << 40) / elem)
        return -1; /* an absurd count: a broken reply */
    if (n && !symt_vec_grow(v, vcap, (size_t)n, elem))
        return -1;
    *vn = (size_t)n;
    return n ? read_exact(fd, *v, (size_t)n * elem, deadline) : 0;
}

static bool from_id(const char **p, const char **strings, uint64_t n)
{
    uint64_t id = (uintptr_t)*p;
    if (id > n)
        return false;
    *p = id ? strings[id - 1] : NULL;
    return true;
}

/* Give the arrays their strings back and check every index; false when the reply is inconsistent. */
static bool adopt(struct sym_table *t, const char *blob, const struct wire_header *h)
{
    const char *end = blob + h->blob_bytes;
    bool ok = (h->blob_bytes == 0 || end[-1] == '\0') && h->n_strings <= h->blob_bytes;
    const char **strings = ok ? calloc(h->n_strings + 1, sizeof *strings) : NULL;
    ok = ok && strings;
    uint64_t k = 0;
    for (const char *s = blob; ok && s < end && k < h->n_strings; k++) {
        strings[k] = symt_intern(&t->strings, s);
        ok = strings[k] != NULL;
        s += strlen(s) + 1;
    }
    ok = ok && k == h->n_strings;
    for (size_t i = 0; ok && i < t->rows.n; i++)
        ok = from_id(&t->rows.v[i].file, strings, k);
    for (size_t i = 0; ok && i < t->scopes.n; i++)
        ok = from_id(&t->scopes.v[i].name, strings, k) && from_id(&t->scopes.v[i].call_file, strings, k) &&
             t->scopes.v[i].parent >= -1 && t->scopes.v[i].parent < (int64_t)t->scopes.n && t->scopes.v[i].name;
    for (size_t i = 0; ok && i < t->cu_names.n; i++)
        ok = from_id(&t->cu_names.v[i], strings, k);
    for (size_t i = 0; ok && i < t->seqs.n; i++)
        ok = (uint64_t)t->seqs.v[i].first + t->seqs.v[i].n <= t->rows.n;
    for (size_t i = 0; ok && i < t->subs.n; i++)
        ok = t->subs.v[i].scope < t->scopes.n;
    for (size_t i = 0; ok && i < t->inlines.n; i++)
        ok = t->inlines.v[i].scope < t->scopes.n;
    free(strings);
    return ok;
}

/* The child's reply, read straight into the table's arrays: 0, or -1 (broken) / -2 (timed out). */
static int receive(struct sym_table *t, int fd, struct wire_header *h)
{
    long long deadline = now_ms() + LOAD_TIMEOUT_MS;
    int r = read_exact(fd, h, sizeof *h, deadline);
    if (r == 0 && h->magic != WIRE_MAGIC)
        r = -1;
    if (r == 0)
        r = read_vec(fd, (void **)&t->rows.v, &t->rows.n, &t->rows.cap, h->n_rows, sizeof *t->rows.v, deadline);
    if (r == 0)
        r = read_vec(fd, (void **)&t->seqs.v, &t->seqs.n, &t->seqs.cap, h->n_seqs, sizeof *t->seqs.v, deadline);
    if (r == 0)
        r = read_vec(fd, (void **)&t->scopes.v, &t->scopes.n, &t->scopes.cap, h->n_scopes, sizeof *t->scopes.v,
                     deadline);
    if (r == 0)
        r = read_vec(fd, (void **)&t->subs.v, &t->subs.n, &t->subs.cap, h->n_subs, sizeof *t->subs.v, deadline);
    if (r == 0)
        r = read_vec(fd, (void **)&t->inlines.v, &t->inlines.n, &t->inlines.cap, h->n_inlines,
                     sizeof *t->inlines.v, deadline);
    if (r == 0)
        r = read_vec(fd, (void **)&t->cu_names.v, &t->cu_names.n, &t->cu_names.cap, h->n_cu_names,
                     sizeof *t->cu_names.v, deadline);
    char *blob = NULL;
    if (r == 0 && h->blob_bytes >= ((uint64_t)1 << 32))
        r = -1;
    if (r == 0 && !(blob = malloc(h->blob_bytes + 1)))
        r = -1;
    if (r == 0)
        r = read_exact(fd, blob, h->blob_bytes, deadline);
    if (r == 0) {
        uint32_t end = 0;
        char extra;
        if (read_exact(fd, &end, sizeof end, deadline) != 0 || end != WIRE_END || read(fd, &extra, 1) != 0 ||
            !adopt(t, blob, h)) /* the end mark, then nothing */
            r = -1;
    }
    free(blob);
    if (r != 0) /* nothing half-adopted stays */
        t->rows.n = t->seqs.n = t->scopes.n = t->subs.n = t->inlines.n = t->cu_names.n = 0;
    return r;
}

bool dwarf_load_isolated(struct sym_table *t, const char *path, bool *has_dwarf)
{
    *has_dwarf = false;
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return dwarf_load(t, path, has_dwarf); /* no child possible: load here, unprotected */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return dwarf_load(t, path, has_dwarf);
    }
    if (pid == 0) {
        close(pipefd[0]);
        child(t, path, pipefd[1]);
    }
    close(pipefd[1]);
#ifdef F_SETPIPE_SZ
    fcntl(pipefd[0], F_SETPIPE_SZ, 1 << 20); /* tens of MB go through: fewer, larger reads */
#endif
    struct wire_header h;
    int got = receive(t, pipefd[0], &h);
    close(pipefd[0]);
    if (got == 0) { /* whole and consistent: the child may still be exiting; sym_open reaps it */
        t->dwarf_child = pid;
        *has_dwarf = h.has_dwarf;
        h.dwarf_error[sizeof h.dwarf_error - 1] = '\0';
        memcpy(t->dwarf_error, h.dwarf_error, sizeof t->dwarf_error);
        return h.ok;
    }
    if (got == -2)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got == -2) {
        snprintf(t->dwarf_error, sizeof t->dwarf_error,
                 "reading DWARF took over %d s (libdwarf stuck on damaged debug info?): functions from the "
                 "ELF symbol table only, no lines or inline chains", LOAD_TIMEOUT_MS / 1000);
    } else if (WIFSIGNALED(status)) {
        snprintf(t->dwarf_error, sizeof t->dwarf_error,
                 "libdwarf crashed (%s) on this file's debug info: functions from the ELF symbol table only, "
                 "no lines or inline chains", strsignal(WTERMSIG(status)));
    } else {
        snprintf(t->dwarf_error, sizeof t->dwarf_error,
                 "the DWARF loader failed (exit status %d): functions from the ELF symbol table only, "
                 "no lines or inline chains", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return true; /* the table stays usable with ELF symbols */
}
