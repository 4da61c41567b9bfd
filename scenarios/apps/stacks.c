/* Callers from the sampler's own stack evidence (CMPROF_STACKS=1), streamed, against call shapes
 * whose truth is known by construction (and counted by the plugin at the return addresses):
 *   leaf()         called 3 times a round by caller_a() and once by caller_b(): 75 % / 25 %
 *   deep_leaf()    at the end of chain_1() -> ... -> chain_5(): one stack only
 *   rec_leaf()     under recurse() DEPTH + 1 times deep (recursion)
 *   ptr_target()   called through a function pointer by via_pointer()
 *   framed()       short, with a prologue and an epilogue (push/pop), called by frames_caller():
 *                  many samples land in them, where the CFA rule differs from the body's
 *   FP_FRAMES      fp_leaf() called by fp_caller(), built with -fno-omit-frame-pointer: its CFA
 *                  is on r7, which the evidence carries with CMPROF_STACK_FP=1
 *   ROUNDS         rounds of all of the above between drains
 *   SAMPLES, PERIOD, CMPROF_JITTER  as in the other scenarios
 *   UNWIND_TABLES  built with -funwind-tables (and .debug_frame removed): the personality routines
 *                  the .ARM.exidx entries name, never called here (no C++ exceptions), defined empty
 *   MEMCPY_CALLERS newlib's memcpy (hand-written, no call-frame information) called 3 times a round
 *                  by copy_a() and once by copy_b(): the host proves it a leaf from its code
 *   TZ_NS          the Non-Secure image of a TrustZone-M pair (m33_ns_stacks, over tz_secure.c): to_secure()
 *                  calls the Secure secure_work() (its veneer), to_secure() called 3 times a round by
 *                  tz_a() and once by tz_b(); samples in Secure code cannot see its frame
 *   TZ_S           the other way round (m33_s_calls_ns, built -mcmse): the firmware in Secure state, its
 *                  to_ns() calling a Non-Secure function (tz_ns_callee.c) in the same pattern
 *   FP_TS          (Secure state, hard float) FPCCR.TS set and FP state live in thread mode: every
 *                  sample's frame is an extended one with S16-S31 (42 words), which the capture must size
 *   NS_IRQ         (Secure state, -mcmse) the IoTKit's TIMER1 made Non-Secure and started (about every
 *                  NS_RELOAD ticks) at the sampler's priority; its handler, in the Non-Secure image (tz_ns_irq.c),
 *                  interrupts Secure code, and a tick that comes meanwhile is tail-chained after it by
 *                  QEMU itself (EXC_RETURN.DCRS clear, the callee context below its frame)
 *   STACKS_RTT     the stream (samples and their '^' evidence) over RTT only (firmware/cmprof_rtt.c),
 *                  read by cmprof-top's rtt: source; the UART carries the boot line and the counts
 * Built without CMPROF_STACKS too, for the cost of the evidence (instructions, bytes, RAM). */
#include "board.h"
#include "cmprof.h"
#include "work.h"
#if STACKS_RTT
#include "cmprof_rtt.h"
#endif

#include <stddef.h>
#include <string.h>

#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 20000u
#endif
#ifndef DEPTH
#define DEPTH 3u
#endif
#ifndef OTHER_N
#define OTHER_N 100u /* turns of the other Security state's loop a call (TZ_NS, TZ_S) */
#endif

extern const uint32_t __build_id[];
#ifdef BOARD_nrf51 /* the micro:bit's flash starts at 0 */
#define CODE_BASE 0x00000000u
#elif defined(BOARD_an505_ns) /* the Non-Secure image's code in the MPS2 AN505's SSRAM1 (an505_ns.ld) */
#define CODE_BASE 0x00200000u
#elif defined(BOARD_an505) /* the Secure alias of the MPS2 AN505's code SSRAM */
#define CODE_BASE 0x10000000u
#else
#define CODE_BASE 0x08000000u
#endif

/* counted after each call, so that no call is a tail call (a tail call leaves no frame) */
static volatile uint32_t after;

NOP_LOOP(__attribute__((noinline)), leaf)
NOP_LOOP(__attribute__((noinline)), deep_leaf)
NOP_LOOP(__attribute__((noinline)), rec_leaf)
NOP_LOOP(__attribute__((noinline)), ptr_target)

__attribute__((noinline)) void caller_a(void)
{
    leaf(60);
    leaf(60);
    leaf(60);
    after++;
}

