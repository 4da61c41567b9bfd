/* The ARM exception-handling index's compact model (EHABI, "Exception handling ABI for the Arm
 * architecture", sections 6, 7 and 10): each function's entry in .ARM.exidx gives unwind opcodes,
 * inline or in .ARM.extab, that undo its prologue. They hold in the function's body (at every call
 * site); the interrupted instruction of a sample may lie in its prologue or epilogue, where the
 * Thumb code itself says how far the stack pointer has moved. */
#include "exidx.h"

#include <string.h>

#define CANTUNWIND 1u
#define MAX_OPS (2u + 4u * 255u) /* personality 1 or 2: two bytes, then up to 255 words */
#define SCAN_STEPS 64            /* instructions followed from one pc at most */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A 31-bit place-relative offset from the word at `at`, sign-extended. */
static uint32_t prel31(uint32_t word, uint32_t at)
{
    uint32_t off = word & 0x7fffffffu;
    if (off & 0x40000000u)
        off |= 0x80000000u;
    return at + off;
}

static uint32_t entry_fn(const struct exidx_table *x, size_t i)
{
    return prel31(le32(x->idx + 8 * i), x->idx_addr + (uint32_t)(8 * i));
}

/* The last entry whose function starts at or before pc (the linker sorts them); false if none. */
static bool find_entry(const struct exidx_table *x, uint32_t pc, size_t *at)
{
    size_t n = x->idx ? x->idx_len / 8 : 0, lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entry_fn(x, mid) <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    *at = lo - 1;
    return true;
}

bool exidx_function(const struct exidx_table *x, uint32_t pc, uint32_t *lo, uint32_t *hi)
{
    size_t i;
    if (!find_entry(x, pc, &i))
        return false;
    *lo = entry_fn(x, i);
    *hi = i + 1 < x->idx_len / 8 ? entry_fn(x, i + 1) : UINT32_MAX;
    return *hi > pc;
}

/* ---- the unwind opcodes --------------------------------------------------------------------- */

struct vsp {
    uint32_t reg;   /* the register vsp was last set from (13: the stack pointer) */
    int64_t off;    /* bytes above it */
    bool popped;    /* registers were popped: a later "vsp = r[n]" is not followed */
    uint16_t saved; /* registers popped, each at slot[k] */
    int64_t slot[16];
};

static bool pop(struct vsp *v, uint32_t mask)
{
    if (mask & (1u << 13))
        return false; /* the stack pointer itself popped: its value is not known here */
    for (unsigned k = 0; k < 16; k++)
        if (mask & (1u << k)) {
            v->saved = (uint16_t)(v->saved | 1u << k); /* the last pop gives the caller's value */
            v->slot[k] = v->off;
            v->off += 4;
        }
    v->popped = true;
    return true;
}

/* Runs one opcode at ops[*i]; false on refuse-to-unwind, a spare or reserved opcode, or one cut
 * short. Sets *finish on "finish". */
