/* Call frames: the ELF's .debug_frame (DWARF call-frame information) read with a bounds-checked
 * cursor, or where it has none the ARM exception-handling index (.ARM.exidx, exidx.c), and the
 * unwinder that walks a halted core's stack with them. libdwarf is not used here:
 * the unwinder runs in this process on every halt, where a crash in libdwarf could not be
 * contained as the DWARF reader's child contains it; anything unexpected ends the walk instead. */
#include "exidx.h"
#include "leaf.h"
#include "rawdwarf.h"
#include "../base/grow.h"

#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

#define REMEMBER_MAX 8 /* DW_CFA_remember_state depth */

struct fde {
    uint32_t lo, hi;        /* the code it covers */
    uint32_t cie;           /* offset of its CIE in .debug_frame */
    uint32_t ins, ins_end;  /* its instructions */
};

struct cie {
    uint32_t code_align;
    int32_t data_align;
    uint32_t ra_reg;
    uint32_t ins, ins_end; /* initial instructions */
};

/* The register rules at one address: CFA = reg + offset; saved registers at CFA + offset. */
struct rules {
    uint32_t cfa_reg;
    int32_t cfa_off;
    uint16_t saved; /* bit r: r is saved */
    int32_t off[16];
    bool from_code;        /* no CFI: the code of the function [fn_lo, fn_hi) proved it a leaf */
    uint32_t fn_lo, fn_hi;
};

struct span_in_file {
    uint32_t addr, size;
    uint64_t off;
};

#define MAX_SPANS 64
#define EXC_RETURN_MIN 0xFFFFFF00u /* a return address this high is an exception return code */
/* ARMv8-M's EXC_RETURN bits (ARMv7-M's codes have all three set): S, the frame is on the Secure
 * stack; DCRS clear, the integrity signature, a reserved word and r4-r11 (40 bytes) were stacked
 * below the frame; ES, the exception was taken to Secure state (its handler runs on that stack) */
#define EXC_RETURN_S 0x40u
#define EXC_RETURN_DCRS 0x20u
#define EXC_RETURN_ES 0x01u
#define EXC_RETURN_FTYPE 0x10u /* set: no FP state in the frame */
#define LEAF_CACHE 16 /* functions whose code was analysed, by start */

struct leaf_seen {
    uint32_t lo, hi;
    bool known, keeps_frame;
};

struct frames {
    const uint8_t *sec;
    size_t len;
    struct fde *fdes; /* sorted by lo */
    size_t n_fdes;
    struct sym_table *t;
    uint8_t *exidx;           /* .ARM.exidx's bytes, or NULL */
    struct exidx_table index; /* over them */
    struct span_in_file spans[MAX_SPANS]; /* the image's loaded bytes in the file (.ARM.extab) */
    size_t n_spans;
    struct leaf_seen leaves[LEAF_CACHE];
};

