/* Issue 30: the real FreeRTOS kernel (V11.3.0, ../shared/third_party/FreeRTOS-Kernel, never copied
 * here) at field scale on QEMU mps2-an385, profiled with cmprof's FreeRTOS recipe as a user applies
 * it: rtos/cmprof_freertos.h at the end of FreeRTOSConfig.h, the CMSDK dual timer port, tags =
 * cmprof_current_task, the stream drained from the idle hook, the build-id snippet at link time.
 *
 * The application: 102 tasks that live for the whole run at four priorities, and short-lived tasks
 * created and deleted all along (some delete themselves, the spawner deletes the others):
 *   crunchNN  (priority 0, with the idle task, time-sliced) busy work, a mutex around shared data
 *   sensNN    (1) work, a queue send, now and then GPIO0's interrupt, a delay
 *   filtN     (2) queue receive, work, a semaphore give every fourth item
 *   alarmN    (3) semaphore take (given by the filters and both interrupts), work, a log line
 *   spawner   (2) starts the sampler, creates and deletes the cNNN tasks, ends the run
 * Interrupts besides the sampler: CMSDK TIMER1 every 2 ms and GPIO0 pended by the sensors, both
 * giving the semaphore from the interrupt; SysTick and PendSV are the kernel's. Log lines go out
 * on UART0 with the stream, a whole line at a time (the stream's lines through the same lock).
 *
 * Truth (not part of the recipe): each task's uxTaskNumber is its id; after every switch the
 * kernel's traceRETURN_vTaskSwitchContext calls the id's marker stub, and each handler runs
 * between a marker of its own and the leave marker, so the QEMU plugin knows who ran every
 * instruction. At the end: one "tid ID NAME TCB" line per task id, then the run's counts. Built
 * without CMPROF_STREAM: dump mode, one cmprof_dump() at the end, names included. */
#include "FreeRTOS.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"

#include "board.h"
#include "cmprof.h"
#include "work.h"

#include <stdarg.h>

#ifndef PERIOD
#define PERIOD 500u /* dual timer ticks at 25 MHz (40 instructions each), plus jitter */
#endif
#ifndef CMPROF_RING_N
#define CMPROF_RING_N 1024u /* the sampler's default */
#endif
#ifndef RUN_TICKS
#define RUN_TICKS 4000u
#endif
#define N_CRUNCH 20u
#define N_SENS 72u
#define N_FILT 8u
#define N_ALARM 8u
#define ID_CRUNCH 1u
#define ID_SENS (ID_CRUNCH + N_CRUNCH)
#define ID_FILT (ID_SENS + N_SENS)
#define ID_ALARM (ID_FILT + N_FILT)
#define ID_SPAWNER (ID_ALARM + N_ALARM)
#define ID_CHURN (ID_SPAWNER + 1u)
#ifndef MAX_IDS
#define MAX_IDS 1024u /* the truth plugin's limit is 16384 (CTX_MAX) */
#endif
#ifndef SPAWN_TICKS
#define SPAWN_TICKS 6u /* ticks between two creations (the churn measurement sets 1) */
#endif
/* CHURN_POOL=N: the churn is a pool of N workers, the oldest deleted and a new one created every
 * SPAWN_TICKS ticks, each running CHURN_WORK nops then a 2-tick delay until deleted; named wNN by
 * its place in the pool (CHURN_UNIQUE=0: N distinct names, re-created) or cNNNN (1: every one new). */
#ifndef CHURN_POOL
#define CHURN_POOL 0u
#endif
#define POOL_N (CHURN_POOL ? CHURN_POOL : 1u)
#ifndef CHURN_WORK
#define CHURN_WORK 100u
#endif
#ifndef CHURN_MAX
#define CHURN_MAX (MAX_IDS - ID_CHURN) /* workers created in all (the pool's size: no churn once it is full) */
#endif
#ifndef CHURN_UNIQUE
#define CHURN_UNIQUE 1
#endif
#define TIMER1_BASE 0x40001000u
#define TIMER1_IRQ 9u
#define GPIO0_IRQ 6u
#define STACK_WORDS 160u

