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
    struct ev e = {.type = EV_SECTION, .index = (uint32_t)idx, .run = {cur, n, mn, mx, sum, long_runs},
                   .offset = d->line_offset};
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
    struct ev e = {.type = EV_SECTION_EVENT, .index = (uint32_t)idx, .kind = (uint32_t)k, .tag = (uint32_t)ev,
                   .run = {.current = cur, .min = mn, .max = mx, .sum = sum}, .offset = d->line_offset};
    ev_emit(sink, &e);
}