static int cmp_fde(const void *a, const void *b)
{
    const struct fde *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Index every FDE of the section (32-bit DWARF, 4-byte addresses, as ARM toolchains write it);
 * entries of any other shape are skipped. */
static void index_fdes(struct frames *f)
{
    size_t cap = 0;
    struct cur c = {f->sec, f->sec + f->len, false};
    while (!c.bad && c.p < c.end) {
        uint32_t at = (uint32_t)(c.p - f->sec);
        uint64_t length = cur_fixed(&c, 4);
        if (c.bad || length == 0xffffffffu || length > (uint64_t)(c.end - c.p))
            break; /* 64-bit DWARF, or damage: what came before is kept */
        struct cur e = {c.p, c.p + length, false};
        c.p += length;
        uint32_t id = (uint32_t)cur_fixed(&e, 4);
        if (id == 0xffffffffu)
            continue; /* a CIE: read when an FDE needs it */
        struct fde d;
        d.cie = id;
        d.lo = (uint32_t)cur_fixed(&e, 4) & ~1u;
        uint32_t range = (uint32_t)cur_fixed(&e, 4);
        if (e.bad || d.cie >= at || range == 0 || d.lo + range < d.lo)
            continue;
        d.hi = d.lo + range;
        d.ins = (uint32_t)(e.p - f->sec);
        d.ins_end = (uint32_t)(e.end - f->sec);
        if (!grow_array((void **)&f->fdes, &cap, f->n_fdes + 1, sizeof *f->fdes, 64))
            break;
        f->fdes[f->n_fdes++] = d;
    }
    if (f->n_fdes)
        qsort(f->fdes, f->n_fdes, sizeof *f->fdes, cmp_fde);
}

static bool read_cie(const struct frames *f, uint32_t off, struct cie *ci)
{
    struct cur c = {f->sec + off, f->sec + f->len, false};
    uint64_t length = cur_fixed(&c, 4);
    if (c.bad || length > (uint64_t)(c.end - c.p))
        return false;
    c.end = c.p + length;
    if (cur_fixed(&c, 4) != 0xffffffffu)
        return false;
    uint8_t version = (uint8_t)cur_fixed(&c, 1);
    if (version != 1 && version != 3 && version != 4)
        return false;
    if (!cur_need(&c, 1) || *c.p != 0) /* an augmentation: not in .debug_frame from GCC */
        return false;
    c.p++;
    if (version == 4 && (cur_fixed(&c, 1) != 4 || cur_fixed(&c, 1) != 0))
        return false; /* address size 4, no segment selector */
    ci->code_align = (uint32_t)cur_uleb(&c);
    ci->data_align = (int32_t)cur_sleb(&c);
    ci->ra_reg = version == 1 ? (uint32_t)cur_fixed(&c, 1) : (uint32_t)cur_uleb(&c);
    ci->ins = (uint32_t)(c.p - f->sec);
    ci->ins_end = (uint32_t)(c.end - f->sec);
    return !c.bad && ci->code_align;
}

/* Run CFA instructions from `from` to `to` while the location stays at or below pc. Returns false
 * on an instruction this unwinder does not follow (expressions, registers kept in registers). */
static bool run(const struct frames *f, const struct cie *ci, uint32_t from, uint32_t to, uint32_t pc,
                uint32_t *loc, struct rules *r, const struct rules *initial)
{
    struct rules stack[REMEMBER_MAX];
    int depth = 0;
    struct cur c = {f->sec + from, f->sec + to, false};
    while (!c.bad && c.p < c.end) {
        uint8_t op = (uint8_t)cur_fixed(&c, 1);
        uint32_t advance = 0, reg = 0;
        int64_t off = 0;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            advance = (op & 0x3fu) * ci->code_align;
            break;
        case 2: /* DW_CFA_offset */
            reg = op & 0x3fu;
            off = (int64_t)cur_uleb(&c) * ci->data_align;
            if (reg < 16) {
                r->saved |= (uint16_t)(1u << reg);
                r->off[reg] = (int32_t)off;
            }
            continue;
        case 3: /* DW_CFA_restore */
            reg = op & 0x3fu;
            if (reg < 16) {
                r->saved = (uint16_t)((r->saved & ~(1u << reg)) | (initial->saved & (1u << reg)));
                r->off[reg] = initial->off[reg];
            }
            continue;
        default:
            switch (op) {
            case 0x00: /* nop */
                continue;
            case 0x01: /* set_loc */
                *loc = (uint32_t)cur_fixed(&c, 4) & ~1u;
                if (*loc > pc)
                    return true;
                continue;
            case 0x02:
                advance = (uint32_t)cur_fixed(&c, 1) * ci->code_align;
                break;
            case 0x03:
                advance = (uint32_t)cur_fixed(&c, 2) * ci->code_align;
                break;
            case 0x04:
                advance = (uint32_t)cur_fixed(&c, 4) * ci->code_align;
                break;
            case 0x05: /* offset_extended */
            case 0x11: /* offset_extended_sf */
                reg = (uint32_t)cur_uleb(&c);
                off = op == 0x05 ? (int64_t)cur_uleb(&c) * ci->data_align : cur_sleb(&c) * ci->data_align;
                if (reg < 16) {
                    r->saved |= (uint16_t)(1u << reg);
                    r->off[reg] = (int32_t)off;
                }
                continue;
            case 0x06: /* restore_extended */
                reg = (uint32_t)cur_uleb(&c);
                if (reg < 16) {
                    r->saved = (uint16_t)((r->saved & ~(1u << reg)) | (initial->saved & (1u << reg)));
                    r->off[reg] = initial->off[reg];
                }
                continue;
            case 0x07: /* undefined */
            case 0x08: /* same_value */
                reg = (uint32_t)cur_uleb(&c);
                if (reg < 16)
                    r->saved = (uint16_t)(r->saved & ~(1u << reg));
                continue;
            case 0x0a: /* remember_state */
                if (depth == REMEMBER_MAX)
                    return false;
                stack[depth++] = *r;
                continue;
            case 0x0b: /* restore_state */
                if (depth == 0)
                    return false;
                *r = stack[--depth];
                continue;
            case 0x0c: /* def_cfa */
                r->cfa_reg = (uint32_t)cur_uleb(&c);
                r->cfa_off = (int32_t)cur_uleb(&c);
                continue;
            case 0x0d: /* def_cfa_register */
                r->cfa_reg = (uint32_t)cur_uleb(&c);
                continue;
            case 0x0e: /* def_cfa_offset */
                r->cfa_off = (int32_t)cur_uleb(&c);
                continue;
            case 0x12: /* def_cfa_sf */
                r->cfa_reg = (uint32_t)cur_uleb(&c);
                r->cfa_off = (int32_t)(cur_sleb(&c) * ci->data_align);
                continue;
            case 0x13: /* def_cfa_offset_sf */
                r->cfa_off = (int32_t)(cur_sleb(&c) * ci->data_align);
                continue;
            case 0x2e: /* GNU_args_size */
                cur_uleb(&c);
                continue;
            default: /* expressions, register-in-register rules, vendor extensions */
                return false;
            }
        }
        if (*loc + advance > pc)
            return true; /* the row for pc is the one built so far */
        *loc += advance;
    }
    return !c.bad;
}

