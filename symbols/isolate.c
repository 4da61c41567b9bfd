/* DWARF in a child process. libdwarf (20210528 in Debian 12) can abort or loop on damaged input,
 * e.g. a double free on a corrupted .debug_rnglists. The child opens the DWARF, sends the unit
 * index, then serves requests for units: each reply is a header, the stage's arrays as they are,
 * then every string once. A crash, short or inconsistent reply or timeout in the child ends it:
 * units read so far stay, the others get ELF symbols only, with a one-line reason in
 * t->load->dwarf_error. */
/* MSG_NOSIGNAL and PR_SET_PDEATHSIG need _GNU_SOURCE, which the build defines */
#include "readers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOAD_TIMEOUT_MS 120000 /* the 27 MB benchmark ELF loads whole in 0.5 s */
#define WIRE_MAGIC 0x636d7067u
#define WIRE_END 0x646e6521u /* after the last byte: the reply is whole */
#define MAX_REQUEST 65536u
#define INDEX_REQUEST 0xFFFFFFFFu /* in place of a unit count: send the unit index */

struct wire_header {
    uint32_t magic;
    uint8_t ok, has_dwarf;
    uint64_t n_rows, n_files, n_seqs, n_scopes, n_subs, n_inlines, n_cu_names, n_unit_ranges, n_unit_hdrs, n_units,
        n_strings, blob_bytes;
    char dwarf_error[sizeof(((struct sym_loader *)0)->dwarf_error)];
};

/* How reading a reply went: whole, broken (an end or error first, or inconsistent), or too late. */
enum wire_result { WIRE_OK, WIRE_BROKEN, WIRE_TIMEOUT };

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

static bool send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t k = send(fd, p, len, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        len -= (size_t)k;
    }
    return true;
}

/* One reply: x's arrays with their strings as indexes (x's pointers are rewritten: x is spent). */
static bool reply(int fd, struct sym_stage *x, bool ok)
{
    struct wire_header h = {.magic = WIRE_MAGIC, .ok = ok, .has_dwarf = x->has_dwarf};
    memcpy(h.dwarf_error, x->dwarf_error, sizeof h.dwarf_error);
    struct string_ids s = {0};
    bool good = true;
    for (size_t i = 0; good && i < x->files.n; i++)
        good = to_id(&s, &x->files.v[i]);
    for (size_t i = 0; good && i < x->scopes.n; i++)
        good = to_id(&s, &x->scopes.v[i].name) && to_id(&s, &x->scopes.v[i].call_file);
    for (size_t i = 0; good && i < x->cu_names.n; i++)
        good = to_id(&s, &x->cu_names.v[i]);
    h.n_rows = x->rows.n;
    h.n_files = x->files.n;
    h.n_seqs = x->seqs.n;
    h.n_scopes = x->scopes.n;
    h.n_subs = x->subs.n;
    h.n_inlines = x->inlines.n;
    h.n_cu_names = x->cu_names.n;
    h.n_unit_ranges = x->unit_ranges.n;
    h.n_unit_hdrs = x->unit_hdrs.n;
    h.n_units = x->n_units;
    h.n_strings = s.n;
    h.blob_bytes = s.blob_len;
    uint32_t end = WIRE_END;
    good = good && send_all(fd, &h, sizeof h) && send_all(fd, x->rows.v, x->rows.n * sizeof *x->rows.v) &&
           send_all(fd, x->files.v, x->files.n * sizeof *x->files.v) &&
           send_all(fd, x->seqs.v, x->seqs.n * sizeof *x->seqs.v) &&
           send_all(fd, x->scopes.v, x->scopes.n * sizeof *x->scopes.v) &&
           send_all(fd, x->subs.v, x->subs.n * sizeof *x->subs.v) &&
           send_all(fd, x->inlines.v, x->inlines.n * sizeof *x->inlines.v) &&
           send_all(fd, x->cu_names.v, x->cu_names.n * sizeof *x->cu_names.v) &&
           send_all(fd, x->unit_ranges.v, x->unit_ranges.n * sizeof *x->unit_ranges.v) &&
           send_all(fd, x->unit_hdrs.v, x->unit_hdrs.n * sizeof *x->unit_hdrs.v) &&
           send_all(fd, s.blob, s.blob_len) && send_all(fd, &end, sizeof end);
    symt_ptrmap_free(&s.ids);
    free(s.blob);
    return good;
}

