#include "fx_grow.h"
int fx_user_size(void);
int fx_grow_size(void)
{
    return fx_user_size() + 1;
}
