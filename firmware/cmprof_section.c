/* Section timers: current/min/max/count/sum per code section, from a pluggable clock: by default
 * the DWT cycle counter on Cortex-M, a PMU event counter counting CPU cycles on Cortex-A and -R. */
#include "cmprof.h"
#include "cmprof_regs.h"

#include <stddef.h>

/* The public start and stop, called by calibrate() exactly as from another file: never inlined
 * into it, nor specialised for its index (GCC's noipa, from GCC 8; noinline elsewhere). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define CMPROF_AS_CALLED __attribute__((noipa))
#else
#define CMPROF_AS_CALLED __attribute__((noinline))
#endif

static struct cmprof_section cmprof_sections[CMPROF_SECTIONS];
static unsigned char calibrating; /* 1 while calibrate() times the measurement: nothing taken off */

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE != 'M'
/* Cortex-A and Cortex-R: the PMU's last event counter counting CPU_CYCLES. Not PMCCNTR: the
 * sampler's PMU port preloads that one for every sample (and QEMU 7.2 raises overflow interrupts
 * only for PMCCNTR, so the sampler cannot move to an event counter instead). */
#include "cmprof_pmu.h"

static unsigned cycles_counter;
static uint32_t section_events[CMPROF_SECTION_EVENTS]; /* on event counters 0 .. n_events - 1 */
static unsigned n_events;
static uint32_t event_offset[CMPROF_SECTION_EVENTS]; /* each event's count in an empty section */
static void calibrate(void);

static uint32_t clock_cycles(void)
{
    return cmprof_pmu_read(cycles_counter);
}

/* Turn the unit on, the last event counter to CPU_CYCLES (the others and PMCCNTR untouched),
 * and check that it advances. */
static int cycle_counter_enable(void)
{
    unsigned n = cmprof_pmu_counters();
    if (n == 0u)
        return CMPROF_CLOCK_NO_DWT;
    cycles_counter = n - 1u;
    cmprof_pmu_set_pmcr(cmprof_pmu_pmcr() | CMPROF_PMCR_E);
    cmprof_pmu_select(cycles_counter, CMPROF_PMU_CPU_CYCLES);
    cmprof_pmu_enable(1u << cycles_counter);
    uint32_t t0 = clock_cycles();
    for (volatile int spin = 0; spin < 4; spin++) {
    }
    return clock_cycles() != t0 ? CMPROF_CLOCK_OK : CMPROF_CLOCK_NOT_RUNNING;
}

unsigned cmprof_sections_events(const uint32_t *events, unsigned n)
{
    unsigned counters = cmprof_pmu_counters();
    if (n > CMPROF_SECTION_EVENTS)
        n = CMPROF_SECTION_EVENTS;
    if (counters == 0u)
        n = 0u;
    else if (n > counters - 1u)
        n = counters - 1u; /* the last one counts the cycles */
    for (unsigned k = 0; k < n; k++) {
        section_events[k] = events[k];
        cmprof_pmu_select(k, events[k]);
        cmprof_pmu_enable(1u << k);
    }
    n_events = n;
    calibrate(); /* more counters read, a longer window */
    return n;
}

static void events_start(struct cmprof_section *s)
{
    for (unsigned k = 0; k < n_events; k++)
        s->events[k].start = cmprof_pmu_read(k);
}

/* Read every counter first, then do the arithmetic: the events' window stays close to the time's. */
static void events_stop(struct cmprof_section *s)
{
    uint32_t now[CMPROF_SECTION_EVENTS];
    for (unsigned k = 0; k < n_events; k++)
        now[k] = cmprof_pmu_read(k);
    for (unsigned k = 0; k < n_events; k++) {
        struct cmprof_stat *e = &s->events[k];
        uint32_t d = now[k] - e->start;
        if (!calibrating)
            d = d > event_offset[k] ? d - event_offset[k] : 0u;
        e->current = d;
        if (d < e->min)
            e->min = d;
        if (d > e->max)
            e->max = d;
        e->sum += d;
    }
}
#else
static uint32_t clock_cycles(void)
{
    return CMPROF_REG(CMPROF_DWT_CYCCNT);
}

