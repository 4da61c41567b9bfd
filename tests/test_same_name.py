#!/usr/bin/env python3
"""Two static functions of one name in two files (FreeRTOS's demo has prvNonBlockingReceiverTask in
StreamBufferDemo.c and in MessageBufferDemo.c) are two rows, each named "work (a.c)" as the name is
shared, with their own samples. Line information in part must split no function: halfwords past b.c's
work and past run_b (padding before aligned sections, as libgcc's __aeabi_ldiv0 and newlib's memset
have) answer "b.c:?" and "??:?", and stay in their function's row. A helper both files inline
(same.h) stays one row. The rows' names in every --batch format; the JSON report as a --baseline;
callers and callees of each work (samples with stacks); in the live view Enter opens only the chosen
function's lines, the selected line's inline chain is that function's, Enter on a call steps into the
callee in its file, and c lists that function's callers. tests/zoo/samename/, built at -O0 -g.
Prints one ok/FAIL line per check. The tool is build/cmprof-top, or CMPROF_TOOL."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check, check_brief  # noqa: E402
from test_live_view import dump, start  # noqa: E402
from test_tui import in_list, keys, tmux, tmux_main, wait_until  # noqa: E402

TOOL = os.path.abspath(os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top")))
OUT = harness.scratch("same_name")
SRC = os.path.join(HERE, "zoo", "samename")


def build():
    """The ELF; each (file's base name, line) -> the addresses of its instructions; each symbol
    (name, in address order) -> (start, end); each call's (address, target)."""
    os.makedirs(OUT, exist_ok=True)
    elf = os.path.join(OUT, "samename.elf")
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-O0", "-g",
                        "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler", os.path.join(SRC, "a.c"),
                        os.path.join(SRC, "b.c"), "-o", elf], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("samename: " + r.stderr[-400:])
    at, where, calls = {}, None, []
    dis = subprocess.run(["arm-none-eabi-objdump", "-dl", elf], capture_output=True, text=True).stdout
    for ln in dis.splitlines():
        m = re.match(r"^(/\S+):(\d+)", ln)
        if m:
            where = (os.path.basename(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\t.*\tbl\t([0-9a-f]+) <", ln)
        if m:
            calls.append((int(m.group(1), 16), int(m.group(2), 16)))
        m = re.match(r"^\s*([0-9a-f]+):\t", ln)
        if m and where:
            at.setdefault(where, []).append(int(m.group(1), 16))
    syms = []
    for ln in subprocess.run(["arm-none-eabi-nm", "-nS", elf], capture_output=True, text=True).stdout.splitlines():
        m = re.match(r"^([0-9a-f]+) ([0-9a-f]+) [tT] (\w+)$", ln)
        if m:
            syms.append((m.group(3), int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)))
    return elf, at, syms, calls


def line_of_marker(name, marker):
    with open(os.path.join(SRC, name)) as f:
        return next(i + 1 for i, ln in enumerate(f) if marker in ln)


def resolve(elf, addrs):
    """{address: [function, file:line]} (the innermost frame) from --resolve."""
    r = subprocess.run([TOOL, "--resolve", elf], input="".join("0x%x\n" % a for a in addrs), capture_output=True,
                       text=True)
    got, cur = {}, None
    for ln in r.stdout.splitlines():
        if ln.startswith("0x"):
            cur = got[int(ln, 16)] = []
        elif cur is not None and len(cur) < 2:
            cur.append(ln)
    return got


def batch(cap, elf, fmt, *extra):
    r = subprocess.run([TOOL, "--batch", "-o", fmt, *extra, cap, elf], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def rows_of(cap, elf, *extra):
    code, out, err = batch(cap, elf, "json", *extra)
    try:
        return code, json.loads(out)["rows"]
    except (ValueError, KeyError):
        return code, [{"name": "(no report)", "samples": 0, "file": err[-200:]}]


def shown(rows):
    return ", ".join("%s %s %s" % (r["name"], r["samples"], os.path.basename(r["file"])) for r in rows)


class Firmware:
    """The ELF and the places the captures sample."""

    def __init__(self):
        self.elf, at, syms, calls = build()
        start = {name: lo for name, lo, hi in syms if name != "work"}
        works = [(lo, hi) for name, lo, hi in syms if name == "work"]  # a.c's first: linked first
        ends = {name: hi for name, lo, hi in syms}
        self.a_loop = at[("a.c", line_of_marker("a.c", "A_LOOP"))][0]
        self.b_loop = at[("b.c", line_of_marker("b.c", "B_LOOP"))][0]
        mix = at[("same.h", line_of_marker("same.h", "MIX"))]
        self.mix_a = [x for x in mix if x < works[1][0]][0]
        self.mix_b = [x for x in mix if x >= works[1][0]][0]
        self.reset = at[("a.c", line_of_marker("a.c", "A_CALL"))][0]
        self.run_b = at[("b.c", line_of_marker("b.c", "B_CALL"))][0]
        # the halfwords past b.c's work and past run_b: the linker's padding before aligned sections
        self.pad_work = list(range(works[1][1], start["run_b"], 2))
        self.pad_run_b = list(range(ends["run_b"], start["after_b"], 2))
        self.call_work_a = next(a for a, to in calls if to == works[0][0])
        self.call_work_b = next(a for a, to in calls if to == works[1][0])
        self.call_run_b = next(a for a, to in calls if to == start["run_b"])

    def samples(self):
        """(pc, callers) of each sample: work (a.c) 50 + 15 in mix, work (b.c) 25 + 10 in mix + 4
        past its symbol, Reset_Handler 5, run_b 3 + 2 past its symbol; 114 in all. (Two addresses
        that start no instruction: three would make the capture another build's, PROF_BAD_PCS_MIN.)"""
        a, b = [self.call_work_a], [self.call_work_b, self.call_run_b]
        return ([(self.a_loop, a)] * 50 + [(self.mix_a, a)] * 15 + [(self.b_loop, b)] * 25 + [(self.mix_b, b)] * 10 +
                [(self.pad_work[0], b)] * 4 + [(self.reset, [])] * 5 +
                [(self.run_b, [self.call_run_b])] * 3 + [(self.pad_run_b[0], [self.call_run_b])] * 2)


def stacks_capture(path, samples):
    """A dump whose every sample carries its call stack ("stack PC CALLER...")."""
    with open(path, "w") as f:
        f.write("prof raw n=%d\n" % len(samples))
        for pc, callers in samples:
            f.write("p %08x\nstack %s\n" % (pc, " ".join("%08x" % a for a in [pc] + callers)))
        f.write("end\n")
    return path


def partial_line_checks(fw):
    got = resolve(fw.elf, [fw.pad_work[0], fw.pad_run_b[0], fw.b_loop])
    check("partial line information: past b.c's work and past run_b, --resolve names the function by the "
          "symbol before and no line (b.c:? and ??:?)",
          fw.pad_work and fw.pad_run_b and got.get(fw.pad_work[0], [""])[0] == "work" and
          got[fw.pad_work[0]][1].endswith(":?") and got.get(fw.pad_run_b[0]) == ["run_b", "??:?"] and
          re.search(r"/b\.c:%d\b" % line_of_marker("b.c", "B_LOOP"), got.get(fw.b_loop, ["", ""])[1]),
          "%d and %d halfwords: %s" % (len(fw.pad_work), len(fw.pad_run_b), got))


def batch_checks(fw, cap):
    elf = fw.elf
    code, rows = rows_of(cap, elf)
    got = {r["name"]: (r["samples"], os.path.basename(r["file"])) for r in rows}
    check("two functions named work: two rows, their own samples (b.c's with its halfwords past its symbol) "
          "and files",
          code == 0 and got.get("work (a.c)") == (50, "a.c") and got.get("work (b.c)") == (29, "b.c") and
          "work" not in got and all(r["file"].startswith(SRC) for r in rows if r["name"].startswith("work")),
          shown(rows))
    check("the helper both files inline (same.h): one row of both copies' samples",
          got.get("mix") == (25, "same.h") and sum(1 for r in rows if r["name"].startswith("mix")) == 1, shown(rows))
    check("a name no other function has stays as it is, its halfwords with no line in its row",
          got.get("Reset_Handler") == (5, "a.c") and got.get("run_b", (0,))[0] == 5 and
          sum(1 for r in rows if r["name"].startswith("run_b")) == 1, shown(rows))
    code, rows = rows_of(cap, elf, "--no-inline")
    got = {r["name"]: r["samples"] for r in rows}
    check("--no-inline: one row per function, the inlined helper in each",
          code == 0 and got == {"work (a.c)": 65, "work (b.c)": 39, "Reset_Handler": 5, "run_b": 5}, shown(rows))
    table_name, csv_name = r"^\s+[\d.]+%.*\s\d+  (.*?)  \S+(  \(inlined\))?$", r"^\d[^,]*(?:,[^,]*){4},([^,]*),"
    for fmt, name_at in (("table", table_name), ("csv", csv_name)):
        code, out, err = batch(cap, elf, fmt)
        names = sorted(m.group(1) for m in (re.match(name_at, ln) for ln in out.splitlines()) if m)
        check("-o %s names the two rows work (a.c) and work (b.c)" % fmt,
              code == 0 and names == ["Reset_Handler", "mix", "run_b", "work (a.c)", "work (b.c)"], names)
    base = os.path.join(OUT, "base.json")
    with open(base, "w") as f:
        f.write(batch(cap, elf, "json")[1])
    code, rows = rows_of(cap, elf, "--diff", base)
    check("the report is accepted as a --baseline, each work row compared with its own",
          code == 0 and rows and all(abs(r.get("delta", 1)) < 1e-9 for r in rows) and
          {r["name"] for r in rows} >= {"work (a.c)", "work (b.c)"}, shown(rows))


def calls_of(rows, name, key):
    row = next((r for r in rows if r["name"] == name), {})
    return {c["name"]: c["samples"] for c in row.get(key, [])}


def stack_checks(fw, cap):
    elf = fw.elf
    code, rows = rows_of(cap, elf)
    check("callers of each work: Reset_Handler calls a.c's, run_b calls b.c's",
          code == 0 and calls_of(rows, "work (a.c)", "callers") == {"Reset_Handler": 65} and
          calls_of(rows, "work (b.c)", "callers") == {"run_b": 39},
          "%s; %s" % (calls_of(rows, "work (a.c)", "callers"), calls_of(rows, "work (b.c)", "callers")))
    check("run_b calls work (b.c): a callee named as its row is",
          calls_of(rows, "run_b", "callees") == {"work (b.c)": 39, "[self]": 5} and
          calls_of(rows, "Reset_Handler", "callees") == {"work (a.c)": 65, "run_b": 44, "[self]": 5},
          "%s; %s" % (calls_of(rows, "run_b", "callees"), calls_of(rows, "Reset_Handler", "callees")))
    code, out, err = batch(cap, elf, "folded")
    stacks = dict(ln.rsplit(" ", 1) for ln in out.splitlines() if " " in ln)
    check("-o folded: each work under its own caller",
          code == 0 and stacks.get("Reset_Handler;work (a.c)") == "50" and
          stacks.get("Reset_Handler;run_b;work (b.c)") == "29" and
          stacks.get("Reset_Handler;run_b;work (b.c);mix") == "10", out[-600:] + err[-200:])


def live_filtered(fw, cap, w, h, search, shows, hides):
    """The live view on a capture, its list filtered by search down to the row named shows (hides
    gone): the tmux session's name."""
    s = "cmprof-samename"
    start(s, w, h, cap, fw.elf)
    wait_until(s, lambda t: "samples 114 " in t and in_list(t))
    keys(s, "/", search, "Enter")
    wait_until(s, lambda t: in_list(t) and shows in t and hides not in t)
    return s


def drill_test(fw, cap, w, h):
    size = "%dx%d: " % (w, h)
    s = live_filtered(fw, cap, w, h, "(b.c", "work (b.c)", "work (a.c)")
    keys(s, "Enter")
    txt = wait_until(s, lambda t: "B_LOOP" in t and "inline chain" in t)
    title = [ln for ln in txt.splitlines() if ln.startswith("work (b.c)")]
    check_brief(size + "Enter on work (b.c): its 39 samples (its own, the inlined helper's, its halfwords with no "
                "line), b.c's lines, none of a.c's",
                "B_LOOP" in txt and "A_LOOP" not in txt and title and re.match(r"work \(b\.c\)\s+39 samples", title[0]),
                txt)
    loop = [ln for ln in txt.splitlines() if "B_LOOP" in ln]
    check(size + "its loop's line: 35 of its 39 samples, 30.70 % of all", loop and "89.74%  30.70%" in loop[0], loop)
    chain = "at 0x%08x: work (b.c:%d)" % (fw.b_loop, line_of_marker("b.c", "B_LOOP"))
    check_brief(size + "the selected line's inline chain: its hottest address in b.c's work", chain in txt,
                "want %r: %s" % (chain, txt))
    tmux("kill-session", "-t", s)
    s = live_filtered(fw, cap, w, h, "Reset_H", "Reset_Handler", "work (")
    keys(s, "Enter")
    wait_until(s, lambda t: "A_CALL" in t and "inline chain" in t)
    keys(s, "Enter")  # the hottest line, its calls: work (a.c)'s first
    txt = wait_until(s, lambda t: "A_LOOP" in t)
    check_brief(size + "Enter on Reset_Handler's call line steps into work (a.c): a.c's lines, none of b.c's",
                "A_LOOP" in txt and "B_LOOP" not in txt and
                re.search(r"^work \(a\.c\) ← Reset_Handler\s+65 samples", txt, re.M), txt)
    tmux("kill-session", "-t", s)


def calls_test(fw, cap, w, h):
    size = "%dx%d: " % (w, h)
    s = live_filtered(fw, cap, w, h, "(b.c", "work (b.c)", "work (a.c)")
    keys(s, "c")
    txt = wait_until(s, lambda t: "called by" in t)
    check_brief(size + "c on work (b.c): called by run_b only, with its 39 samples on their stacks",
                re.search(r"called by \(39 samples with work \(b\.c\) on their stack\)", txt) and "run_b" in txt and
                "Reset_Handler" not in txt, txt)
    tmux("kill-session", "-t", s)


def run_all():
    fw = Firmware()
    partial_line_checks(fw)
    plain = dump(os.path.join(OUT, "samename.txt"), [pc for pc, callers in fw.samples()])
    batch_checks(fw, plain)
    stacked = stacks_capture(os.path.join(OUT, "samename_stacks.txt"), fw.samples())
    stack_checks(fw, stacked)
    for w, h in ((80, 24), (200, 60)):
        drill_test(fw, plain, w, h)
        calls_test(fw, stacked, w, h)


if __name__ == "__main__":
    sys.exit(tmux_main(run_all))