static bool step_op(struct vsp *v, const uint8_t *ops, size_t n, size_t *i, bool *finish)
{
    uint8_t op = ops[(*i)++];
    uint8_t next = *i < n ? ops[*i] : 0;
    bool has_next = *i < n;
    if (op < 0x80) { /* 00xxxxxx: vsp += (x << 2) + 4; 01xxxxxx: vsp -= (x << 2) + 4 */
        int64_t d = ((op & 0x3f) << 2) + 4;
        v->off += op & 0x40 ? -d : d;
        return true;
    }
    if (op < 0x90) { /* 1000iiii iiiiiiii: pop r4-r15 under a mask; 0x8000: refuse */
        if (!has_next || (op == 0x80 && next == 0))
            return false;
        (*i)++;
        return pop(v, (uint32_t)(op & 0x0f) << 12 | (uint32_t)next << 4);
    }
    if (op < 0xa0) { /* 1001nnnn: vsp = r[n] (not 13, not 15) */
        if ((op & 0x0f) == 13 || (op & 0x0f) == 15 || v->popped || v->off != 0)
            return false; /* reserved, or a frame-pointer rule after pops: not one rule */
        v->reg = op & 0x0fu;
        return true;
    }
    if (op < 0xb0) /* 10100nnn: pop r4-r[4+n]; 10101nnn: the same and r14 */
        return pop(v, ((1u << ((op & 7u) + 1u)) - 1u) << 4 | (op & 8u ? 1u << 14 : 0u));
    switch (op) {
    case 0xb0:
        *finish = true;
        return true;
    case 0xb1: /* 10110001 0000iiii: pop r0-r3 under a mask */
        if (!has_next || next == 0 || (next & 0xf0))
            return false;
        (*i)++;
        return pop(v, next);
    case 0xb2: { /* vsp += 0x204 + (uleb128 << 2) */
        uint64_t value = 0;
        unsigned shift = 0;
        for (;;) {
            if (*i >= n || shift > 28)
                return false;
            uint8_t b = ops[(*i)++];
            value |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80))
                break;
        }
        v->off += 0x204 + (int64_t)(value << 2);
        return true;
    }
    case 0xb3: /* VFP D[s]-D[s+c] saved by FSTMFDX: 8 bytes each and a format word */
        if (!has_next)
            return false;
        (*i)++;
        v->off += 8 * ((next & 0x0f) + 1) + 4;
        return true;
    case 0xc6: /* iWMMXt wR[s]-wR[s+c] */
    case 0xc8: /* VFP D[16+s]-D[16+s+c] saved by VPUSH */
    case 0xc9: /* VFP D[s]-D[s+c] saved by VPUSH */
        if (!has_next)
            return false;
        (*i)++;
        v->off += 8 * ((next & 0x0f) + 1);
        return true;
    case 0xc7: /* iWMMXt wCGR0-3 under a mask */
        if (!has_next || next == 0 || (next & 0xf0))
            return false;
        (*i)++;
        v->off += 4 * __builtin_popcount(next);
        return true;
    default:
        break;
    }
    if (op >= 0xb8 && op < 0xc0) { /* D[8]-D[8+n] by FSTMFDX */
        v->off += 8 * ((op & 7) + 1) + 4;
        return true;
    }
    if ((op >= 0xc0 && op < 0xc6) || (op >= 0xd0 && op < 0xd8)) { /* wR[10]-wR[10+n]; D[8]-D[8+n] by VPUSH */
        v->off += 8 * ((op & 7) + 1);
        return true;
    }
    return false; /* 0xb4-0xb7, 0xca-0xcf, 0xd8-0xff: spare */
}

enum exidx_result exidx_run(const uint8_t *ops, size_t n, struct exidx_rules *out)
{
    struct vsp v;
    memset(&v, 0, sizeof v);
    v.reg = 13;
    bool finish = false;
    for (size_t i = 0; i < n && !finish;)
        if (!step_op(&v, ops, n, &i, &finish))
            return EXIDX_REFUSED;
    if (v.off < -0x10000000 || v.off > 0x10000000)
        return EXIDX_REFUSED;
    memset(out, 0, sizeof *out);
    out->cfa_reg = v.reg;
    out->cfa_off = (int32_t)v.off;
    for (unsigned k = 0; k < 16; k++)
        if ((v.saved & (1u << k)) && k != 15) {
            out->saved = (uint16_t)(out->saved | 1u << k);
            out->off[k] = (int32_t)(v.slot[k] - v.off);
        }
    if (v.saved & (1u << 15)) { /* the frame pops PC: that slot holds the return address */
        out->saved |= 1u << 14;
        out->off[14] = (int32_t)(v.slot[15] - v.off);
    }
    return EXIDX_OK;
}

/* The opcode bytes of entry i: inline (personality 0 in the index word) or in .ARM.extab
 * (personality 0, 1 or 2); REFUSED for EXIDX_CANTUNWIND, a generic personality routine, damage. */
