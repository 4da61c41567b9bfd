#!/usr/bin/env python3
"""cmprof's Zephyr module (zephyr/) without Zephyr, which is not in this repository. Prints one
ok/FAIL line per check.

  boards   the timer port chosen from four boards' devicetrees (excerpts of real Zephyr 4.3 builds,
           tests/zoo/zephyr/boards/*.h, over the stand-in of <zephyr/devicetree.h>): mps2/an385's
           CMSDK timer, nrf52840dk's TIMER2 and nucleo_f401re's TIM2 as counters, qemu_cortex_m3's
           own timer on its IRQ line; the sampler and the counter port built for each
  chain    an application with its own sys_trace_*_user hooks links beside cmprof, with the
           module's link options, and both run (a host program standing in for the kernel)
  chain_stream  the stream's build: a create reaches the application's hook and no cmprof code
  include  the application includes cmprof.h and rtos/cmprof_zephyr.h from the module's public
           include directories alone
  dump     a dump (CONFIG_CMPROF_TRANSPORT_DUMP) names the threads the hooks saw
  line     the drain's write_line (zephyr/cmprof_module.c) hands the UART driver's poll_out every
           byte of a line, in order, at every length, with the scheduler's lock taken and given back;
           the module's line length is the one its stand-in (test_zephyr) is tested with
  options  Kconfig: help for every option, ranges, Zephyr's dependency conventions; the configure
           checks reject a jitter mask that is not 2^k - 1

  wake     the drain's sleep after a pass: until 2 lines can be full, at most CONFIG_CMPROF_DRAIN_MS;
           the module's ring of retired names holds a line's for each of them; woken before 2 lines
           are there, the drain sleeps the rest

usage: test_zephyr_module.py [boards|chain|chain_stream|include|dump|line|wake|options ...] (default: all)"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from harness import check  # noqa: E402

FW = os.path.join(ROOT, "firmware")
ZMOD = os.path.join(ROOT, "zephyr")
STANDIN = os.path.join(HERE, "zoo", "zephyr")
TMP = tempfile.mkdtemp(prefix="cmprof-zephyr-")
WARN = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def first_error(r):
    lines = [ln for ln in (r.stderr + r.stdout).splitlines() if "error" in ln or "multiple definition" in ln]
    return (lines or (r.stderr + r.stdout).splitlines() or [""])[0][:200]


# ---- boards ------------------------------------------------------------------------------------

# board header, -mcpu, the macros the port must come to, and their values
BOARDS = [
    ("mps2_an385", "cortex-m3", {"CMPROF_PORT": "3", "CMPROF_CMSDK_BASE": str(0x40001000), "CMPROF_CMSDK_IRQ": "9"}),
    ("nrf52840dk_nrf52840", "cortex-m4", {"CMPROF_PORT": "6", "CMPROF_ZEPHYR_COUNTER_IRQ": "10"}),
    ("nucleo_f401re", "cortex-m4", {"CMPROF_PORT": "6", "CMPROF_ZEPHYR_COUNTER_IRQ": "28"}),
    ("qemu_cortex_m3", "cortex-m3", {"CMPROF_PORT": "6", "CMPROF_ZEPHYR_IRQ": "19"}),
]


def board_flags(board, cpu):
    return ["-mcpu=" + cpu, "-mthumb", "-include", os.path.join(STANDIN, "boards", board + ".h"), "-include",
            os.path.join(ZMOD, "cmprof_zephyr_port.h"), "-I" + FW, "-I" + ZMOD, "-I" + STANDIN,
            "-DCMPROF_NO_ISR=1", "-DCMPROF_TAG=cmprof_current_task", "-DCMPROF_JITTER=0x3ffu", "-DCMPROF_STREAM=1"]


def port_values(flags, names):
    """The values the port's macros expand to, as the compiler sees them (integer constant expressions)."""
    probe = os.path.join(TMP, "probe.c")
    with open(probe, "w") as f:
        f.write("#include <stdint.h>\n#include \"cmprof.h\"\n")
        for n in names:
            f.write("#ifdef %s\n__attribute__((used)) const uint32_t v_%s = (uint32_t)(%s);\n#endif\n" % (n, n, n))
    r = run(["arm-none-eabi-gcc", "-O1", "-S", "-o", "-"] + flags + [probe])
    if r.returncode:
        return None, first_error(r)
    values = {}
    for n in names:  # each constant is a .word under its label
        m = re.search(r"^v_%s:\s*\n\s*\.word\s+(-?\d+)" % n, r.stdout, re.M)
        if m:
            values[n] = m.group(1)
    return values, ""


def boards():
    for board, cpu, want in BOARDS:
        flags = board_flags(board, cpu)
        values, err = port_values(flags, list(want))
        check("Zephyr %s: the devicetree gives the timer port and its line %s" % (board, sorted(want.items())),
              values == want, err or "got %s" % values)
        objs = ["cmprof_sampler.c"] + (["cmprof_counter.c"] if "CMPROF_ZEPHYR_COUNTER_IRQ" in want else [])
        for src in objs:
            path = os.path.join(ZMOD if src == "cmprof_counter.c" else FW, src)
            r = run(["arm-none-eabi-gcc", "-Os", "-c", "-o", os.path.join(TMP, board + ".o")] + WARN + flags + [path])
            check("Zephyr %s: %s builds for its timer" % (board, src), r.returncode == 0, first_error(r))


