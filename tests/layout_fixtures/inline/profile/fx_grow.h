/* a header-only helper whose module is fx_grow.c */
static inline int fx_grow_twice(int n)
{
    return n * 2;
}
