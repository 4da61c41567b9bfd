/* bench/field/field.c: the harness's side of the field measurement (bench/field/measure.py) on
 * FreeRTOS's full demo for MPS2 AN385. Linked with the demo, which calls field_start() from its
 * daemon task's start-up hook and field_idle() from its idle hook (measure.py adds the calls).
 *
 * The recipe's part (README.md, FreeRTOS): the stream announced and drained from the idle hook,
 * written whole through .write between vTaskSuspendAll() and xTaskResumeAll() (the demo's printf
 * writes through it too), sampling started once the scheduler runs.
 *
 * The churn: a manager task of priority 7 keeps FIELD_WORKERS workers alive, deleting the oldest
 * and creating a new one in its place every FIELD_CHURN_TICKS ticks (0: no workers, the demo
 * alone), named by their place (w00..w99) or each with a name of its own (u000000, u000001...:
 * FIELD_UNIQUE=1). A worker runs about 1,200 instructions every 10 ticks. After FIELD_RUN_TICKS
 * ticks the manager closes the truth's window, stops sampling, has the idle hook flush the
 * stream, prints one "tid ID NAME" line per task and ends QEMU through semihosting.
 *
 * The truth (scenarios/truth/truth.c): one 4-byte marker stub per task id (the kernel's
 * uxTCBNumber) that the switch hook calls, one per wrapped handler and a leave stub, and the
 * window's begin and end. */
#include "FreeRTOS.h"
#include "task.h"

#include "cmprof.h"

#include <stdint.h>

#ifndef FIELD_WORKERS
#define FIELD_WORKERS 100u
#endif
#ifndef FIELD_CHURN_TICKS
#define FIELD_CHURN_TICKS 0u /* 0: no churn, no workers */
#endif
#ifndef FIELD_UNIQUE
#define FIELD_UNIQUE 0
#endif
#ifndef FIELD_RUN_TICKS
#define FIELD_RUN_TICKS 6500u
#endif
#ifndef FIELD_PERIOD
#define FIELD_PERIOD 8192u /* plus 0..CMPROF_JITTER at 25 MHz: about 2,030 samples a second */
#endif
#ifndef FIELD_WORK
#define FIELD_WORK 300u /* loops of 4 instructions */
#endif
#define FIELD_MAX_IDS 16384u /* the truth plugin's CTX_MAX */
#define FIELD_MANAGER_PRIORITY 7u
#define FIELD_WORKER_PRIORITY 1u
#define FIELD_NAME_LEN configMAX_TASK_NAME_LEN

void *volatile cmprof_current_task; /* the recipe's one definition */

/* ---- the truth's markers ------------------------------------------------------------------------ */
#define FIELD_STR_(x) #x
#define FIELD_STR(x) FIELD_STR_(x)
__asm__(".pushsection .text.field_truth_marks,\"ax\",%progbits\n"
        ".syntax unified\n.thumb\n.balign 4\n"
        ".global field_task_marks\n.type field_task_marks, %function\n.thumb_func\n"
        "field_task_marks:\n"
        ".rept " FIELD_STR(FIELD_MAX_IDS) "\n nop\n bx lr\n.endr\n"
        ".size field_task_marks, . - field_task_marks\n"
        ".global field_isr_marks\n.type field_isr_marks, %function\n.thumb_func\n"
        "field_isr_marks:\n"
        ".global field_isr_pendsv\n.thumb_func\nfield_isr_pendsv: nop\n bx lr\n"
        ".global field_isr_systick\n.thumb_func\nfield_isr_systick: nop\n bx lr\n"
        ".global field_isr_timer0\n.thumb_func\nfield_isr_timer0: nop\n bx lr\n"
        ".global field_isr_timer1\n.thumb_func\nfield_isr_timer1: nop\n bx lr\n"
        ".size field_isr_marks, . - field_isr_marks\n"
        ".global field_isr_leave\n.type field_isr_leave, %function\n.thumb_func\n"
        "field_isr_leave: nop\n bx lr\n.size field_isr_leave, . - field_isr_leave\n"
        ".popsection\n");
