#include "../base/fx_grow.h"
int fx_b_value(void);
int fx_a_run(void)
{
    return fx_b_value() + (int)fx_grow_twice(1);
}