/* Enable the DWT cycle counter and check that it exists and advances. */
static int cycle_counter_enable(void)
{
    CMPROF_REG(CMPROF_DEMCR) |= CMPROF_DEMCR_TRCENA;
    CMPROF_REG(CMPROF_DWT_LAR) = CMPROF_CORESIGHT_UNLOCK; /* needed on Cortex-M7 */
    uint32_t ctrl = CMPROF_REG(CMPROF_DWT_CTRL);
    /* ARMv6-M and a missing DWT read 0 here; NOCYCCNT flags a DWT without a cycle counter. */
    if (ctrl == 0u || (ctrl & CMPROF_DWT_CTRL_NOCYCCNT) != 0u)
        return CMPROF_CLOCK_NO_DWT;
    CMPROF_REG(CMPROF_DWT_CYCCNT) = 0u;
    CMPROF_REG(CMPROF_DWT_CTRL) = ctrl | CMPROF_DWT_CTRL_CYCCNTENA;
    uint32_t t0 = clock_cycles();
    for (volatile int spin = 0; spin < 4; spin++) {
    }
    return clock_cycles() != t0 ? CMPROF_CLOCK_OK : CMPROF_CLOCK_NOT_RUNNING;
}
#endif

#if !CMPROF_SECTION_EVENTS
#define n_events 0u
#define events_start(s) ((void)(s))
#define events_stop(s) ((void)(s))
#endif

static uint32_t clock_zero(void)
{
    return 0u;
}

static cmprof_clock_fn cmprof_clock = clock_zero;
static uint32_t clock_offset; /* the clock's ticks in an empty section: the measurement's own */

/* The measurement's own cost, left out of every figure: the instructions between the clock's read
 * in cmprof_section_start() and its read in cmprof_section_stop() (their return and call, and the
 * caller's setting of the index), and the same for each event's reads. Timed on an empty section
 * 8 times, called as any caller calls them, the least kept (an interrupt or a cold cache only adds);
 * then every section is cleared. Under QEMU -icount a section of N single-cycle instructions then
 * reads N cycles and N instructions: IPC 1.000. Never inlined: scen_check.py reads its window. */
__attribute__((noinline)) static void calibrate(void)
{
    calibrating = 1;
    for (unsigned run = 0; run < 8u; run++) {
        cmprof_section_start(0);
        cmprof_section_stop(0);
        const struct cmprof_section *s = &cmprof_sections[0];
        if (run == 0u || s->current < clock_offset)
            clock_offset = s->current;
#if CMPROF_SECTION_EVENTS
        for (unsigned k = 0; k < n_events; k++)
            if (run == 0u || s->events[k].current < event_offset[k])
                event_offset[k] = s->events[k].current;
#endif
    }
    calibrating = 0;
    cmprof_section_reset(CMPROF_ALL_SECTIONS);
}

int cmprof_sections_init(cmprof_clock_fn clock)
{
    int status = CMPROF_CLOCK_OK;
    if (clock != NULL) {
        cmprof_clock = clock;
    } else {
        status = cycle_counter_enable();
        cmprof_clock = status == CMPROF_CLOCK_OK ? clock_cycles : clock_zero;
    }
    calibrate();
    return status;
}

/* The events are read outside the clock's reads: the time excludes them. */
CMPROF_AS_CALLED void cmprof_section_start(uint32_t i)
{
    if (i < CMPROF_SECTIONS) {
        struct cmprof_section *s = &cmprof_sections[i];
        s->running = 0u; /* a poll leaves it alone until its start is read */
        s->wraps = 0u;
        s->upper_half = 0u;
        events_start(s);
        s->start = cmprof_clock();
        s->running = 1u;
    }
}

/* Interrupts off for a few instructions, so that a start or stop at a higher priority cannot come
 * between a poll's read of a section and its write (the poll may run in a low-priority drain). */