static enum exidx_result entry_ops(const struct exidx_table *x, size_t i, uint8_t *ops, size_t *n)
{
    uint32_t at = x->idx_addr + (uint32_t)(8 * i) + 4u, word = le32(x->idx + 8 * i + 4);
    uint8_t b[4];
    if (word == CANTUNWIND)
        return EXIDX_REFUSED;
    if (!(word & 0x80000000u)) { /* the address of its .ARM.extab entry */
        at = prel31(word, at);
        if (x->read(x->ctx, at, b, 4) != 4)
            return EXIDX_REFUSED;
        word = le32(b);
        if (!(word & 0x80000000u))
            return EXIDX_REFUSED; /* a generic personality routine's own data */
    }
    uint32_t personality = (word >> 24) & 0x0f;
    if ((word & 0x70000000u) || personality > 2 || (personality && at == x->idx_addr + 8 * i + 4))
        return EXIDX_REFUSED; /* personality 1 and 2 live in .ARM.extab only */
    size_t extra = personality ? (word >> 16) & 0xff : 0;
    *n = 0;
    for (int s = personality ? 8 : 16; s >= 0; s -= 8)
        ops[(*n)++] = (uint8_t)(word >> s);
    for (size_t w = 0; w < extra; w++) {
        if (x->read(x->ctx, at + 4u * (uint32_t)(w + 1), b, 4) != 4)
            return EXIDX_REFUSED;
        for (int s = 3; s >= 0; s--)
            ops[(*n)++] = b[s]; /* most significant byte first */
    }
    return EXIDX_OK;
}

/* ---- the interrupted frame: the Thumb code around pc ------------------------------------------ */

enum ins_kind { INS_PLAIN, INS_SP, INS_PUSH, INS_POP, INS_BX_LR, INS_BRANCH, INS_OTHER };

struct ins {
    enum ins_kind kind;
    unsigned len;
    int32_t delta;    /* INS_SP: bytes added to SP */
    uint32_t mask;    /* INS_PUSH, INS_POP: the registers */
    uint32_t target;  /* INS_BRANCH */
};

static uint32_t thumb_expand_imm(uint32_t imm12)
{
    uint32_t b = imm12 & 0xff;
    if (!(imm12 & 0xc00)) {
        switch ((imm12 >> 8) & 3) {
        case 0:
            return b;
        case 1:
            return b << 16 | b;
        case 2:
            return b << 24 | b << 8;
        default:
            return b << 24 | b << 16 | b << 8 | b;
        }
    }
    uint32_t v = 0x80u | (imm12 & 0x7f), rot = (imm12 >> 7) & 0x1f;
    return v >> rot | v << ((32 - rot) & 31);
}

/* A 16-bit instruction: only what writes SP or PC, or changes the flow, is told apart. */
static struct ins decode16(uint32_t hw, uint32_t addr)
{
    struct ins in = {INS_PLAIN, 2, 0, 0, 0};
    uint32_t rd = (hw >> 4 & 8u) | (hw & 7u);
    if ((hw & 0xff00u) == 0xb000u) {
        in.kind = INS_SP; /* add sp, #imm / sub sp, #imm */
        in.delta = (int32_t)((hw & 0x7fu) * 4u) * (hw & 0x80u ? -1 : 1);
    } else if ((hw & 0xfe00u) == 0xb400u) {
        in.kind = INS_PUSH;
        in.mask = (hw & 0xffu) | (hw & 0x100u ? 1u << 14 : 0u);
    } else if ((hw & 0xfe00u) == 0xbc00u) {
        in.kind = INS_POP;
        in.mask = (hw & 0xffu) | (hw & 0x100u ? 1u << 15 : 0u);
    } else if (hw == 0x4770u) {
        in.kind = INS_BX_LR;
    } else if ((hw & 0xff00u) == 0x4700u || ((hw & 0xfd00u) == 0x4400u && (rd == 13 || rd == 15))) {
        in.kind = INS_OTHER; /* bx/blx rm; add or mov to sp or pc */
    } else if ((hw & 0xf800u) == 0xe000u) {
        in.kind = INS_BRANCH;
        uint32_t off = (hw & 0x7ffu) << 1;
        in.target = addr + 4u + (off & 0x800u ? off | 0xfffff000u : off);
    } else if ((hw & 0xf000u) == 0xd000u || (hw & 0xf500u) == 0xb100u || (hw & 0xff00u) == 0xbe00u ||
               ((hw & 0xff00u) == 0xbf00u && (hw & 0x0fu))) {
        in.kind = INS_OTHER; /* b<cond>, udf, svc; cbz/cbnz; bkpt; it */
    }
    return in;
}

