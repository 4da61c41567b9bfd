/* The demo firmware: a small motor-controller application, profiled live over its UART.
 *   task "motor": a control loop (PI controller and a fixed-point low-pass filter), timed as
 *                 section 0, a telemetry formatter, and a copy of its log each period (memcpy);
 *   task "link":  frames a buffer with a CRC-32, timed as section 1, takes its received bytes out of
 *                 the receive buffer each turn (memcpy), and drains the profile stream;
 *   EXTI0:        a "sensor" interrupt raised every control period, which averages samples.
 * Sampling: SysTick with jitter, streamed (CMPROF_STREAM=1, CMPROF_TAG=current_task).
 * NO_CMPROF=1: the same application with no cmprof code at all, for sampling through a GDB server. */
#include "board.h"
#include "cmprof.h"
#include "sched.h"

#include <string.h>

#if NO_CMPROF
#define cmprof_section_start(i) ((void)(i))
#define cmprof_section_stop(i) ((void)(i))
#define cmprof_stream_drain(putc, lines) ((void)(putc), (void)(lines))
#define cmprof_stream_sections(putc) ((void)(putc))
#define cmprof_sections_init(clock) ((void)(clock))
#define cmprof_start(period, limit) ((void)(period), (void)(limit))
#endif

#ifndef PERIOD
#define PERIOD 4096u /* SysTick ticks at 168 MHz, plus up to CMPROF_JITTER more */
#endif

extern const uint32_t __build_id[];

/* the tasks' names, given to the scheduler and to the stream's announce (the boot announce goes out
 * before the scheduler has named its tasks) */
static const char *const task_name[SCHED_TASKS] = {"motor", "link"};

static volatile int32_t sensor_acc, sensor_value;
static uint8_t frame[64];
/* the motor's log of its last 8 periods, and the link's receive buffer: each task copies one out
 * (memcpy) every turn; the copies are global so that the compiler keeps them */
struct motor_entry {
    int32_t speed, drive, target, measured;
};
static struct motor_entry motor_log[8];
struct motor_entry motor_log_out[8];
static uint8_t rx_buffer[128];
uint8_t rx_bytes[128];
static char telemetry[64];

/* ---- motor task -------------------------------------------------------------------------- */

struct pi {
    int32_t kp, ki, integral, limit;
};

__attribute__((noinline)) static int32_t pi_step(struct pi *c, int32_t error)
{
    c->integral += error;
    if (c->integral > c->limit)
        c->integral = c->limit;
    if (c->integral < -c->limit)
        c->integral = -c->limit;
    return (c->kp * error + c->ki * c->integral) >> 8;
}

/* 8th-order low-pass as eight cascaded first-order stages, Q15. */
__attribute__((noinline)) static int32_t lowpass(int32_t x)
{
    static int32_t s[8];
    for (int k = 0; k < 8; k++) {
        s[k] += ((x - s[k]) * 3277) >> 15;
        x = s[k];
    }
    return x;
}

/* Unsigned to decimal, right to left; returns the length. */
__attribute__((noinline)) static int format_u32(char *out, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

__attribute__((noinline)) static void format_telemetry(int32_t speed, int32_t current)
{
    int n = 0;
    telemetry[n++] = 's';
    n += format_u32(telemetry + n, (uint32_t)(speed < 0 ? -speed : speed));
    telemetry[n++] = ' ';
    telemetry[n++] = 'i';
    n += format_u32(telemetry + n, (uint32_t)(current < 0 ? -current : current));
    telemetry[n] = '\0';
}

static void task_motor(void)
{
    struct pi speed_loop = {.kp = 300, .ki = 12, .limit = 1 << 20};
    int32_t speed = 0, target = 3000;
    for (uint32_t k = 0;; k++) {
        BOARD_REG(BOARD_NVIC_ISPR0) = 1u << BOARD_EXTI0_IRQ; /* the sensor conversion is done */
        cmprof_section_start(0);
        int32_t measured = lowpass(speed + sensor_value);
        int32_t drive = pi_step(&speed_loop, target - measured);
        speed += (drive - speed) >> 4;
        cmprof_section_stop(0);
        motor_log[k % 8u] = (struct motor_entry){speed, drive, target, measured};
        memcpy(motor_log_out, motor_log, sizeof motor_log);
        if (k % 16u == 0u)
            format_telemetry(speed, drive);
        if (k % 512u == 0u)
            target = target == 3000 ? 1500 : 3000;
        sched_yield();
    }
}

/* ---- link task --------------------------------------------------------------------------- */

__attribute__((noinline)) static uint32_t crc32(const uint8_t *p, uint32_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    while (n--) {
        crc ^= *p++;
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1u));
    }
    return ~crc;
}

static void link_send_frame(uint32_t seq)
{
    for (uint32_t i = 0; i < sizeof frame - 4; i++)
        frame[i] = (uint8_t)(seq + i * 7u);
    uint32_t crc = crc32(frame, sizeof frame - 4);
    frame[sizeof frame - 4] = (uint8_t)crc;
}

static void announce(void)
{
#if !NO_CMPROF
    const struct cmprof_stream_info info = {.clock_hz = 168000000u, .timer_hz = 168000000u, .period = PERIOD,
                                            .jitter = CMPROF_JITTER, .code_base = 0x08000000u,
                                            .section_hz = 1000000000u, .build_id_note = __build_id};
    cmprof_stream_announce(board_putc, &info);
    for (int i = 0; i < SCHED_TASKS; i++)
        cmprof_stream_task(board_putc, &sched_task[i], task_name[i]);
    cmprof_stream_section_name(board_putc, 0, "control");
    cmprof_stream_section_name(board_putc, 1, "crc_frame");
#endif
}

static void task_link(void)
{
    for (uint32_t seq = 0;; seq++) {
        if (seq % 8u == 0u) { /* a frame every 8th turn; the rest of the time the link idles */
            cmprof_section_start(1);
            link_send_frame(seq);
            cmprof_section_stop(1);
        }
        rx_buffer[seq % sizeof rx_buffer] = (uint8_t)seq;
        memcpy(rx_bytes, rx_buffer, sizeof rx_buffer);
        cmprof_stream_drain(board_putc, 4);
        if (seq % 64u == 0u)
            cmprof_stream_sections(board_putc);
        if (seq % 4096u == 0u) {
            announce();
            board_puts("demo: ");
            board_puts(telemetry);
            board_putc('\n');
        }
        sched_yield();
    }
}

/* ---- the sensor interrupt ---------------------------------------------------------------- */

void EXTI0_IRQHandler(void)
{
    int32_t acc = 0;
    for (int i = 0; i < 32; i++)
        acc += (int32_t)((board_clock() >> 3) & 0xFF) - 128; /* noise */
    sensor_acc += acc;
    sensor_value = sensor_acc >> 6;
}

int main(void)
{
    static void (*const entry[SCHED_TASKS])(void) = {task_motor, task_link};
    board_init();
    board_puts("demo: motor controller, cmprof live stream\n");
    cmprof_sections_init(board_clock); /* QEMU has no DWT cycle counter: TIM2 at 1 GHz */
    BOARD_NVIC_IPR_BYTE(BOARD_EXTI0_IRQ) = 0x40u; /* less urgent than sampling */
    BOARD_REG(BOARD_NVIC_ISER0) = 1u << BOARD_EXTI0_IRQ;
    announce();
    cmprof_start(PERIOD, 0u);
    sched_start(entry, task_name, 200000u);
}