extern const uint16_t field_task_marks[];

__attribute__((noinline)) void field_truth_begin(void)
{
    __asm volatile("nop");
}

__attribute__((noinline)) void field_truth_end(void)
{
    __asm volatile("nop");
}

static char field_names[FIELD_MAX_IDS][FIELD_NAME_LEN];
static volatile uint32_t field_max_id, field_bad_ids;

void field_truth_task_in(unsigned long id)
{
    if (id >= FIELD_MAX_IDS) {
        field_bad_ids++;
        id = 0;
    }
    ((void (*)(void))((uintptr_t)field_task_marks + 4u * id + 1u))();
}

void field_truth_created(unsigned long id, const char *name)
{
    if (id >= FIELD_MAX_IDS) {
        field_bad_ids++;
        return;
    }
    for (uint32_t k = 0; k < FIELD_NAME_LEN && name[k]; k++)
        field_names[id][k] = name[k];
    field_max_id = id > field_max_id ? id : field_max_id;
}

/* Each wrapped handler: its entry marker, the handler as a function, the leave marker, the
 * exception return (the port's PendSV handler returns through LR like a function). */
#define FIELD_WRAP(vector, marker, handler)                                                                  \
    __attribute__((naked)) void vector(void)                                                                 \
    {                                                                                                        \
        __asm volatile("push {r0, lr}\n"                                                                     \
                       "bl " #marker "\n"                                                                    \
                       "bl " #handler "\n"                                                                   \
                       "bl field_isr_leave\n"                                                                \
                       "pop {r0, pc}\n");                                                                    \
    }

void xPortPendSVHandler(void);
void xPortSysTickHandler(void);
void TIMER0_Handler(void);
void TIMER1_Handler(void);
void PendSV_Handler(void);
void SysTick_Handler(void);
void field_TIMER0_Handler(void);
void field_TIMER1_Handler(void);
FIELD_WRAP(PendSV_Handler, field_isr_pendsv, xPortPendSVHandler)
FIELD_WRAP(SysTick_Handler, field_isr_systick, xPortSysTickHandler)
FIELD_WRAP(field_TIMER0_Handler, field_isr_timer0, TIMER0_Handler)
FIELD_WRAP(field_TIMER1_Handler, field_isr_timer1, TIMER1_Handler)

/* ---- the UART: whole lines ---------------------------------------------------------------------- */
#define FIELD_UART_DATA (*(volatile uint32_t *)0x40004000u)
#define FIELD_UART_STATE (*(volatile uint32_t *)0x40004004u)

void field_write(const char *buf, uint32_t len)
{
    int locked = xTaskGetSchedulerState() == taskSCHEDULER_RUNNING;
    if (locked)
        vTaskSuspendAll();
    for (uint32_t i = 0; i < len; i++) {
        while (FIELD_UART_STATE & 1u) {
        }
        FIELD_UART_DATA = (uint8_t)buf[i];
    }
    if (locked)
        (void)xTaskResumeAll();
}

static const struct cmprof_stream_info field_info = {
    .clock_hz = 25000000u,
    .timer_hz = 25000000u, /* the dual timer counts the 25 MHz clock */
    .period = FIELD_PERIOD,
    .jitter = CMPROF_JITTER,
    .build_id_note = cmprof_build_id_note,
    .write = field_write,
};

static volatile uint32_t field_flush_asked, field_flushed;

void field_idle(void)
{
    static uint32_t announced;
    if (!announced) {
        announced = 1u;
        cmprof_stream_announce(NULL, &field_info);
    }
    (void)cmprof_stream_drain(NULL, 4u);
    if (field_flush_asked && !field_flushed) {
        cmprof_stream_flush(NULL);
        field_flushed = 1u;
    }
}

/* ---- the churn ---------------------------------------------------------------------------------- */
/* v in decimal, `digits` digits, at s; returns the end */
static char *field_digits(char *s, uint32_t v, uint32_t digits)
{
    for (uint32_t k = digits; k--; v /= 10u)
        s[k] = (char)('0' + v % 10u);
    return s + digits;
}

