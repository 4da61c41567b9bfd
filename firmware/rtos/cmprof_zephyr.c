/* cmprof's hooks on Zephyr's CONFIG_TRACING_USER trace points (see cmprof_zephyr.h). The kernel
 * calls them from thread context (create, name set; a dump's abort hook under the scheduler's lock,
 * and without it the switch out, in PendSV): each does a few stores, calls nothing that blocks and
 * never prints. No hook runs at a switch in: the tag is the kernel's own running-thread pointer. The
 * names go out from the drain thread, never from here.
 *
 * The application keeps its own sys_trace_*_user hooks: cmprof defines none of them. The module
 * links with -Wl,--wrap=<trace point> for each point below (zephyr/CMakeLists.txt), so the kernel's
 * call reaches cmprof's __wrap_ function first, which then calls __real_, Zephyr's tracing_user.c,
 * which calls the application's hook (or Zephyr's empty default). */
#include <zephyr/kernel.h>
#include <zephyr/kernel_structs.h>

#if !defined(CONFIG_TRACING_USER)
#error "cmprof needs CONFIG_TRACING=y and CONFIG_TRACING_USER=y: its thread tags come from the user tracing hooks. SystemView, CTF and the other tracing formats take those hooks for themselves; choose one of them or cmprof."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tracing_user.h>

#include "cmprof_zephyr.h"
#if CMPROF_TAG_NAMES
#include "../cmprof_tasks.h" /* the rename's inline part */
#endif

/* cmprof's part of trace point `point`, and the rest of it (the application's hook) */
#define CMPROF_ZEPHYR_HOOK(point) __wrap_##point
#define CMPROF_ZEPHYR_NEXT(point) __real_##point

#if !CMPROF_TAG_NAMES && !defined(CONFIG_CMPROF_ABORT_HOOK)
void CMPROF_ZEPHYR_HOOK(sys_trace_k_thread_switched_out)(void);
void CMPROF_ZEPHYR_NEXT(sys_trace_k_thread_switched_out)(void);
#endif
#if !CMPROF_TAG_NAMES
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_create)(struct k_thread *thread);
void CMPROF_ZEPHYR_NEXT(sys_trace_thread_create)(struct k_thread *thread);
#endif
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_name_set)(struct k_thread *thread);
void CMPROF_ZEPHYR_NEXT(sys_trace_thread_name_set)(struct k_thread *thread);
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_abort)(struct k_thread *thread);
void CMPROF_ZEPHYR_NEXT(sys_trace_thread_abort)(struct k_thread *thread);

/* The tag is the kernel's own pointer to the running thread, _kernel.cpus[0].current (_current on
 * one CPU), which the tick reads: the module links cmprof_current_task at _kernel plus this offset
 * (-Wl,--defsym, zephyr/CMakeLists.txt), so no hook runs at a context switch (it cost 5 instructions
 * a switch, 16 a sample with 3 switches a sample). The kernel sets it in the switch itself, before
 * the switch-in trace point, where a hook would have copied it. */
#ifndef CMPROF_ZEPHYR_CURRENT_OFFSET
#define CMPROF_ZEPHYR_CURRENT_OFFSET 8 /* (the module gives the offset its link uses) */
#endif
#if defined(CONFIG_SMP) || defined(CONFIG_ARCH_HAS_CUSTOM_CURRENT_IMPL)
#error "cmprof: the tag is _kernel.cpus[0].current, the running thread on one CPU without a custom _current"
#endif
_Static_assert(offsetof(struct z_kernel, cpus[0].current) == CMPROF_ZEPHYR_CURRENT_OFFSET,
               "cmprof: _kernel.cpus[0].current moved: give its offset in zephyr/CMakeLists.txt (cmprof_current_offset)");

/* Names go out on the live stream, and with a dump as its "task" lines (cmprof_stream.c built
 * without CMPROF_STREAM keeps the table for cmprof_dump). */

