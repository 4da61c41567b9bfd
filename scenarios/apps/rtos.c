/* Issue 7's full flow on MPS2 AN385: a small preemptive RTOS of our own, profiled live.
 *
 * - The sampler runs on the CMSDK dual timer (SysTick is left alone) with task tags, streamed.
 * - The scheduler: PendSV switches contexts on PSP, round robin over a pool of control blocks;
 *   CMSDK TIMER1 is its tick (interrupt source 1), which also does a little work.
 * - A spawner task creates WORKERS workers, at most POOL - 2 alive at once, each in a freed control
 *   block: tags are reused by new tasks with new names, as an RTOS's heap reuses them.
 * - Workers run one of three work functions a planned number of times, raise the sensor interrupt
 *   (GPIO0, interrupt source 2) now and then, log a line and delete themselves.
 * - A printf-style logger writes to the same UART as the stream, a character at a time, and can be
 *   preempted mid-line; the idle task drains the stream, so stream lines get glued onto log lines.
 *   The firmware counts every time that happens (glued=), for the host's count to be checked.
 * - At the end: the plan of every worker (plan lines) for the exact (task, function) truth. */
#include "board.h"
#include "cmprof.h"
#include "work.h"

#include <stdarg.h>

#ifndef PERIOD
#define PERIOD 42u
#endif
#ifndef WORKERS
#define WORKERS 120u
#endif
#define POOL 10u        /* control blocks: idle, spawner and up to 8 workers */
#define STACK_WORDS 256u
#define SLICE_TICKS 500u /* TIMER1 at 25 MHz: 20000 instructions a slice with -icount shift=0 */
#define GPIO0_IRQ 6u
#define TIMER1_IRQ 9u
#define TIMER1_BASE 0x40001000u
#define ICSR_PENDSVSET (1u << 28)

enum state { FREE, READY, DEAD };

struct tcb {
    uint32_t *sp; /* saved PSP: r4-r11 below the hardware frame */
    enum state state;
    char name[12];
    uint32_t stack[STACK_WORDS];
};

static struct tcb pool[POOL];
static struct tcb boot = {.name = "boot"};
void *volatile current_task = &boot; /* the sampler's tag */

static volatile uint32_t lock_depth, switch_wanted, finished_workers;
static volatile uint32_t ticks, sensor_irqs, glued, log_lines;

NOP_LOOP(__attribute__((noinline)), hot_a)
NOP_LOOP(__attribute__((noinline)), hot_b)
NOP_LOOP(__attribute__((noinline)), hot_c)
NOP_LOOP(__attribute__((noinline)), tick_work)
NOP_LOOP(__attribute__((noinline)), sensor_work)
NOP_LOOP(__attribute__((noinline)), log_pace)

/* ---- scheduler ------------------------------------------------------------------------------ */

static void yield(void)
{
    BOARD_REG(BOARD_SCB_ICSR) = ICSR_PENDSVSET;
    __asm volatile("dsb\nisb" ::: "memory");
}

/* A critical section against task switches (interrupts still run). */
static void sched_lock(void)
{
    lock_depth++;
}

static void sched_unlock(void)
{
    if (--lock_depth == 0u && switch_wanted) {
        switch_wanted = 0u;
        yield();
    }
}

__attribute__((used)) uint32_t *sched_switch(uint32_t *sp)
{
    struct tcb *cur = current_task;
    cur->sp = sp;
    uint32_t i = cur == &boot ? POOL - 1u : (uint32_t)(cur - pool);
    struct tcb *next;
    do { /* round robin; the idle task (slot 0) is always ready */
        i = (i + 1u) % POOL;
        next = &pool[i];
        if (next->state == DEAD) /* reap: its block is free for the next task */
            next->state = FREE;
    } while (next->state != READY);
    current_task = next;
    return next->sp;
}

__attribute__((naked)) void PendSV_Handler(void)
{
    __asm volatile("mrs   r0, psp\n"
                   "stmdb r0!, {r4-r11}\n"
                   "push  {r0, lr}\n"
                   "bl    sched_switch\n"
                   "pop   {r1, lr}\n"
                   "ldmia r0!, {r4-r11}\n"
                   "msr   psp, r0\n"
                   "bx    lr\n");
}

/* Interrupt source 1: the scheduler's tick. */
void TIMER1_Handler(void)
{
    BOARD_REG(TIMER1_BASE + 0xCu) = 1u; /* INTCLEAR */
    ticks++;
    tick_work(30);
    if (lock_depth)
        switch_wanted = 1u;
    else
        yield();
}

