/* Timer-interrupt PC sampler: prologue, ring or histogram storage, jitter, tags, dump.
 * Options are documented in cmprof.h. */
#include "cmprof.h"
#include "cmprof_port.h"
#include "cmprof_regs.h"
#if defined(CMPROF_TAG_NAMES) && CMPROF_TAG_NAMES
#include "cmprof_tasks.h"
#endif

#include <stdbool.h>
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
#ifndef CMPROF_LIMIT
#define CMPROF_LIMIT 1 /* cmprof_start's limit kept (cmprof.h); 0: never stops by itself, 3 instructions a sample fewer */
#endif
/* 1: the period kept as the timers' reload registers take it (less 1), so that the jitter's sum
 * needs no subtraction (an instruction a sample; the Zephyr module's stream). Not the default: one
 * instruction less in the tick moves where jittered samples fall in the scenarios, and m3_loops'
 * three-loop check then reads 3.38 sigma (docs/performance.md). */
#ifndef CMPROF_RELOAD_KEPT
#define CMPROF_RELOAD_KEPT 0u
#endif
#ifndef CMPROF_RESERVOIR_N /* a quarter of a small ring */
#define CMPROF_RESERVOIR_N (CMPROF_RING_N >= 256u ? 32u : CMPROF_RING_N / 4u - 2u)
#endif
#define CMPROF_RESERVOIR_SEED 0x9E3779B9u

_Static_assert((CMPROF_RING_N & (CMPROF_RING_N - 1u)) == 0u, "CMPROF_RING_N must be a power of two");
_Static_assert(CMPROF_HIST_SHIFT >= 1u && CMPROF_HIST_SHIFT <= 16u, "CMPROF_HIST_SHIFT out of range");
_Static_assert((CMPROF_JITTER & (CMPROF_JITTER + 1u)) == 0u, "CMPROF_JITTER must be 2^k - 1");
/* streaming sends ring samples as they come, or histogram bucket deltas now and then */
#define CMPROF_STREAM_RING (CMPROF_STREAM && !CMPROF_HIST)
#define CMPROF_STREAM_HIST (CMPROF_STREAM && CMPROF_HIST)
/* A full stream ring keeps an unbiased subsample of what it cannot take (cmprof.h) */
#if CMPROF_STREAM_RING && CMPROF_RESERVOIR_N
#define CMPROF_KEEP_RESERVOIR 1
_Static_assert(CMPROF_RESERVOIR_N + 2u <= CMPROF_RING_N / 2u, "CMPROF_RESERVOIR_N: at most half the ring, less 2");
_Static_assert(CMPROF_RESERVOIR_N <= 4095u, "CMPROF_RESERVOIR_N: at most 4095 (two characters on the wire)");
#else
#define CMPROF_KEEP_RESERVOIR 0
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

/* A timer that does not reload itself (the PMU's counters) is given the period at each sample. */
#ifndef CMPROF_PORT_RELOADS
#define CMPROF_PORT_RELOADS 1
#endif
#define CMPROF_KEEP_PERIOD (CMPROF_JITTER || !CMPROF_PORT_RELOADS)

#if CMPROF_STACKS
_Static_assert(!CMPROF_HIST, "CMPROF_STACKS: stack evidence goes with ring samples, not the histogram");
_Static_assert(CMPROF_STACK_EVERY >= 1u, "CMPROF_STACK_EVERY: 1 (every sample) or more");
#endif

/* The timer the sampler runs on, for the stream's announce. */
const char cmprof_timer_label[] = CMPROF_PORT_LABEL;

/* Counters and ring sit together so the tick reaches them all from one base register. */
static struct {
    uint32_t n;     /* samples taken */
    uint32_t limit; /* stop after this many; 0: never (CMPROF_LIMIT 0: not looked at) */
#if CMPROF_STREAM_RING
    uint32_t head;          /* samples stored; the ring is single-producer (the tick) ... */
    volatile uint32_t tail; /* ... single-consumer (cmprof_stream_take, in thread mode) */
    uint32_t lost;          /* samples dropped because the ring was full */
#endif
#if CMPROF_KEEP_RESERVOIR
    uint32_t room;      /* CMPROF_RING_N; 0 while the reservoir holds samples (they go before any new) */
    uint32_t res_taken; /* samples taken since the ring filled; the reservoir keeps a uniform subsample */
    uint32_t res_rnd;   /* xorshift32 state for the reservoir's choices */
    volatile uint32_t mark_pending; /* a group's mark is in the ring, at mark_at, not sent yet */
    uint32_t mark_at;
    uint32_t stopped;   /* the sampler stopped: the thread may move the reservoir into the ring */
#endif
#if CMPROF_PORT_GATED
    uint32_t running; /* cmprof_tick counts only while set */
#endif
#if CMPROF_KEEP_PERIOD
    uint32_t period; /* cmprof_start's, less 1 with CMPROF_RELOAD_KEPT */
#endif
#if CMPROF_JITTER
    uint32_t rnd; /* xorshift32 state, never 0 once started */
#endif
#if CMPROF_STACKS
    uint32_t stack_countdown; /* samples until the next one with stack evidence */
#endif
#if CMPROF_HIST
    uint32_t out; /* samples outside the buckets */
#else
    uint32_t ring[CMPROF_RING_N];
#endif
} cmprof_state; /* in .bss: a non-zero initialiser would put the whole ring in .data */

