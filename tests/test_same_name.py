#!/usr/bin/env python3
"""Two static functions of one name in two files (FreeRTOS's demos have many: prvEchoClient in
StreamBufferDemo.c and in MessageBufferDemo.c) are two rows, each named "work (a.c)" when the name
is shared, with its own samples and file; a helper both files inline (same.h) stays one row; the
JSON report is accepted as a --baseline (one row a name); Enter in the live view opens only the
chosen function's lines. tests/zoo/samename/, built at -O0 -g. Prints one ok/FAIL line per check.
The tool is build/cmprof-top, or CMPROF_TOOL."""
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
    """The ELF, and each (file's base name, line) -> the addresses of its instructions."""
    os.makedirs(OUT, exist_ok=True)
    elf = os.path.join(OUT, "samename.elf")
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-O0", "-g",
                        "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler", os.path.join(SRC, "a.c"),
                        os.path.join(SRC, "b.c"), "-o", elf], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("samename: " + r.stderr[-400:])
    at = {}
    where = None
    dis = subprocess.run(["arm-none-eabi-objdump", "-dl", elf], capture_output=True, text=True).stdout
    for ln in dis.splitlines():
        m = re.match(r"^(/\S+):(\d+)", ln)
        if m:
            where = (os.path.basename(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\t", ln)
        if m and where:
            at.setdefault(where, []).append(int(m.group(1), 16))
    return elf, at


def line_of_marker(name, marker):
    with open(os.path.join(SRC, name)) as f:
        return next(i + 1 for i, ln in enumerate(f) if marker in ln)


def rows_of(cap, elf, *extra):
    r = subprocess.run([TOOL, "--batch", "-o", "json", *extra, cap, elf], capture_output=True, text=True)
    try:
        return r.returncode, json.loads(r.stdout)["rows"], r.stdout
    except (ValueError, KeyError):
        return r.returncode, [], r.stdout + r.stderr


def shown(rows):
    return ", ".join("%s %s %s" % (r["name"], r["samples"], os.path.basename(r["file"])) for r in rows)


def batch_tests(cap, elf):
    code, rows, _ = rows_of(cap, elf)
    got = {r["name"]: (r["samples"], os.path.basename(r["file"])) for r in rows}
    check("two functions named work: two rows, their own samples and files",
          code == 0 and got.get("work (a.c)") == (50, "a.c") and got.get("work (b.c)") == (25, "b.c") and
          "work" not in got, shown(rows))
    check("the helper both files inline (same.h): one row of both copies' samples",
          got.get("mix") == (25, "same.h") and sum(1 for r in rows if r["name"].startswith("mix")) == 1, shown(rows))
    check("a name no other function has stays as it is", got.get("Reset_Handler") == (5, "a.c"), shown(rows))
    code, rows, _ = rows_of(cap, elf, "--no-inline")
    got = {r["name"]: (r["samples"], os.path.basename(r["file"])) for r in rows}
    check("--no-inline: one row per function, the inlined helper in each", code == 0 and
          got.get("work (a.c)") == (65, "a.c") and got.get("work (b.c)") == (35, "b.c") and len(rows) == 3,
          shown(rows))
    base = os.path.join(OUT, "base.json")
    r = subprocess.run([TOOL, "--batch", "-o", "json", cap, elf], capture_output=True, text=True)
    with open(base, "w") as f:
        f.write(r.stdout)
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--diff", base, cap, elf], capture_output=True, text=True)
    try:
        diffed = json.loads(r.stdout)["rows"]
    except (ValueError, KeyError):
        diffed = []
    check("the report is accepted as a --baseline, each work row compared with its own",
          r.returncode == 0 and diffed and all(abs(d.get("delta", 1)) < 1e-9 for d in diffed) and
          {d["name"] for d in diffed} >= {"work (a.c)", "work (b.c)"}, r.stderr[:300] or shown(diffed))


def drill_test(cap, elf, w, h):
    size = "%dx%d: " % (w, h)
    s = "cmprof-samename"
    start(s, w, h, cap, elf)
    wait_until(s, lambda t: "samples 105 " in t and in_list(t))
    keys(s, "/", "(b.c", "Enter")
    txt = wait_until(s, lambda t: in_list(t) and "work (b.c)" in t and "work (a.c)" not in t)
    keys(s, "Enter")
    txt = wait_until(s, lambda t: "B_LOOP" in t)
    title = [ln for ln in txt.splitlines() if ln.startswith("work (b.c)")]
    check_brief(size + "Enter on work (b.c): its 35 samples (its own and the inlined helper's), b.c's lines, none of a.c's",
          "B_LOOP" in txt and "A_LOOP" not in txt and title and re.match(r"work \(b\.c\)\s+35 samples", title[0]), txt)
    loop = [ln for ln in txt.splitlines() if "B_LOOP" in ln]
    check(size + "its loop's line holds all of them (100 % of the function, 33.33 % of all)",
          loop and "100.00%  33.33%" in loop[0], loop)
    tmux("kill-session", "-t", s)


def run_all():
    elf, at = build()
    a_loop, b_loop = line_of_marker("a.c", "A_LOOP"), line_of_marker("b.c", "B_LOOP")
    mix = line_of_marker("same.h", "MIX")
    b_start = min(x for (name, _), xs in at.items() if name == "b.c" for x in xs)  # a.c is linked first
    mix_a = [x for x in at[("same.h", mix)] if x < b_start]
    mix_b = [x for x in at[("same.h", mix)] if x not in mix_a]
    reset = line_of_marker("a.c", "run_b(work(10))")
    pcs = ([at[("a.c", a_loop)][0]] * 50 + [mix_a[0]] * 15 + [at[("b.c", b_loop)][0]] * 25 + [mix_b[0]] * 10 +
           [at[("a.c", reset)][0]] * 5)
    cap = dump(os.path.join(OUT, "samename.txt"), pcs)
    batch_tests(cap, elf)
    for w, h in ((80, 24), (200, 60)):
        drill_test(cap, elf, w, h)


if __name__ == "__main__":
    sys.exit(tmux_main(run_all))
