/* Instruction starts (symbols/codemap.c) on a small ELF written here: 16- and 32-bit Thumb
 * instructions, a literal pool that looks like a 32-bit prefix, padding, code without a function
 * symbol, A32 code and an unsized function; then the profile's check of sampled PCs against them
 * (profile/diagnose.c): starts pass, PCs inside instructions or data are counted and judged. */
#include "../profile/profile.h"
#include "../symbols/codemap.h"
#include "check.h"
#include "elf_writer.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE 0x08000000u

/* The code, as little-endian halfwords from BASE. */
static const uint16_t CODE[] = {
    /* 0x00 thumb_a (16 bytes) */ 0xB580, 0xF000, 0xF800, 0xF8DF, 0x0004, 0xBD80,
    /* 0x0c its literal pool  */ 0xF000, 0xF000,
    /* 0x10 padding           */ 0xBF00, 0xBF00,
    /* 0x14 thumb_b (12 bytes) */ 0xE92D, 0x4FF0, 0x2000, 0xE8BD, 0x8FF0, 0x4770,
    /* 0x20 code, no function */ 0x4770, 0xF3AF, 0x8000,
    /* 0x26 padding           */ 0xBF00,
    /* 0x28 arm_c (A32, 8)    */ 0xFF1E, 0xE12F, 0xFF1E, 0xE12F,
    /* 0x30 unsized (Thumb)   */ 0xF000, 0xF800, 0x4770, 0x4770,
};

struct test_sym {
    const char *name;
    uint32_t value, size;
    int type;
};

static const struct test_sym SYMS[] = {
    {"$t", BASE + 0x00, 0, STT_NOTYPE}, {"thumb_a", BASE + 0x01, 16, STT_FUNC}, {"$d", BASE + 0x0c, 0, STT_NOTYPE},
    {"$t", BASE + 0x14, 0, STT_NOTYPE}, {"thumb_b", BASE + 0x15, 12, STT_FUNC}, {"$t", BASE + 0x20, 0, STT_NOTYPE},
    {"$a", BASE + 0x28, 0, STT_NOTYPE}, {"arm_c", BASE + 0x28, 8, STT_FUNC},   {"$t.x", BASE + 0x30, 0, STT_NOTYPE},
    {"unsized", BASE + 0x31, 0, STT_FUNC},
};

/* The ELF, with the mapping symbols or without them. */
static bool write_elf(const char *path, bool mapping)
{
    static char str[256];
    static Elf32_Sym syms[16];
    size_t n_str = 1, n_syms = 1;
    memset(syms, 0, sizeof syms);
    for (size_t i = 0; i < sizeof SYMS / sizeof SYMS[0]; i++) {
        if (!mapping && SYMS[i].name[0] == '$')
            continue;
        syms[n_syms++] = (Elf32_Sym){.st_name = (Elf32_Word)n_str, .st_value = SYMS[i].value, .st_size = SYMS[i].size,
                                     .st_info = ELF32_ST_INFO(STB_LOCAL, SYMS[i].type), .st_shndx = 1};
        strcpy(str + n_str, SYMS[i].name);
        n_str += strlen(SYMS[i].name) + 1;
    }
    const struct elf_writer_section sections[] = {
        {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, BASE, (void *)CODE, sizeof CODE, ELF_T_BYTE, 0, 0, 0},
        {".symtab", SHT_SYMTAB, 0, 0, syms, n_syms * sizeof *syms, ELF_T_SYM, 3, (Elf32_Word)n_syms /* all local */,
         sizeof(Elf32_Sym)},
        {".strtab", SHT_STRTAB, 0, 0, str, n_str, ELF_T_BYTE, 0, 0, 0},
    };
    return elf_writer_write(path, sections, 3);
}

static struct sym_table *open_test_elf(bool mapping, char *path)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    close(fd);
    char err[256];
    struct sym_table *t = write_elf(path, mapping) ? sym_open(path, err, sizeof err) : NULL;
    if (!t)
        printf("     (test ELF: %s)\n", err);
    return t;
}

