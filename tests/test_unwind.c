/* The unwinder (sym_unwind) on a made ELF: an RTOS starts each task with LR = its exit trap, a
 * function that the linker placed right after another (FreeRTOS: prvTaskExitError after
 * xPortPendSVHandler). A return address at a function's first instruction ends the stack at the
 * task; it must never be read as a call from the function before it. A return address inside a
 * function is still followed. */
#include "../symbols/exidx.h"
#include "../symbols/leaf.h"
#include "../symbols/symbols.h"
#include "check.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEXT 0x08000000u
#define HANDLER 0x08000100u  /* [0x100, 0x140): the context switch */
#define EXIT_TRAP 0x08000140u /* [0x140, 0x160): right after it, what a task "returns" to */
#define TASK 0x08000160u     /* [0x160, 0x180): push {r7, lr} then its loop */
#define CALLER 0x08000180u   /* [0x180, 0x1a0): calls the task function (the control) */
/* for the firmware's stack evidence (sym_unwind_words): CALLER is a leaf (LR live), called by MID,
 * called by OUTER, called by TASK, whose own return address is the exit trap */
#define MID 0x080001a0u   /* [0x1a0, 0x1c0): push {r4, lr}; sub sp, #8; ...; bl CALLER at +6; add sp, #8 at +0xe; pop at +0x10 */
#define OUTER 0x080001c0u /* [0x1c0, 0x1e0): push {r3, lr}; bl MID at +8 */
#define NORET 0x080001e0u /* [0x1e0, 0x1f0): push {r3, lr}; its last instruction a bl to a noreturn function */
#define NEXT_FN 0x080001f0u /* [0x1f0, 0x200): right after it */
/* a frame pointer (-fno-omit-frame-pointer): push {r7, lr}; sub sp, #8; add r7, sp, #0 (the CFA r7 + 16
 * from +6); bl CALLER at +8; ...; adds r7, #8 at +0x14 (r7 + 8); mov sp, r7 at +0x16; pop {r7, pc} at +0x18 */
#define FP_FN 0x08000200u /* [0x200, 0x220) */
/* no CFI: a hand-written leaf (as newlib's memcpy), and a function that tail-calls it (b.n) */
#define LEAF_FN 0x08000220u /* [0x220, 0x230) */
#define TAIL_FN 0x08000230u /* [0x230, 0x240) */
#define N_FUNCS 11
#define SP 0x20001000u

/* .debug_frame: one CIE (code align 2, data align -4, return address r14, CFA = sp), and an FDE
 * per function; the task's says that after its 2-byte push the CFA is sp + 8, LR at CFA - 4. */
static size_t debug_frame(uint8_t *out)
{
    static const uint8_t cie[] = {12, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 2, 0x7c, 14, 0x0c, 13, 0};
    size_t n = sizeof cie;
    memcpy(out, cie, n);
    static const uint32_t lo[] = {HANDLER, EXIT_TRAP, TASK, CALLER, MID, OUTER, NORET, NEXT_FN, FP_FN};
    static const uint32_t size[] = {0x40, 0x20, 0x20, 0x20, 0x20, 0x20, 0x10, 0x10, 0x20};
    /* FP_FN: the push (+2: sp + 8, r7 and LR saved), sub sp (+4: sp + 16), the frame pointer (+6: r7 + 16),
     * adds r7, #8 (+0x16: r7 + 8), mov sp, r7 (+0x18: sp + 8) */
    static const uint8_t fp[] = {0x41, 0x0e, 8,    0x80 | 14, 1,    0x80 | 7, 2, 0x41, 0x0e, 16,
                                 0x41, 0x0d, 7,    0x48,      0x0e, 8,        0x41, 0x0d, 13, 0};
    for (int i = 0; i < N_FUNCS - 2; i++) { /* LEAF_FN and TAIL_FN have none */
        /* advance_loc 1, def_cfa_offset 8, offset r14 at 1*-4, offset r7 at 2*-4 */
        static const uint8_t push[] = {0x41, 0x0e, 8, 0x80 | 14, 1, 0x80 | 7, 2, 0};
        /* MID: the push (+2: CFA sp + 8), sub sp (+4: CFA sp + 16), add sp (+0x10: CFA sp + 8 again) */
        static const uint8_t mid[] = {0x41, 0x0e, 8, 0x80 | 14, 1, 0x80 | 4, 2, 0x41, 0x0e, 16, 0x46, 0x0e, 8, 0, 0, 0};
        const uint8_t *ins = lo[i] == MID ? mid : lo[i] == FP_FN ? fp : push;
        size_t len = lo[i] == MID     ? sizeof mid
                     : lo[i] == FP_FN ? sizeof fp
                     : lo[i] == TASK || lo[i] == OUTER || lo[i] == NORET ? sizeof push
                                                                           : 0;
        uint32_t words[4] = {(uint32_t)(12 + len), 0, lo[i], size[i]};
        memcpy(out + n, words, sizeof words);
        memcpy(out + n + sizeof words, ins, len);
        n += sizeof words + len;
    }
    return n;
}

static Elf_Scn *section(Elf *e, uint32_t name, uint32_t type, uint64_t flags, uint32_t addr, void *buf, size_t size)
{
    Elf_Scn *s = elf_newscn(e);
    Elf_Data *d = s ? elf_newdata(s) : NULL;
    Elf32_Shdr *sh = d ? elf32_getshdr(s) : NULL;
    if (!sh)
        return NULL;
    d->d_buf = buf;
    d->d_size = size;
    d->d_type = ELF_T_BYTE;
    d->d_align = 4;
    sh->sh_name = name;
    sh->sh_type = type;
    sh->sh_flags = (Elf32_Word)flags;
    sh->sh_addr = addr;
    return s;
}

/* Write the ELF to a new file made from the template path (mkstemp). */
static void put_halves(uint8_t *p, const uint16_t *hw, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[2 * i] = (uint8_t)hw[i], p[2 * i + 1] = (uint8_t)(hw[i] >> 8);
}

