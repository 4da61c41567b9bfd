/* Two tasks sharing one function, on a small preemptive scheduler of our own: PendSV switches
 * contexts on PSP; tasks yield after each round and TIM4 forces a switch now and then. The
 * sampler stores the current task with every sample (build with -DCMPROF_TAG=current_task). */
#include "board.h"
#include "cmprof.h"

#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 5000u
#endif

#define ICSR_PENDSVSET (1u << 28)
#define RCC_APB1ENR 0x40023840u
#define TIM4_BASE 0x40000800u
#define TIM4_IRQ 30u

struct task {
    uint32_t *sp; /* saved PSP: r4-r11 below the hardware frame */
    const char *name;
    uint32_t stack[192];
};

static struct task tasks[2];
static struct task boot_task = {.name = "boot"};
void *volatile current_task = &boot_task;
static volatile uint32_t preemptions;

__attribute__((noinline)) void hot_a(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        __asm volatile("nop");
}

__attribute__((noinline)) void hot_b(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        __asm volatile("nop");
}

static void yield(void)
{
    BOARD_REG(BOARD_SCB_ICSR) = ICSR_PENDSVSET;
    __asm volatile("dsb\nisb" ::: "memory");
}

/* Called from PendSV with the outgoing PSP; returns the incoming one. */
__attribute__((used)) uint32_t *sched_switch(uint32_t *sp)
{
    struct task *cur = current_task;
    cur->sp = sp;
    struct task *next = (cur == &tasks[0]) ? &tasks[1] : &tasks[0];
    current_task = next;
    return next->sp;
}

__attribute__((naked)) void PendSV_Handler(void)
{
    __asm volatile("mrs   r0, psp\n"
                   "stmdb r0!, {r4-r11}\n"
                   "push  {lr}\n"
                   "bl    sched_switch\n"
                   "pop   {lr}\n"
                   "ldmia r0!, {r4-r11}\n"
                   "msr   psp, r0\n"
                   "bx    lr\n");
}

void TIM4_IRQHandler(void)
{
    BOARD_REG(TIM4_BASE + 0x10u) = 0u; /* clear UIF */
    preemptions++;
    yield();
}

static void finish(void)
{
    cmprof_stop();
    truth_end();
    for (uint32_t i = 0; i < 2u; i++) {
        board_puts("task ");
        board_puthex((uint32_t)(uintptr_t)&tasks[i]);
        board_putc(' ');
        board_puts(tasks[i].name);
        board_putc('\n');
    }
    board_puts("preemptions=");
    board_putdec(preemptions);
    board_putc('\n');
    cmprof_dump(board_putc);
    board_exit(0);
}

static void task_motor(void)
{
    for (;;) {
        hot_a(600);
        if (cmprof_samples() >= SAMPLES)
            finish();
        yield();
    }
}

static void task_link(void)
{
    for (;;) {
        hot_a(300);
        hot_b(100);
        yield();
    }
}

static void task_init(struct task *t, const char *name, void (*entry)(void))
{
    t->name = name;
    uint32_t *sp = &t->stack[192];
    *--sp = 0x01000000u;                     /* xPSR: Thumb */
    *--sp = (uint32_t)(uintptr_t)entry;      /* PC */
    *--sp = 0xFFFFFFFFu;                     /* LR: tasks never return */
    for (int r = 0; r < 5; r++)              /* r12, r3, r2, r1, r0 */
        *--sp = 0u;
    for (int r = 0; r < 8; r++)              /* r11..r4 */
        *--sp = 0u;
    t->sp = sp;
}

int main(void)
{
    static uint32_t boot_stack[64];
    board_init();
    task_init(&tasks[0], "motor", task_motor);
    task_init(&tasks[1], "link", task_link);
    BOARD_REG(BOARD_SCB_SHPR3) |= 0xFFu << 16; /* PendSV: least urgent */
    /* TIM4 time slice, less urgent than the sampler */
    BOARD_REG(RCC_APB1ENR) |= 1u << 2;
    BOARD_REG(TIM4_BASE + 0x28u) = 0u;        /* PSC */
    BOARD_REG(TIM4_BASE + 0x2Cu) = 50000u;    /* ARR */
    BOARD_REG(TIM4_BASE + 0x0Cu) = 1u;        /* DIER.UIE */
    BOARD_NVIC_IPR_BYTE(TIM4_IRQ) = 0x80u;
    BOARD_REG(BOARD_NVIC_ISER0) = 1u << TIM4_IRQ;
    BOARD_REG(TIM4_BASE) = 1u;                /* CEN */
    /* Thread mode onto PSP; the first PendSV parks main as the boot task and never returns. */
    __asm volatile("msr psp, %0\n"
                   "movs r0, #2\n"
                   "msr control, r0\n"
                   "isb\n" ::"r"(&boot_stack[64])
                   : "r0", "memory");
    cmprof_start(PERIOD, 0u);
    truth_begin();
    yield();
    for (;;) {
    }
}
