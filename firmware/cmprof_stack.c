/* Stack evidence for the host's unwinder (cmprof.h, CMPROF_STACKS=1): on a chosen sample the
 * tick keeps the stacked LR and the words of the interrupted stack that look like Thumb return
 * addresses into the code, each with its offset from the interrupted SP. Nothing is walked here:
 * the host proves each frame with the ELF's call-frame information, which says at which offset a
 * return address must lie, and rejects a word anywhere else. The drain sends each record as a
 * '^' line after the sample line holding its sample (docs/stream.md):
 *   '^' BACK PC6 LR6 SCANNED2 { OFF2 RET4 }
 * BACK: samples from the line's last back to this one (0..63); PC and LR: 32 bits in 6 base64
 * chars; SCANNED: the words looked at (all of them hold no return address but those listed);
 * OFF: a word's index above the interrupted SP; RET: (word - code base) / 2, 24 bits (the word is
 * odd: a Thumb address), or 0xFFFFFF for an exception return code (0xFFFFFF00 and up), or
 * 0xFFFFFE where the interrupted r7 pointed (a frame pointer into the words scanned: a function
 * built with -fno-omit-frame-pointer, or at -O0, has its CFA on r7, which the host needs).
 * A dump (cmprof_dump(), built without CMPROF_STREAM) keeps the newest records and prints them after
 * the samples, in hex: "sw BACK PC LR SCANNED { OFF WORD }" (BACK from the dump's last sample). */
#include "cmprof.h"

#include <stddef.h>

#ifndef CMPROF_STREAM
#define CMPROF_STREAM 0
#endif
#ifndef CMPROF_STACK_RECORDS
#define CMPROF_STACK_RECORDS 8u
#endif
_Static_assert((CMPROF_STACK_RECORDS & (CMPROF_STACK_RECORDS - 1u)) == 0u, "CMPROF_STACK_RECORDS: a power of two");
_Static_assert(CMPROF_STACK_WORDS >= 1u && CMPROF_STACK_WORDS <= 4095u, "CMPROF_STACK_WORDS: 1 to 4095");
_Static_assert(CMPROF_STACK_KEEP >= 1u && CMPROF_STACK_KEEP + CMPROF_STACK_FP <= 63u, "CMPROF_STACK_KEEP: 1 to 63 (62 with CMPROF_STACK_FP)");

/* The code a return address may point into, and the top of the main stack (no scan passes it). */
#ifndef CMPROF_CODE_START
extern const char _stext[], _etext[];
#define CMPROF_CODE_START ((uint32_t)(uintptr_t)_stext)
#define CMPROF_CODE_END ((uint32_t)(uintptr_t)_etext)
#endif
#ifndef CMPROF_STACK_TOP
/* the initial MSP: the first word of the vector table (VTOR; it reads 0 on a core without one) */
#define CMPROF_STACK_TOP (*(const volatile uint32_t *)(uintptr_t)(*(const volatile uint32_t *)0xE000ED08u))
#endif

#define CMPROF_EXC_RETURN_MIN 0xFFFFFF00u
#define EXC_RETURN_CODE 0xFFFFFFu /* on the wire: any word from CMPROF_EXC_RETURN_MIN up */
/* kept for the word r7 pointed at (on the wire FRAME_POINTER_CODE): no exception return code, whose
 * bit 1 is always clear */
#define FRAME_POINTER_WORD 0xFFFFFFFEu
#define FRAME_POINTER_CODE 0xFFFFFEu

struct stack_record {
    uint32_t seq, pc, lr;
    uint16_t scanned, n;
    uint16_t off[CMPROF_STACK_KEEP + CMPROF_STACK_FP]; /* the words kept, and where r7 pointed among them */
    uint32_t ret[CMPROF_STACK_KEEP + CMPROF_STACK_FP];
};

static struct {
    uint32_t head;          /* records written (by the tick) ... */
    volatile uint32_t tail; /* ... and sent or dropped (by the drain) */
    uint32_t dropped;       /* by the tick: no room */
    uint32_t stale;         /* by the drain: its sample went out before it could */
    uint32_t told;          /* dropped + stale, as the host last heard it ("^~N") */
    struct stack_record rec[CMPROF_STACK_RECORDS];
} stacks;

/* Whether the instruction before Thumb address w (odd) is a call: BL (two halfwords 11110... 11x1...)
 * or BLX Rm (010001111...). A return address always is; a function pointer kept on the stack (its
 * function's first instruction) or a number that happens to fall in the code seldom is. */
static inline int after_call(uint32_t w)
{
    const uint16_t *at = (const uint16_t *)(uintptr_t)(w - 1u);
    uint16_t last = at[-1];
    return (last & 0xFF87u) == 0x4780u || ((at[-2] & 0xF800u) == 0xF000u && (last & 0xD000u) == 0xD000u);
}

/* The return addresses an RTOS set for its tasks (not left by a call: no BL before them), kept by
 * the scan as return addresses are, so that the host ends a task's stack at its function. */
