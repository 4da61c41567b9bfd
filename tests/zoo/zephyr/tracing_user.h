/* A stand-in for Zephyr's subsys/tracing/user/tracing_user.h: the application's hooks, and the trace
 * points the kernel calls, which call them (cmprof wraps the trace points). */
#ifndef CMPROF_ZEPHYR_STANDIN_TRACING_USER_H
#define CMPROF_ZEPHYR_STANDIN_TRACING_USER_H

#include <zephyr/kernel.h>

void sys_trace_thread_create_user(struct k_thread *thread);
void sys_trace_thread_abort_user(struct k_thread *thread);
void sys_trace_thread_name_set_user(struct k_thread *thread);
void sys_trace_thread_switched_in_user(void);
void sys_trace_thread_switched_out_user(void);

void sys_trace_thread_create(struct k_thread *thread);
void sys_trace_thread_abort(struct k_thread *thread);
void sys_trace_thread_name_set(struct k_thread *thread);
void sys_trace_k_thread_switched_in(void);
void sys_trace_k_thread_switched_out(void);

#endif
