/* The busy loop every scenario measures: n iterations of a nop, as a function of its own. */
#ifndef WORK_H
#define WORK_H

#include <stdint.h>

#define NOP_LOOP(attrs, name)                                                                                \
    attrs void name(uint32_t n)                                                                              \
    {                                                                                                        \
        for (uint32_t i = 0; i < n; i++)                                                                     \
            __asm volatile("nop");                                                                           \
    }

#endif