/* A BL at `at` to `target` (Thumb-2 encoding T1). */
static void put_bl(uint8_t *p, uint32_t at, uint32_t target)
{
    uint32_t off = target - (at + 4u), s = off >> 31, i1 = (off >> 23) & 1u, i2 = (off >> 22) & 1u;
    uint16_t h1 = (uint16_t)(0xF000u | s << 10 | ((off >> 12) & 0x3FFu));
    uint16_t h2 = (uint16_t)(0xD000u | (!(i1 ^ s)) << 13 | (!(i2 ^ s)) << 11 | ((off >> 1) & 0x7FFu));
    put_halves(p, (const uint16_t[]){h1, h2}, 2);
}

static bool write_elf(char *path)
{
    static uint8_t code[0x240], frames[512];
    static char shstr[] = "\0.text\0.debug_frame\0.symtab\0.strtab\0.shstrtab";
    static char str[] = "\0handler\0exit_trap\0task\0caller\0mid\0outer\0noret\0next\0fp_fn\0leaf\0tail";
    static Elf32_Sym syms[N_FUNCS + 1]; /* Thumb functions: odd values, as a toolchain writes them */
    static const uint32_t name[] = {1, 9, 19, 24, 31, 35, 41, 47, 52, 58, 63},
                          lo[] = {HANDLER, EXIT_TRAP, TASK, CALLER, MID, OUTER, NORET, NEXT_FN, FP_FN, LEAF_FN, TAIL_FN},
                          size[] = {0x40, 0x20, 0x20, 0x20, 0x20, 0x20, 0x10, 0x10, 0x20, 0x10, 0x10};
    for (int i = 0; i < N_FUNCS; i++)
        syms[i + 1] = (Elf32_Sym){name[i], lo[i] | 1u, size[i], ELF32_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1};
    /* the calls the return addresses come back from: BL (f000 f800) before each */
    static const uint32_t calls[] = {MID + 6u, OUTER + 8u, TASK + 2u, NORET + 0xcu, FP_FN + 8u};
    for (int i = 0; i < 5; i++)
        memcpy(code + (calls[i] - TEXT), (const uint8_t[]){0x00, 0xf0, 0x00, 0xf8}, 4);
    /* CALLER calls MID at +0x10 (bl: +0xc from its return address) though its CFI saves nothing */
    memcpy(code + (CALLER + 0x10u - TEXT), (const uint8_t[]){0x00, 0xf0, 0x06, 0xf8}, 4);
    /* LEAF_FN: ldr.w r3, [r1], #4; str.w r3, [r0], #4; subs r2, #4; bcs.n back; bx lr; nop. TAIL_FN:
     * b.n LEAF_FN. MID calls them at +0x14 (bl LEAF_FN), +0x18 (bl TAIL_FN), +0x1c (blx r3). */
    put_halves(code + (LEAF_FN - TEXT), (const uint16_t[]){0xf851, 0x3b04, 0xf840, 0x3b04, 0x3a04, 0xd2fa, 0x4770, 0xbf00}, 8);
    put_halves(code + (TAIL_FN - TEXT), (const uint16_t[]){0xe7f6}, 1);
    put_bl(code + (MID + 0x14u - TEXT), MID + 0x14u, LEAF_FN);
    put_bl(code + (MID + 0x18u - TEXT), MID + 0x18u, TAIL_FN);
    put_halves(code + (MID + 0x1cu - TEXT), (const uint16_t[]){0x4798}, 1);
    /* the vector table (the lowest allocated bytes): TAIL_FN is exception 2's handler (NMI) */
    put_halves(code + 8, (const uint16_t[]){(uint16_t)(TAIL_FN | 1u), (uint16_t)(TAIL_FN >> 16)}, 2);
    int fd = elf_version(EV_CURRENT) == EV_NONE ? -1 : mkstemp(path);
    if (fd < 0)
        return false;
    Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
    Elf32_Ehdr *eh = e ? elf32_newehdr(e) : NULL;
    bool ok = eh && section(e, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT, code, sizeof code) &&
              section(e, 7, SHT_PROGBITS, 0, 0, frames, debug_frame(frames));
    Elf_Scn *symtab = ok ? section(e, 20, SHT_SYMTAB, 0, 0, syms, sizeof syms) : NULL;
    Elf_Scn *strtab = symtab ? section(e, 28, SHT_STRTAB, 0, 0, str, sizeof str) : NULL;
    Elf_Scn *names = strtab ? section(e, 36, SHT_STRTAB, 0, 0, shstr, sizeof shstr) : NULL;
    if (names) {
        Elf32_Shdr *sh = elf32_getshdr(symtab);
        sh->sh_link = (Elf32_Word)elf_ndxscn(strtab);
        sh->sh_info = 1; /* the first global */
        sh->sh_entsize = sizeof(Elf32_Sym);
        elf_getdata(symtab, NULL)->d_type = ELF_T_SYM;
        eh->e_ident[EI_DATA] = ELFDATA2LSB;
        eh->e_machine = EM_ARM;
        eh->e_type = ET_EXEC;
        eh->e_version = EV_CURRENT;
        eh->e_shstrndx = (Elf32_Half)elf_ndxscn(names);
    }
    ok = names && elf_update(e, ELF_C_WRITE) >= 0;
    if (e)
        elf_end(e);
    close(fd);
    return ok;
}

/* The image written to path and opened (checked); on failure the file is gone and NULL returned. */
static struct sym_table *open_image(char *path)
{
    char err[256];
    struct sym_table *t = write_elf(path) ? sym_open(path, err, sizeof err) : NULL;
    CHECK(t != NULL);
    if (!t)
        unlink(path);
    return t;
}

/* The task's stack: r7 and the LR it pushed, at SP. */
static bool read_stack(void *ctx, uint32_t addr, uint32_t *value)
{
    const uint32_t *words = ctx;
    if (addr < SP || addr >= SP + 8u || addr % 4u)
        return false;
    *value = words[(addr - SP) / 4u];
    return true;
}

static size_t walk(struct sym_table *t, uint32_t pc, uint32_t lr, uint32_t pushed_lr, uint32_t *out)
{
    uint32_t regs[16] = {0}, stack[2] = {0x20002000u, pushed_lr};
    regs[13] = SP;
    regs[14] = lr;
    regs[15] = pc;
    return sym_unwind(t, regs, read_stack, stack, out, 8, NULL);
}

