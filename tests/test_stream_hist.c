/* The histogram stream (CMPROF_HIST=1 with CMPROF_STREAM=1) on the host: bucket deltas go out as
 * '#' lines, and task names given from a kernel hook go out with the next drain (there is no
 * ring for them to wait their turn in). */
#include "../firmware/cmprof.h"
#include "check.h"
#include "fake_regs.h"

#include <string.h>

static char out[1 << 16];
static size_t out_len;

static void capture(char c)
{
    if (out_len + 1 < sizeof out)
        out[out_len++] = c;
    out[out_len] = '\0';
}

static void test_names_from_kernel_hooks_go_out(void)
{
    fake_regs_clear();
    out_len = 0;
    cmprof_start(10u, 0u);
    static const struct cmprof_stream_info info = {.clock_hz = 1000, .timer_hz = 1000, .period = 10};
    cmprof_stream_announce(capture, &info);
    static char tcb[32], name[] = "sensor";
    cmprof_stream_task_later(tcb, name);
    CHECK(strstr(out, "sensor") == NULL); /* nothing sent from the hook */
    for (int k = 0; k < 20; k++)
        cmprof_tick(0x08000100u);
    CHECK(cmprof_stream_drain(capture, 4) == 20);
    /* no sample line to carry it: an "@N" line ahead of the deltas */
    const char *named = strstr(out, "sensor!"), *deltas = strchr(out, '#'), *line = strstr(out, "\n@N");
    CHECK(named && deltas && line && line < named && named < deltas && !memchr(line + 1, '\n', (size_t)(named - line - 1)));
}

int main(void)
{
    RUN_TEST(test_names_from_kernel_hooks_go_out);
    return check_summary();
}
