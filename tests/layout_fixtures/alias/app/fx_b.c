extern int fx_a_state;
int fx_b_read(void)
{
    return fx_a_state;
}
