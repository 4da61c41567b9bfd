#!/usr/bin/env python3
"""Issue 30: no silent misattribution of task tags. Stream captures whose samples carry tags that
were never named (a firmware table that filled, '/' in firmware before issue 30; a tag the
firmware named '?'; tag 0 before the scheduler) end up in rows of their own, never one merged
'0x00000000' task, and the table and the JSON say what share of samples that is and why.
Issue 31: a host that attaches to a running stream sees indexes before their @task lines: those
samples wait under their index ("task #N (name pending)") and take the name when it comes, with a
diagnostic that names the attach as the cause; a stream line glued after the partial first line of
a live source is the attach cut, not a glued line.
Prints one ok/FAIL line per check."""
import json
import os
import random
import re
import subprocess
import sys
import time
import tty

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402


B64, line, check = harness.B64, harness.stream_line, harness.check_brief

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
ELF = os.path.join(ROOT, "build", "scenarios", "tasks", "fw.elf")
TMP = harness.scratch("unnamed-tags-test")  # (-asan under the ASan tool: the two runs can go side by side)
BASE = 0x08000164  # the tasks scenario's first code address: every sample falls in its code


STARTS = []


def stream(names, tags, n_lines, full=False):
    """An announce, @task lines for names (index char, tag, name), and tagged sample lines whose
    tag field cycles through tags; PCs drawn with a fixed seed among the instructions of the ELF's
    first 0x60 bytes."""
    STARTS[:] = STARTS or harness.instruction_starts(ELF, BASE, BASE + 0x60)
    rnd = random.Random(30)
    out = line("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)
    out += "".join(line("@task %s %08x %s" % n) for n in names)
    if full:
        out += line("@full tasks=254")
    for k in range(n_lines):
        body = ""
        for j in range(16):
            off = rnd.choice(STARTS)
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


def index_field(index):
    """A task index as the firmware writes it (task_index's inverse)."""
    return B64[index] if index < 62 else "+" + B64[(index - 62) >> 6] + B64[(index - 62) & 63]


def task_index(field):
    """A stream task index as the firmware writes it: one base64 char, or '+' and two more."""
    return B64.index(field) if len(field) == 1 else 62 + (B64.index(field[1]) << 6 | B64.index(field[2]))


def task_lines(text):
    """(line offset, index, tag, name) of each name the stream gives (@task, @N, '=' entries)."""
    return harness.stream_names(text)


def task_json(path, elf, tool_args=()):
    r = subprocess.run([TOOL, "--batch", "--by", "task", "-o", "json"] + list(tool_args) + [path, elf],
                       capture_output=True, timeout=120)
    try:
        return r.returncode, json.loads(r.stdout.decode(errors="replace"))
    except ValueError:
        return r.returncode, {"error": r.stderr.decode(errors="replace")}


def rows_of(j):
    return {r["name"]: r["samples"] for r in j.get("rows", [])}


def pending_rows(rows):
    return {int(m.group(1)): v for k, v in rows.items() for m in [re.match(r"task #(\d+) \(name pending\)$", k)] if m}


def through_pty(text, elf):
    """The text through a pty, as a port the host attaches to (batch: read until it closes). The
    tool's JSON, or {} when it gave none."""
    master, slave = os.openpty()
    tty.setraw(slave)
    p = subprocess.Popen([TOOL, "--batch", "--by", "task", "-o", "json", os.ttyname(slave), elf],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    link = os.ttyname(slave)
    for _ in range(200):  # until the tool has the port open (at most 20 s)
        try:
            if any(os.readlink("/proc/%d/fd/%s" % (p.pid, fd)) == link for fd in os.listdir("/proc/%d/fd" % p.pid)):
                break
        except OSError:
            pass
        time.sleep(0.1)
    time.sleep(0.5)
    data = memoryview(text.encode())
    try:
        while data:
            data = data[os.write(master, data[:4096]):]
        time.sleep(1.0)  # read to the end before the port goes away
    finally:
        os.close(master)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    os.close(slave)
    try:
        return json.loads(out.decode(errors="replace"))
    except ValueError:
        return {}


def late_attach_synthetic():
    """Samples of two indexes before their names, then the names (the firmware's repeat): one row
    per task with every sample; the same stream cut before the names: pending rows and the cause."""
    names = [("A", 0x20000000, "motor"), ("B", 0x20001000, "link")]
    body = stream([], ["A", "B", "B", "-AW"], 30)
    later = stream(names, ["A", "B", "B", "-AW"], 30)
    later = later[later.index("\n") + 1:]  # its announce is the first stream's
    for label, text, want in (("names after", body + later, {"motor": 240, "link": 480, "ISR: IRQ 6": 240}),
                              ("names never came", body, {"task #0 (name pending)": 120, "task #1 (name pending)": 240,
                                                          "ISR: IRQ 6": 120})):
        path = os.path.join(TMP, "late %s.txt" % label)
        with open(path, "w") as f:
            f.write(text)
        code, j = task_json(path, ELF)
        check("late attach, %s: rows %s" % (label, want), code == 0 and rows_of(j) == want, j)
        d = [x for x in j.get("diagnostics", []) if x.startswith("unnamed tasks:")]
        if "names after" in label:
            check("late attach, %s: no unnamed-task diagnostic" % label, not d, d)
        else:
            check("late attach, %s: the diagnostic names the attach, with the share" % label,
                  len(d) == 1 and "75.0 % of samples (360) came before their task's name" in d[0] and
                  "attached mid-stream" in d[0] and "tag 0" not in d[0], d)


def late_attach_capture():
    """The FreeRTOS scenario's capture cut mid-line (an attach to a running firmware), as a file and
    through a pty, against the same capture with the names it had at the cut put first."""
    name = "frtos"
    cap = os.path.join(ROOT, "build", "scenarios", name, "uart.txt")
    elf = os.path.join(ROOT, "build", "scenarios", name, "fw.elf")
    if not check("late attach: the %s capture is built" % name, os.path.exists(cap) and os.path.exists(elf), cap):
        return
    text = open(cap, errors="replace").read()
    announces = [m.start() for m in re.finditer(r"^@cmprof ", text, re.M)]
    at = announces[2]
    cut = text.rindex("\n", 0, at - 1) + 20  # inside the line before an announce
    late = text[cut:]
    lines = task_lines(text)
    before, after = {}, {}
    for off, idx, tag, nm in lines:
        if off < cut:
            before[idx] = (tag, nm)
    # what a host attached at the cut can read: a version 5 entry that leaves out a name or a tag
    # sent before the cut names nothing for it (the index waits for its repeat)
    unreadable = {nm for off, idx, tag, nm in lines if off >= cut}
    for off, idx, tag, nm in task_lines(late):
        unreadable.discard(nm)
        if idx not in after:
            after[idx] = (tag, nm)
    head = text[at:text.index("\n", at) + 1] + "".join(
        line("@task %s %s %s" % (index_field(idx), tag, nm)) for idx, (tag, nm) in sorted(before.items()))
    ref_path, late_path = os.path.join(TMP, "attach ref.txt"), os.path.join(TMP, "attach late.txt")
    with open(ref_path, "w") as f:
        f.write(head + late)
    with open(late_path, "w") as f:
        f.write(late)
    _, ref = task_json(ref_path, elf)
    _, got = task_json(late_path, elf)
    ref_rows, rows = rows_of(ref), rows_of(got)
    pend = pending_rows(rows)
    check("late attach (file): no 0x00000000 row, no row named by a tag", not any(k.startswith("0x") for k in rows),
          sorted(rows)[:8])
    check("late attach (file): every sample counted, as with the names known", got.get("total") == ref.get("total")
          and got.get("total", 0) > 1000, "%s vs %s" % (got.get("total"), ref.get("total")))
    check("late attach (file): a pending row for each index used before a name and never named after the cut, "
          "none for the others", pend and all(i in before and i not in after for i in pend),
          "pending %s; named after the cut %s" % (sorted(pend), sorted(set(pend) & set(after))))
    # names whose samples the attach cannot change: none of their indexes was re-mapped, left
    # unnamed, or first named after the cut with another task
    moved = set(unreadable)
    for idx, was in before.items():
        now = after.get(idx)
        if now is None or now[1] != was[1] or now[0] not in (None, was[0]):  # None: the index's tag, kept
            moved.add(was[1])
            moved.add(after.get(idx, ("", ""))[1])
    same = {k: v for k, v in ref_rows.items() if k not in moved}
    check("late attach (file): %d tasks named after the cut have exactly the samples they have with the names "
          "known" % len(same),
          len(same) > 20 and all(rows.get(k) == v for k, v in same.items()),
          [(k, rows.get(k), v) for k, v in same.items() if rows.get(k) != v][:5])
    d = [x for x in got.get("diagnostics", []) if x.startswith("unnamed tasks:")]
    check("late attach (file): one diagnostic, the attach as the cause, with the pending samples",
          len(d) == 1 and "(%d) came before their task's name" % sum(pend.values()) in d[0] and
          "attached mid-stream" in d[0], d)
    filler = "boot log line\n" * 400  # what the port held before: whatever the tool reads first
    via = through_pty(filler + late, elf)
    check("late attach (pty): the same rows as the file", rows_of(via) == rows, "%s vs %s" % (
        sorted(rows_of(via).items())[:6], sorted(rows.items())[:6]))


def defined_after_samples():
    """A capture from the first byte in which the firmware sampled two indexes past 62 before their
    @task lines, one named '?' (a tag sampled before any name), one named: while the names have not
    come, "task #N (name pending)"; after, the '?' one under its tag and the other under its name;
    never a row, nor a diagnostic, under the host's own key for a pending index (0xffffc0..)."""
    i224, i225 = index_field(224), index_field(225)
    body = stream([], ["A", i224, i225, i224], 10)
    later = stream([("A", 0x20000000, "motor"), (i224, 0x20002000, "?"), (i225, 0x20003000, "worker")],
                   ["A", i224, i225, i224], 10)
    later = later[later.index("\n") + 1:]
    for label, text, want in (("names after", body + later, {"motor": 80, "0x20002000": 160, "worker": 80}),
                              ("names not yet", body, {"task #0 (name pending)": 40,
                                                       "task #224 (name pending)": 80,
                                                       "task #225 (name pending)": 40})):
        path = os.path.join(TMP, "defined after %s.txt" % label)
        with open(path, "w") as f:
            f.write(text)
        code, j = task_json(path, ELF)
        check("defined after samples, %s: rows %s" % (label, want), code == 0 and rows_of(j) == want, j)
        code, table, err = batch(path, "table")
        check("defined after samples, %s: no row or diagnostic names an internal key" % label,
              code == 0 and "0xffff" not in table.lower() and "0xffff" not in json.dumps(j).lower(), table)


def name_entry(index, tag, name):
    """A name entry of an @N line or a '=' definition: index, tag in 6 base64 chars, length, name."""
    return index + "".join(B64[(tag >> s) & 63] for s in (30, 24, 18, 12, 6, 0)) + B64[len(name)] + name


def dropped_name_line():
    """One byte hit in a sample line whose '=' entry gives index B to a new task: the samples after
    it are never the old task's. Before the repeat they wait ("task #1 (name pending)"), the report
    says how many; after B's repeat they are the new task's."""
    rnd = random.Random(42)

    def pcs(tags):
        STARTS[:] = STARTS or harness.instruction_starts(ELF, BASE, BASE + 0x60)
        return "".join(t + "".join(chr(48 + ((rnd.choice(STARTS) >> s) & 63)) for s in (18, 12, 6, 0))
                       for t in tags)
    text = line("@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)
    text += line("@N" + name_entry("A", 0x20000000, "motor") + name_entry("B", 0x20001000, "old"))
    text += "".join(line("%" + pcs("BA" * 8)) for _ in range(20))
    hit = line("%=" + name_entry("B", 0x20002000, "new") + pcs("B" * 16))
    text += hit[:10] + ("x" if hit[10] != "x" else "y") + hit[11:]
    text += "".join(line("%" + pcs("B" * 16)) for _ in range(80))
    repeat = line("@N" + name_entry("A", 0x20000000, "motor") + name_entry("B", 0x20002000, "new"))
    for label, cap, want in (("short capture", text, {"motor": 160, "old": 160, "task #1 (name pending)": 1280}),
                             ("then the repeat", text + repeat, {"motor": 160, "old": 160, "new": 1280})):
        path = os.path.join(TMP, "dropped name %s.txt" % label)
        with open(path, "w") as f:
            f.write(cap)
        code, j = task_json(path, ELF)
        check("dropped name line, %s: rows %s" % (label, want), code == 0 and rows_of(j) == want, rows_of(j))
        waited = [x for x in j.get("losses", []) if "waited for their task's name" in x]
        check("dropped name line, %s: the report says 1280 samples waited" % label,
              len(waited) == 1 and waited[0].startswith("1280 samples waited"), j.get("losses"))


def one_row_per_name():
    """A worker deleted and re-created under its name (its index re-mapped to new control blocks)
    and a second worker of that name alive beside it: one row, with the count of tasks, in the
    table, CSV, JSON and the folded stacks alike."""
    text = stream([("A", 0x20000000, "worker"), ("C", 0x20003000, "motor")], ["A", "C"], 10)
    for tag in (0x20001000, 0x20002000):  # re-created twice
        more = stream([("A", tag, "worker")], ["A", "C"], 10)
        text += more[more.index("\n") + 1:]
    more = stream([("B", 0x20004000, "worker")], ["B", "A", "C"], 12)  # alive beside the third
    text += more[more.index("\n") + 1:]
    path = os.path.join(TMP, "same name.txt")
    with open(path, "w") as f:
        f.write(text)
    code, j = task_json(path, ELF)
    rows = {r["name"]: (r["samples"], r.get("instances")) for r in j.get("rows", [])}
    check("one row per name: JSON rows, the tasks of the name counted",
          code == 0 and rows == {"worker": (80 * 3 + 64 * 2, 4), "motor": (80 * 3 + 64, None)}, rows)
    code, table, err = batch(path, "table")
    check("one row per name: the table says how many tasks had it",
          [ln.split("  ")[-2:] for ln in table.splitlines() if "worker" in ln] == [["worker", "(4 task handles)"]],
          table)
    code, csv, err = batch(path, "csv")
    check("one row per name: one CSV row", sum(1 for ln in csv.splitlines() if ",worker," in ln) == 1, csv)
    r = subprocess.run([TOOL, "--batch", "--by", "task", "-o", "folded", path, ELF], capture_output=True, timeout=60)
    roots = {}
    for ln in r.stdout.decode().splitlines():
        roots[ln.split(";")[0]] = roots.get(ln.split(";")[0], 0) + float(ln.rsplit(" ", 1)[1])
    check("one row per name: folded stacks under one root of the name", roots == {"worker": 368, "motor": 304}, roots)


def attach_cut_not_glued():
    """A tcp: server that another reader used: the first line is the tail of a log line with a
    stream line after it. That is the attach cut, not a stream line glued onto a log line; and so it
    is in a file of those bytes (a capture of a port, a recording of a late attach, may begin
    anywhere: its replay says what the live view said)."""
    cap = os.path.join(ROOT, "build", "scenarios", "rtos", "uart.txt")
    elf = os.path.join(ROOT, "build", "scenarios", "rtos", "fw.elf")
    if not check("attach cut: the rtos capture is built", os.path.exists(cap) and os.path.exists(elf), cap):
        return
    text = open(cap, "rb").read()
    glued = [m.start() for m in re.finditer(rb"^[^$%@#\n]+[$%@#][ -~]+![A-Za-z0-9+/]{2}$", text, re.M)]
    part = text[glued[1] + 3:]  # the previous reader took the log line's first characters
    path = os.path.join(TMP, "attach glued.txt")
    with open(path, "wb") as f:
        f.write(part)
    code, j = task_json(path, elf)
    n = j.get("total", 0)
    port = harness.tcp_server([part], 0)
    code2, t = task_json("tcp:127.0.0.1:%d" % port, elf, ("--samples", str(n)))
    fg, tg = j.get("decoder", {}).get("text_glued"), t.get("decoder", {}).get("text_glued")
    check("attach cut: a file takes its first line's stream line as the cut, not glued (it may begin anywhere)",
          code == 0 and fg and fg == len(glued) - 2, "%s glued, %d in the text after the first" % (fg, len(glued) - 2))
    check("attach cut: through tcp:, the first line is the cut, not a glued line; its samples kept",
          t.get("total") == n and fg and tg == fg and
          not any("glued" in x and x.startswith("%d " % (fg + 1)) for x in t.get("losses", [])),
          "file %s, tcp %s glued; samples %s of %s" % (fg, tg, t.get("total"), n))


def duration_cut_not_malformed():
    """--duration stops reading a live source in the middle of a line: that line is the cut, not a
    malformed line (FreeRTOS's demo showed "1 malformed lines dropped" after every --duration run)."""
    cap = os.path.join(ROOT, "build", "scenarios", "stream_tagged", "uart.txt")
    elf = os.path.join(ROOT, "build", "scenarios", "stream_tagged", "fw.elf")
    if not check("duration cut: the stream_tagged capture is built", os.path.exists(cap) and os.path.exists(elf), cap):
        return
    text = open(cap, "rb").read()
    whole = text[:text.rfind(b"\n", 0, len(text) // 2) + 1]
    nxt = text[len(whole):text.index(b"\n", len(whole))]
    port = harness.tcp_server([whole + nxt[:len(nxt) // 2]], 0, 6)
    code, j = task_json("tcp:127.0.0.1:%d" % port, elf, ("--duration", "2"))
    path = os.path.join(TMP, "duration whole.txt")
    with open(path, "wb") as f:
        f.write(whole)
    code2, ref = task_json(path, elf)
    dec = j.get("decoder", {})
    check("duration cut: the half line read when --duration ends is not counted malformed, nothing lost",
          code == 0 and dec.get("text_bad_lines") == 0 and dec.get("text_bad_checks") == 0 and
          not any("malformed" in x for x in j.get("losses", [])) and j.get("total") == ref.get("total"),
          "exit %s; decoder %s; losses %s; samples %s of %s" % (code, dec, j.get("losses"), j.get("total"),
                                                              ref.get("total")))


def announce_without_samples():
    """A firmware that announces itself but never samples (cmprof_start() never called: a FreeRTOS
    hook the demo's config does not enable) is told so, as a file and live."""
    cap = os.path.join(ROOT, "build", "scenarios", "stream_tagged", "uart.txt")
    elf = os.path.join(ROOT, "build", "scenarios", "stream_tagged", "fw.elf")
    if not check("announce only: the stream_tagged capture is built", os.path.exists(cap) and os.path.exists(elf), cap):
        return
    lines = open(cap, "rb").read().split(b"\n")
    text = b"boot\n" + b"".join(ln + b"\n" for ln in lines if ln.startswith((b"@cmprof", b"@task")))
    path = os.path.join(TMP, "announce only.txt")
    with open(path, "wb") as f:
        f.write(text)
    port = harness.tcp_server([text], 0, 4)
    for name, src, extra in (("file", path, []), ("tcp:", "tcp:127.0.0.1:%d" % port, ["--duration", "1"])):
        r = subprocess.run([TOOL, "--batch"] + extra + [src, elf], capture_output=True, timeout=60)
        err = r.stderr.decode(errors="replace")
        check("announce only (%s): exit 2, one line saying sampling never started" % name,
              r.returncode == 2 and "announced itself but sent no samples" in err and "cmprof_start()" in err and
              len(err.strip().splitlines()) == 1, "exit %d: %s" % (r.returncode, err))


def static_control_block():
    """A dump whose tags were never named (no task line): a tag that starts a variable of the ELF (a
    statically defined control block, as Zephyr's z_idle_threads) is named by that variable with its
    address; a tag inside one (a control block in a heap) keeps its address alone."""
    nm = subprocess.run(["arm-none-eabi-nm", "-S", ELF], capture_output=True, text=True).stdout.split("\n")
    objs = [(int(f[0], 16), f[3]) for f in (ln.split() for ln in nm) if len(f) == 4 and f[2] in "bBdD" and
            int(f[1], 16) >= 16 and not f[3].startswith("cmprof")]
    code = [int(f[0], 16) for f in (ln.split() for ln in nm) if len(f) == 4 and f[2] in "tT"]
    addr, var = objs[0]
    pc = code[0]
    dump = "prof raw n=8\np %s\ng %s\nend\n" % (" ".join("%08x" % pc for _ in range(8)),
                                                  " ".join("%08x" % t for t in [addr] * 4 + [addr + 8] * 4))
    path = os.path.join(TMP, "static_tcb.txt")
    open(path, "w").write(dump)
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--by", "task", path, ELF], capture_output=True, text=True)
    rows = sorted(row["name"] for row in json.loads(r.stdout)["rows"]) if r.stdout.startswith("{") else r.stderr
    check("a never-named tag at a variable's start is named by it (%s), one inside a variable keeps its address"
          % var, rows == sorted(["%s (0x%08x)" % (var, addr), "0x%08x" % (addr + 8)]), rows)


def main():
    os.makedirs(TMP, exist_ok=True)
    check("the tasks scenario's ELF is built", os.path.exists(ELF), ELF)
    # firmware before issue 30, its 62 slots full: '/' for the tasks past them, no tag on the wire
    case("old full table", stream([("A", 0x20000000, "motor")], ["A", "/", "/"], 60),
         ["motor", "(no tag: the firmware's task table was full)"], "66.7", "older firmware had 62 slots")
    # today's firmware: a tag sampled before any name ('?'), an interrupt ('-'), a table that filled
    case("new firmware", stream([("A", 0x20000000, "motor"), ("B", 0x20001000, "?")], ["A", "B", "-AW", "/"], 60,
                                full=True),
         ["motor", "0x20001000", "ISR: IRQ 6", "(no tag: the firmware's task table was full)"],
         "50.0", "task table was full (raise CMPROF_STREAM_TASKS, or CONFIG_CMPROF_TASKS in a Zephyr prj.conf)")
    # sampling started before the scheduler: tag 0, named '?'
    case("before the scheduler", stream([("A", 0x20000000, "motor"), ("B", 0, "?")], ["A", "A", "A", "B"], 60),
         ["motor", "0x00000000"], "25.0", "before the RTOS ran its first task")
    late_attach_synthetic()
    defined_after_samples()
    dropped_name_line()
    one_row_per_name()
    late_attach_capture()
    attach_cut_not_glued()
    duration_cut_not_malformed()
    announce_without_samples()
    static_control_block()
    sys.exit(1 if harness.failed else 0)


if __name__ == "__main__":
    main()
