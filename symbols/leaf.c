/* Proving a CFI-less Thumb function a leaf that keeps its caller's frame (see leaf.h). The decoder
 * is a whitelist: an encoding is accepted only when the ARMv6-M/ARMv7-M manuals say it cannot
 * write SP or LR, load PC or call; everything else (coprocessor and floating-point instructions,
 * exclusives, system instructions, the unknown) proves nothing. */
#include "leaf.h"

static uint16_t half(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static bool wide(uint16_t h)
{
    return (h >> 11) >= 0x1Du;
}

/* A 16-bit instruction that leaves SP, LR and the caller's frame alone and calls nothing. */
static bool safe16(uint16_t h)
{
    if (h < 0x4000u || (h & 0xFC00u) == 0x4000u)
        return true; /* shifts, add/sub/mov/cmp on low registers, data processing on low registers */
    if ((h & 0xFC00u) == 0x4400u) { /* special data processing, branch and exchange */
        unsigned op = (h >> 8) & 3u, d = ((h >> 4) & 8u) | (h & 7u);
        if (op == 1u)
            return true; /* CMP */
        if (op == 3u)
            return !(h & 0x80u); /* BX Rm (a return or a jump); BLX Rm calls */
        return d != 13u && d != 14u; /* ADD, MOV: not to SP or LR (to PC: a jump) */
    }
    if (h < 0xB000u)
        return true; /* LDR literal, loads and stores of low registers, SP-relative, ADR, ADD Rd, SP */
    if ((h & 0xF000u) == 0xB000u) { /* miscellaneous */
        switch ((h >> 8) & 0xFu) {
        case 0x1: case 0x3: case 0x9: case 0xB: /* CBZ, CBNZ */
        case 0x2:                               /* SXTH, SXTB, UXTH, UXTB */
        case 0xF:                               /* IT, hints */
            return true;
        case 0xA:
            return ((h >> 6) & 3u) != 2u; /* REV, REV16, REVSH */
        default:
            return false; /* ADD/SUB SP, PUSH, POP, CPS, BKPT */
        }
    }
    if (h < 0xD000u)
        return true; /* STM, LDM of low registers */
    if (h < 0xE000u)
        return ((h >> 8) & 0xFu) < 0xEu; /* B<c>; not UDF or SVC */
    return h < 0xE800u; /* B */
}

/* Data processing with destination d: never SP or LR; PC only as the flag-setting compares
 * (TST, TEQ, CMN, CMP write no register). */
static bool safe_dest(uint16_t h1, unsigned d)
{
    unsigned op = (h1 >> 5) & 0xFu;
    if (d == 15u)
        return (h1 & 0x10u) && (op == 0u || op == 4u || op == 8u || op == 13u);
    return d != 13u && d != 14u;
}

static bool low_or_special(unsigned r)
{
    return r < 13u;
}

/* Loads and stores of one register (LDR, STR and their byte, halfword and signed forms, PLD, PLI). */
static bool safe_single(uint16_t h1, uint16_t h2)
{
    unsigned size = (h1 >> 5) & 3u, load = (h1 >> 4) & 1u, rn = h1 & 0xFu, rt = h2 >> 12;
    if (size == 3u || ((h1 & 0x100u) && !load))
        return false; /* undefined */
    if (load && (rt == 13u || rt == 14u || (rt == 15u && size == 2u)))
        return false; /* into SP, LR, or PC (a pop when based on SP) */
    bool writeback = !(h1 & 0x80u) && rn != 15u && (h2 & 0x0900u) == 0x0900u;
    return !(writeback && rn == 13u);
}

/* LDM, STM, LDRD, STRD, TBB, TBH. */
static bool safe_multiple(uint16_t h1, uint16_t h2)
{
    unsigned rn = h1 & 0xFu, load = (h1 >> 4) & 1u, writeback = (h1 >> 5) & 1u;
    if ((h1 & 0xFE40u) == 0xE800u) { /* LDM, STM (PUSH.W and POP.W when based on SP) */
        unsigned op = (h1 >> 7) & 3u;
        return (op == 1u || op == 2u) && rn != 13u && !(load && (h2 & 0xE000u));
    }
    if ((h1 & 0xFFF0u) == 0xE8D0u && (h2 & 0xFFE0u) == 0xF000u)
        return true; /* TBB, TBH: a jump */
    unsigned op1 = (h1 >> 7) & 3u, op2 = (h1 >> 4) & 3u;
    if (!((op1 & 2u) || (op2 & 2u)))
        return false; /* exclusives */
    if (writeback && rn == 13u)
        return false;
    return !load || (low_or_special(h2 >> 12) && low_or_special((h2 >> 8) & 0xFu));
}

/* A 32-bit instruction that leaves SP, LR and the caller's frame alone and calls nothing. */
static bool safe32(uint16_t h1, uint16_t h2)
{
    unsigned d = (h2 >> 8) & 0xFu;
    if ((h1 & 0xF800u) == 0xF000u && (h2 & 0x8000u)) { /* branches and miscellaneous control */
        if ((h2 & 0x5000u) == 0x1000u)
            return true; /* B.W */
        return (h2 & 0x5000u) == 0 && ((h1 >> 7) & 7u) != 7u; /* B<c>.W; not MSR, MRS, hints; BL, BLX call */
    }
    if ((h1 & 0xFA00u) == 0xF000u || (h1 & 0xFE00u) == 0xEA00u)
        return safe_dest(h1, d); /* data processing, modified immediate or shifted register */
    if ((h1 & 0xFA00u) == 0xF200u)
        return low_or_special(d); /* ADDW, SUBW, MOVW, MOVT, bit fields, saturation */
    if ((h1 & 0xFF00u) == 0xFA00u)
        return (h2 & 0xF000u) == 0xF000u && low_or_special(d); /* register shifts, extends, CLZ, REV */
    if ((h1 & 0xFF80u) == 0xFB00u)
        return low_or_special(d); /* MUL, MLA, MLS, ... */
    if ((h1 & 0xFF80u) == 0xFB80u)
        return low_or_special(d) && (h2 >> 12) != 13u && (h2 >> 12) != 14u; /* long multiplies, divides */
    if ((h1 & 0xFE00u) == 0xF800u)
        return safe_single(h1, h2);
    if ((h1 & 0xFE00u) == 0xE800u)
        return safe_multiple(h1, h2);
    return false; /* coprocessor, floating point, anything else */
}

/* The function's bytes; false when it is empty, odd, too long or not all readable. */
static bool read_function(leaf_reader read, void *ctx, uint32_t lo, uint32_t hi, uint8_t *buf)
{
    if (hi <= lo || (lo & 1u) || hi - lo > LEAF_MAX_BYTES)
        return false;
    for (uint32_t at = lo; at < hi;) {
        size_t got = read(ctx, at, buf + (at - lo), hi - at);
        if (!got)
            return false;
        at += (uint32_t)got;
    }
    return true;
}

bool leaf_keeps_frame(leaf_reader read, void *ctx, uint32_t lo, uint32_t hi)
{
    uint8_t buf[LEAF_MAX_BYTES];
    if (!read_function(read, ctx, lo, hi, buf))
        return false;
    uint32_t n = (hi - lo) & ~1u;
    for (uint32_t k = 0; k + 2u <= n;) {
        uint16_t h1 = half(buf + k);
        if (!wide(h1)) {
            if (!safe16(h1))
                return false;
            k += 2u;
            continue;
        }
        if (k + 4u > n || !safe32(h1, half(buf + k + 2u)))
            return false; /* a 32-bit instruction cut by the function's end proves nothing */
        k += 4u;
    }
    return n == hi - lo;
}

static uint32_t sign_extend(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1u);
    return (v ^ m) - m;
}

