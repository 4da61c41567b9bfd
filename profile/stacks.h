/* Call stacks of samples, as a halting source walks them: each distinct stack (the sampled PC,
 * its callers' call sites, its task) once, with how many samples had it. Storage only: the
 * profile (calls.c) names the frames. */
#ifndef CMPROF_PROFILE_STACKS_H
#define CMPROF_PROFILE_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack {
    uint32_t pc;
    const uint32_t *callers; /* innermost first; valid until the next stacks_add() */
    size_t n;
    uint32_t task; /* the profile's task record, 0: none */
    uint32_t tag;
    bool has_tag;
    double count;
};

struct stacks;

struct stacks *stacks_new(void);
void stacks_free(struct stacks *s);
void stacks_reset(struct stacks *s);
/* false when out of memory (the stack is not kept) */
bool stacks_add(struct stacks *s, const struct stack *st);
size_t stacks_distinct(const struct stacks *s);
double stacks_samples(const struct stacks *s);
/* The i-th distinct stack (i < stacks_distinct()). */
void stacks_get(const struct stacks *s, size_t i, struct stack *out);

#endif
