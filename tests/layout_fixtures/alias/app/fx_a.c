/* exports its static state under another name, and calls fx_b.c */
static int state;
extern int fx_a_state __attribute__((alias("state")));
int fx_b_read(void);
int fx_a_run(void)
{
    return state + fx_b_read();
}
