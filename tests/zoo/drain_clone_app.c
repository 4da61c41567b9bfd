/* The application beside tests/zoo/cmprof_drain_clone.c: a worker, an idle loop and a main loop
 * that call the drain (tests/test_idle_overhead.py samples them with a synthetic stream). */
#include <stdint.h>

uint32_t drain_from_idle(void);
uint32_t drain_from_loop(void);

volatile uint32_t app_sink;

__attribute__((noinline)) void app_work(void)
{
    for (uint32_t i = 0; i < 64u; i++)
        app_sink = app_sink * 33u + i;
}

__attribute__((noinline)) void idle_loop(void)
{
    app_sink += drain_from_idle();
}

void Reset_Handler(void)
{
    for (;;) {
        app_work();
        app_sink += drain_from_loop();
        idle_loop();
    }
}