#ifndef CMPROF_STACK_ROOTS
#define CMPROF_STACK_ROOTS 4u
#endif
static uint32_t roots[CMPROF_STACK_ROOTS];
static volatile uint32_t n_roots;

static inline int task_root(uint32_t w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (roots[i] == w)
            return 1;
    return 0;
}

/* Where r7 pointed (word fo), in its place among the k words kept (by rising offset); none when a
 * kept word is there (r7 then is no frame pointer). Returns the words now kept. */
#if CMPROF_STACK_FP
static uint32_t keep_frame_pointer(struct stack_record *r, uint32_t k, uint32_t fo)
{
    uint32_t j = 0;
    while (j < k && r->off[j] < fo)
        j++;
    if (j < k && r->off[j] == fo)
        return k;
    for (uint32_t m = k; m > j; m--) {
        r->off[m] = r->off[m - 1u];
        r->ret[m] = r->ret[m - 1u];
    }
    r->off[j] = (uint16_t)fo;
    r->ret[j] = FRAME_POINTER_WORD;
    return k + 1u;
}
#endif

#if CMPROF_STACK_FP
uint32_t cmprof_stack_r7; /* the interrupted r7, stored by the interrupt's prologue on every sample */
#endif

void cmprof_stack_capture(const uint32_t *frame, uint32_t exc_return, uint32_t pc, uint32_t seq)
{
    uint32_t h = stacks.head;
    if (h - stacks.tail >= CMPROF_STACK_RECORDS) {
#if CMPROF_STREAM
        stacks.dropped++; /* the drain is behind: its records wait, this sample goes without */
        return;
#else
        stacks.tail++; /* a dump: the newest records stay, as the ring keeps the newest samples */
#endif
    }
    struct stack_record *r = &stacks.rec[h & (CMPROF_STACK_RECORDS - 1u)];
#if CMPROF_TRUSTZONE
    if ((exc_return ^ (exc_return >> 6)) & 1u) {
        /* the other Security state's frame (cmprof.h): nothing of it, nor of its stack, is known here;
         * the record says so (no LR, no word looked at), and the host marks the caller unproven */
        r->seq = seq;
        r->pc = pc;
        r->lr = 0u;
        r->scanned = 0u;
        r->n = 0u;
        __asm volatile("" ::: "memory");
        stacks.head = h + 1u;
        return;
    }
#endif
    /* the interrupted SP: above the 8-word frame, its alignment word (xPSR bit 9) and, when
     * EXC_RETURN bit 4 is clear, the 18 words of floating-point state */
    uint32_t sp = (uint32_t)(uintptr_t)frame + 32u + ((frame[7] >> 7) & 4u) + ((exc_return & 0x10u) ? 0u : 72u);
#if CMPROF_TRUSTZONE
    /* ARMv8-M: a Secure context's FP state holds S16-S31 too (64 bytes) when FPCCR.TS is set (which
     * reads 0 from Non-Secure code, whose frames never hold them) */
    if ((exc_return & 0x50u) == 0x40u && (*(const volatile uint32_t *)0xE000EF34u & (1u << 26)))
        sp += 64u;
#endif
    uint32_t top = CMPROF_STACK_TOP, words = 0u;
    if (sp < top) /* a stack above the main stack's top: not known how far it goes, not scanned */
        words = (top - sp) / 4u < CMPROF_STACK_WORDS ? (top - sp) / 4u : CMPROF_STACK_WORDS;
    const uint32_t *p = (const uint32_t *)(uintptr_t)sp;
    /* a return address lies at least 4 bytes into the code: a call comes before it */
    uint32_t lo = CMPROF_CODE_START + 4u, span = CMPROF_CODE_END - lo, k = 0u, i = 0u, nr = n_roots;
    while (i < words) {
        uint32_t w = p[i++];
        /* a return address, or an exception's return code (a handler, or a task started with LR
         * 0xFFFFFFFF, saved it), or a task's exit address: the host ends the walk there, proven */
        if (w - lo < span ? (w & 1u) && (after_call(w) || (nr && task_root(w, nr))) : w >= CMPROF_EXC_RETURN_MIN) {
            r->off[k] = (uint16_t)(i - 1u);
#if CMPROF_STACK_FP
            r->ret[k] = w == FRAME_POINTER_WORD ? 0xFFFFFFFFu : w; /* the marker's value is never a stack word's */
#else
            r->ret[k] = w; /* (a dump prints FRAME_POINTER_WORD as another exception return code) */
#endif
            if (++k == CMPROF_STACK_KEEP)
                break; /* what lies above is not looked at: the host knows it as unknown */
        }
    }
#if CMPROF_STACK_FP
    uint32_t r7 = cmprof_stack_r7;
    if (r7 - sp < 4u * i && !(r7 & 3u)) /* r7 points into the words looked at: a frame pointer, maybe */
        k = keep_frame_pointer(r, k, (r7 - sp) / 4u);
#endif
    r->seq = seq;
    r->pc = pc;
    r->lr = frame[5];
    r->scanned = (uint16_t)i;
    r->n = (uint16_t)k;
    __asm volatile("" ::: "memory"); /* the record in place before the drain may see it */
    stacks.head = h + 1u;
}