/* The image's bytes at addr: code from the code sections, anything else loaded (.ARM.extab)
 * from the file. */
static size_t read_image(void *ctx, uint32_t addr, uint8_t *buf, size_t n)
{
    struct frames *f = ctx;
    size_t got = sym_read_code(f->t, addr, buf, n);
    if (got)
        return got;
    for (size_t i = 0; i < f->n_spans; i++) {
        const struct span_in_file *s = &f->spans[i];
        if (addr >= s->addr && addr - s->addr < s->size) {
            size_t avail = s->size - (addr - s->addr);
            ssize_t r = pread(f->t->code_fd, buf, n < avail ? n : avail, (off_t)(s->off + (addr - s->addr)));
            return r > 0 ? (size_t)r : 0;
        }
    }
    return 0;
}

static bool function_of(void *ctx, uint32_t pc, uint32_t *lo, uint32_t *hi)
{
    struct frames *f = ctx;
    return sym_function_from(f->t, pc, lo, hi) != 0;
}

/* The ELF's .ARM.exidx and the file spans of its loaded sections, from the section headers
 * (a little-endian ELF32, as ARM toolchains write it); nothing when they are absent or damaged. */
static void load_exidx(struct frames *f, int fd)
{
    Elf32_Ehdr eh;
    if (fd < 0 || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_ident[EI_CLASS] != ELFCLASS32 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf32_Shdr) || eh.e_shnum > 4096)
        return;
    for (unsigned i = 1; i < eh.e_shnum; i++) {
        Elf32_Shdr sh;
        if (pread(fd, &sh, sizeof sh, (off_t)eh.e_shoff + (off_t)i * (off_t)sizeof sh) != (ssize_t)sizeof sh)
            return;
        if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) && sh.sh_size && f->n_spans < MAX_SPANS)
            f->spans[f->n_spans++] = (struct span_in_file){sh.sh_addr, sh.sh_size, sh.sh_offset};
        if (sh.sh_type == SHT_ARM_EXIDX && !f->exidx && sh.sh_size >= 8 && sh.sh_size <= (64u << 20)) {
            uint32_t len = sh.sh_size & ~7u;
            f->exidx = malloc(len);
            if (f->exidx && pread(fd, f->exidx, len, (off_t)sh.sh_offset) != (ssize_t)len) {
                free(f->exidx);
                f->exidx = NULL;
            }
            f->index = (struct exidx_table){f->exidx, f->exidx ? len : 0, sh.sh_addr, read_image, function_of, f};
        }
    }
}

