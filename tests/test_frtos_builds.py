#!/usr/bin/env python3
"""Issue 30: further builds of the FreeRTOS scenario (scenarios/frtos/) against the real kernel in
../shared/third_party/FreeRTOS-Kernel, beside the runs scen.py checks:
  - a trace recorder that takes the task hooks, with cmprof's NOT chained: the build stops at the
    header's #error, which names the macro and the hook to call;
  - a recorder's header after cmprof's (tests/frtos_order/: a stand-in that #undefs and redefines
    the hooks as TraceRecorder does): the kernel does not build, and says which hook was lost;
    before it, chained: tasks.o calls both tools' hooks;
  - the kernel's ARM_CM0 and ARM_CM4F ports: built and linked under -Werror; the M4F build runs on
    QEMU's mps2-an386 (Cortex-M4, the AN385's peripherals) and its stream names every task;
  - dump mode linked with --gc-sections (the scenario links without): it runs, and the dump names
    the tasks;
  - the library as FreeRTOS's own demos build it (-ffreestanding: -fno-builtin): the stream's
    per-sample word copies stay inline (a memcpy call there cost about 20 instructions a sample),
    and the tick's task lookup (CMPROF_TAG_NAMES) calls nothing but on a miss.
The tool is read from CMPROF_TOOL (default build/cmprof-top). Prints one ok/FAIL line per check."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import harness  # noqa: E402
from harness import check  # noqa: E402
import scen  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
OUT = os.path.join(ROOT, "build", "frtos-builds")


def build(tag, cpu, base="frtos", extra=(), **defs):
    """(elf or None, error text) of the scenario's application built for cpu."""
    s = dict(scen.SCENARIOS[base])
    s["defs"] = dict(s["defs"], **defs)
    out = os.path.join(OUT, tag)
    os.makedirs(out, exist_ok=True)
    try:
        return scen.build_frtos(s, out, cpu, extra), ""
    except RuntimeError as e:
        return None, str(e)


def run(elf, machine):
    """The UART text of one run, no plugin; None when QEMU fails or the run does not end."""
    uart = os.path.join(os.path.dirname(elf), "uart.txt")
    r = subprocess.run(["qemu-system-arm", "-M", machine, "-display", "none", "-monitor", "none", "-serial",
                        "file:" + uart, "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
                        "-kernel", elf], capture_output=True, text=True, timeout=300)
    text = open(uart, errors="replace").read() if os.path.exists(uart) else ""
    return text if r.returncode == 0 and "frtos taken=" in text else None, r.stderr + text[-300:]


def by_task(capture, elf):
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--by", "task", "--no-inline", capture, elf],
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode in (0, 2) and r.stdout else None


def unchained_recorder():
    elf, err = build("recorder_unchained", "cortex-m3", base="frtos_recorder", FRTOS_UNCHAINED=1)
    check("a recorder's task hooks not chained: the build stops at the header's #error, naming the macro and the fix",
          elf is None and "traceTASK_SWITCHED_IN is defined already" in err and "CMPROF_FREERTOS_SWITCHED_IN()" in err
          and "CMPROF_FREERTOS_CHAINED" in err and "redefined" not in err,
          "built" if elf else " ".join(re.findall(r"error: #error[^\n]*", err))[:400])


ORDER = os.path.join(HERE, "frtos_order")  # a stand-in recorder that #undefs the hooks, and two configs


def kernel_object(tag, config_dir, source="tasks.c"):
    """(object or None, compiler output) of one kernel file built as the FreeRTOS scenario builds it
    (ARM_CM3), its FreeRTOSConfig.h from config_dir (-iquote: found before the scenario's own)."""
    s = scen.SCENARIOS["frtos"]
    out = os.path.join(OUT, tag)
    os.makedirs(out, exist_ok=True)
    obj = os.path.join(out, source.replace(".c", ".o"))
    port = os.path.join(scen.FREERTOS, "portable", "GCC", "ARM_CM3")
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-mcpu=cortex-m3", "-mthumb",
           "-mfloat-abi=soft"] + (["-iquote", config_dir] if config_dir else []) + [
           "-I" + os.path.join(ROOT, "scenarios", "frtos"), "-I" + os.path.join(scen.FREERTOS, "include"), "-I" + port,
           "-I" + os.path.join(ROOT, "firmware"), "-I" + os.path.join(ROOT, "scenarios", "board"), "-DBOARD_mps2"]
    cmd += ["-D%s=%s" % (k, v) for k, v in sorted(s["defs"].items())]
    cmd += ["-c", os.path.join(scen.FREERTOS, source), "-o", obj]
    if os.path.exists(obj):
        os.remove(obj)
    r = subprocess.run(cmd, capture_output=True, text=True)
    return (obj if r.returncode == 0 else None), r.stderr


