/* A stand-in for Zephyr's <zephyr/kernel_structs.h> (tests/test_zephyr.c): the running thread, the
 * kernel's _current, which on one CPU is a load of _kernel.cpus[0].current (zephyr/kernel.h). */
#ifndef CMPROF_ZEPHYR_STANDIN_KERNEL_STRUCTS_H
#define CMPROF_ZEPHYR_STANDIN_KERNEL_STRUCTS_H

#include <zephyr/kernel.h>

#define _current _kernel.cpus[0].current

#endif
