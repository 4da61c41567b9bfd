/* Bare-metal support for a Cortex-R5 on QEMU's vexpress-a15 board (-cpu cortex-r5f -m 2048,
 * design notes 13): the entry point with a stack for each mode, the exception vectors at
 * 0xFFFF0000 (high vectors, SCTLR.V), the A15 MPCore's GICv2 with the sampling timer's line and
 * the PMU's routed to cmprof_tick(), the PL011 UART0, a free-running SP804 as board_clock(), and a
 * semihosting exit; board_common.c adds the text helpers and the truth markers. Linked by r5.ld:
 * code and data in the SRAM at 0x2E000000, .bss and the stacks in the PSRAM at 0x14000000.
 * Build with -marm (the vectors and entry are A32). */
#include "board_r5.h"

#include "cmprof.h"
#include "cmprof_pmu.h"

#define UART_DR (*(volatile uint32_t *)0x1C090000u)
#define UART_FR (*(volatile uint32_t *)0x1C090018u)
#define GICD(off) (*(volatile uint32_t *)(0x2C001000u + (off)))
#define GICC(off) (*(volatile uint32_t *)(0x2C002000u + (off)))
#define GICD_BYTE(off) (*(volatile uint8_t *)(0x2C001000u + (off)))
/* board_clock(): timer 1 of the other SP804 (TIMER23), free-running down from 2^32 - 1, no IRQ */
#define CLOCK_LOAD (*(volatile uint32_t *)0x1C120000u)
#define CLOCK_VALUE (*(volatile uint32_t *)0x1C120004u)
#define CLOCK_CONTROL (*(volatile uint32_t *)0x1C120008u)

/* one stack for each mode that runs code: SVC (main), IRQ, and UND/ABT/FIQ for the fault report */
uint32_t board_svc_stack[2048] __attribute__((aligned(8)));
uint32_t board_irq_stack[256] __attribute__((aligned(8)));
uint32_t board_exc_stack[3][64] __attribute__((aligned(8)));

int main(void);
void board_irq(uint32_t pc);
void board_fault(uint32_t cpsr, uint32_t lr);

/* The vectors at 0xFFFF0000: the code in SRAM is out of a branch's reach, so each loads the PC. */
__attribute__((naked, section(".text.vectors"))) void board_vectors(void)
{
    __asm volatile("ldr pc, =_start\n"
                   "ldr pc, =board_fault_entry\n" /* undefined instruction */
                   "ldr pc, =board_fault_entry\n" /* SVC: semihosting never gets here */
                   "ldr pc, =board_fault_entry\n" /* prefetch abort */
                   "ldr pc, =board_fault_entry\n" /* data abort */
                   "ldr pc, =board_fault_entry\n"
                   "ldr pc, =board_irq_entry\n"
                   "ldr pc, =board_fault_entry\n" /* FIQ */
                   ".ltorg\n");
}

__attribute__((naked)) void board_irq_entry(void)
{
    __asm volatile("sub lr, lr, #4\n"        /* the interrupted instruction, ARM or Thumb */
                   "push {r0-r3, r12, lr}\n" /* 24 bytes: the stack stays 8-aligned */
                   "mov r0, lr\n"
                   "bl board_irq\n"
                   "pop {r0-r3, r12, lr}\n"
                   "movs pc, lr\n");         /* back, CPSR from SPSR_irq */
}

__attribute__((naked)) void board_fault_entry(void)
{
    __asm volatile("mrs r0, cpsr\n"
                   "mov r1, lr\n"
                   "b board_fault\n");
}

__attribute__((naked, section(".text.start"))) void _start(void)
{
    __asm volatile("cpsid if\n"
                   "cps #0x11\n ldr sp, =board_exc_stack + 256\n"  /* FIQ */
                   "cps #0x17\n ldr sp, =board_exc_stack + 512\n"  /* ABT */
                   "cps #0x1B\n ldr sp, =board_exc_stack + 768\n"  /* UND */
                   "cps #0x12\n ldr sp, =board_irq_stack + 1024\n" /* IRQ */
                   "cps #0x13\n ldr sp, =board_svc_stack + 8192\n" /* SVC: main runs here */
                   "mrc p15, 0, r0, c1, c0, 0\n"
                   "orr r0, r0, #0x2000\n"                          /* SCTLR.V: vectors at 0xFFFF0000 */
                   "bic r0, r0, #0x40000000\n"                      /* SCTLR.TE = 0: exceptions in ARM state */
                   "mcr p15, 0, r0, c1, c0, 0\n"
                   "isb\n"
                   "ldr r0, =_sbss\n ldr r1, =_ebss\n mov r2, #0\n"
                   "1: cmp r0, r1\n strlo r2, [r0], #4\n blo 1b\n"
                   "bl main\n"
                   "b .\n");
}