#if FIELD_CHURN_TICKS
__attribute__((noinline)) void field_work(uint32_t loops)
{
    for (uint32_t i = 0; i < loops; i++)
        __asm volatile("nop");
}

static void field_worker(void *arg)
{
    (void)arg;
    for (;;) {
        field_work(FIELD_WORK);
        vTaskDelay(10u);
    }
}

static TaskHandle_t field_make_worker(uint32_t slot, uint32_t serial)
{
    char name[FIELD_NAME_LEN] = {0};
    name[0] = FIELD_UNIQUE ? 'u' : 'w';
    if (FIELD_UNIQUE)
        (void)field_digits(name + 1, serial, 6u);
    else
        (void)field_digits(name + 1, slot, 2u);
    TaskHandle_t h = NULL;
    if (xTaskCreate(field_worker, name, configMINIMAL_STACK_SIZE, NULL, FIELD_WORKER_PRIORITY, &h) != pdPASS)
        field_write("field: worker creation failed\n", 30u);
    return h;
}
#endif

static TickType_t field_start_tick;

static void field_churn(void)
{
#if FIELD_CHURN_TICKS
    static TaskHandle_t pool[FIELD_WORKERS];
    uint32_t serial = 0;
    for (; serial < FIELD_WORKERS; serial++)
        pool[serial] = field_make_worker(serial, serial);
    TickType_t last = xTaskGetTickCount();
    while (xTaskGetTickCount() - field_start_tick < FIELD_RUN_TICKS) {
        vTaskDelayUntil(&last, FIELD_CHURN_TICKS);
        uint32_t slot = serial % FIELD_WORKERS;
        if (pool[slot])
            vTaskDelete(pool[slot]);
        pool[slot] = field_make_worker(slot, serial++);
    }
#else
    TickType_t last = field_start_tick;
    vTaskDelayUntil(&last, FIELD_RUN_TICKS);
#endif
}

static void field_exit(void)
{
    register uint32_t r0 __asm__("r0") = 0x18u;    /* SYS_EXIT */
    register uint32_t r1 __asm__("r1") = 0x20026u; /* ADP_Stopped_ApplicationExit */
    __asm volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}

static void field_print_tids(void)
{
    char line[40];
    for (uint32_t id = 1; id <= field_max_id; id++) {
        if (!field_names[id][0])
            continue;
        char *s = line;
        for (const char *t = "tid "; *t;)
            *s++ = *t++;
        s = field_digits(s, id, 5u);
        *s++ = ' ';
        for (uint32_t k = 0; k < FIELD_NAME_LEN && field_names[id][k]; k++)
            *s++ = field_names[id][k];
        *s++ = '\n';
        field_write(line, (uint32_t)(s - line));
    }
    char end[] = "field end bad_ids=00000\n";
    (void)field_digits(end + 18, field_bad_ids, 5u);
    field_write(end, sizeof end - 1u);
}

static void field_manager(void *arg)
{
    (void)arg;
    field_churn();
    field_truth_end();
    cmprof_stop();
    vTaskDelay(50u); /* the idle hook drains what is left */
    field_flush_asked = 1u;
    while (!field_flushed)
        vTaskDelay(1u);
    field_print_tids();
    field_exit();
}

void field_start(void)
{
    TaskStatus_t me;
    vTaskGetInfo(NULL, &me, pdFALSE, eRunning);
    field_truth_task_in(me.xTaskNumber); /* the task that runs as the window opens */
    field_start_tick = xTaskGetTickCount();
    field_truth_begin();
    cmprof_start(FIELD_PERIOD, 0u);
    /* the manager (priority 7) runs at once */
    if (xTaskCreate(field_manager, "field", configMINIMAL_STACK_SIZE * 2u, NULL, FIELD_MANAGER_PRIORITY, NULL) !=
        pdPASS)
        field_write("field: manager creation failed\n", 31u);
}
