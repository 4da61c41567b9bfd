#!/usr/bin/env python3
"""The profiler-overhead figure and the idle share (defect D5 of issue 30's FreeRTOS check).
  1. An idle task is recognised by FreeRTOS's names ("IDLE", "IDLE0", "IDLE1"), Zephyr's ("idle",
     "idle 00") and the library's ("idle"); a task of another name is not one.
  2. The stream drain's quick exits (cmprof_stream_drain with less than a line waiting) taken in an
     idle task are idle time: the overhead leaves them out, the table says how much they were, the
     JSON gives them apart, the live view's header shows the real overhead, and --fold-overhead
     leaves them in their function's row. The same quick exits in any other task stay overhead.
  3. The same holds for a copy GCC made of the drain (cmprof_stream_drain.constprop.0).
Synthetic streams (fixed seed) against a copy of the frtos scenario's ELF (FreeRTOS) and against
two small sources of tests/zoo built here. Prints one ok/FAIL line per check; the tool is
build/cmprof-top, or CMPROF_TOOL."""
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from test_tui import line_of, tmux, tmux_main, wait_until  # noqa: E402

B64, line, check = harness.B64, harness.stream_line, harness.check_brief
TOOL = os.path.abspath(os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top")))
TMP = harness.scratch("idle-overhead-test")

# samples of each kind in every synthetic stream (1,600 in all): the shares are exact
APP, POLLS, IDLE_LOOP, DRAIN_WORK, LOOP_POLLS = 1200, 184, 120, 64, 32
TOTAL = APP + POLLS + IDLE_LOOP + DRAIN_WORK + LOOP_POLLS


def symbols(elf):
    """name -> address (the Thumb bit clear) of the ELF's functions."""
    out = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    return {f[2]: int(f[0], 16) & ~1 for f in (ln.split() for ln in out.splitlines())
            if len(f) == 3 and f[1] in "tT"}


def stream(idle_names, pcs, counts=(APP, POLLS, IDLE_LOOP, DRAIN_WORK, LOOP_POLLS)):
    """An announce (base 0), @task lines, and sample lines of 16 (each PC as its halfword offset): the idle task(s) (their samples
    spread over idle_names) polling the drain (POLLS) and in their own loop (IDLE_LOOP); 'worker'
    in the application (APP) and in the drain's work (DRAIN_WORK); 'loop', a task that polls the
    drain from its own loop as a bare-metal main loop does (LOOP_POLLS)."""
    app, polls, idle_loop, drain_work, loop_polls = counts
    names = [("A", 0x20000100, "worker"), ("B", 0x20000200, "loop")]
    names += [(B64[2 + k], 0x20000300 + 0x100 * k, n) for k, n in enumerate(idle_names)]
    idle = [B64[2 + k] for k in range(len(idle_names))]
    samples = [("A", pcs["app"])] * app + [("A", pcs["work"])] * drain_work + [("B", pcs["poll"])] * loop_polls
    samples += [(idle[k % len(idle)], pcs["poll"]) for k in range(polls)]
    samples += [(idle[k % len(idle)], pcs["idle"]) for k in range(idle_loop)]
    random.Random(30).shuffle(samples)
    out = line("@cmprof v=2 clk=1000000 tclk=1000000 period=100 jitter=0 base=00000000")
    out += "".join(line("@task %s %08x %s" % n) for n in names)
    for k in range(0, len(samples), 16):
        out += line("%" + "".join(t + "".join(B64[(pc >> 1 >> s) & 63] for s in (18, 12, 6, 0))
                                  for t, pc in samples[k:k + 16]))
    return out


def run(*args):
    r = subprocess.run([TOOL, "--batch"] + list(args), capture_output=True, timeout=120)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def figures(label, path, elf, idle_expected):
    """The table's and the JSON's overhead, idle polls and idle share for one capture."""
    polls = POLLS if idle_expected else 0
    overhead = 100.0 * (DRAIN_WORK + LOOP_POLLS + (0 if idle_expected else POLLS)) / TOTAL
    code, table, err = run(path, elf)
    lines = [ln for ln in table.splitlines() if ln.startswith("profiler overhead:")]
    want = ("profiler overhead: more than %.2f %%, the samples in cmprof's own firmware code outside the sampling "
            "interrupt (which cannot sample itself: its cost comes on top)" % overhead)
    if polls:
        want += " (the drain's idle polls, %.2f %%, counted as idle)" % (100.0 * polls / TOTAL)
    check("%s: the table's overhead line is '%s'" % (label, want), code == 0 and lines == [want],
          "exit %d: %s %s" % (code, lines, err))
    idle_lines = [ln for ln in table.splitlines() if ln.startswith("idle:")]
    want_idle = ["idle: %.2f %% of samples in the idle task" % (100.0 * (POLLS + IDLE_LOOP) / TOTAL)]
    check("%s: the table's idle line %s" % (label, "is " + want_idle[0] if idle_expected else "is absent"),
          idle_lines == (want_idle if idle_expected else []), idle_lines)
    code, out, err = run("-o", "json", path, elf)
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    check("%s: JSON overhead %.4f, overhead_idle_polls %.4f%s" % (
        label, overhead, 100.0 * polls / TOTAL, ", idle %.4f" % (100.0 * (POLLS + IDLE_LOOP) / TOTAL)
        if idle_expected else ", no idle"),
        j.get("total") == TOTAL and abs(j.get("overhead", -1) - overhead) < 1e-3 and
        abs(j.get("overhead_idle_polls", -1) - 100.0 * polls / TOTAL) < 1e-3 and
        (abs(j.get("idle", -1) - 100.0 * (POLLS + IDLE_LOOP) / TOTAL) < 1e-3 if idle_expected else "idle" not in j),
        {k: j.get(k) for k in ("total", "overhead", "overhead_idle_polls", "idle")} if j else out[-300:] + err)
    return j


def folded_rows(label, path, elf, wrapper):
    """--fold-overhead: the library's row holds the overhead's samples, the idle polls stay in the
    drain's own row."""
    code, out, err = run("-o", "json", "--no-inline", "--fold-overhead", path, elf)
    try:
        rows = {r["name"]: r["samples"] for r in json.loads(out)["rows"]}
    except (ValueError, KeyError):
        rows = {}
    check("%s: --fold-overhead: [cmprof overhead] has the overhead's %d samples, %s the idle polls' %d" % (
        label, DRAIN_WORK + LOOP_POLLS, wrapper, POLLS),
        rows.get("[cmprof overhead]") == DRAIN_WORK + LOOP_POLLS and rows.get(wrapper) == POLLS and
        sum(rows.values()) == TOTAL, rows if rows else err)


def frtos_cases():
    src = os.path.join(ROOT, "build", "scenarios", "frtos", "fw.elf")
    if not check("the frtos scenario's ELF is built", os.path.exists(src), src):
        return
    elf = os.path.join(TMP, "frtos.elf")  # a copy: a scenario rebuilt meanwhile must not move its addresses
    shutil.copyfile(src, elf)
    sym = symbols(elf)
    need = ("cmprof_stream_drain", "cmprof_stream_drain_lines", "prvIdleTask", "xQueueReceive")
    if not check("frtos: the ELF has %s" % ", ".join(need), all(n in sym for n in need), sorted(sym)[:20]):
        return
    pcs = {"app": sym["xQueueReceive"], "work": sym["cmprof_stream_drain_lines"], "poll": sym["cmprof_stream_drain"],
           "idle": sym["prvIdleTask"]}
    # FreeRTOS's name, SMP's one per core, Zephyr's, the library's; and a task that is no idle task
    for label, names, idle in (("IDLE", ["IDLE"], True), ("IDLE0 and IDLE1", ["IDLE0", "IDLE1"], True),
                               ("idle 00", ["idle 00"], True), ("idle", ["idle"], True),
                               ("not idle", ["IDLE_MON"], False)):
        path = os.path.join(TMP, "frtos %s.txt" % label)
        with open(path, "w") as f:
            f.write(stream(names, pcs))
        figures("frtos, %s" % label, path, elf, idle)
        if label == "IDLE":
            folded_rows("frtos, IDLE", path, elf, "cmprof_stream_drain")
            live_header(path, elf)


def live_header(path, elf):
    """The live view's header on the same capture: the real overhead and the idle share."""
    s = "cmprof-idle-overhead"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "160", "-y", "30", "%s '%s' '%s'; sleep 30" % (TOOL, path, elf))
    over = "overhead >%.1f %%" % (100.0 * (DRAIN_WORK + LOOP_POLLS) / TOTAL)  # (the interrupt's own on top)
    idle = "idle %.1f %%" % (100.0 * (POLLS + IDLE_LOOP) / TOTAL)
    shown = lambda t: ("end of file" in line_of(t, 0) and  # noqa: E731
                       all(re.search(r"(^|\s)%s(\s|$)" % re.escape(f), line_of(t, 1)) for f in (over, idle)))
    # the title says "end of file" a moment before the header under it is drawn again, and a capture
    # may catch that header half written (its old figures): the whole header waited for
    got = wait_until(s, shown, 30)
    check("live view: the header shows '%s' and '%s'" % (over, idle), shown(got), line_of(got, 1) or "no screen")
    tmux("kill-session", "-t", s)


