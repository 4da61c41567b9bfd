/* cmprof's hooks on Zephyr's CONFIG_TRACING_USER trace points (see cmprof_zephyr.h). The kernel
 * calls them from thread context (create, name set) and from the context switch (switched in/out,
 * PendSV on Cortex-M): each does a few stores, calls nothing that blocks and never prints. The names
 * go out from the drain thread (cmprof_stream_task_later), never from here.
 *
 * The application keeps its own sys_trace_*_user hooks: cmprof defines none of them. The module
 * links with -Wl,--wrap=<trace point> for each point below (zephyr/CMakeLists.txt), so the kernel's
 * call reaches cmprof's __wrap_ function first, which then calls __real_, Zephyr's tracing_user.c,
 * which calls the application's hook (or Zephyr's empty default). */
#include <zephyr/kernel.h>

#if !defined(CONFIG_TRACING_USER)
#error "cmprof needs CONFIG_TRACING=y and CONFIG_TRACING_USER=y: its thread tags come from the user tracing hooks. SystemView, CTF and the other tracing formats take those hooks for themselves; choose one of them or cmprof."
#endif

#include <string.h>
#include <tracing_user.h>

#include "cmprof_zephyr.h"

/* cmprof's part of trace point `point`, and the rest of it (the application's hook) */
#define CMPROF_ZEPHYR_HOOK(point) __wrap_##point
#define CMPROF_ZEPHYR_NEXT(point) __real_##point

void CMPROF_ZEPHYR_HOOK(sys_trace_k_thread_switched_in)(void);
void CMPROF_ZEPHYR_NEXT(sys_trace_k_thread_switched_in)(void);
void CMPROF_ZEPHYR_HOOK(sys_trace_k_thread_switched_out)(void);
void CMPROF_ZEPHYR_NEXT(sys_trace_k_thread_switched_out)(void);
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_create)(struct k_thread *thread);
void CMPROF_ZEPHYR_NEXT(sys_trace_thread_create)(struct k_thread *thread);
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_name_set)(struct k_thread *thread);
void CMPROF_ZEPHYR_NEXT(sys_trace_thread_name_set)(struct k_thread *thread);
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_abort)(struct k_thread *thread);
void CMPROF_ZEPHYR_NEXT(sys_trace_thread_abort)(struct k_thread *thread);

void *volatile cmprof_current_task;

void CMPROF_ZEPHYR_HOOK(sys_trace_k_thread_switched_in)(void)
{
    cmprof_current_task = k_current_get();
    CMPROF_ZEPHYR_NEXT(sys_trace_k_thread_switched_in)();
}

/* Names go out on the live stream, and with a dump as its "task" lines (cmprof_stream.c built
 * without CMPROF_STREAM keeps the table for cmprof_dump). */

#ifndef CMPROF_ZEPHYR_NAME_POOL
#define CMPROF_ZEPHYR_NAME_POOL 512 /* bytes of thread names kept (CONFIG_CMPROF_NAME_POOL) */
#endif
#define CMPROF_ZEPHYR_NAME_MAX 24u   /* the stream sends no more of a name */

/* The name table is shared by every thread that creates or names a thread: one at a time. */
static struct k_spinlock cmprof_names_lock;

/* Every distinct name once, kept for ever: the stream sends a name after the hook returns, by
 * which time k_thread_name_set() or a new thread in the same k_thread may have overwritten
 * thread->name. Threads come and go under a few names, so the pool stays small. */
static char cmprof_name_pool[CMPROF_ZEPHYR_NAME_POOL];
static size_t cmprof_name_pool_used;

static const char *kept_name(const char *name)
{
    size_t len = 0;
    while (len < CMPROF_ZEPHYR_NAME_MAX && name[len])
        len++;
    for (size_t at = 0; at < cmprof_name_pool_used; at += strlen(cmprof_name_pool + at) + 1u)
        if (!strncmp(cmprof_name_pool + at, name, len) && cmprof_name_pool[at + len] == '\0')
            return cmprof_name_pool + at;
    if (len + 1u > sizeof cmprof_name_pool - cmprof_name_pool_used)
        return NULL;
    char *copy = cmprof_name_pool + cmprof_name_pool_used;
    memcpy(copy, name, len);
    copy[len] = '\0';
    cmprof_name_pool_used += len + 1u;
    return copy;
}

static void name_thread(struct k_thread *thread)
{
    k_spinlock_key_t key = k_spin_lock(&cmprof_names_lock);
    const char *name = cmprof_zephyr_name(k_thread_name_get(thread));
    const char *kept = kept_name(name);
    /* a full pool: the thread's own buffer, right unless renamed before the drain sends it */
    cmprof_stream_task_later(thread, kept ? kept : name);
    k_spin_unlock(&cmprof_names_lock, key);
}

static void forget_thread(struct k_thread *thread)
{
    k_spinlock_key_t key = k_spin_lock(&cmprof_names_lock);
    cmprof_stream_task_gone(thread);
    k_spin_unlock(&cmprof_names_lock, key);
}

/* A thread that ends itself is seen here too: it leaves the CPU dead. */
void CMPROF_ZEPHYR_HOOK(sys_trace_k_thread_switched_out)(void)
{
    struct k_thread *thread = k_current_get();
    if (thread != NULL && (thread->base.thread_state & _THREAD_DEAD) != 0u)
        forget_thread(thread);
    CMPROF_ZEPHYR_NEXT(sys_trace_k_thread_switched_out)();
}

void CMPROF_ZEPHYR_HOOK(sys_trace_thread_create)(struct k_thread *thread)
{
    name_thread(thread);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_create)(thread);
}

void CMPROF_ZEPHYR_HOOK(sys_trace_thread_name_set)(struct k_thread *thread)
{
    name_thread(thread);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_name_set)(thread);
}

void CMPROF_ZEPHYR_HOOK(sys_trace_thread_abort)(struct k_thread *thread)
{
    forget_thread(thread);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_abort)(thread);
}

/* Thumb code: is the halfword the first of a 32-bit instruction? */
static inline int cmprof_thumb32(uint16_t hw)
{
    return (hw >> 11) >= 0x1Du;
}

uint32_t cmprof_zephyr_idle_resume(const uint16_t *code, uint32_t halfwords)
{
    int waited = 0;
    for (uint32_t i = 0; i < halfwords; i += cmprof_thumb32(code[i]) ? 2u : 1u) {
        if (code[i] == 0xBF30u) /* wfi */
            waited = 1;
        else if (waited && code[i] == 0xB662u) /* cpsie i */
            return 2u * (i + 1u);
    }
    return 0u;
}
