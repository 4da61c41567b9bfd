/* Timer-interrupt PC sampler: prologue, ring or histogram storage, jitter, tags, dump.
 * Options are documented in cmprof.h. */
#include "cmprof.h"
#include "cmprof_regs.h"

#include <stddef.h>

#ifndef CMPROF_HIST
#define CMPROF_HIST 0
#endif
#ifndef CMPROF_RING_N
#define CMPROF_RING_N 1024u
#endif
#ifndef CMPROF_HIST_BINS
#define CMPROF_HIST_BINS 256u
#endif
#ifndef CMPROF_HIST_SHIFT
#define CMPROF_HIST_SHIFT 1u
#endif
#ifndef CMPROF_JITTER
#define CMPROF_JITTER 0u
#endif
#ifndef CMPROF_STREAM
#define CMPROF_STREAM 0
#endif
#ifndef CMPROF_TIMER_TIM3
#define CMPROF_TIMER_TIM3 0
#endif
#ifndef CMPROF_TIM3_PSC
#define CMPROF_TIM3_PSC 0u
#endif

_Static_assert((CMPROF_RING_N & (CMPROF_RING_N - 1u)) == 0u, "CMPROF_RING_N must be a power of two");
_Static_assert(CMPROF_HIST_SHIFT >= 1u && CMPROF_HIST_SHIFT <= 16u, "CMPROF_HIST_SHIFT out of range");
_Static_assert((CMPROF_JITTER & (CMPROF_JITTER + 1u)) == 0u, "CMPROF_JITTER must be 2^k - 1");
/* streaming sends ring samples as they come, or histogram bucket deltas now and then */
#define CMPROF_STREAM_RING (CMPROF_STREAM && !CMPROF_HIST)
#define CMPROF_STREAM_HIST (CMPROF_STREAM && CMPROF_HIST)

#if CMPROF_TIMER_TIM3
#define CMPROF_ISR TIM3_IRQHandler
/* Clear UIF first, or the interrupt is taken again on return. */
#define CMPROF_ACK() (CMPROF_REG(CMPROF_TIM_SR(CMPROF_TIM3_BASE)) = ~1u)
#define CMPROF_SET_PERIOD(t) (CMPROF_REG(CMPROF_TIM_ARR(CMPROF_TIM3_BASE)) = (t) - 1u)
#else
#define CMPROF_ISR SysTick_Handler
#define CMPROF_ACK() ((void)0)
/* A new reload value takes effect at the next wrap of the counter. */
#define CMPROF_SET_PERIOD(t) (CMPROF_REG(CMPROF_SYST_RVR) = (t) - 1u)
#endif

#if CMPROF_HIST
#ifndef CMPROF_HIST_BASE
extern const char _stext[];
#define CMPROF_HIST_BASE ((uint32_t)(uintptr_t)_stext)
#endif
#endif

#ifdef CMPROF_TAG
extern void *volatile CMPROF_TAG;
#endif

/* Counters and ring sit together so the tick reaches them all from one base register. */
static struct {
    uint32_t n;     /* samples taken */
    uint32_t limit; /* stop after this many; 0: never */
#if CMPROF_JITTER
    uint32_t period;
    uint32_t rnd; /* xorshift32 state, never 0 once started */
#endif
#if CMPROF_STREAM_RING
    uint32_t head;          /* samples stored; the ring is single-producer (the tick) ... */
    volatile uint32_t tail; /* ... single-consumer (cmprof_stream_take, in thread mode) */
    uint32_t lost;          /* samples dropped because the ring was full */
#endif
#if CMPROF_HIST
    uint32_t out; /* samples outside the buckets */
#else
    uint32_t ring[CMPROF_RING_N];
#endif
} cmprof_state; /* in .bss: a non-zero initialiser would put the whole ring in .data */

#define CMPROF_DEFAULT_SEED 2463534242u

