int fx_b_value(void)
{
    return 3;
}
