/* cmprof for Zephyr: samples tagged with the running thread, thread names streamed as threads are
 * created and named, slots freed as they die, through the kernel's CONFIG_TRACING_USER hooks.
 * The module in zephyr/ builds this file with the sampler and the stream; the recipe is in
 * zephyr/Kconfig and README.md. The hooks, here, are the part that knows Zephyr's thread API:
 * tests/test_zephyr.c runs them on the host against a stand-in of that API. */
#ifndef CMPROF_ZEPHYR_H
#define CMPROF_ZEPHYR_H

#include <stddef.h>

#include "../cmprof.h"

/* For the application, with the Zephyr module: name section timer `index` (cmprof_section_start/
 * stop in cmprof.h); the module's drain sends the name, and every section's statistics once a
 * second. `name` must stay (a string literal). */
void cmprof_zephyr_section_name(uint32_t index, const char *name);

/* For the module, once, from a thread, before sampling starts (the stream, CMPROF_TAG_NAMES): where a
 * k_thread keeps its name and the idle thread's name, for the tick's reads (no hook at a create). */
void cmprof_zephyr_names_start(void);
/* For the module, once, before the kernel makes its threads (SYS_INIT PRE_KERNEL_1): the name cache
 * made empty, so that a rename finds the sets empty from the first thread on (no-op without it). */
void cmprof_zephyr_names_early(void);

/* The tag the sampler stores with each sample (-DCMPROF_TAG=cmprof_current_task): the kernel's
 * running thread, _kernel.cpus[0].current, under this name (the module's link, cmprof_zephyr.c). */
extern void *volatile cmprof_current_task;

/* The name a thread is streamed under: Zephyr's idle threads ("idle", or "idle 00" and so on with
 * one per CPU) become CMPROF_IDLE_NAME, a thread with no name (NULL or "") "?", which the host shows
 * under its k_thread address as unnamed; any other name is kept. */
static inline const char *cmprof_zephyr_name(const char *name)
{
    static const char idle[] = "idle";
    if (name == NULL || name[0] == '\0')
        return "?";
    unsigned i = 0;
    while (idle[i] && name[i] == idle[i])
        i++;
    if (idle[i])
        return name;
    if (name[i] == ' ')
        i++;
    while (name[i] >= '0' && name[i] <= '9')
        i++;
    return name[i] ? name : CMPROF_IDLE_NAME;
}

#endif
