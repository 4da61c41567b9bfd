/* What a dump line and a stream line share (textline.h). */
#include "textline.h"

#include "hex.h"

#include <string.h>

bool textline_uint(const char **p, const char *end, const char *key, uint64_t *out, int base)
{
    size_t k = strlen(key);
    if ((size_t)(end - *p) < k || memcmp(*p, key, k) != 0)
        return false;
    const char *s = *p + k;
    uint64_t v = 0;
    int digits = 0;
    while (s < end && *s != ' ') {
        int h = hex_digit_value(*s);
        if (h < 0 || h >= base || ++digits > 20)
            return false;
        v = v * (uint64_t)base + (uint64_t)h;
        s++;
    }
    if (!digits)
        return false;
    while (s < end && *s == ' ')
        s++;
    *p = s;
    *out = v;
    return true;
}

void textline_bad(struct text_decoder *d)
{
    if (!d->stats.bad_lines++)
        d->stats.first_bad = d->line_offset + 1;
}

bool textline_starts(const char *s, size_t len, const char *prefix)
{
    size_t k = strlen(prefix);
    return len >= k && memcmp(s, prefix, k) == 0;
}

void textline_section(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t idx, n, cur, mn, mx, sum, long_runs = 0;
    const char *p = s + strlen("sect ");
    if (!textline_uint(&p, end, "", &idx, 10) || !textline_uint(&p, end, "n=", &n, 10) ||
        !textline_uint(&p, end, "cur=", &cur, 10) || !textline_uint(&p, end, "min=", &mn, 10) ||
        !textline_uint(&p, end, "max=", &mx, 10) || !textline_uint(&p, end, "sum=", &sum, 10) ||
        (p != end && !textline_uint(&p, end, "long=", &long_runs, 10)) || p != end || idx > UINT32_MAX ||
        n > UINT32_MAX || cur > UINT32_MAX || mn > UINT32_MAX || mx > UINT32_MAX || long_runs > n) {
        textline_bad(d); /* the firmware's section figures are 32 bits (the sum 64) */
        return;
    }
    struct ev e = {.type = EV_SECTION, .offset = d->line_offset,
                   .section = {.index = (uint32_t)idx, .run = {cur, n, mn, mx, sum, long_runs}}};
    ev_emit(sink, &e);
}

/* "sectev I K ev=E cur= min= max= sum=": event slot K of section I (Cortex-A/R PMU events). */
void textline_section_event(struct text_decoder *d, const char *s, const char *end, const struct ev_sink *sink)
{
    uint64_t idx, k, ev, cur, mn, mx, sum;
    const char *p = s + strlen("sectev ");
    if (!textline_uint(&p, end, "", &idx, 10) || !textline_uint(&p, end, "", &k, 10) ||
        !textline_uint(&p, end, "ev=", &ev, 10) || !textline_uint(&p, end, "cur=", &cur, 10) ||
        !textline_uint(&p, end, "min=", &mn, 10) || !textline_uint(&p, end, "max=", &mx, 10) ||
        !textline_uint(&p, end, "sum=", &sum, 10) || p != end || idx > UINT32_MAX || k > UINT32_MAX ||
        ev > UINT32_MAX) {
        textline_bad(d);
        return;
    }
    struct ev e = {.type = EV_SECTION_EVENT, .offset = d->line_offset,
                   .section_event = {.section = (uint32_t)idx, .slot = (uint32_t)k, .pmu_event = (uint32_t)ev,
                                     .run = {.current = cur, .min = mn, .max = mx, .sum = sum}}};
    ev_emit(sink, &e);
}

/* '^' lines (the live stream; a dump may carry the same evidence): the stack evidence of one sample
 * of the sample line before it (firmware/cmprof_stack.c, docs/stream.md).
 *   '^' BACK PC6 LR6 SCANNED2 { OFF2 RET4 }
 * BACK: how many samples before that line's last one the sample is; PC, LR: 32 bits; SCANNED: the
 * stack words looked at above the interrupted SP; each OFF (a word index under SCANNED, rising)
 * with RET, the word's halfword offset from the code base (the word is odd: a Thumb address), or
 * 0xFFFFFF: an exception return code (0xFFFFFFFF in the event). */
#define STACK_WORDS_MAX 63 /* the firmware keeps at most 63 (CMPROF_STACK_KEEP) */

static int stack_b64(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* chars base64 characters at s as one number; false when one is not base64 */
static bool stack_field(const char *s, int chars, uint32_t *out)
{
    uint32_t v = 0;
    for (int k = 0; k < chars; k++) {
        int c = stack_b64(s[k]);
        if (c < 0)
            return false;
        v = v << 6 | (uint32_t)c;
    }
    *out = v;
    return true;
}

void textline_stack(struct text_decoder *d, const char *s, size_t len, const struct ev_sink *sink)
{
    uint32_t back, pc, lr, scanned, words[2 * STACK_WORDS_MAX];
    size_t n = 0, at = 16;
    bool ok = len >= at && (len - at) % 6 == 0 && (len - at) / 6 <= STACK_WORDS_MAX && stack_field(s + 1, 1, &back) &&
              stack_field(s + 2, 6, &pc) && stack_field(s + 8, 6, &lr) && stack_field(s + 14, 2, &scanned);
    for (; ok && at < len; at += 6, n++) {
        uint32_t off = 0, ret = 0;
        ok = stack_field(s + at, 2, &off) && stack_field(s + at + 2, 4, &ret) && off < scanned &&
             (n == 0 || off > words[2 * n - 2]);
        words[2 * n] = off;
        /* 0xFFFFFF: an exception return code; 0xFFFFFE: where r7 pointed (SYM_FRAME_POINTER_WORD) */
        words[2 * n + 1] = ret >= 0xFFFFFEu ? ret | 0xFF000000u : d->code_base + (ret << 1) + 1u;
    }
    if (!ok) {
        textline_bad(d);
        return;
    }
    if (!d->have_base)
        return; /* its sample was not placed either */
    struct ev e = ev_blank(EV_STACK_WORDS);
    e.stack_words = (struct ev_stack_words){.pc = pc, .back = back, .lr = lr, .scanned = scanned, .pairs = words, .n = n};
    e.offset = d->line_offset;
    ev_emit(sink, &e);
}

/* A dump's "sw BACK PC LR SCANNED { OFF WORD }" in words (hex, parsed): the same event as a '^' line. */
void textline_stack_words(struct text_decoder *d, const uint32_t *w, size_t n, const struct ev_sink *sink)
{
    bool ok = n >= 4 && n % 2 == 0 && (n - 4) / 2 <= STACK_WORDS_MAX;
    for (size_t k = 4; ok && k < n; k += 2)
        ok = w[k] < w[3] && (k == 4 || w[k] > w[k - 2]);
    if (!ok) {
        textline_bad(d);
        return;
    }
    struct ev e = ev_blank(EV_STACK_WORDS);
    e.stack_words = (struct ev_stack_words){.pc = w[1], .back = w[0], .lr = w[2], .scanned = w[3], .pairs = w + 4,
                                            .n = (n - 4) / 2};
    e.offset = d->line_offset;
    ev_emit(sink, &e);
}
