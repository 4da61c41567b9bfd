/* One FreeRTOS task for tests/test_task_roots.py: the port starts it with LR = prvTaskExitError.
 * The ELF is only read (symbols, call-frame information), never run. */
#include "FreeRTOS.h"
#include "task.h"

volatile unsigned sink;

__attribute__((noinline)) unsigned step(unsigned n)
{
    sink += n;
    return n * 3u + 1u;
}

static void worker(void *arg)
{
    unsigned n = (unsigned)arg;
    for (;;)
        n = step(n);
}

int main(void)
{
    xTaskCreate(worker, "worker", 128, NULL, 1, NULL);
    vTaskStartScheduler();
    for (;;) {
    }
}

void Reset_Handler(void)
{
    main();
}
