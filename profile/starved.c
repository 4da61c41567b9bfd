/* A drain that never runs: the firmware takes samples into its ring, and nothing goes out. On
 * Zephyr the module's drain thread sends the announce, on FreeRTOS the idle hook does, so a drain
 * starved from the start gives no announce either: a silent line, or the application's log only. */
#include "starved.h"

#include <stdio.h>

/* The causes a starved drain has, whatever the input showed. */
static const char causes[] =
    "likely causes: the drain never runs (a thread that never sleeps above its priority: on Zephyr give the "
    "drain a higher priority, CONFIG_CMPROF_DRAIN_PRIORITY a smaller number than that thread's; FreeRTOS: an "
    "idle task that never runs under load, drain from a task of its own), or a sampling timer that never fires "
    "(the timer's interrupt is off or unconnected: cmprof_start() not called, its IRQ disabled, your own timer's "
    "line not given or its registers another chip's)";

/* ... and those of a trace that carries no PC sample (after "likely causes: ", or another cause's "or"). */
#define TRACE_CAUSES "the trace is not set up (the TPIU or SWO pin rate wrong for the trace clock, the formatter " \
    "on or off against -f, another TPIU source ID: --tpiu-id), DWT PC sampling off (DWT_CTRL.PCSAMPLENA), or " \
    "the core asleep or halted"

void starved_hint(const struct ingest *in, double seconds, enum starved_from from, char *buf, size_t len)
{
    struct ingest_counts c;
    ingest_counts(in, &c);
    char when[40] = "the capture has";
    if (seconds >= 0)
        snprintf(when, sizeof when, "%.0f s connected:", seconds);
    if (c.samples > 0 || len == 0 || from == STARVED_PROBE) {
        if (len)
            buf[0] = '\0';
        return;
    }
    bool trace = from == STARVED_TRACE || c.format == DETECT_ITM || c.format == DETECT_TPIU ||
                 c.format == DETECT_ORBFLOW;
    if (c.unreadable)
        snprintf(buf, len, "%s %llu bytes that no format reads (no ITM sync, no stream line): a serial line at "
                 "another baud rate than the firmware's UART gives such bytes (-b BAUD), or %s", when,
                 (unsigned long long)c.bytes, TRACE_CAUSES);
    else if (trace)
        snprintf(buf, len, "%s %s; likely causes: %s", when,
                 c.bytes ? "trace bytes but no PC sample" : "nothing from the trace", TRACE_CAUSES);
    else if (c.bytes == 0)
        snprintf(buf, len, "%s nothing from the firmware (is it running, on this port and baud?); %s", when, causes);
    else if (c.announced)
        snprintf(buf, len, "%s the firmware's announce and no sample line; %s", when, causes);
    else if (c.format == DETECT_TEXT && c.log_lines && !c.stream_lines && !c.blocks)
        snprintf(buf, len, "%s %llu log lines only, no announce yet (the drain sends it: cmprof_stream_announce() "
                 "not called, or the drain not run); %s", when, (unsigned long long)c.log_lines, causes);
    else
        snprintf(buf, len, "%s no sample yet; %s", when, causes);
}

void starved_stalled(double quiet_s, double last_s, char *buf, size_t len)
{
    snprintf(buf, len, "the stream stopped: no sample for %.0f s (the last at %02d:%02d), the line still connected; "
             "what came before is all the profile holds; %s", quiet_s, (int)(last_s / 60), (int)last_s % 60, causes);
}

void starved_stalled_short(double quiet_s, double last_s, char *buf, size_t len)
{
    snprintf(buf, len, "the stream stopped: no sample for %.0f s (the last at %02d:%02d), still connected: a busy "
             "thread above the drain's priority? (Zephyr: CONFIG_CMPROF_DRAIN_PRIORITY; FreeRTOS: the idle task)",
             quiet_s, (int)(last_s / 60), (int)last_s % 60);
}