static void test_task_roots(void)
{
    char path[] = "/tmp/cmprof-test-unwind-XXXXXX";
    struct sym_table *t = open_image(path);
    if (!t)
        return;
    uint32_t out[8], lo, hi;
    CHECK(sym_function_from(t, EXIT_TRAP + 4u, &lo, &hi) && lo == EXIT_TRAP && hi == TASK);
    /* after the push: LR = the exit trap, saved on the stack; the walk ends at the task */
    CHECK(walk(t, TASK + 8u, 0, EXIT_TRAP | 1u, out) == 0);
    /* before the push (LR live): the same */
    CHECK(walk(t, TASK, EXIT_TRAP | 1u, 0, out) == 0);
    /* the control: a real call from inside caller is followed, to the call instruction */
    CHECK(walk(t, TASK + 8u, 0, (CALLER + 0x10u) | 1u, out) == 1 && out[0] == CALLER + 0x0eu);
    CHECK(walk(t, TASK, (CALLER + 0x10u) | 1u, 0, out) == 1 && out[0] == CALLER + 0x0eu);
    sym_close(t);
    unlink(path);
}

/* A stack of 20 words at SP, for a walk across an exception frame. */
static bool read_words(void *ctx, uint32_t addr, uint32_t *value)
{
    const uint32_t *words = ctx;
    if (addr < SP || addr >= SP + 80u || addr % 4u)
        return false;
    *value = words[(addr - SP) / 4u];
    return true;
}

/* Halted in an exception handler (LR live: an EXC_RETURN code) that interrupted CALLER + 4: the walk
 * goes on at CALLER from the frame the exception stacked on the main stack. ARMv8-M's codes say more
 * than ARMv7-M's: DCRS clear, 10 words (integrity signature, reserved, r4-r11) lie below the frame;
 * S differing from ES, the frame is on the other Security state's stack, not at the handler's CFA. */
static void test_exception_frames(void)
{
    char path[] = "/tmp/cmprof-test-unwind-XXXXXX";
    struct sym_table *t = open_image(path);
    if (!t)
        return;
    /* a basic frame at SP (r0-r3, r12, LR, PC = TASK + 4), and one 10 words up (PC = CALLER + 4): a walk
     * that takes the wrong one names the wrong interrupted code */
    uint32_t stack[20] = {0}, out[8], regs[16] = {0};
    stack[6] = TASK + 4u, stack[7] = 1u << 24;
    stack[0] = 0xFEFA125Bu; /* the integrity signature, where a v8-M additional state context starts */
    stack[10 + 6] = CALLER + 4u, stack[10 + 7] = 1u << 24;
    regs[13] = SP, regs[15] = HANDLER + 4u;
    static const struct {
        uint32_t exc_return, frame_at; /* the frame's word index, or 99: no frame to follow */
    } cases[] = {
        {0xFFFFFFF9u, 0},  /* ARMv7-M, thread mode on MSP */
        {0xFFFFFFF1u, 0},  /* ARMv7-M, handler mode */
        {0xFFFFFFB8u, 0},  /* ARMv8-M without the Security Extension (or Non-secure to Non-secure) */
        {0xFFFFFFF9u, 0},  /* ARMv8-M Secure to Secure: ARMv7-M's code */
        {0xFFFFFFD9u, 10}, /* Secure, DCRS clear (tail-chained after a Non-secure handler): 40 bytes more */
        {0xFFFFFFB9u, 99}, /* a Secure handler that interrupted Non-secure code: the frame is on MSP_NS */
        {0xFFFFFFD8u, 99}, /* a Non-secure handler that interrupted Secure code: the frame is on MSP_S */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        regs[14] = cases[i].exc_return;
        size_t n = sym_unwind(t, regs, read_words, stack, out, 8, NULL);
        if (cases[i].frame_at == 99)
            CHECK(n == 0);
        else
            CHECK(n >= 1 && out[0] == stack[cases[i].frame_at + 6u]);
        if (cases[i].frame_at == 99 ? n != 0 : n < 1 || out[0] != stack[cases[i].frame_at + 6u])
            fprintf(stderr, "  EXC_RETURN 0x%08x: %zu frames, the first 0x%08x\n", (unsigned)cases[i].exc_return, n,
                    n ? (unsigned)out[0] : 0u);
    }
    sym_close(t);
    unlink(path);
}

#ifndef SYM_FPCCR /* (so that this test builds, and fails, on an unwinder that never asks for it) */
#define SYM_FPCCR 0xE000EF34u
#define SYM_FPCCR_TS (1u << 26)
#endif

/* A main stack of up to 64 words at SP, and FPCCR when the core's is known. */
struct fp_stack {
    uint32_t words[64];
    bool fpccr_known;
    uint32_t fpccr;
    unsigned fpccr_reads;
};

static bool read_fp_stack(void *ctx, uint32_t addr, uint32_t *value)
{
    struct fp_stack *m = ctx;
    if (addr == SYM_FPCCR) {
        m->fpccr_reads++;
        *value = m->fpccr;
        return m->fpccr_known;
    }
    if (addr < SP || addr >= SP + sizeof m->words || addr % 4u)
        return false;
    *value = m->words[(addr - SP) / 4u];
    return true;
}

/* ARMv8-M with the Security Extension: a Secure context interrupted with FP state active stacks an
 * extended frame, S0-S15, FPSCR and a reserved word after the basic frame (26 words), and with
 * FPCCR.TS set S16-S31 after those (42 words). The interrupted code (TASK + 8, after its push of r7
 * and LR) has its own frame right above, whose LR is a return into CALLER. A walk that sizes the
 * frame without S16-S31 reads the interrupted frame 16 words too low: there lie S16 and S17, here
 * an address after OUTER's call, which it would take for the caller. */