__attribute__((noinline)) void caller_b(void)
{
    leaf(60);
    after++;
}

#define CHAIN(name, next)                                                                                  \
    __attribute__((noinline)) void name(uint32_t n)                                                        \
    {                                                                                                      \
        next(n);                                                                                           \
        after++;                                                                                           \
    }
CHAIN(chain_5, deep_leaf)
CHAIN(chain_4, chain_5)
CHAIN(chain_3, chain_4)
CHAIN(chain_2, chain_3)
CHAIN(chain_1, chain_2)

__attribute__((noinline)) void recurse(uint32_t depth, uint32_t n)
{
    if (depth)
        recurse(depth - 1u, n);
    else
        rec_leaf(n);
    after++;
}

void (*volatile target_ptr)(uint32_t) = ptr_target;

__attribute__((noinline)) void via_pointer(void)
{
    target_ptr(120);
    after++;
}

__attribute__((noinline)) uint32_t step(uint32_t x)
{
    __asm volatile("" : "+r"(x));
    return x * 3u + 1u;
}

/* a frame of its own (r4 and LR pushed) around two calls: prologue and epilogue are a good part of it */
__attribute__((noinline)) uint32_t framed(uint32_t x)
{
    uint32_t y = step(x);
    return y ^ (step(y) + x);
}

__attribute__((noinline)) void frames_caller(void)
{
    uint32_t acc = 0;
    for (uint32_t i = 0; i < 40u; i++)
        acc += framed(i);
    after += acc;
}

#if FP_FRAMES
NOP_LOOP(__attribute__((noinline)), fp_leaf)

/* a frame pointer (r7) and locals: from its prologue on, the CFI's CFA is r7 + 24, not SP-relative */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) void fp_caller(void)
{
    volatile uint32_t local[3];
    for (uint32_t i = 0; i < 3u; i++)
        local[i] = 40u * i;
    fp_leaf(60u + local[1]);
    after++;
}
#define FP_CALLER() fp_caller()
#else
#define FP_CALLER() ((void)0)
#endif

#if MEMCPY_CALLERS
static uint32_t copy_src[64], copy_dst[64];
static volatile uint32_t copy_len = sizeof copy_dst; /* not known at build time: a real call to memcpy */

__attribute__((noinline)) void copy_a(void)
{
    memcpy(copy_dst, copy_src, copy_len);
    memcpy(copy_src, copy_dst, copy_len);
    memcpy(copy_dst, copy_src, copy_len);
    after++;
}

__attribute__((noinline)) void copy_b(void)
{
    memcpy(copy_dst, copy_src, copy_len);
    after++;
}
#define COPIERS() (copy_a(), copy_b())
#else
#define COPIERS() ((void)0)
#endif

#if TZ_NS
uint32_t secure_work(uint32_t n); /* the Secure image's entry: its veneer's address comes from its import library */

/* the only call into Secure code */
__attribute__((noinline)) void to_secure(uint32_t n)
{
    after += secure_work(n);
}
#define TO_OTHER to_secure
#elif TZ_S
#include "tz_setup.h"

#include <arm_cmse.h>

typedef void __attribute__((cmse_nonsecure_call)) ns_work_fn(uint32_t);

/* the only call into Non-Secure code: the function tz_ns_callee.c's vector table names */
__attribute__((noinline)) void to_ns(uint32_t n)
{
    ns_work_fn *f = (ns_work_fn *)cmse_nsfptr_create((ns_work_fn *)((const uint32_t *)(uintptr_t)NS_CODE)[1]);
    f(n);
    after++;
}
#define TO_OTHER to_ns
#endif

#if NS_IRQ
#include "tz_setup.h"
#endif

#if TZ_NS || TZ_S
__attribute__((noinline)) void tz_a(void)
{
    TO_OTHER(OTHER_N);
    TO_OTHER(OTHER_N);
    TO_OTHER(OTHER_N);
    after++;
}

__attribute__((noinline)) void tz_b(void)
{
    TO_OTHER(OTHER_N);
    after++;
}
#define OTHER_CALLS() (tz_a(), tz_b())
#else
#define OTHER_CALLS() ((void)0)
#endif

#ifdef UNWIND_TABLES /* else libgcc's unwinder comes in with them, and wants abort() */
/* After all code, among the constants (8 bytes: their alignment kept): every function sits where it
 * sits in the build without them, so the run is the same one, instruction for instruction (the PCs
 * on the wire are the same, and so are the drain's paths) */