static void test_starts(void)
{
    char path[] = "/tmp/cmprof-codemap-XXXXXX";
    struct sym_table *t = open_test_elf(true, path);
    struct codemap *m = t ? codemap_new(t) : NULL;
    CHECK(m != NULL);
    if (m) {
        /* one letter per halfword from BASE: s an instruction starts there, n not */
        static const char want[] = "ssnsnsnnnn" /* 0x00-0x12: thumb_a (bl, ldr.w), its pool, padding */
                                   "snssns"     /* 0x14-0x1e: thumb_b (push.w, pop.w) */
                                   "ssns"       /* 0x20-0x26: code without a function symbol, to the next one */
                                   "snsn"       /* 0x28-0x2e: A32, a word each */
                                   "snss";      /* 0x30-0x36: unsized: decoded to the end */
        char got[sizeof want] = "";
        for (uint32_t k = 0; k + 1 < sizeof want; k++)
            got[k] = codemap_at(m, BASE + 2 * k) == CODEMAP_START ? 's' : 'n';
        if (strcmp(got, want) != 0)
            printf("     got  %s\n     want %s\n", got, want);
        CHECK(strcmp(got, want) == 0);
        /* regions are decoded when first asked about: in any order, the same answers */
        struct codemap *back = codemap_new(t);
        char rev[sizeof want] = "";
        for (uint32_t k = sizeof want - 1; back && k-- > 0;)
            rev[k] = codemap_at(back, BASE + 2 * k) == CODEMAP_START ? 's' : 'n';
        CHECK(back && strcmp(rev, want) == 0);
        codemap_free(back);
        CHECK(codemap_at(m, BASE + 0x15) == CODEMAP_START); /* the Thumb bit */
        CHECK(codemap_at(m, BASE - 2) == CODEMAP_OUTSIDE && codemap_at(m, BASE + sizeof CODE) == CODEMAP_OUTSIDE);
    }
    codemap_free(m);
    sym_close(t);
    unlink(path);
}

/* Without mapping symbols nothing tells Thumb from A32 or code from data: no map, no check. */
static void test_no_mapping_symbols(void)
{
    char path[] = "/tmp/cmprof-codemap-XXXXXX";
    struct sym_table *t = open_test_elf(false, path);
    CHECK(t != NULL && codemap_new(t) == NULL);
    struct prof *p = t ? prof_new(t) : NULL;
    for (int k = 0; p && k < 100; k++)
        prof_add_pc(p, BASE + 0x04 + 4u * (uint32_t)(k % 6), false, 0);
    struct prof_code_check cc;
    if (p)
        prof_check_code(p, &cc);
    CHECK(p && !cc.checked && !cc.wrong);
    prof_free(p);
    sym_close(t);
    unlink(path);
}

static const uint32_t STARTS[] = {0x00, 0x02, 0x06, 0x0a, 0x14, 0x18, 0x1a, 0x1e, 0x20, 0x22, 0x28, 0x2c, 0x30, 0x34};
static const uint32_t NOT_STARTS[] = {0x04, 0x08, 0x0c, 0x0e, 0x10, 0x12, 0x16, 0x1c, 0x24, 0x2a, 0x2e, 0x32};

/* n samples over the first `kinds` addresses of a list, in turn */
static void add(struct prof *p, const uint32_t *offsets, size_t kinds, int n)
{
    for (int k = 0; k < n; k++)
        prof_add_pc(p, BASE + offsets[(size_t)k % kinds], false, 0);
}

/* Histogram buckets (each of its samples was a PC): a bucket with samples holds an instruction start
 * on the right ELF; 2-byte buckets inside instructions, over the literal pool and the padding do not,
 * and three such with 5 % of the samples say another build (before, buckets were never checked: a
 * histogram capture read with another program's ELF linked at the same base passed as plausible). */