#if CMPROF_HIST
static uint16_t cmprof_hist[CMPROF_HIST_BINS];
#if CMPROF_STREAM_HIST
static uint16_t cmprof_hist_sent[CMPROF_HIST_BINS + 1u]; /* what the host has; last: the out count */
static uint32_t cmprof_hist_cursor;
#endif
#else
#ifdef CMPROF_TAG
static uint32_t cmprof_tags[CMPROF_RING_N];
#endif
#endif

#if !CMPROF_NO_ISR
#if defined(__ARM_ARCH_6M__)
/* ARMv6-M has no tst-immediate and no IT blocks: move EXC_RETURN bit 2 into the N flag. */
__attribute__((naked)) void CMPROF_ISR(void)
{
    __asm volatile(".syntax unified      \n"
                   "mov   r0, lr         \n"
                   "lsls  r0, r0, #29    \n" /* bit 2 -> N: set when the frame is on PSP */
                   "bmi   1f             \n"
                   "mrs   r0, msp        \n"
                   "ldr   r0, [r0, #24]  \n" /* word 6 of the frame: the interrupted PC */
                   "ldr   r1, =cmprof_tick \n"
                   "bx    r1             \n"
                   "1: mrs r0, psp       \n"
                   "ldr   r0, [r0, #24]  \n"
                   "ldr   r1, =cmprof_tick \n"
                   "bx    r1             \n"
                   ".ltorg               \n");
}
#else
__attribute__((naked)) void CMPROF_ISR(void)
{
    __asm volatile("tst   lr, #4        \n" /* EXC_RETURN bit 2: which stack holds the frame */
                   "ite   eq            \n"
                   "mrseq r0, msp       \n"
                   "mrsne r0, psp       \n"
                   "ldr   r0, [r0, #24] \n" /* word 6 of the frame: the interrupted PC */
                   "b     cmprof_tick   \n");
}
#endif
#endif

__attribute__((used)) void cmprof_tick(uint32_t pc)
{
    CMPROF_ACK();
    uint32_t n = cmprof_state.n;
    cmprof_state.n = n + 1u;
#if CMPROF_HIST
    uint32_t i = (pc - CMPROF_HIST_BASE) >> CMPROF_HIST_SHIFT;
    if (i < CMPROF_HIST_BINS) {
#if CMPROF_STREAM_HIST
        cmprof_hist[i]++; /* wraps: the host adds up deltas, sent long before 65536 more arrive */
#else
        uint16_t v = (uint16_t)(cmprof_hist[i] + 1u);
        if (v != 0u) /* saturate instead of wrapping to zero */
            cmprof_hist[i] = v;
#endif
    } else {
        cmprof_state.out++;
    }
#elif CMPROF_STREAM_RING
    uint32_t h = cmprof_state.head;
    if (h - cmprof_state.tail < CMPROF_RING_N) { /* never overwrite what the drain has not sent */
        cmprof_state.ring[h & (CMPROF_RING_N - 1u)] = pc;
#ifdef CMPROF_TAG
        cmprof_tags[h & (CMPROF_RING_N - 1u)] = (uint32_t)(uintptr_t)CMPROF_TAG;
#endif
        cmprof_state.head = h + 1u;
    } else {
        cmprof_state.lost++;
    }
#else
    cmprof_state.ring[n & (CMPROF_RING_N - 1u)] = pc;
#ifdef CMPROF_TAG
    cmprof_tags[n & (CMPROF_RING_N - 1u)] = (uint32_t)(uintptr_t)CMPROF_TAG;
#endif
#endif
#if CMPROF_JITTER
    uint32_t r = cmprof_state.rnd;
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    cmprof_state.rnd = r;
    CMPROF_SET_PERIOD(cmprof_state.period + (r & CMPROF_JITTER));
#endif
    if (n + 1u == cmprof_state.limit)
        cmprof_stop();
}