/* Whether a 32-bit instruction other than the prologue's and epilogue's own forms leaves SP, PC
 * and the flow alone (ARMv7-M's encoding classes; anything not told apart is not). */
static bool plain32(uint32_t hw1, uint32_t hw2)
{
    uint32_t rn = hw1 & 0xfu, rd = (hw2 >> 8) & 0xfu, rt = hw2 >> 12;
    bool s = (hw1 >> 4) & 1u, wb = (hw1 >> 5) & 1u;
    bool bad_rd = (rd == 13 || rd == 15) && !(rd == 15 && s); /* Rd 15 with S: a compare */
    switch (hw1 >> 11) {
    case 0x1d: /* 11101: load/store multiple or dual, data processing (register shifted), coprocessor */
        if ((hw1 & 0x0640u) == 0x0000u) /* load/store multiple */
            return !(rn == 13 && wb) && !(s && (hw2 & 0xa000u));
        if ((hw1 & 0x0640u) == 0x0040u) /* load/store dual or exclusive, table branch */
            return (hw1 & 0xfff0u) != 0xe8d0u && !(rn == 13 && wb) && !(s && (rt >= 13 || rd >= 13));
        if ((hw1 & 0x0600u) == 0x0200u) /* data processing (shifted register) */
            return !bad_rd;
        return !(rn == 13 && wb) && !((hw1 & 0x0f10u) == 0x0e10u && (hw2 & 0x10u) && rt == 13); /* coprocessor */
    case 0x1e: /* 11110: data processing (immediate); with hw2 bit 15 branches and control */
        return !(hw2 & 0x8000u) && !bad_rd;
    default: /* 11111 */
        if ((hw1 & 0x0e00u) == 0x0800u) { /* load/store single */
            bool index_wb = (hw1 & 0x0080u) == 0 && (hw2 & 0x0900u) == 0x0900u; /* imm8 form with W */
            if ((rn == 13 && index_wb) || rt == 13)
                return false;
            return !(rt == 15 && (hw1 & 0x0010u) && (hw1 & 0x0060u) == 0x0040u); /* ldr pc (else pld: a hint) */
        }
        if ((hw1 & 0x0f00u) == 0x0a00u) /* data processing (register) */
            return rd != 13 && rd != 15;
        if ((hw1 & 0x0f00u) == 0x0b00u) /* multiply, long multiply (RdLo in Rt's place), divide */
            return rd != 13 && rd != 15 && (!(hw1 & 0x0080u) || rt != 13);
        if ((hw1 & 0x0c00u) == 0x0c00u) /* coprocessor: a move to a core register (15: the flags) */
            return !((hw1 & 0x0f10u) == 0x0e10u && (hw2 & 0x10u) && rt == 13);
        return false;
    }
}

