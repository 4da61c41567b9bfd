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
#if BOARD_SEMIHOST_OUT
/* The text a line at a time through semihosting (SYS_WRITE to ":tt", QEMU's standard output), for
 * the runs of scen.py: QEMU's STM32 USART costs the host two wake-ups of its main loop a byte (about
 * 10 us: a dump of 100,000 samples took more host time than the samples), a line here one trap. */
#define OUT_LINE 128u
static char out_line[OUT_LINE];
static uint32_t out_len;
static int32_t out_handle = -1;

static int32_t semihost(uint32_t op, const void *args)
{
    register uint32_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = args;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (int32_t)r0;
}

static void board_flush(void)
{
    if (out_handle < 0) {
        static const char tt[] = ":tt";
        const uint32_t open_args[3] = {(uint32_t)(uintptr_t)tt, 4u /* "w" */, sizeof tt - 1u};
        out_handle = semihost(0x01u /* SYS_OPEN */, open_args);
    }
    const uint32_t write_args[3] = {(uint32_t)out_handle, (uint32_t)(uintptr_t)out_line, out_len};
    (void)semihost(0x05u /* SYS_WRITE */, write_args);
    out_len = 0;
}

void board_putc(char c)
{
    out_line[out_len++] = c;
    if (c == '\n' || out_len == OUT_LINE)
        board_flush();
}
#else
static void board_flush(void)
{
}
#endif

void board_exit(int failed)
{
    board_flush();
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