static void test_secure_fp_frame(void)
{
    char path[] = "/tmp/cmprof-test-unwind-XXXXXX";
    struct sym_table *t = open_image(path);
    if (!t)
        return;
    static const struct {
        uint32_t exc_return;
        bool known, ts;
        uint32_t words; /* the frame's size in words */
        unsigned reads; /* FPCCR asked for */
    } cases[] = {
        {0xFFFFFFE9u, true, true, 42, 1},   /* Secure, thread, MSP, FP state, TS set: S16-S31 stacked */
        {0xFFFFFFE9u, true, false, 26, 1},  /* the same with TS clear */
        {0xFFFFFFE9u, false, false, 26, 1}, /* FPCCR not readable: TS taken as clear, the ARMv7-M frame */
        {0xFFFFFFF9u, true, true, 8, 0},    /* no FP state: TS does not matter, not asked */
        {0xFFFFFFA8u, true, true, 26, 0},   /* a Non-Secure context's FP frame (S clear): never S16-S31 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fp_stack m = {.fpccr_known = cases[i].known, .fpccr = cases[i].ts ? SYM_FPCCR_TS : 0u};
        uint32_t w = cases[i].words, out[8], regs[16] = {0};
        m.words[6] = TASK + 8u, m.words[7] = 1u << 24;
        m.words[26] = 0x20002000u, m.words[27] = (OUTER + 0x0cu) | 1u; /* S16, S17: no frame of code */
        m.words[w] = 0x20002000u, m.words[w + 1u] = (CALLER + 0x10u) | 1u;
        regs[13] = SP, regs[14] = cases[i].exc_return, regs[15] = HANDLER + 4u;
        size_t n = sym_unwind(t, regs, read_fp_stack, &m, out, 8, NULL);
        bool ok = n >= 2 && out[0] == TASK + 8u && out[1] == CALLER + 0x0eu && m.fpccr_reads == cases[i].reads;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  EXC_RETURN 0x%08x, TS %d (known %d): %zu frames, 0x%08x 0x%08x; FPCCR read %u times\n",
                    (unsigned)cases[i].exc_return, cases[i].ts, cases[i].known, n, n ? (unsigned)out[0] : 0u,
                    n > 1 ? (unsigned)out[1] : 0u, m.fpccr_reads);
    }
    sym_close(t);
    unlink(path);
}

/* The firmware's stack evidence, hand-made: the words (index above the interrupted SP, value) that
 * looked like return addresses, of `scanned` looked at. */
static size_t evidence(struct sym_table *t, uint32_t pc, uint32_t lr, uint32_t scanned, const uint32_t *pairs,
                       size_t n, uint32_t *out, bool *unproven)
{
    struct sym_stack_words w = {pc, lr, scanned, n, pairs};
    *unproven = false;
    return sym_unwind_words(t, &w, out, 8, unproven);
}

/* A frame pointer: FP_FN's CFA is r7 + 16 in its body, r7 + 8 after the epilogue's adds. The
 * evidence says where r7 pointed (a SYM_FRAME_POINTER_WORD pair); without it the frame is unproven. */
static void test_frame_pointer(struct sym_table *t)
{
    uint32_t out[8];
    bool unproven;
    const uint32_t fp_ret = (FP_FN + 0xcu) | 1u, outer_ret = (OUTER + 0xcu) | 1u, task_ret = (TASK + 6u) | 1u,
                   fpw = SYM_FRAME_POINTER_WORD;
    /* in CALLER (a leaf, LR live) called by FP_FN, whose r7 is the SP (word 0): its LR at word 3 */
    const uint32_t body[] = {0, fpw, 3, outer_ret, 5, task_ret, 7, EXIT_TRAP | 1u};
    CHECK(evidence(t, CALLER + 4u, fp_ret, 16, body, 4, out, &unproven) == 3 && !unproven);
    CHECK(out[0] == FP_FN + 0xau && out[1] == OUTER + 0xau && out[2] == TASK + 4u);
    /* the same words, r7 not in the evidence: FP_FN's caller unproven (as before r7 was captured) */
    CHECK(evidence(t, CALLER + 4u, fp_ret, 16, body + 2, 3, out, &unproven) == 1 && unproven && out[0] == FP_FN + 0xau);
    /* interrupted in FP_FN's body: the CFA from r7 at once */
    CHECK(evidence(t, FP_FN + 0x10u, 0, 16, body, 4, out, &unproven) == 2 && !unproven);
    CHECK(out[0] == OUTER + 0xau && out[1] == TASK + 4u);
    /* in its epilogue, after adds r7, #8: r7 two words up, the CFA r7 + 8 */
    const uint32_t epilogue[] = {2, fpw, 3, outer_ret, 5, task_ret, 7, EXIT_TRAP | 1u};
    CHECK(evidence(t, FP_FN + 0x16u, 0, 16, epilogue, 4, out, &unproven) == 2 && !unproven);
    CHECK(out[0] == OUTER + 0xau && out[1] == TASK + 4u);
    /* before its prologue's frame pointer (after sub sp): the CFA on the SP, r7 not needed */
    CHECK(evidence(t, FP_FN + 4u, 0, 16, body + 2, 3, out, &unproven) == 2 && !unproven && out[0] == OUTER + 0xau);
    /* r7 at a wrong word: where the CFA it gives puts the return address there is none */
    const uint32_t wrong[] = {1, fpw, 3, outer_ret, 5, task_ret, 7, EXIT_TRAP | 1u};
    CHECK(evidence(t, FP_FN + 0x10u, 0, 16, wrong, 4, out, &unproven) == 0 && unproven);
    /* a frame between that saved r7 (OUTER: push {r7, lr}): the r7 FP_FN had is on the stack, not in the
     * evidence, so FP_FN's caller is unproven; OUTER's own frame is proven */
    const uint32_t saved[] = {0, fpw, 1, fp_ret, 5, outer_ret};
    CHECK(evidence(t, OUTER + 4u, 0, 16, saved, 3, out, &unproven) == 1 && unproven && out[0] == FP_FN + 0xau);
    /* the marker is no return address: a CFI slot that holds it is not proven by it */
    const uint32_t slot[] = {1, fpw};
    CHECK(evidence(t, OUTER + 4u, 0, 16, slot, 1, out, &unproven) == 0 && unproven);
}

/* LEAF_FN has no CFI; its code proves it a leaf: CFA = SP and LR live at each of its instructions.
 * Its caller is proven when the call before LR is a BL to it, a BLX Rm, or a BL to a function that
 * branches to it (TAIL_FN); then MID's frame and those above from the CFI as usual. */