/* Interrupt source 2: a sensor, raised by the workers. */
void GPIO0_IRQHandler(void)
{
    sensor_irqs++;
    sensor_work(150);
}

static void task_exit(void)
{
    for (;;) {
    }
}

static void task_create(struct tcb *t, const char *name, void (*entry)(uint32_t), uint32_t arg)
{
    uint32_t k = 0;
    for (; name[k] && k + 1u < sizeof t->name; k++)
        t->name[k] = name[k];
    t->name[k] = '\0';
    uint32_t *sp = &t->stack[STACK_WORDS];
    *--sp = 0x01000000u; /* xPSR: Thumb */
    *--sp = (uint32_t)(uintptr_t)entry;
    *--sp = (uint32_t)(uintptr_t)task_exit; /* LR */
    for (int r = 0; r < 4; r++)              /* r12, r3, r2, r1 */
        *--sp = 0u;
    *--sp = arg; /* r0 */
    for (int r = 0; r < 8; r++) /* r11..r4 */
        *--sp = 0u;
    t->sp = sp;
    cmprof_stream_task_later(t, t->name); /* what an RTOS's traceTASK_CREATE does */
    __asm volatile("" ::: "memory");
    t->state = READY;
}

/* The running task deletes itself. */
static void task_delete_self(void)
{
    struct tcb *me = current_task;
    cmprof_stream_task_gone(me); /* traceTASK_DELETE */
    me->state = DEAD;
    finished_workers++;
    yield();
    for (;;) {
    }
}

/* ---- the UART, shared by the logger and the stream -------------------------------------------- */

static volatile uint32_t uart_dirty;  /* the UART's current line has text: the last byte was not '\n' */
static volatile uint32_t stream_mid;  /* the stream is inside one of its lines */

/* The stream's putc: a stream line whose first byte lands on a line that already has text is glued
 * onto it (the same log line can be cut more than once). */
static void stream_putc(char c)
{
    if (!stream_mid && uart_dirty)
        glued++;
    stream_mid = c != '\n';
    uart_dirty = c != '\n';
    board_putc(c);
}

static void log_putc(char c)
{
    sched_lock(); /* the character and the flag change together, as the stream sees them */
    board_putc(c);
    uart_dirty = c != '\n';
    sched_unlock();
    log_pace(12); /* a slow UART: a line takes long enough to be preempted */
}

static void log_dec(uint32_t v, unsigned width)
{
    char d[10];
    unsigned k = 0;
    do {
        d[k++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (k < width && k < sizeof d)
        d[k++] = '0';
    while (k)
        log_putc(d[--k]);
}

static struct tcb *volatile log_owner;

/* printf for %s, %u and %0Nu, one line at a time: a task waits while another is mid-line. */
static void log_printf(const char *fmt, ...)
{
    for (;;) {
        sched_lock();
        if (!log_owner) {
            log_owner = current_task;
            sched_unlock();
            break;
        }
        sched_unlock();
        yield();
    }
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            log_putc(*p);
            continue;
        }
        unsigned width = 0;
        if (p[1] == '0')
            p++;
        while (p[1] >= '0' && p[1] <= '9')
            width = width * 10u + (unsigned)(*++p - '0');
        if (p[1] == 'u') {
            log_dec(va_arg(ap, uint32_t), width);
            p++;
        } else if (p[1] == 's') {
            for (const char *s = va_arg(ap, const char *); *s; s++)
                log_putc(*s);
            p++;
        }
    }
    va_end(ap);
    log_lines++;
    log_owner = 0;
}

/* ---- the application ------------------------------------------------------------------------ */

/* Worker w's plan: which function, its loop count, and how many calls. */
static uint32_t plan_kind(uint32_t w)
{
    return w % 3u;
}

static uint32_t plan_n(uint32_t w)
{
    return 300u + 53u * (w % 7u);
}

static uint32_t plan_calls(uint32_t w)
{
    return 120u + 13u * (w % 11u);
}

static void worker(uint32_t w)
{
    static void (*const work[3])(uint32_t) = {hot_a, hot_b, hot_c};
    void (*f)(uint32_t) = work[plan_kind(w)];
    uint32_t n = plan_n(w), calls = plan_calls(w);
    for (uint32_t c = 0; c < calls; c++) {
        f(n);
        if (c % 16u == 15u)
            BOARD_REG(BOARD_NVIC_ISPR0) = 1u << GPIO0_IRQ;
    }
    log_printf("w%03u done: %u calls of %u\n", w, calls, n);
    task_delete_self();
}

