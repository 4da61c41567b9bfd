/* Test helper: TPIU formatter frames as an STM32 with the formatter on sends them on SWO, with no
 * full sync: ITM PC samples on source 1 (with a sync packet every 32 samples), ETM-like noise on
 * source 2. Needs evlog.h's rnd32. */
#ifndef TPIU_GEN_H
#define TPIU_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct item {
    uint8_t id, v;
};

#define MAX_PCS 6000
static uint32_t want_pcs[MAX_PCS];
static size_t n_want;
static struct item items[200000];

/* The two sources' bytes as the formatter takes them: runs of each in turn. The ITM stream starts
 * with a sync packet and repeats it every 32 samples (DWT's SYNCTAP). */
static bool one_source; /* no ETM-like source: the formatter writes source 1's ID once, at its start */

static size_t make_items(size_t samples)
{
    size_t n = 0;
    n_want = 0;
    while (n_want < samples) {
        size_t run_itm = 5 + rnd32() % 40, run_etm = one_source ? 0 : 1 + rnd32() % 60;
        for (size_t k = 0; k < run_itm && n_want < samples; k += 5) {
            if (n_want % 32 == 0)
                for (int z = 0; z < 6; z++)
                    items[n++] = (struct item){1, z == 5 ? 0x80 : 0x00};
            uint32_t pc = 0x08000100u + 2u * (rnd32() % 300);
            want_pcs[n_want++] = pc;
            items[n++] = (struct item){1, 0x17};
            for (int b = 0; b < 4; b++)
                items[n++] = (struct item){1, (uint8_t)(pc >> (8 * b))};
        }
        for (size_t k = 0; k < run_etm; k++)
            items[n++] = (struct item){2, (uint8_t)rnd32()};
    }
    return n;
}

/* Packs the items into 16-byte frames, changing IDs only at even bytes (ID = bits 7:1, bit 0 set):
 * aux bit 0 when the new source owns the next byte, 1 when the old one does. The last frame is
 * padded with the null source. Returns the bytes written. */
static size_t pack_frames(const struct item *it, size_t n, uint8_t *out)
{
    size_t i = 0, len = 0;
    uint8_t cur = 0;
    while (i < n) {
        uint8_t *f = out + len, aux = 0;
        memset(f, 0, 16);
        for (unsigned e = 0; e < 15; e += 2) {
            if (i >= n) { /* pad: the null source */
                f[e] = cur ? 0x01 : 0x00;
                cur = 0;
                continue;
            }
            if (it[i].id != cur) {
                f[e] = (uint8_t)(it[i].id << 1 | 1u); /* the new ID owns the next byte */
                cur = it[i].id;
                if (e < 14)
                    f[e + 1] = it[i++].v;
                continue;
            }
            if (e < 14 && i + 1 < n && it[i + 1].id != cur) { /* change after the next byte: aux 1 */
                f[e] = (uint8_t)(it[i + 1].id << 1 | 1u);
                aux |= (uint8_t)(1u << (e / 2));
                f[e + 1] = it[i++].v;
                cur = it[i].id;
                continue;
            }
            f[e] = (uint8_t)(it[i].v & 0xFEu);
            aux |= (uint8_t)((it[i++].v & 1u) << (e / 2));
            if (e < 14 && i < n && it[i].id == cur)
                f[e + 1] = it[i++].v;
            else if (e < 14) { /* nothing more of this source: the null source's byte */
                f[e + 1] = 0;
            }
        }
        f[15] = aux;
        len += 16;
    }
    return len;
}

#endif