volatile uint32_t board_pmu_irqs, board_pmu_event_irqs, board_pmu_event_pc, board_pmu_spurious;

/* The PMU's line: the sampler's counter (with CMPROF_PORT_PMU), other counters, or nothing set. */
static void pmu_irq(uint32_t pc)
{
    uint32_t flags = cmprof_pmu_overflow();
    if (flags & CMPROF_PMU_SAMPLE_MASK) {
        board_pmu_irqs++;
#if CMPROF_PORT == CMPROF_PORT_PMU
        cmprof_tick(pc); /* acknowledges, preloads the next period (with jitter), stops at the limit */
#else
        cmprof_pmu_clear_overflow(CMPROF_PMU_SAMPLE_MASK);
#endif
    }
    if (flags & ~CMPROF_PMU_SAMPLE_MASK) {
        board_pmu_event_irqs++;
        board_pmu_event_pc = pc;
        cmprof_pmu_clear_overflow(flags & ~CMPROF_PMU_SAMPLE_MASK);
    }
    if (!flags)
        board_pmu_spurious++;
}

void board_irq(uint32_t pc)
{
    uint32_t iar = GICC(0x0Cu);
    uint32_t id = iar & 0x3FFu;
    if (id == BOARD_R5_PMU_INTID)
        pmu_irq(pc);
#if CMPROF_PORT == CMPROF_PORT_SP804
    else if (id == BOARD_R5_SP804_INTID)
        cmprof_tick(pc); /* acknowledges the timer, re-arms it (jitter), stops at the limit */
#endif
    if (id < 1020u)
        GICC(0x10u) = iar;
}

void board_fault(uint32_t cpsr, uint32_t lr)
{
    board_puts("\nboard: exception in mode 0x");
    board_puthex(cpsr & 0x1Fu);
    board_puts(", lr 0x");
    board_puthex(lr);
    board_putc('\n');
    board_exit(1);
}

/* One SPI or PPI to CPU 0 at priority 0x80, enabled. */
static void gic_route(uint32_t intid)
{
    GICD_BYTE(0x400u + intid) = 0x80u;                 /* GICD_IPRIORITYR */
    GICD_BYTE(0x800u + intid) = 1u;                    /* GICD_ITARGETSR: CPU 0 (read-only for PPIs) */
    GICD(0x100u + 4u * (intid / 32u)) = 1u << (intid % 32u); /* GICD_ISENABLER */
}

void board_gic_pmu(void)
{
    GICD(0x000u) = 1u; /* distributor on */
    gic_route(BOARD_R5_PMU_INTID);
#if CMPROF_PORT == CMPROF_PORT_SP804
    gic_route(BOARD_R5_SP804_INTID);
#endif
    GICC(0x004u) = 0xF0u; /* priority mask: let them through */
    GICC(0x000u) = 1u;    /* CPU interface on */
}

void board_gic_pend(uint32_t intid)
{
    GICD(0x200u + 4u * (intid / 32u)) = 1u << (intid % 32u); /* GICD_ISPENDR */
}

void board_init(void)
{
    CLOCK_CONTROL = 0u;
    CLOCK_LOAD = 0xFFFFFFFFu;
    CLOCK_CONTROL = (1u << 7) | (1u << 1); /* enabled, 32-bit, free-running, no interrupt */
    board_gic_pmu();
    __asm volatile("cpsie i" ::: "memory");
}

/* The SP804's TIMCLK: 1 MHz, one tick per 1000 instructions under -icount shift=0. */
uint32_t board_clock(void)
{
    return ~CLOCK_VALUE;
}

void board_putc(char c)
{
    while (UART_FR & (1u << 5)) /* TX FIFO full */
        ;
    UART_DR = (uint32_t)c;
}
