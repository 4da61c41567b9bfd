/* Bare-metal support for QEMU's virt board as a Cortex-A7/A9/A15 (ARMv7-A, AArch32): the entry
 * point with SVC and IRQ stacks and the vector table at VBAR, a GICv2 with the PMU's interrupt
 * (PPI 7, INTID 23) routed to cmprof_tick(), the PL011 UART, the generic timer as board_clock(),
 * and board_common.c the text helpers, the truth markers and the semihosting exit. QEMU's
 * -kernel enters in non-secure SVC mode with the MMU off: build with -marm -mno-unaligned-access
 * and link at 0x40000000 (RAM). */
#include "board_virt.h"

#include "cmprof.h"
#include "cmprof_pmu.h"

#ifdef BOARD_VEXPRESS_A9
/* vexpress-a9 (QEMU's Cortex-A9 boards have no virt variant): its PL011 UART0; linked at
 * 0x60000000 (RAM). Its PMU counts nothing in QEMU 7.2, so no interrupt is routed. */
#define UART_BASE 0x10009000u
#else
#define UART_BASE 0x09000000u
#endif
#define UART_DR (*(volatile uint32_t *)UART_BASE)
#define UART_FR (*(volatile uint32_t *)(UART_BASE + 0x18u))
#define GICD(off) (*(volatile uint32_t *)(0x08000000u + (off)))
#define GICC(off) (*(volatile uint32_t *)(0x08010000u + (off)))

uint32_t board_svc_stack[2048] __attribute__((aligned(8)));
uint32_t board_irq_stack[256] __attribute__((aligned(8)));

int main(void);
void board_irq(uint32_t pc);

/* the vector table: only IRQ is expected */
__attribute__((naked, aligned(32), section(".text.vectors"))) void board_vectors(void)
{
    __asm volatile("b .\n b .\n b .\n b .\n b .\n b .\n b board_irq_entry\n b .\n");
}

__attribute__((naked)) void board_irq_entry(void)
{
    __asm volatile("sub lr, lr, #4\n"        /* the interrupted instruction */
                   "push {r0-r3, r12, lr}\n" /* 24 bytes: the stack stays 8-aligned */
                   "mov r0, lr\n"
                   "bl board_irq\n"
                   "pop {r0-r3, r12, lr}\n"
                   "movs pc, lr\n");         /* back, CPSR from SPSR_irq */
}

__attribute__((naked, section(".text.start"))) void _start(void)
{
    __asm volatile("cps #0x12\n"
                   "ldr sp, =board_irq_stack + 1024\n"
                   "cps #0x13\n"
                   "ldr sp, =board_svc_stack + 8192\n"
                   "ldr r0, =board_vectors\n"
                   "mcr p15, 0, r0, c12, c0, 0\n" /* VBAR */
                   "mrc p15, 0, r0, c1, c0, 0\n"
                   "bic r0, r0, #0x2000\n"        /* SCTLR.V = 0: vectors at VBAR */
                   "mcr p15, 0, r0, c1, c0, 0\n"
                   "isb\n"
                   "bl main\n"
                   "b .\n");
}

volatile uint32_t board_pmu_irqs, board_pmu_event_irqs, board_pmu_event_pc;

void board_irq(uint32_t pc)
{
    uint32_t iar = GICC(0x0Cu);
    if ((iar & 0x3FFu) == BOARD_PMU_INTID) {
        uint32_t flags = cmprof_pmu_overflow();
        if (flags & CMPROF_PMU_SAMPLE_MASK) { /* the sampler's counter (the cycle counter by default) */
            board_pmu_irqs++;
            cmprof_tick(pc); /* acknowledges, preloads the next period (with jitter), stops at the limit */
        }
        if (flags & ~CMPROF_PMU_SAMPLE_MASK) { /* another counter's overflow */
            board_pmu_event_irqs++;
            board_pmu_event_pc = pc;
            cmprof_pmu_clear_overflow(flags & ~CMPROF_PMU_SAMPLE_MASK);
        }
    }
    GICC(0x10u) = iar;
}

void board_init(void)
{
    board_gic_pmu();
    __asm volatile("cpsie i" ::: "memory");
}

/* The generic timer's virtual count: 62.5 MHz on virt, one tick per 16 instructions under
 * -icount shift=0. */
uint32_t board_clock(void)
{
    uint32_t lo, hi;
    __asm volatile("isb\n mrrc p15, 1, %0, %1, c14" : "=r"(lo), "=r"(hi));
    return lo;
}

void board_gic_pmu(void)
{
#ifdef BOARD_VEXPRESS_A9
    return;
#endif
    GICD(0x000u) = 1u;                                          /* distributor on */
    *(volatile uint8_t *)(0x08000400u + BOARD_PMU_INTID) = 0x80u; /* priority */
    GICD(0x100u) = 1u << BOARD_PMU_INTID;                       /* enable the PMU's PPI */
    GICC(0x004u) = 0xF0u;                                       /* priority mask: let it through */
    GICC(0x000u) = 1u;                                          /* CPU interface on */
}

void board_putc(char c)
{
    while (UART_FR & (1u << 5)) /* TX FIFO full */
        ;
    UART_DR = (uint32_t)c;
}