#define UNWIND_STUB __attribute__((section(".rodata.zz_unwind_stubs"), noinline))
void __aeabi_unwind_cpp_pr0(void);
void __aeabi_unwind_cpp_pr1(void);
void __aeabi_unwind_cpp_pr2(void);
UNWIND_STUB void __aeabi_unwind_cpp_pr0(void) {}
UNWIND_STUB void __aeabi_unwind_cpp_pr1(void) {}
UNWIND_STUB void __aeabi_unwind_cpp_pr2(void) {}
#endif

#ifndef CMPROF_STREAM /* a dump instead: the ring's newest samples and their stack evidence, at the end */
#define CMPROF_STREAM 0
#endif
#if !CMPROF_STREAM
#define cmprof_stream_announce(putc, info) ((void)(putc), (void)(info))
#define cmprof_stream_drain(putc, lines) ((void)(putc), (void)(lines))
#define cmprof_stream_flush(putc) cmprof_dump(putc)
#define cmprof_stream_lost() 0u
#endif

#if STACKS_RTT /* the lines into the RTT up-buffer; a full buffer leaves them in the ring (no loss unless it fills) */
#define drain() cmprof_rtt_drain(8u)
#define WRITE cmprof_rtt_write

/* Every line still in the ring and in the RTT buffer out, the host's reads awaited. */
static void finish(void)
{
    while (cmprof_stream_pending() >= CMPROF_STREAM_LINE)
        if (!cmprof_rtt_drain(1u))
            leaf(50); /* no room: the host reads on */
    while (cmprof_rtt_unread())
        leaf(50);
    cmprof_stream_flush(NULL); /* the short last line, its evidence and @lost: an empty buffer holds them */
    while (cmprof_rtt_unread())
        leaf(50);
}
#else
#define drain() cmprof_stream_drain(board_putc, 8u)
#define WRITE NULL
#define finish() cmprof_stream_flush(board_putc)
#endif

#if FP_TS
static volatile float fp_value = 1.0f;

/* FP state live from here on (CONTROL.FPCA) in thread mode, and Secure FP frames with S16-S31 */
static void fp_state_on(void)
{
    BOARD_REG(0xE000ED88u) |= 0xFu << 20;   /* CPACR: CP10, CP11 full access */
    BOARD_REG(0xE000EF34u) |= 1u << 26;     /* FPCCR.TS */
    __asm volatile("dsb\n isb" ::: "memory");
    fp_value = fp_value * 1.5f;
}
#define FP_STATE_ON() fp_state_on()
#else
#define FP_STATE_ON() ((void)0)
#endif

int main(void)
{
#if TZ_S || NS_IRQ
    tz_open_non_secure(0);
#endif
    FP_STATE_ON();
    board_init();
#if NS_IRQ
    tz_ns_timer_start(NS_RELOAD);
#endif
    board_puts("boot: stacks scenario\n");
    const struct cmprof_stream_info info = {.clock_hz = 168000000u, .timer_hz = 168000000u, .period = PERIOD,
                                            .jitter = CMPROF_JITTER, .code_base = CODE_BASE,
                                            .build_id_note = __build_id, .write = WRITE};
#if STACKS_RTT
    cmprof_rtt_init();
    cmprof_stream_announce(NULL, &info);
    while (cmprof_rtt_unread()) /* until a host has read the announce (it attaches while this spins) */
        leaf(100);
#else
    cmprof_stream_announce(board_putc, &info);
#endif
    cmprof_start(PERIOD, SAMPLES);
    truth_begin();
    while (cmprof_samples() < SAMPLES) {
        caller_a();
        caller_b();
        chain_1(120);
        recurse(DEPTH, 120);
        via_pointer();
        frames_caller();
        FP_CALLER();
        COPIERS();
        OTHER_CALLS();
        drain();
    }
    truth_end();
    finish();
    board_puts(CMPROF_STREAM ? "taken=" : "done taken=");
    board_putdec(cmprof_samples());
    board_puts(" lost=");
    board_putdec(cmprof_stream_lost());
#if CMPROF_STACKS
    board_puts(" stacks_dropped=");
    board_putdec(cmprof_stack_dropped());
#endif
#if STACKS_RTT
    board_puts(" rtt_dropped=");
    board_putdec(cmprof_rtt_dropped_lines());
#endif
    board_puts("\ndone\n"); /* the end a halting run waits for */
    board_exit(0);
}