def undefined_symbols(obj):
    r = subprocess.run(["arm-none-eabi-nm", "-u", obj], capture_output=True, text=True)
    return {ln.split()[-1] for ln in r.stdout.splitlines() if ln.strip()}


def include_order():
    """Both orders of a trace recorder's header and cmprof's, against the real kernel: the recorder
    after cmprof's header (it #undefs and redefines the task hooks, as TraceRecorder does) stops
    the build naming the hook; before it, chained, tasks.o calls both tools' hooks."""
    cmprof_hooks = {"cmprof_stream_task_new", "cmprof_stream_task_gone", "cmprof_current_task"}
    recorder_hooks = {"trc_task_switched_in", "trc_task_create", "trc_task_delete"}
    obj, err = kernel_object("order_none", None)
    syms = undefined_symbols(obj) if obj else set()
    check("no recorder: tasks.o calls cmprof's three hooks", obj is not None and cmprof_hooks <= syms,
          err[-400:] if not obj else "missing %s" % sorted(cmprof_hooks - syms))
    obj, err = kernel_object("order_early", os.path.join(ORDER, "early"))
    syms = undefined_symbols(obj) if obj else set()
    check("the recorder's header first, hooks chained: tasks.o calls both tools' hooks",
          obj is not None and (cmprof_hooks | recorder_hooks) <= syms,
          err[-400:] if not obj else "missing %s" % sorted((cmprof_hooks | recorder_hooks) - syms))
    obj, err = kernel_object("order_late", os.path.join(ORDER, "late"))
    errors = re.findall(r"error: static assertion failed: \"([^\n]*)", err)
    named = [h for h in ("traceTASK_SWITCHED_IN", "traceTASK_CREATE", "traceTASK_DELETE")
             if any(e.startswith("cmprof: %s was redefined after rtos/cmprof_freertos.h" % h) for e in errors)]
    check("the recorder's header after cmprof's (it #undefs the hooks): tasks.c does not build, with one error "
          "for each lost hook naming it and the fix",
          obj is None and len(named) == 3 and len(errors) == 3 and all("Trace recorders" in e for e in errors),
          "built, cmprof's hooks lost" if obj else "named %s in %d errors: %s" % (named, len(errors), errors[:1]))


def other_ports():
    for cpu, port in (("cortex-m0", "ARM_CM0"), ("cortex-m4", "ARM_CM4F")):
        elf, err = build("port_" + port, cpu, FRTOS_DIRECT=1)
        check("the %s port builds and links with the recipe under -Werror" % port, elf is not None, err[-600:])
        if cpu != "cortex-m4" or not elf:
            continue
        text, err = run(elf, "mps2-an386")
        if not check("the ARM_CM4F build runs on mps2-an386 to its end", text is not None, "" if text else err[-400:]):
            continue
        kv = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text.splitlines()[-1])}
        j = by_task(os.path.join(os.path.dirname(elf), "uart.txt"), elf)
        rows = {row["name"]: row["samples"] for row in j["rows"]} if j else {}
        unnamed = [k for k in rows if k.startswith("0x") or k.startswith("(")]
        check("the ARM_CM4F run: every sample decoded and named, 100+ task rows, idle among them",
              j is not None and j["total"] == kv.get("taken") and kv.get("lost") == 0 and not unnamed
              and "idle" in rows and len([k for k in rows if not k.startswith("ISR: ")]) >= 100,
              "%s samples of %s taken, %s lost, %d rows, unnamed %s" % (
                  j and j["total"], kv.get("taken"), kv.get("lost"), len(rows), unnamed[:3]))


def dump_gc_sections():
    elf, err = build("dump_gc", "cortex-m3", base="frtos_dump",
                     extra=("-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections"))
    if not check("dump mode links with --gc-sections", elf is not None, err[-600:]):
        return
    text, err = run(elf, "mps2-an385")
    if not check("dump mode with --gc-sections runs to its end", text is not None, "" if text else err[-400:]):
        return
    names = set(re.findall(r"^task [0-9a-f]{8} (\S+)$", text, re.M))
    j = by_task(os.path.join(os.path.dirname(elf), "uart.txt"), elf)
    rows = {row["name"] for row in j["rows"]} if j else set()
    check("dump mode with --gc-sections: the dump names the tasks, and every task row is one of them (or a "
          "block's several, '(merged)')",
          len(names) >= 100 and "idle" in names and j is not None and
          all(named_row(r, names) for r in rows if not r.startswith("ISR: ")),
          "%d names in the dump, rows not named %s" % (len(names), sorted(r for r in rows if not r.startswith("ISR: ")
                                                                         and not named_row(r, names))[:3]))