# ---- chain ---------------------------------------------------------------------------------------

# Zephyr's subsys/tracing/user/tracing_user.c as far as the thread trace points go: each calls the
# application's hook, an empty weak one unless the application has its own.
TRACING_USER_C = r"""
#include <tracing_user.h>
#define WEAK __attribute__((weak))
void WEAK sys_trace_thread_create_user(struct k_thread *t) { (void)t; }
void WEAK sys_trace_thread_abort_user(struct k_thread *t) { (void)t; }
void WEAK sys_trace_thread_name_set_user(struct k_thread *t) { (void)t; }
void WEAK sys_trace_thread_switched_in_user(void) {}
void WEAK sys_trace_thread_switched_out_user(void) {}
void sys_trace_thread_create(struct k_thread *t) { sys_trace_thread_create_user(t); }
void sys_trace_thread_abort(struct k_thread *t) { sys_trace_thread_abort_user(t); }
void sys_trace_thread_name_set(struct k_thread *t) { sys_trace_thread_name_set_user(t); }
void sys_trace_k_thread_switched_in(void) { sys_trace_thread_switched_in_user(); }
void sys_trace_k_thread_switched_out(void) { sys_trace_thread_switched_out_user(); }
"""
# the application: two hooks of its own
APP_C = r"""
#include <tracing_user.h>
int app_switches, app_creates;
void sys_trace_thread_switched_in_user(void) { app_switches++; }
void sys_trace_thread_create_user(struct k_thread *t) { (void)t; app_creates++; }
"""
# the kernel: creates two threads, switches between them; cmprof's tag must follow
KERNEL_C = r"""
#include <stdio.h>
#include <tracing_user.h>
struct z_kernel _kernel;
int standin_lock_depth;
extern void *volatile cmprof_current_task;
extern int app_switches, app_creates;
void cmprof_stream_task_later(const void *tag, const char *name) { (void)tag; (void)name; }
void cmprof_stream_task_gone(const void *tag) { (void)tag; }
int main(void)
{
    static struct k_thread a, b;
    int tag_right = 0;
    sys_trace_thread_create(&a);
    sys_trace_thread_create(&b);
    for (int i = 0; i < 4; i++) {
        struct k_thread *t = i & 1 ? &b : &a;
        if (standin_current)
            sys_trace_k_thread_switched_out();
        standin_current = t;
        sys_trace_k_thread_switched_in();
        tag_right += cmprof_current_task == (void *)t;
    }
    printf("app_switches=%d app_creates=%d tag_right=%d\n", app_switches, app_creates, tag_right);
    return 0;
}
"""


def module_link_options():
    """The linker options zephyr/CMakeLists.txt gives the application (zephyr_ld_options), with the
    values its set() gives."""
    text = open(os.path.join(ZMOD, "CMakeLists.txt")).read()
    for name, value in re.findall(r"^\s*set\((\w+) (\w+)\)", text, re.M):
        text = text.replace("${%s}" % name, value)
    opts = re.findall(r"zephyr_ld_options\(([^)$]*)\)", text) + re.findall(r"zephyr_link_libraries\((-Wl,[^)$]*)\)", text)
    for names, body in re.findall(r"foreach\(\w+((?:\s+\w+)+)\s*\)(.*?)endforeach", text, re.S):
        for template in re.findall(r"zephyr_ld_options\(([^)]*)\)", body):
            opts += [re.sub(r"\$\{\w+\}", n, template) for n in names.split()]
    return [o.strip() for o in opts]


def chain_objects(kernel, prefix, defines, what):
    """The stand-in kernel, Zephyr's tracing_user.c, the application's hooks and cmprof's, built with
    `defines`: their objects, or None (a failed check named `what`)."""
    srcs = {"tracing_user.c": TRACING_USER_C, "app.c": APP_C, prefix + "kernel.c": kernel}
    objs = []
    for name, text in list(srcs.items()) + [("cmprof_zephyr.c", None)]:
        src = os.path.join(FW, "rtos", name) if text is None else os.path.join(TMP, name)
        if text is not None:
            open(src, "w").write(text)
        obj = os.path.join(TMP, prefix + name + ".o")
        r = run(["cc", "-c", "-o", obj, "-I" + FW, "-I" + STANDIN] + defines + WARN + [src])
        if r.returncode:
            check(what, False, first_error(r))
            return None
        objs.append(obj)
    return objs


def chain():
    objs = chain_objects(KERNEL_C, "", ["-DCMPROF_STREAM=1"], "Zephyr: the application's own tracing hooks and cmprof's build")
    if objs is None:
        return
    exe = os.path.join(TMP, "chain")
    r = run(["cc", "-o", exe] + objs + module_link_options())
    check("Zephyr: an application with its own sys_trace_*_user hooks links with cmprof (module's link options)",
          r.returncode == 0, first_error(r))
    if r.returncode:
        return
    out = run([exe]).stdout.strip()
    check("Zephyr: the application's hooks run beside cmprof's, and cmprof's tag is the thread switched in",
          out == "app_switches=4 app_creates=2 tag_right=4", out)
    opts = module_link_options()
    check("Zephyr: no cmprof hook at a context switch: the tag is the kernel's _kernel.cpus[0].current, linked as "
          "cmprof_current_task (a wrapped switch-in cost 5 instructions a switch, 16 a sample in bench/zephyr_churn)",
          not any("switched_in" in o for o in opts) and "-Wl,--defsym=cmprof_current_task=_kernel+8" in opts,
          " ".join(opts))


