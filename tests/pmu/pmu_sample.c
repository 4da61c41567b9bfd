/* PC sampling on Cortex-A through the PMU (CMPROF_PORT_PMU), bare metal on QEMU's virt board:
 * the cycle counter overflows into PPI 7 (INTID 23) of the GICv2, the IRQ handler passes the
 * interrupted PC (LR_irq - 4) to cmprof_tick(), and cmprof_dump() prints the ring for the host.
 * Three loops share the time 70/20/10 by instruction count. For tests/test_pmu.py. */
#include "cmprof.h"
#include "cmprof_pmu.h"

#define UART_DR (*(volatile uint32_t *)0x09000000u)
#define UART_FR (*(volatile uint32_t *)0x09000018u)
#define GICD(off) (*(volatile uint32_t *)(0x08000000u + (off)))
#define GICC(off) (*(volatile uint32_t *)(0x08010000u + (off)))
#define PMU_INTID 23u

#ifndef SAMPLES
#define SAMPLES 10000u
#endif
#ifndef PERIOD
#define PERIOD 997u
#endif

uint32_t svc_stack[1024] __attribute__((aligned(8)));
uint32_t irq_stack[256] __attribute__((aligned(8)));

int main(void);
void irq_handler(uint32_t pc);

/* the vector table: only IRQ is expected */
__attribute__((naked, aligned(32), section(".text.vectors"))) void vectors(void)
{
    __asm volatile("b .\n b .\n b .\n b .\n b .\n b .\n b irq_entry\n b .\n");
}

__attribute__((naked)) void irq_entry(void)
{
    __asm volatile("sub lr, lr, #4\n"          /* the interrupted instruction */
                   "push {r0-r3, r12, lr}\n"   /* 24 bytes: the stack stays 8-aligned */
                   "mov r0, lr\n"
                   "bl irq_handler\n"
                   "pop {r0-r3, r12, lr}\n"
                   "movs pc, lr\n");           /* back, CPSR from SPSR_irq */
}

__attribute__((naked, section(".text.start"))) void _start(void)
{
    __asm volatile("cps #0x12\n"
                   "ldr sp, =irq_stack + 1024\n"
                   "cps #0x13\n"
                   "ldr sp, =svc_stack + 4096\n"
                   "ldr r0, =vectors\n"
                   "mcr p15, 0, r0, c12, c0, 0\n" /* VBAR */
                   "mrc p15, 0, r0, c1, c0, 0\n"
                   "bic r0, r0, #0x2000\n"        /* SCTLR.V = 0: vectors at VBAR */
                   "mcr p15, 0, r0, c1, c0, 0\n"
                   "isb\n"
                   "bl main\n"
                   "b .\n");
}

void irq_handler(uint32_t pc)
{
    uint32_t iar = GICC(0x0Cu);
    if ((iar & 0x3FFu) == PMU_INTID && (cmprof_pmu_overflow() & CMPROF_PMU_CYCLES))
        cmprof_tick(pc); /* acknowledges, preloads the next period (with jitter), stops at the limit */
    GICC(0x10u) = iar;
}

static void putc_(char c)
{
    while (UART_FR & (1u << 5))
        ;
    UART_DR = (uint32_t)c;
}

#define HOT(name, n)                                                                                                  \
    __attribute__((noinline)) void name(void)                                                                        \
    {                                                                                                                 \
        uint32_t k = (n);                                                                                             \
        __asm volatile("1: subs %0, %0, #1\n bne 1b\n" : "+r"(k)::"cc");                                              \
    }
HOT(hot_a, 7000u)
HOT(hot_b, 2000u)
HOT(hot_c, 1000u)

static void leave(void)
{
    register uint32_t r0 __asm("r0") = 0x18u;
    register uint32_t r1 __asm("r1") = 0x20026u;
    __asm volatile("svc 0x123456" : : "r"(r0), "r"(r1) : "memory");
}

int main(void)
{
    GICD(0x000u) = 1u;                                   /* distributor on */
    *(volatile uint8_t *)(0x08000400u + PMU_INTID) = 0x80u; /* priority */
    GICD(0x100u) = 1u << PMU_INTID;                      /* enable the PMU's PPI */
    GICC(0x004u) = 0xF0u;                                /* priority mask: let it through */
    GICC(0x000u) = 1u;                                   /* CPU interface on */
    cmprof_start(PERIOD, SAMPLES);
    __asm volatile("cpsie i" ::: "memory");
    while (cmprof_samples() < SAMPLES) {
        hot_a();
        hot_b();
        hot_c();
    }
    __asm volatile("cpsid i" ::: "memory");
    cmprof_dump(putc_);
    leave();
    for (;;)
        ;
}
