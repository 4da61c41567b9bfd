void fx_a_run(void);
void fx_b_hook(void)
{
    fx_a_run();
}
