void fx_a_run(void);
void fx_b_bins(void)
{
    fx_a_run();
}