#if CMPROF_TAG_NAMES
/* The stream (the module's default): the tick reads the running thread's name from its k_thread
 * (CONFIG_THREAD_NAME's name[], at one offset, given by cmprof_zephyr_names_start) at its first
 * sample, and takes that name's index (cmprof_tasks.h). The cache keys a thread by its k_thread and
 * its name's first word (CMPROF_TAG_NAME_OFFSET, which the module gives as this offset): a thread
 * made by k_thread_create comes with its name emptied, so its block's entries no longer match and
 * no hook runs at a create; the rename hook only checks the entry under the new name's key (a
 * worker re-created under its name: nothing dropped, no miss, nothing sent), keeps no copy and
 * takes no lock (an entry is dropped with interrupts masked, a few instructions). Bounded whatever
 * the thread count, the churn or the names (cmprof.h gives the worst cases). */
_Static_assert(offsetof(struct k_thread, name) == CMPROF_TAG_NAME_OFFSET,
               "cmprof: CMPROF_TAG_NAME_OFFSET is not where struct k_thread keeps its name");

void cmprof_zephyr_names_start(void)
{
    struct k_thread *self = k_current_get();
    cmprof_stream_task_new(self, self->name, "idle");
}


static void forget_thread(struct k_thread *thread)
{
    cmprof_stream_task_gone(thread);
}

void cmprof_zephyr_names_early(void)
{
    cmprof_tasks_empty_ways();
}
#else
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
 * thread->name. Threads come and go under a few names, so the pool stays small. A name is found
 * through a hash of it (no scan of the pool): at most NAME_PROBES slots looked at, each a compare
 * that mostly ends at the first character, whatever the pool holds. */
static char cmprof_name_pool[CMPROF_ZEPHYR_NAME_POOL];
static size_t cmprof_name_pool_used;
_Static_assert(CMPROF_ZEPHYR_NAME_POOL <= 65535, "CMPROF_ZEPHYR_NAME_POOL: pool offsets are 16 bits");
/* hash slots: a power of two, half the pool's bytes (2 bytes of RAM each: the pool's size again),
 * so names of 3 characters or more fill at most half of them, at least 16 */
#define NAME_POOL_H (CMPROF_ZEPHYR_NAME_POOL / 2)
#define NAME_SLOTS                                                                                         \
    (NAME_POOL_H <= 16 ? 16 : NAME_POOL_H <= 32 ? 32 : NAME_POOL_H <= 64 ? 64 : NAME_POOL_H <= 128 ? 128 : \
     NAME_POOL_H <= 256 ? 256 : NAME_POOL_H <= 512 ? 512 : NAME_POOL_H <= 1024 ? 1024 : NAME_POOL_H <= 2048 ? 2048 \
     : NAME_POOL_H <= 4096 ? 4096 : NAME_POOL_H <= 8192 ? 8192 : NAME_POOL_H <= 16384 ? 16384 : 32768)
#define NAME_PROBES 8u /* slots looked at for one name, at most: past them the name is not kept */
static uint16_t cmprof_name_slots[NAME_SLOTS]; /* 1 + a name's pool offset; 0: empty */
#ifdef CMPROF_ZEPHYR_PROBE
#define NAME_STEP() ((void)CMPROF_ZEPHYR_PROBE++) /* host tests count the hook's steps */
#else
#define NAME_STEP() ((void)0)
#endif

/* Whether pool name `kept` is name[0..len). */
static bool same_name(const char *kept, const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (kept[i] != name[i])
            return false;
    return kept[len] == '\0';
}

/* The pool's copy of a name (at most CMPROF_ZEPHYR_NAME_MAX characters), added if new; NULL when
 * the pool or the name's probes are full. Bounded: one pass over the name to hash it, then at most
 * NAME_PROBES slots. */
static const char *kept_name(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t len = 0;
    for (; len < CMPROF_ZEPHYR_NAME_MAX && name[len]; len++)
        h = (h ^ (uint8_t)name[len]) * 16777619u;
    for (uint32_t p = 0; p < NAME_PROBES; p++) {
        NAME_STEP();
        uint32_t k = (h + p) & (NAME_SLOTS - 1u);
        uint32_t at1 = cmprof_name_slots[k];
        if (at1 == 0u) {
            if (len + 1u > sizeof cmprof_name_pool - cmprof_name_pool_used)
                return NULL;
            char *copy = cmprof_name_pool + cmprof_name_pool_used;
            memcpy(copy, name, len);
            copy[len] = '\0';
            cmprof_name_slots[k] = (uint16_t)(cmprof_name_pool_used + 1u);
            cmprof_name_pool_used += len + 1u;
            return copy;
        }
        if (same_name(cmprof_name_pool + at1 - 1u, name, len))
            return cmprof_name_pool + at1 - 1u;
    }
    return NULL;
}

