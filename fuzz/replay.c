/* Replays saved fuzzer inputs (the files named on the command line) through a fuzz target built
 * without libFuzzer: make test runs every input that ever crashed a target, under ASan/UBSan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            printf("FAIL replay %s: cannot open\n", argv[i]);
            return 1;
        }
        static uint8_t buf[1 << 22];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees overreads */
        for (size_t k = 0; k < n; k++)
            copy[k] = buf[k];
        LLVMFuzzerTestOneInput(copy, n);
        free(copy);
        printf("ok   replay %s\n", argv[i]);
    }
    return 0;
}