static void test_leaf_without_cfi(struct sym_table *t)
{
    uint32_t out[8];
    bool unproven;
    const uint32_t above[] = {1, (OUTER + 0xcu) | 1u, 3, (TASK + 6u) | 1u, 5, EXIT_TRAP | 1u};
    for (uint32_t pc = LEAF_FN; pc < LEAF_FN + 0x10u; pc += 2) {
        CHECK(evidence(t, pc, (MID + 0x18u) | 1u, 16, above, 3, out, &unproven) == 3 && !unproven);
        CHECK(out[0] == MID + 0x16u && out[1] == OUTER + 0xau && out[2] == TASK + 4u);
    }
    /* reached through TAIL_FN's b.n: the caller is TAIL_FN's (as a tail call leaves it) */
    CHECK(evidence(t, LEAF_FN + 4u, (MID + 0x1cu) | 1u, 16, above, 3, out, &unproven) == 3 && !unproven &&
          out[0] == MID + 0x1au);
    /* through a register (blx r3) */
    CHECK(evidence(t, LEAF_FN + 4u, (MID + 0x1eu) | 1u, 16, above, 3, out, &unproven) == 3 && !unproven &&
          out[0] == MID + 0x1cu);
    /* after a BL to another function, which never branches to the leaf: unproven */
    CHECK(evidence(t, LEAF_FN + 4u, (MID + 0xau) | 1u, 16, above, 3, out, &unproven) == 0 && unproven);
    /* an exception return code: the leaf is no exception vector, so unproven */
    CHECK(evidence(t, LEAF_FN + 4u, 0xFFFFFFF9u, 16, above, 3, out, &unproven) == 0 && unproven);
    /* ... but in TAIL_FN, a vector's handler, it is the exception's entry: the stack ends there, proven */
    CHECK(evidence(t, TAIL_FN, 0xFFFFFFF9u, 16, above, 3, out, &unproven) == 0 && !unproven);
    /* TAIL_FN itself has no CFI and is a leaf: after a BL to it, proven */
    CHECK(evidence(t, TAIL_FN, (MID + 0x1cu) | 1u, 16, above, 3, out, &unproven) == 3 && !unproven &&
          out[0] == MID + 0x1au);
    /* the probe's walk: the same caller from the live LR */
    uint32_t regs[16] = {0}, stack[2] = {0, (OUTER + 0xcu) | 1u};
    regs[13] = SP, regs[14] = (MID + 0x18u) | 1u, regs[15] = LEAF_FN + 6u;
    CHECK(sym_unwind(t, regs, read_stack, stack, out, 8, NULL) >= 2 && out[0] == MID + 0x16u && out[1] == OUTER + 0xau);
}

/* The frames above a sample in CALLER (a leaf): MID (CFA sp + 16, its LR at word 3), OUTER (LR
 * at word 5), TASK (LR at word 7: the exit trap, the end). */
static void test_evidence(void)
{
    char path[] = "/tmp/cmprof-test-unwind-XXXXXX";
    struct sym_table *t = open_image(path);
    if (!t)
        return;
    uint32_t out[8];
    bool unproven;
    const uint32_t mid_ret = (MID + 0xau) | 1u, outer_ret = (OUTER + 0xcu) | 1u, task_ret = (TASK + 6u) | 1u;
    /* a leaf: its caller from the live LR, the rest from the words where the CFI puts them */
    const uint32_t leaf[] = {3, outer_ret, 5, task_ret, 7, EXIT_TRAP | 1u};
    CHECK(evidence(t, CALLER + 4u, mid_ret, 16, leaf, 3, out, &unproven) == 3 && !unproven);
    CHECK(out[0] == MID + 8u && out[1] == OUTER + 0xau && out[2] == TASK + 4u);
    /* in MID's prologue (before its push): LR still live, OUTER's frame starts at the SP */
    const uint32_t prologue[] = {1, task_ret, 3, EXIT_TRAP | 1u};
    CHECK(evidence(t, MID, outer_ret, 16, prologue, 2, out, &unproven) == 2 && !unproven);
    CHECK(out[0] == OUTER + 0xau && out[1] == TASK + 4u);
    /* in its epilogue (at the pop, the frame down to the push again): its LR at word 1 */
    const uint32_t epilogue[] = {1, outer_ret, 3, task_ret, 5, EXIT_TRAP | 1u};
    CHECK(evidence(t, MID + 0x10u, 0x12345678u, 16, epilogue, 3, out, &unproven) == 2 && !unproven);
    CHECK(out[0] == OUTER + 0xau && out[1] == TASK + 4u);
    /* a corrupted word: where MID's LR must lie (word 3) the word was no return address; the one at
     * word 2 is never taken for it. The walk stops there, marked. */
    const uint32_t corrupted[] = {2, outer_ret, 5, task_ret, 7, EXIT_TRAP | 1u};
    CHECK(evidence(t, CALLER + 4u, mid_ret, 16, corrupted, 3, out, &unproven) == 1 && unproven && out[0] == MID + 8u);
    /* the words ran out (3 scanned): unproven from MID on, not guessed */
    CHECK(evidence(t, CALLER + 4u, mid_ret, 3, leaf, 0, out, &unproven) == 1 && unproven);
    /* a tail call (OUTER branched to MID, leaving no frame): MID's saved LR is TASK's return, so MID's
     * caller is TASK, and the walk is still proven */
    const uint32_t tail[] = {3, task_ret, 5, EXIT_TRAP | 1u};
    CHECK(evidence(t, MID + 8u, 0, 16, tail, 2, out, &unproven) == 1 && !unproven && out[0] == TASK + 4u);
    /* a call to a noreturn function ends NORET: the return address is NEXT_FN's first instruction,
     * the call before it NORET's */
    const uint32_t noret[] = {1, EXIT_TRAP | 1u};
    CHECK(evidence(t, CALLER + 4u, NEXT_FN | 1u, 16, noret, 1, out, &unproven) == 1 && !unproven &&
          out[0] == NORET + 0xeu);
    /* a live LR that no call left (not after a BL): unproven, not followed */
    CHECK(evidence(t, CALLER + 4u, (OUTER + 0x14u) | 1u, 16, leaf, 0, out, &unproven) == 0 && unproven);
    /* a live LR left over from CALLER's own call to MID (its CFI says LR was never saved): not its
     * return address, unproven */
    CHECK(evidence(t, CALLER + 0x18u, (CALLER + 0x14u) | 1u, 16, leaf, 3, out, &unproven) == 0 && unproven);
    /* an exception's entry (EXC_RETURN in LR): the stack ends there, proven */
    CHECK(evidence(t, CALLER + 4u, 0xFFFFFFF9u, 16, leaf, 0, out, &unproven) == 0 && !unproven);
    /* no CFI at the PC: unproven */
    CHECK(evidence(t, TEXT + 0x10u, mid_ret, 16, leaf, 3, out, &unproven) == 0 && unproven);
    test_frame_pointer(t);
    test_leaf_without_cfi(t);
    sym_close(t);
    unlink(path);
}

