/* -o speedscope: speedscope's sampled-profile JSON (https://www.speedscope.app), one profile whose
 * samples are the profile's inline chains (or task, then chain), outermost frame first. */
#ifndef CMPROF_APP_SPEEDSCOPE_H
#define CMPROF_APP_SPEEDSCOPE_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stdio.h>

/* name: the profile's title (the ELF's file name). Returns 0, or -1 when out of memory. */
int speedscope_write(FILE *out, struct prof *p, bool demangle, bool by_task, const char *name);

#endif