/* The target of a B, B<c>, B.W or B<c>.W at pc; false for anything else. */
static bool branch_target(uint16_t h1, uint16_t h2, uint32_t pc, uint32_t *target)
{
    if ((h1 & 0xF800u) == 0xE000u) {
        *target = pc + 4u + sign_extend((h1 & 0x7FFu) << 1, 12);
        return true;
    }
    if ((h1 & 0xF000u) == 0xD000u && ((h1 >> 8) & 0xFu) < 0xEu) {
        *target = pc + 4u + sign_extend((h1 & 0xFFu) << 1, 9);
        return true;
    }
    if ((h1 & 0xF800u) != 0xF000u)
        return false;
    uint32_t s = (h1 >> 10) & 1u, j1 = (h2 >> 13) & 1u, j2 = (h2 >> 11) & 1u;
    if ((h2 & 0xD000u) == 0x9000u) { /* B.W */
        uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
        uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FFu) << 12 | (h2 & 0x7FFu) << 1;
        *target = pc + 4u + sign_extend(imm, 25);
        return true;
    }
    if ((h2 & 0xD000u) == 0x8000u && ((h1 >> 7) & 7u) != 7u) { /* B<c>.W */
        uint32_t imm = s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3Fu) << 12 | (h2 & 0x7FFu) << 1;
        *target = pc + 4u + sign_extend(imm, 21);
        return true;
    }
    return false;
}

bool leaf_branches_to(leaf_reader read, void *ctx, uint32_t lo, uint32_t hi, uint32_t target)
{
    uint8_t buf[LEAF_MAX_BYTES];
    if (!read_function(read, ctx, lo, hi, buf))
        return false;
    uint32_t n = (hi - lo) & ~1u, to;
    for (uint32_t k = 0; k + 2u <= n;) {
        uint16_t h1 = half(buf + k), h2 = k + 4u <= n ? half(buf + k + 2u) : 0;
        if (branch_target(h1, h2, lo + k, &to) && to == target)
            return true;
        k += wide(h1) ? 4u : 2u;
    }
    return false;
}

bool leaf_bl_target(leaf_reader read, void *ctx, uint32_t next, uint32_t *target)
{
    uint8_t b[4];
    if (next < 4u || read(ctx, next - 4u, b, 4) != 4)
        return false;
    uint16_t h1 = half(b), h2 = half(b + 2);
    if ((h1 & 0xF800u) != 0xF000u || (h2 & 0xD000u) != 0xD000u)
        return false;
    uint32_t s = (h1 >> 10) & 1u, i1 = !(((h2 >> 13) & 1u) ^ s), i2 = !(((h2 >> 11) & 1u) ^ s);
    uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FFu) << 12 | (h2 & 0x7FFu) << 1;
    *target = next + sign_extend(imm, 25);
    return true;
}

bool leaf_blx_before(leaf_reader read, void *ctx, uint32_t next)
{
    uint8_t b[2];
    return next >= 2u && read(ctx, next - 2u, b, 2) == 2 && (half(b) & 0xFF87u) == 0x4780u;
}