# the kernel for the stream's build: a create reaches no cmprof code, a rename does (counted)
KERNEL_STREAM_C = r"""
#include <stdio.h>
#include <string.h>
#include <tracing_user.h>
#include "cmprof_tasks.h"
struct z_kernel _kernel;
int standin_lock_depth;
struct cmprof_tag_names cmprof_tag_names;
extern int app_switches, app_creates;
static int renames, news;
void cmprof_stream_task_new(const void *tag, const char *name, const char *idle) { (void)tag; (void)name; (void)idle; news++; }
void cmprof_tasks_renamed(const void *tag, uintptr_t look) { (void)tag; (void)look; renames++; }
void cmprof_stream_task_gone(const void *tag) { (void)tag; }
void cmprof_zephyr_names_start(void);
int main(void)
{
    static struct k_thread drain, a;
    for (unsigned s = 0; s < CMPROF_TASKS_SETS; s++) /* every set holds another block's entry: the rename looks further */
        cmprof_tag_names.ways[s][0].key = 1u;
    standin_current = &drain;
    cmprof_zephyr_names_start();
    sys_trace_thread_create(&a);
    strcpy(a.name, "a");
    sys_trace_thread_name_set(&a);
    printf("app_creates=%d news=%d renames=%d\n", app_creates, news, renames);
    return 0;
}
"""


def chain_stream():
    """The module's stream (CMPROF_TAG_NAMES): the kernel's create reaches the application's hook and no
    cmprof code (zephyr/CMakeLists.txt wraps sys_trace_thread_create for a dump only), a rename reaches
    cmprof's hook, and where names sit is given once before sampling."""
    text = open(os.path.join(ZMOD, "CMakeLists.txt")).read()
    stream_opts = [o for o in module_link_options() if "sys_trace_thread_create" not in o]
    dump_only = re.search(r"if\(NOT CONFIG_CMPROF_TRANSPORT_STREAM\)[^)]*?\n(?:\s*#.*\n)*\s*zephyr_ld_options\("
                          r"-Wl,--wrap=sys_trace_thread_create\)\s*\n\s*endif\(\)", text)
    wrapped = [o for o in module_link_options() if "--wrap=sys_trace_thread_create" in o]
    check("Zephyr stream: the module wraps sys_trace_thread_create for a dump only (a create costs the stream "
          "nothing: the cache's key holds the name's first word)", dump_only is not None and len(wrapped) == 1,
          " ".join(wrapped))
    objs = chain_objects(KERNEL_STREAM_C, "s_", ["-DCMPROF_STREAM=1", "-DCMPROF_TAG_NAMES=1", "-DCMPROF_TAG=cmprof_current_task",
                                                 "-DCMPROF_TAG_NAME_OFFSET=24"], "Zephyr stream: cmprof's hooks build")
    if objs is None:
        return
    exe = os.path.join(TMP, "chain_stream")
    r = run(["cc", "-o", exe] + objs + stream_opts)
    check("Zephyr stream: links with the module's link options and no create wrap", r.returncode == 0, first_error(r))
    if r.returncode:
        return
    out = run([exe]).stdout.strip()
    check("Zephyr stream: a create runs the application's hook and no cmprof code, a rename cmprof's hook",
          out == "app_creates=1 news=1 renames=1", out)


# ---- include -----------------------------------------------------------------------------------


def include():
    text = open(os.path.join(ZMOD, "CMakeLists.txt")).read()
    dirs = []
    for args in re.findall(r"^\s*zephyr_include_directories\(([^)]*)\)", text, re.M):
        for a in args.split():
            a = a.replace("${CMPROF_FIRMWARE}", os.path.join(ZMOD, "..", "firmware"))
            dirs.append(a.replace("${CMAKE_CURRENT_LIST_DIR}", ZMOD))
    sample = os.path.join(ROOT, "samples", "cmprof", "src", "main.c")
    sample = open(sample).read() if os.path.exists(sample) else "#include <cmprof.h>\n#include <rtos/cmprof_zephyr.h>\n"
    wanted = [h for h in re.findall(r"#include <([^>]+)>", sample) if not h.startswith("zephyr/")]
    probe = os.path.join(TMP, "app_include.c")
    with open(probe, "w") as f:
        f.write("".join("#include <%s>\n" % h for h in wanted))
        f.write("void app(void) { cmprof_section_start(0); cmprof_section_stop(0); "
                "cmprof_zephyr_section_name(0, \"s\"); }\n")
    r = run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-c", "-o", os.path.join(TMP, "app.o")] + WARN
            + ["-I" + d for d in dirs] + [probe])
    check("Zephyr: the application includes %s from the module's public include directories %s"
          % (", ".join(wanted), [os.path.relpath(d, ROOT) for d in dirs]), bool(wanted) and r.returncode == 0,
          first_error(r))


# ---- wake --------------------------------------------------------------------------------------

