/* Format detection. Each format reads the window its own way and tallies what it reads cleanly
 * (text: lines of printable bytes; ITM: packets; orbflow: frames whose COBS codes and sums check
 * out; TPIU: frames at their best alignment whose IDs are valid and whose ITM is clean) and its
 * faults. Leading noise is a start much less readable than what follows it; the format that reads
 * most of the rest wins (detect_judge says how). */
#include "detect.h"

#include "orbflow.h"
#include "tpiu.h"

#include <stdbool.h>
#include <string.h>

#define NOISE_WEIGHT 8 /* a byte no unit reads costs this many clean ones: noise is what is cut off */
#define WINNING_SHARE 500u /* per mille of the window a format must read cleanly to beat ITM */
#define TPIU_MARGIN 125u   /* per mille: how much better than raw ITM frames without a full sync must read */

/* What one format read: its faults (where each ends) and its clean units (lines, packets, frames),
 * in order. */
struct tally {
    bool after_zeros; /* buf follows a run of zeros, cut to one */
    size_t n_faults, n_units;
    uint16_t fault_end[DETECT_WINDOW];
    uint16_t unit_at[DETECT_WINDOW], unit_len[DETECT_WINDOW];
};

static void fault(struct tally *t, size_t end)
{
    if (t->n_faults < DETECT_WINDOW)
        t->fault_end[t->n_faults++] = (uint16_t)end;
}

static void clean(struct tally *t, size_t at, size_t n)
{
    if (t->n_units < DETECT_WINDOW) {
        t->unit_at[t->n_units] = (uint16_t)at;
        t->unit_len[t->n_units++] = (uint16_t)n;
    }
}

/* How one format reads the window. */
struct reading {
    unsigned balance; /* per mille of the window: clean bytes less NOISE_WEIGHT per unread one, past the
                         noise (0 when negative) */
    unsigned covered; /* per mille of the window read cleanly past the noise */
    size_t skip;      /* where the first clean unit after the noise begins (0: no noise) */
};

/* Where the stream begins: at the start, or just after a fault that ends noise, wherever the clean
 * bytes that follow outweigh the bytes no unit reads (NOISE_WEIGHT each) most. */
static void clean_share(const struct tally *t, size_t len, struct reading *r)
{
    size_t total = 0, before = 0, u = 0, best_u = 0, best_from = 0;
    for (size_t k = 0; k < t->n_units; k++)
        total += t->unit_len[k];
    size_t covered = total;
    int64_t best = (int64_t)total - NOISE_WEIGHT * (int64_t)(len - total);
    for (size_t i = 0; i < t->n_faults; i++) {
        size_t from = t->fault_end[i];
        while (u < t->n_units && t->unit_at[u] < from)
            before += t->unit_len[u++];
        size_t unread_before = from - before, unread_after = len - from - (total - before);
        int64_t here = (int64_t)(total - before) - NOISE_WEIGHT * (int64_t)unread_after;
        /* noise: at least a tenth of it unread (raw ITM reads 86 % of random bytes), and far more
         * than after it (a stream with bad frames all along has no noise before it, however many) */
        bool noise = unread_before * 10 >= from && unread_before * (len - from) >= 4 * unread_after * from;
        if (noise && here > best) {
            best = here;
            best_from = from;
            best_u = u;
            covered = total - before;
        }
    }
    r->skip = best_from && best_u < t->n_units ? t->unit_at[best_u] : 0;
    r->balance = len && best > 0 ? (unsigned)((uint64_t)best * 1000u / len) : 0;
    r->covered = len ? (unsigned)(covered * 1000u / len) : 0;
}

static bool text_byte(uint8_t b)
{
    return (b >= 0x20 && b < 0x7F) || b == '\r' || b == '\t';
}

/* A line is clean when at least three quarters of its bytes are printable ASCII (a line with a
 * stray NUL or escape is still a line; random bytes are not: 37 % of them are); the last one too,
 * unended: a boot banner longer than the window. A line that is not is one fault. */