static void test_bucket_check(struct prof *p)
{
    struct prof_code_check cc;
    struct prof_diag d[16];
    prof_reset(p);
    for (size_t i = 0; i < sizeof STARTS / sizeof STARTS[0]; i++)
        prof_add_bucket(p, BASE + STARTS[i], 2, 100);
    prof_check_code(p, &cc);
    CHECK(cc.checked && cc.buckets && cc.pcs == 14 && cc.bad_pcs == 0 && !cc.wrong);
    prof_add_bucket(p, BASE + 0x04, 2, 30); /* inside a 32-bit instruction */
    prof_add_bucket(p, BASE + 0x0c, 2, 50); /* the literal pool */
    prof_check_code(p, &cc);
    CHECK(cc.bad_pcs == 2 && !cc.wrong); /* two places: too few */
    prof_add_bucket(p, BASE + 0x10, 2, 20); /* padding */
    prof_check_code(p, &cc);
    CHECK(cc.bad_pcs == 3 && cc.bad_samples == 100 && cc.wrong && cc.example == BASE + 0x0c);
    size_t nd = prof_diagnose(p, d, 16), found = 0;
    for (size_t i = 0; i < nd; i++)
        found += d[i].kind == DIAG_NOT_STARTS && strstr(d[i].text, "3 of 17 histogram buckets") &&
                 strstr(d[i].text, "0x0800000c");
    CHECK(found == 1);
    struct prof_trust t;
    prof_trust(p, &t);
    CHECK(t.wrong_elf && t.not_starts);
    prof_reset(p); /* 4-byte buckets: one holding the end of an instruction and a start is fine */
    prof_add_bucket(p, BASE + 0x04, 4, 100);
    prof_add_bucket(p, BASE + 0x0c, 4, 100); /* all literal pool */
    prof_check_code(p, &cc);
    CHECK(cc.pcs == 2 && cc.bad_pcs == 1 && cc.example == BASE + 0x0c);
}

static void test_profile_check(void)
{
    char path[] = "/tmp/cmprof-codemap-XXXXXX";
    struct sym_table *t = open_test_elf(true, path);
    struct prof *p = t ? prof_new(t) : NULL;
    struct prof_code_check cc;
    struct prof_diag d[16];
    CHECK(p != NULL);
    if (!p)
        return;
    add(p, STARTS, 14, 1000); /* the right ELF: every PC a start */
    prof_add_pc(p, 0x20000000u, false, 0); /* outside the code: the other check's */
    prof_check_code(p, &cc);
    CHECK(cc.checked && cc.pcs == 14 && cc.bad_pcs == 0 && !cc.wrong);
    add(p, NOT_STARTS, PROF_BAD_PCS_MIN - 1, 500); /* many samples, too few places */
    prof_check_code(p, &cc);
    CHECK(cc.bad_pcs == PROF_BAD_PCS_MIN - 1 && !cc.wrong);
    prof_reset(p);
    add(p, STARTS, 14, 1000);
    add(p, NOT_STARTS, 12, 12 * 4); /* many places, too few samples (under 5 %) */
    prof_check_code(p, &cc);
    CHECK(cc.bad_pcs == 12 && cc.share < PROF_BAD_SHARE_MIN && !cc.wrong);
    add(p, NOT_STARTS, 12, 12 * 6);
    add(p, NOT_STARTS, 1, 3); /* 0x04 the most sampled */
    prof_check_code(p, &cc);
    CHECK(cc.bad_pcs == 12 && cc.share >= PROF_BAD_SHARE_MIN && cc.wrong && cc.example == BASE + 0x04);
    size_t nd = prof_diagnose(p, d, 16), found = 0;
    for (size_t i = 0; i < nd; i++)
        found += d[i].kind == DIAG_NOT_STARTS && strstr(d[i].text, "0x08000004") != NULL;
    CHECK(found == 1);
    prof_reset(p); /* a histogram bucket over code holds a start: checked, fine */
    prof_add_bucket(p, BASE, 0x38, 1000);
    prof_check_code(p, &cc);
    CHECK(cc.checked && cc.buckets && cc.pcs == 1 && cc.bad_pcs == 0 && !cc.wrong);
    test_bucket_check(p);
    prof_free(p);
    sym_close(t);
    unlink(path);
}

int main(void)
{
    RUN_TEST(test_starts);
    RUN_TEST(test_no_mapping_symbols);
    RUN_TEST(test_profile_check);
    return check_summary();
}