void *volatile cmprof_current_task; /* the recipe's step 2 */

/* ---- truth markers: 4-byte stubs, one per task id and one per handler ------------------------ */
#define STR_(x) #x
#define STR(x) STR_(x)
__asm__(".pushsection .text.truth_marks,\"ax\",%progbits\n"
        ".syntax unified\n.thumb\n.balign 4\n"
        ".global truth_task_marks\n.type truth_task_marks, %function\n.thumb_func\n"
        "truth_task_marks:\n"
        ".rept " STR(MAX_IDS) "\n nop\n bx lr\n.endr\n"
        ".size truth_task_marks, . - truth_task_marks\n"
        ".global truth_isr_marks\n.type truth_isr_marks, %function\n.thumb_func\n"
        "truth_isr_marks:\n"
        ".global truth_isr_pendsv\n.thumb_func\ntruth_isr_pendsv: nop\n bx lr\n"
        ".global truth_isr_systick\n.thumb_func\ntruth_isr_systick: nop\n bx lr\n"
        ".global truth_isr_timer1\n.thumb_func\ntruth_isr_timer1: nop\n bx lr\n"
        ".global truth_isr_gpio0\n.thumb_func\ntruth_isr_gpio0: nop\n bx lr\n"
        ".size truth_isr_marks, . - truth_isr_marks\n"
        ".global truth_isr_leave\n.type truth_isr_leave, %function\n.thumb_func\n"
        "truth_isr_leave: nop\n bx lr\n.size truth_isr_leave, . - truth_isr_leave\n"
        ".popsection\n");
extern const uint16_t truth_task_marks[];
static volatile uint32_t bad_ids;

void truth_task_in(uint32_t id)
{
    if (id >= MAX_IDS) {
        bad_ids++;
        id = 0;
    }
    ((void (*)(void))((uintptr_t)truth_task_marks + 4u * id + 1u))();
}

/* Each handler: its entry marker, the handler as a function, the leave marker, the exception
 * return. The kernel's PendSV handler returns through LR like a function (bx r14). */
#define WRAP_HANDLER(vector, marker, handler)                                                                \
    __attribute__((naked)) void vector(void)                                                                 \
    {                                                                                                        \
        __asm volatile("push {r0, lr}\n"                                                                     \
                       "bl " #marker "\n"                                                                    \
                       "bl " #handler "\n"                                                                   \
                       "bl truth_isr_leave\n"                                                                \
                       "pop {r0, pc}\n");                                                                    \
    }

void xPortPendSVHandler(void);
void xPortSysTickHandler(void);
void vPortSVCHandler(void);
void timer1_isr(void);
void gpio0_isr(void);
#if defined(FRTOS_DIRECT) && defined(__ARM_ARCH_6M__)
/* V11's ARM_CM0 port names its handlers SVC_Handler, PendSV_Handler and SysTick_Handler itself */
#elif defined(FRTOS_DIRECT)
/* The ARM_CM4F port's PendSV handler reads EXC_RETURN from LR (FPU frames): straight to the
 * kernel's handlers, no truth (the M0 and M4F builds are built, not run). */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm volatile("b xPortPendSVHandler\n");
}

__attribute__((naked)) void SysTick_Handler(void)
{
    __asm volatile("b xPortSysTickHandler\n");
}
#else
WRAP_HANDLER(PendSV_Handler, truth_isr_pendsv, xPortPendSVHandler)
WRAP_HANDLER(SysTick_Handler, truth_isr_systick, xPortSysTickHandler)
#endif
WRAP_HANDLER(TIMER1_Handler, truth_isr_timer1, timer1_isr)
WRAP_HANDLER(GPIO0_IRQHandler, truth_isr_gpio0, gpio0_isr)

#if !(defined(FRTOS_DIRECT) && defined(__ARM_ARCH_6M__))
/* SVC starts the first task and never returns: the kernel's handler, directly. */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm volatile("b vPortSVCHandler\n");
}
#endif