static void read_text(const uint8_t *buf, size_t len, struct tally *t)
{
    size_t start = 0, good = 0;
    for (size_t i = 0; i < len; i++) {
        good += text_byte(buf[i]);
        if (buf[i] != '\n' && i + 1 < len)
            continue;
        size_t n = i + 1 - start, body = n - (buf[i] == '\n');
        if (good * 4 >= body * 3)
            clean(t, start, n);
        else
            fault(t, i + 1);
        start = i + 1;
        good = 0;
    }
}

static void read_itm(const uint8_t *buf, size_t len, struct tally *t)
{
    struct itm_lint lint = {0};
    size_t start = 0;
    for (int z = 0; z < 4 && t->after_zeros; z++) /* the run of zeros cut to one may be a sync's */
        itm_lint(&lint, 0);
    for (size_t i = 0; i < len; i++) {
        enum itm_lint_result r = itm_lint(&lint, buf[i]);
        if (r == ITM_LINT_MORE)
            continue;
        if (r == ITM_LINT_PACKET)
            clean(t, start, i + 1 - start);
        else
            fault(t, i + 1);
        start = i + 1;
    }
}

static void orbflow_frame(void *ctx, size_t at, size_t n, bool good)
{
    struct tally *t = ctx;
    if (good)
        clean(t, at, n - 1); /* from its first delimiter: a decoder started there reads it */
    else
        fault(t, at + n - 1); /* up to its closing delimiter, where the next frame begins */
}

static void read_orbflow(const uint8_t *buf, size_t len, struct tally *t)
{
    orbflow_walk(buf, len, orbflow_frame, t);
}

struct tpiu_walked {
    struct tally *t;
    size_t from; /* where in the window the walk began */
};

static void tpiu_frame(void *ctx, size_t start, uint32_t faults)
{
    struct tpiu_walked *w = ctx;
    if (faults)
        fault(w->t, w->from + start + 16);
    else
        clean(w->t, w->from + start, 16);
}

/* TPIU frames without a full sync count only when their best alignment carries clean ITM on
 * source 1: frames alone are too easy to find in anything. Judged from the window's start and from a
 * few later points (noise on the line before the frames: a one-source stream, writing no ID, does not
 * outlive it in a judgement from the start), walked from the one that reads the most clean ITM (the
 * bytes before it count as unread: noise, when they are). */
static void read_tpiu(const uint8_t *buf, size_t len, struct tally *t)
{
    size_t best_from = 0;
    unsigned best_o = 0;
    uint8_t best_id = 0;
    uint32_t most = 0;
    for (size_t from = 0; from + 512u <= len || from == 0; from = from ? from * 2 : 512u) {
        uint32_t clean_bytes, faults;
        uint8_t start_id;
        unsigned o = tpiu_best_offset(buf + from, len - from, 1, &start_id, &clean_bytes, &faults);
        if (clean_bytes > most) {
            most = clean_bytes;
            best_from = from, best_o = o, best_id = start_id;
        }
    }
    struct tpiu_walked w = {t, best_from};
    if (most < 32u)
        return;
    if (best_from)
        fault(t, best_from); /* what comes before is unread: noise may end there */
    tpiu_walk(buf + best_from, len - best_from, best_o, 1, best_id, tpiu_frame, &w);
}

static bool has_full_sync(const uint8_t *buf, size_t len)
{
    uint32_t window = 0; /* the last four bytes, the oldest in the high bits, as TPIU_FULL_SYNC */
    for (size_t i = 0; i < len; i++) {
        window = window << 8 | buf[i];
        if (window == TPIU_FULL_SYNC)
            return true;
    }
    return false;
}

/* A run of zeros (an idle line, ITM sync, orbflow delimiters) tells nothing: what follows it is
 * judged, with one zero kept as the delimiter before it. Returns how many were passed over. */
static size_t skip_zeros(const uint8_t **buf, size_t *len)
{
    size_t zeros = detect_leading_zeros(*buf, *len);
    if (zeros <= 1 || zeros == *len)
        return 0;
    *buf += zeros - 1;
    *len -= zeros - 1;
    return zeros - 1;
}