static bool read_all(int fd, void *dst, size_t len)
{
    char *p = dst;
    while (len) {
        ssize_t k = read(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += (size_t)k;
        len -= (size_t)k;
    }
    return true;
}

static _Noreturn void child(const char *path, int fd)
{
    /* a crash here is expected now and then: no terminal-restoring handler, no message on the
     * parent's terminal (glibc writes fatal errors to /dev/tty unless told otherwise) */
    static const int fatal[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    /* Ctrl-C at the terminal is for the parent, which may still need units to report */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setenv("LIBC_FATAL_STDERR_", "1", 1);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
        dup2(devnull, STDERR_FILENO);
        close(devnull);
    }
    /* the parent's ports, captures and terminals are not ours to hold open */
    for (int k = 3; k < 1024; k++)
        if (k != fd)
            close(k);
    struct sym_stage index = {0};
    struct strpool strings = {0};
    struct unit_ref *refs = malloc(MAX_REQUEST * sizeof *refs);
    if (!refs)
        _exit(3);
    struct ldw_reader *r = ldw_open(path, &index.has_dwarf, index.dwarf_error, sizeof index.dwarf_error);
    bool indexed = false;
    for (;;) {
        uint32_t n;
        if (!read_all(fd, &n, sizeof n))
            _exit(0); /* the parent closed the socket */
        if (n == INDEX_REQUEST) {
            bool ok = !r || (indexed = ldw_index(r, &index, &strings));
            if (!reply(fd, &index, ok))
                _exit(4);
            continue;
        }
        if (n == 0 || n > MAX_REQUEST || !read_all(fd, refs, n * sizeof *refs))
            _exit(0); /* nonsense: the parent will see the end */
        struct sym_stage stage = {0};
        if (r && !indexed) { /* the reader learns where the units are; the parent has its own index */
            struct sym_stage scratch = {0};
            indexed = ldw_index(r, &scratch, &strings);
            symt_stage_free(&scratch);
        }
        bool ok = r && indexed && ldw_load_units(r, &stage, &strings, refs, n);
        if (!r)
            memcpy(stage.dwarf_error, index.dwarf_error, sizeof stage.dwarf_error);
        if (!reply(fd, &stage, ok))
            _exit(4);
        symt_stage_free(&stage);
    }
}

/* ---- parent: read the reply, check it, rebuild the pointers ------------------------------- */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly len bytes before the deadline (WIRE_BROKEN: EOF or an error first). */
static enum wire_result read_exact(int fd, void *dst, size_t len, long long deadline)
{
    char *p = dst;
    while (len) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return WIRE_TIMEOUT;
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
            return WIRE_BROKEN;
        p += k;
        len -= (size_t)k;
    }
    return WIRE_OK;
}

/* Read n elements of `elem` bytes straight into a vector of the table. */
static enum wire_result read_vec(int fd, void **v, size_t *vn, size_t *vcap, uint64_t n, size_t elem,
                                 long long deadline)
{
    if (n > ((uint64_t)1 << 40) / elem)
        return WIRE_BROKEN; /* an absurd count: a broken reply */
    if (n && !symt_vec_grow(v, vcap, (size_t)n, elem))
        return WIRE_BROKEN;
    *vn = (size_t)n;
    return n ? read_exact(fd, *v, (size_t)n * elem, deadline) : WIRE_OK;
}

static bool from_id(const char **p, const char **strings, uint64_t n)
{
    uint64_t id = (uintptr_t)*p;
    if (id > n)
        return false;
    *p = id ? strings[id - 1] : NULL;
    return true;
}

/* Give the stage's arrays their strings back and check every index; false when the reply is
 * inconsistent. n_units: the units the index announced (the index reply sets it). */
