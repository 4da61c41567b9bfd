/* cmprof-top --resolve: addr2line -a -f -i, from our own symbol tables. */
#include "resolve.h"

#include "exit.h"

#include "../base/grow.h"
#include "../decode/hex.h"
#include "../symbols/symbols.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool demangle; /* -C: names as addr2line -C prints them */

/* The warning about the ELF (missing symbols or DWARF), said once before the first answer: the
 * table knows it once its symbol table is read, which goes on beside the first lookups. */
static char first_warning[512];
static bool warned;

static void warn_once(struct sym_table *t, FILE *err)
{
    if (warned)
        return;
    warned = true;
    snprintf(first_warning, sizeof first_warning, "%s", sym_warning(t));
    if (*first_warning)
        fprintf(err, "cmprof-top: warning: %s\n", first_warning);
}

/* Text appended to a buffer: the output is formatted by hand, as printf's parsing cost more
 * than the lookups on large inputs. */
struct text {
    char *p;
    size_t len, cap;
    FILE *spill; /* when set, the text goes out there whenever it passes TEXT_SPILL (it stays in the cache) */
    bool cut; /* no memory to grow it once: text was left out */
};

enum { TEXT_SPILL = 128 << 10 };

/* The errno of the first write to the output that failed (0: none), kept where it failed (in the
 * writer thread too, whose errno is its own): said once at the end, with the output's name. */
static atomic_int write_errno;

static bool wrote(bool ok)
{
    int none = 0, e = errno ? errno : EIO;
    if (!ok)
        atomic_compare_exchange_strong(&write_errno, &none, e);
    return ok;
}

static void spill(struct text *b)
{
    if (b->spill && b->len) {
        errno = 0;
        wrote(fwrite(b->p, 1, b->len, b->spill) == b->len);
        b->len = 0;
    }
}

static bool room(struct text *b, size_t n)
{
    if (b->len + n > TEXT_SPILL)
        spill(b);
    if (!grow_array((void **)&b->p, &b->cap, b->len + n, 1, 1 << 16)) {
        b->cut = true;
        return false; /* out of memory: the text is cut, fwrite reports nothing worse */
    }
    return true;
}

/* room() without a call in the usual case: the buffer has the room and stays under TEXT_SPILL.
 * (100,000 answers of 2.7 frames each asked room() 370,000 times: 4 % of the run's instructions.) */
static inline bool room_now(struct text *b, size_t n)
{
    size_t end = b->len + n;
    return (end <= b->cap && end <= TEXT_SPILL) || room(b, n);
}

