/* .debug_aranges: every unit's code ranges in one small table. The unit index takes a unit's
 * ranges from here when it can, so opening reads neither the unit's first DIE nor its range list
 * (on the bench's 27 MB ELF: 175 KB read instead of a 1.7 MB range list section and a page of
 * every unit). */
#include "rawdwarf.h"

#include <stdlib.h>

/* A pair's 32-bit half (DWARF's byte order is the target's: little-endian Arm). */
static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A set's (address, length) pairs up to its (0, 0) pair, into a->ranges: the number read with the
 * end pair (0: no end pair before the set's end, or no memory). Read 8 bytes a pair with no check
 * but the set's end, into room made once, where each half's read and each push checked theirs
 * (21,600 ranges of the bench's 27 MB ELF: 1.93M -> 0.3M instructions of the open). */
static uint32_t read_pairs(struct cur *set, struct aranges *a)
{
    size_t most = (size_t)(set->end - set->p) / 8;
    if (!most || !VEC_RESERVE(a->ranges, most))
        return 0;
    struct unit_range *r = a->ranges.v + a->ranges.n;
    for (size_t k = 0; k < most; k++) {
        const uint8_t *p = set->p + 8 * k;
        uint32_t lo = le32(p), size = le32(p + 4);
        if (lo == 0 && size == 0) {
            a->ranges.n += k;
            return (uint32_t)k + 1;
        }
        r[k] = (struct unit_range){lo, lo + size, 0};
    }
    return 0; /* no (0, 0) before the set's end */
}

/* One set: its header, then (address, length) pairs from the first multiple of twice the
 * address size, up to a (0, 0) pair. False: a shape the index does not take (then no set of the
 * section is used). */
static bool read_set(struct cur *c, struct aranges *a)
{
    const uint8_t *start = c->p;
    uint64_t len = cur_fixed(c, 4);
    if (c->bad || len >= 0xfffffff0u || len > (uint64_t)(c->end - c->p)) /* DWARF64, or cut */
        return false;
    struct cur set = {c->p, c->p + len, false};
    c->p += len;
    uint16_t version = (uint16_t)cur_fixed(&set, 2);
    uint64_t info_off = cur_fixed(&set, 4);
    uint8_t addr_size = (uint8_t)cur_fixed(&set, 1), seg_size = (uint8_t)cur_fixed(&set, 1);
    if (set.bad || version != 2 || addr_size != 4 || seg_size != 0)
        return false;
    cur_skip(&set, (size_t)(8 - (set.p - start) % 8) % 8); /* the pairs are 8-aligned to the set's start */
    struct arange_set s = {info_off, (uint32_t)a->ranges.n, 0};
    if (set.bad || !(s.n = read_pairs(&set, a)))
        return false;
    s.n--; /* (its end pair) */
    return VEC_PUSH(a->sets, s);
}

static int by_info_offset(const void *x, const void *y)
{
    const struct arange_set *a = x, *b = y;
    return a->info_off < b->info_off ? -1 : a->info_off > b->info_off;
}

bool raw_aranges_read(const struct raw_dwarf *d, struct aranges *a)
{
    memset(a, 0, sizeof *a);
    if (!d->sec[SEC_ARANGES])
        return false;
    struct cur c = {d->sec[SEC_ARANGES], d->sec[SEC_ARANGES] + d->len[SEC_ARANGES], false};
    /* room for as many pairs as the section could hold, and a set per 32 bytes (a header and its
     * end pair): grown by doubling, 21,600 ranges were copied to fresh pages eight times (0.5 ms
     * of a 27 MB ELF's open); untouched room costs nothing */
    bool ok = VEC_RESERVE(a->ranges, d->len[SEC_ARANGES] / 8 + 1) && VEC_RESERVE(a->sets, d->len[SEC_ARANGES] / 32 + 1);
    while (ok && c.p < c.end)
        ok = read_set(&c, a);
    ok = ok && a->sets.n;
    if (ok)
        qsort(a->sets.v, a->sets.n, sizeof *a->sets.v, by_info_offset);
    for (size_t i = 1; ok && i < a->sets.n; i++)
        ok = a->sets.v[i].info_off != a->sets.v[i - 1].info_off; /* two sets for one unit: which? */
    if (!ok)
        raw_aranges_free(a);
    return ok;
}

const struct arange_set *raw_aranges_for(const struct aranges *a, uint64_t info_off)
{
    size_t lo = 0, hi = a->sets.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->sets.v[mid].info_off < info_off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->sets.n && a->sets.v[lo].info_off == info_off ? &a->sets.v[lo] : NULL;
}

void raw_aranges_free(struct aranges *a)
{
    free(a->sets.v);
    free(a->ranges.v);
    memset(a, 0, sizeof *a);
}