#define CMPROF_DEFAULT_SEED 2463534242u

#if CMPROF_KEEP_RESERVOIR
static uint32_t res_pcs[CMPROF_RESERVOIR_N];
#ifdef CMPROF_TAG
static uint32_t res_tags[CMPROF_RESERVOIR_N];
#endif
#endif

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

#if !(defined(CMPROF_NO_ISR) && CMPROF_NO_ISR) && defined(CMPROF_PORT_ISR)
CMPROF_DEFINE_ISR(CMPROF_PORT_ISR)
#endif

#if CMPROF_KEEP_RESERVOIR
/* Moves the reservoir into the ring as one group: a mark (pc CMPROF_RESERVOIR_MARK + the samples
 * kept), the count taken since the ring filled, then the samples kept, so the drain finds
 * them where they were taken, between the samples before and after. Only when the ring has room
 * for it all and the drain has sent the last group. */
static void reservoir_flush(void)
{
    uint32_t h = cmprof_state.head, kept = cmprof_state.res_taken;
    kept = kept < CMPROF_RESERVOIR_N ? kept : CMPROF_RESERVOIR_N;
    if (!kept || cmprof_state.mark_pending || CMPROF_RING_N - (h - cmprof_state.tail) < kept + 2u)
        return;
    cmprof_state.ring[h & (CMPROF_RING_N - 1u)] = CMPROF_RESERVOIR_MARK + kept;
    cmprof_state.ring[(h + 1u) & (CMPROF_RING_N - 1u)] = cmprof_state.res_taken;
#ifdef CMPROF_TAG
    cmprof_tags[h & (CMPROF_RING_N - 1u)] = 0u;
    cmprof_tags[(h + 1u) & (CMPROF_RING_N - 1u)] = 0u;
#endif
    for (uint32_t i = 0; i < kept; i++) {
        cmprof_state.ring[(h + 2u + i) & (CMPROF_RING_N - 1u)] = res_pcs[i];
#ifdef CMPROF_TAG
        cmprof_tags[(h + 2u + i) & (CMPROF_RING_N - 1u)] = res_tags[i];
#endif
    }
    cmprof_state.mark_at = h;
    cmprof_state.mark_pending = 1u;
    cmprof_state.res_taken = 0u;
    cmprof_state.room = CMPROF_RING_N;
    __asm volatile("" ::: "memory"); /* the group in place before the drain may see it */
    cmprof_state.head = h + 2u + kept;
}

/* A sample the full ring cannot take: kept in the reservoir with the chance it would have in a
 * uniform draw of CMPROF_RESERVOIR_N from every sample taken since the ring filled (algorithm R),
 * so what the group stands for is never only what ran while the drain did not. */
__attribute__((noinline)) static void reservoir_keep(uint32_t pc, uint32_t tag)
{
    (void)tag;
    uint32_t taken = ++cmprof_state.res_taken, at = taken - 1u;
    cmprof_state.room = 0u; /* new samples come after the kept ones: here until they are in the ring */
    if (taken > CMPROF_RESERVOIR_N) {
        uint32_t r = cmprof_state.res_rnd ? cmprof_state.res_rnd : CMPROF_RESERVOIR_SEED;
        r ^= r << 13;
        r ^= r >> 17;
        r ^= r << 5;
        cmprof_state.res_rnd = r;
        at = (uint32_t)(((uint64_t)r * taken) >> 32); /* uniform in [0, taken) */
    }
    if (at < CMPROF_RESERVOIR_N) {
        res_pcs[at] = pc;
#ifdef CMPROF_TAG
        res_tags[at] = tag;
#endif
    }
    reservoir_flush();
}
#endif