/* ---- .ARM.exidx: the compact model's opcodes, and the rules they give, from hand-made tables ---- */

static bool run_ops(const uint8_t *ops, size_t n, struct exidx_rules *r)
{
    return exidx_run(ops, n, r) == EXIDX_OK;
}

#define RUN(r, ...) run_ops((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}), (r))

static void test_exidx_opcodes(void)
{
    struct exidx_rules r;
    /* vsp += 24; pop {r4, r14}; finish: the CFA 32 above, LR at CFA - 4, r4 at CFA - 8 */
    CHECK(RUN(&r, 0x05, 0xa8, 0xb0) && r.cfa_reg == 13 && r.cfa_off == 32 && r.saved == (1u << 4 | 1u << 14) &&
          r.off[14] == -4 && r.off[4] == -8);
    /* pop {r3} (0xb1 0x08); pop {r14} under the r4-r15 mask (0x84 0x00) */
    CHECK(RUN(&r, 0xb1, 0x08, 0x84, 0x00, 0xb0) && r.cfa_off == 8 && r.off[3] == -8 && r.off[14] == -4);
    /* pop {r4, r15}: the return address is PC's slot */
    CHECK(RUN(&r, 0x88, 0x01) && r.cfa_off == 8 && r.saved == (1u << 4 | 1u << 14) && r.off[14] == -4);
    /* pop r4-r7 (0xa3), and with r14 (0xab) */
    CHECK(RUN(&r, 0xa3) && r.cfa_off == 16 && !(r.saved & (1u << 14)) && r.off[4] == -16 && r.off[7] == -4);
    CHECK(RUN(&r, 0xab) && r.cfa_off == 20 && r.off[14] == -4 && r.off[4] == -20);
    /* pop r0-r3 under a mask */
    CHECK(RUN(&r, 0xb1, 0x0f) && r.cfa_off == 16 && r.off[0] == -16);
    /* vsp -= 8, then += 40; a long vsp += 0x204 + (uleb128 << 2) */
    CHECK(RUN(&r, 0x41, 0x09) && r.cfa_off == 32);
    CHECK(RUN(&r, 0xb2, 0x01) && r.cfa_off == 0x208);
    CHECK(RUN(&r, 0xb2, 0x81, 0x01) && r.cfa_off == 0x204 + 129 * 4);
    /* VFP: FSTMFDX D[s]-D[s+c] (8 bytes each and a word), D8-D[8+n], VPUSH forms */
    CHECK(RUN(&r, 0xb3, 0x12) && r.cfa_off == 28);
    CHECK(RUN(&r, 0xb8) && r.cfa_off == 12);
    CHECK(RUN(&r, 0xc9, 0x03) && r.cfa_off == 32);
    CHECK(RUN(&r, 0xc8, 0x00) && r.cfa_off == 8);
    CHECK(RUN(&r, 0xd1) && r.cfa_off == 16);
    /* vsp = r7 first (a frame pointer), then pop {r7, r14} */
    CHECK(RUN(&r, 0x97, 0x84, 0x08) && r.cfa_reg == 7 && r.cfa_off == 8 && r.off[7] == -8 && r.off[14] == -4);
    /* finish ends the opcodes: what follows is not run */
    CHECK(RUN(&r, 0xb0, 0x80, 0x00) && r.cfa_off == 0 && r.saved == 0);
    /* refused: refuse-to-unwind, vsp = r13 / r15, vsp = r7 after a pop, SP popped, spare opcodes,
     * opcodes cut short, a zero mask */
    CHECK(!RUN(&r, 0x80, 0x00));
    CHECK(!RUN(&r, 0x9d) && !RUN(&r, 0x9f) && !RUN(&r, 0xa8, 0x97));
    CHECK(!RUN(&r, 0x82, 0x00));
    CHECK(!RUN(&r, 0xb4) && !RUN(&r, 0xca, 0x00) && !RUN(&r, 0xd8) && !RUN(&r, 0xff));
    CHECK(!RUN(&r, 0x84) && !RUN(&r, 0xb2, 0x80) && !RUN(&r, 0xb1) && !RUN(&r, 0xb3));
    CHECK(!RUN(&r, 0xb1, 0x00) && !RUN(&r, 0xb1, 0x10));
}

#define XCODE 0x08000000u /* functions, 0x20 bytes apart */
#define XTAB 0x08000800u  /* .ARM.extab */
#define XIDX 0x08001000u  /* .ARM.exidx */
enum { XF, XG, XH, XK, XE, XT, XW, X_N };

struct image {
    uint8_t code[0x100], tab[0x20], idx[8 * X_N];
};

static size_t read_image(void *ctx, uint32_t addr, uint8_t *buf, size_t n)
{
    struct image *m = ctx;
    const uint8_t *base = addr >= XTAB && addr < XTAB + sizeof m->tab ? m->tab + (addr - XTAB)
                          : addr >= XCODE && addr < XCODE + sizeof m->code ? m->code + (addr - XCODE) : NULL;
    size_t avail = !base ? 0 : base >= m->tab ? sizeof m->tab - (addr - XTAB) : sizeof m->code - (addr - XCODE);
    n = n < avail ? n : avail;
    if (n)
        memcpy(buf, base, n);
    return n;
}

static void put16s(uint8_t *p, const uint16_t *hw, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[2 * i] = (uint8_t)hw[i], p[2 * i + 1] = (uint8_t)(hw[i] >> 8);
}

