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

#include "tz_setup.h"

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
    tz_open_non_secure(1);
    BOARD_REG(SECCTL_APBNSPPC0) = 1u; /* from here on the Secure aliases of these two no longer answer */
    BOARD_REG(SECCTL_APBNSPPCEXP1) = 1u << 5;
    const uint32_t *ns_vectors = (const uint32_t *)(uintptr_t)NS_CODE;
    ns_entry *start = (ns_entry *)cmse_nsfptr_create((ns_entry *)(uintptr_t)ns_vectors[1]);
    start();
    board_exit(1); /* the Non-Secure image ends the run itself */
}
