int fx_b_value(void);