/* ---- work --------------------------------------------------------------------------------------- */
NOP_LOOP(__attribute__((noinline)), crunch_fft)
NOP_LOOP(__attribute__((noinline)), crunch_crc)
NOP_LOOP(__attribute__((noinline)), shared_update)
NOP_LOOP(__attribute__((noinline)), sense_read)
NOP_LOOP(__attribute__((noinline)), filter_step)
NOP_LOOP(__attribute__((noinline)), alarm_eval)
NOP_LOOP(__attribute__((noinline)), churn_job)
NOP_LOOP(__attribute__((noinline)), tick_isr_work)
NOP_LOOP(__attribute__((noinline)), gpio_isr_work)

static QueueHandle_t readings;
static SemaphoreHandle_t alarms, shared_lock;
static volatile uint32_t timer1_irqs, gpio0_irqs, log_lines, created, deleted, self_deleted, finish;
static volatile uint32_t max_alive, overflows, next_churn;
static char churn_names[MAX_IDS - ID_CHURN][6];
static uint32_t tcb_of[MAX_IDS]; /* each task id's control block: dump mode names blocks, not tasks */

/* ---- the UART, shared by the log and the stream: whole lines, never interleaved ---------------- */
static void uart_line(const char *buf, uint32_t len)
{
    vTaskSuspendAll();
    for (uint32_t i = 0; i < len; i++)
        board_putc(buf[i]);
    (void)xTaskResumeAll();
}

/* v in decimal at b[n], at least `width` digits; returns the new length (at most 80) */
static uint32_t log_dec(char *b, uint32_t n, uint32_t v, unsigned width)
{
    uint32_t digits = 1;
    for (uint32_t t = v; t >= 10u; t /= 10u)
        digits++;
    digits = digits < width ? width : digits;
    if (n + digits > 80u)
        return n;
    for (uint32_t k = digits; k--; v /= 10u)
        b[n + k] = (char)('0' + v % 10u);
    return n + digits;
}

/* printf for %s and %u, one line written whole */
static void log_printf(const char *fmt, ...)
{
    char line[80];
    uint32_t n = 0;
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p && n < sizeof line; p++) {
        const char *text = NULL;
        if (p[0] == '%' && p[1] == 'u')
            n = log_dec(line, n, va_arg(ap, uint32_t), 0);
        else if (p[0] == '%' && p[1] == 's')
            text = va_arg(ap, const char *);
        else
            line[n++] = *p;
        p += p[0] == '%' && (p[1] == 'u' || p[1] == 's');
        while (text && *text && n < sizeof line)
            line[n++] = *text++;
    }
    va_end(ap);
    uart_line(line, n);
    log_lines++;
}

/* ---- interrupts ------------------------------------------------------------------------------- */
void timer1_isr(void)
{
    BOARD_REG(TIMER1_BASE + 0xCu) = 1u; /* INTCLEAR */
    timer1_irqs++;
    tick_isr_work(40);
    BaseType_t woken = pdFALSE;
    xSemaphoreGiveFromISR(alarms, &woken);
    portYIELD_FROM_ISR(woken);
}

void gpio0_isr(void)
{
    gpio0_irqs++;
    gpio_isr_work(30);
    BaseType_t woken = pdFALSE;
    xSemaphoreGiveFromISR(alarms, &woken);
    portYIELD_FROM_ISR(woken);
}

/* ---- tasks ------------------------------------------------------------------------------------ */
static void crunch(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    for (uint32_t k = 0;; k++) {
        if (id % 2u)
            crunch_fft(150u + 10u * (id % 5u));
        else
            crunch_crc(120u + 15u * (id % 4u));
        if (k % 4u == 0u) {
            xSemaphoreTake(shared_lock, portMAX_DELAY);
            shared_update(40);
            xSemaphoreGive(shared_lock);
        }
    }
}