# drain_wait_us from the module: the drain's sleep after a pass, for a stream left `left` samples
# before its next line can be full (cmprof_stream_quiet_to), at `us` a sample
WAKE_MAIN = r"""
#include <stdio.h>
int main(void)
{
    unsigned bad = 0;
    for (uint32_t us = 1; us <= 20000u; us = us * 3u + 1u)
        for (uint32_t left = 0; left <= 40u; left++) {
            uint32_t samples = (left == 0u || left > CMPROF_STREAM_LINE ? 1u : left) + CMPROF_STREAM_LINE;
            uint64_t want = (uint64_t)samples * us;
            if (want > CONFIG_CMPROF_DRAIN_MS * 1000u)
                want = CONFIG_CMPROF_DRAIN_MS * 1000u;
            if (drain_wait_us(left, us) != want && !bad++)
                printf("left %u at %u us: %u\n", (unsigned)left, (unsigned)us, (unsigned)drain_wait_us(left, us));
        }
    printf("%u wrong\n", bad);
    return 0;
}
"""

# the same with a small ring (CONFIG_CMPROF_RING_SIZE=64): the sleep is for half of it at most, not the
# 2 lines (64 samples) that fill it
WAKE_SMALL_RING_MAIN = r"""
#include <stdio.h>
int main(void)
{
    unsigned bad = 0;
    for (uint32_t us = 1; us <= 20000u; us = us * 3u + 1u)
        for (uint32_t left = 0; left <= 40u; left++)
            if (drain_wait_us(left, us) > (uint64_t)CONFIG_CMPROF_RING_SIZE / 2u * us && !bad++)
                printf("left %u at %u us: %u\n", (unsigned)left, (unsigned)us, (unsigned)drain_wait_us(left, us));
    printf("%u wrong\n", bad);
    return 0;
}
"""


def module_part_run(name, pattern, found, before, after, builds):
    """The part of zephyr/cmprof_module.c that `pattern` matches, built on the host between `before`
    and `after` and run: (the part, its output), or (None, None) when it is missing or fails to build
    (each checked: `found`, `builds`)."""
    m = re.search(pattern, open(os.path.join(ZMOD, "cmprof_module.c")).read(), re.M | re.S)
    check(found, m is not None)
    if m is None:
        return None, None
    src, exe = os.path.join(TMP, name + ".c"), os.path.join(TMP, name)
    open(src, "w").write(before + m.group(0) + after)
    r = run(["cc", "-O2", "-o", exe] + WARN + [src])
    check(builds, r.returncode == 0, first_error(r))
    return (m.group(0), run([exe]).stdout.strip()) if r.returncode == 0 else (None, None)


def wake():
    part, out = module_part_run("wake", r"^#define DRAIN_LINES .*?^static uint32_t drain_wait_us\(.*?^}\n",
                                "Zephyr: the module's drain sleeps until lines are due (drain_wait_us), not a fixed 20 ms",
                                "#include <stdint.h>\n#define CMPROF_STREAM_LINE 32u\n#define CONFIG_CMPROF_DRAIN_MS 100\n"
                                "#define CONFIG_CMPROF_RING_SIZE 1024\n",
                                WAKE_MAIN, "Zephyr: drain_wait_us builds on the host")
    if part is None:
        return
    _, small = module_part_run("wake_small_ring", r"^#define DRAIN_LINES .*?^static uint32_t drain_wait_us\(.*?^}\n",
                               "Zephyr: drain_wait_us found again", "#include <stdint.h>\n#define CMPROF_STREAM_LINE 32u\n"
                               "#define CONFIG_CMPROF_DRAIN_MS 100\n#define CONFIG_CMPROF_RING_SIZE 64\n",
                               WAKE_SMALL_RING_MAIN, "Zephyr: drain_wait_us builds on the host with a ring of 64")
    check("Zephyr: with a ring of 64 samples the drain sleeps for 32 samples at most (2 lines, 64, filled it at "
          "the wake: any lateness lost samples)", small == "0 wrong", small)
    lines = int(re.search(r"^#define DRAIN_LINES (\d+)u", part, re.M).group(1))
    check("Zephyr: the drain sleeps until 2 lines can be full (the samples the stream says no line is full "
          "for, plus a line), at most CONFIG_CMPROF_DRAIN_MS", lines == 2 and out == "0 wrong", out)
    cmake = open(os.path.join(ZMOD, "CMakeLists.txt")).read()
    retired = re.search(r"CMPROF_TASKS_RETIRED=(\d+)u", cmake)
    ring = int(re.search(r"#define CMPROF_TASKS_RETIRED (\d+)u",
                         open(os.path.join(FW, "cmprof_tasks.h")).read()).group(1))
    check("Zephyr: the names the tick retires between two passes have room: the module's ring holds a line's "
          "(%d) for each line a pass (bench/zephyr_churn: with 8, 3-line passes left a late host 21 samples unnamed)" % ring,
          retired is not None and int(retired.group(1)) >= ring * lines, retired and retired.group(0))
    standin = re.search(r"^SRC_test_zephyr :=.*?CMPROF_TASKS_RETIRED=(\d+)u", open(os.path.join(ROOT, "Makefile")).read(),
                        re.M | re.S)
    check("Zephyr: the module's stand-in (test_zephyr) is built with the module's ring of retired names",
          retired is not None and standin is not None and standin.group(1) == retired.group(1),
          "module %s, stand-in %s" % (retired and retired.group(1), standin and standin.group(1)))
    sleep_rest()