void cmprof_stack_task_root(const void *initial_sp)
{
    const uint32_t *p = (const uint32_t *)initial_sp;
    uint32_t lo = CMPROF_CODE_START, span = CMPROF_CODE_END - lo;
    if (!p)
        return;
    /* the hardware frame the task starts from: r0-r3, r12, LR, PC (its function), xPSR (Thumb bit
     * only), above what the port saves itself (r4-r11, EXC_RETURN, ...) */
    for (uint32_t i = 2u; i < 24u; i++) {
        if (p[i] != 0x01000000u || p[i - 1u] - lo >= span)
            continue;
        uint32_t lr = p[i - 2u], n = n_roots;
        if (lr - lo >= span || !(lr & 1u) || task_root(lr, n) || n == CMPROF_STACK_ROOTS)
            return; /* none to keep (0 or 0xFFFFFFFF: the scan keeps the latter anyway), or known */
        roots[n] = lr;
        __asm volatile("" ::: "memory"); /* in place before the tick may look at it */
        n_roots = n + 1u;
        return;
    }
}

static const char stack_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *put_b64(char *b, uint32_t v, int chars)
{
    for (int sh = 6 * (chars - 1); sh >= 0; sh -= 6)
        *b++ = stack_b64[(v >> sh) & 63u];
    return b;
}

/* "^~N" into b, N the samples whose evidence was dropped so far (decimal): its length */
static uint32_t put_dropped(char *b, uint32_t n)
{
    char digits[10];
    uint32_t k = 0, len = 2;
    do
        digits[k++] = (char)('0' + n % 10u);
    while ((n /= 10u) != 0u);
    b[0] = '^';
    b[1] = '~';
    while (k)
        b[len++] = digits[--k];
    return len;
}

uint32_t cmprof_stack_line(char *b, uint32_t first, uint32_t count, uint32_t code_base)
{
    while (stacks.tail != *(volatile uint32_t *)&stacks.head) {
        const struct stack_record *r = &stacks.rec[stacks.tail & (CMPROF_STACK_RECORDS - 1u)];
        uint32_t at = r->seq - first;
        if (at >= count && (int32_t)at >= 0)
            break; /* its sample goes out in a later line */
        if (at >= count) { /* its sample went out without it: never sent late, for another sample */
            stacks.tail++;
            stacks.stale++;
            continue;
        }
        char *s = b;
        *s++ = '^';
        s = put_b64(s, count - 1u - at, 1);
        s = put_b64(s, r->pc, 6);
        s = put_b64(s, r->lr, 6);
        uint32_t scanned = r->scanned;
        char *words = s;
        s += 2;
        for (uint32_t k = 0; k < r->n; k++) {
            uint32_t v = r->ret[k] == FRAME_POINTER_WORD     ? FRAME_POINTER_CODE
                         : r->ret[k] >= CMPROF_EXC_RETURN_MIN ? EXC_RETURN_CODE
                                                               : (r->ret[k] - code_base) >> 1;
            if (v >= FRAME_POINTER_CODE && r->ret[k] < CMPROF_EXC_RETURN_MIN) { /* out of the stream's reach */
                scanned = r->off[k];
                break;
            }
            s = put_b64(s, r->off[k], 2);
            s = put_b64(s, v, 4);
        }
        put_b64(words, scanned, 2);
        __asm volatile("" ::: "memory"); /* read before the slot goes back to the tick */
        stacks.tail++;
        return (uint32_t)(s - b);
    }
    /* then the count of samples whose evidence was dropped, after each sample line that changed it
     * (a few bytes, only while the drain is behind): the host says so beside the callers */
    uint32_t dropped = cmprof_stack_dropped();
    if (dropped == stacks.told)
        return 0u;
    stacks.told = dropped;
    return put_dropped(b, dropped);
}

static void put_hex8(cmprof_putc_fn putc, uint32_t v)
{
    putc(' ');
    for (int sh = 28; sh >= 0; sh -= 4)
        putc("0123456789abcdef"[(v >> sh) & 15u]);
}

void cmprof_stack_dump(cmprof_putc_fn putc, uint32_t first, uint32_t n)
{
    for (uint32_t k = stacks.tail; k != stacks.head; k++) {
        const struct stack_record *r = &stacks.rec[k & (CMPROF_STACK_RECORDS - 1u)];
        if (r->seq - first >= n - first)
            continue; /* its sample is no longer in the ring */
        putc('s');
        putc('w');
        put_hex8(putc, n - 1u - r->seq);
        put_hex8(putc, r->pc);
        put_hex8(putc, r->lr);
        put_hex8(putc, r->scanned);
        for (uint32_t i = 0; i < r->n; i++) {
            put_hex8(putc, r->off[i]);
            put_hex8(putc, r->ret[i] == FRAME_POINTER_WORD && !CMPROF_STACK_FP ? 0xFFFFFFFFu : r->ret[i]);
        }
        putc('\n');
    }
}

uint32_t cmprof_stack_dropped(void)
{
    return *(volatile uint32_t *)&stacks.dropped + stacks.stale;
}