static void sensor(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    for (uint32_t k = 0;; k++) {
        sense_read(60u + 5u * (id % 9u));
        xQueueSend(readings, &id, portMAX_DELAY);
        if (k % 8u == (id % 8u))
            BOARD_REG(BOARD_NVIC_ISPR0) = 1u << GPIO0_IRQ;
        vTaskDelay(8u + id % 11u);
    }
}

static void filter(void *arg)
{
    (void)arg;
    uint32_t v;
    for (uint32_t k = 0;; k++) {
        xQueueReceive(readings, &v, portMAX_DELAY);
        filter_step(50u + v % 13u);
        if (k % 4u == 3u)
            xSemaphoreGive(alarms);
    }
}

static void alarm(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    for (uint32_t k = 0;; k++) {
        xSemaphoreTake(alarms, portMAX_DELAY);
        alarm_eval(70u + 9u * (id % 3u));
        if (k % 64u == 63u)
            log_printf("alarm%u: %u events\n", id - ID_ALARM, k + 1u);
    }
}

/* a short-lived task: odd ones finish and delete themselves, even ones run until deleted */
static void churn(void *arg)
{
    uint32_t c = (uint32_t)(uintptr_t)arg;
    if (c % 2u && !CHURN_POOL) {
        for (uint32_t k = 0; k < 3u + c % 4u; k++) {
            churn_job(100u + c % 50u);
            vTaskDelay(1);
        }
        log_printf("%s: done\n", churn_names[c]);
        self_deleted++;
        vTaskDelete(NULL);
    }
    for (;;) {
        churn_job(CHURN_POOL ? CHURN_WORK : 80u);
        vTaskDelay(2);
    }
}

/* before the scheduler starts: nothing runs until every task has its truth id */
static void make_task(TaskFunction_t fn, const char *name, uint32_t id, UBaseType_t prio)
{
    TaskHandle_t h;
    if (xTaskCreate(fn, name, STACK_WORDS, (void *)(uintptr_t)id, prio, &h) != pdPASS) {
        board_puts("frtos: task creation failed\n");
        board_exit(1);
    }
    vTaskSetTaskNumber(h, id);
    tcb_of[id] = (uint32_t)(uintptr_t)h;
    created++;
}

static TaskHandle_t make_churn(uint32_t c)
{
    TaskHandle_t h;
    char *name = churn_names[c];
    if (CHURN_POOL && !CHURN_UNIQUE) {
        name[0] = 'w';
        name[log_dec(name, 1u, c % POOL_N, 2u)] = '\0';
    } else {
        name[0] = 'c';
        name[log_dec(name, 1u, c, 3u)] = '\0';
    }
    vTaskSuspendAll(); /* its truth id is set before it can run */
    if (xTaskCreate(churn, name, STACK_WORDS, (void *)(uintptr_t)c, 1, &h) != pdPASS) {
        board_puts("frtos: churn creation failed\n");
        board_exit(1);
    }
    vTaskSetTaskNumber(h, ID_CHURN + c);
    tcb_of[ID_CHURN + c] = (uint32_t)(uintptr_t)h;
    created++;
    if (uxTaskGetNumberOfTasks() > max_alive)
        max_alive = uxTaskGetNumberOfTasks();
    (void)xTaskResumeAll();
    next_churn = c + 1u;
    return h;
}

static void spawner(void *arg)
{
    (void)arg;
    /* the recipe: sampling starts once the scheduler runs, from a task, so no sample is untagged */
#ifdef SEED
    cmprof_seed(SEED);
#endif
    cmprof_start(PERIOD, 0u);
    truth_begin();
    TickType_t start = xTaskGetTickCount();
    TaskHandle_t victim = NULL;
    BOARD_REG(TIMER1_BASE + 0x8u) = 2500u; /* RELOAD: 100 us, a kernel tick */
    BOARD_REG(TIMER1_BASE + 0x4u) = 2500u;
    BOARD_REG(TIMER1_BASE) = 1u | 8u; /* enable, interrupt enable */
    static TaskHandle_t pool[CHURN_POOL ? CHURN_POOL : 1u];
    for (uint32_t c = 0; c < CHURN_MAX && c < MAX_IDS - ID_CHURN && xTaskGetTickCount() - start < RUN_TICKS; c++) {
        if (CHURN_POOL && pool[c % POOL_N]) { /* the oldest worker goes */
            vTaskDelete(pool[c % POOL_N]);
            deleted++;
        }
        TaskHandle_t h = make_churn(c);
        if (CHURN_POOL) {
            pool[c % POOL_N] = h;
        } else if (c % 2u == 0u) {
            if (victim) {
                vTaskDelete(victim);
                deleted++;
            }
            victim = h;
        }
        vTaskDelay(SPAWN_TICKS);
    }
    while (xTaskGetTickCount() - start < RUN_TICKS)
        vTaskDelay(10);
    log_printf("spawner: %u tasks created\n", created);
    finish = 1u;
    for (;;)
        vTaskDelay(1000);
}