/* Every CMPROF_STACK_EVERY-th sample kept at ring position (or number) seq gets its stack evidence;
 * the countdown keeps the rest at a load, a subtraction and a branch. */
#if CMPROF_STACKS
#define STACK_EVIDENCE(seq)                                                                                 \
    do {                                                                                                   \
        if (stacked && --cmprof_state.stack_countdown == 0u) {                                             \
            cmprof_state.stack_countdown = CMPROF_STACK_EVERY;                                             \
            cmprof_stack_capture(frame, exc_return, pc, (seq));                                            \
        }                                                                                                  \
    } while (0)
#else
#define STACK_EVIDENCE(seq) ((void)0)
#endif

/* The sample itself; `tag` is the task, or the exception the sample interrupted; `stacked` (a
 * constant) when the prologue passed the exception frame and EXC_RETURN (CMPROF_STACKS). */
__attribute__((always_inline)) static inline void tick(uint32_t pc, uint32_t tag, bool stacked,
                                                      const uint32_t *frame, uint32_t exc_return)
{
    (void)tag;
    (void)stacked;
    (void)frame;
    (void)exc_return;
    cmprof_port_ack();
#if CMPROF_PORT_GATED
    if (!cmprof_state.running) /* no timer to stop: the gate closes instead */
        return;
#endif
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
#if CMPROF_KEEP_RESERVOIR
    if (h - cmprof_state.tail < cmprof_state.room) { /* never overwrite what the drain has not sent */
#else
    if (h - cmprof_state.tail < CMPROF_RING_N) { /* never overwrite what the drain has not sent */
#endif
        cmprof_state.ring[h & (CMPROF_RING_N - 1u)] = pc;
#ifdef CMPROF_TAG
        cmprof_tags[h & (CMPROF_RING_N - 1u)] = tag;
#endif
        cmprof_state.head = h + 1u;
        STACK_EVIDENCE(h);
    } else {
#if CMPROF_KEEP_RESERVOIR
        reservoir_keep(pc, tag);
#else
        cmprof_state.lost++;
#endif
    }
#else
    cmprof_state.ring[n & (CMPROF_RING_N - 1u)] = pc;
#ifdef CMPROF_TAG
    cmprof_tags[n & (CMPROF_RING_N - 1u)] = tag;
#endif
    STACK_EVIDENCE(n);
#endif
#if CMPROF_JITTER
    uint32_t r = cmprof_state.rnd;
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    cmprof_state.rnd = r;
    cmprof_port_set_period(cmprof_state.period + CMPROF_RELOAD_KEPT + (r & CMPROF_JITTER));
#elif !CMPROF_PORT_RELOADS
    cmprof_port_set_period(cmprof_state.period + CMPROF_RELOAD_KEPT);
#endif
#if CMPROF_LIMIT
    if (n + 1u == cmprof_state.limit)
        cmprof_stop();
#endif
}

/* The tick, compiled for speed whatever the application's -Os (GCC; clang has no such attribute). */
#if defined(__GNUC__) && !defined(__clang__)
#define CMPROF_HOT __attribute__((used, optimize("O2")))
#else
#define CMPROF_HOT __attribute__((used))
#endif

#if defined(CMPROF_TAG) && CMPROF_TAG_NAMES
/* the ring gets the task's stream index (cmprof_tasks.h): a look at one way of the tag's set */
#define CMPROF_TASK_TAG cmprof_tasks_word(CMPROF_TAG)
#elif defined(CMPROF_TAG)
#define CMPROF_TASK_TAG ((uint32_t)(uintptr_t)CMPROF_TAG)
#else
#define CMPROF_TASK_TAG 0u
#endif

__attribute__((used)) void cmprof_tick(uint32_t pc)
{
    tick(pc, CMPROF_TASK_TAG, false, NULL, 0u);
}

#ifdef CMPROF_TAG
CMPROF_HOT void cmprof_tick_frame(uint32_t pc, uint32_t xpsr)
{
#if defined(CMPROF_TAG_NAMES) && CMPROF_TAG_NAMES
    uint32_t top = xpsr << 23; /* IPSR in the stacked xPSR, on top: 0 in thread mode (one shift, its flags the test) */
    /* an RTOS's time is mostly its tasks': that path falls through */
    tick(pc, __builtin_expect(top == 0u, 1) ? CMPROF_TASK_TAG : CMPROF_ISR_TAG(top >> 23), false, NULL, 0u);
#else /* (a raw tag's load: with the shift GCC made both paths conditional, 4 instructions more) */
    uint32_t exception = xpsr & 0x1FFu; /* IPSR in the stacked xPSR: 0 in thread mode */
    tick(pc, __builtin_expect(exception == 0u, 1) ? CMPROF_TASK_TAG : CMPROF_ISR_TAG(exception), false, NULL, 0u);
#endif
}
#endif

#if defined(CMPROF_TAG) && defined(CMPROF_THREAD_ENTRY) && CMPROF_THREAD_ENTRY
/* A sample whose frame is on PSP: the interrupted code ran in thread mode (handlers always run on
 * MSP), so the tick needs no exception number. A prologue that sends such samples here (the Zephyr
 * module's vector) skips the xPSR's load and the tick its test: 4 instructions a sample fewer. */
CMPROF_HOT void cmprof_tick_thread(uint32_t pc)
{
    tick(pc, CMPROF_TASK_TAG, false, NULL, 0u);
}
#endif

#if CMPROF_TRUSTZONE
/* Where a sample that interrupted the other Security state is placed (cmprof.h): two functions of
 * their own, never called (udf), which the host names by their symbols. */
#define CMPROF_STATE_FN(name)                                                                            \
    ".global " name "\n.type " name ", %function\n.thumb_func\n" name ":\nnop\nudf #0\n.size " name ", 4\n"
__asm(".pushsection .text.cmprof_other_state, \"ax\", %progbits\n"
      ".balign 4\n" CMPROF_STATE_FN("\"(Non-Secure code)\"") CMPROF_STATE_FN("\"(Secure code)\"") ".popsection\n");
extern const char cmprof_other_state_fn[] __asm(CMPROF_OTHER_STATE_SYM);
/* the second halfword of "(Non-Secure code)", or of "(Secure code)" when EXC_RETURN's S is set */
#define CMPROF_OTHER_STATE_PC(exc_return)                                                                \
    (((uint32_t)(uintptr_t)cmprof_other_state_fn | 1u) + 1u + (((exc_return) >> 4) & 4u))
#endif

#if CMPROF_STACKS
CMPROF_HOT void cmprof_tick_stacked(uint32_t pc, const uint32_t *frame, uint32_t exc_return)
{
#if CMPROF_TRUSTZONE
    if (__builtin_expect((exc_return ^ (exc_return >> 6)) & 1u, 0)) {
        /* the frame is on the other Security state's stack: what the prologue read is no PC, and
         * the xPSR word no exception number (the capture keeps no evidence for it) */
        tick(CMPROF_OTHER_STATE_PC(exc_return), CMPROF_TASK_TAG, true, frame, exc_return);
        return;
    }
#endif
#ifdef CMPROF_TAG
    uint32_t exception = frame[7] & 0x1FFu; /* IPSR in the stacked xPSR: 0 in thread mode */
    tick(pc, __builtin_expect(exception == 0u, 1) ? CMPROF_TASK_TAG : CMPROF_ISR_TAG(exception), true, frame, exc_return);
#else
    tick(pc, 0u, true, frame, exc_return);
#endif
}
#endif

void cmprof_start(uint32_t period, uint32_t limit)
{
    cmprof_stop();
    cmprof_state.n = 0u;
    cmprof_state.limit = limit;
#if CMPROF_KEEP_PERIOD
    cmprof_state.period = period - CMPROF_RELOAD_KEPT;
#endif
#if CMPROF_STACKS
    cmprof_state.stack_countdown = CMPROF_STACK_EVERY;
#endif
#if CMPROF_JITTER
    if (cmprof_state.rnd == 0u)
        cmprof_state.rnd = CMPROF_DEFAULT_SEED;
#endif
#if CMPROF_STREAM_RING
    cmprof_state.head = 0u;
    cmprof_state.tail = 0u;
    cmprof_state.lost = 0u;
#endif
#if CMPROF_KEEP_RESERVOIR
    cmprof_state.room = CMPROF_RING_N;
    cmprof_state.res_taken = 0u;
    cmprof_state.mark_pending = 0u;
    cmprof_state.stopped = 0u;
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
#if CMPROF_PORT_GATED
    cmprof_state.running = 1u;
#endif
    cmprof_port_start(period);
}

/* Out of line, so the tick reaches it with one conditional branch. */
__attribute__((noinline)) void cmprof_stop(void)
{
#if CMPROF_PORT_GATED
    cmprof_state.running = 0u;
#endif
    cmprof_port_stop();
#if CMPROF_KEEP_RESERVOIR
    cmprof_state.stopped = 1u;
#endif
}

#if defined(__SANITIZE_ADDRESS__)
uint32_t cmprof_samples(void)
{
    return *(volatile uint32_t *)&cmprof_state.n;
}
#else
/* The sample counter is the state's first member; this exports it for cmprof_samples(). */
/* An alias is given on a declaration, which cmprof.h made already: redundant by design. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
extern volatile const uint32_t cmprof_sample_count __attribute__((alias("cmprof_state")));
#pragma GCC diagnostic pop
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
/* A copy of what peek shows, in one or two stretches (the ring may wrap), then released. */
uint32_t cmprof_stream_take(uint32_t *pcs, uint32_t *tags, uint32_t max)
{
    uint32_t k = 0;
    const uint32_t *p, *t;
    for (uint32_t m; k < max && (m = cmprof_stream_peek(k, &p, &t, max - k)) != 0u; k += m)
        for (uint32_t i = 0; i < m; i++) {
            pcs[k + i] = p[i];
            if (tags)
                tags[k + i] = t ? t[i] : 0u;
        }
    cmprof_stream_release(k);
    return k;
}

/* The drain's quick exit (cmprof_stream.c) asks cmprof_stream_pending(). No loss goes
 * unreported: the tick only drops samples when the ring is full, and a full ring holds a line, so a
 * later drain gets past the quick exit and reports it. */
_Static_assert(CMPROF_RING_N >= CMPROF_STREAM_LINE, "CMPROF_RING_N must hold a stream line");
/* Up to max samples from `skip` past the read position, in place (as far as the ring's end). */
uint32_t cmprof_stream_peek(uint32_t skip, const uint32_t **pcs, const uint32_t **tags, uint32_t max)
{
    uint32_t t = cmprof_state.tail + skip;
    uint32_t avail = *(volatile uint32_t *)&cmprof_state.head - t;
    uint32_t at = t & (CMPROF_RING_N - 1u);
    if (avail > CMPROF_RING_N - at)
        avail = CMPROF_RING_N - at;
    if (avail > max)
        avail = max;
    *pcs = &cmprof_state.ring[at];
#ifdef CMPROF_TAG
    *tags = &cmprof_tags[at];
#else
    *tags = NULL;
#endif
    return avail;
}

void cmprof_stream_release(uint32_t n)
{
    __asm volatile("" ::: "memory"); /* done with the slots before handing them back */
    cmprof_state.tail += n;
}

uint32_t cmprof_stream_stored(void)
{
    return *(volatile uint32_t *)&cmprof_state.head;
}

uint32_t cmprof_stream_sent(void)
{
    return cmprof_state.tail;
}

uint32_t cmprof_stream_pending(void)
{
    return *(volatile uint32_t *)&cmprof_state.head - cmprof_state.tail;
}

uint32_t cmprof_stream_lost(void)
{
    return *(volatile uint32_t *)&cmprof_state.lost;
}

#if CMPROF_KEEP_RESERVOIR
uint32_t cmprof_stream_mark(uint32_t *at)
{
    *at = cmprof_state.mark_at;
    return cmprof_state.mark_pending;
}

void cmprof_stream_mark_sent(void)
{
    cmprof_state.mark_pending = 0u;
}

uint32_t cmprof_stream_reservoir_close(void)
{
    if (cmprof_state.stopped) /* no tick can come: the thread moves the rest in (when it fits) */
        reservoir_flush();
    return cmprof_state.res_taken;
}
#else
uint32_t cmprof_stream_mark(uint32_t *at)
{
    *at = 0u;
    return 0u;
}

void cmprof_stream_mark_sent(void)
{
}

uint32_t cmprof_stream_reservoir_close(void)
{
    return 0u;
}
#endif
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
    if (first) { /* the ring kept the newest only: say how many were taken */
        put_str(putc, " taken=");
        put_dec(putc, n);
    }
    put_ring(putc, cmprof_state.ring, first, n, 'p');
#ifdef CMPROF_TAG
    put_ring(putc, cmprof_tags, first, n, 'g');
#endif
    putc('\n');
#if CMPROF_STACKS
    cmprof_stack_dump(putc, first, n); /* after the samples: the host places them from the last */
#endif
#endif
#if CMPROF_HIST
    putc('\n');
#endif
#if defined(CMPROF_TAG) && !CMPROF_STREAM
    cmprof_dump_tasks(putc); /* cmprof_tasks.c: the names the RTOS hooks gave the tags */
#endif
    put_str(putc, "end\n");
}