static void judge_one(void (*read)(const uint8_t *, size_t, struct tally *), const uint8_t *buf, size_t len,
                      struct tally *t, struct reading *r)
{
    t->n_faults = t->n_units = 0;
    read(buf, len, t);
    clean_share(t, len, r);
}

/* Text and orbflow win when they read most of the window: text as well as raw ITM does (which
 * reads most text too), orbflow whatever raw ITM does (its sums do not pass by chance, and raw ITM
 * reads the ITM inside its frames). A full sync means TPIU; without one, TPIU frames must read
 * clearly better than raw ITM, the fallback. */
void detect_judge(const uint8_t *buf, size_t len, struct detect_verdict *v)
{
    static const struct detect_verdict none = {DETECT_UNKNOWN, 0, 0};
    *v = none;
    if (len == 0)
        return;
    size_t zeros = skip_zeros(&buf, &len);
    if (len > DETECT_WINDOW)
        len = DETECT_WINDOW;
    struct tally tally, *t = &tally; /* (large: not zeroed, its counts say what is in it) */
    t->after_zeros = zeros > 0;
    struct reading itm, text, orbflow, tpiu;
    judge_one(read_itm, buf, len, t, &itm);
    judge_one(read_text, buf, len, t, &text);
    judge_one(read_orbflow, buf, len, t, &orbflow);
    bool frames = t->n_units >= 3; /* fewer than three good frames prove nothing */
    *v = (struct detect_verdict){DETECT_ITM, itm.skip, itm.balance};
    if (text.covered >= WINNING_SHARE && text.balance >= itm.balance)
        *v = (struct detect_verdict){DETECT_TEXT, text.skip, text.covered};
    else if (frames && orbflow.covered >= WINNING_SHARE)
        *v = (struct detect_verdict){DETECT_ORBFLOW, orbflow.skip, orbflow.covered};
    else if (has_full_sync(buf, len)) {
        judge_one(read_tpiu, buf, len, t, &tpiu); /* only for the noise before the frames */
        *v = (struct detect_verdict){DETECT_TPIU, tpiu.skip, tpiu.covered};
    } else if (itm.balance + TPIU_MARGIN < 1000u) {
        judge_one(read_tpiu, buf, len, t, &tpiu);
        if (tpiu.balance >= WINNING_SHARE && tpiu.balance >= itm.balance + TPIU_MARGIN)
            *v = (struct detect_verdict){DETECT_TPIU, tpiu.skip, tpiu.covered};
    }
    if (v->skip)
        v->skip += zeros;
}

enum detect_format detect_format(const uint8_t *buf, size_t len)
{
    struct detect_verdict v;
    detect_judge(buf, len, &v);
    return v.format;
}

void detect_judge_so_far(const uint8_t *buf, size_t len, struct detect_verdict *v)
{
    detect_judge(buf, len, v);
    const uint8_t *rest = buf;
    size_t n = len;
    skip_zeros(&rest, &n);
    if (v->format == DETECT_ITM && n < DETECT_WINDOW && orbflow_possible(rest, n))
        v->format = DETECT_UNKNOWN; /* ITM only because nothing else fits yet, and orbflow still may */
}

enum detect_format detect_format_so_far(const uint8_t *buf, size_t len)
{
    struct detect_verdict v;
    detect_judge_so_far(buf, len, &v);
    return v.format;
}

size_t detect_leading_zeros(const uint8_t *buf, size_t len)
{
    size_t n = 0;
    while (n < len && buf[n] == 0)
        n++;
    return n;
}

const char *detect_name(enum detect_format f)
{
    switch (f) {
    case DETECT_TEXT:
        return "text";
    case DETECT_ITM:
        return "itm";
    case DETECT_TPIU:
        return "tpiu";
    case DETECT_ORBFLOW:
        return "orbflow";
    default:
        return "auto";
    }
}

int detect_parse(const char *name)
{
    static const char *const names[] = {"auto", "text", "itm", "tpiu", "orbflow"};
    for (int i = 0; i < 5; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}