# drain_sleep between stand-ins: k_usleep records its waits, the ring holds `pending` samples at the wake
SLEEP_PRE = """#include <stdint.h>
#include <stdio.h>
#define CMPROF_STREAM_LINE 32u
#define CONFIG_CMPROF_DRAIN_MS 100
#define CONFIG_CMPROF_RING_SIZE 1024
static uint32_t cmprof_stream_quiet_to, samples, pending, waits[4], n_waits;
static uint32_t cmprof_samples(void) { return samples; }
static uint32_t cmprof_stream_pending(void) { return pending; }
static void k_usleep(int32_t us) { waits[n_waits++ & 3u] = (uint32_t)us; }
"""
SLEEP_MAIN = r"""
int main(void)
{
    unsigned wrong = 0;
    /* 31 samples to a full line: 31 + 32 slept; at the wake 64 wait (2 lines): no more sleep */
    samples = 1000u, cmprof_stream_quiet_to = 1030u, pending = 64u, n_waits = 0u;
    drain_sleep(1000u);
    wrong += n_waits != 1u || waits[0] != 63000u;
    /* the kernel's clock ran ahead: 43 wait at the wake, the 21 missing samples slept */
    pending = 43u, n_waits = 0u;
    drain_sleep(1000u);
    wrong += n_waits != 2u || waits[0] != 63000u || waits[1] != 21000u;
    /* ... within CONFIG_CMPROF_DRAIN_MS in all (2,000 us a sample: 100 ms at once, nothing more) */
    pending = 10u, n_waits = 0u;
    drain_sleep(2000u);
    wrong += n_waits != 1u || waits[0] != 100000u;
    pending = 10u, n_waits = 0u, cmprof_stream_quiet_to = 1010u; /* 11 + 32 samples of 2,000 us: 86 ms, 14 more */
    drain_sleep(2000u);
    wrong += n_waits != 2u || waits[0] != 86000u || waits[1] != 14000u;
    printf("%u wrong\n", wrong);
    return 0;
}
"""


def sleep_rest():
    _, out = module_part_run("sleep_rest", r"^#define DRAIN_LINES .*?^static void drain_sleep\(.*?^}\n",
                             "Zephyr: the drain sleeps the rest when woken before two lines are there (drain_sleep)",
                             SLEEP_PRE, SLEEP_MAIN, "Zephyr: drain_sleep builds on the host")
    check("Zephyr: woken with fewer than 2 lines in the ring (the kernel's clock ahead of the sampler's "
          "timer), the drain sleeps for the samples missing, within CONFIG_CMPROF_DRAIN_MS; with 2 lines, "
          "no more", out == "0 wrong", out)


# ---- line --------------------------------------------------------------------------------------