#ifdef FRTOS_RECORDER
/* ---- the stand-in trace recorder (recorder.h): counts its hooks; at each switch-out it checks
 * that cmprof's switch hook ran too (cmprof_current_task is the outgoing task) -------------------- */
static volatile uint32_t rec_in, rec_out, rec_create, rec_delete, rec_disagree;

void recorder_task_switched_in(void *tcb)
{
    (void)tcb;
    rec_in++;
}

void recorder_task_switched_out(void *tcb)
{
    rec_out++;
    if (cmprof_current_task != tcb && rec_in)
        rec_disagree++;
}

void recorder_task_create(void *tcb)
{
    (void)tcb;
    rec_create++;
}

void recorder_task_delete(void *tcb)
{
    (void)tcb;
    rec_delete++;
}

static void report_recorder(void)
{
    static const char *const keys[] = {"recorder in=", " out=", " create=", " delete=", " disagree="};
    const uint32_t vals[] = {rec_in, rec_out, rec_create, rec_delete, rec_disagree};
    for (uint32_t k = 0; k < 5u; k++) {
        board_puts(keys[k]);
        board_putdec(vals[k]);
    }
    board_puts("\n");
}
#else
static void report_recorder(void)
{
}
#endif

/* ---- the idle hook: the stream's drain, and the end of the run ---------------------------------- */

static void tid_line(uint32_t id, const char *kind, uint32_t k)
{
    char n[4] = "";
    if (k < 100u)
        n[log_dec(n, 0u, k, 2u)] = '\0';
    board_puts("tid ");
    board_putdec(id);
    board_puts(" ");
    board_puts(kind);
    board_puts(n);
    board_puts(" ");
    board_puthex(tcb_of[id]);
    board_puts("\n");
}

static void report(void)
{
    static const char *const kinds[] = {"crunch", "sens", "filt", "alarm"};
    static const uint32_t firsts[] = {ID_CRUNCH, ID_SENS, ID_FILT, ID_ALARM, ID_SPAWNER};
    tcb_of[0] = (uint32_t)(uintptr_t)xTaskGetIdleTaskHandle();
    tid_line(0, "idle", UINT32_MAX);
    for (uint32_t k = 0; k < 4u; k++)
        for (uint32_t id = firsts[k]; id < firsts[k + 1u]; id++)
            tid_line(id, kinds[k], id - firsts[k]);
    tid_line(ID_SPAWNER, "spawner", UINT32_MAX);
    for (uint32_t c = 0; c < next_churn; c++)
        tid_line(ID_CHURN + c, churn_names[c], UINT32_MAX);
    static const char *const keys[] = {" lost=", " tasks_created=", " deleted=", " self_deleted=",
                                       " max_alive=", " timer1=", " gpio0=", " log_lines=", " overflows=",
                                       " bad_ids=", " idle_stack_free=", "\n"};
#if CMPROF_STREAM
    const uint32_t lost = cmprof_stream_lost();
#else /* the dump's ring keeps the newest CMPROF_RING_N */
    const uint32_t lost = cmprof_samples() > CMPROF_RING_N ? cmprof_samples() - CMPROF_RING_N : 0u;
#endif
    const uint32_t vals[] = {lost, created, deleted, self_deleted, max_alive, timer1_irqs,
                             gpio0_irqs, log_lines, overflows, bad_ids,
                             (uint32_t)uxTaskGetStackHighWaterMark(NULL) * 4u};
    board_puts("frtos taken=");
    board_putdec(cmprof_samples());
    for (uint32_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        board_puts(keys[k]);
        board_putdec(vals[k]);
    }
    board_puts(keys[sizeof vals / sizeof vals[0]]);
}

