/* cmprof's CONFIG_TRACING_USER hooks for Zephyr (see cmprof_zephyr.h). The kernel calls them from
 * thread context (create, name set) and from the context switch (switched in/out, PendSV on
 * Cortex-M): each does a few stores, calls nothing that blocks and never prints. The names go out
 * from the drain thread (cmprof_stream_task_later), never from here. */
#include <zephyr/kernel.h>

#if !defined(CONFIG_TRACING_USER)
#error "cmprof needs CONFIG_TRACING=y and CONFIG_TRACING_USER=y: its thread tags come from the user tracing hooks. SystemView, CTF and the other tracing formats take those hooks for themselves; choose one of them or cmprof."
#endif

#include <string.h>
#include <tracing_user.h>

#include "cmprof_zephyr.h"

void *volatile cmprof_current_task;

void sys_trace_thread_switched_in_user(void)
{
    cmprof_current_task = k_current_get();
}

/* Names go out on the live stream; a dump (CMPROF_STREAM unset) carries the thread tags only, and
 * the other hooks keep Zephyr's empty defaults. */
#if defined(CMPROF_STREAM) && CMPROF_STREAM

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

/* Zephyr 4.3's user backend never calls the abort hook (its k_thread abort trace points map to
 * nothing), so a thread that ends itself is seen here: it leaves the CPU dead. */
void sys_trace_thread_switched_out_user(void)
{
    struct k_thread *thread = k_current_get();
    if (thread != NULL && (thread->base.thread_state & _THREAD_DEAD) != 0u)
        forget_thread(thread);
}

void sys_trace_thread_create_user(struct k_thread *thread)
{
    name_thread(thread);
}

void sys_trace_thread_name_set_user(struct k_thread *thread)
{
    name_thread(thread);
}

void sys_trace_thread_abort_user(struct k_thread *thread)
{
    forget_thread(thread);
}

#endif