#if defined(__arm__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
static uint32_t irq_off(void)
{
    uint32_t mask;
    __asm volatile("mrs %0, primask\n\tcpsid i" : "=r"(mask)::"memory");
    return mask;
}
static void irq_restore(uint32_t mask)
{
    __asm volatile("msr primask, %0" ::"r"(mask) : "memory");
}
#elif defined(__arm__)
static uint32_t irq_off(void)
{
    uint32_t cpsr;
    __asm volatile("mrs %0, cpsr\n\tcpsid i" : "=r"(cpsr)::"memory");
    return cpsr;
}
static void irq_restore(uint32_t cpsr)
{
    __asm volatile("msr cpsr_c, %0" ::"r"(cpsr) : "memory");
}
#else /* a host build of the library (its unit tests) */
static uint32_t irq_off(void)
{
    return 0u;
}
static void irq_restore(uint32_t mask)
{
    (void)mask;
}
#endif

void cmprof_sections_poll(void)
{
    for (uint32_t i = 0; i < CMPROF_SECTIONS; i++) {
        struct cmprof_section *s = &cmprof_sections[i];
        if (!s->running)
            continue;
        uint32_t mask = irq_off();
        /* From the upper half back to the lower: the clock went round once. Without branches, so a
         * poll takes the same instructions whatever it finds (the scenario compares two clocks). */
        uint32_t upper = ((cmprof_clock() - s->start) >> 31) & s->running;
        s->wraps += s->upper_half & (upper ^ 1u);
        s->upper_half = (uint8_t)upper;
        irq_restore(mask);
    }
}

/* A run's length in 64 bits from its 32-bit difference d and the wraps the polls counted. */
static uint64_t run_length(const struct cmprof_section *s, uint32_t d)
{
    uint32_t wraps = s->wraps + (s->upper_half & ((d >> 31) ^ 1u)); /* one since the last poll */
    return ((uint64_t)wraps << 32) + d;
}

CMPROF_AS_CALLED void cmprof_section_stop(uint32_t i)
{
    uint32_t stop = cmprof_clock();
    if (i >= CMPROF_SECTIONS)
        return;
    struct cmprof_section *s = &cmprof_sections[i];
    events_stop(s);
    uint32_t d = stop - s->start; /* unsigned: right across one wrap of the clock */
    s->running = 0u;
    uint64_t len;
    if ((s->wraps | s->upper_half) == 0u) { /* the common run: 32 bits do */
        if (!calibrating)
            d = d > clock_offset ? d - clock_offset : 0u;
        len = d;
    } else { /* a poll saw it past half the range: maybe past all of it */
        len = run_length(s, d);
        if (!calibrating)
            len = len > clock_offset ? len - clock_offset : 0u;
        d = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
        s->long_runs += len > UINT32_MAX;
    }
    s->current = d;
    if (d < s->min)
        s->min = d;
    if (d > s->max)
        s->max = d;
    s->count++;
    s->sum += len;
}

void cmprof_section_reset(uint32_t i)
{
    uint32_t first = i, last = i;
    if (i == CMPROF_ALL_SECTIONS) {
        first = 0u;
        last = CMPROF_SECTIONS - 1u;
    } else if (i >= CMPROF_SECTIONS) {
        return;
    }
    for (uint32_t k = first; k <= last; k++) {
        struct cmprof_section *s = &cmprof_sections[k];
        s->start = 0u;
        s->current = 0u;
        s->min = UINT32_MAX;
        s->max = 0u;
        s->count = 0u;
        s->sum = 0u;
        s->long_runs = 0u;
        s->running = 0u;
#if CMPROF_SECTION_EVENTS
        for (unsigned e = 0; e < CMPROF_SECTION_EVENTS; e++)
            s->events[e] = (struct cmprof_stat){0u, 0u, UINT32_MAX, 0u, 0u};
#endif
    }
}

