/* Board-independent helpers: text output, semihosting exit, fault reporting. */
#include "board.h"

void board_puts(const char *s)
{
    while (*s)
        board_putc(*s++);
}

void board_putdec(uint32_t v)
{
    char buf[10];
    unsigned k = 0;
    do {
        buf[k++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (k)
        board_putc(buf[--k]);
}

void board_puthex(uint32_t v)
{
    for (int s = 28; s >= 0; s -= 4)
        board_putc("0123456789abcdef"[(v >> s) & 0xFu]);
}

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
void board_exit(int failed)
{
    /* SYS_EXIT: ADP_Stopped_ApplicationExit ends QEMU with status 0, anything else with 1. */
    register uint32_t r0 __asm("r0") = 0x18u;
    register uint32_t r1 __asm("r1") = failed ? 0x20023u : 0x20026u;
    __asm volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}

void HardFault_Handler(void)
{
    board_puts("\nboard: hard fault\n");
    board_exit(1);
}
#else
/* Cortex-A and -R: the semihosting call is an SVC (board_virt.c, board_r5.c). */
void board_exit(int failed)
{
    register uint32_t r0 __asm("r0") = 0x18u; /* SYS_EXIT: ADP_Stopped_ApplicationExit, or an error */
    register uint32_t r1 __asm("r1") = failed ? 0x20023u : 0x20026u;
#ifdef __thumb__
    __asm volatile("svc 0xab" : : "r"(r0), "r"(r1) : "memory");
#else
    __asm volatile("svc 0x123456" : : "r"(r0), "r"(r1) : "memory");
#endif
    for (;;)
        ;
}
#endif

__attribute__((noinline)) void truth_begin(void)
{
    __asm volatile("");
}

__attribute__((noinline)) void truth_end(void)
{
    __asm volatile("");
}
