/* a base header that includes a project header: every layer may include a base, so through it any layer would use app/ */
#include "../app/fx_b.h"
static inline int fx_grow_twice(int n)
{
    return fx_b_value() * n;
}
