#include "../base/fx_grow.h"
int fx_a_run(void)
{
    return fx_grow_twice(2);
}