# write_line's own text from the module, between stand-ins for the driver's API, the UART's device
# and the scheduler's lock (line_begin takes it, write_line gives it back)
LINE_PRELUDE = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
struct device { const void *api; };
struct uart_driver_api {
    int (*poll_in)(const struct device *dev, unsigned char *c);
    void (*poll_out)(const struct device *dev, unsigned char c);
};
static unsigned char got[4096];
static unsigned n_got, wrong_dev, locked;
static const struct device dev;
static void fake_poll_out(const struct device *d, unsigned char c)
{
    wrong_dev += d != &dev;
    got[n_got++ % sizeof got] = c;
}
static const struct uart_driver_api api = {NULL, fake_poll_out};
static const struct device dev = {&api};
static const struct device *const cmprof_uart = &dev;
static void line_begin(void) { locked++; }
static void k_sched_unlock(void) { locked--; }
"""
LINE_MAIN = r"""
int main(void)
{
    static char line[1100];
    unsigned bad = 0;
    for (unsigned k = 0; k < sizeof line; k++)
        line[k] = (char)(k * 7u + 1u);
    for (uint32_t len = 0; len <= 1030u; len++) {
        n_got = 0;
        write_line(line, len);
        if (n_got != len || memcmp(got, line, len) != 0 || locked != 0u || wrong_dev != 0u) {
            if (!bad++)
                printf("len %u: %u bytes out, lock %u\n", (unsigned)len, n_got, locked);
        }
    }
    printf("%u lengths wrong\n", bad);
    return 0;
}
"""


def line():
    part, out = module_part_run("line", r"^static void write_line\(.*?^}\n", "Zephyr: the module has its write_line",
                                LINE_PRELUDE, LINE_MAIN,
                                "Zephyr: write_line builds on the host with stand-ins for the UART driver")
    if part is None:
        return
    check("Zephyr: write_line hands poll_out every byte of a line in order, at every length from 0 to 1,030 "
          "(32-byte passes entered part-way), the scheduler's lock given back", out == "0 lengths wrong", out)
    module = re.search(r"CMPROF_STREAM_LINE=(\d+)", open(os.path.join(ZMOD, "CMakeLists.txt")).read())
    standin = re.search(r"^SRC_test_zephyr :=.*?CMPROF_STREAM_LINE=(\d+)", open(os.path.join(ROOT, "Makefile")).read(),
                        re.M | re.S)
    module, standin = module and int(module.group(1)), standin and int(standin.group(1))
    check("Zephyr: the module's stream lines are as long as the stand-in's that make test churns (test_zephyr), "
          "at most 32 samples (at 40 the stand-in fails its checks of every sample's name under churn)",
          module is not None and module == standin and module <= 32, "module %s, stand-in %s" % (module, standin))


# ---- dump --------------------------------------------------------------------------------------

# what both dump programs begin with: the kernel's state, cmprof's hooks, the rest of the trace points
DUMP_PRELUDE = r"""
#include <stdio.h>
#include <string.h>
#include <tracing_user.h>
#include "cmprof.h"
struct z_kernel _kernel;
int standin_lock_depth;
void __wrap_sys_trace_thread_create(struct k_thread *t);
void __wrap_sys_trace_thread_name_set(struct k_thread *t);
void thread_abort_hook(struct k_thread *thread);
void __real_sys_trace_thread_create(struct k_thread *t) { (void)t; }
void __real_sys_trace_thread_name_set(struct k_thread *t) { (void)t; }
void __real_sys_trace_thread_abort(struct k_thread *t) { (void)t; }
void __real_sys_trace_k_thread_switched_out(void) {}
static void out(char c) { putchar(c); }
"""
DUMP_MAIN = DUMP_PRELUDE + r"""
int main(void)
{
    static struct k_thread t[3];
    const char *names[3] = {"idle", "work10", "cmprof_drain"};
    cmprof_start(1000, 6);
    for (int i = 0; i < 3; i++) {
        strcpy(t[i].name, names[i]);
        __wrap_sys_trace_thread_create(&t[i]);
        standin_current = &t[i]; /* (the kernel's switch; cmprof reads it) */
        cmprof_tick_frame(0x1000u + 16u * (unsigned)i, 0u);
        cmprof_tick_frame(0x1002u + 16u * (unsigned)i, 0u);
    }
    cmprof_dump(out);
    return 0;
}
"""


# A thread made as k_thread_create and k_thread_name_set make one (no name, then its name), run for
# a number of samples
DUMP_RUN = r"""
static void run(struct k_thread *t, const char *name, unsigned samples)
{
    t->name[0] = '\0';
    __wrap_sys_trace_thread_create(t);
    strcpy(t->name, name);
    __wrap_sys_trace_thread_name_set(t);
    standin_current = t; /* (the kernel's switch; cmprof reads it) */
    for (unsigned k = 0; k < samples; k++)
        cmprof_tick_frame(0x1000u + 2u * k, 0u);
}
"""


# Threads made in new blocks and aborted by another (a worker pool on the heap): 40 of them, then
# 3 that stay, with 8 slots. Zephyr 4.3's k_thread_abort reaches no trace point, only the kernel's
# thread_abort_hook (CONFIG_THREAD_ABORT_HOOK, which the module selects for a dump), called here as
# the kernel calls it, for each.
DUMP_CHURN_MAIN = DUMP_PRELUDE + DUMP_RUN + r"""
int main(void)
{
    static struct k_thread pool[40], stay[3];
    cmprof_start(1000, 1000);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "pool%02d", i);
        run(&pool[i], name, 1);
        thread_abort_hook(&pool[i]); /* aborted by the manager */
    }
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "stay%d", i);
        run(&stay[i], name, 4);
    }
    cmprof_dump(out);
    for (int i = 0; i < 3; i++)
        printf("block %lx stay%d\n", (unsigned long)(uintptr_t)&stay[i], i);
    for (int i = 0; i < 40; i++)
        printf("block %lx pool%02d\n", (unsigned long)(uintptr_t)&pool[i], i);
    return 0;
}
"""


# More live threads than slots (4), and a block aborted and re-created under another name beside
# one re-created under its own (a worker pool): the dump says the table was full and which block
# had two names, and keeps the earlier name; the worker's block says nothing.
DUMP_FULL_MAIN = DUMP_PRELUDE + DUMP_RUN + r"""
int main(void)
{
    static struct k_thread reused, worker, live[5];
    cmprof_start(1000, 1000);
    run(&reused, "first", 2);
    thread_abort_hook(&reused);
    run(&reused, "second", 2);
    run(&worker, "worker", 1);
    thread_abort_hook(&worker);
    run(&worker, "worker", 1);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "live%d", i);
        run(&live[i], name, 1);
    }
    cmprof_dump(out);
    printf("block %lx reused\nblock %lx worker\n", (unsigned long)(uintptr_t)&reused,
           (unsigned long)(uintptr_t)&worker);
    return 0;
}
"""


def dump_build(name, text, extra):
    """A dump build of the module's library files (those its CMake builds in every mode) and `text`;
    its output's lines, or None and a failed check."""
    cmake = open(os.path.join(ZMOD, "CMakeLists.txt")).read()
    srcs = [os.path.join(FW, "cmprof_sampler.c"), os.path.join(FW, "rtos", "cmprof_zephyr.c")]
    for f in ("cmprof_stream.c", "cmprof_tasks.c"):  # in every build, not only streaming
        if re.search(r"zephyr_library_sources\([^)]*%s" % re.escape(f), cmake):
            srcs.append(os.path.join(FW, f))
    main = os.path.join(TMP, name + ".c")
    open(main, "w").write(text)
    exe = os.path.join(TMP, name)
    r = run(["cc", "-o", exe, "-I" + FW, "-I" + STANDIN, "-include", os.path.join(HERE, "fake_regs.h"),
             os.path.join(HERE, "fake_regs.c"), "-DCMPROF_NO_ISR=1", "-DCMPROF_PORT=CMPROF_PORT_SYSTICK",
             "-DCMPROF_TAG=cmprof_current_task", "-DCMPROF_RING_N=64", "-DCMPROF_STREAM_NAMES_KEPT=1"]
            + extra + [o for o in module_link_options() if "defsym" in o] + WARN + srcs + [main])
    return (run([exe]).stdout.splitlines(), "") if r.returncode == 0 else (None, first_error(r))


