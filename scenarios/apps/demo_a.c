/* The Cortex-A demo (make demo TARGET=cortex-a15): the sampler on the PMU's cycle counter
 * (CMPROF_PORT_PMU, its overflow through the GIC), streaming live over the PL011 of QEMU's virt
 * board, while a control loop (section 0) and a CRC over a frame (section 1) run in turn, timed
 * on a PMU event counter counting cycles. With -icount shift=0 the core runs one instruction per nanosecond: 1 GHz.
 * The Cortex-R5 demo (TARGET=cortex-r5, BOARD_r5: vexpress-a15) is the same program sampled by the
 * board's SP804 (CMPROF_PORT_SP804), as QEMU wires no PMU interrupt there. */
#include "cmprof.h"
#include "cmprof_pmu.h"

#include <stddef.h>

#ifdef BOARD_r5
#include "board_r5.h"
#define CODE_BASE 0x2E000000u
#define TIMER_HZ BOARD_R5_SP804_HZ
#define BOOT_LINE "boot: cmprof Cortex-R5 demo (SP804 timer sampling)\n"
#ifndef PERIOD
#define PERIOD 20u /* 1 MHz ticks between samples (20,000 cycles), plus up to CMPROF_JITTER more */
#endif
#else
#include "board_virt.h"
#define CODE_BASE 0x40000000u
#define TIMER_HZ CLOCK_HZ
#define BOOT_LINE "boot: cmprof Cortex-A demo (PMU cycle counter sampling)\n"
#ifndef PERIOD
#define PERIOD 20000u /* cycles between samples, plus up to CMPROF_JITTER more: about 48,000/s */
#endif
#endif
#define CLOCK_HZ 1000000000u

static uint8_t frame[256];
static volatile int32_t output;

__attribute__((noinline)) static int32_t filter(int32_t x)
{
    static int32_t y;
    y += (x - y) >> 3;
    return y;
}

__attribute__((noinline)) static int32_t control(int32_t target)
{
    int32_t acc = 0;
    for (int32_t k = 0; k < 400; k++) /* a PI loop over a window */
        acc += filter(target - (acc >> 4)) * 3 + (acc >> 5);
    return acc;
}

__attribute__((noinline)) static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static void announce(void)
{
    const struct cmprof_stream_info info = {.clock_hz = CLOCK_HZ, .timer_hz = TIMER_HZ, .period = PERIOD,
                                            .jitter = CMPROF_JITTER, .code_base = CODE_BASE,
                                            .section_hz = CLOCK_HZ, .build_id_note = cmprof_build_id_note};
    cmprof_stream_announce(board_putc, &info);
    cmprof_stream_section_name(board_putc, 0, "control");
    cmprof_stream_section_name(board_putc, 1, "crc_frame");
}

int main(void)
{
    board_puts(BOOT_LINE);
    cmprof_sections_init(NULL); /* the PMU's last event counter counts the cycles */
    static const uint32_t events[] = {CMPROF_PMU_INST_RETIRED}; /* and counter 0 the instructions: IPC */
    cmprof_sections_events(events, 1u);
    announce();
    board_gic_pmu();
    cmprof_start(PERIOD, 0u);
    __asm volatile("cpsie i" ::: "memory");
    for (uint32_t round = 0;; round++) {
        cmprof_section_start(0);
        output = control((int32_t)(round & 1023u));
        cmprof_section_stop(0);
        frame[round & 255u] = (uint8_t)output;
        cmprof_section_start(1);
        output ^= (int32_t)crc32(frame, sizeof frame);
        cmprof_section_stop(1);
        cmprof_stream_drain(board_putc, 8);
        if ((round & 63u) == 0u)
            cmprof_stream_sections(board_putc);
        if ((round & 4095u) == 0u) /* a host that attaches late learns the clocks and the section names */
            announce();
    }
}