#if CMPROF_SECTION_EVENTS
uint32_t cmprof_section_event(unsigned k)
{
    return k < n_events ? section_events[k] : 0u;
}
#else
uint32_t cmprof_section_event(unsigned k)
{
    (void)k;
    return 0u;
}
#endif

unsigned cmprof_section_events(void)
{
    return n_events;
}

const struct cmprof_section *cmprof_section_get(uint32_t i)
{
    return i < CMPROF_SECTIONS ? &cmprof_sections[i] : NULL;
}

static void put_str(cmprof_putc_fn putc, const char *s)
{
    while (*s)
        putc(*s++);
}

static void put_u64(cmprof_putc_fn putc, uint64_t v)
{
    char buf[20];
    unsigned k = 0;
    while (v > UINT32_MAX) { /* the 64-bit division (a libgcc call) only for the top digits */
        buf[k++] = (char)('0' + (unsigned)(v % 10u));
        v /= 10u;
    }
    uint32_t w = (uint32_t)v;
    do {
        buf[k++] = (char)('0' + w % 10u);
        w /= 10u;
    } while (w);
    while (k)
        putc(buf[--k]);
}

/* " cur=C min=A max=B sum=S" (the line's end is the caller's) */
static void put_stats(cmprof_putc_fn putc, uint32_t cur, uint32_t min, uint32_t max, uint64_t sum)
{
    put_str(putc, " cur=");
    put_u64(putc, cur);
    put_str(putc, " min=");
    put_u64(putc, min);
    put_str(putc, " max=");
    put_u64(putc, max);
    put_str(putc, " sum=");
    put_u64(putc, sum);
}

void cmprof_sections_dump(cmprof_putc_fn putc)
{
    cmprof_sections_poll();
#if CMPROF_SECTION_EVENTS
    if (n_events) { /* the core, so the host can name its own event numbers */
        put_str(putc, "target midr=");
        uint32_t id = cmprof_cpu_id();
        for (int shift = 28; shift >= 0; shift -= 4)
            putc("0123456789abcdef"[(id >> shift) & 0xFu]);
        putc('\n');
    }
#endif
    for (uint32_t i = 0; i < CMPROF_SECTIONS; i++) {
        const struct cmprof_section *s = &cmprof_sections[i];
        if (s->count == 0u)
            continue;
        put_str(putc, "sect ");
        put_u64(putc, i);
        put_str(putc, " n=");
        put_u64(putc, s->count);
        put_stats(putc, s->current, s->min, s->max, s->sum);
        if (s->long_runs) {
            put_str(putc, " long=");
            put_u64(putc, s->long_runs);
        }
        putc('\n');
#if CMPROF_SECTION_EVENTS
        for (unsigned k = 0; k < n_events; k++) {
            const struct cmprof_stat *e = &s->events[k];
            put_str(putc, "sectev ");
            put_u64(putc, i);
            putc(' ');
            put_u64(putc, k);
            put_str(putc, " ev=");
            put_u64(putc, section_events[k]);
            put_stats(putc, e->current, e->min, e->max, e->sum);
            putc('\n');
        }
#endif
    }
}

#if defined(CMPROF_STREAM) && CMPROF_STREAM
/* The stream's "@sect" lines are the dump's "sect" lines with an '@' before them and a check
 * after: the dump's text, gathered a line at a time and handed to the stream. */
static cmprof_putc_fn stream_out;
static char stream_text[200];
static uint32_t stream_len;

static void stream_putc(char c)
{
    if (c == '\n') {
        cmprof_stream_line(stream_out, stream_text, stream_len);
        stream_len = 1u; /* the next line's '@' stays in place */
    } else if (stream_len < sizeof stream_text - 4u) {
        stream_text[stream_len++] = c;
    }
}

void cmprof_stream_sections(cmprof_putc_fn putc)
{
    stream_out = putc;
    stream_text[0] = '@';
    stream_len = 1u;
    cmprof_sections_dump(stream_putc);
}
#endif