def abort_hook_build(name, text, slots):
    """A dump build with `slots` slots and the kernel's abort hook when the Kconfig selects it: its
    lines (or None), the error, and whether it does."""
    kconfig = open(os.path.join(ZMOD, "Kconfig")).read()
    hook = re.search(r"^config CMPROF_ABORT_HOOK\n(?:\t.*\n)*?\tselect THREAD_ABORT_HOOK", kconfig, re.M)
    lines, err = dump_build(name, text, ["-DCMPROF_STREAM_TASKS=%d" % slots]
                            + (["-DCONFIG_CMPROF_ABORT_HOOK=1"] if hook else []))
    return lines, err, hook is not None


def dump_churn():
    """Dump mode under churn: threads aborted in blocks of their own free their slots."""
    lines, err, hook = abort_hook_build("dump_churn", DUMP_CHURN_MAIN, 8)
    if lines is None:
        check("Zephyr dump mode: threads aborted by another free their slots (8 slots, 40 aborted)", False, err)
        return
    block = {int(ln.split()[1], 16) & 0xFFFFFFFF: ln.split()[2] for ln in lines if ln.startswith("block ")}
    tasks = [(int(ln.split()[1], 16), ln.split()[2]) for ln in lines if ln.startswith("task ")]
    named = {name for tag, name in tasks}
    wrong = [(hex(tag), name) for tag, name in tasks if block.get(tag) != name]  # (a dump's tags: 32 bits)
    check("Zephyr dump mode: threads aborted by another (k_thread_abort: the kernel's abort hook) free their "
          "slots: the 3 threads alive at the dump named, among 40 aborted, with 8 slots, no task line misnamed",
          {"stay0", "stay1", "stay2"} <= named and not wrong and hook,
          "named %s, misnamed %s, Kconfig selects the abort hook: %s" % (sorted(named), wrong, hook))


def dump_full():
    """Dump mode with more threads than slots and a block reused under another name: both said."""
    lines, err, _ = abort_hook_build("dump_full", DUMP_FULL_MAIN, 4)
    if lines is None:
        check("Zephyr dump mode: a full table and a reused block are said", False, err)
        return
    block = {ln.split()[2]: "%08x" % (int(ln.split()[1], 16) & 0xFFFFFFFF) for ln in lines if ln.startswith("block ")}
    said = [ln for ln in lines if ln.startswith("tasks ")]
    want = {"tasks reused %s" % block.get("reused"), "task %s first" % block.get("reused"),
            "task %s second" % block.get("reused")}
    full = [ln for ln in said if re.match(r"tasks slots=4 full=[1-9]\d* forgot=0$", ln)]
    check("Zephyr dump mode: more threads than the table's 4 slots, and a block re-created under another name: "
          "the dump says the table was full (tasks slots=4 full=N), the block's two names and that it was "
          "reused; the worker re-created under its name says nothing",
          full and want <= set(lines) and not any(block.get("worker") in ln for ln in said)
          and sum(ln.endswith(" worker") for ln in lines if ln.startswith("task ")) == 1,
          "tasks lines %s, task lines %s" % (said, [ln for ln in lines if ln.startswith("task ")]))


def dump():
    """The module's dump build: the library files its CMake builds in every mode (the task table,
    cmprof_tasks.c, among them) name the threads without CMPROF_STREAM; then the same under churn."""
    lines, err = dump_build("dump", DUMP_MAIN, [])
    if lines is None:
        check("Zephyr dump mode: the threads are named in the dump", False, err)
    else:
        named = sorted(ln.split()[2] for ln in lines if ln.startswith("task "))
        check("Zephyr dump mode: the threads are named in the dump (task lines for idle, work10, cmprof_drain)",
              named == ["cmprof_drain", "idle", "work10"], "task lines: %s" % named)
    dump_churn()
    dump_full()


# ---- options -----------------------------------------------------------------------------------


def kconfig_entries(text):
    """(kind, name, body lines) of every config/menuconfig entry."""
    entries, cur = [], None
    for ln in text.splitlines():
        m = re.match(r"(menuconfig|config|choice|endchoice|if|endif|comment|menu|endmenu)\b\s*(\w*)", ln)
        if m:
            cur = (m.group(1), m.group(2), []) if m.group(1) in ("config", "menuconfig", "choice") else None
            if cur:
                entries.append(cur)
        elif cur:
            cur[2].append(ln.strip())
    return entries