static struct frames *frames_of(struct sym_table *t)
{
    if (!t->frames && !t->frames_failed) {
        struct frames *f = calloc(1, sizeof *f);
        if (f && t->debug_frame_len && !t->debug_frame && (t->debug_frame = malloc(t->debug_frame_len)) != NULL &&
            pread(t->code_fd, t->debug_frame, t->debug_frame_len, (off_t)t->debug_frame_off) !=
                (ssize_t)t->debug_frame_len) {
            free(t->debug_frame);
            t->debug_frame = NULL;
        }
        if (!f) {
            t->frames_failed = true;
            return NULL;
        }
        f->t = t;
        f->sec = t->debug_frame;
        f->len = t->debug_frame ? t->debug_frame_len : 0;
        if (f->sec)
            index_fdes(f);
        load_exidx(f, t->code_fd);
        t->frames = f;
    }
    return t->frames;
}

/* The register rules at pc from .ARM.exidx, when no FDE covers it. */
static bool exidx_rules(struct frames *f, uint32_t pc, bool leaf, struct rules *r)
{
    struct exidx_rules x;
    if (!f->exidx || exidx_rules_at(&f->index, pc, leaf, &x) != EXIDX_OK)
        return false;
    memset(r, 0, sizeof *r);
    r->cfa_reg = x.cfa_reg;
    r->cfa_off = x.cfa_off;
    r->saved = x.saved;
    memcpy(r->off, x.off, sizeof r->off);
    return r->cfa_reg < 16;
}

/* The rules at the interrupted pc of a function without (followed) CFI, when its own code proves it
 * a leaf that keeps its caller's frame: CFA = SP, the return address in LR. */
static bool code_rules(struct frames *f, uint32_t pc, struct rules *r)
{
    uint32_t lo, hi;
    if (!sym_function_from(f->t, pc, &lo, &hi))
        return false;
    struct leaf_seen *seen = &f->leaves[(lo >> 1) % LEAF_CACHE];
    if (!seen->known || seen->lo != lo || seen->hi != hi)
        *seen = (struct leaf_seen){lo, hi, true, leaf_keeps_frame(read_image, f, lo, hi)};
    if (!seen->keeps_frame)
        return false;
    memset(r, 0, sizeof *r);
    r->cfa_reg = 13;
    r->from_code = true;
    r->fn_lo = lo;
    r->fn_hi = hi;
    return true;
}

/* The register rules at pc from .debug_frame or .ARM.exidx; false when neither covers it, or its
 * instructions are not followed. leaf: pc is the interrupted instruction (else inside a call). */
