/* Reads valgrind --tool=lackey --trace-mem=yes output on stdin and keeps the 16-byte pieces of a
 * static executable's image (0x400000..0x1000000) that the run fetched or read or wrote: merged
 * into OUT (one hex address a line) with what OUT held already. For bench/hot_text.py.
 *     lackey_touch OUT < trace */
#include <stdio.h>
#include <stdlib.h>

#define IMAGE_LO 0x400000UL
#define IMAGE_HI 0x1000000UL
#define PIECE 16UL

static unsigned char seen[(IMAGE_HI - IMAGE_LO) / PIECE];

static void mark(unsigned long a)
{
    if (a >= IMAGE_LO && a < IMAGE_HI)
        seen[(a - IMAGE_LO) / PIECE] = 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lackey_touch OUT < trace\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    unsigned long a;
    while (f && fscanf(f, "%lx", &a) == 1)
        mark(a);
    if (f)
        fclose(f);
    char line[256];
    while (fgets(line, sizeof line, stdin)) { /* "I  0401000,3", " L 0654320,8", " S ...", " M ..." */
        char *p = line;
        while (*p == ' ' || *p == 'I' || *p == 'L' || *p == 'S' || *p == 'M')
            p++;
        mark(strtoul(p, NULL, 16));
    }
    f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    for (unsigned long i = 0; i < sizeof seen; i++)
        if (seen[i])
            fprintf(f, "%lx\n", IMAGE_LO + i * PIECE);
    return fclose(f) == 0 ? 0 : 1;
}