def options():
    text = open(os.path.join(ZMOD, "Kconfig")).read()
    entries = kconfig_entries(text)
    no_help = [n for k, n, body in entries if k != "choice" and "help" not in body]
    check("Zephyr Kconfig: every option has help", entries and not no_help, "no help: %s" % no_help)
    ints = [n for k, n, body in entries if any(b.startswith(("int ", "hex ")) for b in body)]
    no_range = [n for k, n, body in entries if n in ints and not any(b.startswith("range ") for b in body)]
    check("Zephyr Kconfig: every number has a range", ints and not no_range, "no range: %s" % no_range)
    top = next((body for k, n, body in entries if n == "CMPROF"), [])
    check("Zephyr Kconfig: CMPROF depends on TRACING_USER instead of selecting the visible TRACING",
          "depends on TRACING_USER" in top and not any(b.startswith("select TRACING") for b in top), str(top[:6]))
    checks = os.path.join(ZMOD, "cmprof_checks.cmake")
    for value, good in (("0x3ff", True), ("0x0", True), ("0xffff", True), ("0x3fe", False), ("0x400", False)):
        r = run(["cmake", "-DCONFIG_CMPROF_JITTER=" + value, "-DCONFIG_CMPROF_RING_SIZE=1024",
                 "-DCONFIG_CMPROF_RESERVOIR=32", "-P", checks])
        said = "CONFIG_CMPROF_JITTER" in r.stderr and "power" in r.stderr
        check("Zephyr configure: CONFIG_CMPROF_JITTER=%s is %s" % (value, "taken" if good else "refused, naming it"),
              os.path.exists(checks) and (r.returncode == 0 if good else r.returncode != 0 and said),
              (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0][:160])
    # your own timer with no interrupt line: an MPS3 AN547 (Zephyr 4.3: no CMSDK timer, no counter in its
    # devicetree) took it by default, built, and announced a sampler that never sent a sample
    for opts, good in ((["-DCONFIG_CMPROF_TIMER_USER_IRQ=-1"], False), (["-DCONFIG_CMPROF_TIMER_USER_IRQ=19"], True),
                       (["-DCONFIG_CMPROF_TIMER_USER_IRQ=-1", "-DCMPROF_CHOSEN_TIMER_IRQ=TRUE"], True),
                       (["-DCONFIG_CMPROF_TIMER_USER_IRQ=-1", "-DCONFIG_CMPROF_TIMER_USER_APP_CONNECTS=y"], True)):
        r = run(["cmake", "-DCONFIG_CMPROF_JITTER=0x3ff", "-DCONFIG_CMPROF_TIMER_USER=y"] + opts + ["-P", checks])
        said = "CONFIG_CMPROF_TIMER_USER_IRQ" in r.stderr and "no interrupt line" in r.stderr
        check("Zephyr configure: your own timer with %s is %s" % (" ".join(o[2:] for o in opts),
                                                                   "taken" if good else "refused, saying what to add"),
              r.returncode == 0 if good else r.returncode != 0 and said,
              (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0][:160])
    sample_cmake = open(os.path.join(ROOT, "samples", "cmprof", "CMakeLists.txt")).read()
    check("Zephyr sample: the Stellaris timer file goes into qemu_cortex_m3's image only",
          re.search(r"if\(CONFIG_CMPROF_TIMER_USER AND CONFIG_BOARD_QEMU_CORTEX_M3\)\s*\n\s*target_sources\(app PRIVATE "
                    r"src/own_timer_stellaris.c\)", sample_cmake) is not None, "samples/cmprof/CMakeLists.txt")
    r = run(["cmake", "-DCONFIG_CMPROF_JITTER=0x3ff", "-DCONFIG_CMPROF_RING_SIZE=1000", "-P", checks])
    check("Zephyr configure: CONFIG_CMPROF_RING_SIZE=1000 is refused (not a power of two)",
          r.returncode != 0 and "CONFIG_CMPROF_RING_SIZE" in r.stderr, r.stderr.strip()[:160])
    # a ring under two lines: the drain asked for RING_SIZE / 32 lines a pass, 0 for 16, and never sent one
    for size, stream, good in (("32", "y", False), ("16", "y", False), ("64", "y", True), ("16", "n", True)):
        r = run(["cmake", "-DCONFIG_CMPROF_JITTER=0x3ff", "-DCONFIG_CMPROF_RING_SIZE=" + size,
                 "-DCONFIG_CMPROF_TRANSPORT_STREAM=" + stream, "-P", checks])
        check("Zephyr configure: CONFIG_CMPROF_RING_SIZE=%s %s %s" % (
                  size, "with the stream" if stream == "y" else "in dump mode",
                  "is taken" if good else "is refused (under two lines: no line would ever go out)"),
              r.returncode == 0 if good else r.returncode != 0 and "at least 64" in r.stderr,
              (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0][:160])
    doc = os.path.join(ROOT, "docs", "zephyr.md")
    doc_text = open(doc).read() if os.path.exists(doc) else ""
    check("Zephyr docs: a west manifest snippet that adds cmprof as a module",
          re.search(r"manifest:\s*\n(.*\n)*?\s*projects:\s*\n(.*\n)*?\s*- name: cmprof", doc_text) is not None,
          "docs/zephyr.md")
    sample = os.path.join(ROOT, "samples", "cmprof", "sample.yaml")
    sample_text = open(sample).read() if os.path.exists(sample) else ""
    check("Zephyr sample: samples/cmprof/sample.yaml runs on mps2/an385 with a console check",
          "mps2/an385" in sample_text and "harness: console" in sample_text, sample)


def main():
    parts = {"boards": boards, "chain": chain, "chain_stream": chain_stream, "include": include, "dump": dump, "line": line, "wake": wake,
             "options": options}
    for name in sys.argv[1:] or list(parts):
        parts[name]()


main()