#if !CMPROF_STREAM
/* Dump mode: nothing to drain; at the end, the samples and every task's name in one dump. */
void vApplicationIdleHook(void)
{
    if (!finish)
        return;
    truth_end();
    cmprof_stop();
    vTaskSuspendAll();
    board_puts("\n");
    cmprof_dump(board_putc);
    report_recorder();
    report();
    board_exit(0);
}
#else
void vApplicationIdleHook(void)
{
    static int announced;
    if (!announced) {
        static const struct cmprof_stream_info info = {
            .clock_hz = configCPU_CLOCK_HZ, .timer_hz = configCPU_CLOCK_HZ, .period = PERIOD,
            .jitter = CMPROF_JITTER, .code_base = 0u, .build_id_note = cmprof_build_id_note,
            .write = uart_line};
        cmprof_stream_announce(NULL, &info);
        announced = 1;
    }
    if (!finish) {
        cmprof_stream_drain(NULL, 8u);
        return;
    }
    truth_end();
    cmprof_stop();
    cmprof_stream_flush(NULL);
    vTaskSuspendAll();
    board_puts("\n");
    report_recorder();
    report();
    board_exit(0);
}
#endif

/* ---- hooks the configuration asks for ------------------------------------------------------------ */
void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    overflows++;
    board_puts("\nfrtos: stack overflow in ");
    board_puts(name);
    board_puts("\n");
    board_exit(1);
}

void vApplicationMallocFailedHook(void)
{
    board_puts("\nfrtos: out of heap\n");
    board_exit(1);
}

void frtos_assert_failed(const char *file, int line)
{
    board_puts("\nfrtos: assertion failed at ");
    board_puts(file);
    board_puts(":");
    board_putdec((uint32_t)line);
    board_puts("\n");
    board_exit(1);
}

int main(void)
{
    board_init();
    board_puts("boot: FreeRTOS scenario\n");
    readings = xQueueCreate(32, sizeof(uint32_t));
    alarms = xSemaphoreCreateCounting(1000, 0);
    shared_lock = xSemaphoreCreateMutex();
    static const char *const kinds[] = {"crunch", "sens", "filt", "alarm"};
    static const uint32_t firsts[] = {ID_CRUNCH, ID_SENS, ID_FILT, ID_ALARM, ID_SPAWNER};
    static const UBaseType_t prios[] = {0, 1, 2, 3};
    static char names[ID_SPAWNER][10];
    for (uint32_t k = 0; k < 4u; k++)
        for (uint32_t id = firsts[k]; id < firsts[k + 1u]; id++) {
            char *n = names[id];
            uint32_t len = 0;
            for (const char *s = kinds[k]; *s; s++)
                n[len++] = *s;
            n[log_dec(n, len, id - firsts[k], 2u)] = '\0';
            static const TaskFunction_t fns[] = {crunch, sensor, filter, alarm};
            make_task(fns[k], n, id, prios[k]);
        }
    make_task(spawner, "spawner", ID_SPAWNER, 2);
    BOARD_NVIC_IPR_BYTE(TIMER1_IRQ) = 0xC0u; /* below configMAX_SYSCALL_INTERRUPT_PRIORITY: FromISR calls */
    BOARD_NVIC_IPR_BYTE(GPIO0_IRQ) = 0xE0u;
    BOARD_REG(BOARD_NVIC_ISER0) = (1u << TIMER1_IRQ) | (1u << GPIO0_IRQ);
    vTaskStartScheduler();
    board_puts("frtos: the scheduler did not start\n");
    board_exit(1);
}
