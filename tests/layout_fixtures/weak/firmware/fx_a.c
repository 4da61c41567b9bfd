/* uses fx_b.c through a weak reference: linked without fx_b.c, the call is skipped */
#pragma weak fx_b_hook
void fx_b_hook(void);
void fx_a_run(void)
{
    if (fx_b_hook)
        fx_b_hook();
}
