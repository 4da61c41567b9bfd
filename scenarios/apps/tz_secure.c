/* The Secure image under the TrustZone-M scenarios (m33_ns_*): QEMU's mps2-an505 boots it in
 * Secure state. It makes the Non-Secure image's memory and the peripherals it uses Non-Secure,
 * gives it one Secure function to call (secure_work(), through its veneer in the Non-Secure
 * Callable region), and starts it. The Non-Secure image (scenarios/apps/stacks.c with TZ_NS) is the
 * profiled firmware: its sampler runs on the Non-Secure SysTick, and each of its samples that
 * lands in secure_work() interrupts Secure code, whose frame is on the Secure stack.
 *
 * AN505 memory (Application Note AN505, QEMU's mps2-an505): SSRAM1 (code, 4 MB) at 0x00000000 and
 * its Secure alias 0x10000000; SSRAM2 and SSRAM3 (2 MB each) at 0x28000000 / 0x28200000, Secure
 * aliases at 0x38000000 / 0x38200000; each behind a memory protection controller whose block table
 * says which blocks Non-Secure accesses may reach. Peripherals at 0x40000000, Secure aliases at
 * 0x50000000, behind peripheral protection controllers set in the IoTKit's Secure privilege
 * control block. The IoTKit's IDAU makes addresses with bit 28 set Secure (Non-Secure Callable in
 * the code region when NSCCFG says so), the others Non-Secure; the SAU must agree. */
#include "board.h"
#include "work.h"

#include <arm_cmse.h>
#include <stdint.h>

#ifndef NS_CODE /* where the Non-Secure image's vector table lies (an505_ns.ld) */
#define NS_CODE 0x00200000u
#endif
#define NS_CODE_END 0x00400000u
#define NS_RAM 0x28200000u /* SSRAM3: the Non-Secure image's data and stack */
#define NS_RAM_END 0x28400000u

#define SAU_CTRL 0xE000EDD0u
#define SAU_RNR 0xE000EDD8u
#define SAU_RBAR 0xE000EDDCu
#define SAU_RLAR 0xE000EDE0u
#define SAU_RLAR_ENABLE 1u
#define SAU_RLAR_NSC 2u
#define SCB_NS_VTOR 0xE002ED08u /* the Non-Secure VTOR, through the Non-Secure alias of the SCB */
#define SECCTL_NSCCFG 0x50080014u /* bit 0: the code region's Secure alias may be Non-Secure Callable */
#define SECCTL_APBNSPPC0 0x50080070u    /* IoTKit APB: bit 0 TIMER0 */
#define SECCTL_APBNSPPCEXP1 0x50080084u /* expansion APB 1: bit 5 UART0 */
#define MPC_SSRAM1 0x58007000u
#define MPC_SSRAM3 0x58009000u
#define MPC_BLK_MAX 0x10u
#define MPC_BLK_CFG 0x14u
#define MPC_BLK_IDX 0x18u
#define MPC_BLK_LUT 0x1Cu

extern uint32_t __nsc_start[], __nsc_end[]; /* the veneers' region (an505_s.ld) */

static void sau_region(uint32_t n, uint32_t base, uint32_t end, uint32_t flags)
{
    BOARD_REG(SAU_RNR) = n;
    BOARD_REG(SAU_RBAR) = base & ~31u;
    BOARD_REG(SAU_RLAR) = ((end - 1u) & ~31u) | flags | SAU_RLAR_ENABLE;
}

/* The blocks of [lo, hi) bytes into the memory behind `mpc` made Non-Secure (bit set in its table). */
static void mpc_non_secure(uint32_t mpc, uint32_t lo, uint32_t hi)
{
    uint32_t shift = BOARD_REG(mpc + MPC_BLK_CFG) + 5u, last = BOARD_REG(mpc + MPC_BLK_MAX); /* the last word's index */
    for (uint32_t w = 0; w <= last; w++) {
        uint32_t bits = 0;
        for (uint32_t b = 0; b < 32u; b++) {
            uint32_t at = ((w * 32u + b) << shift);
            if (at >= lo && at < hi)
                bits |= 1u << b;
        }
        BOARD_REG(mpc + MPC_BLK_IDX) = w;
        BOARD_REG(mpc + MPC_BLK_LUT) = bits;
    }
}

NOP_LOOP(__attribute__((noinline)), secure_spin)

/* The Secure service the Non-Secure code calls: n turns of a loop, all in Secure state. */
__attribute__((cmse_nonsecure_entry)) uint32_t secure_work(uint32_t n)
{
    secure_spin(n);
    return n;
}

typedef void __attribute__((cmse_nonsecure_call)) ns_entry(void);

int main(void)
{
    board_init(); /* the Secure aliases of UART0 and TIMER0, until they are made Non-Secure below */
    board_puts("boot: secure image, starting the non-secure one\n");
    BOARD_REG(SECCTL_NSCCFG) = 1u;
    mpc_non_secure(MPC_SSRAM1, NS_CODE, NS_CODE_END);
    mpc_non_secure(MPC_SSRAM3, 0u, NS_RAM_END - NS_RAM);
    sau_region(0, NS_CODE, NS_CODE_END, 0u);
    sau_region(1, (uint32_t)(uintptr_t)__nsc_start, (uint32_t)(uintptr_t)__nsc_end, SAU_RLAR_NSC);
    sau_region(2, NS_RAM, NS_RAM_END, 0u);
    sau_region(3, 0x40000000u, 0x50000000u, 0u);
    BOARD_REG(SAU_CTRL) = 1u;
    __asm volatile("dsb\n isb" ::: "memory");
    BOARD_REG(SECCTL_APBNSPPC0) = 1u; /* from here on the Secure aliases of these two no longer answer */
    BOARD_REG(SECCTL_APBNSPPCEXP1) = 1u << 5;
    const uint32_t *ns_vectors = (const uint32_t *)(uintptr_t)NS_CODE;
    BOARD_REG(SCB_NS_VTOR) = NS_CODE;
    __asm volatile("msr msp_ns, %0" : : "r"(ns_vectors[0]));
    ns_entry *start = (ns_entry *)cmse_nsfptr_create((ns_entry *)(uintptr_t)ns_vectors[1]);
    start();
    board_exit(1); /* the Non-Secure image ends the run itself */
}
