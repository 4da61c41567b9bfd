/* .debug_aranges: the sets the unit index takes, and every shape it must refuse whole. */
#include "../symbols/rawdwarf.h"
#include "check.h"

#include <stdlib.h>

/* A section built byte by byte. */
struct bytes {
    uint8_t b[512];
    size_t n;
};

static void put_le(struct bytes *s, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

/* One set: version, unit offset, address and segment sizes as given, then the pairs and (0, 0). */
static void put_set(struct bytes *s, uint16_t version, uint32_t info_off, uint8_t addr_size, uint8_t seg_size,
                    const uint32_t *pairs, int n_pairs)
{
    size_t start = s->n;
    put_le(s, 0, 4); /* length: patched below */
    put_le(s, version, 2);
    put_le(s, info_off, 4);
    put_le(s, addr_size, 1);
    put_le(s, seg_size, 1);
    put_le(s, 0, 4); /* padding to 16: the pairs are aligned to twice the address size */
    for (int i = 0; i < 2 * n_pairs; i++)
        put_le(s, pairs[i], 4);
    put_le(s, 0, 8);
    uint32_t len = (uint32_t)(s->n - start - 4);
    memcpy(s->b + start, &len, 4);
}

static bool read_section(const struct bytes *s, struct aranges *a)
{
    struct raw_dwarf d = {0};
    d.sec[SEC_ARANGES] = s->b;
    d.len[SEC_ARANGES] = s->n;
    return raw_aranges_read(&d, a);
}

static void test_sets_by_unit(void)
{
    struct bytes s = {0};
    const uint32_t second[] = {0x08000100, 0x40, 0x08000400, 0x10};
    const uint32_t first[] = {0x08000000, 0x100};
    put_set(&s, 2, 0x200, 4, 0, second, 2); /* out of unit order: the reader sorts */
    put_set(&s, 2, 0x0, 4, 0, first, 1);
    struct aranges a;
    CHECK(read_section(&s, &a));
    CHECK(a.sets.n == 2 && a.ranges.n == 3);
    const struct arange_set *u0 = raw_aranges_for(&a, 0), *u1 = raw_aranges_for(&a, 0x200);
    CHECK(u0 && u0->n == 1 && a.ranges.v[u0->first].lo == 0x08000000 && a.ranges.v[u0->first].hi == 0x08000100);
    CHECK(u1 && u1->n == 2 && a.ranges.v[u1->first].lo == 0x08000100 && a.ranges.v[u1->first].hi == 0x08000140);
    CHECK(u1 && a.ranges.v[u1->first + 1].lo == 0x08000400 && a.ranges.v[u1->first + 1].hi == 0x08000410);
    CHECK(raw_aranges_for(&a, 0x100) == NULL); /* a unit without a set: its root DIE is read */
    CHECK(raw_aranges_for(&a, 0x201) == NULL);
    raw_aranges_free(&a);
    CHECK(a.sets.v == NULL && a.ranges.v == NULL);
}

static void test_empty_set_and_wrapping_range(void)
{
    struct bytes s = {0};
    const uint32_t wraps[] = {0xFFFFFF00, 0x200};
    put_set(&s, 2, 0x0, 4, 0, NULL, 0);    /* a unit that states no code */
    put_set(&s, 2, 0x80, 4, 0, wraps, 1);  /* past 4 GB: the end wraps, and the index drops it */
    struct aranges a;
    CHECK(read_section(&s, &a));
    const struct arange_set *u0 = raw_aranges_for(&a, 0), *u1 = raw_aranges_for(&a, 0x80);
    CHECK(u0 && u0->n == 0);
    CHECK(u1 && u1->n == 1 && a.ranges.v[u1->first].hi == 0x100);
    raw_aranges_free(&a);
}

/* Any set of a shape the index does not take: no set at all is used. */
static void test_refused_shapes(void)
{
    const uint32_t one[] = {0x08000000, 0x100};
    struct {
        uint16_t version;
        uint8_t addr_size, seg_size;
    } shapes[] = {{3, 4, 0}, {2, 8, 0}, {2, 4, 4}, {1, 4, 0}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        struct bytes s = {0};
        put_set(&s, 2, 0x0, 4, 0, one, 1); /* a good set first: still refused with the bad one */
        put_set(&s, shapes[k].version, 0x100, shapes[k].addr_size, shapes[k].seg_size, one, 1);
        struct aranges a;
        CHECK(!read_section(&s, &a));
        CHECK(a.sets.v == NULL && a.ranges.v == NULL && a.sets.n == 0);
    }
    struct bytes twice = {0}; /* two sets for one unit */
    put_set(&twice, 2, 0x40, 4, 0, one, 1);
    put_set(&twice, 2, 0x40, 4, 0, one, 1);
    struct aranges a;
    CHECK(!read_section(&twice, &a));
    struct bytes dwarf64 = {0};
    put_le(&dwarf64, 0xFFFFFFFFu, 4);
    put_le(&dwarf64, 40, 8);
    CHECK(!read_section(&dwarf64, &a));
    struct bytes none = {0};
    CHECK(!read_section(&none, &a)); /* an empty section: nothing to use */
    struct raw_dwarf absent = {0};
    CHECK(!raw_aranges_read(&absent, &a));
}

/* A section cut anywhere, or a set whose length lies: refused, never read past. */
static void test_cut_anywhere(void)
{
    struct bytes s = {0};
    const uint32_t pairs[] = {0x08000000, 0x100, 0x08000200, 0x80};
    put_set(&s, 2, 0x0, 4, 0, pairs, 2);
    put_set(&s, 2, 0x100, 4, 0, pairs, 1);
    for (size_t cut = 1; cut < s.n; cut++) {
        struct bytes c = {0};
        memcpy(c.b, s.b, cut);
        c.n = cut;
        struct aranges a;
        bool took = read_section(&c, &a);
        CHECK(!took || cut == (size_t)(4 + s.b[0] + (s.b[1] << 8))); /* only the first set whole */
        raw_aranges_free(&a);
    }
    struct bytes lie = s; /* the first set says it ends before its (0, 0) */
    lie.b[0] = 20;
    struct aranges a;
    CHECK(!read_section(&lie, &a));
}

int main(void)
{
    RUN_TEST(test_sets_by_unit);
    RUN_TEST(test_empty_set_and_wrapping_range);
    RUN_TEST(test_refused_shapes);
    RUN_TEST(test_cut_anywhere);
    return check_summary();
}