static bool adopt(struct sym_table *t, struct sym_stage *x, const char *blob, const struct wire_header *h)
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
    size_t units = t->n_units ? t->n_units : h->n_units;
    for (size_t i = 0; ok && i < x->files.n; i++)
        ok = from_id(&x->files.v[i], strings, k);
    for (size_t i = 0; ok && i < x->rows.n; i++)
        ok = x->rows.v[i].file < x->files.n;
    for (size_t i = 0; ok && i < x->scopes.n; i++)
        ok = from_id(&x->scopes.v[i].name, strings, k) && from_id(&x->scopes.v[i].call_file, strings, k) &&
             x->scopes.v[i].parent >= -1 && x->scopes.v[i].parent < (int64_t)i && x->scopes.v[i].name &&
             x->scopes.v[i].cu < units;
    for (size_t i = 0; ok && i < x->cu_names.n; i++)
        ok = from_id(&x->cu_names.v[i], strings, k);
    for (size_t i = 0; ok && i < x->seqs.n; i++) {
        ok = (uint64_t)x->seqs.v[i].first + x->seqs.v[i].n <= x->rows.n && x->seqs.v[i].cu < units;
        x->seqs.v[i].in_order = false; /* (the merge checks the order of rows from elsewhere) */
    }
    for (size_t i = 0; ok && i < x->subs.n; i++)
        ok = x->subs.v[i].scope < x->scopes.n;
    for (size_t i = 0; ok && i < x->inlines.n; i++)
        ok = x->inlines.v[i].scope < x->scopes.n;
    for (size_t i = 0; ok && i < x->unit_ranges.n; i++)
        ok = x->unit_ranges.v[i].unit < units;
    free(strings);
    return ok;
}

/* A reply, read straight into the stage's arrays. */
static enum wire_result receive(struct sym_table *t, struct sym_stage *x, int fd, struct wire_header *h)
{
    long long deadline = now_ms() + LOAD_TIMEOUT_MS;
    enum wire_result r = read_exact(fd, h, sizeof *h, deadline);
    if (r == WIRE_OK && h->magic != WIRE_MAGIC)
        r = WIRE_BROKEN;
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->rows.v, &x->rows.n, &x->rows.cap, h->n_rows, sizeof *x->rows.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->files.v, &x->files.n, &x->files.cap, h->n_files, sizeof *x->files.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->seqs.v, &x->seqs.n, &x->seqs.cap, h->n_seqs, sizeof *x->seqs.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->scopes.v, &x->scopes.n, &x->scopes.cap, h->n_scopes, sizeof *x->scopes.v,
                     deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->subs.v, &x->subs.n, &x->subs.cap, h->n_subs, sizeof *x->subs.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->inlines.v, &x->inlines.n, &x->inlines.cap, h->n_inlines,
                     sizeof *x->inlines.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->cu_names.v, &x->cu_names.n, &x->cu_names.cap, h->n_cu_names,
                     sizeof *x->cu_names.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->unit_ranges.v, &x->unit_ranges.n, &x->unit_ranges.cap, h->n_unit_ranges,
                     sizeof *x->unit_ranges.v, deadline);
    if (r == WIRE_OK)
        r = read_vec(fd, (void **)&x->unit_hdrs.v, &x->unit_hdrs.n, &x->unit_hdrs.cap, h->n_unit_hdrs,
                     sizeof *x->unit_hdrs.v, deadline);
    char *blob = NULL;
    if (r == WIRE_OK && (h->blob_bytes >= ((uint64_t)1 << 32) || h->n_units >= ((uint64_t)1 << 24)))
        r = WIRE_BROKEN;
    if (r == WIRE_OK && !(blob = malloc(h->blob_bytes + 1)))
        r = WIRE_BROKEN;
    if (r == WIRE_OK)
        r = read_exact(fd, blob, h->blob_bytes, deadline);
    if (r == WIRE_OK) {
        uint32_t end = 0;
        if (read_exact(fd, &end, sizeof end, deadline) != WIRE_OK || end != WIRE_END || !adopt(t, x, blob, h))
            r = WIRE_BROKEN;
    }
    free(blob);
    h->dwarf_error[sizeof h->dwarf_error - 1] = '\0';
    return r;
}