static void put32(uint8_t *p, uint32_t w)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(w >> (8 * i));
}

/* Seven functions: F (push {r4, lr}; sub sp, #24; ...; bl; add sp, #24; pop {r4, pc}), inline
 * opcodes; G (push {r3, lr}), opcodes in .ARM.extab with personality 1; H cannot be unwound; K
 * has a generic personality routine; E jumps to its shared epilogue; T pops and tail-calls; W has
 * 32-bit prologue instructions (push.w, sub.w sp) with two plain 32-bit ones between them (udiv,
 * mov.w with a shift), as GCC schedules them. */
static void make_image(struct image *m)
{
    memset(m, 0, sizeof *m);
    put16s(m->code + 0x00, (const uint16_t[]){0xb510, 0xb086, 0x6823, 0xf000, 0xf800, 0x6823, 0xb006, 0xbd10}, 8);
    put16s(m->code + 0x20, (const uint16_t[]){0xb508, 0x2001, 0xf000, 0xf800, 0xbd08}, 5);
    put16s(m->code + 0x80, (const uint16_t[]){0xb510, 0x2800, 0xe001, 0xbf00, 0xbf00, 0xbd10}, 6);
    put16s(m->code + 0xa0, (const uint16_t[]){0xb510, 0xe8bd, 0x4010, 0xf100, 0xb800}, 5);
    put16s(m->code + 0xc0, (const uint16_t[]){0xe92d, 0x41f0, 0xfbb0, 0xf3f3, 0xea4f, 0x0a95, 0xf5ad, 0x7d80, 0xf000, 0xf800}, 10);
    put32(m->tab, 0x8101b108u);       /* personality 1, one more word: pop {r3} ... */
    put32(m->tab + 4, 0x8400b0b0u);   /* ... pop {r14}; finish */
    put32(m->tab + 8, 0x00000123u);   /* a generic personality routine's address */
    const uint32_t words[X_N] = {0x8005a8b0u, 0 /* extab */, 1u /* cantunwind */, 0 /* extab + 8 */, 0x80a8b0b0u,
                                 0x80a8b0b0u, 0x803facb0u};
    for (uint32_t i = 0; i < X_N; i++) {
        uint32_t at = XIDX + 8 * i;
        put32(m->idx + 8 * i, (XCODE + 0x20 * i - at) & 0x7fffffffu);
        uint32_t w = words[i];
        if (i == XG || i == XK)
            w = (XTAB + (i == XK ? 8u : 0u) - (at + 4)) & 0x7fffffffu;
        put32(m->idx + 8 * i + 4, w);
    }
}

static enum exidx_result at(const struct image *m, uint32_t pc, bool leaf, struct exidx_rules *r)
{
    struct exidx_table x = {m->idx, sizeof m->idx, XIDX, read_image, NULL, (void *)m};
    memset(r, 0x55, sizeof *r);
    return exidx_rules_at(&x, pc, leaf, r);
}

static void test_exidx_rules(void)
{
    static struct image m;
    make_image(&m);
    struct exidx_rules r;
    const uint32_t F = XCODE, G = XCODE + 0x20, E = XCODE + 0x80, T = XCODE + 0xa0, W = XCODE + 0xc0;
    /* a call site in F's body: the opcodes as they are */
    CHECK(at(&m, F + 8, false, &r) == EXIDX_OK && r.cfa_off == 32 && r.off[14] == -4 && r.off[4] == -8);
    /* interrupted before the push: LR live, the CFA at the SP */
    CHECK(at(&m, F, true, &r) == EXIDX_OK && r.cfa_off == 0 && !(r.saved & (1u << 14)));
    /* after the push, before sub sp: the CFA 8 above, LR at CFA - 4 */
    CHECK(at(&m, F + 2, true, &r) == EXIDX_OK && r.cfa_off == 8 && r.off[14] == -4 && r.off[4] == -8);
    /* in the body: the opcodes' rules */
    CHECK(at(&m, F + 4, true, &r) == EXIDX_OK && r.cfa_off == 32 && r.off[14] == -4);
    /* at add sp (not yet run) and at the pop (add sp has run): the code to the return says */
    CHECK(at(&m, F + 0xc, true, &r) == EXIDX_OK && r.cfa_off == 32 && r.off[14] == -4 && r.off[4] == -8);
    CHECK(at(&m, F + 0xe, true, &r) == EXIDX_OK && r.cfa_off == 8 && r.off[14] == -4 && r.off[4] == -8);
    /* personality 1 in .ARM.extab: pop {r3}; pop {r14} */
    CHECK(at(&m, G + 4, false, &r) == EXIDX_OK && r.cfa_off == 8 && r.off[3] == -8 && r.off[14] == -4);
    /* cannot unwind; a generic personality routine: refused, never guessed */
    CHECK(at(&m, XCODE + 0x44, false, &r) == EXIDX_REFUSED);
    CHECK(at(&m, XCODE + 0x64, true, &r) == EXIDX_REFUSED);
    /* below the first entry: none */
    CHECK(at(&m, XCODE - 2, false, &r) == EXIDX_NONE);
    /* E: a b.n to the shared epilogue is followed to its pop {r4, pc} */
    CHECK(at(&m, E + 4, true, &r) == EXIDX_OK && r.cfa_off == 8 && r.off[14] == -4);
    /* T: pop.w {r4, lr} then a tail call (b.w out of it): at the pop LR is at CFA - 4; after it, LR live */
    CHECK(at(&m, T + 2, true, &r) == EXIDX_OK && r.cfa_off == 8 && r.off[14] == -4);
    CHECK(at(&m, T + 6, true, &r) == EXIDX_OK && r.cfa_off == 0 && !(r.saved & (1u << 14)));
    /* W: after push.w {r4-r8, lr} (24 bytes) but before sub.w sp, #256 (and past the plain udiv and
     * mov.w); then in the body (280) */
    CHECK(at(&m, W + 4, true, &r) == EXIDX_OK && r.cfa_off == 24 && r.off[14] == -4 && r.off[4] == -24);
    CHECK(at(&m, W + 0xc, true, &r) == EXIDX_OK && r.cfa_off == 24 && r.off[14] == -4);
    CHECK(at(&m, W + 0x10, true, &r) == EXIDX_OK && r.cfa_off == 280 && r.off[14] == -4 && r.off[4] == -24);
    /* the code and the opcodes disagree (the opcodes say 32; the code pushes 8, then a bl before pc),
     * and no straight line to the return from pc (a cbz): refused, not guessed */
    m.code[2] = 0x00, m.code[3] = 0xbf;    /* F's sub sp becomes a nop */
    m.code[0xc] = 0x00, m.code[0xd] = 0xb1; /* its add sp a cbz */
    CHECK(at(&m, F + 0xa, true, &r) == EXIDX_REFUSED);
}

