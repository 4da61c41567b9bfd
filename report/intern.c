/* Interned strings: an array in order of first use and an open-addressing index over it. */
#include "intern.h"

#include "../base/grow.h"
#include "../base/hash.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct intern {
    char **strings;
    size_t n, cap;
    size_t *index; /* 1 + string number, 0: empty; at most half full */
    size_t index_cap;
};

static size_t hash(const char *s)
{
    uint64_t h = fnv1a64_str(s);
    return (size_t)(h ^ h >> 29);
}

struct intern *intern_new(void)
{
    return calloc(1, sizeof(struct intern));
}

void intern_free(struct intern *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->index);
    free(t);
}

static bool rehash(struct intern *t)
{
    size_t cap = grow_capacity(t->index_cap, (t->n + 1) * 2, 256);
    size_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash(t->strings[i]) & (cap - 1);
        while (idx[j])
            j = (j + 1) & (cap - 1);
        idx[j] = i + 1;
    }
    free(t->index);
    t->index = idx;
    t->index_cap = cap;
    return true;
}

size_t intern_id(struct intern *t, const char *s)
{
    if ((t->n + 1) * 2 > t->index_cap && !rehash(t))
        return SIZE_MAX;
    size_t j = hash(s) & (t->index_cap - 1);
    for (; t->index[j]; j = (j + 1) & (t->index_cap - 1))
        if (strcmp(t->strings[t->index[j] - 1], s) == 0)
            return t->index[j] - 1;
    if (!grow_array((void **)&t->strings, &t->cap, t->n + 1, sizeof *t->strings, 64))
        return SIZE_MAX;
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    if (!copy)
        return SIZE_MAX;
    memcpy(copy, s, len + 1);
    t->strings[t->n] = copy;
    t->index[j] = ++t->n;
    return t->n - 1;
}

size_t intern_count(const struct intern *t)
{
    return t->n;
}

const char *intern_get(const struct intern *t, size_t id)
{
    return id < t->n ? t->strings[id] : NULL;
}
