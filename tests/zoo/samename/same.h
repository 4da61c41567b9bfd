/* A helper both files inline: its copies are one function, of this file (tests/test_same_name.py). */
static inline __attribute__((always_inline)) int mix(int x)
{
    return x * 7 + 1; /* MIX */
}