static void name_thread(struct k_thread *thread, bool created)
{
    ARG_UNUSED(created);
    k_spinlock_key_t key = k_spin_lock(&cmprof_names_lock);
    const char *name = cmprof_zephyr_name(k_thread_name_get(thread));
    const char *kept = kept_name(name);
    /* a full pool: the thread's own buffer, right unless renamed before the drain sends it */
    cmprof_stream_task_later(thread, kept ? kept : name);
    k_spin_unlock(&cmprof_names_lock, key);
}

void cmprof_zephyr_names_start(void)
{
}

void cmprof_zephyr_names_early(void)
{
}

static void forget_thread(struct k_thread *thread)
{
    k_spinlock_key_t key = k_spin_lock(&cmprof_names_lock);
    cmprof_stream_task_gone(thread);
    k_spin_unlock(&cmprof_names_lock, key);
}

#endif

#if !CMPROF_TAG_NAMES && defined(CONFIG_CMPROF_ABORT_HOOK)
/* Zephyr 4.3's k_thread_abort reaches no trace point (sys_trace_thread_abort is never called), so a
 * dump's table would keep every aborted thread's slot: with threads made in new blocks, it fills and
 * the later threads go unnamed. The kernel's own abort hook (CONFIG_THREAD_ABORT_HOOK, which the
 * module selects for a dump: zephyr/Kconfig) sees every thread that dies, aborted or returned from
 * its entry, under the scheduler's lock; its slot then goes to a new thread once no fresh slot is
 * left, the longest-dead first. */
void thread_abort_hook(struct k_thread *thread);
void thread_abort_hook(struct k_thread *thread)
{
    forget_thread(thread);
}
#elif !CMPROF_TAG_NAMES
/* Without the kernel's abort hook (CMSIS-RTOS v1 defines it): a thread that ends itself is seen
 * here, as it leaves the CPU dead (an aborted one is not). (The stream's tick needs no word of it,
 * nor of a switch out at all: the module wraps this trace point for a dump only.) */
void CMPROF_ZEPHYR_HOOK(sys_trace_k_thread_switched_out)(void)
{
    struct k_thread *thread = _current;
    if (thread != NULL && (thread->base.thread_state & _THREAD_DEAD) != 0u)
        forget_thread(thread);
    CMPROF_ZEPHYR_NEXT(sys_trace_k_thread_switched_out)();
}
#endif

#if !CMPROF_TAG_NAMES
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_create)(struct k_thread *thread)
{
    name_thread(thread, true);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_create)(thread);
}
#endif

#if CMPROF_TAG_NAMES
/* A rename that has work to do (most have none: cmprof_tasks_rename_done, which says what it
 * found), then the rest of the trace point: out of line, so that the hook's common path builds no
 * frame and tail-calls. */
__attribute__((noinline)) static void rename_rest(struct k_thread *thread, uintptr_t look)
{
    cmprof_tasks_renamed(thread, look);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_name_set)(thread);
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O2", "no-crossjumping"))) /* (at -Os GCC keeps a register more, saved and restored; each path its own tail call) */
#endif
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_name_set)(struct k_thread *thread)
{
    uintptr_t look;
    if (cmprof_tasks_rename_done(thread, thread->name, &look))
        CMPROF_ZEPHYR_NEXT(sys_trace_thread_name_set)(thread);
    else
        rename_rest(thread, look);
}
#else
void CMPROF_ZEPHYR_HOOK(sys_trace_thread_name_set)(struct k_thread *thread)
{
    name_thread(thread, false);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_name_set)(thread);
}
#endif

void CMPROF_ZEPHYR_HOOK(sys_trace_thread_abort)(struct k_thread *thread)
{
    forget_thread(thread);
    CMPROF_ZEPHYR_NEXT(sys_trace_thread_abort)(thread);
}
