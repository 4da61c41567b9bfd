/* The PC samples a capture decodes to, one per line in hex (for bench/damage.py, which measures how many
 * of those sent come back, and how many wrong, when captures are damaged). argv: itm|tpiu, FILE.
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Idecode -o /tmp/decode_damage bench/decode_damage.c decode/tpiu.c decode/itm.c
 * (-DNO_HOLE for a tree whose byte_sink has no hole hook). */
#include "../decode/itm.h"
#include "../decode/tpiu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct itm_decoder itm;

static void on_event(void *ctx, const struct ev *e)
{
    (void)ctx;
    if (e->type == EV_PC)
        printf("%08x\n", (unsigned)e->pc.addr);
}

static const struct ev_sink sink = {on_event, NULL};

static void to_itm(void *ctx, const uint8_t *b, size_t n)
{
    (void)ctx;
    itm_feed(&itm, b, n, &sink);
}

#ifndef NO_HOLE
static void hole(void *ctx)
{
    (void)ctx;
    itm_hole(&itm);
}
#endif

int main(int argc, char **argv)
{
    static uint8_t buf[1 << 24];
    static struct tpiu_decoder t;
    FILE *f = argc == 3 ? fopen(argv[2], "rb") : NULL;
    if (!f) {
        fprintf(stderr, "usage: decode_damage itm|tpiu FILE\n");
        return 2;
    }
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    itm_init(&itm, false);
    if (strcmp(argv[1], "itm") == 0) {
        itm_feed(&itm, buf, n, &sink);
        return 0;
    }
    struct byte_sink bs = {to_itm, NULL, NULL};
#ifndef NO_HOLE
    bs.hole = hole;
#endif
    tpiu_init(&t, 1);
    tpiu_feed(&t, buf, n, &bs);
    tpiu_finish(&t, &bs);
    return 0;
}
