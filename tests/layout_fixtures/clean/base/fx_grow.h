/* a base header (the C library only): every layer may include it */
#include <stddef.h>
static inline size_t fx_grow_twice(size_t n)
{
    return n * 2;
}