static void put(struct text *b, const char *s, size_t n)
{
    if (!room_now(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void put_str(struct text *b, const char *s)
{
    put(b, s, strlen(s));
}

/* Writes v in decimal at p; returns the end. Digits are counted first, then written from the
 * last, two at a time. */
static inline char *write_uint(char *p, uint32_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : 5; /* (line numbers: a few digits) */
    for (uint32_t x = v / 100000; x; x /= 10)
        n++;
    char *q = p + n;
    while (v >= 100) {
        q -= 2;
        memcpy(q, pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    return p + n;
}

/* "0x%08x\n": each byte's two digits from a table (a shift, a load and a store each). */
static const char hex_pairs[256][2] = {
#define HEX_ROW(h) {h, '0'}, {h, '1'}, {h, '2'}, {h, '3'}, {h, '4'}, {h, '5'}, {h, '6'}, {h, '7'}, {h, '8'}, {h, '9'}, \
                   {h, 'a'}, {h, 'b'}, {h, 'c'}, {h, 'd'}, {h, 'e'}, {h, 'f'}
    HEX_ROW('0'), HEX_ROW('1'), HEX_ROW('2'), HEX_ROW('3'), HEX_ROW('4'), HEX_ROW('5'), HEX_ROW('6'), HEX_ROW('7'),
    HEX_ROW('8'), HEX_ROW('9'), HEX_ROW('a'), HEX_ROW('b'), HEX_ROW('c'), HEX_ROW('d'), HEX_ROW('e'), HEX_ROW('f'),
#undef HEX_ROW
};

/* The address line at p (11 bytes); returns its end. */
static inline char *addr_line(char *p, uint32_t addr)
{
    memcpy(p, "0x", 2);
    memcpy(p + 2, hex_pairs[addr >> 24], 2);
    memcpy(p + 4, hex_pairs[addr >> 16 & 0xFF], 2);
    memcpy(p + 6, hex_pairs[addr >> 8 & 0xFF], 2);
    memcpy(p + 8, hex_pairs[addr & 0xFF], 2);
    p[10] = '\n';
    return p + 11;
}

static void print_addr(struct text *b, uint32_t addr)
{
    if (room_now(b, 11))
        b->len = (size_t)(addr_line(b->p + b->len, addr) - b->p);
}

/* n bytes from s to p, for the names of a frame (a few to a hundred bytes): fixed-size moves that
 * overlap, inline, where memcpy was a call for each name (100,000 addresses in 6 of the bench ELF's
 * 120 units: 536,000 calls; 1.35M fewer instructions). Reads no byte outside [s, s + n). */
static inline void copy_name(char *p, const char *s, size_t n)
{
    if (n > 64) {
        memcpy(p, s, n);
    } else if (n > 32) { /* (a path, mostly) */
        memcpy(p, s, 16);
        memcpy(p + 16, s + 16, 16);
        memcpy(p + n - 32, s + n - 32, 16);
        memcpy(p + n - 16, s + n - 16, 16);
    } else if (n >= 16) {
        memcpy(p, s, 16);
        memcpy(p + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(p, s, 8);
        memcpy(p + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(p, s, 4);
        memcpy(p + n - 4, s + n - 4, 4);
    } else if (n) {
        p[0] = s[0];
        p[n / 2] = s[n / 2];
        p[n - 1] = s[n - 1];
    }
}

/* One frame at p, "name\nfile:line[ (discriminator N)]\n" (addr2line repeats the discriminator on
 * every frame); returns its end. The room was checked: the two names and `around` more. */
static inline char *frame_text(char *p, const char *fn, size_t fn_len, const char *file, size_t file_len, uint32_t line,
                               uint32_t discriminator)
{
    copy_name(p, fn, fn_len);
    p += fn_len;
    *p++ = '\n';
    copy_name(p, file, file_len);
    p += file_len;
    *p++ = ':';
    if (line)
        p = write_uint(p, line);
    else
        *p++ = '?';
    if (discriminator) {
        memcpy(p, " (discriminator ", 16);
        p = write_uint(p + 16, discriminator);
        *p++ = ')';
    }
    *p++ = '\n';
    return p;
}

/* The frames of an answer, under its address line: each copied in a few pieces, with no call per
 * separator or digit. */
static void print_frames(struct text *b, struct sym_table *t, const struct sym_location *loc)
{
    if (!loc || !loc->known) { /* (NULL: no memory for the answer) */
        put_str(b, "??\n??:0\n");
        return;
    }
    bool as_kept = !demangle;
    uint32_t discriminator = loc->discriminator, n = loc->n_frames;
    /* name \n file : line [ (discriminator N)] \n */
    size_t around = 3 + 10 + (discriminator ? 16 + 10 + 1 : 0);
    for (uint32_t i = 0; i < n; i++) {
        const struct sym_frame *f = sym_frame_at(loc, i);
        const char *fn = f->function;
        size_t fn_len = f->function_len;
        if (!as_kept || !fn_len) {
            fn = as_kept ? fn : sym_demangle(t, fn);
            fn_len = strlen(fn);
        }
        size_t file_n = f->file_len ? f->file_len : strlen(f->file);
        if (!room_now(b, fn_len + file_n + around))
            return;
        b->len = (size_t)(frame_text(b->p + b->len, fn, fn_len, f->file, file_n, f->line, discriminator) - b->p);
    }
}

/* An answer whole, its address line and its frames, in one pass: each frame checked against the
 * room the buffer has (its end, or TEXT_SPILL) as it is written, where a first pass summed the
 * frames' lengths; the usual case (names as kept, their lengths known). Else, or when the room
 * runs out, the answer is written again in pieces (print_frames asks for room frame by frame). */
static void print_answer(struct text *b, struct sym_table *t, uint32_t addr, const struct sym_location *loc)
{
    uint32_t n = loc && loc->known && !demangle ? loc->n_frames : 0, discriminator = n ? loc->discriminator : 0;
    size_t around = 3 + 10 + (discriminator ? 16 + 10 + 1 : 0);
    size_t limit = b->cap < TEXT_SPILL ? b->cap : TEXT_SPILL;
    if (n && b->len + 11 <= limit) {
        char *p = addr_line(b->p + b->len, addr), *end = b->p + limit;
        uint32_t i = 0;
        for (; i < n; i++) {
            const struct sym_frame *f = sym_frame_at(loc, i);
            size_t fn_len = f->function_len, file_len = f->file_len;
            if (!fn_len || !file_len || (size_t)(end - p) < fn_len + file_len + around)
                break;
            p = frame_text(p, f->function, fn_len, f->file, file_len, f->line, discriminator);
        }
        if (i == n) {
            b->len = (size_t)(p - b->p);
            return;
        }
    }
    print_addr(b, addr); /* (what was written above is written over) */
    print_frames(b, t, loc);
}

/* false once a write to out failed (a full disk): reading on would only be lost */
static bool flush_text(struct text *b, FILE *out)
{
    errno = 0;
    if (b->len && !wrote(fwrite(b->p, 1, b->len, out) == b->len))
        errno = 0;
    b->len = 0;
    return wrote(fflush(out) == 0 && !ferror(out));
}

/* A failed write said in one line naming the output (its file, when it is one) and the error; what
 * was left unwritten is dropped, so that the exit's own flush has nothing more to say. */
static int say_write_failed(FILE *out, FILE *err, int status)
{
    int e = atomic_load(&write_errno);
    if (!e)
        return status;
    char link[64], path[PATH_MAX] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(out));
    ssize_t len = readlink(link, path, sizeof path - 1);
    path[len > 0 && path[0] == '/' ? len : 0] = '\0';
    fprintf(err, "cmprof-top: writing --resolve's answers to %s%s%s%s: %s\n",
            out == stdout ? "standard output" : "the output", *path ? " (" : "", path, *path ? ")" : "", strerror(e));
    __fpurge(out);
    clearerr(out);
    return EXIT_ERROR;
}

/* A character's hex value, or -1. */
static const signed char hex_value[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
}; /* (stored plus one, so that every other entry is 0) */

static int hex_digit(char c)
{
    return hex_value[(unsigned char)c] - 1;
}

static int parse_addr(const char *s, uint32_t *out)
{
    /* the usual shape, [0x]hex digits, by hand; anything else as strtoull reads it */
    const char *p = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? s + 2 : s;
    uint64_t fast = 0;
    int d = hex_digit(*p);
    for (; d >= 0 && fast <= 0xFFFFFFFFull; d = hex_digit(*++p))
        fast = fast << 4 | (uint64_t)d;
    if (*p == '\0' && p > s && hex_digit(p[-1]) >= 0 && fast <= 0xFFFFFFFFull) {
        *out = (uint32_t)fast;
        return 0;
    }
    char *end;
    unsigned long long v = strtoull(s, &end, 16); /* addr2line reads hex, with or without 0x */
    if (end == s || *end != '\0' || v > 0xFFFFFFFFull)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* The lists answer_all fills per chunk, kept from chunk to chunk. */
struct answer_lists {
    size_t cap, n_good;
    uint32_t *addrs;
    bool *ok;
    const struct sym_location **locs;
};

static bool lists_for(struct answer_lists *l, size_t n)
{
    if (n + 1 > l->cap) {
        free(l->addrs);
        free(l->ok);
        free(l->locs);
        l->addrs = malloc((n + 1) * sizeof *l->addrs);
        l->ok = malloc((n + 1) * sizeof *l->ok);
        l->locs = malloc((n + 1) * sizeof *l->locs);
        l->cap = l->addrs && l->ok && l->locs ? n + 1 : 0;
    }
    return l->cap != 0;
}

static void lists_free(struct answer_lists *l)
{
    free(l->addrs);
    free(l->ok);
    free(l->locs);
}

#define NOT_PARSED UINT64_MAX

/* A token that is no address, said on err after the answers before it (when out is a stream). */
static void not_an_address(struct text *out, FILE *err, const char *tok)
{
    if (out->spill) {
        spill(out);
        fflush(out->spill);
    }
    fprintf(err, "cmprof-top: '%s' is not an address\n", tok);
}

/* The n_good addresses of the lists looked up together. */
static void lookup_lists(struct sym_table *t, struct answer_lists *l, size_t n_good)
{
    if (n_good)
        sym_lookup_many(t, l->addrs, n_good, l->locs);
    l->n_good = n_good;
}

/* Look up address tokens (the arguments, or the rest of a chunk of stdin) together, each parsed
 * once. Returns the number of good addresses, or -1 when there is no memory for the lists. */
static long answer_lookup(struct sym_table *t, char *const *toks, size_t n, struct answer_lists *l)
{
    if (!lists_for(l, n))
        return -1;
    size_t n_good = 0;
    for (size_t i = 0; i < n; i++)
        if ((l->ok[i] = parse_addr(toks[i], &l->addrs[n_good]) == 0))
            n_good++;
    lookup_lists(t, l, n_good);
    return (long)n_good;
}

/* Write the answers answer_lookup found, in the order asked: each answer's address line and
 * frames, formatted straight into out (within a chunk nearly every address has its own answer,
 * so formatting once per answer and copying would copy everything once more). Reads the table's
 * answers and names, never changes the table (except through sym_demangle). Returns 1 when a
 * token is no address. */
enum { ANSWER_AHEAD = 12 };

/* Answer k (its address line and frames). */
static void write_answer(struct sym_table *t, const struct answer_lists *l, size_t k, struct text *out)
{
    if (k + ANSWER_AHEAD < l->n_good) { /* answers are all over the table: fetched ahead */
        __builtin_prefetch(l->locs[k + ANSWER_AHEAD]);
        __builtin_prefetch((const char *)l->locs[k + ANSWER_AHEAD] + sizeof(struct sym_location) - 1);
    }
    /* its callers' frames, half as far ahead: its answer is in by then */
    if (k + ANSWER_AHEAD / 2 < l->n_good && l->locs[k + ANSWER_AHEAD / 2]) {
        const struct sym_frame *o = l->locs[k + ANSWER_AHEAD / 2]->outer;
        if (o) {
            __builtin_prefetch(o);
            __builtin_prefetch((const char *)o + 63);
        }
    }
    print_answer(out, t, l->addrs[k], l->locs[k]); /* (an odd address prints as asked) */
}

/* Tokens [from, n) of a chunk, whose first answer is answer k: each answer, or the complaint about
 * a token that is no address. Returns 1 when a token is no address. */
static int answer_write(struct sym_table *t, char *const *toks, size_t from, size_t k, size_t n,
                        struct answer_lists *l, struct text *out, FILE *err)
{
    int status = 0;
    for (size_t i = from; i < n; i++) {
        if (!l->ok[i]) {
            not_an_address(out, err, toks[i]);
            status = 1;
            continue;
        }
        write_answer(t, l, k++, out);
    }
    return status;
}

/* Both halves at once; one by one when there is no memory for the lists. */
static int answer_all(struct sym_table *t, char *const *toks, size_t n, struct text *out, FILE *err,
                      struct answer_lists *l)
{
    long n_good = answer_lookup(t, toks, n, l);
    if (n)
        warn_once(t, err);
    if (n_good >= 0)
        return answer_write(t, toks, 0, 0, n, l, out, err);
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t addr;
        if (parse_addr(toks[i], &addr) == 0) {
            print_addr(out, addr);
            print_frames(out, t, sym_lookup(t, addr));
        } else {
            not_an_address(out, err, toks[i]);
            status = 1;
        }
    }
    return status;
}

#define LINE_MAX_CHARS 127 /* a longer line is cut here, as addr2line reads an address per line */

/* A line of nothing but [0x]hex digits (the usual shape), read as it is found: its value and
 * the end of its digits, where '\n' or '\r' must follow; else NOT_PARSED and the line takes
 * the general path (line_token, then parse_addr), which gives the same value for such a line. */
static uint64_t plain_line(const char *s, size_t len, size_t *end)
{
    size_t j = len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0, first = j;
    if (len - j > 8) { /* up to eight digits and the line's end, read as one word */
        uint64_t w = hex_chars8(s + j);
        uint64_t digits = hex_digits_mask(w);
        size_t n = digits == SWAR_HIGHS ? 8 : (size_t)__builtin_ctzll(~digits & SWAR_HIGHS) / 8;
        if (n && (s[j + n] == '\n' || s[j + n] == '\r')) {
            *end = j + n; /* the digits moved to the word's end, behind leading zeros */
            return hex_value8(n == 8 ? w : w << 8 * (8 - n) | (SWAR_ONES * '0') >> 8 * n);
        }
    }
    uint64_t v = 0;
    int d;
    while (j < len && (d = hex_digit(s[j])) >= 0 && v <= 0xFFFFFFFFull) {
        v = v << 4 | (uint64_t)d;
        j++;
    }
    if (j == first || j == len || (s[j] != '\n' && s[j] != '\r') || v > 0xFFFFFFFFull || j > LINE_MAX_CHARS)
        return NOT_PARSED;
    *end = j;
    return v;
}

/* A stdin line as a token: cut at LINE_MAX_CHARS, then at its first blank; NULL when empty. */
static char *line_token(char *line)
{
    if (strlen(line) > LINE_MAX_CHARS)
        line[LINE_MAX_CHARS] = '\0';
    line[strcspn(line, " \t")] = '\0';
    return line[0] ? line : NULL;
}

/* Chunks of 128 KB (about 14,000 addresses of the usual shape): each chunk's new addresses are
 * sorted and swept in one pass, and the sparser a chunk's new ones, the longer each search; 64 KB
 * chunks cost 100,000 addresses in 6 of the bench ELF's 120 units 6 % more CPU (10.33 against 9.76
 * ms, median of 40 interleaved runs; 3.1M more instructions, mostly searches), 100,000 random ones
 * 3 % (97.8 against 94.7 ms); 192 KB and 256 KB gave no more, with 64 and 194 more page faults. */
enum { CHUNK = 131072, CHUNK_LINES = CHUNK / 2 + 1 };

/* A chunk of stdin on its way: its lines, then their answers. */
struct batch {
    char chunk[CHUNK];
    char joined[LINE_MAX_CHARS + 1]; /* its first line, when that began in the chunk before */
    char *toks[CHUNK_LINES]; /* (a line read straight into the lists keeps none: see split_chunk) */
    size_t n_toks;
    struct answer_lists lists;
    size_t split;     /* tokens [0, split) were formatted by the reading thread, into head: */
    size_t split_answer; /* answers [0, split_answer) */
    struct text head;
};

/* The got bytes of a chunk (b->chunk) as tokens, the first line's start in carry (*carried bytes,
 * from the chunk before), the last line's start left there for the next. With lists (room for a
 * whole chunk), each token's address goes straight into them as it is read (*n_good of them) and
 * a line of the usual shape keeps no token: only a token that is no address is ever printed (where
 * each line's token and value were written, then copied into the lists: 0.5M instructions of
 * 100,000 addresses). Returns the number of tokens. */
static size_t split_chunk(struct batch *b, size_t got, struct answer_lists *lists, size_t *n_good, char *carry,
                          size_t *carried)
{
    char *chunk = b->chunk;
    size_t n_toks = 0, start = 0;
    uint64_t v;
    for (size_t k = 0; k < got; k++) {
        size_t end;
        if (k == start && !*carried && (v = plain_line(chunk + k, got - k, &end)) != NOT_PARSED) {
            k += end; /* the usual line, parsed on the way: the scan resumes at its end */
            if (lists) {
                lists->ok[n_toks++] = true;
                lists->addrs[(*n_good)++] = (uint32_t)v;
            } else {
                chunk[k] = '\0';
                b->toks[n_toks++] = chunk + start;
            }
            start = k + 1;
            continue;
        }
        if (chunk[k] != '\n' && chunk[k] != '\r')
            continue;
        chunk[k] = '\0';
        char *line = chunk + start, *tok;
        if (*carried) { /* the line's start came in the chunk before; a NUL there ends it, as in one read */
            snprintf(b->joined, sizeof b->joined, "%s%s", carry, strlen(carry) < *carried ? "" : line);
            line = b->joined;
            *carried = 0;
        }
        start = k + 1;
        if ((tok = line_token(line)) == NULL)
            continue;
        if (lists && (lists->ok[n_toks] = parse_addr(tok, &lists->addrs[*n_good]) == 0))
            (*n_good)++;
        b->toks[n_toks++] = tok;
    }
    size_t take = got - start; /* what is left is the start of a line: keep its first characters */
    if (take > LINE_MAX_CHARS - *carried)
        take = LINE_MAX_CHARS - *carried;
    memcpy(carry + *carried, chunk + start, take);
    *carried += take;
    carry[*carried] = '\0';
    return n_toks;
}

/* A batch with its lists and texts empty. Its buffers are left as malloc gives them: zeroed (calloc),
 * their 640 KB were each written once more, fresh pages where nothing else would touch them (a
 * chunk's tokens are mostly never written: split_chunk). */
static struct batch *new_batch(void)
{
    struct batch *b = malloc(sizeof *b);
    if (b)
        memset(&b->n_toks, 0, sizeof *b - offsetof(struct batch, n_toks));
    return b;
}

/* stdin is answered by two threads: this one reads, parses and looks up a chunk while the writer
 * formats and writes the one before. Two batches go back and forth between them, in order
 * (without a writer thread, b[1] is b[0]). */
struct stream {
    struct sym_table *t;
    FILE *out, *err;
    bool threaded; /* a writer thread is wanted */
    bool started;  /* it runs */
    pthread_t writer;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct batch *b[2];
    atomic_bool full[2]; /* handed to the writer, not written yet */
    atomic_bool done; /* no more batches */
    atomic_bool failed; /* a write failed: read no more */
    struct text text;
    int status;   /* the writer's */
};

static void write_batch(struct stream *s, struct batch *b)
{
    if (b->split) {
        spill(&s->text);
        fwrite(b->head.p, 1, b->head.len, s->out);
    }
    s->status |= answer_write(s->t, b->toks, b->split, b->split_answer, b->n_toks, &b->lists, &s->text, s->err);
    if (!flush_text(&s->text, s->out))
        atomic_store(&s->failed, true);
}

/* While the writer is still busy with the batch before, the reading thread formats this batch's
 * first answers itself, a few at a time, and stops once the writer is free: the writer then
 * starts where it stopped. Once most addresses were answered before, a chunk's lookups take less
 * time than writing its answers, so the reading thread would otherwise wait for the writer; a share
 * of the batch's end, set from the batches before, keeps both busy. */
enum { HEAD_STEP = 256 };

static void format_head(struct stream *s, struct batch *b, int i)
{
    b->split = b->split_answer = 0;
    b->head.len = 0;
    if (!s->started)
        return;
    size_t tok = 0, k = 0;
    /* (up to a token that is no address: the writer says so on stderr in its place) */
    for (; tok < b->n_toks && b->lists.ok[tok]; tok++) {
        if (tok % HEAD_STEP == 0 && !atomic_load(&s->full[i ^ 1]))
            break;
        write_answer(s->t, &b->lists, k++, &b->head);
    }
    if (!b->head.cut) {
        b->split = tok;
        b->split_answer = k;
    }
}

/* The writer waits for its next batch awake for a while, giving way to any other thread that
 * would run, before it sleeps: a virtual CPU that idles may be taken back by its host, and waking
 * the writer can then take longer than the lookups of a whole batch. */
enum { SPIN_NS = 3000000 };

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_until_full(struct stream *s, int i)
{
    long long until = now_ns() + SPIN_NS;
    while (!atomic_load(&s->full[i]) && !atomic_load(&s->done) && now_ns() < until)
        sched_yield();
}

static void *writer_main(void *arg)
{
    struct stream *s = arg;
    for (int i = 0;; i ^= 1) {
        spin_until_full(s, i);
        pthread_mutex_lock(&s->lock);
        while (!s->full[i] && !s->done)
            pthread_cond_wait(&s->changed, &s->lock);
        bool have = s->full[i];
        pthread_mutex_unlock(&s->lock);
        if (!have)
            return NULL; /* done, and every batch before was written */
        write_batch(s, s->b[i]);
        pthread_mutex_lock(&s->lock);
        s->full[i] = false;
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
    }
}

/* Wait until batch i is free (written), or every batch is when i < 0. */
static void wait_written(struct stream *s, int i)
{
    if (!s->started)
        return;
    pthread_mutex_lock(&s->lock);
    while (i >= 0 ? s->full[i] : s->full[0] || s->full[1])
        pthread_cond_wait(&s->changed, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

/* The writer, on any core but this thread's: a thread that sleeps on a condition may be woken on
 * its waker's core (the scheduler places it near the data), and then the two take turns on one
 * core while the other idles. */
static bool start_writer(struct stream *s)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return false;
    cpu_set_t cpus;
    int here = sched_getcpu();
    if (here >= 0 && sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_ISSET(here, &cpus) &&
        CPU_COUNT(&cpus) > 1) {
        CPU_CLR(here, &cpus);
        pthread_attr_setaffinity_np(&attr, sizeof cpus, &cpus);
    }
    bool started = pthread_create(&s->writer, &attr, writer_main, s) == 0;
    pthread_attr_destroy(&attr);
    return started;
}

/* Hand batch i to the writer; the writer starts with the first batch. */
static void submit(struct stream *s, int i)
{
    if (s->threaded && !s->started)
        s->started = s->threaded = start_writer(s);
    if (!s->started) {
        write_batch(s, s->b[i]);
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->full[i] = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

/* Whether a writer thread pays: only with a core to spare. On a busy machine (more runnable
 * processes than cores) the two threads wait for each other's turn on a core and the writer's wait
 * burns CPU: one thread was 1.3x faster in wall time and 1.4x in CPU on addresses in a few units,
 * 1.15x on random ones, in runs interleaved with addr2line's (docs/performance.md). */
static bool core_to_spare(void)
{
    const char *forced = getenv("CMPROF_RESOLVE_WRITER"); /* 1 or 0: the tests take both paths on any machine */
    if (forced && *forced)
        return strcmp(forced, "0") != 0;
    double load;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 1 && getloadavg(&load, 1) == 1 && load + 1.0 <= (double)cores;
}

/* Like addr2line: addresses on stdin, one per line. Whole chunks are read and answered before
 * one flush, so a pipe is fast and an interactive user still sees each answer. */
static int answer_stream(struct sym_table *t, FILE *in, FILE *out, FILE *err)
{
    struct stream s = {.t = t, .out = out, .err = err, .text = {.spill = out}};
    s.threaded = !demangle && core_to_spare(); /* (sym_demangle adds to the table's names: one thread) */
    /* one batch without a writer thread: the second one's pages (300 KB a chunk) were fresh ones */
    s.b[0] = new_batch();
    s.b[1] = s.threaded ? new_batch() : s.b[0];
    if (!s.b[0] || !s.b[1]) {
        free(s.b[0]);
        if (s.threaded)
            free(s.b[1]);
        fprintf(err, "cmprof-top: out of memory for the input\n");
        return EXIT_ERROR;
    }
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.changed, NULL);
    int status = 0;
    char carry[LINE_MAX_CHARS + 1]; /* a line begun in an earlier chunk */
    size_t carried = 0;
    int fd = fileno(in);
    /* with a writer thread, the first chunks small: the writer starts early, then they grow; without
     * one, whole chunks from the first: the first batch's sorted sweep answers the halfwords between
     * its close addresses, where a small one left them to later batches, each searching again */
    size_t want = s.threaded ? CHUNK / 8 : CHUNK;
    for (int i = 0;; i ^= 1) {
        wait_written(&s, i);
        if (atomic_load(&s.failed))
            break; /* (main says so) */
        struct batch *b = s.b[i];
        char *chunk = b->chunk;
        ssize_t was_read = read(fd, chunk, want);
        want = want * 2 < CHUNK ? want * 2 : CHUNK;
        if (was_read <= 0)
            break;
        size_t n_good = 0;
        bool to_lists = lists_for(&b->lists, CHUNK_LINES);
        size_t n_toks = split_chunk(b, (size_t)was_read, to_lists ? &b->lists : NULL, &n_good, carry, &carried);
        b->n_toks = n_toks;
        long good = (long)n_good;
        if (to_lists)
            lookup_lists(t, &b->lists, n_good);
        else
            good = answer_lookup(t, b->toks, n_toks, &b->lists);
        warn_once(t, err);
        if (good < 0) { /* no memory for the lists: the rest of this chunk one by one, here */
            wait_written(&s, -1);
            status |= answer_all(t, b->toks, n_toks, &s.text, err, &b->lists);
            if (!flush_text(&s.text, out))
                atomic_store(&s.failed, true);
            i ^= 1; /* (the same batch again next time) */
            continue;
        }
        format_head(&s, b, i);
        submit(&s, i);
    }
    if (s.started) {
        pthread_mutex_lock(&s.lock);
        s.done = true;
        pthread_cond_broadcast(&s.changed);
        pthread_mutex_unlock(&s.lock);
        pthread_join(s.writer, NULL);
    }
    char *tok = carried && !atomic_load(&s.failed) ? line_token(carry) : NULL; /* (a line cut by the stop: none) */
    if (tok)
        status |= answer_all(t, &tok, 1, &s.text, err, &s.b[0]->lists);
    flush_text(&s.text, out);
    for (int i = 0; i < (s.b[1] != s.b[0] ? 2 : 1); i++) {
        lists_free(&s.b[i]->lists);
        free(s.b[i]->head.p);
        free(s.b[i]);
    }
    free(s.text.p);
    pthread_mutex_destroy(&s.lock);
    pthread_cond_destroy(&s.changed);
    return status | s.status;
}

/* The ELF's DWARF is mapped, not copied: a file cut short while the answers go on (rebuilt in place
 * by `cp`, an editor) faults the next read of it. Said in one line, never a crash. */
static char cut_short_line[600];

static void on_cut_short(int sig)
{
    (void)sig;
    ssize_t put = write(STDERR_FILENO, cut_short_line, strlen(cut_short_line));
    (void)put;
    _exit(EXIT_ERROR);
}

static void say_a_cut_short_elf(const char *elf)
{
    snprintf(cut_short_line, sizeof cut_short_line,
             "cmprof-top: %s was cut short while it was read (rewritten in place?); no answer after this\n", elf);
    struct sigaction sa = {0};
    sa.sa_handler = on_cut_short;
    sigaction(SIGBUS, &sa, NULL);
}

int resolve_main(const char *elf, bool demangle_names, char **addrs, int n, FILE *in, FILE *out, FILE *err)
{
    struct text text = {0};
    demangle = demangle_names;
    char msg[512];
    /* blocks up to 1 MB from the heap, and the heap never given back: a block freed (the symbol
     * table's sort buffer, a vector that grew) serves later ones from pages already in, where each
     * was a mapping of its own, unmapped at its free and faulted in afresh after (100,000 addresses
     * in 6 of the bench ELF's 120 units: 1,494 -> 1,392 page faults; random ones 15,986 -> 14,421;
     * the open alone 449 -> 386). The process ends with its answers. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    sym_set_symbol_names(0); /* addr2line names DWARF's functions: the ELF's names only if an answer needs them */
    say_a_cut_short_elf(elf);
    sym_set_mapped_reads(1); /* (the process ends with the answers) */
    struct sym_table *t = sym_open(elf, msg, sizeof msg);
    sym_set_symbol_names(1);
    sym_set_mapped_reads(0);
    if (!t) {
        fprintf(err, "cmprof-top: %s\n", msg);
        return EXIT_ERROR;
    }
    warned = false;
    struct answer_lists lists = {0};
    int status = answer_all(t, addrs, (size_t)n, &text, err, &lists);
    flush_text(&text, out);
    if (n == 0 && in)
        status |= answer_stream(t, in, out, err);
    warn_once(t, err); /* (no address at all) */
    if (*sym_warning(t) && strcmp(sym_warning(t), first_warning) != 0) /* found while reading a unit */
        fprintf(err, "cmprof-top: warning: %s\n", sym_warning(t));
    status = say_write_failed(out, err, status);
    free(text.p);
    lists_free(&lists);
    /* the process ends now: its pages go back whole, not block by block (kept reachable, for leak checkers) */
    static struct sym_table *volatile kept_until_exit; /* (volatile: a store never read is kept) */
    kept_until_exit = t;
    sym_end(kept_until_exit);
    return status;
}
