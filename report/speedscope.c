/* -o speedscope: speedscope's sampled-profile JSON (https://www.speedscope.app, its file-format-spec):
 * shared frames, then one "sampled" profile whose samples are the profile's inline chains (or task,
 * then chain), outermost frame first, as lists of frame indices with a weight each. The weights are
 * nanoseconds when the stream announced its sampling period, else sample counts (unit "none"). */
#include "emit.h"
#include "../base/grow.h"
#include "period.h"

#include "../profile/escape.h"
#include "../base/hash.h"

#include <stdlib.h>
#include <string.h>

struct stacks {
    char **frames;          /* distinct frame names, in order of first use */
    size_t n_frames, cap_frames;
    size_t *index;          /* open addressing over frames: 1 + frame number, 0 empty */
    size_t index_cap;
    size_t **samples;       /* per sample: its length, then frame numbers */
    double *weights;
    size_t n_samples, cap_samples;
    bool failed;
};

static size_t hash(const char *s, size_t n)
{
    return (size_t)fnv1a64(s, n);
}

/* The number of a frame, added the first time it is seen; SIZE_MAX when out of memory. */
static size_t frame_of(struct stacks *st, const char *name, size_t n)
{
    if ((st->n_frames + 1) * 2 > st->index_cap) {
        size_t cap = grow_capacity(st->index_cap, (st->n_frames + 1) * 2, 256);
        size_t *idx = calloc(cap, sizeof *idx);
        if (!idx)
            return SIZE_MAX;
        for (size_t f = 0; f < st->n_frames; f++) {
            size_t j = hash(st->frames[f], strlen(st->frames[f])) & (cap - 1);
            while (idx[j])
                j = (j + 1) & (cap - 1);
            idx[j] = f + 1;
        }
        free(st->index);
        st->index = idx;
        st->index_cap = cap;
    }
    size_t j = hash(name, n) & (st->index_cap - 1);
    for (; st->index[j]; j = (j + 1) & (st->index_cap - 1)) {
        const char *f = st->frames[st->index[j] - 1];
        if (strlen(f) == n && memcmp(f, name, n) == 0)
            return st->index[j] - 1;
    }
    if (!grow_array((void **)&st->frames, &st->cap_frames, st->n_frames + 1, sizeof *st->frames, 64))
        return SIZE_MAX;
    char *copy = malloc(n + 1);
    if (!copy)
        return SIZE_MAX;
    esc_decode(copy, name, n); /* the name's own bytes: the JSON writer escapes them as -o json does */
    st->frames[st->n_frames] = copy;
    st->index[j] = ++st->n_frames;
    return st->n_frames - 1;
}

/* One folded line, "outer;...;inner", as a sample. */
static void add_stack(void *ctx, const char *stack, double count)
{
    struct stacks *st = ctx;
    if (st->failed)
        return;
    size_t depth = 1;
    for (const char *c = stack; *c; c++)
        depth += *c == ';';
    size_t cap_weights = st->cap_samples; /* the weights grow in step with the samples */
    if (!grow_array((void **)&st->samples, &st->cap_samples, st->n_samples + 1, sizeof *st->samples, 64) ||
        !grow_array((void **)&st->weights, &cap_weights, st->n_samples + 1, sizeof *st->weights, 64)) {
        st->failed = true;
        return;
    }
    size_t *s = malloc((depth + 1) * sizeof *s);
    if (!s) {
        st->failed = true;
        return;
    }
    s[0] = 0;
    for (const char *a = stack;;) {
        const char *b = strchr(a, ';');
        size_t n = b ? (size_t)(b - a) : strlen(a);
        size_t f = frame_of(st, a, n);
        if (f == SIZE_MAX) {
            free(s);
            st->failed = true;
            return;
        }
        s[1 + s[0]++] = f;
        if (!b)
            break;
        a = b + 1;
    }
    st->samples[st->n_samples] = s;
    st->weights[st->n_samples++] = count;
}

/* name: the profile's title; ns: nanoseconds a sample, 0 when unknown. Returns 0, or -1 when out
 * of memory. */
static int write_document(FILE *out, struct prof *p, bool demangle, bool by_task, const char *name, double ns)
{
    struct stacks st = {0};
    prof_folded(p, demangle, by_task, add_stack, &st);
    int rc = st.failed ? -1 : 0;
    if (!rc) {
        double scale = ns > 0 ? ns : 1, total = 0;
        for (size_t i = 0; i < st.n_samples; i++)
            total += st.weights[i] *= scale;
        fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n \"exporter\": \"cmprof-top\",\n"
              " \"name\": ", out);
        emit_json_string(out, name);
        fputs(",\n \"activeProfileIndex\": 0,\n \"shared\": {\"frames\": [", out);
        for (size_t f = 0; f < st.n_frames; f++) {
            fputs(f ? ", {\"name\": " : "{\"name\": ", out);
            emit_json_string(out, st.frames[f]);
            fputc('}', out);
        }
        fputs("]},\n \"profiles\": [{\"type\": \"sampled\", \"name\": ", out);
        emit_json_string(out, name);
        fprintf(out, ", \"unit\": \"%s\", \"startValue\": 0, \"endValue\": %.17g,\n  \"samples\": [",
                ns > 0 ? "nanoseconds" : "none", total);
        for (size_t i = 0; i < st.n_samples; i++) {
            fputs(i ? ", [" : "[", out);
            for (size_t k = 0; k < st.samples[i][0]; k++)
                fprintf(out, "%s%zu", k ? ", " : "", st.samples[i][1 + k]);
            fputc(']', out);
        }
        fputs("],\n  \"weights\": [", out);
        for (size_t i = 0; i < st.n_samples; i++)
            fprintf(out, "%s%.17g", i ? ", " : "", st.weights[i]);
        fputs("]}]}\n", out);
    }
    for (size_t f = 0; f < st.n_frames; f++)
        free(st.frames[f]);
    for (size_t i = 0; i < st.n_samples; i++)
        free(st.samples[i]);
    free(st.frames);
    free(st.index);
    free(st.samples);
    free(st.weights);
    return rc;
}

int report_speedscope(const struct report_data *d, FILE *out, char *err, size_t errlen)
{
    double ns = period_ns_written(d->p);
    if (write_document(out, d->p, d->o->demangle, d->o->by == PROF_BY_TASK, path_base(d->o->elf), ns) == 0)
        return 0;
    fputs("{}\n", out); /* an empty document rather than half of one */
    snprintf(err, errlen, "speedscope: out of memory");
    return -1;
}
