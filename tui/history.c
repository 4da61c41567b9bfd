/* Shares over time (see history.h). */
#include "history.h"
#include "../base/hash.h"

#include <stddef.h>
#include <string.h>

/* Everything but the shares: those of a second are read only once it has been written since. */
void history_clear(struct history *h)
{
    memset(h, 0, offsetof(struct history, share));
}

static const struct history_row *find(const struct history *h, uint64_t key)
{
    for (int i = 0; i < h->n; i++)
        if (h->rows[i].key == key)
            return &h->rows[i];
    return NULL;
}

void history_tick(struct history *h, const struct prof_row *rows, size_t n, double total, int group,
                  bool inline_frames)
{
    if (h->len && (group != h->group || inline_frames != h->inline_frames || total < h->last_total))
        history_clear(h); /* another grouping, or the counts were reset */
    bool first = h->len == 0 && h->n == 0;
    h->group = group;
    h->inline_frames = inline_frames;
    double dt = total - h->last_total;
    for (int i = 0; i < h->n; i++)
        h->rows[i].seen = false;
    for (size_t r = 0; r < n && r < HISTORY_ROWS; r++) {
        uint64_t key = fnv1a64_str(rows[r].name);
        struct history_row *e = (struct history_row *)find(h, key);
        if (!e) { /* a new row: a free place, else the place of a row no longer among the top */
            int slot = h->n < HISTORY_ROWS ? h->n++ : -1;
            for (int i = 0; slot < 0 && i < h->n; i++) {
                bool still = false;
                for (size_t k = 0; k < n && k < HISTORY_ROWS && !still; k++)
                    still = fnv1a64_str(rows[k].name) == h->rows[i].key;
                if (!still)
                    slot = i;
            }
            if (slot < 0)
                continue;
            e = &h->rows[slot];
            memset(e, 0, sizeof *e);
            e->key = key;
            e->born = h->ticks;
            e->last = rows[r].samples; /* followed from now on: its past is not known */
        }
        e->seen = true;
        h->share[h->pos][e - h->rows] = dt > 0 && !first ? (float)((rows[r].samples - e->last) / dt) : 0.0f;
        e->last = rows[r].samples;
    }
    for (int i = 0; i < h->n; i++)
        if (!h->rows[i].seen)
            h->share[h->pos][i] = 0.0f;
    h->last_total = total;
    if (!first) {
        h->ticks++;
        h->pos = (h->pos + 1) % HISTORY_POINTS;
        if (h->len < HISTORY_POINTS)
            h->len++;
    }
}

/* A ring of per-second values (`len` recorded, the next at `pos`; second k at ring[k * stride]) as
 * `points` means on a fixed time scale: point p covers seconds [p, p + 1) * span / points of the
 * last `span` seconds, the newest at the right. Seconds before the history began, and negative
 * values (nothing that second), are left out; a point with none is -1. Of the recorded seconds
 * only the last `known` were written for this value: the older ones count as 0. */
static void spread(const float *ring, int stride, int len, int pos, long known, float *out, int points, int span)
{
    if (span > HISTORY_POINTS || span <= 0)
        span = HISTORY_POINTS;
    for (int p = 0; p < points; p++) {
        int a = span * p / points, b = span * (p + 1) / points;
        double sum = 0;
        int k = 0;
        for (int s = a; s < b; s++) {
            int age = span - 1 - s; /* 0: the last second */
            float v = age >= len ? -1.0f : age >= known ? 0.0f
                      : ring[(size_t)((pos - 1 - age + 2 * HISTORY_POINTS) % HISTORY_POINTS) * (size_t)stride];
            if (v >= 0) {
                sum += v;
                k++;
            }
        }
        out[p] = k ? (float)(sum / k) : -1.0f;
    }
}

int history_of(const struct history *h, const char *name, float *out, int points, int span)
{
    const struct history_row *e = find(h, fnv1a64_str(name));
    if (!e || !h->len || points <= 0)
        return 0;
    spread(&h->share[0][e - h->rows], HISTORY_ROWS, h->len, h->pos, h->ticks - e->born, out, points, span);
    return points;
}

void section_history_clear(struct section_history *h)
{
    memset(h, 0, offsetof(struct section_history, mean));
}

void section_history_tick(struct section_history *h, const uint64_t *counts, const uint64_t *sums, int n)
{
    for (int i = 0; i < n && i < HISTORY_SECTIONS; i++) {
        uint64_t dc = counts[i] - h->last_count[i], ds = sums[i] - h->last_sum[i];
        /* a count that went back: the target restarted, or r reset the view's baseline */
        bool fresh = h->len > 0 && counts[i] >= h->last_count[i] && sums[i] >= h->last_sum[i] && dc > 0;
        h->mean[h->pos][i] = fresh ? (float)((double)ds / (double)dc) : -1.0f;
        h->last_count[i] = counts[i];
        h->last_sum[i] = sums[i];
    }
    h->pos = (h->pos + 1) % HISTORY_POINTS;
    if (h->len < HISTORY_POINTS)
        h->len++;
}

int section_history_of(const struct section_history *h, int i, float *out, int points, int span)
{
    if (i < 0 || i >= HISTORY_SECTIONS || !h->len || points <= 0)
        return 0;
    spread(&h->mean[0][i], HISTORY_SECTIONS, h->len, h->pos, h->len, out, points, span);
    return points;
}
