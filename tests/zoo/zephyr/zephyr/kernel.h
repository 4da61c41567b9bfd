/* A stand-in for the part of Zephyr's <zephyr/kernel.h> that firmware/rtos/cmprof_zephyr.c uses,
 * for tests/test_zephyr.c on the host: a k_thread with its state and name, the current thread, a
 * spinlock that checks it is never taken twice. Field names and the _THREAD_DEAD bit as in Zephyr
 * 4.3 (include/zephyr/kernel_structs.h, kernel/thread.c); Zephyr itself is not in this repository. */
#ifndef CMPROF_ZEPHYR_STANDIN_KERNEL_H
#define CMPROF_ZEPHYR_STANDIN_KERNEL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* <zephyr/sys/util.h>, which the real kernel.h brings in */
#define ARG_UNUSED(x) (void)(x)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define CONFIG_TRACING_USER 1
#define CONFIG_THREAD_MAX_NAME_LEN 32
#define _THREAD_DEAD (1u << 3)

struct _thread_base {
    void *qnode_dlist[2]; /* (the kernel's wait and ready queues: a k_thread is pointer-aligned) */
    uint8_t user_options;
    uint8_t thread_state;
};

struct k_thread {
    struct _thread_base base;
    char name[CONFIG_THREAD_MAX_NAME_LEN];
};

typedef struct k_thread *k_tid_t;

/* The kernel's state as far as cmprof reads it: on one CPU the running thread is
 * _kernel.cpus[0].current (kernel_structs.h's _current), at 8 bytes into _kernel as in Zephyr 4.3
 * (nested, irq_stack, current; the stand-in keeps the offset on a 64-bit host too), which the module
 * links cmprof_current_task at. The test's scheduler sets it, as the kernel's switch does. */
struct _cpu {
    uint32_t nested;
    uint32_t irq_stack; /* (a pointer in Zephyr) */
    struct k_thread *current;
};
struct z_kernel {
    struct _cpu cpus[1];
};
extern struct z_kernel _kernel;
#define standin_current (_kernel.cpus[0].current)
extern int standin_lock_depth;

static inline k_tid_t k_current_get(void)
{
    return standin_current;
}

static inline const char *k_thread_name_get(k_tid_t thread)
{
    return thread->name;
}

struct k_spinlock {
    int taken;
};
typedef int k_spinlock_key_t;

static inline k_spinlock_key_t k_spin_lock(struct k_spinlock *l)
{
    if (l->taken++) /* nested: a hook that would deadlock on the target */
        abort();
    standin_lock_depth++;
    return 0;
}

static inline void k_spin_unlock(struct k_spinlock *l, k_spinlock_key_t key)
{
    (void)key;
    l->taken--;
    standin_lock_depth--;
}

#endif
