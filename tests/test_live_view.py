#!/usr/bin/env python3
"""The live view's field fixes of issue 35 (part F), driven in tmux on small fixed captures:
  1. GCC's clones (crc32.constprop.0): rows name the source function with the copy noted, and
     Enter on a call to a clone opens the function's own lines (from a line and from annotate);
  2. the w window by task: the tasks by name, as without it;
  3. key o says where the snapshot went (the directory, its end from a "/" on when narrow);
     --save-dir DIR chooses, and a DIR that cannot take one is refused at the start.
Issue 31: attached to a running stream, the samples of indexes not named yet wait in rows of their
index ("task #N (name pending)") that take the names when they come; a task re-created under its
name stays one row, which says how many tasks had the name.
Prints one ok/FAIL line per check. The tool is build/cmprof-top, or CMPROF_TOOL."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402
from test_tui import in_list, keys, line_of, screen, tmux, tmux_main, wait_for, wait_port_open, wait_until  # noqa: E402

TOOL = os.path.abspath(os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top")))
OUT = harness.scratch("live_view")


def build_clones():
    """tests/zoo/clones.c at -O2 with -fipa-cp-clone: crc32.constprop.0 and .1, called with bl."""
    os.makedirs(OUT, exist_ok=True)
    elf = os.path.join(OUT, "clones.elf")
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-ffunction-sections",
                        "-Wl,--gc-sections", "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler", "-O2", "-g",
                        "-fipa-cp-clone", os.path.join(HERE, "zoo", "clones.c"), "-lgcc", "-o", elf],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("clones.c: " + r.stderr[-400:])
    syms = {}
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    calls = {}  # "frame_b" -> [(address of the bl, its target's symbol)]
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", elf], capture_output=True, text=True).stdout
    func = None
    for ln in dis.splitlines():
        if ln.endswith(">:"):
            func = ln.split("<")[1][:-2]
        elif "\tbl\t" in ln and "<" in ln:
            calls.setdefault(func, []).append((int(ln.split(":")[0], 16), ln.split("<")[1].rstrip(">")))
    return elf, syms, calls


def dump(path, pcs):
    """A text dump ("prof raw") of these PCs."""
    with open(path, "w") as f:
        f.write("prof raw n=%d\n" % len(pcs))
        for i in range(0, len(pcs), 16):
            f.write("p " + " ".join("%08x" % a for a in pcs[i:i + 16]) + "\n")
        f.write("end\n")
    return path


def start(session, w, h, *args, cwd=None, pty=None):
    """The live view in a tmux session; once it shows its header (pty: its source, a pty with
    nothing to read yet: once it has opened that pty)."""
    tmux("kill-session", "-t", session)
    cmd = " ".join([TOOL] + list(args)) + "; sleep 30"
    tmux("new-session", "-d", "-s", session, "-x", str(w), "-y", str(h), "-c", cwd or ROOT, cmd)
    if pty is not None:
        return wait_port_open(pty)
    return wait_for(session, r"^cmprof-top ", 10)


def clone_tests(w, h):
    size = "%dx%d: " % (w, h)
    elf, syms, calls = build_clones()
    # frame_b's first call is to a crc32 clone; its samples sit on that bl, the clones' in their loops
    bl, target = calls["frame_b"][0]
    pcs = [bl] * 30 + [syms["crc32.constprop.0"] + 0x14] * 60 + [syms["crc32.constprop.1"] + 0x10] * 20
    cap = dump(os.path.join(OUT, "clones.txt"), pcs)
    s = "cmprof-clones"
    start(s, w, h, cap, elf)
    rows_of = lambda t: [ln for ln in t.splitlines() if "%" in ln and "crc32" in ln]  # noqa: E731
    named = lambda t: rows_of(t) and "crc32 [constprop]" in rows_of(t)[0] and "crc32.constprop" not in t  # noqa: E731
    # the count and the rows waited for together: a capture may catch a redraw half written
    txt = wait_until(s, lambda t: "samples 110 " in t and named(t))
    rows = rows_of(txt)
    check(size + "a clone's samples: the source function's row, the copy noted (crc32 [constprop])",
          target.startswith("crc32.constprop.") and named(txt), rows[0] if rows else line_of(txt, 5))
    keys(s, "Down", "Enter")  # frame_b: its hottest line holds the call
    wait_until(s, lambda t: re.search(r"^frame_b\s+\d+ samples", t, re.M) is not None)
    keys(s, "Enter")
    opened = lambda t: ("crc32 [constprop] \u2190 frame_b" in t and "c = (c >> 1)" in t and  # noqa: E731
                        "no line information" not in t)
    txt = wait_until(s, opened)
    check(size + "Enter on a line that calls crc32.constprop.N opens crc32's own lines", opened(txt), line_of(txt, 4))
    keys(s, "Escape")
    wait_until(s, lambda t: "\u2190 frame_b" not in t)
    keys(s, "a")
    wait_until(s, lambda t: re.search(r"^frame_b\s+annotate:", t, re.M) is not None)
    keys(s, "/", "c", "o", "n", "s", "t", "Enter")  # annotate: the bl instruction itself
    # the prompt closed (Enter read), frame_b annotated, the call in view: waited for whole, as a
    # capture may catch the tool's redraw half written (a CI run under load failed on one)
    sel = wait_until(s, lambda t: not line_of(t, -1).startswith("/") and "constprop" in t and
                     re.search(r"^frame_b\s+annotate:", t, re.M) is not None)
    keys(s, "Enter")
    annotated = lambda t: ("crc32 [constprop]" in line_of(t, 4) and "annotate: 80 samples" in t and  # noqa: E731
                           "c = (c >> 1)" in t)
    txt = wait_until(s, annotated)
    check(size + "annotate: Enter on `bl ... <crc32.constprop.N>` opens crc32's instructions under its lines",
          "constprop" in sel and annotated(txt), line_of(txt, 4))
    tmux("kill-session", "-t", s)
    nodwarf = os.path.join(OUT, "clones-nodwarf.elf")
    subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", elf, nodwarf], check=True)
    start(s, w, h, cap, nodwarf)
    both = lambda t: "crc32 [constprop.0]" in t and "crc32 [constprop.1]" in t and " ??" not in t  # noqa: E731
    txt = wait_until(s, lambda t: "samples 110 " in t and both(t))  # the rows with the count (a redraw half written)
    check(size + "without DWARF: rows named by the clones' symbols show the source name and the copy",
          both(txt), line_of(txt, 5))
    tmux("kill-session", "-t", s)


def annotate_rows(s, w, h, cap, elf, n):
    """Annotate crc32 on this capture of n samples: its first and last screens (Home, End) and its
    row count."""
    start(s, w, h, cap, elf)
    wait_for(s, r"samples %d " % n, 10)
    keys(s, "/", "crc32", "Enter", "Enter", "a")
    txt = wait_until(s, lambda t: re.search(r"annotate: \d+ samples[\s\S]*; \d+ rows;", t) is not None)
    rows = re.search(r"; (\d+) rows;", txt)
    keys(s, "Home")
    # the first screen: its first instruction, whole (a redraw may be caught half written)
    first = wait_until(s, lambda t: re.search(r"08000028: cbz\b", t) is not None)
    keys(s, "End")
    last = wait_until(s, lambda t: "0800005c:" in t)
    tmux("kill-session", "-t", s)
    return first, last, int(rows.group(1)) if rows else -1


def clone_annotate_test(w, h):
    """Annotate on a GCC copy opens the copy's whole symbol, whichever of its instructions were
    sampled: the first instruction (cbz at crc32.constprop.0's start) and the last word are there,
    and the row count is the same for two captures that sampled different instructions (it was the
    sampled span plus 4 bytes: the start lost, the count changing from run to run)."""
    size = "%dx%d: " % (w, h)
    elf, syms, _ = build_clones()
    c0 = syms["crc32.constprop.0"]
    caps = [dump(os.path.join(OUT, "clone-annotate-a.txt"), [c0 + 0x14] * 60),  # the inner loop
            dump(os.path.join(OUT, "clone-annotate-b.txt"), [c0 + 0x0e] * 20 + [c0 + 0x22] * 40)]
    got = [annotate_rows("cmprof-clone-annotate", w, h, cap, elf, 60) for cap in caps]
    for (first, last, n), which in zip(got, ("its inner loop sampled", "other instructions sampled")):
        ok = c0 == 0x08000028 and re.search(r"08000028: cbz\b", first) is not None and "0800005c:" in last
        check(size + "annotate a clone (%s): from its symbol's first instruction to its last word" % which, ok,
              "%d rows; first screen: %s" % (n, " | ".join(ln.strip() for ln in first.splitlines()[4:8])))
    counts = [n for _, _, n in got]
    check(size + "annotate a clone: the same row count whichever instructions were sampled",
          counts[0] > 0 and len(set(counts)) == 1, "rows %s" % counts)


def clone_pieces_test():
    """Samples in two copies of one function (crc32.constprop.0 and .1, both crc32's row): annotate
    shows each copy's whole symbol, under its name, in address order."""
    elf, syms, _ = build_clones()
    c0, c1 = syms["crc32.constprop.0"], syms["crc32.constprop.1"]
    cap = dump(os.path.join(OUT, "clone-pieces.txt"), [c0 + 0x14] * 30 + [c1 + 0x10] * 30)
    s = "cmprof-clone-pieces"
    start(s, 120, 90, cap, elf)
    wait_for(s, r"samples 60 ", 10)
    keys(s, "Enter", "a", "Home")
    want = ["<crc32.constprop.0>", "%08x: " % c0, "%08x: " % (c0 + 0x34), "<crc32.constprop.1>", "%08x: " % c1,
            "%08x: " % (c1 + 0x34)]
    txt = wait_until(s, lambda t: all(x in t for x in want))
    at = [txt.find(x) for x in want]
    check("annotate, samples in two copies: each copy whole, under its symbol's name, in address order",
          all(i >= 0 for i in at) and at == sorted(at), " | ".join(ln.strip() for ln in txt.splitlines()[4:9]))
    tmux("kill-session", "-t", s)


def names_dir(note, d):
    """The note ends with directory d, whole or its end from a "/" on after "..." (narrow)."""
    shown = note.split(") in ", 1)[1] if ") in " in note else ""
    return shown == d or (shown.startswith(".../") and d.endswith(shown[3:]))


def save_tests(w, h):
    size = "%dx%d: " % (w, h)
    elf, syms, _ = build_clones()
    cap = dump(os.path.join(OUT, "save.txt"), [syms["crc32.constprop.0"] + 0x14] * 50)
    work, snaps = os.path.join(OUT, "cwd"), os.path.join(OUT, "snapshots dir")
    for d in (work, snaps):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    s = "cmprof-save"
    start(s, w, h, cap, elf, "--save-dir", "'%s'" % snaps, cwd=work)
    wait_for(s, r"samples 50 ", 10)
    keys(s, "o", "t")
    got = wait_for(s, r"saved clones-\d{8}-\d{6}\.txt \(50 samples\) in ", 5)
    note = line_of(got or screen(s), -1).strip()
    saved = os.listdir(snaps)
    check(size + "key o with --save-dir: the snapshot goes there, and the note names the directory (its end when narrow)",
          got is not None and len(saved) == 1 and names_dir(note, snaps) and saved[0] in note and not os.listdir(work),
          note)
    first = open(os.path.join(snaps, saved[0])).readline() if len(saved) == 1 else ""
    check(size + "the snapshot's first line says what it is of: source, ELF, time span, window, when saved",
          first.startswith("snapshot of %s with %s, 00:" % (cap, elf)) and "cumulative, saved 20" in first, first)
    keys(s, "o")
    prompt = wait_for(s, r"into ", 5)
    check(size + "key o says the directory before the first save", prompt is not None and
          (snaps in prompt or ".../" in prompt), line_of(prompt or screen(s), -2))
    keys(s, "t")
    keys(s, "o", "t")
    # the second save's note is still on the screen: wait for the third file itself (a loaded machine)
    end = time.monotonic() + 10
    while len(os.listdir(snaps)) < 3 and time.monotonic() < end:
        time.sleep(0.05)
    saved = sorted(os.listdir(snaps))
    check(size + "three snapshots within seconds: three files, a second one in the same second as NAME-2.txt",
          len(saved) == 3 and (len(set(n[:22] for n in saved)) == 3 or any(n.endswith("-2.txt") for n in saved)),
          str(saved))
    tmux("kill-session", "-t", s)
    start(s, w, h, cap, elf, cwd=work)
    wait_for(s, r"samples 50 ", 10)
    keys(s, "o", "c")
    got = wait_for(s, r"saved clones-\d{8}-\d{6}\.csv \(50 samples\) in (/|\.\.\./)", 5)
    note = line_of(got or screen(s), -1).strip()
    check(size + "key o without --save-dir: the note names the current directory (its end when narrow)",
          got is not None and names_dir(note, work) and len(os.listdir(work)) == 1, note)
    keys(s, "o", "j")
    got = wait_for(s, r"saved clones-\d{8}-\d{6}(-\d+)?\.json", 5)
    js = [n for n in os.listdir(work) if n.endswith(".json")]
    try:
        what = json.load(open(os.path.join(work, js[0]))).get("snapshot", {}) if js else {}
    except ValueError:
        what = {}
    check(size + "a JSON snapshot's \"snapshot\" field: source, ELF, build-id, time span, window, when saved",
          what.get("source") == cap and what.get("elf") == elf and "build_id" in what and what.get("window_s") == 0
          and what.get("to_s", -1) >= what.get("from_s", 0) >= 0 and what.get("saved", "").startswith("20"),
          "%s; the note: %s" % (what, line_of(got or screen(s), -1).strip()))  # no note: the keys never answered
    tmux("kill-session", "-t", s)


def save_dir_refused():
    elf, _, _ = build_clones()
    cap = os.path.join(OUT, "save.txt")
    for bad, why in ((os.path.join(OUT, "no such dir"), "No such file or directory"), (cap, "not a directory")):
        p = subprocess.run([TOOL, "--save-dir", bad, cap, elf], capture_output=True, text=True, timeout=20)
        lines = p.stderr.strip().splitlines()
        check("--save-dir %s: refused at the start, in one line naming it" % why, p.returncode == 2 and len(lines) == 1
              and bad in lines[0] and why in lines[0], p.stderr.strip()[:200])


def window_task_test(w, h):
    size = "%dx%d: " % (w, h)
    build = os.path.join(ROOT, "build", "scenarios", "rtos")
    s = "cmprof-window"
    start(s, w, h, "--rate", "15000", "--window", "2", os.path.join(build, "uart.txt"), os.path.join(build, "fw.elf"))
    keys(s, "w", "g", "g", "g")
    rows_of = lambda t: [ln.split()[-1] for ln in t.splitlines()[5:-2] if re.search(r"%\s+[\d.]+%\s+\d+", ln)]  # noqa
    by_name = lambda t: ("last 2 s" in t and re.search(r"by task .*last 2 s", t) is not None and  # noqa: E731
                         len(rows_of(t)) > 3 and "idle" in rows_of(t) and not any(r.startswith("0x") for r in rows_of(t)))
    txt = wait_until(s, by_name)  # the rows waited for whole, not their first sign (a redraw half written)
    rows = rows_of(txt)
    check(size + "w by task: the window's rows are the tasks by name (idle, w0..), not bare tags", by_name(txt),
          " ".join(rows[:6]))
    tmux("kill-session", "-t", s)


def write_all(fd, data):
    """All of data into the pty's master (a write may take only part of it)."""
    while data:
        data = data[os.write(fd, data):]


def late_attach_test(w, h):
    """A pty whose stream starts after the names went by: pending rows and the attach as the cause,
    then the names (the firmware repeats them) fill the rows in; a worker re-created under its name
    stays one row."""
    import pty
    import test_unnamed_tags as ut
    size = "%dx%d: " % (w, h)
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    s = "cmprof-late-attach"
    opened = start(s, w, h, "--by", "task", path, ut.ELF, pty=path)
    # a silent port: the view is up and says so before the first byte (it once read the port to
    # tell an ELF from a source, and showed a blank terminal until the board sent something)
    silent = wait_for(s, r"no data from the source yet", 10) or screen(s)
    check(size + "a silent port: the header and 'no data from the source yet' before any byte",
          opened and silent.startswith("cmprof-top ") and "no data from the source yet" in silent,
          "opened %s: %s" % (opened, " | ".join(silent.splitlines()[:5])))
    first = ut.stream([], ["A", "B"], 20)
    names = ut.stream([("A", 0x20000000, "motor"), ("B", 0x20001000, "worker")], ["A", "B"], 20)
    again = ut.stream([("B", 0x20002000, "worker")], ["A", "B"], 20)  # the worker re-created elsewhere
    write_all(master, ("boot log line\n" * 300 + first).encode())  # the port held log lines before
    # both pending rows waited for (a redraw may be caught half written: #1 drawn, #0 not yet)
    txt = wait_until(s, lambda t: "task #0 (name pending)" in t and "task #1 (name pending)" in t)
    keys(s, "d")  # the diagnostics page (these made-up PCs also look like another build's)
    diag = re.sub(r"\s+", " ", wait_until(s, lambda t: line_of(t, 4) == "diagnostics" and
                                          "attached mid-stream" in re.sub(r"\s+", " ", t)))
    keys(s, "Escape")
    wait_until(s, lambda t: line_of(t, 4) != "diagnostics")
    check(size + "late attach: samples wait under their index, the attach named as the cause",
          "task #0 (name pending)" in txt and "0x00000000" not in txt and
          "came before their task's name" in diag and "attached mid-stream" in diag, diag[:400])
    write_all(master, (names[names.index("\n") + 1:] + again[again.index("\n") + 1:]).encode())
    rows_of = lambda t: [ln for ln in t.splitlines()[4:-2] if re.search(r"%\s+[\d.]+%\s+\d+", ln)]  # noqa: E731
    filled = lambda t: ("samples 960 " in t and len(rows_of(t)) == 2 and "pending" not in t and  # noqa: E731
                        any(re.search(r"\s480\s+motor$", ln) for ln in rows_of(t)) and
                        any(re.search(r"\s480\s+worker  \(2 task handles\)$", ln) for ln in rows_of(t)))
    # the whole screen waited for: a capture may catch a redraw half written (the count new, the
    # rows not yet), as one CI run under load did
    txt = wait_until(s, filled, 30)
    check(size + "late attach: the names fill the rows in, a re-created worker stays one row", filled(txt),
          " | ".join(txt.splitlines()[1:2] + rows_of(txt)))
    tmux("kill-session", "-t", s)
    os.close(master)
    os.close(slave)


def drill_top_and_keys_test(w, h):
    """Issue 49: Enter opens a function's lines at its first line (its signature showed one line
    down, cut off); T reaches the task view in one key (g took three) and goes back; C shows the
    ELF's own symbols of GCC's copies, as batch without -C does."""
    size = "%dx%d: " % (w, h)
    elf, syms, calls = build_clones()
    cap = dump(os.path.join(OUT, "clones-top.txt"), [syms["crc32.constprop.0"] + 0x14] * 60 +
               [syms["crc32.constprop.1"] + 0x10] * 20)
    s = "cmprof-drilltop"
    start(s, w, h, cap, elf)
    wait_for(s, r"samples 80 ", 10)
    keys(s, "Enter")
    at_top = lambda t: re.search(r"\b10  static __attribute__\(\(noinline\)\) uint32_t crc", line_of(t, 5))  # noqa
    # the line judged waited for, not another line of the screen (a redraw may be caught half written)
    txt = wait_until(s, lambda t: "c = (c >> 1)" in t and at_top(t) is not None)
    first = line_of(txt, 5)
    check(size + "Enter opens crc32 at its first line, the signature (clones.c:10)", at_top(txt) is not None, first)
    keys(s, "Escape")  # the list, then T
    wait_until(s, in_list)
    keys(s, "T")
    txt = wait_until(s, lambda t: "by task" in line_of(t, 2))
    check(size + "T: by task in one key", "by task" in line_of(txt, 2), line_of(txt, 2))
    keys(s, "T")
    txt = wait_until(s, lambda t: "by function" in line_of(t, 2))
    check(size + "T again: back to by function", "by function" in line_of(txt, 2), line_of(txt, 2))
    keys(s, "C")
    txt = wait_until(s, lambda t: "crc32.constprop.0, crc32.constprop.1" in t)
    check(size + "C: GCC's copies by the ELF's symbols, as batch names them without -C",
          "crc32.constprop.0, crc32.constprop.1" in txt and "[constprop]" not in txt, line_of(txt, 5))
    tmux("kill-session", "-t", s)


def run_all():
    for w, h in ((80, 24), (200, 60)):
        clone_tests(w, h)
        drill_top_and_keys_test(w, h)
        clone_annotate_test(w, h)
        save_tests(w, h)
        window_task_test(w, h)
        late_attach_test(w, h)
    save_dir_refused()
    clone_pieces_test()


if __name__ == "__main__":
    sys.exit(tmux_main(run_all))
