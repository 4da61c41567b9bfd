/* The tick's names under CMPROF_TAG_NAMES (the sampler reads a task's name from the block its tag
 * points at): the kernel's idle task is named CMPROF_IDLE_NAME whatever other task the kernel
 * created or renamed since. */
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_tasks.h"
#include "check.h"
#include "fake_regs.h"

#include <string.h>

void *volatile test_tag;

struct block { /* a stand-in control block: the name inside it, as FreeRTOS's TCB has */
    uint32_t stack_top, priority;
    char name[16];
};

static const char *name_of_miss(struct block *b)
{
    uint32_t word = cmprof_tasks_miss(b);
    return (word & 0xFFFFu) == CMPROF_TASKS_WORD_NONE ? NULL : cmprof_tasks.names[word & 0xFFFFu];
}

/* A rename (cmprof_stream_task_later) after the idle task's creation: idle's first sample still
 * goes out as idle, not under the kernel's own name ("IDLE": a task of that name on the host). */
static void test_idle_stays_idle_after_a_rename(void)
{
    static struct block idle = {0, 0, "IDLE"}, worker = {0, 1, "worker"};
    cmprof_stream_task_new(&idle, idle.name, "IDLE");
    cmprof_stream_task_new(&worker, worker.name, "IDLE");
    strcpy(worker.name, "worker2");
    cmprof_stream_task_later(&worker, worker.name);
    const char *idle_name = name_of_miss(&idle), *worker_name = name_of_miss(&worker);
    CHECK(idle_name && strcmp(idle_name, CMPROF_IDLE_NAME) == 0);
    CHECK(worker_name && strcmp(worker_name, "worker2") == 0);
}

int main(void)
{
    RUN_TEST(test_idle_stays_idle_after_a_rename);
    return check_summary();
}
