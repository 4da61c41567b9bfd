/* Scheduler for the scenarios (see sched.h). */
#include "sched.h"

#include "board.h"

#define ICSR_PENDSVSET (1u << 28)
#define RCC_APB1ENR 0x40023840u
#define TIM4_BASE 0x40000800u
#define TIM4_IRQ 30u

struct task sched_task[SCHED_TASKS];
static struct task boot_task = {.name = "boot"};
void *volatile current_task = &boot_task;
volatile uint32_t sched_preemptions;

void sched_yield(void)
{
    BOARD_REG(BOARD_SCB_ICSR) = ICSR_PENDSVSET;
    __asm volatile("dsb\nisb" ::: "memory");
}

/* Called from PendSV with the outgoing PSP; returns the incoming one. */
__attribute__((used)) uint32_t *sched_switch(uint32_t *sp)
{
    struct task *cur = current_task;
    cur->sp = sp;
    struct task *next = &sched_task[0];
    for (int i = 0; i < SCHED_TASKS; i++)
        if (cur == &sched_task[i])
            next = &sched_task[(i + 1) % SCHED_TASKS];
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
    sched_preemptions++;
    sched_yield();
}

static void task_name(struct task *t, const char *name)
{
    for (uint32_t i = 0; i + 1 < sizeof t->name && name[i]; i++)
        t->name[i] = name[i];
}

static void task_init(struct task *t, const char *name, void (*entry)(void))
{
    task_name(t, name);
    uint32_t *sp = &t->stack[256];
    *--sp = 0x01000000u;                /* xPSR: Thumb */
    *--sp = (uint32_t)(uintptr_t)entry; /* PC */
    *--sp = 0xFFFFFFFFu;                /* LR: tasks never return */
    for (int r = 0; r < 5; r++)         /* r12, r3, r2, r1, r0 */
        *--sp = 0u;
    for (int r = 0; r < 8; r++)         /* r11..r4 */
        *--sp = 0u;
    t->sp = sp;
}

void sched_start(void (*const entry[SCHED_TASKS])(void), const char *const name[SCHED_TASKS], uint32_t slice)
{
    static uint32_t boot_stack[64];
    for (int i = 0; i < SCHED_TASKS; i++)
        task_init(&sched_task[i], name[i], entry[i]);
    BOARD_REG(BOARD_SCB_SHPR3) |= 0xFFu << 16; /* PendSV: least urgent */
    BOARD_REG(RCC_APB1ENR) |= 1u << 2;         /* TIM4: the time slice, less urgent than sampling */
    BOARD_REG(TIM4_BASE + 0x28u) = 0u;         /* PSC */
    BOARD_REG(TIM4_BASE + 0x2Cu) = slice;      /* ARR */
    BOARD_REG(TIM4_BASE + 0x0Cu) = 1u;         /* DIER.UIE */
    BOARD_NVIC_IPR_BYTE(TIM4_IRQ) = 0x80u;
    BOARD_REG(BOARD_NVIC_ISER0) = 1u << TIM4_IRQ;
    BOARD_REG(TIM4_BASE) = 1u;                 /* CEN */
    /* thread mode onto PSP; the first PendSV parks this context and never comes back */
    __asm volatile("msr psp, %0\n"
                   "movs r0, #2\n"
                   "msr control, r0\n"
                   "isb\n" ::"r"(&boot_stack[64])
                   : "r0", "memory");
    sched_yield();
    for (;;) {
    }
}

/* Saves r3-r11 and the return address on the running task's stack (ten words: the stack stays
 * 8-byte aligned), switches stacks through sched_switch, and returns into the next task. */
__attribute__((naked)) void sched_pass(void)
{
    __asm volatile("push  {r3-r11, lr}\n"
                   "mov   r0, sp\n"
                   "bl    sched_switch\n"
                   "mov   sp, r0\n"
                   "pop   {r3-r11, pc}\n");
}

void sched_start_coop(void (*const entry[SCHED_TASKS])(void), const char *const name[SCHED_TASKS])
{
    for (int i = 0; i < SCHED_TASKS; i++) {
        struct task *t = &sched_task[i];
        task_name(t, name[i]);
        uint32_t *sp = &t->stack[256];
        *--sp = (uint32_t)(uintptr_t)entry[i]; /* popped into pc (Thumb bit set) */
        for (int r = 0; r < 9; r++)            /* r11..r3 */
            *--sp = 0u;
        t->sp = sp;
    }
    sched_pass(); /* parks this context in the boot task, never resumed */
    for (;;) {
    }
}
