/* Strings numbered in order of first use, each kept once: pprof's string table, callgrind's
 * compressed names, lcov's files and functions. */
#ifndef CMPROF_REPORT_INTERN_H
#define CMPROF_REPORT_INTERN_H

#include <stddef.h>

struct intern;

struct intern *intern_new(void); /* NULL when out of memory */
void intern_free(struct intern *t);
/* The number of s, given to it the first time; SIZE_MAX when out of memory. */
size_t intern_id(struct intern *t, const char *s);
size_t intern_count(const struct intern *t);
const char *intern_get(const struct intern *t, size_t id);

#endif