static volatile uint32_t all_done;
static char worker_name[12];

static void spawner(uint32_t unused)
{
    (void)unused;
    for (uint32_t w = 0; w < WORKERS;) {
        struct tcb *free_block = 0;
        sched_lock();
        for (uint32_t i = 2; i < POOL && !free_block; i++)
            if (pool[i].state == FREE)
                free_block = &pool[i];
        sched_unlock();
        if (!free_block) {
            yield();
            continue;
        }
        worker_name[0] = 'w';
        worker_name[1] = (char)('0' + w / 100u);
        worker_name[2] = (char)('0' + w / 10u % 10u);
        worker_name[3] = (char)('0' + w % 10u);
        worker_name[4] = '\0';
        log_printf("spawn %s in block %u\n", worker_name, (uint32_t)(free_block - pool));
        sched_lock();
        task_create(free_block, worker_name, worker, w);
        sched_unlock();
        w++;
    }
    while (finished_workers < WORKERS)
        yield();
    log_printf("all %u workers done\n", WORKERS);
    all_done = 1u;
    for (;;)
        yield();
}

static void idle(uint32_t unused)
{
    (void)unused;
    while (!all_done) {
        sched_lock(); /* a stream line is never cut by a task's log line */
        cmprof_stream_drain(stream_putc, 4u);
        sched_unlock();
    }
    truth_end();
    cmprof_stop();
    BOARD_REG(TIMER1_BASE) = 0u;
    cmprof_stream_flush(stream_putc);
    board_puts("\n");
    for (uint32_t w = 0; w < WORKERS; w++) {
        board_puts("plan w");
        board_putdec(w);
        board_puts(" kind=");
        board_putdec(plan_kind(w));
        board_puts(" n=");
        board_putdec(plan_n(w));
        board_puts(" calls=");
        board_putdec(plan_calls(w));
        board_puts("\n");
    }
    board_puts("rtos taken=");
    board_putdec(cmprof_samples());
    board_puts(" lost=");
    board_putdec(cmprof_stream_lost());
    board_puts(" glued=");
    board_putdec(glued);
    board_puts(" ticks=");
    board_putdec(ticks);
    board_puts(" sensor_irqs=");
    board_putdec(sensor_irqs);
    board_puts(" log_lines=");
    board_putdec(log_lines);
    board_puts("\n");
    board_exit(0);
}

extern const uint32_t __build_id[];

int main(void)
{
    board_init();
    board_puts("boot: rtos scenario\n");
    const struct cmprof_stream_info info = {.clock_hz = 25000000u, .timer_hz = 25000000u, .period = PERIOD,
                                            .jitter = CMPROF_JITTER, .code_base = 0x00000000u,
                                            .build_id_note = __build_id};
    cmprof_stream_announce(board_putc, &info);
    cmprof_stream_task(board_putc, &boot, boot.name);
    task_create(&pool[0], "idle", idle, 0);
    task_create(&pool[1], "spawner", spawner, 0);

    BOARD_REG(BOARD_SCB_SHPR3) |= 0xFFu << 16; /* PendSV: the least urgent */
    BOARD_NVIC_IPR_BYTE(TIMER1_IRQ) = 0x40u;   /* both below the sampler (0) */
    BOARD_NVIC_IPR_BYTE(GPIO0_IRQ) = 0x80u;
    BOARD_REG(BOARD_NVIC_ISER0) = (1u << TIMER1_IRQ) | (1u << GPIO0_IRQ);
    BOARD_REG(TIMER1_BASE + 0x8u) = SLICE_TICKS; /* RELOAD */
    BOARD_REG(TIMER1_BASE + 0x4u) = SLICE_TICKS; /* VALUE */
    BOARD_REG(TIMER1_BASE) = 1u | 8u;            /* enable, interrupt enable */

    static uint32_t boot_stack[64];
    cmprof_start(PERIOD, 0u);
    truth_begin();
    __asm volatile("msr psp, %0\n"
                   "movs r0, #2\n"
                   "msr control, r0\n"
                   "isb\n" ::"r"(&boot_stack[64])
                   : "r0", "memory");
    yield(); /* the first switch parks this context for good */
    for (;;) {
    }
}
