/* calls fx_b.c in the histogram build only */
void fx_b_bins(void);
void fx_a_run(void)
{
#if CMPROF_HIST
    fx_b_bins();
#endif
}