/* The child failed: end it, say why, and load no more units through it. */
static void child_failed(struct sym_table *t, enum wire_result got, const char *doing)
{
    if (got == WIRE_TIMEOUT)
        kill(t->load->src.child, SIGKILL);
    close(t->load->src.sock);
    t->load->src.sock = -1;
    int status = 0;
    while (waitpid(t->load->src.child, &status, 0) < 0 && errno == EINTR) {
    }
    t->load->src.child = 0;
    t->load->src.dead = true;
    const char *what = t->load->units_loaded ? "units not yet read have functions from the ELF symbol table only"
                                       : "functions from the ELF symbol table only, no lines or inline chains";
    if (got == WIRE_TIMEOUT)
        snprintf(t->load->dwarf_error, sizeof t->load->dwarf_error,
                 "%s took over %d s (libdwarf stuck on damaged debug info?): %s", doing, LOAD_TIMEOUT_MS / 1000, what);
    else if (WIFSIGNALED(status))
        snprintf(t->load->dwarf_error, sizeof t->load->dwarf_error, "libdwarf crashed (%s) %s: %s",
                 strsignal(WTERMSIG(status)), doing, what);
    else
        snprintf(t->load->dwarf_error, sizeof t->load->dwarf_error, "the DWARF loader failed (exit status %d) %s: %s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, doing, what);
}

bool isolate_start(struct sym_table *t, const char *path, bool want_index) /* false: no child possible */
{
    /* no fork while the symbol table's thread runs: the child would inherit whatever lock that
     * thread held (a sanitizer's allocator lock hung a child in CI) */
    symt_symbols_wait(t);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    if (pid == 0) {
        close(sv[0]);
        child(path, sv[1]);
    }
    close(sv[1]);
    t->load->src.child = pid;
    t->load->src.sock = sv[0];
    if (!want_index)
        return true;
    struct sym_stage index = {0};
    struct wire_header h;
    uint32_t ask = INDEX_REQUEST;
    enum wire_result got =
        send_all(t->load->src.sock, &ask, sizeof ask) ? receive(t, &index, t->load->src.sock, &h) : WIRE_BROKEN;
    if (got == WIRE_OK && (h.n_cu_names != h.n_units || h.n_unit_hdrs != h.n_units))
        got = WIRE_BROKEN;
    if (got == WIRE_OK) {
        t->load->has_dwarf = h.has_dwarf;
        memcpy(t->load->dwarf_error, h.dwarf_error, sizeof t->load->dwarf_error);
        if (!h.ok && !t->load->dwarf_error[0])
            snprintf(t->load->dwarf_error, sizeof t->load->dwarf_error,
                     "out of memory reading the unit index: functions from the ELF symbol table only");
        index.n_units = h.n_units;
        symt_stage_take_index(t, &index);
        if (!t->load->has_dwarf || t->n_units == 0)
            isolate_end(t);
    } else {
        child_failed(t, got, "reading the unit index");
    }
    symt_stage_free(&index);
    return true;
}

bool isolate_fetch(struct sym_table *t, struct sym_stage *stage, const struct unit_ref *refs, size_t n)
{
    if (t->load->src.sock < 0 || n == 0 || n > MAX_REQUEST)
        return false;
    uint32_t count = (uint32_t)n;
    struct wire_header h;
    enum wire_result got =
        send_all(t->load->src.sock, &count, sizeof count) && send_all(t->load->src.sock, refs, n * sizeof *refs)
            ? receive(t, stage, t->load->src.sock, &h)
            : WIRE_BROKEN;
    if (got != WIRE_OK) {
        symt_stage_free(stage);
        char doing[48];
        snprintf(doing, sizeof doing, "reading unit %u", (unsigned)refs[0].id);
        child_failed(t, got, doing);
        return false;
    }
    memcpy(stage->dwarf_error, h.dwarf_error, sizeof stage->dwarf_error);
    return h.ok;
}

void isolate_end(struct sym_table *t)
{
    if (t->load->src.sock >= 0)
        close(t->load->src.sock); /* the child reads the end and exits */
    t->load->src.sock = -1;
    if (t->load->src.child > 0) {
        kill(t->load->src.child, SIGKILL); /* no need to wait for its memory to be torn down */
        while (waitpid(t->load->src.child, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    t->load->src.child = 0;
}
