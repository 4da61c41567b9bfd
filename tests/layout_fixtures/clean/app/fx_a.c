int fx_b_value(void);
int fx_a_run(void)
{
    return fx_b_value();
}