/* A 32-bit instruction: the prologue's and epilogue's own forms, or plain, or INS_OTHER. */
static struct ins decode32(uint32_t hw1, uint32_t hw2, uint32_t addr)
{
    struct ins in = {INS_OTHER, 4, 0, 0, 0};
    uint32_t imm12 = (hw1 & 0x400u) << 1 | (hw2 & 0x7000u) >> 4 | (hw2 & 0xffu);
    uint32_t rt = hw2 >> 12;
    if (hw1 == 0xe8bdu && !(hw2 & (1u << 13))) {
        in.kind = INS_POP, in.mask = hw2; /* pop.w */
    } else if (hw1 == 0xe92du && !(hw2 & (5u << 13))) {
        in.kind = INS_PUSH, in.mask = hw2; /* push.w */
    } else if (hw1 == 0xf85du && (hw2 & 0x0fffu) == 0x0b04u && rt != 13) {
        in.kind = INS_POP, in.mask = 1u << rt; /* ldr.w rt, [sp], #4 */
    } else if (hw1 == 0xf84du && (hw2 & 0x0fffu) == 0x0d04u && rt != 13 && rt != 15) {
        in.kind = INS_PUSH, in.mask = 1u << rt; /* str.w rt, [sp, #-4]! */
    } else if ((hw2 & 0x8f00u) == 0x0d00u && ((hw1 & 0xfbefu) == 0xf1adu || (hw1 & 0xfbefu) == 0xf10du)) {
        in.kind = INS_SP; /* sub.w / add.w sp, sp, #const */
        in.delta = (int32_t)thumb_expand_imm(imm12) * ((hw1 & 0xfbefu) == 0xf1adu ? -1 : 1);
    } else if ((hw2 & 0x8f00u) == 0x0d00u && ((hw1 & 0xfbffu) == 0xf2adu || (hw1 & 0xfbffu) == 0xf20du)) {
        in.kind = INS_SP; /* subw / addw sp, sp, #imm12 */
        in.delta = (int32_t)imm12 * ((hw1 & 0xfbffu) == 0xf2adu ? -1 : 1);
    } else if (((hw1 & 0xffbfu) == 0xecbdu || (hw1 & 0xffbfu) == 0xed2du) && (hw2 & 0x0e00u) == 0x0a00u) {
        in.kind = INS_SP; /* vpop / vpush: imm8 words */
        in.delta = (int32_t)((hw2 & 0xffu) * 4u) * ((hw1 & 0xffbfu) == 0xed2du ? -1 : 1);
    } else if ((hw1 & 0xf800u) == 0xf000u && (hw2 & 0xd000u) == 0x9000u) {
        in.kind = INS_BRANCH; /* b.w */
        uint32_t s = (hw1 >> 10) & 1u, i1 = !(((hw2 >> 13) & 1u) ^ s), i2 = !(((hw2 >> 11) & 1u) ^ s);
        uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3ffu) << 12 | (hw2 & 0x7ffu) << 1;
        in.target = addr + 4u + ((imm ^ 0x1000000u) - 0x1000000u);
    } else if (plain32(hw1, hw2)) {
        in.kind = INS_PLAIN;
    }
    return in;
}

static bool decode_at(const struct exidx_table *x, uint32_t addr, struct ins *in)
{
    uint8_t b[4];
    size_t got = x->read(x->ctx, addr, b, 4);
    if (got < 2)
        return false;
    uint32_t hw = (uint32_t)(b[0] | b[1] << 8);
    if ((hw >> 11) < 0x1d) {
        *in = decode16(hw, addr);
        return true;
    }
    if (got < 4)
        return false;
    *in = decode32(hw, (uint32_t)(b[2] | b[3] << 8), addr);
    return true;
}

/* Saved registers at their slots (bytes above the SP at pc) into rules whose CFA is SP + cfa. */
static void rules_from(struct exidx_rules *out, int32_t cfa, uint32_t saved, const int32_t *slot, bool pc_popped)
{
    memset(out, 0, sizeof *out);
    out->cfa_reg = 13;
    out->cfa_off = cfa;
    for (unsigned k = 0; k < 15; k++)
        if (saved & (1u << k)) {
            out->saved = (uint16_t)(out->saved | 1u << k);
            out->off[k] = slot[k] - cfa;
        }
    if (pc_popped) {
        out->saved |= 1u << 14;
        out->off[14] = slot[15] - cfa;
    }
}

/* Follows the straight-line code from pc to the function's return (pop {.., pc}, bx lr, or a
 * branch out of it: a tail call): what it pops and adds to SP on the way gives the rules exactly,
 * in an epilogue as in the body. False on anything not followed (a condition, a push, an
 * instruction that is not told apart, a branch back that does not end). */
static bool scan_to_return(const struct exidx_table *x, uint32_t pc, uint32_t lo, uint32_t hi,
                           struct exidx_rules *out)
{
    int32_t sp = 0, slot[16] = {0};
    uint32_t saved = 0, addr = pc;
    for (int steps = 0; steps < SCAN_STEPS; steps++) {
        struct ins in;
        if (addr < lo || addr >= hi || !decode_at(x, addr, &in))
            return false;
        switch (in.kind) {
        case INS_PLAIN:
            addr += in.len;
            continue;
        case INS_SP:
            if (in.delta > 0x100000 || in.delta < -0x100000)
                return false;
            sp += in.delta;
            addr += in.len;
            continue;
        case INS_POP:
            for (unsigned k = 0; k < 16; k++)
                if (in.mask & (1u << k)) {
                    slot[k] = sp; /* the last pop gives the caller's value */
                    saved |= 1u << k;
                    sp += 4;
                }
            if (in.mask & (1u << 15)) {
                rules_from(out, sp, saved & 0x7fffu, slot, true);
                return true;
            }
            addr += in.len;
            continue;
        case INS_BRANCH:
            if (in.target >= lo && in.target < hi) {
                addr = in.target; /* a jump inside the function: to its shared epilogue */
                continue;
            }
            rules_from(out, sp, saved, slot, false); /* a tail call returns where this function would */
            return true;
        case INS_BX_LR: /* LR: popped on the way, or live */
            rules_from(out, sp, saved, slot, false);
            return true;
        default:
            return false;
        }
    }
    return false;
}

