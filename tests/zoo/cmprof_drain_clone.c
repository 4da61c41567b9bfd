/* A stand-in for the stream drain that GCC copies (tests/test_idle_overhead.py builds it at -O2
 * with -fipa-cp-clone, beside drain_clone_app.c): every caller passes the same line count, so the
 * quick exit becomes cmprof_stream_drain.constprop.0. The file's name starts with cmprof_ as the
 * library's do: the host counts the code of such files as the profiler's own. */
#include <stdint.h>

volatile uint32_t ring_head, ring_tail, lines_out;

__attribute__((noinline)) uint32_t cmprof_stream_drain_lines(uint32_t max_lines)
{
    uint32_t sent = 0;
    while (max_lines-- && ring_head - ring_tail >= 32u) {
        ring_tail += 32u;
        lines_out++;
        sent += 32u;
    }
    return sent;
}

static __attribute__((noinline)) uint32_t cmprof_stream_drain(uint32_t max_lines)
{
    if (ring_head - ring_tail < 32u)
        return 0;
    return cmprof_stream_drain_lines(max_lines);
}

uint32_t drain_from_idle(void)
{
    return cmprof_stream_drain(8u);
}

uint32_t drain_from_loop(void)
{
    return cmprof_stream_drain(8u) + 1u;
}
