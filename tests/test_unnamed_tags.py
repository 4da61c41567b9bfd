#!/usr/bin/env python3
"""Issue 30: no silent misattribution of task tags. Stream captures whose samples carry tags that
were never named (a firmware table that filled, '/' in firmware before issue 30; a tag the
firmware named '?'; tag 0 before the scheduler) end up in rows of their own, never one merged
'0x00000000' task, and the table and the JSON say what share of samples that is and why.
Prints one ok/FAIL line per check."""
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402


def check(name, ok, detail=""):
    return harness.check(name, ok, "" if ok else detail)  # the evidence only when it fails

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
ELF = os.path.join(ROOT, "build", "scenarios", "tasks", "fw.elf")
TMP = os.path.join(ROOT, "build", "unnamed-tags-test")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
BASE = 0x08000164  # the tasks scenario's first code address: every sample falls in its code


def sum12(text):
    """The v2 line check (docs/stream.md), written from its description."""
    data = text.encode() + b"\0" * (-len(text) % 4)
    a = b = 0
    for i in range(0, len(data), 4):
        a += int.from_bytes(data[i:i + 4], "little")
        b += a
    return (a + 3 * b) % 4095


def line(text):
    c = sum12(text)
    return text + "!" + B64[c >> 6] + B64[c & 63] + "\n"


def stream(names, tags, n_lines, full=False):
    """An announce, @task lines for names (index char, tag, name), and tagged sample lines whose
    tag field cycles through tags; PCs drawn with a fixed seed inside the ELF's first 0x60 bytes."""
    rnd = random.Random(30)
    out = line("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)
    out += "".join(line("@task %s %08x %s" % n) for n in names)
    if full:
        out += line("@full tasks=254")
    for k in range(n_lines):
        body = ""
        for j in range(16):
            off = rnd.randrange(0, 0x30)
            body += tags[(k * 16 + j) % len(tags)] + "".join(B64[(off >> s) & 63] for s in (18, 12, 6, 0))
        out += line("%" + body)
    return out


def batch(path, fmt):
    r = subprocess.run([TOOL, "--batch", "--by", "task", "-o", fmt, path, ELF], capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def case(name, text, want_rows, share, cause):
    path = os.path.join(TMP, name + ".txt")
    with open(path, "w") as f:
        f.write(text)
    code, table, err = batch(path, "table")
    check("%s: the table runs" % name, code == 0, err)
    check("%s: no merged 0x00000000 row" % name, "0x00000000" not in table or "0x00000000" in want_rows, table)
    for row in want_rows:
        check("%s: a row '%s'" % (name, row), any(ln.endswith("  " + row) for ln in table.splitlines()), table)
    diag = [ln for ln in table.splitlines() if ln.startswith("! unnamed tasks:")]
    check("%s: the table says the share and the cause" % name,
          len(diag) == 1 and (" %s %% of samples" % share) in diag[0] and cause in diag[0], table)
    code, out, err = batch(path, "json")
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    d = [x for x in j.get("diagnostics", []) if x.startswith("unnamed tasks:")]
    check("%s: JSON gives the same diagnostic" % name, code == 0 and len(d) == 1 and diag and d[0] == diag[0][2:],
          out[-400:] + err)
    names = [r.get("name") for r in j.get("rows", [])]
    check("%s: JSON rows" % name, all(r in names for r in want_rows), names)


def main():
    os.makedirs(TMP, exist_ok=True)
    check("the tasks scenario's ELF is built", os.path.exists(ELF), ELF)
    # firmware before issue 30, its 62 slots full: '/' for the tasks past them, no tag on the wire
    case("old full table", stream([("A", 0x20000000, "motor")], ["A", "/", "/"], 60),
         ["motor", "(no tag: the firmware's task table was full)"], "66.7", "62 slots before issue 30")
    # today's firmware: a tag sampled before any name ('?'), an interrupt ('-'), a table that filled
    case("new firmware", stream([("A", 0x20000000, "motor"), ("B", 0x20001000, "?")], ["A", "B", "-AW", "/"], 60,
                                full=True),
         ["motor", "0x20001000", "ISR: IRQ 6", "(no tag: the firmware's task table was full)"],
         "50.0", "task table was full (raise CMPROF_STREAM_TASKS)")
    # sampling started before the scheduler: tag 0, named '?'
    case("before the scheduler", stream([("A", 0x20000000, "motor"), ("B", 0, "?")], ["A", "A", "A", "B"], 60),
         ["motor", "0x00000000"], "25.0", "before the RTOS ran its first task")
    sys.exit(1 if harness.failed else 0)


if __name__ == "__main__":
    main()