def named_row(row, names):
    """Whether a task row is a name of the dump's, or a reused block's names: "NEWEST+OLDER+N more (merged)"."""
    if not row.endswith(" (merged)"):
        return row in names
    parts = row[:-len(" (merged)")].split("+")
    return all(p in names or re.match(r"^(\d+ more|\?)$", p) for p in parts)


def dump_table_full():
    """A dump whose table (16 slots) is too small for the application's live tasks: the dump says so
    and the host shows one row that says it, with what to raise, never raw block addresses (each a
    row of its own, blamed on a missed hook). Before: 0x2000.... rows and a 'hook missed' diagnostic."""
    elf, err = build("dump_full", "cortex-m3", base="frtos_dump", CMPROF_STREAM_TASKS=16)
    if not check("dump mode, 16 slots: builds", elf is not None, err[-600:]):
        return
    text, err = run(elf, "mps2-an385")
    if not check("dump mode, 16 slots: runs to its end", text is not None, "" if text else err[-400:]):
        return
    said = re.findall(r"^tasks slots=16 full=(\d+) forgot=(\d+)$", text, re.M)
    j = by_task(os.path.join(os.path.dirname(elf), "uart.txt"), elf)
    rows = {row["name"]: row["samples"] for row in j["rows"]} if j else {}
    raw = [r for r in rows if r.startswith("0x")]
    full = rows.get("(task table full: raise CMPROF_STREAM_TASKS)", 0)
    diags = " ".join(str(d) for d in j["diagnostics"]) if j else ""
    check("dump mode, 16 slots: the dump says its table was full, the host shows those samples in one "
          "'(task table full: raise CMPROF_STREAM_TASKS)' row, no raw block address row, no missed-hook advice",
          said and int(said[0][0]) > 0 and full > 0 and not raw and "missed" not in diags,
          "said %s, %d samples of %s in the full row, raw rows %s, diagnostics %s" % (
              said, full, j and j["total"], raw[:3], diags[:300]))


def freestanding_library():
    fw = os.path.join(ROOT, "firmware")
    os.makedirs(OUT, exist_ok=True)
    for tag_names in ("0", "1"):
        objs = {}
        for f in ("cmprof_stream.c", "cmprof_sampler.c"):
            obj = os.path.join(OUT, "free_%s_%s.o" % (tag_names, f[:-2]))
            r = subprocess.run(["arm-none-eabi-gcc", "-std=c11", "-Os", "-ffreestanding", "-mcpu=cortex-m3", "-mthumb",
                                "-I" + fw, "-DCMPROF_STREAM=1", "-DCMPROF_TAG=cmprof_current_task",
                                "-DCMPROF_STREAM_LINE=32", "-DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER",
                                "-DCMPROF_TAG_NAMES=" + tag_names, "-c", os.path.join(fw, f), "-o", obj],
                               capture_output=True, text=True)
            objs[f] = obj if r.returncode == 0 else None
        calls = undefined_symbols(objs["cmprof_stream.c"]) if objs["cmprof_stream.c"] else {"(no build)"}
        check("-ffreestanding, CMPROF_TAG_NAMES=%s: the stream's word copies are inline (no memcpy call)" % tag_names,
              "memcpy" not in calls, "calls %s" % sorted(calls))
        if tag_names == "1":
            calls = undefined_symbols(objs["cmprof_sampler.c"]) if objs["cmprof_sampler.c"] else {"(no build)"}
            check("-ffreestanding, CMPROF_TAG_NAMES=1: the tick's lookup calls only the miss",
                  "memcpy" not in calls and "cmprof_tasks_miss" in calls, "calls %s" % sorted(calls))


if __name__ == "__main__":
    steps = (unchained_recorder, include_order, other_ports, dump_gc_sections, dump_table_full, freestanding_library)
    for step in [st for st in steps if len(sys.argv) < 2 or st.__name__ in sys.argv[1:]]:
        try:
            step()
        except Exception as e:  # a step that could not run is a failure, never a skip
            check(step.__name__, False, "%s: %s" % (type(e).__name__, e))
    sys.exit(1 if harness.failed else 0)