void cmprof_start(uint32_t period, uint32_t limit)
{
    cmprof_stop();
    cmprof_state.n = 0u;
    cmprof_state.limit = limit;
#if CMPROF_JITTER
    cmprof_state.period = period;
    if (cmprof_state.rnd == 0u)
        cmprof_state.rnd = CMPROF_DEFAULT_SEED;
#endif
#if CMPROF_STREAM_RING
    cmprof_state.head = 0u;
    cmprof_state.tail = 0u;
    cmprof_state.lost = 0u;
#endif
#if CMPROF_STREAM_HIST
    for (uint32_t i = 0; i <= CMPROF_HIST_BINS; i++)
        cmprof_hist_sent[i] = 0u;
    cmprof_hist_cursor = 0u;
#endif
#if CMPROF_HIST
    cmprof_state.out = 0u;
    for (uint32_t i = 0; i < CMPROF_HIST_BINS; i++)
        cmprof_hist[i] = 0u;
#endif
#if CMPROF_TIMER_TIM3
    CMPROF_REG(CMPROF_RCC_APB1ENR) |= CMPROF_RCC_APB1ENR_TIM3EN;
    CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM3_BASE)) = 0u;
    CMPROF_REG(CMPROF_TIM_PSC(CMPROF_TIM3_BASE)) = CMPROF_TIM3_PSC;
    CMPROF_SET_PERIOD(period);
    CMPROF_REG(CMPROF_TIM_EGR(CMPROF_TIM3_BASE)) = 1u; /* UG: load PSC and ARR now */
    CMPROF_REG(CMPROF_TIM_SR(CMPROF_TIM3_BASE)) = 0u;  /* drop the flag UG raised */
    CMPROF_REG(CMPROF_TIM_DIER(CMPROF_TIM3_BASE)) = 1u; /* UIE */
    CMPROF_REG(CMPROF_NVIC_IPR_WORD(CMPROF_TIM3_IRQ)) &= ~(0xFFu << CMPROF_NVIC_IPR_SHIFT(CMPROF_TIM3_IRQ));
    CMPROF_REG(CMPROF_NVIC_ISER0) = 1u << CMPROF_TIM3_IRQ;
    CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM3_BASE)) = 1u; /* CEN */
#else
    uint32_t shpr3 = CMPROF_REG(CMPROF_SCB_SHPR3);
    CMPROF_REG(CMPROF_SCB_SHPR3) = shpr3 & ~(0xFFu << CMPROF_SHPR3_SYSTICK_SHIFT); /* priority 0 */
    CMPROF_SET_PERIOD(period);
    CMPROF_REG(CMPROF_SYST_CVR) = 0u;
    CMPROF_REG(CMPROF_SYST_CSR) = CMPROF_SYST_CSR_ENABLE | CMPROF_SYST_CSR_TICKINT | CMPROF_SYST_CSR_CLKSOURCE;
#endif
}

/* Out of line, so the tick reaches it with one conditional branch. */
__attribute__((noinline)) void cmprof_stop(void)
{
#if CMPROF_TIMER_TIM3
    CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM3_BASE)) = 0u;
#else
    CMPROF_REG(CMPROF_SYST_CSR) = 0u;
#endif
}

#if defined(__SANITIZE_ADDRESS__)
uint32_t cmprof_samples(void)
{
    return *(volatile uint32_t *)&cmprof_state.n;
}
#else
/* The sample counter is the state's first member; this exports it for cmprof_samples(). */
extern volatile const uint32_t cmprof_sample_count __attribute__((alias("cmprof_state")));
#endif

void cmprof_seed(uint32_t seed)
{
#if CMPROF_JITTER
    cmprof_state.rnd = seed ? seed : CMPROF_DEFAULT_SEED;
#else
    (void)seed;
#endif
}

#if CMPROF_STREAM_HIST
uint32_t cmprof_stream_hist_take(uint32_t *index, uint32_t *delta, uint32_t max, int *pass_done)
{
    uint32_t k = 0;
    *pass_done = 0;
    while (k < max) {
        uint32_t i = cmprof_hist_cursor;
        /* 16-bit reads are atomic; the difference is right across a wrap */
        uint16_t now = i < CMPROF_HIST_BINS ? *(volatile uint16_t *)&cmprof_hist[i]
                                            : (uint16_t)*(volatile uint32_t *)&cmprof_state.out;
        uint16_t d = (uint16_t)(now - cmprof_hist_sent[i]);
        if (d) {
            index[k] = i;
            delta[k++] = d;
            cmprof_hist_sent[i] = now;
        }
        if (++cmprof_hist_cursor > CMPROF_HIST_BINS) {
            cmprof_hist_cursor = 0u;
            *pass_done = 1;
            break;
        }
    }
    return k;
}