def clone_case():
    """GCC's copy of the drain (cmprof_stream_drain.constprop.0) is the drain too."""
    elf = os.path.join(TMP, "drain_clone.elf")
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-Ttext=0x00001000",
                        "-Wl,-e,Reset_Handler", "-O2", "-g", "-fipa-cp-clone",
                        os.path.join(HERE, "zoo", "cmprof_drain_clone.c"), os.path.join(HERE, "zoo", "drain_clone_app.c"),
                        "-lgcc", "-o", elf], capture_output=True, text=True)
    if not check("clone: the drain stand-in builds", r.returncode == 0, r.stderr[-400:]):
        return
    sym = symbols(elf)
    clones = [n for n in sym if n.startswith("cmprof_stream_drain.")]
    if not check("clone: GCC copied the drain (cmprof_stream_drain.*) and no plain copy is left",
                 len(clones) == 1 and "cmprof_stream_drain" not in sym and "cmprof_stream_drain_lines" in sym,
                 sorted(n for n in sym if "drain" in n)):
        return
    # the work's own copy, when GCC made one, must not pass for the quick exit
    work = [n for n in sym if n.startswith("cmprof_stream_drain_lines.")] + ["cmprof_stream_drain_lines"]
    pcs = {"app": sym["app_work"], "work": sym[work[0]], "poll": sym[clones[0]],
           "idle": sym["idle_loop"]}
    path = os.path.join(TMP, "clone IDLE.txt")
    with open(path, "w") as f:
        f.write(stream(["IDLE"], pcs))
    figures("clone, IDLE", path, elf, True)
    code, out, err = run("-o", "json", "--no-inline", "--fold-overhead", path, elf)
    try:
        rows = {r["name"]: r["samples"] for r in json.loads(out)["rows"]}
    except (ValueError, KeyError):
        rows = {}
    check("clone: --fold-overhead leaves the copy's idle polls out of [cmprof overhead]",
          rows.get("[cmprof overhead]") == DRAIN_WORK + LOOP_POLLS and sum(rows.values()) == TOTAL, rows or err)
    small_overhead_header(pcs, elf)


def small_overhead_header(pcs, elf):
    """An overhead under 0.1 % reads as its first digit that is not 0, cut down so that ">" stays true
    (">0.02 %" for 1 sample in 4,000 and 0.025 %), never as the 0 of ">0.0 %"."""
    path = os.path.join(TMP, "small overhead.txt")
    with open(path, "w") as f:
        f.write(stream(["IDLE"], pcs, counts=(3984, 8, 7, 1, 0)))
    s = "cmprof-small-overhead"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "160", "-y", "30", "%s '%s' '%s'; sleep 30" % (TOOL, path, elf))
    shown = lambda t: "end of file" in line_of(t, 0) and "samples 4000" in line_of(t, 1)  # noqa: E731
    got = wait_until(s, shown, 30)
    check("live view: 1 overhead sample in 4,000 is 'overhead >0.02 %'",
          re.search(r"(^|\s)overhead >0\.02 %(\s|$)", line_of(got, 1)) is not None, line_of(got, 1) or "no screen")
    tmux("kill-session", "-t", s)


def main():
    os.makedirs(TMP, exist_ok=True)
    frtos_cases()
    clone_case()


if __name__ == "__main__":
    sys.exit(tmux_main(main))