/* ---- the code of a function without CFI, hand-made: a leaf that keeps its caller's frame? ---- */

#define LCODE 0x08004000u

struct halves {
    uint8_t b[64];
    size_t n;
};

static size_t read_halves(void *ctx, uint32_t addr, uint8_t *buf, size_t n)
{
    const struct halves *h = ctx;
    if (addr < LCODE || addr - LCODE >= h->n)
        return 0;
    size_t avail = h->n - (addr - LCODE);
    n = n < avail ? n : avail;
    memcpy(buf, h->b + (addr - LCODE), n);
    return n;
}

static bool is_leaf(const uint16_t *hw, size_t n)
{
    struct halves h = {{0}, 2 * n};
    put16s(h.b, hw, n);
    return leaf_keeps_frame(read_halves, &h, LCODE, LCODE + (uint32_t)h.n);
}

#define LEAF(...) is_leaf((const uint16_t[]){__VA_ARGS__}, sizeof((const uint16_t[]){__VA_ARGS__}) / 2)

static void test_leaf_code(void)
{
    /* newlib's memcpy, in part: mov ip, r0; orr.w r3, r1, r0; ands.w r3, r3, #3; bne.n; ldr r3, [r1];
     * str r3, [r0]; ldr.w r3, [r1], #4; str.w r3, [r0], #4; itt ne; ldrbne.w r3, [r1], #1; ldrh;
     * cmp.w r2, #8 (to PC: a compare); tbb [pc, r3]; mov r0, ip; bx lr; nop */
    CHECK(LEAF(0x4684, 0xea41, 0x0300, 0xf013, 0x0303, 0xd149, 0x680b, 0x6003, 0xf851, 0x3b04, 0xf840, 0x3b04,
               0xbf1c, 0xf811, 0x3b01, 0x880b, 0xf1b2, 0x0f08, 0xe8df, 0xf003, 0x4660, 0x4770, 0xbf00));
    /* ldmia r1!, {r3, r4}; stmia r0!, {r3, r4}; ldrd r3, r4, [r1, #8]; udiv r3, r3, r2; ldr r3, [sp, #4]; b.w */
    CHECK(LEAF(0xc918, 0xc018, 0xe9d1, 0x3402, 0xfbb3, 0xf3f2, 0x9b01, 0xf000, 0xb800, 0x4770));
    /* push {lr} ... pop {pc}: unproven */
    CHECK(!LEAF(0xb500, 0x680b, 0xbd00));
    /* a BL, a BLX Rm, an SVC: calls, unproven */
    CHECK(!LEAF(0x680b, 0xf000, 0xf800, 0x4770));
    CHECK(!LEAF(0x4798, 0x4770));
    CHECK(!LEAF(0xdf00, 0x4770));
    /* writes to SP: sub sp, #8; mov sp, r0; add.w sp, sp, #8; str.w lr, [sp, #-4]!; stmdb sp!, {r4, lr} */
    CHECK(!LEAF(0xb082, 0x4770));
    CHECK(!LEAF(0x4685, 0x4770));
    CHECK(!LEAF(0xf10d, 0x0d08, 0x4770));
    CHECK(!LEAF(0xf84d, 0xed04, 0x4770));
    CHECK(!LEAF(0xe92d, 0x4010, 0x4770));
    /* writes to LR (mov lr, r0; ldr.w lr, [r1]), loads of PC (ldr.w pc, [sp], #4; ldmia.w r1, {r4, pc}) */
    CHECK(!LEAF(0x4686, 0x4770));
    CHECK(!LEAF(0xf8d1, 0xe000, 0x4770));
    CHECK(!LEAF(0xf85d, 0xfb04));
    CHECK(!LEAF(0xe891, 0x8010));
    /* undecodable here: a coprocessor word (vldr), UDF, MSR: unproven */
    CHECK(!LEAF(0xed9f, 0x0a00, 0x4770));
    CHECK(!LEAF(0xde00, 0x4770));
    CHECK(!LEAF(0xf380, 0x8808, 0x4770));
    /* a 32-bit instruction cut by the function's end; an empty function */
    CHECK(!LEAF(0x4770, 0xf851));
    CHECK(!leaf_keeps_frame(read_halves, &(struct halves){{0}, 0}, LCODE, LCODE));
    /* bytes that cannot be read */
    struct halves h = {{0}, 4};
    CHECK(!leaf_keeps_frame(read_halves, &h, LCODE, LCODE + 8u));
    /* a tail call: b.w back to LCODE found (a b.n to LCODE - 2 and a bl to LCODE are not) */
    put16s(h.b, (const uint16_t[]){0xbf00, 0xf7ff, 0xbffd, 0xe7fa, 0xf7ff, 0xfffa}, 6);
    h.n = 12;
    CHECK(leaf_branches_to(read_halves, &h, LCODE, LCODE + 12u, LCODE));
    CHECK(!leaf_branches_to(read_halves, &h, LCODE, LCODE + 12u, LCODE + 2u));
    uint32_t target;
    CHECK(leaf_bl_target(read_halves, &h, LCODE + 12u, &target) && target == LCODE);
    CHECK(!leaf_bl_target(read_halves, &h, LCODE + 6u, &target));
}

int main(void)
{
    sym_set_isolation(0);
    RUN_TEST(test_task_roots);
    RUN_TEST(test_exception_frames);
    RUN_TEST(test_secure_fp_frame);
    RUN_TEST(test_evidence);
    RUN_TEST(test_exidx_opcodes);
    RUN_TEST(test_exidx_rules);
    RUN_TEST(test_leaf_code);
    return check_summary();
}