void cmprof_stream_hist_layout(uint32_t *base, uint32_t *shift, uint32_t *bins)
{
    *base = CMPROF_HIST_BASE;
    *shift = CMPROF_HIST_SHIFT;
    *bins = CMPROF_HIST_BINS;
}
#endif

#if CMPROF_STREAM_RING
uint32_t cmprof_stream_take(uint32_t *pcs, uint32_t *tags, uint32_t max)
{
    uint32_t t = cmprof_state.tail;
    uint32_t avail = *(volatile uint32_t *)&cmprof_state.head - t;
    if (avail > max)
        avail = max;
    for (uint32_t i = 0; i < avail; i++) {
        pcs[i] = cmprof_state.ring[(t + i) & (CMPROF_RING_N - 1u)];
#ifdef CMPROF_TAG
        if (tags)
            tags[i] = cmprof_tags[(t + i) & (CMPROF_RING_N - 1u)];
#else
        if (tags)
            tags[i] = 0u;
#endif
    }
    __asm volatile("" ::: "memory"); /* copy out before handing the slots back */
    cmprof_state.tail = t + avail;
    return avail;
}

uint32_t cmprof_stream_pending(void)
{
    return *(volatile uint32_t *)&cmprof_state.head - cmprof_state.tail;
}

uint32_t cmprof_stream_lost(void)
{
    return *(volatile uint32_t *)&cmprof_state.lost;
}
#endif

static void put_str(cmprof_putc_fn putc, const char *s)
{
    while (*s)
        putc(*s++);
}

static void put_hex(cmprof_putc_fn putc, uint32_t v, unsigned digits)
{
    while (digits--)
        putc("0123456789abcdef"[(v >> (4u * digits)) & 0xFu]);
}

static void put_dec(cmprof_putc_fn putc, uint32_t v)
{
    char buf[10];
    unsigned k = 0;
    do {
        buf[k++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (k)
        putc(buf[--k]);
}

#if !CMPROF_HIST
/* One block of ring entries, eight per line after `prefix`. */
static void put_ring(cmprof_putc_fn putc, const uint32_t *ring, uint32_t first, uint32_t n, char prefix)
{
    for (uint32_t i = first; i < n; i++) {
        if ((i - first) % 8u == 0u) {
            putc('\n');
            putc(prefix);
        }
        putc(' ');
        put_hex(putc, ring[i & (CMPROF_RING_N - 1u)], 8);
    }
}
#endif

void cmprof_dump(cmprof_putc_fn putc)
{
    uint32_t n = cmprof_samples();
#if CMPROF_HIST
    put_str(putc, "prof hist base=0x");
    put_hex(putc, CMPROF_HIST_BASE, 8);
    put_str(putc, " shift=");
    put_dec(putc, CMPROF_HIST_SHIFT);
    put_str(putc, " n=");
    put_dec(putc, n);
    put_str(putc, " out=");
    put_dec(putc, cmprof_state.out);
    for (uint32_t i = 0; i < CMPROF_HIST_BINS; i++) {
        if (i % 16u == 0u)
            put_str(putc, "\nh");
        putc(' ');
        put_hex(putc, cmprof_hist[i], 4);
    }
#else
    uint32_t first = n > CMPROF_RING_N ? n - CMPROF_RING_N : 0u;
    put_str(putc, "prof raw n=");
    put_dec(putc, n - first);
    put_ring(putc, cmprof_state.ring, first, n, 'p');
#ifdef CMPROF_TAG
    put_ring(putc, cmprof_tags, first, n, 'g');
#endif
#endif
    put_str(putc, "\nend\n");
}