/* From the function's start to pc: how much of the prologue ran (pushes and SP subtractions, other
 * plain instructions between them). *reached: pc was reached without anything not followed. */
static int32_t prologue_to(const struct exidx_table *x, uint32_t lo, uint32_t pc, uint32_t *saved, int32_t *slot,
                           bool *reached)
{
    int32_t sp = 0;
    uint32_t addr = lo;
    *saved = 0;
    *reached = false;
    for (int steps = 0; steps < SCAN_STEPS && addr < pc; steps++) {
        struct ins in;
        if (!decode_at(x, addr, &in))
            return sp;
        if (in.kind == INS_PUSH) {
            int32_t at = sp - 4 * __builtin_popcount(in.mask);
            sp = at;
            for (unsigned k = 0; k < 16; k++)
                if (in.mask & (1u << k)) {
                    if (!(*saved & (1u << k)))
                        slot[k] = at;
                    *saved |= 1u << k;
                    at += 4;
                }
        } else if (in.kind == INS_SP && in.delta < 0 && in.delta > -0x100000) {
            sp += in.delta;
        } else if (in.kind != INS_PLAIN) {
            return sp; /* the prologue is over, or not followed */
        }
        addr += in.len;
    }
    *reached = addr == pc;
    return sp;
}

/* The interrupted frame at pc, in a function whose body the opcodes' rules `body` describe. */
static enum exidx_result leaf_rules(const struct exidx_table *x, uint32_t pc, uint32_t lo, uint32_t hi,
                                    const struct exidx_rules *body, struct exidx_rules *out)
{
    if (scan_to_return(x, pc, lo, hi, out))
        return EXIDX_OK;
    if (body->cfa_reg != 13)
        return EXIDX_REFUSED; /* a frame pointer: where the prologue is cannot be told here */
    uint32_t saved;
    int32_t slot[16] = {0};
    bool reached;
    int32_t sp = prologue_to(x, lo, pc, &saved, slot, &reached);
    if (-sp == body->cfa_off) {
        *out = *body; /* the prologue has run: the body's rules */
        return EXIDX_OK;
    }
    if (!reached || -sp > body->cfa_off)
        return EXIDX_REFUSED;
    for (unsigned k = 0; k < 16; k++) /* slots from the entry SP: from the SP at pc */
        slot[k] -= sp;
    rules_from(out, -sp, saved & 0x7fffu, slot, false);
    return EXIDX_OK;
}

enum exidx_result exidx_rules_at(const struct exidx_table *x, uint32_t pc, bool leaf, struct exidx_rules *out)
{
    size_t i;
    uint32_t lo, hi;
    if (!exidx_function(x, pc, &lo, &hi) || !find_entry(x, pc, &i))
        return EXIDX_NONE;
    uint32_t sym_lo, sym_hi;
    if (x->function && x->function(x->ctx, pc, &sym_lo, &sym_hi) && sym_lo >= lo && sym_hi > pc) {
        lo = sym_lo; /* the linker merges the entries of functions that unwind alike: one covers several */
        hi = sym_hi < hi ? sym_hi : hi;
    }
    uint8_t ops[MAX_OPS];
    size_t n = 0;
    struct exidx_rules body;
    if (entry_ops(x, i, ops, &n) != EXIDX_OK || exidx_run(ops, n, &body) != EXIDX_OK)
        return EXIDX_REFUSED;
    if (!leaf) {
        *out = body;
        return EXIDX_OK;
    }
    return leaf_rules(x, pc, lo, hi, &body, out);
}