static bool cfi_rules_at(struct sym_table *t, uint32_t pc, bool leaf, struct rules *r)
{
    struct frames *f = frames_of(t);
    if (!f)
        return false;
    size_t lo = 0, hi = f->n_fdes;
    while (lo < hi) { /* the last FDE starting at or before pc */
        size_t mid = (lo + hi) / 2;
        if (f->fdes[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pc >= f->fdes[lo - 1].hi)
        return exidx_rules(f, pc, leaf, r);
    const struct fde *d = &f->fdes[lo - 1];
    struct cie ci;
    if (!read_cie(f, d->cie, &ci))
        return false;
    memset(r, 0, sizeof *r);
    r->cfa_reg = 13; /* sp */
    uint32_t loc = d->lo;
    struct rules initial;
    memset(&initial, 0, sizeof initial);
    if (!run(f, &ci, ci.ins, ci.ins_end, UINT32_MAX, &loc, r, &initial))
        return false;
    initial = *r;
    loc = d->lo;
    return run(f, &ci, d->ins, d->ins_end, pc, &loc, r, &initial) && r->cfa_reg < 16;
}

/* The register rules at pc: from the CFI, or for the interrupted instruction of a function the
 * CFI does not describe, from the function's code (code_rules). */
static bool rules_at(struct sym_table *t, uint32_t pc, bool leaf, struct rules *r)
{
    if (cfi_rules_at(t, pc, leaf, r))
        return true;
    struct frames *f = frames_of(t);
    return leaf && f && code_rules(f, pc, r);
}

static bool in_vectors(const struct sym_table *t, uint32_t fn)
{
    for (size_t k = 1; k < t->n_vectors; k++)
        if ((t->vectors[k] & ~1u) == fn)
            return true;
    return false;
}

/* Whether return address ret (the live LR) is proven the caller of the leaf that code_rules
 * analysed: the call before it is a BL to the leaf, a BLX Rm, or a BL to a function that branches
 * to the leaf (a tail call); an exception return code when the leaf is an exception vector. */
static bool leaf_called(struct sym_table *t, const struct rules *r, uint32_t ret)
{
    uint32_t next = ret & ~1u, target, g_lo, g_hi;
    if (ret >= EXC_RETURN_MIN)
        return in_vectors(t, r->fn_lo);
    if (!(ret & 1u) || !sym_in_code(t, next))
        return false;
    struct frames *f = t->frames;
    if (leaf_blx_before(read_image, f, next))
        return true;
    if (!leaf_bl_target(read_image, f, next, &target))
        return false;
    if (target == r->fn_lo)
        return true;
    return sym_function_from(t, target, &g_lo, &g_hi) && g_lo == target &&
           leaf_branches_to(read_image, f, g_lo, g_hi, r->fn_lo);
}

void symt_frames_free(struct sym_table *t)
{
    struct frames *f = t->frames;
    if (f) {
        free(f->fdes);
        free(f->exidx);
    }
    free(f);
    t->frames = NULL;
}

/* Where an exception's stacked frame (r0-r3, r12, LR, PC, xPSR) starts, from the stack pointer it
 * was pushed on and the EXC_RETURN value (ARMv8-M's 40 bytes of callee state first, unless DCRS), and
 * through *sp_before the stack pointer the interrupted code had (the frame, FP state unless bit 4,
 * and the alignment word that xPSR's bit 9 marks). FP state is S0-S15, FPSCR and a reserved word (72
 * bytes), and S16-S31 too (64 more) in a Secure context's frame when FPCCR.TS is set (ts). */
static uint32_t exception_frame(uint32_t exc_return, uint32_t sp, uint32_t stacked_xpsr, bool ts, uint32_t *sp_before)
{
    uint32_t at = sp + ((exc_return & EXC_RETURN_DCRS) ? 0u : 40u);
    uint32_t fp = (exc_return & EXC_RETURN_FTYPE) ? 0u : (ts && (exc_return & EXC_RETURN_S)) ? 136u : 72u;
    if (sp_before)
        *sp_before = at + 32u + ((stacked_xpsr & (1u << 9)) ? 4u : 0u) + fp;
    return at;
}

/* FPCCR.TS, when a frame's size depends on it (FP state in a Secure context's frame): read through
 * the caller's read32 (SYM_FPCCR); a caller that cannot read it gets the frame without S16-S31, as on
 * a core without the Security Extension (where the bit reads 0). */
static bool secure_fp_ts(uint32_t exc_return, bool (*read32)(void *ctx, uint32_t addr, uint32_t *value), void *ctx)
{
    uint32_t fpccr;
    return !(exc_return & EXC_RETURN_FTYPE) && (exc_return & EXC_RETURN_S) && read32(ctx, SYM_FPCCR, &fpccr) &&
           (fpccr & SYM_FPCCR_TS);
}

size_t sym_unwind(struct sym_table *t, const uint32_t regs_in[16],
                  bool (*read32)(void *ctx, uint32_t addr, uint32_t *value), void *ctx, uint32_t *out, size_t max,
                  uint32_t *psp_return)
{
    if (psp_return)
        *psp_return = 0;
    uint32_t r[16];
    memcpy(r, regs_in, sizeof r);
    size_t n = 0;
    uint32_t pc = r[15] & ~1u, prev_sp = r[13];
    bool leaf = true; /* pc is where the core stopped (not a return address), and LR is live */
    while (n < max) {
        struct rules ru;
        /* a return address lies after its call: the call's own row is the one before it */
        if (!rules_at(t, leaf ? pc : pc - 2u, leaf, &ru))
            break;
        uint32_t cfa = r[ru.cfa_reg] + (uint32_t)ru.cfa_off;
        if (cfa < prev_sp || (!leaf && cfa == prev_sp))
            break; /* the stack only grows back up: anything else is a loop or garbage */
        prev_sp = cfa;
        uint32_t saved[16];
        memcpy(saved, r, sizeof saved);
        bool ok = true;
        for (unsigned k = 0; k < 16 && ok; k++)
            if (ru.saved & (1u << k))
                ok = read32(ctx, cfa + (uint32_t)ru.off[k], &saved[k]);
        if (!ok)
            break;
        uint32_t ret = saved[14]; /* the return address: the saved LR, or LR itself in a leaf */
        if (!(ru.saved & (1u << 14)) && !leaf)
            break; /* LR neither saved nor live: this frame cannot be left */
        if (ru.from_code && !leaf_called(t, &ru, ret))
            break;
        memcpy(r, saved, sizeof r);
        r[13] = cfa;
        if (ret >= EXC_RETURN_MIN) {
            /* an exception handler's caller is the interrupted code: its frame was stacked on the
             * main stack at the CFA, or on the process stack (PSP, which the caller must read) */
            uint32_t f[8], at = exception_frame(ret, cfa, 0, false, NULL);
            if (!(ret & EXC_RETURN_S) != !(ret & EXC_RETURN_ES))
                break; /* ARMv8-M: stacked on the other Security state's stack, not this handler's */
            if (ret & 4u) { /* the process stack: the caller reads PSP and goes on from its frame */
                if (psp_return)
                    *psp_return = ret;
                break;
            }
            for (unsigned k = 0; k < 8 && ok; k++)
                ok = read32(ctx, at + 4u * k, &f[k]);
            if (!ok)
                break;
            r[0] = f[0], r[1] = f[1], r[2] = f[2], r[3] = f[3], r[12] = f[4], r[14] = f[5];
            exception_frame(ret, cfa, f[7], secure_fp_ts(ret, read32, ctx), &r[13]);
            pc = f[6] & ~1u;
            if (!pc)
                break;
            out[n++] = pc; /* the interrupted instruction itself, not a call site */
            leaf = true;   /* its LR is live again */
            r[15] = pc;
            prev_sp = r[13] - 1u; /* the interrupted frame's CFA may equal its SP */
            continue;
        }
        uint32_t next = ret & ~1u, fn_lo, fn_hi;
        if (next < 2u)
            break;
        /* a return address at a function's first instruction was set, not left by a call (an RTOS
         * starts each task with LR = its exit trap): the code before it is another function */
        if (sym_function_from(t, next, &fn_lo, &fn_hi) && fn_lo == next)
            break;
        out[n++] = next - 2u; /* inside the call instruction (2 or 4 bytes, Thumb or ARM) */
        pc = next;
        r[15] = next;
        leaf = false;
    }
    return n;
}

/* What a firmware sampler's stack evidence says of the word at byte offset `at` above the
 * interrupted SP. */
enum word_seen { WORD_RETURN, WORD_NOT_CODE, WORD_UNKNOWN };

static enum word_seen word_at(const struct sym_stack_words *w, int64_t at, uint32_t *value)
{
    if (at < 0 || at % 4)
        return WORD_NOT_CODE; /* no return address is saved below the SP or unaligned */
    if (at / 4 >= (int64_t)w->scanned)
        return WORD_UNKNOWN;
    uint32_t index = (uint32_t)(at / 4);
    size_t lo = 0, hi = w->n;
    while (lo < hi) { /* the pairs rise by offset */
        size_t mid = (lo + hi) / 2;
        if (w->pairs[2 * mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < w->n && w->pairs[2 * lo] == index && w->pairs[2 * lo + 1] != SYM_FRAME_POINTER_WORD) {
        *value = w->pairs[2 * lo + 1];
        return WORD_RETURN;
    }
    return WORD_NOT_CODE; /* scanned, and it was no return address into the code */
}

/* Whether the Thumb instruction before return address `next` (even) is a call: BL, or BLX Rm. */
static bool after_call(struct sym_table *t, uint32_t next)
{
    uint8_t b[4];
    if (next < 4u || sym_read_code(t, next - 4u, b, 4) != 4)
        return false;
    uint16_t first = (uint16_t)(b[0] | b[1] << 8), last = (uint16_t)(b[2] | b[3] << 8);
    return (last & 0xFF87u) == 0x4780u || ((first & 0xF800u) == 0xF000u && (last & 0xD000u) == 0xD000u);
}

/* The target of the BL before return address `next`; false for anything else (BLX Rm included). */
static bool bl_target(struct sym_table *t, uint32_t next, uint32_t *target)
{
    uint8_t b[4];
    if (next < 4u || sym_read_code(t, next - 4u, b, 4) != 4)
        return false;
    uint32_t hi = (uint32_t)(b[0] | b[1] << 8), lo = (uint32_t)(b[2] | b[3] << 8);
    if ((hi & 0xF800u) != 0xF000u || (lo & 0xD000u) != 0xD000u)
        return false;
    uint32_t s = (hi >> 10) & 1u, i1 = !(((lo >> 13) & 1u) ^ s), i2 = !(((lo >> 11) & 1u) ^ s);
    uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (hi & 0x3FFu) << 12 | (lo & 0x7FFu) << 1;
    *target = next + (imm ^ 0x1000000u) - 0x1000000u; /* sign-extended from 25 bits */
    return true;
}

/* A live LR that points back into pc's own function is left over from a call this function made
 * (its CFI does not say it saved LR: a naked or hand-written function): not its return address,
 * unless the call was to the function itself (recursion, sampled before its push). */
static bool stale_lr(struct sym_table *t, uint32_t pc, uint32_t next)
{
    uint32_t lo, hi, target;
    if (!sym_function_from(t, pc, &lo, &hi) || next - 2u < lo || next - 2u >= hi)
        return false;
    return !(bl_target(t, next, &target) && target == lo);
}

/* Whether pc lies in the function the reset vector starts: the outermost frame there is. */
static bool in_reset_handler(const struct sym_table *t, uint32_t pc)
{
    uint32_t lo, hi;
    return t->n_vectors > 1 && t->vectors[1] && sym_function_from(t, t->vectors[1] & ~1u, &lo, &hi) && pc >= lo &&
           pc < hi;
}

/* r7's byte offset above the interrupted SP, when the evidence says where it pointed; else -1. */
static int64_t frame_pointer(const struct sym_stack_words *w)
{
    for (size_t k = 0; k < w->n; k++)
        if (w->pairs[2 * k + 1] == SYM_FRAME_POINTER_WORD)
            return 4 * (int64_t)w->pairs[2 * k];
    return -1;
}

size_t sym_unwind_words(struct sym_table *t, const struct sym_stack_words *w, uint32_t *out, size_t max,
                        bool *unproven)
{
    size_t n = 0;
    uint32_t pc = w->pc & ~1u;
    int64_t sp = 0, fp = frame_pointer(w); /* bytes above the interrupted SP: the SP, r7 (or -1) */
    bool leaf = true, proven = false;
    while (n < max) {
        struct rules ru;
        if (!leaf && in_reset_handler(t, pc)) {
            proven = true; /* nothing called the reset handler */
            break;
        }
        if (!rules_at(t, leaf ? pc : pc - 2u, leaf, &ru) || !(ru.cfa_reg == 13 || (ru.cfa_reg == 7 && fp >= 0)))
            break; /* no CFI here, or a CFA on a register the evidence does not hold */
        int64_t cfa = (ru.cfa_reg == 7 ? fp : sp) + ru.cfa_off;
        if (cfa < sp || (!leaf && cfa == sp))
            break; /* the stack only grows back up */
        uint32_t ret = 0;
        if (ru.saved & (1u << 14)) {
            if (word_at(w, cfa + ru.off[14], &ret) != WORD_RETURN)
                break; /* where the CFI puts the return address no return address was seen: unproven */
        } else if (leaf) {
            ret = w->lr; /* not saved yet: still in LR */
            if (ret < EXC_RETURN_MIN && stale_lr(t, pc, ret & ~1u))
                break;
            if (ru.from_code && !leaf_called(t, &ru, ret))
                break;
        } else {
            break;
        }
        if (ret >= EXC_RETURN_MIN) {
            proven = true; /* an exception handler's entry: the interrupted code is another context */
            break;
        }
        uint32_t next = ret & ~1u, fn_lo, fn_hi;
        bool called = (ret & 1u) && sym_in_code(t, next) && after_call(t, next);
        if (sym_function_from(t, next, &fn_lo, &fn_hi) && fn_lo == next && !called) {
            proven = true; /* a return address set, not left by a call: an RTOS task's exit trap */
            break;
        }
        if (!called)
            break; /* no Thumb return address into the code, right after a call */
        /* (a call to a noreturn function may end its caller: its return address is the next
         * function's start, and the call before it is the caller's) */
        out[n++] = next - 2u; /* inside the call instruction */
        pc = next;
        sp = cfa;
        if (ru.saved & (1u << 7))
            fp = -1; /* the caller's r7 is the word this frame saved, which the evidence does not hold */
        leaf = false;
    }
    if (unproven)
        *unproven = !proven && n < max;
    return n;
}
