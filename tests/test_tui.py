#!/usr/bin/env python3
"""The live view, driven in tmux like a person would: send keys, read the screen.
  1. a replayed stream capture on a pty: samples arrive, the hottest function's share agrees with
     the truth, then sort, group by line, drill down, sections, filter, resize, help, quit;
     annotate, search and calls in the drill-down at 80x24 and 200x60;
  2. the source goes away: the view says so and keeps its samples;
  3. make demo's path: QEMU streaming the demo firmware on a pty, live within 5 seconds; q stops it.
Arguments name groups of checks (tests/run.sh runs them in different lanes): captures (fixed captures,
no QEMU), qemu (QEMU sampled by wall time), diff (on test_diff.py's captures); none: all of them.
Prints one ok/FAIL line per check."""
import json
import random
import math
import os
import pty
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import scen  # noqa: E402
import harness  # noqa: E402

B64, stream_line = harness.B64, harness.stream_line
from harness import check  # noqa: E402

TOOL = os.path.join(ROOT, "build", "cmprof-top")


# A tmux server of this run's own: other runs of these tests on the machine (other users, other
# checkouts) use the same session names, and a shared server would let them kill each other's.
TMUX = ["tmux", "-L", "cmprof-test-%d" % os.getpid()]


def tmux(*args):
    return subprocess.run(TMUX + list(args), capture_output=True, text=True)


def screen(session):
    return tmux("capture-pane", "-p", "-t", session).stdout


# Every wait is on what the screen shows, with a deadline generous enough for a machine under a load
# of 8 on 2 cores (the tool, tmux and QEMU then run several times slower): the deadlines written
# below are what a quiet machine needs, and each is stretched by PATIENCE. A wait that is met
# returns at once, so only a failing check waits the whole deadline.
PATIENCE = 4.0


def wait_until(session, ok, timeout=10.0):
    """Poll the screen until ok(screen) holds; returns that screen, or past the deadline the last
    one read (the check then fails on it, with what the screen showed)."""
    end = time.time() + timeout * PATIENCE
    while True:
        txt = screen(session)
        if ok(txt) or time.time() > end:
            return txt
        time.sleep(0.1)


def wait_for(session, pattern, timeout=10.0):
    """Poll the screen until pattern (a regex) shows up; returns the screen or None."""
    txt = wait_until(session, lambda t: re.search(pattern, t, re.M) is not None, timeout)
    return txt if re.search(pattern, txt, re.M) else None


def wait_gone(pid, timeout=10.0):
    """Wait until process pid has ended; True when it has."""
    end = time.time() + timeout * PATIENCE
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True
        if zombie or time.time() > end:
            return zombie
        time.sleep(0.1)


def line_of(text, k):
    """Line k of a screen (negative counts from the end), or "" when it has no such line: a screen
    that is not what a check expects must fail the check, not stop the script."""
    lines = text.splitlines()
    return lines[k] if -len(lines) <= k < len(lines) else ""


def pane_descendants(session):
    """The processes this session's pane runs, its shell's children and theirs: (pid, name) pairs.
    Never another test's or user's processes (others may run beside these tests)."""
    pane = tmux("display-message", "-p", "-t", session, "#{pane_pid}").stdout.strip()
    found, todo = [], [pane] if pane.isdigit() else []
    while todo:
        for pid in subprocess.run(["pgrep", "-P", todo.pop()], capture_output=True, text=True).stdout.split():
            try:
                with open("/proc/%s/comm" % pid) as f:
                    found.append((int(pid), f.read().strip()))
            except OSError:
                continue
            todo.append(pid)
    return found


def tool_pid(session):
    """The cmprof-top this session's pane runs (a child of its shell), as a list of one pid or none:
    never another cmprof-top on the machine (other users' may run beside these tests)."""
    pane = tmux("display-message", "-p", "-t", session, "#{pane_pid}").stdout.strip()
    if not pane.isdigit():
        return []
    return subprocess.run(["pgrep", "-n", "-P", pane, "-x", "cmprof-top"], capture_output=True, text=True).stdout.split()


def port_opened(path):
    """True when a process other than this one has the device at path open."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if any(os.readlink("/proc/%s/fd/%s" % (pid, fd)) == path for fd in os.listdir("/proc/%s/fd" % pid)):
                return True
        except OSError:
            continue
    return False


def wait_port_open(path, timeout=10.0):
    """Wait until the tool has opened the pty at path: with nothing to read there yet, the view
    draws nothing, so its screen cannot say when it is ready. True when it has."""
    end = time.time() + timeout * PATIENCE
    while not port_opened(path):
        if time.time() > end:
            return False
        time.sleep(0.05)
    return True


def keys(session, *k):
    """Send keys; the tool reads them in order. The caller waits for what they should show. Send a
    key that leaves a view (Escape above all: ESC and the next key in one read may pass for another
    key) apart from the keys for the next view, once its screen shows (in_list and the like)."""
    tmux("send-keys", "-t", session, *k)


def in_list(txt):
    """The list of rows (the table's header: SHARE over the bar, or, where no bar fits, the share column's
    title first and NAME or LINE) is on the screen, no prompt open under it. (Only SHARE was looked for:
    below 60 columns, with no bar, each wait for the list ran to its deadline, 80 s a run.)"""
    header = re.search(r"^(SHARE|\s*\S*%\s.*\b(NAME|LINE)\b)", txt, re.M)
    return header is not None and not line_of(txt, -1).startswith("/")


class Feeder:
    """A pty whose master side replays a capture at `rate` bytes per second. link: the tool is given a
    symlink to it, as socat's link= makes (a port that may come back: a pty's own /dev/pts path is gone
    for good once its master closes, its number the next terminal's)."""

    def __init__(self, data, rate, start=True, link=False):
        self.master, slave = pty.openpty()
        self.pts = self.path = os.ttyname(slave)
        os.close(slave)
        if link:
            self.path = os.path.join(tempfile.mkdtemp(prefix="cmprof-feeder-"), "ttyV0")
            os.symlink(self.pts, self.path)
        self.data, self.rate, self.stopped = data, rate, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        if start:
            self.thread.start()

    def start(self):
        """Start the feed once the tool has the pty open, as a board that starts after its host."""
        wait_port_open(self.pts, 15)
        self.thread.start()

    def run(self):
        chunk = max(1, int(self.rate / 50))
        for i in range(0, len(self.data), chunk):
            if self.stopped:
                return
            try:
                os.write(self.master, self.data[i:i + chunk])
            except OSError:
                return
            time.sleep(chunk / self.rate)

    def cut(self):
        self.stopped = True
        self.thread.join(timeout=2)
        os.close(self.master)


KEEPALIVE = "cmprof-keepalive"


def keep_server(up=True):
    """tmux ends its server with its last session, and a new-session that races that exit fails
    ("server exited unexpectedly"): the next test then reads an empty screen. An idle session
    keeps one server up from the first test to the last."""
    if up:
        tmux("new-session", "-d", "-s", KEEPALIVE, "sleep 86400")
    else:
        tmux("kill-session", "-t", KEEPALIVE)


def pane_alive(session):
    return tmux("has-session", "-t", session).returncode == 0


def replay_tests(w=120, h=32):
    """The main keys on a replayed live stream, at one terminal size (run at 80x24 and 200x60)."""
    size = "%dx%d: " % (w, h)
    r = scen.Result("stream")
    elf = r.elf
    data = open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read()
    # the capture flows once the tool has the port open, as from a running board: started before, a slow start
    # left up to 64 kB of it in the pty's buffer, read before the share history's first second
    # ended, and the history (key G) then had no second with samples to chart
    # two seconds of it whatever the bytes a sample (the stream's version): the history's first
    # second must end with the capture still flowing
    feeder = Feeder(data, len(data) / 2.0, start=False, link=True)  # (cut below: a port that may come back)
    s = "cmprof-ui"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (TOOL, feeder.path, elf))
    feeder.start()
    got = wait_for(s, r"samples [1-9]\d{3,} ", 15)
    check(size + "live: samples arrive on a pty", got is not None, line_of(got or screen(s), 1))
    # the whole capture (10,000 samples, 2 s of it) has gone through: its whole screen waited for (the
    # count, the rows, the header, the legend), as a capture may catch a redraw half written. At 110
    # columns and more, once the view has run two seconds (a loaded machine takes longer than the
    # capture's 2 s to show it all), the rows have a LAST 60 s sparkline between samples and name.
    hot_row = r"^\S*\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+[\u2581-\u2588\s]*hot_a"
    table = lambda t: [ln for ln in t.splitlines()[5:] if re.search(r"%\s+[\d.]+%", ln)]  # noqa: E731
    whole = lambda t: (re.search(r"^samples 10000 ", t, re.M) is not None and  # noqa: E731
                       re.search(hot_row, t, re.M) is not None and table(t) and "hot_a" in table(t)[0] and
                       "build-id ok" in t and line_of(t, -2).startswith("\u2588 share"))
    txt = wait_until(s, whole, 15)
    m = re.search(hot_row, txt, re.M)
    total = re.search(r"samples (\d+)", txt)
    truth = scen.shares(r.truth()).get("hot_a", 0)
    n = int(total.group(1)) if total else 0
    share = float(m.group(1)) / 100 if m else -1
    rows = table(txt)
    check(size + "live: the hottest function and its share agree with the truth",
          m is not None and rows and "hot_a" in rows[0] and abs(share - truth) <= 3 * scen.sigma(truth, n),
          "hot_a %.2f %% of %d, truth %.2f %% (3 sigma %.2f)" % (100 * share, n, 100 * truth,
                                                                300 * scen.sigma(truth, n)))
    check(size + "live: build-id checked", "build-id ok" in txt, line_of(txt, 0))
    legend = line_of(txt, -2)
    check(size + "a legend line under the table explains the bar and its interval",
          legend.startswith("\u2588 share  \u2591 its 95 % interval  \u00b1% half its width"), legend)
    keys(s, "s")

    def row_name(ln):
        words = [w for w in ln.split() if w not in ("(inlined)", "~approx") and not re.fullmatch(r"\[\w+\]", w)]
        return words[-2] if len(words) > 1 and "." in words[-1] else words[-1]  # a file, maybe cut short

    def names_of(txt):
        return [row_name(ln) for ln in txt.splitlines()[5:] if re.search(r"%\s+[\d.]+%\s+\d+\s+\S", ln)]

    def by_name(txt):  # as people sort names: case ignored, leading underscores too
        names = names_of(txt)
        return "sort name" in txt and names == sorted(names, key=lambda x: (x.lstrip("_").lower(), x)) and len(names) > 3

    txt = wait_until(s, by_name)
    check(size + "key s: sort by name", by_name(txt), str(names_of(txt)[:4]))
    keys(s, "s", "g")
    by_line = lambda t: "by line" in t and re.search(r"stream\.c:\d+", t) is not None  # noqa: E731
    txt = wait_until(s, by_line)
    check(size + "key g: group by line", by_line(txt), line_of(txt, 2))
    keys(s, "g", "g", "g")  # line -> file -> task -> function
    txt = wait_until(s, lambda t: "by function" in t)
    check(size + "key g cycles back to functions", "by function" in txt)
    keys(s, "Enter")
    drilled = lambda t: (re.search(r"^hot_a\s+\d+ samples", t, re.M) is not None and  # noqa: E731
                         "NOP_LOOP(__attribute__((noinline)), hot_a)" in t and "inline chain of the selected line" in t)
    txt = wait_until(s, drilled)
    check(size + "Enter: drill into hot_a's source lines", drilled(txt), line_of(txt, 4))
    hot = [ln for ln in txt.splitlines() if "NOP_LOOP(__attribute__((noinline)), hot_a)" in ln]
    check(size + "drill-down: the hottest line preselected, its share of the function beside its share of all",
          "of this function's samples, then of all" in txt and hot and
          re.search(r"100\.00%\s+6\d\.\d\d%", hot[0]) is not None, hot[0] if hot else "")
    keys(s, "Escape")  # the list, then G on its selected row
    wait_until(s, in_list)
    keys(s, "G")

    def charted(txt):
        lines = txt.splitlines()
        title = [i for i, ln in enumerate(lines) if ln.startswith("HISTORY  hot_a  share per ")]
        chart = lines[title[0] + 1:-2] if title else []
        return (title and any("\u2588" in ln or re.search("[\u2581-\u2587]", ln) for ln in chart) and
                re.search(r"-1min .* now$", lines[-2]) and "hot_a" in "".join(lines[5:title[0]]) and len(lines) <= h)

    txt = wait_until(s, charted)
    title = [ln for ln in txt.splitlines() if ln.startswith("HISTORY  hot_a  share per ")]
    check(size + "key G: the selected row's share over time, charted under the table", charted(txt),
          title[0] if title else "no HISTORY line")
    keys(s, "G", "t")
    txt = wait_until(s, lambda t: "SECTION" in t and "COUNT" in t)
    check(size + "key t: sections view", "SECTION" in txt and "COUNT" in txt, line_of(txt, 4))
    keys(s, "t", "/", "h", "o", "t", "_", "b", "Enter")

    def rows_of(txt):
        return [ln for ln in txt.splitlines()[5:] if re.search(r"%\s+[\d.]+%\s+\d+", ln)]

    filtered = lambda t: "filter: hot_b" in t and len(rows_of(t)) == 1 and "hot_b" in rows_of(t)[0]  # noqa: E731
    txt = wait_until(s, filtered)
    check(size + "key /: filter by name", filtered(txt), "%d rows" % len(rows_of(txt)))
    keys(s, "/", "Escape")
    wait_until(s, lambda t: "filter:" not in t and "hot_a" in t)
    tmux("resize-window", "-t", s, "-x", "80", "-y", "24")
    small = lambda t: (len(t.splitlines()) <= 24 and line_of(t, 0).startswith("cmprof-top") and  # noqa: E731
                       "? help" in t and "hot_a" in t)
    txt = wait_until(s, small)
    check(size + "resize to 80x24: header, rows and key bar redrawn", small(txt), "%d lines" % len(txt.splitlines()))
    tmux("resize-window", "-t", s, "-x", "160", "-y", "45")
    big = lambda t: "hot_a" in t and "? help" in t and len(t.splitlines()) > 24  # noqa: E731
    txt = wait_until(s, big)
    check(size + "resize to 160x45", big(txt))
    colored = tmux("capture-pane", "-p", "-e", "-t", s).stdout
    check(size + "colours on by default", re.search(r"\x1b\[[0-9;]*3[1-7]", colored) is not None)
    keys(s, "?")
    txt = wait_until(s, lambda t: "Keys" in t and "freeze" in t)
    check(size + "key ?: help", "Keys" in txt and "freeze" in txt)
    keys(s, "Escape")  # the list, then the log page
    wait_until(s, lambda t: in_list(t) and "Keys" not in t)
    keys(s, "l")
    got = wait_for(s, r"^\d\d:\d\d\.\d  taken=10000", 5)
    check(size + "key l: the firmware's log lines, each with its arrival time", got is not None,
          " | ".join((got or screen(s)).splitlines()[4:7]))
    keys(s, "Escape")
    keys(s, "Escape")
    txt = wait_until(s, lambda t: re.search(r"^SHARE", t, re.M) is not None and "hot_a" in t)
    count = lambda t: (re.search(r"samples (\d+)", t) or re.search("()", "")).group(1)  # noqa: E731
    before = count(txt)
    feeder.cut()
    # the whole screen waited for: the notice and the count under it (a redraw may be half written)
    txt = wait_until(s, lambda t: "[reconnecting" in t and count(t) == before, 5)
    check(size + "source cut: the view says reconnecting and keeps every sample", "[reconnecting" in txt and
          before and count(txt) == before, line_of(txt, 0) + " | " + line_of(txt, 1))
    pid = tool_pid(s)
    keys(s, "q")
    gone = bool(pid) and wait_gone(int(pid[0]))
    # the tool's last output (the terminal given back) may reach tmux after the tool has ended
    txt = wait_until(s, lambda t: "cmprof-top" not in line_of(t, 0) if t.strip() else True, 5)
    check(size + "key q: quits and gives the terminal back",
          gone and ("cmprof-top" not in line_of(txt, 0) if txt.strip() else True),
          ("tool still running; " if not gone else "") + (line_of(txt, 0) if txt.strip() else "(empty)"))
    tmux("kill-session", "-t", s)


def section_graph_test(w, h):
    """Key G in the sections view: the selected section's mean run time second by second, from a
    live stream whose reports slow down over four seconds (each second's mean: 10, 20, 30, 40 us).
    The stream has no samples, as from firmware that only times sections: a few hundred bytes a
    second, fewer than the format detection's window, so the view must decide without it."""
    size = "%dx%d: " % (w, h)
    out = []
    n = total = 0
    for second in range(4):
        # as the firmware does, the announce and the names again every second: the view may open
        # the port after the first ones went by
        out += [stream_line("@cmprof v=2 clk=168000000 tclk=168000000 period=16000 jitter=4095 base=08000000"),
                stream_line("@secname 0 control")]
        for k in range(10):  # ten reports a second, ten runs each
            run = 1680 * (second + 1)  # ticks at 168 MHz: 10 us, 20 us, ...
            n += 10
            total += 10 * run
            out.append(stream_line("@sect 0 n=%d cur=%d min=1680 max=%d sum=%d" % (n, run, run, total)))
    data = "".join(out).encode()
    feeder = Feeder(data, len(data) / 4.0)
    s = "cmprof-sectgraph"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h),
         "%s %s %s; sleep 30" % (TOOL, feeder.path, scen.Result("sections").elf))
    feeder.thread.join(60)  # the four seconds of reports have been sent
    keys(s, "t", "G")

    def rising(txt):
        lines = txt.splitlines()
        title = [i for i, ln in enumerate(lines)
                 if re.match(r"HISTORY  control  mean time per 1 s, last 1 min, peak [34]\d\.\d \u00b5s", ln)]
        chart = lines[title[0] + 1:-2] if title else []
        # the newest seconds at the right are the tallest: the top row has bars only there
        top = chart[0] if chart else ""
        bars = [i for i, c in enumerate(top) if c == "\u2588"]
        return title and bars and max(bars) > len(top) - 6 and re.search(r"-1min .* now$", lines[-2]) and \
            len(lines) <= h, (lines[title[0]] + " | " + top.strip()) if title else \
            " | ".join(ln for ln in lines if "HISTORY" in ln) or "no HISTORY line"

    txt = wait_until(s, lambda t: rising(t)[0])
    ok, detail = rising(txt)
    check(size + "key G in the sections view: the selected section's mean time over time, rising", ok, detail)
    feeder.cut()
    tmux("kill-session", "-t", s)


def narrow_prompts_test():
    """At 80 and 60 columns key o's prompt names every format and Esc on the rows it needs (it was cut
    after "k" at 80), and the sections view's clock note is a whole sentence, shorter as the screen
    narrows (at 80 it was cut in "(the core's)"; at 60 in "not the head")."""
    lines = [stream_line("@cmprof v=2 clk=168000000 tclk=168000000 sclk=1000000000 period=16000 jitter=4095 "
                         "base=08000000"), stream_line("@secname 0 control")]
    lines += [stream_line("@sect 0 n=%d cur=1000 min=1000 max=1000 sum=%d" % (10 * k, 10000 * k)) for k in range(1, 6)]
    cap = os.path.join(ROOT, "build", "narrow-prompts.txt")
    with open(cap, "w") as f:
        f.write("".join(lines))
    formats = ["t table", "c CSV", "j JSON", "f folded", "s speedscope", "p pprof", "k callgrind", "l lcov", "e trace"]
    notes = {80: "u: ticks; clock 1000.000 MHz (announced), not the core's 168.0 MHz",
             60: "clock 1000.000 MHz, not the core's 168.0"}
    for w in (80, 60):
        s = "cmprof-narrow"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", "24", "%s %s %s; sleep 30" % (
            TOOL, cap, scen.Result("sections").elf))
        wait_for(s, r"end of file", 30)
        keys(s, "t")  # microseconds: the note offers u for ticks
        txt = wait_until(s, lambda t: notes[w] in t)
        note = [ln for ln in txt.splitlines() if "clock 1000" in ln and "sections' clock" not in ln]
        check("%dx24: the sections view's clock note is a whole sentence of the width" % w,
              note == [notes[w]], "%r" % note)
        keys(s, "t", "o")
        txt = wait_until(s, lambda t: "e trace" in t and "save a snapshot as" in t)
        bottom = txt.splitlines()[-4:]
        shown = " ".join(bottom)
        check("%dx24: key o's prompt names every format and Esc, within the width" % w,
              all(f in shown for f in formats) and "Esc" in shown and max(len(ln) for ln in bottom) <= w,
              " | ".join(bottom))
        tmux("kill-session", "-t", s)


def gdb_slow_server_test(w=120, h=30):
    """A GDB server whose every stop reply comes 0.6 s late (a slow probe or link): one sample in the
    first seconds. The header shows the halting figures from that first sample on, and d says the
    server is what limits the samples, with its numbers (it said "samples 1", no figures, d "none")."""
    import test_gdb
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    if not os.path.exists(test_gdb.ELF):
        check("gdb_loops ELF built (tests/scen_sets.py build)", False, test_gdb.ELF)
        return
    srv = test_gdb.FakeServer([test_gdb.nm("hot_a") + 4], stop_delay=0.6)
    s = "cmprof-gdb-slow"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (tool, srv.spec, test_gdb.ELF))
    header = r"\[connected, 0\.\d\d halts/s, core halted \d+\.\d %"
    txt = wait_until(s, lambda t: re.search(header, line_of(t, 0)), 20)
    check("%dx%d: gdb, a server 0.6 s late to stop the core: the header has the halting figures from the first sample, "
          "0.xx halts/s (not '0 halts/s')" % (w, h), re.search(header, line_of(txt, 0)) is not None, line_of(txt, 0))
    keys(s, "d")
    txt = wait_until(s, lambda t: "diagnostics" in t and "limits the samples" in t, 10)
    flat = " ".join(" ".join(txt.splitlines()[2:]).split())
    # the figures against the stand-in's own clock (a loaded host stretches its 0.6 s: 974 ms seen), and the
    # rate said against the halt said (10 % halted at the default pace)
    said = re.search(r"source: the GDB server limits the samples: a halt takes (\d+) ms on average \(the server "
                     r"took up to (\d+) ms to stop the core\), so about (0\.\d+) halts/s", flat)
    longest = 1000 * max(srv.stops, default=0)
    halt, took, rate = (float(x) for x in said.groups()) if said else (0, 0, 0)
    check("%dx%d: gdb, the same: d says the server limits the samples, how long a halt takes and what rate that allows"
          % (w, h), said is not None and 595 <= longest and longest - 5 <= took <= longest + 250 and halt >= 595 and
          abs(rate * halt / 1000 - 0.1) <= 0.015,
          "server's longest stop %.0f ms: %s" % (longest, flat[:400]))
    keys(s, "q")
    tmux("kill-session", "-t", s)
    srv.thread.join(5)


def elf_rebuilt_test():
    """The ELF rebuilt in place while the view runs (cp over it, as a build does): the header says
    ELF CHANGED and d says why the names may be wrong and what to do; it said nothing, and once the
    view read the new file's bytes as the old one's DWARF, "damaged DWARF", which it was not."""
    r = scen.Result("stream")
    elf = os.path.join(ROOT, "build", "rebuilt-fw.elf")
    shutil.copyfile(r.elf, elf)
    feeder = Feeder(open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read(), 20000.0, start=False)
    s = "cmprof-rebuilt"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "30", "%s %s %s; sleep 30" % (TOOL, feeder.path, elf))
    feeder.start()
    wait_for(s, r"samples [1-9]\d* ", 15)
    shutil.copyfile(scen.Result("m3_loops").elf, elf)  # in place: the same inode, other bytes
    head = wait_until(s, lambda t: "ELF CHANGED (d)" in line_of(t, 0))
    keys(s, "d")
    page = wait_until(s, lambda t: "changed on disk" in t)
    check("the ELF rebuilt in place while the view runs: the header says so, d says why and what to do",
          "ELF CHANGED (d)" in line_of(head, 0) and "changed on disk since cmprof-top read it" in page and
          "restart cmprof-top" in page, line_of(head, 0) + " | " + " ".join(
              ln.strip() for ln in page.splitlines() if "changed" in ln or "restart" in ln))
    tmux("kill-session", "-t", s)
    feeder.cut()


def view_items_test(w, h):
    """Issue 9's smaller items on the rtos scenario (tasks, inlined functions, several files), at
    one size: inlined functions marked; the filter prompt at the bottom, matching a file and a
    task, Esc clearing it; ? explaining the header's counters within the width; r starting the
    counts and the clock over."""
    size = "%dx%d: " % (w, h)
    r = scen.Result("rtos")
    s = "cmprof-items"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (
        TOOL, os.path.join(scen.BUILD, "rtos", "uart.txt"), r.elf))
    wait_for(s, r"end of file", 30)

    def rows(txt):
        return [ln for ln in txt.splitlines()[5:-1] if re.search(r"%\s+[\d.]+%\s+\d+\s+\S", ln)]

    keys(s, "/", *"cmprof_stream.c")
    txt = wait_until(s, lambda t: line_of(t, -1).startswith("/cmprof_stream.c_"))
    prompt = line_of(txt, -1)
    check(size + "the filter prompt sits on the bottom line, as in less",
          prompt.startswith("/cmprof_stream.c_") and "Esc clears it" in prompt, prompt)
    keys(s, "Enter")

    def only_file(txt):
        shown = rows(txt)
        return len(shown) >= 3 and all(re.search(r"cmprof_stream(\.c?|\u2026)$", ln.rstrip()) for ln in shown) \
            and "filter: cmprof_stream.c" in txt  # (a file note cut short ends in its mark)

    txt = wait_until(s, only_file)
    shown = rows(txt)
    check(size + "the filter matches a file: only cmprof_stream.c's functions", only_file(txt),
          "%d rows: %s" % (len(shown), shown[0].strip() if shown else ""))
    # (the stream's own functions, filtered: where pc_chars ranks among all rows depends on the build)
    txt = wait_until(s, lambda t: "pc_chars (inlined)" in t)
    marked = [ln for ln in rows(txt) if "(inlined)" in ln]
    check(size + "inlined functions are marked in the function view", marked and "pc_chars (inlined)" in txt,
          marked[0].strip() if marked else "none")
    keys(s, "Escape")
    cleared = lambda t: "filter:" not in t and any(" hot_a " in ln + " " for ln in rows(t))  # noqa: E731
    txt = wait_until(s, cleared)
    check(size + "Esc clears the filter", cleared(txt), line_of(txt, 2))
    keys(s, "g", "g", "g")  # by task
    keys(s, "/", *"w076", "Enter")
    one_task = lambda t: ("by task" in t and len(rows(t)) == 1 and  # noqa: E731
                          rows(t)[0].rstrip().endswith("w076"))
    txt = wait_until(s, one_task)
    check(size + "the filter matches a task", one_task(txt), "; ".join(ln.strip() for ln in rows(txt)))
    keys(s, "Escape")  # the filter cleared, then task -> function -> line -> file
    wait_until(s, lambda t: in_list(t) and "filter:" not in t)
    keys(s, "g", "g", "g")

    def by_file(txt):
        lines = txt.splitlines()
        names = [ln.split("  ")[-1].strip() for ln in rows("\n".join(lines))]
        return ("by file" in line_of(txt, 2) and len(names) >= 3 and
                all(re.search(r"\.[chS]$", n) for n in names) and
                all(n.startswith("/") or n.startswith("...") for n in names) and
                max(len(ln) for ln in lines) <= w), "; ".join(names[:5])

    txt = wait_until(s, lambda t: by_file(t)[0])
    check(size + "by file: each path ends with its file's name, trimmed from the left when long", *by_file(txt))
    keys(s, "g", "g", "d")  # back to functions (file -> task -> function); the diagnostics page
    diag = lambda t: (line_of(t, 4) == "diagnostics" and any("glued onto log lines" in ln for ln in t.splitlines())  # noqa
                      and max(len(ln) for ln in t.splitlines()) <= w)
    txt = wait_until(s, diag)
    check(size + "d: the diagnostics page, wrapped to the width", diag(txt), " | ".join(txt.splitlines()[4:7]))
    keys(s, "Escape")  # the list, then the help page, at its end
    wait_until(s, lambda t: in_list(t) and line_of(t, 4) != "diagnostics")
    keys(s, "?")
    wait_until(s, lambda t: "Keys" in t)
    keys(s, "End")

    def explained(txt):
        lines = txt.splitlines()
        said = [k for k in ("samples", "bad", "lost", "overhead", "idle", "data lost")
                if any(re.match(r"  %s\s{2,}\S" % re.escape(k), ln) for ln in lines)]
        return len(said) >= 5 and max(len(ln) for ln in lines) <= w, "explained: %s" % said

    txt = wait_until(s, lambda t: explained(t)[0])
    check(size + "? explains the header's counters, wrapped to the width", *explained(txt))
    keys(s, "Escape")  # the list, then r
    wait_until(s, lambda t: in_list(t) and "Keys" not in t)
    since_r = time.time()
    keys(s, "r")

    def restarted(t):  # the count at 0, the clock no further on than the time since r (a loaded machine
        # may draw or read the screen seconds late: 00:00 or 00:01 on a quiet one)
        m = re.match(r"samples 0 .* (\d\d):(\d\d) ", line_of(t, 1))
        return m is not None and 60 * int(m.group(1)) + int(m.group(2)) <= max(1, time.time() - since_r + 1)

    txt = wait_until(s, restarted)
    check(size + "r starts the counts, the counters and the clock over", restarted(txt), line_of(txt, 1))
    tmux("kill-session", "-t", s)


def no_color_test():
    """--no-color and NO_COLOR: no colour escape on screen, only bold/dim/reverse."""
    r = scen.Result("loops_jitter")
    for name, cmd in (("--no-color", "%s --no-color %s %s" % (TOOL, os.path.join(scen.BUILD, "loops_jitter", "uart.txt"),
                                                            r.elf)),
                      ("NO_COLOR", "NO_COLOR=1 %s %s %s" % (TOOL, os.path.join(scen.BUILD, "loops_jitter", "uart.txt"),
                                                             r.elf))):
        s = "cmprof-nocolor"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "30", cmd + "; sleep 30")
        wait_for(s, r"end of file[\s\S]*\bhot_a\b", 30)
        txt = tmux("capture-pane", "-p", "-e", "-t", s).stdout
        check("%s: no colours" % name, "hot_a" in txt and re.search(r"\x1b\[[0-9;]*3[1-7]", txt) is None)
        tmux("kill-session", "-t", s)


def inline_and_signal_tests(w=120, h=30):
    """Step into an inlined call from its caller's source line; SIGTERM gives the terminal back."""
    r = scen.Result("loops_inline_o2")
    s = "cmprof-inline"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h),
         "%s %s %s; echo exited $?; sleep 30" % (TOOL, os.path.join(scen.BUILD, "loops_inline_o2", "uart.txt"), r.elf))
    wait_for(s, r"end of file", 30)
    keys(s, "i")  # charge inlined code to its caller: everything is in run()

    def rows_of(txt):
        return [ln for ln in txt.splitlines()[5:] if re.search(r"%\s+[\d.]+%\s+\d+", ln)]

    charged = lambda t: "(no inline)" in t and rows_of(t) and " run " in rows_of(t)[0] + " "  # noqa: E731
    txt = wait_until(s, charged)
    check("%dx%d: " % (w, h) + "key i: inlined code charged to its caller", charged(txt),
          rows_of(txt)[0] if rows_of(txt) else "")
    keys(s, "Enter")  # run's source, at its hottest line: the call of hot_a
    wait_until(s, lambda t: re.search(r"^run\s+\d+ samples", t, re.M) is not None and "hot_a(700);" in t)
    keys(s, "Enter")  # step into hot_a, inlined there
    txt = wait_until(s, lambda t: re.search(r"^hot_a \u2190 run", t, re.M) is not None)
    check("%dx%d: " % (w, h) + "Enter on an inlined call steps into the callee", re.search(r"^hot_a \u2190 run", txt, re.M) is not None,
          line_of(txt, 4))
    keys(s, "Escape")
    txt = wait_until(s, lambda t: re.search(r"^run\s+\d+ samples", t, re.M) is not None)
    check("%dx%d: " % (w, h) + "Esc steps back out to the caller", re.search(r"^run\s+\d+ samples", txt, re.M) is not None,
          line_of(txt, 4))
    call = [ln for ln in txt.splitlines() if "hot_a(700);" in ln]
    check("%dx%d: " % (w, h) + "the inlined call site carries its callee's samples (about 70 % of run's)",
          call and re.search(r"\b(6[5-9]|7[0-4])\.\d\d%", call[0]) is not None, call[0] if call else "")
    pid = tool_pid(s)
    if pid:
        os.kill(int(pid[0]), 15)
    got = wait_for(s, r"^exited \d+", 5)
    check("%dx%d: " % (w, h) + "SIGTERM: cmprof-top restores the terminal and exits", got is not None and "cmprof-top" not in got,
          line_of((got or screen(s)).strip(), 0))
    tmux("kill-session", "-t", s)


def annotate_search_call_tests():
    """The drill-down like perf annotate, at 80x24 and 200x60: key a shows run()'s instructions
    under their source lines with shares and the hottest one selected, Enter on a bl instruction
    or on a line with a real call enters the callee, / searches the lines, n and N repeat."""
    r = scen.Result("loops_jitter")
    cap = os.path.join(scen.BUILD, "loops_jitter", "uart.txt")
    for w, h in ((80, 24), (200, 60)):
        s = "cmprof-annotate"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (TOOL, cap, r.elf))
        wait_for(s, r"end of file", 30)
        keys(s, "/", "run", "Enter")
        wait_until(s, lambda t: "filter: run" in t)  # Enter then drills into run, not the row before
        keys(s, "Enter")  # run's lines
        wait_until(s, lambda t: re.search(r"^run\s+\d+ samples", t, re.M) is not None)
        keys(s, "a")

        def annotated(txt):
            lines = txt.splitlines()
            insns = [ln for ln in lines if re.search(r"\b0800[0-9a-f]{4}: \S", ln)]
            shares = [ln for ln in insns if re.search(r"\d+\.\d\d%\s+\d+\.\d\d%\s+0800", ln)]
            return (re.search(r"^run\s+annotate: \d+ samples", txt, re.M) is not None and len(insns) >= 5 and shares and
                    any("while (cmprof_samples() < SAMPLES)" in ln for ln in lines) and len(lines) <= h and
                    "a annotate" in txt), "%d instructions, %d with shares; %s" % (len(insns), len(shares), line_of(txt, 4))

        txt = wait_until(s, lambda t: annotated(t)[0])
        check("%dx%d: a annotates run(): instructions with shares under source lines" % (w, h), *annotated(txt))
        keys(s, "/", "<hot_c>", "Enter")  # the call instruction
        typed = lambda t: not line_of(t, -1).startswith("/")  # noqa: E731  (the prompt closed: Enter read)
        txt = wait_until(s, lambda t: typed(t) and "<hot_c>" in t)
        sel = [ln for ln in txt.splitlines() if "<hot_c>" in ln]
        keys(s, "Enter")
        entered = lambda t: re.search(r"^hot_c \u2190 run", t, re.M) is not None and "0800" in t  # noqa: E731
        txt = wait_until(s, entered)
        check("%dx%d: / finds the bl instruction, Enter on it enters the callee (not inlined)" % (w, h),
              sel and entered(txt), (sel[0].strip() if sel else "no <hot_c> row") + " | " + line_of(txt, 4))
        keys(s, "Escape")  # back to run, still annotating
        wait_until(s, lambda t: re.search(r"^run\s+annotate: \d+ samples", t, re.M) is not None)
        keys(s, "Escape")  # run's source lines again, where a was pressed (Esc went to the list)
        txt = wait_until(s, lambda t: re.search(r"^run\s+\d+ samples", t, re.M) is not None)
        check("%dx%d: Esc in annotate goes back to the source lines it came from" % (w, h),
              re.search(r"^run\s+\d+ samples", txt, re.M) is not None, line_of(txt, 4))
        keys(s, "/", "hot_b", "Enter")
        txt = wait_until(s, lambda t: typed(t) and "hot_b(HOT_B_N);" in t)
        sel_line = [ln for ln in txt.splitlines() if "hot_b(HOT_B_N);" in ln]
        keys(s, "Enter")  # a real call on that line: bl hot_b
        entered = re.search(r"^hot_b \u2190 run", wait_until(s, lambda t: re.search(r"^hot_b \u2190 run", t, re.M)
                                                                is not None), re.M) is not None
        keys(s, "Escape")
        wait_until(s, lambda t: re.search(r"^run\s+\d+ samples", t, re.M) is not None)
        keys(s, "/", "hot_", "Enter")
        txt = wait_until(s, lambda t: typed(t) and re.search(r"\bhot_[abc]\(", t) is not None)
        first = [ln for ln in txt.splitlines() if re.search(r"\bhot_[abc]\(", ln)]
        body = lambda t: t.splitlines()[3:]  # noqa: E731  (under the header, whose clock may tick)
        keys(s, "n")
        after_n = wait_until(s, lambda t: body(t) != body(txt))
        keys(s, "N")
        after_big_n = wait_until(s, lambda t: body(t) != body(after_n))
        keys(s, "/", "no such text", "Enter")
        missing = wait_until(s, lambda t: "not found: no such text" in t)
        check("%dx%d: Enter on a source line with a call enters it; n/N move between matches; a miss is said" % (w, h),
              sel_line and entered and first and body(after_n) != body(after_big_n) and
              "not found: no such text" in missing,
              "line %r, entered %s, matches %d" % (sel_line[0].strip() if sel_line else None, entered, len(first)))
        tmux("kill-session", "-t", s)
    # the skid the diagnostics report, marked on its instruction
    r = scen.Result("irqoff_long")
    s = "cmprof-skid"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "100", "-y", "30", "%s %s %s; sleep 30" % (
        TOOL, os.path.join(scen.BUILD, "irqoff_long", "uart.txt"), r.elf))
    wait_for(s, r"end of file", 30)
    keys(s, "/", "irq_on", "Enter")
    wait_until(s, lambda t: in_list(t) and "filter: irq_on" in t)  # Enter then drills into irq_on
    keys(s, "Enter")
    wait_until(s, lambda t: re.search(r"^irq_on\s+\d+ samples", t, re.M) is not None)
    keys(s, "a")

    def skid_rows(txt):
        return [ln for ln in txt.splitlines() if "skid: after 'cpsie i'" in ln]

    txt = wait_until(s, lambda t: re.search(r"annotate: \d+ samples", t) is not None and skid_rows(t))
    marked = skid_rows(txt)
    check("annotate marks the skid instruction (right after cpsie i) with its share",
          len(marked) == 1 and "0800016a:" in marked[0] and re.search(r"\d+\.\d\d%", marked[0]) is not None,
          marked[0].strip() if marked else line_of(txt, 4))
    tmux("kill-session", "-t", s)


def fit_tests():
    """80x24 and 200x60: the section view keeps every timing and the budget (narrow columns,
    over/limit at 80), the rate column when there is room; the header keeps the counters that
    matter (a loss) and drops the ones at zero first."""
    r = scen.Result("sections")
    for w, h in ((80, 24), (200, 60)):
        s = "cmprof-fit"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s --cpu-hz 168000000 --budget 0=25 %s %s; "
             "sleep 30" % (TOOL, os.path.join(scen.BUILD, "sections", "uart.txt"), r.elf))
        wait_for(s, r"end of file", 30)
        keys(s, "t")
        wide = w >= 96
        want_head = ["COUNT", "CUR \u00b5s", "MIN \u00b5s", "MAX \u00b5s", "MEAN \u00b5s"] + (
            ["RATE/s", "OVER BUDGET"] if wide else ["OVER/LIMIT"])

        def parts(txt):
            lines = txt.splitlines()
            head = [ln for ln in lines if "SECTION" in ln]
            row0 = [ln for ln in lines if re.match(r"^0\s", ln)]
            return lines, head, row0, (head[0] if head else "no header") + " | " + (row0[0] if row0 else "no row 0")

        def kept(txt):
            lines, head, row0, detail = parts(txt)
            return head and all(k in head[0] for k in want_head) and row0 and \
                ("> 25.0 \u00b5s" if wide else "/25.0") in row0[0] and max(len(ln) for ln in lines) <= w, detail

        def header(txt):  # (a file read to its end has no rate: none shown)
            return re.search(r"^samples \d+\s+\d\d:\d\d", line_of(txt, 1)) is not None and \
                "data lost" in line_of(txt, 1) and "/s" not in line_of(txt, 1)

        # the table and the header over it waited for whole: a redraw may be caught half written
        txt = wait_until(s, lambda t: kept(t)[0] and header(t))
        check("%dx%d: sections keep count, cur, min, max, mean and the budget%s" % (w, h, ", rate" if wide else ""),
              *kept(txt))
        check("%dx%d: the header keeps samples and the data loss (and no rate for a file read)" % (w, h), header(txt),
              line_of(txt, 1))
        keys(s, "u")  # timer ticks

        def ticks(txt):  # whole ticks under a head that says so, the budget's limit in ticks too (25 us at 168 MHz)
            lines, head, row0, detail = parts(txt)
            return head and all("%s ticks" % c in head[0] for c in ("CUR", "MIN", "MAX", "MEAN")) and row0 and \
                re.search(r"\s%d\s" % r.kv["sect"][0]["cur"], row0[0]) is not None and ".00" not in row0[0] and \
                ("> 4200" if wide else "/4200") in row0[0] and "u: microseconds" in txt and \
                max(len(ln) for ln in lines) <= w, detail

        txt = wait_until(s, lambda t: ticks(t)[0])
        check("%dx%d: u shows timer ticks instead of \u00b5s, and back" % (w, h), *ticks(txt))
        keys(s, "u", "r")

        def over(txt):
            lines, _, row0, _ = parts(txt)
            note = [ln for ln in lines if ln.startswith("since r ")]
            return note and note[0].rstrip().endswith("from the reports since") and row0 and \
                re.match(r"^0\s+-?\s+0\s", row0[0]) is not None and "CUR \u00b5s" in txt, \
                (note[0] if note else "no note") + " | " + (row0[0] if row0 else "no row 0")

        txt = wait_until(s, lambda t: over(t)[0])
        check("%dx%d: r starts the section statistics over, and says so within the width" % (w, h), *over(txt))
        tmux("kill-session", "-t", s)


def sections_no_clock_test(w=100, h=24):
    """The section view with a --budget and no clock known (none announced, no --cpu-hz): the runs
    over it cannot be told, so the count is "?" (it was "0", a pass never checked); and the times
    in whole ticks stay in their columns, a mean past 10 digits as 15.1G (it was 15050211328.00,
    every column after it pushed right)."""
    s = "cmprof-noclock"
    view_capture(s, w, h, "sections", "--budget 0=25")
    wait_for(s, r"end of file", 30)
    keys(s, "t")

    def shown(txt):
        lines = txt.splitlines()
        rows = {ln.split()[0]: ln for ln in lines if re.match(r"^\d\s", ln)}
        return ("0" in rows and re.search(r"\s\? > 25\.0 \S+s\s*$", rows["0"]) is not None and "3" in rows and
                rows["3"].rstrip().endswith(" 15.1G") and max(len(ln) for ln in lines) <= w), \
            " | ".join(rows.get(k, "no row " + k) for k in ("0", "3"))

    txt = wait_until(s, lambda t: shown(t)[0])
    check("%dx%d: sections with no clock: budget runs '?', a 11-digit mean as 15.1G within its column" % (w, h),
          *shown(txt))
    tmux("kill-session", "-t", s)


def cpp_chain_test(w=120, h=24):
    """Enter on a C++ template's row: the inline chain under the source lines names the function as
    the list does, demangled ("motor::Filter<short, 8>::run(short)"), and as linked after key C; it
    showed the linkage name (_ZN5motor6FilterIsLi8EE3runEs) beside a demangled title."""
    d = harness.scratch("tui-cpp")
    os.makedirs(d, exist_ok=True)
    elf = os.path.join(d, "cpp.elf")
    subprocess.run(["arm-none-eabi-g++", "-mcpu=cortex-m4", "-mthumb", "-O2", "-g", "-nostdlib", "-fno-exceptions",
                    "-fno-rtti", "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler",
                    os.path.join(HERE, "zoo", "cpp_app.cpp"), "-lgcc", "-o", elf], check=True)
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.split()
    run = int(nm[nm.index("_ZN5motor6FilterIsLi8EE3runEs") - 2], 16) & ~1
    cap = os.path.join(d, "cpp.txt")
    with open(cap, "w") as f:
        f.write("prof raw n=64\n" + "p %s\n" % " ".join(["%08x" % (run + 2)] * 16) * 4 + "end\n")
    for key, want in (("", "motor::Filter<short, 8>::run(short) ("), ("C", "_ZN5motor6FilterIsLi8EE3runEs (")):
        s = "cmprof-cppchain"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (TOOL, cap, elf))
        wait_until(s, lambda t: "end of file" in t and in_list(t), 20)
        keys(s, *([key] if key else []), "Home", "Enter")
        chain = lambda t: next((ln for ln in t.splitlines() if ln.startswith("at 0x")), "")  # noqa: E731
        txt = wait_until(s, lambda t: chain(t) != "")
        check("%dx%d: Enter on a C++ template%s: the inline chain names it %s" % (
            w, h, " after C" if key else "", "as linked" if key else "demangled, as the list does"),
            want in chain(txt), chain(txt) or " | ".join(txt.splitlines()[:6]))
        tmux("kill-session", "-t", s)


def crash_tests():
    """Issue 12, items 6 and 17: a crash (SIGSEGV, SIGABRT) gives the terminal back as it was, and a
    terminal that cannot move the cursor is refused with one line."""
    r = scen.Result("m3_loops")
    for sig, name in ((11, "SIGSEGV"), (6, "SIGABRT"), (7, "SIGBUS")):
        s = "cmprof-crash"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", "100", "-y", "30",
             "%s %s %s; echo exited $?; stty -a | tr ' ;' '\\n\\n' | grep -x -e '-*echo' -e '-*icanon' | "
             "tr '\\n' ' '; echo; sleep 30" % (TOOL, os.path.join(scen.BUILD, "m3_loops", "uart.txt"), r.elf))
        wait_for(s, r"end of file", 30)
        pid = tool_pid(s)
        if pid:
            os.kill(int(pid[0]), sig)
        got = wait_for(s, r"^exited \d+\n.*\S", 5)  # the status, then the terminal modes
        lines = (got or "").splitlines()
        i = next((k for k, ln in enumerate(lines) if ln.startswith("exited")), None)
        modes = lines[i + 1].split() if i is not None and i + 1 < len(lines) else []
        check("%s: the terminal is restored (echo, icanon) and the exit status says %s" % (name, name),
              i is not None and lines[i] == "exited %d" % (128 + sig) and modes == ["icanon", "echo"] and
              "SHARE" not in got, "%s, modes %s" % (lines[i] if i is not None else screen(s)[:200], modes))
        tmux("kill-session", "-t", s)
    env = dict(os.environ, TERM="dumb")
    p = subprocess.run(["script", "-qec", "%s %s %s" % (TOOL, os.path.join(scen.BUILD, "m3_loops", "uart.txt"), r.elf),
                        "/dev/null"], capture_output=True, text=True, env=env, timeout=20 * PATIENCE)
    check("TERM=dumb: refused with one line naming TERM", "TERM=dumb" in p.stdout and p.returncode != 0,
          "exit %d, %r" % (p.returncode, p.stdout.strip()[-160:]))


def batch_live_tests():
    """--batch on live sources: a pty and a TCP server, stopped by --duration."""
    import json
    r = scen.Result("stream")
    data = open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read()
    feeder = Feeder(data, 200000.0)
    # the durations leave a loaded machine time to start the tool and read every sample (a quiet one
    # reads them in under a second)
    out = subprocess.run([TOOL, "--batch", "--duration", "6", "-o", "json", feeder.path, r.elf], capture_output=True,
                         text=True)
    feeder.cut()
    j = json.loads(out.stdout) if out.stdout else {}
    check("--batch on a pty, stopped by --duration", out.returncode == 0 and j.get("total") == 10000,
          "exit %d, %s samples %s" % (out.returncode, j.get("total"), out.stderr.strip()))
    tcp_server = harness.tcp_server

    def batch_json(source, seconds):
        out = subprocess.run([TOOL, "--batch", "--duration", str(seconds), "-o", "json", source, r.elf],
                             capture_output=True, text=True)
        return out.returncode, json.loads(out.stdout) if out.stdout else {}

    code, j = batch_json("tcp:127.0.0.1:%d" % tcp_server([data], 0), 6)
    check("--batch on tcp:HOST:PORT, server closes, samples kept", code == 0 and j.get("total") == 10000,
          "exit %d, %s samples" % (code, j.get("total")))
    cut = data.index(b"\n", len(data) // 2) + 1
    out = subprocess.run([TOOL, "--batch", "--duration", "8", "-o", "json",
                          "tcp:127.0.0.1:%d" % tcp_server([data[:cut], data[cut:]], 1.0), r.elf],
                         capture_output=True, text=True)
    code, j = out.returncode, json.loads(out.stdout) if out.stdout else {}
    check("TCP source that goes away and returns: reconnected, every sample counted",
          code == 0 and j.get("total") == 10000, "exit %d, %s samples" % (code, j.get("total")))
    check("TCP source that goes away and returns: stderr says the gap (it said nothing: a closed connection is "
          "no failure, but time went by without the source)",
          re.search(r"warning: data lost: the source went away and came back 1 time \(\d+\.\d s without it; "
                    r"the last time: connection closed\)", out.stderr), out.stderr.strip()[-300:])
    out = subprocess.run([TOOL, "--batch", "--duration", "1", "tcp:127.0.0.1:1", r.elf], capture_output=True,
                         text=True)
    check("--batch on a TCP port nobody serves: says so (not 'reconnecting': the run is over), exits 1 (could not "
          "run, README's exit table: as without --duration)",
          out.returncode == 1 and "not reached within 1 s (--duration): Connection refused" in out.stderr and
          "reconnecting" not in out.stderr, line_of(out.stderr.strip(), 0))


def pane_qemu(session):
    """The QEMU this session's pane started (scripts/demo.sh's), as a list of one pid or none."""
    return [pid for pid, name in pane_descendants(session) if name.startswith("qemu-system")][:1]


def annotate_demo_crc32(s):
    """The demo's hottest function is GCC's copy crc32.constprop.0: annotate opens at the copy's
    first instruction (its push), and shows the same rows later, when other instructions have
    been sampled too."""
    nm = subprocess.run(["arm-none-eabi-nm", os.path.join(scen.BUILD, "demo", "fw.elf")], capture_output=True,
                        text=True).stdout
    start = [int(ln.split()[0], 16) for ln in nm.splitlines() if ln.endswith(" crc32.constprop.0")]
    first = "%08x: push" % start[0] if start else "no crc32.constprop.0 in the demo's ELF"
    counts = []
    samples = lambda t: int((re.search(r"samples (\d+)", t) or re.search("(0)", "0")).group(1))  # noqa: E731
    keys(s, "g", "/", "crc32", "Enter")  # by task -> by function, filtered
    for k in range(2):
        txt = wait_until(s, lambda t: "by function" in line_of(t, 2) and "filter: crc32" in t and "SHARE" in t)
        n = samples(txt)
        keys(s, "Enter", "a", "Home")
        txt = wait_until(s, lambda t: re.search(r"annotate: \d+ samples[\s\S]*; \d+ rows;", t) is not None and first in t)
        rows = re.search(r"; (\d+) rows;", txt)
        counts.append(int(rows.group(1)) if rows else -1)
        if k == 0:
            check("demo: annotate crc32 [constprop] opens at its first instruction (%s)" % first, first in txt,
                  " | ".join(ln.strip() for ln in txt.splitlines()[4:8]))
            wait_until(s, lambda t: samples(t) >= 2 * n, 30)  # later, with twice the samples
            keys(s, "Escape")  # the list, still filtered
    check("demo: annotate crc32 [constprop] shows the same rows with twice the samples", counts[0] > 0 and
          counts[0] == counts[1], "rows %s" % counts)
    keys(s, "Escape", "Escape")  # the list, the filter cleared (two Escapes: neither starts a key's sequence)
    wait_until(s, lambda t: in_list(t) and "filter:" not in t)


CALLER_ROW = re.compile(r"(\d+\.\d\d)% \[\s*(\d+\.\d)-\s*(\d+\.\d)\]\s+(\d+)\s+(\S+)")


def caller_rows(txt):
    """The callers view's "called by" rows: {caller: (percent, lo95, hi95, samples)}."""
    part = txt.split("called by", 1)[-1].split(" calls\n", 1)[0] if "called by" in txt else ""
    return {m.group(5): (float(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4)))
            for m in CALLER_ROW.finditer(part)}


# The demo's functions whose callers the sampler's stack evidence shows live, and every caller its
# code has (scenarios/apps/demo.c, checked against the ELF's calls): crc32 from link_send_frame
# (inlined into task_link), lowpass from task_motor, memcpy from both tasks (and Reset_Handler, before
# sampling starts). board_clock: from the sensor interrupt (9 in 10 of its stacks) and through the
# section timers' clock pointer from cmprof_section_start, cmprof_section_stop and cmprof_sections_poll
# (a 40 s run: 32, 1, 2 and 0 stacks): those three may be missing live, nothing else may show.
DEMO_CALLERS = (("crc32", {"link_send_frame"}, set()), ("lowpass", {"task_motor"}, set()),
                ("memcpy", {"task_motor", "task_link"}, set()),
                ("board_clock", {"EXTI0_IRQHandler"}, {"cmprof_section_start", "cmprof_section_stop",
                                                       "cmprof_sections_poll"}))


def wilson95(k, n):
    """The 95 % Wilson interval of k in n, in percent (as profile.c's prof_wilson95)."""
    z2, p = 1.96 * 1.96, k / n
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = 1.96 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


def callers_shown(txt, fn, callers, rare):
    """Whether the callers view of fn shows every caller of callers, none but those and rare, their
    samples adding up to the header's, each share its samples over the header's and each interval
    the Wilson interval of those counts (as printed: 2 and 1 decimals); and what it shows."""
    head, rows = re.search(r"called by \((\d+) samples", txt), caller_rows(txt)
    if not (head and rows and re.search(r"calls of %s\b" % fn, txt)):
        return False, " | ".join(ln.strip() for ln in txt.splitlines()[3:9])
    total = int(head.group(1))
    detail = "; ".join("%s %.2f %% [%.1f, %.1f] %d" % ((k,) + v) for k, v in rows.items()) + "; of %d" % total
    shares_ok = all(abs(p - 100.0 * k / total) <= 0.006 and lo < hi and
                    all(abs(a - b) <= 0.051 for a, b in zip((lo, hi), wilson95(k, total)))
                    for p, lo, hi, k in rows.values())
    return set(rows) - rare == callers and shares_ok and sum(r[3] for r in rows.values()) == total, detail


def demo_callers(s):
    """Key c on the demo's crc32, lowpass (its filter), memcpy (newlib's, no call-frame information: a
    leaf its code proves) and board_clock rows, live: each caller view lists the callers walked from
    the sampler's stack evidence (the demo is built with CMPROF_STACKS=1), every one its code has (bar
    board_clock's rare ones) and no other, with their samples adding up to the header's, each share
    and 95 % interval those counts give."""
    for fn, callers, rare in DEMO_CALLERS:
        keys(s, "/", fn, "Enter", "Home", "c")  # the filter leaves the function's row first
        txt = wait_until(s, lambda t: callers_shown(t, fn, callers, rare)[0], 30)
        ok, detail = callers_shown(txt, fn, callers, rare)
        check("demo: key c on %s shows its callers from the sampler's stack evidence, live (%s)" % (
            fn, ", ".join(sorted(callers))), ok, detail)
        keys(s, "Escape", "Escape")  # the list, the filter cleared
        wait_until(s, lambda t: "filter:" not in t and "SHARE" in t)


def demo_test():
    s = "cmprof-demo"
    tmux("kill-session", "-t", s)
    t0 = time.time()
    tmux("new-session", "-d", "-s", s, "-x", "130", "-y", "34", "scripts/demo.sh; sleep 30")
    # the samples and the build-id's verdict waited for together (a redraw may be caught half written)
    got = wait_for(s, r"build-id ok[\s\S]*samples [1-9]\d* ", 20)
    elapsed = time.time() - t0
    check("demo: QEMU on a pty, live profile shown", got is not None and "build-id ok" in got,
          "%.1f s to the first samples (firmware build included)" % elapsed)
    got2 = wait_for(s, r"crc32", 5)
    check("demo: the application's functions appear", got2 is not None)
    got3 = wait_for(s, r"overhead >\d+\.\d %", 10)  # more than: the sampling interrupt's own cost unseen
    check("demo: the header shows the profiler's own overhead", got3 is not None,
          line_of(got3 or screen(s), 1))
    keys(s, "O")
    # the new row and the old rows gone, waited for together (a redraw may be caught half written)
    folded = lambda t: "[cmprof overhead]" in t and not re.search(r"\bsend_line\b|\bcmprof_stream_drain\b", t)  # noqa
    got5 = wait_until(s, folded, 5)
    check("demo: O folds the profiler's own code into one row", folded(got5),
          " | ".join(ln.strip() for ln in got5.splitlines()[4:14]))
    keys(s, "O")
    wait_until(s, lambda t: "[cmprof overhead]" not in t)
    keys(s, "g", "g", "g")
    txt = wait_until(s, lambda t: "by task" in t and re.search(r"\blink\b", t) and re.search(r"\bmotor\b", t))
    check("demo: tasks named by the stream", re.search(r"\blink\b", txt) and re.search(r"\bmotor\b", txt))
    got4 = wait_for(s, r"ISR: EXTI0_IRQHandler", 20)  # names the host missed come with the next re-announce
    check("demo: the sensor interrupt is its own row in the task view", got4 is not None,
          " | ".join(ln.strip() for ln in screen(s).splitlines()[5:12]))
    annotate_demo_crc32(s)
    demo_callers(s)
    qemu = pane_qemu(s)
    keys(s, "q")
    stopped = bool(qemu) and wait_gone(qemu[0])
    check("demo: q stops QEMU", stopped, "" if stopped else "QEMU %s" % (
        "not found under the demo's pane" if not qemu else "still running, pid %d" % qemu[0]))
    tmux("kill-session", "-t", s)


def demo_a_test():
    """make demo TARGET=cortex-a15: the Cortex-A firmware samples on the PMU's cycle counter and
    streams live from QEMU's virt board; its functions, build-id and section timings show."""
    s = "cmprof-demo-a"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "130", "-y", "34", "TARGET=cortex-a15 scripts/demo.sh; sleep 30")
    # the header's parts waited for together, not the samples alone (a redraw may be caught half written)
    header = lambda t: (re.search(r"samples [1-9]\d* ", t) is not None and "build-id ok" in t and  # noqa: E731
                        "clk 1000.0 MHz" in t and "ARMv7-A PMU-cycle-counter" in t)
    got = wait_until(s, header, 30)
    check("demo cortex-a15: live profile from the PMU sampler, build-id checked, the announced architecture and "
          "timer shown", header(got), line_of(got, 0))
    got2 = wait_for(s, r"\bcrc32\b[\s\S]*\bcontrol\b|\bcontrol\b[\s\S]*\bcrc32\b", 10)
    check("demo cortex-a15: the application's functions appear", got2 is not None,
          " | ".join(ln.strip() for ln in screen(s).splitlines()[4:10]))
    keys(s, "t")

    def timed(txt):  # both sections' rows whole (a redraw may be caught half written)
        rows = [ln.split() for ln in txt.splitlines() if re.match(r"^[01]\s+(control|crc_frame)\s", ln)]
        try:
            sane = len(rows) == 2 and all(0 < float(r[5]) <= float(r[6]) < 100 for r in rows)  # min <= max, no wrap
        except (IndexError, ValueError):
            sane = False
        return "\u00b5s" in txt and sane

    got3 = wait_until(s, timed, 10)
    check("demo cortex-a15: section timings on a PMU event counter, named, in \u00b5s, min <= max < 100 \u00b5s",
          timed(got3), " | ".join(ln.strip() for ln in got3.splitlines()[4:8]))
    events = lambda t: re.findall(r"instructions (\d+)/run \(\d+\.\.\d+\)\s+IPC (\d+\.\d\d)", t)  # noqa: E731
    # both sections' events arrived, each line whole
    ev = events(wait_until(s, lambda t: len(events(t)) == 2 and all(int(n) > 0 and 0.9 <= float(i) <= 1.1
                                                                      for n, i in events(t)), 10))
    check("demo cortex-a15: each section's instructions per run and IPC (INST_RETIRED on an event counter)",
          len(ev) == 2 and all(int(n) > 0 and 0.9 <= float(i) <= 1.1 for n, i in ev), str(ev))
    qemu = pane_qemu(s)
    keys(s, "q")
    stopped = bool(qemu) and wait_gone(qemu[0])
    check("demo cortex-a15: q stops QEMU", stopped, "" if stopped else "QEMU %s" % (
        "not found under the demo's pane" if not qemu else "still running, pid %d" % qemu[0]))
    tmux("kill-session", "-t", s)


def demo_probe_callers():
    """The demo's caller shares from the sampler's stack evidence (--batch) against the probe path's on
    the same build (the demo's ELF through QEMU's gdbstub, every halt walked with .debug_frame): for
    crc32, lowpass (the demo's filter) and memcpy each caller's share within 3 sigma of the two
    intervals together, and no caller on one side that the other's interval excludes. Both run at
    once, on the demo built with stack evidence on every 4th sample (scen.DEMO_STACKS_4; make demo's
    build keeps every 16th): the sampler's first 16,000 samples (counted by instruction: the same
    every run, crc32 1,153 stacks, lowpass 195, memcpy 529) hold more of each function's than make
    demo's build sent in the 60 s this used to run (crc32 363-447, lowpass 59-80, memcpy 185-228, at
    load 10-20), and its QEMU stops once they are in; the probe halts for 60 s as before. (The first
    8,000 put memcpy's task_motor at 43.75 % of 256 stacks, the next 8,000 at 54.6 %: 16,000 give
    49.3 %, where the probe gave 52.5-56.4 % in three runs; at 8,000 one of them failed at 3.6 sigma.)"""
    elf = scen.build(scen.DEMO_STACKS_4)
    qs, sport = qemu_serial_server(elf)
    q, port = qemu_gdbstub(elf)
    stream = probe = None
    try:
        end = time.time() + 30
        while time.time() < end:  # until the gdbstub listens
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.05)
        stream = subprocess.Popen([TOOL, "--batch", "--samples", "16000", "--duration", "120", "-o", "json",
                                   "tcp:127.0.0.1:%d" % sport, elf], cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        probe = subprocess.Popen([TOOL, "--batch", "--duration", "60", "--rate", "500", "--stack-depth", "16", "-o",
                                  "json", "gdb:127.0.0.1:%d" % port, elf], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        out, err = stream.communicate(timeout=240)
        qs.kill()  # its samples are in: no QEMU left spinning beside the probe's
        probe_out, probe_err = probe.communicate(timeout=240)
    finally:  # the tools too, when a timeout cut them short
        for p in (p for p in (stream, probe, q, qs) if p is not None):
            p.kill()
            p.wait()
    js = json.loads(out) if stream.returncode == 0 and out.startswith("{") else {}
    jp = json.loads(probe_out) if probe.returncode == 0 and probe_out.startswith("{") else {}
    if not check("demo callers, sampler and probe: both reports made", bool(js) and bool(jp),
                 "stream exit %d %s; probe exit %d %s" % (stream.returncode, err.strip()[-200:], probe.returncode,
                                                          probe_err.strip()[-200:])):
        return

    def callers_of(j, fn):
        row = next((r for r in j["rows"] if r["name"].split(".")[0] == fn), {})
        return {c["name"]: c for c in row.get("callers", [])}

    # (board_clock is left out: one run's probe put 8.4 % [7.7, 9.2] of its stacks under cmprof_section_start,
    # the sampler 0 of 45; the probe's halts land by QEMU's host time, which its timer reads inflate)
    for fn in ("crc32", "lowpass", "memcpy"):  # memcpy: newlib's, no CFI, proven a leaf from its code on both
        a, b = callers_of(js, fn), callers_of(jp, fn)
        z, notes = {}, []
        for k in set(a) | set(b):
            x = a.get(k, {"percent": 0.0, "lo95": 0.0, "hi95": 0.0})
            y = b.get(k, {"percent": 0.0, "lo95": 0.0, "hi95": 0.0})
            if k not in a or k not in b:  # a caller one side never saw: the other's interval must reach 0
                z[k] = 0.0 if (x if k in a else y)["lo95"] <= 0.5 else 99.0
            else:  # each 95 % interval's half-width is 1.96 sigma
                both = math.hypot((x["hi95"] - x["lo95"]) / 2, (y["hi95"] - y["lo95"]) / 2) / 1.96
                z[k] = abs(x["percent"] - y["percent"]) / max(both, 1e-9)
            notes.append("%s: sampler %.2f %% [%.2f, %.2f], probe %.2f %% [%.2f, %.2f]" % (
                k, x["percent"], x["lo95"], x["hi95"], y["percent"], y["lo95"], y["hi95"]))
        n_a, n_b = sum(c["samples"] for c in a.values()), sum(c["samples"] for c in b.values())
        check("demo callers of %s: the sampler's shares agree with the probe's on the same build within their "
              "intervals (3 sigma of the two together)" % fn, n_a >= 5 and n_b >= 5 and max(z.values()) <= 3.0,
              "; ".join(notes) + "; %d sampler stacks, %d probe stacks" % (n_a, n_b))


def qemu_serial_server(elf):
    """QEMU on the demo's board as make demo runs it (scripts/demo.sh): its serial line a TCP server on
    a free port of 127.0.0.1 that waits for the tool before the firmware runs (the stream read from
    its first byte). Returns QEMU and the port it reported."""
    log = tempfile.TemporaryFile("w+")
    q = subprocess.Popen(["qemu-system-arm", "-M", scen.CORES["m4"][0], "-display", "none", "-monitor", "none",
                          "-serial", "tcp:127.0.0.1:0,server=on,wait=on", "-icount", "shift=0",
                          "-semihosting-config", "enable=on,target=native", "-kernel", elf], stdout=log,
                         stderr=subprocess.STDOUT)
    end = time.time() + 30
    while time.time() < end and q.poll() is None:
        log.seek(0)
        m = re.search(r"waiting for connection on: .*tcp:127\.0\.0\.1:(\d+)", log.read())
        if m:
            return q, int(m.group(1))
        time.sleep(0.05)
    q.kill()
    q.wait()
    log.seek(0)
    raise RuntimeError("QEMU did not report its serial port: %s" % log.read().strip()[-300:])


def qemu_gdbstub(elf):
    """QEMU halted at reset with its gdbstub on a free port, -singlestep (design-notes 9)."""
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    q = subprocess.Popen(["qemu-system-arm", "-M", scen.CORES["m4"][0], "-display", "none", "-monitor", "none",
                          "-serial", "null", "-icount", "shift=0", "-singlestep", "-kernel", elf,
                          "-gdb", "tcp:127.0.0.1:%d" % port, "-S"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    return q, port


def gdb_test(w, h):
    """Issue 8: the live view on firmware with no cmprof code, sampled through QEMU's gdbstub, with
    call stacks walked while the core is halted: the caller view of work() (7 calls in caller_a for
    3 in caller_b)."""
    sys.path.insert(0, os.path.join(ROOT, "scenarios"))
    import scen
    sc = scen.scenario("gdb_live", "callers", lib=False, ROUNDS=100000000)  # runs for minutes
    elf = scen.build(sc)
    q, port = qemu_gdbstub(elf)
    s = "cmprof-gdb"
    tmux("kill-session", "-t", s)
    try:
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h),
             "%s --rate max gdb:127.0.0.1:%d %s; echo exited $?; sleep 30" % (TOOL, port, elf))
        # all three rows on screen at once (the first samples may have only some of them)
        # (--rate max: the default keeps the core halted about 10 % of the time, and on a loaded
        # machine, where a halt takes long, that fell to 0-1 halts a second: 105 samples in 4 min, no
        # caller_b row, in a run beside 6 busy loops; the checks need hundreds of samples, not a rate;
        # test_demo's gdb_demo checks the default's intrusion)
        got = wait_for(s, r"(?=[\s\S]*\bwork\b)(?=[\s\S]*\bcaller_a\b)[\s\S]*\bcaller_b\b", 60)
        head = (got or screen(s)).splitlines()[:2]
        check("%dx%d: " % (w, h) + "gdb: a live profile of firmware with no cmprof code, through QEMU's gdbstub",
              got is not None and re.search(r"\bwork\b", got) and re.search(r"\bcaller_a\b", got), " | ".join(head))
        got = wait_for(s, r"connected, \d+ halts/s, core halted \d+\.\d %", 10)
        check("%dx%d: " % (w, h) + "gdb: the header shows the achieved rate and the intrusion", got is not None,
              line_of(got or screen(s), 0))
        # enough samples for the callers' shares: 500 put 70 % within 60-80 % at 4.9 sigma
        wait_for(s, r"^samples ([5-9]\d\d|\d{4,}) ", 30)
        keys(s, "Home", "c")
        got = wait_for(s, r"called by[\s\S]*caller_a[\s\S]*caller_b[\s\S]*work calls", 10)
        shares = {m.group(2): float(m.group(1)) for m in re.finditer(r"(\d+\.\d\d)% \[[^]]*\]\s+\d+\s+(caller_[ab])",
                                                                      got or "")}
        check("%dx%d: " % (w, h) + "gdb: key c on work(): the caller view, caller_a about 70 % and caller_b about 30 % of its samples",
              got is not None and "calls of work" in got and set(shares) == {"caller_a", "caller_b"} and
              60 <= shares["caller_a"] <= 80 and 20 <= shares["caller_b"] <= 40,
              " | ".join(ln.strip() for ln in (got or screen(s)).splitlines()[4:12]))
        keys(s, "Down", "Enter")
        got = wait_for(s, r"calls of caller_[ab][\s\S]*called by[\s\S]*\bmain\b", 10)
        check("%dx%d: " % (w, h) + "gdb: Enter on a caller follows it: its own callers (main) and callees (work)",
              got is not None and re.search(r"caller_[ab] calls[\s\S]*\bwork\b", got),
              " | ".join(ln.strip() for ln in (got or screen(s)).splitlines()[4:12]))
        keys(s, "Escape")  # the list, then q
        wait_until(s, in_list)
        keys(s, "q")
        got = wait_for(s, r"^exited 0", 10)
        check("%dx%d: " % (w, h) + "gdb: q quits at once, and QEMU lives on (the target was left running)",
              got is not None and q.poll() is None, "qemu %s" % ("running" if q.poll() is None else "gone"))
    finally:
        tmux("kill-session", "-t", s)
        q.kill()
        q.wait()


def gdb_demo_test():
    """Issue 8's done-when: the demo firmware built with no cmprof code at all (NO_CMPROF), sampled
    through QEMU's gdbstub with its tasks (--task-var) and call stacks: a live profile, the intrusion
    in the header, and the caller view of a function."""
    sys.path.insert(0, os.path.join(ROOT, "scenarios"))
    import scen
    elf = scen.build(scen.scenario("demo_plain", "demo", lib=False, NO_CMPROF=1))
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    check("demo without the sampler: no cmprof code in the ELF", " cmprof_" not in nm and "crc32" in nm,
          "cmprof symbols: %d" % nm.count(" cmprof_"))
    q, port = qemu_gdbstub(elf)
    s = "cmprof-gdb-demo"
    tmux("kill-session", "-t", s)
    try:
        tmux("new-session", "-d", "-s", s, "-x", "130", "-y", "34",
             "%s --rate max --task-var current_task --task-name-offset 4 gdb:127.0.0.1:%d %s; echo exited $?; "
             "sleep 30"
             % (TOOL, port, elf))
        # the intrusion shows once halts have been counted for a while: wait for both
        got = wait_for(s, r"core halted \d+\.\d %[\s\S]*\bcrc32\b", 30)
        check("gdb, demo without the sampler: a live profile of its functions, with the intrusion in the header",
              got is not None and re.search(r"core halted \d+\.\d %", got),
              " | ".join((got or screen(s)).splitlines()[:1] + (got or screen(s)).splitlines()[4:8]))
        wait_for(s, r"^samples ([1-9]\d\d|\d{4,}) ", 10)  # stacks walked for a while
        keys(s, "/", "crc32", "Enter", "Home", "c")  # the filter leaves crc32's row first
        got = wait_for(s, r"calls of crc32[\s\S]*called by \(\d+ samples[\s\S]*\blink_send_frame\b", 10)
        check("gdb, demo without the sampler: key c on crc32 shows its caller, link_send_frame, from the walked stacks",
              got is not None, " | ".join(ln.strip() for ln in (got or screen(s)).splitlines()[4:10]))
        keys(s, "Escape", "Escape")  # the list, its filter cleared, then by task
        wait_until(s, lambda t: in_list(t) and "filter:" not in t)
        keys(s, "g", "g", "g")
        got = wait_for(s, r"\bmotor\b[\s\S]*\blink\b|\blink\b[\s\S]*\bmotor\b", 10)
        check("gdb, demo without the sampler: --task-var gives the task rows", got is not None,
              " | ".join(ln.strip() for ln in screen(s).splitlines()[4:9]))
        keys(s, "q")
        got = wait_for(s, r"^exited 0", 10)
        check("gdb, demo without the sampler: q quits, QEMU runs on", got is not None and q.poll() is None,
              (got or screen(s))[-200:])
    finally:
        tmux("kill-session", "-t", s)
        q.kill()
        q.wait()


def diff_test(w, h):
    """--diff in the live view: each row's baseline share and change, '*' when significant; a build
    whose hot_b runs 30 % longer against the baseline build (the captures tests/test_diff.py made)."""
    base_uart = os.path.join(scen.BUILD, "diff_base", "uart.txt")
    slow_uart = os.path.join(scen.BUILD, "diff_slower", "uart.txt")
    if not (os.path.exists(base_uart) and os.path.exists(slow_uart)):
        check("%dx%d: --diff captures (tests/test_diff.py makes them)" % (w, h), False, "missing")
        return
    base = os.path.join(ROOT, "build", "diff-tui-base.json")
    out = subprocess.run([TOOL, "--batch", "-o", "json", base_uart, os.path.join(scen.BUILD, "diff_base", "fw.elf")],
                         capture_output=True, text=True).stdout
    open(base, "w").write(out)
    s = "cmprof-diff"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s --diff %s %s %s; sleep 30" % (
        TOOL, base, slow_uart, os.path.join(scen.BUILD, "diff_slower", "fw.elf")))
    got = wait_for(s, r"end of file", 30)

    def marked(txt):
        row = [ln for ln in txt.splitlines() if re.search(r"\bhot_b\b", ln) and "%" in ln]
        return "BASE%" in txt and "CHANGE" in txt and row and re.search(r"\+\s*\d+\.\d\d\*", row[0]) and \
            max(len(ln) for ln in txt.splitlines()) <= w, row[0] if row else txt.splitlines()[4:6]

    txt = wait_until(s, lambda t: "end of file" in t and marked(t)[0])
    ok, detail = marked(txt)
    check("%dx%d: --diff live: BASE%% and CHANGE columns, hot_b's growth marked significant (*)" % (w, h),
          got is not None and ok, detail)
    tmux("kill-session", "-t", s)


def save_and_record_test(w=80, h=24):
    """Key o saves a snapshot named after the ELF and the time; --record keeps the raw input, whose
    replay gives the profile the live view had."""
    r = scen.Result("stream")
    data = open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read()
    work = os.path.join(ROOT, "build", "snapshot-test-%dx%d" % (w, h))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    feeder = Feeder(data, 60000.0)
    s = "cmprof-save"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "cd %s && %s --record rec.bin %s %s; sleep 30" % (
        work, TOOL, feeder.path, r.elf))
    wait_for(s, r"samples 10000 ", 60)  # a deadline, not a bound: beside a busy machine the feeder can take 20 s
    keys(s, "o")
    prompt = wait_until(s, lambda t: "save a snapshot as" in t)
    keys(s, "j")
    got = wait_for(s, r"saved fw-\d{8}-\d{6}\.json \(10000 samples\)", 5)
    check("%dx%d: " % (w, h) + "key o, then j: a JSON snapshot named after the ELF and the time, said at the bottom",
          "save a snapshot as" in prompt and got is not None, line_of(got or screen(s), -1))
    snaps = [f for f in os.listdir(work) if f.startswith("fw-") and f.endswith(".json")]
    snap = json.load(open(os.path.join(work, snaps[0]))) if snaps else {}
    check("%dx%d: " % (w, h) + "the snapshot is a whole report", snap.get("total") == 10000 and snap.get("rows"), str(snaps))
    pid = tool_pid(s)
    keys(s, "q")
    check("%dx%d: " % (w, h) + "key q: the tool ends (its recording complete)", bool(pid) and wait_gone(int(pid[0])))
    feeder.cut()
    rec = os.path.join(work, "rec.bin")
    out = subprocess.run([TOOL, "--batch", "-o", "json", rec, r.elf], capture_output=True, text=True)
    again = json.loads(out.stdout) if out.returncode == 0 else {}
    check("%dx%d: " % (w, h) + "--record: the replay gives the live view's profile",
          again.get("total") == 10000 and again.get("rows") == snap.get("rows"), out.stderr.strip()[:200])
    tmux("kill-session", "-t", s)


def stacked_snapshot_test(w=160, h=24):
    """Key o, then f, on a capture with the firmware's stack evidence: the folded snapshot holds the
    stacked samples alone (1 in 16), and the bottom line says how many of all (it said "20000
    samples" of a file of 1,250)."""
    work = harness.scratch("snapshot-stacks")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    s = "cmprof-save-stacks"
    view_capture(s, w, h, "m4_stacks", "--save-dir " + work)
    wait_until(s, lambda t: "end of file" in t and in_list(t), 20)
    keys(s, "o")
    wait_until(s, lambda t: "save a snapshot as" in t)
    keys(s, "f")
    got = wait_for(s, r"saved fw-\S+ \(the \d+ of 20000 samples with call stacks\)", 10)
    files = [os.path.join(work, f) for f in os.listdir(work)]
    total = sum(int(ln.rsplit(" ", 1)[1]) for ln in open(files[0]) if ln.strip()) if len(files) == 1 else -1
    check("%dx%d: key o, f on stacked samples: the bottom line says the snapshot's %d of the 20000" % (w, h, total),
          got is not None and "(the %d of 20000 samples" % total in got, line_of(got or screen(s), -1))
    tmux("kill-session", "-t", s)


def resize_last_column_test():
    """Issue 31: a shrink from 120x35 to 80x24 left a stale character in the key bar's last column
    (the bottom-right cell was never drawn, so whatever the terminal kept there stayed)."""
    r = scen.Result("stream")
    feeder = Feeder(open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read(), 40000.0, start=False)
    s = "cmprof-resize-corner"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "35", "%s %s %s; sleep 30" % (TOOL, feeder.path, r.elf))
    feeder.start()
    wait_for(s, r"samples [1-9]\d{3,} ", 15)
    keys(s, "?")  # the help page: text in the columns the shrink keeps
    wait_until(s, lambda t: "Keys" in t)
    tmux("resize-window", "-t", s, "-x", "80", "-y", "24")
    end = time.time() + 10 * PATIENCE
    while True:  # until the view has drawn at the new size: 24 lines, its key bar at the bottom
        lines = tmux("capture-pane", "-p", "-N", "-t", s).stdout.splitlines()
        last = lines[-1] if lines else ""
        if (len(lines) == 24 and len(last) <= 80 and last.rstrip().endswith("quit")) or time.time() > end:
            break
        time.sleep(0.1)
    check("resize 120x35 to 80x24: the key bar's last column is redrawn, nothing stale in it",
          len(lines) == 24 and len(last) <= 80 and last.rstrip().endswith("quit"), repr(last[-30:]))
    tmux("kill-session", "-t", s)
    feeder.cut()


def tmux_main(run):
    """Run the checks of run() with one tmux server up; the exit status of a test script."""
    if subprocess.run(["which", "tmux"], capture_output=True).returncode != 0:
        check("tmux installed", False, "install tmux (scripts/deps.sh)")
        return 1
    os.environ.setdefault("TERM", "xterm-256color")
    os.chdir(ROOT)
    keep_server()
    try:
        run()
    finally:
        keep_server(False)
        harness.tmux_socket_gone(TMUX[2])
    return 1 if harness.failed else 0


def main():
    return tmux_main(run_all)


def cut_warning_test():
    """At 80 columns a diagnostic longer than the header line ends with where the rest is ("... (d)");
    at 200 it stands whole with its hint."""
    r = scen.Result("irqoff_long")
    for w in (80, 200):
        s = "cmprof-cut"
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", "24", "%s %s %s; sleep 30" % (
            TOOL, os.path.join(scen.BUILD, "irqoff_long", "uart.txt"), r.elf))
        def warning(txt):
            warn = next((ln.rstrip() for ln in txt.splitlines() if "skid" in ln), "")
            return warn.endswith("... (d)") if w == 80 else warn.endswith("(d: details)"), warn

        # the whole line waited for, not its first sign: a redraw may be caught half written
        txt = wait_until(s, lambda t: warning(t)[0])
        check("%dx24: the skid warning says where its rest is when cut, and whole fits" % w, *warning(txt))
        tmux("kill-session", "-t", s)


def no_stacks_note_test(w, h):
    """Key c on a capture whose firmware sent no stack evidence (m4_stacks_off: CMPROF_STACKS=0): the
    callers view says why there are no stacks and how to get them, word-wrapped within the view, the
    whole of the text the JSON's stacks.note gives (one line cut at the width lost the advice)."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    d = os.path.join(scen.BUILD, "m4_stacks_off")
    name = "%dx%d: key c on a capture without stack evidence: the whole advice, wrapped" % (w, h)
    if not os.path.exists(os.path.join(d, "uart.txt")):
        check(name, False, "missing: python3 scenarios/scen.py run m4_stacks_off")
        return
    args = [os.path.join(d, "uart.txt"), os.path.join(d, "fw.elf")]
    out = subprocess.run([tool, "--batch", "-o", "json"] + args, capture_output=True, text=True)
    note = json.loads(out.stdout).get("stacks", {}).get("note", "") if out.returncode == 0 else ""
    if not check("%dx%d: the JSON's stacks.note on a capture without stack evidence names CMPROF_STACKS=1" % (w, h),
                 "no stack evidence" in note and "CMPROF_STACKS=1" in note, note or out.stderr.strip()[:200]):
        return

    def shown(txt):  # the note's lines under the title, their "! " or "  " margin off, joined
        lines = txt.splitlines()
        top = next((i for i, ln in enumerate(lines) if ln.startswith("calls of ")), len(lines))
        part = []
        for ln in lines[top + 1:-1]:  # the key bar, the last line, is not the view's
            if not ln.strip():
                break
            part.append(re.sub(r"^(! |  )", "", ln).rstrip())
        return " ".join(part), lines[top + 1:top + 1 + len(part)]

    s = "cmprof-nostacks"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (tool, args[0], args[1]))
    wait_until(s, lambda t: "end of file" in t and "SHARE" in t, 20)
    keys(s, "Home", "c")
    txt = wait_until(s, lambda t: "calls of " in t and shown(t)[0] == note)
    text, lines = shown(txt)
    check(name, text == note and all(len(ln) <= w for ln in txt.splitlines()),
          " / ".join(ln.rstrip() for ln in lines) or " | ".join(txt.splitlines()[:6]))
    tmux("kill-session", "-t", s)


def view_capture(s, w, h, name, options=""):
    """Session s, w x h: the live view (with options) of scenario name's capture (read to its end) and ELF."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    d = os.path.join(scen.BUILD, name)
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h),
         "%s %s %s %s; sleep 30" % (tool, options, os.path.join(d, "uart.txt"), os.path.join(d, "fw.elf")))


def untagged_tasks_test(w=80, h=24):
    """T on a firmware built without CMPROF_TAG (a new user's trial): one row "(no tag)" at 100 % and not a
    word of why. The legend's line says it; the tasks of a tagged capture keep the legend."""
    s = "cmprof-untagged"
    for name, said in (("loops_jitter", True), ("tasks", False)):
        view_capture(s, w, h, name)
        wait_until(s, lambda t: "end of file" in t and in_list(t), 20)
        keys(s, "T")
        txt = wait_until(s, lambda t: "(no tag)" in t or "motor" in t)
        told = re.match(r"no task tags(: build the firmware with | \()CMPROF_TAG\)?$", line_of(txt, -2).strip()) is not None
        check("%dx%d: T on %s: %s" % (w, h, name, "the legend's line says there are no task tags" if said else
                                      "the legend as ever, no such line"),
              told == said and ("(no tag)" in txt) == said, line_of(txt, -2).strip())
        tmux("kill-session", "-t", s)


def narrow_top_test():
    """The top list at 40 and 52 columns (a new user's trial at 40x12): the bar, and at 40 the interval,
    give way to the name; the legend under the table named them all the same ("share  its 95 %
    interval" over rows with no bar), and a row's file note was cut to a stump ("board_putc
    board_com" at 40, "put_str (cmprof_section.c)  cmprof_section" at 80). The legend names only the
    columns shown; a file note is whole, cut short with its mark ("cmprof_st\u2026": two thirds of it at
    least), or not there."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    d = os.path.join(scen.BUILD, "stream")
    args = [os.path.join(d, "uart.txt"), os.path.join(d, "fw.elf")]
    out = subprocess.run([tool, "--batch", "-o", "json"] + args, capture_output=True, text=True)
    files = {r["name"]: os.path.basename(r.get("file") or "") for r in json.loads(out.stdout)["rows"]} \
        if out.returncode == 0 else {}
    s = "cmprof-narrow-top"
    for w, ci in ((40, False), (52, True)):
        view_capture(s, w, 12, "stream")
        txt = wait_until(s, lambda t: "end of file" in t and re.search(r"^\s+\S*%.*NAME", t, re.M) and
                         "may be noise" in line_of(t, -2), 20)
        rows = [ln.rstrip() for ln in txt.splitlines() if re.match(r"^\s+\d+\.\d\d%", ln)]
        legend = line_of(txt, -2).strip()
        want = ("\u00b1% half its width  " if ci else "") + "dim: may be noise"
        check("%dx12: no bar on the rows, none in the legend: %r" % (w, want), legend == want and rows, legend)

        def whole(ln):  # the row's name, then its file's whole base name, most of it cut short, or nothing
            name = next((n for n in sorted(files, key=len, reverse=True) if re.search(r"\s%s(\s|$)" % re.escape(n), ln)), None)
            tail = ln.split(" " + name, 1)[1].strip() if name else None
            cut = tail is not None and tail.endswith("\u2026") and files[name].startswith(tail[:-1]) and \
                3 * len(tail) >= 2 * len(files[name])
            return name is not None and (tail in ("", files[name]) or cut)

        check("%dx12: each row's file note whole, most of it, or left out" % w,
              len(files) >= 4 and rows and all(map(whole, rows)),
              " / ".join(rows))
    tmux("kill-session", "-t", s)


def narrow_source_test(w=40, h=14):
    """Enter at 40 columns (a new user's trial at 40x12): the drill-down kept its 10-column bar, and a
    line's source began at column 34, 6 columns of it shown (an indented line: nothing at all). Narrow,
    the bar gives way: each sampled line shows its source from column 24 on, as the file has it."""
    src = open(os.path.join(ROOT, "scenarios", "apps", "stacks.c")).read().splitlines()
    s = "cmprof-narrow-source"
    view_capture(s, w, h, "m4_stacks")
    wait_until(s, lambda t: "end of file" in t and re.search(r"^\s+\S*%.*NAME", t, re.M), 20)
    keys(s, "Home", "Enter")
    pat = re.compile(r"^.*?\d+\.\d\d%\s+\d+\.\d\d%\s+(\d+)  ")
    sampled = lambda t: [m for m in map(pat.match, t.splitlines()) if m]  # noqa: E731
    txt = wait_until(s, lambda t: "of this function's samples" in t and sampled(t))
    rows = sampled(txt)
    shown = [(m.end(), m.string[m.end():].rstrip(), src[int(m.group(1)) - 1][:w - m.end()].rstrip()) for m in rows]
    check("%dx%d: Enter: each sampled line's source from column 24 on, as in the file" % (w, h),
          rows and all(start <= 24 and text == want and text for start, text, want in shown),
          " / ".join(m.string.rstrip() for m in rows) or " | ".join(txt.splitlines()[:8]))
    tmux("kill-session", "-t", s)


def help_says_test(w=80, h=60):
    """The section view's OVER/LIMIT column ("4/2.5" in make demo at 80 columns: the runs over the
    --budget, and that budget in microseconds, even in ticks under u) and a row's "(inlined)" (make
    demo's "stream_putc (inlined)", a function with an out-of-line copy of its own too) were explained
    nowhere, on the screen or in ? (a new user's trial). ? says what they mean."""
    s = "cmprof-help-says"
    view_capture(s, w, h, "stream")
    wait_until(s, lambda t: "end of file" in t and in_list(t), 20)
    keys(s, "?")
    said = lambda t: re.sub(r"\s+", " ", t)  # noqa: E731 (the help wraps its lines)
    txt = wait_until(s, lambda t: "OVER/LIMIT" in t and "--budget" in said(t) or "q F10" in t)
    check("%dx%d: ? says what the section view's OVER/LIMIT holds" % (w, h),
          "OVER/LIMIT" in txt and "--budget NAME=US" in said(txt), " | ".join(ln for ln in txt.splitlines() if " t " in ln))
    keys(s, "End")
    txt = wait_until(s, lambda t: "marked (inlined)" in said(t) or "The header" in t)
    check("%dx%d: ? says what a row's (inlined) marks" % (w, h),
          "marked (inlined) had samples in copies of it inlined into other functions" in said(txt),
          " | ".join(txt.splitlines()[3:10]))
    # a term longer than the term column ("sections' clock", as the header says it) stands whole on
    # a line of its own, its text under the column (it was split: "sections'    clock the ...")
    lines = txt.splitlines()
    at = [k for k, ln in enumerate(lines) if ln.startswith("  sections'")]
    check("%dx%d: ? keeps the term \"sections' clock\" whole, its text under the term column" % (w, h),
          len(at) == 1 and lines[at[0]].rstrip() == "  sections' clock" and at[0] + 1 < len(lines) and
          re.match(r"^ {15}the clock the section times use", lines[at[0] + 1]) is not None,
          " | ".join(lines[at[0]:at[0] + 2]) if at else "no sections' line")
    tmux("kill-session", "-t", s)


def clock_stops_test(w=80, h=12):
    """The header's run time once the source has ended: it ran on (a capture read to its end at 00:00
    read 00:07 seven seconds later; a port that hung up at 00:22 read 00:30 at 00:30), so the time
    said nothing of what the profile holds (a new user's trial). It stops where the source ended."""
    s = "cmprof-clock-stops"
    view_capture(s, w, h, "m4_stacks")
    clock = lambda t: re.search(r"^samples \d+\s+(\d\d:\d\d)", line_of(t, 1))  # noqa: E731
    first = wait_until(s, lambda t: "end of file" in t and clock(t) and in_list(t), 20)
    time.sleep(2.5)
    later = screen(s)
    a, b = clock(first), clock(later)
    check("%dx%d: the run's time stops where the source ended" % (w, h),
          a is not None and b is not None and a.group(1) == b.group(1),
          "%s, 2.5 s later %s" % (a and a.group(1), b and b.group(1)))
    tmux("kill-session", "-t", s)


def narrow_callers_test(w=40, h=12):
    """Key c at 40 columns: each caller row ends with its caller's name (the bar and the interval,
    which left no room for it, give way first), its share and samples as the JSON's."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    d = os.path.join(scen.BUILD, "m4_stacks")
    args = [os.path.join(d, "uart.txt"), os.path.join(d, "fw.elf")]
    out = subprocess.run([tool, "--batch", "-o", "json"] + args, capture_output=True, text=True)
    top = json.loads(out.stdout)["rows"][0] if out.returncode == 0 else {}
    want = {c["name"]: ("%.2f%%" % c["percent"], str(c["samples"])) for c in top.get("callers", [])}
    s = "cmprof-narrow-calls"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (tool, args[0], args[1]))
    wait_until(s, lambda t: "end of file" in t and in_list(t), 20)
    keys(s, "Home", "c")

    def rows(txt):
        part = txt.split("called by", 1)[-1].split(" calls\n", 1)[0] if "called by" in txt else ""
        return {m.group(3): (m.group(1), m.group(2))
                for m in re.finditer(r"^\s*(\d+\.\d\d%)\s+(?:\[[^]]*\]\s+)?(\d+)\s+(\S+)\s*$", part, re.M)}

    txt = wait_until(s, lambda t: "calls of %s" % top.get("name") in t and rows(t))
    check("%dx%d: key c: every caller row ends with its name, its share and samples the JSON's" % (w, h),
          len(want) >= 2 and rows(txt) == want and all(len(ln) <= w for ln in txt.splitlines()),
          "%s | want %s" % (" / ".join(ln.rstrip() for ln in txt.splitlines()[4:9]), want))
    tmux("kill-session", "-t", s)


def tcp_gap_test(w=100, h=20):
    """A TCP server that closes the connection and comes back a second later: once back, the header
    marks the gap and d says how often, how long and why (the view went back to [connected] and d
    said "no data lost")."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    r = scen.Result("stream")
    data = open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read()
    cut = data.index(b"\n", len(data) // 2) + 1
    port = harness.tcp_server([data[:cut], data[cut:]], 1.0, hold=3)
    s = "cmprof-gap"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s tcp:127.0.0.1:%d %s; sleep 30" % (tool, port, r.elf))
    txt = wait_until(s, lambda t: "gaps (d)" in line_of(t, 1), 20)
    check("%dx%d: a TCP server back after closing: the header marks the gap" % (w, h),
          "gaps (d)" in line_of(txt, 1), line_of(txt, 0) + " | " + line_of(txt, 1))
    keys(s, "d")
    txt = wait_until(s, lambda t: "went away and came back" in t)
    check("%dx%d: d says how often, how long and why the source went away" % (w, h),
          re.search(r"data lost: the source went away and came back 1 time \(\d\.\d s without it; the last time:\s+"
                    r"connection\s+closed\)", txt) and "no data lost" not in txt, " | ".join(txt.splitlines()[4:8]))
    tmux("kill-session", "-t", s)


def gdb_end_test(w=40, h=16):
    """A gdb: source whose program exits, on a terminal narrower than its state: the header's state
    keeps a shorter form (the one of a state under 64 bytes was never made: no state shown at all),
    and d says the target exited, when, and what was counted (it said "none: ... no data lost")."""
    import test_gdb
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    if not os.path.exists(test_gdb.ELF):
        check("gdb_loops ELF built (tests/scen_sets.py build)", False, test_gdb.ELF)
        return
    a, b = test_gdb.nm("hot_a"), test_gdb.nm("hot_b")
    s = "cmprof-gdb-end"
    # The stand-in answers from a thread of this test: beside four CPU hogs it went unrun past the tool's
    # 2 s, the tool reconnected and the stand-in, which takes one connection, never answered ("[reconnecting]"
    # to the end). Such a run says nothing of the view: made again (FakeServer.was_late), up to 3 in all.
    for attempt in range(3):
        rnd = random.Random(7)  # (not periodic: no lockstep said)
        srv = test_gdb.FakeServer([rnd.choice((a + 4, a + 6, b + 2)) for _ in range(1000)])
        srv.unsolicited, srv.trigger, srv.trigger_nth = "W03", "p", 400  # the program exits after 399 samples
        tmux("kill-session", "-t", s)
        tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s --rate 100 %s %s; sleep 30" % (
            tool, srv.spec, test_gdb.ELF))
        txt = wait_until(s, lambda t: "samples " in line_of(t, 1) and "[connected" in line_of(t, 0), 20)
        shown = txt
        txt = wait_until(s, lambda t: "[ended" in line_of(t, 0) or "[reconnecting" in line_of(t, 0), 30)
        if "[reconnecting" not in line_of(txt, 0):
            break
        keys(s, "d")
        said = " ".join(wait_until(s, lambda t: "diagnostics" in t, 10).split())
        keys(s, "q")
        if not srv.was_late(said):
            break
    check("%dx%d: gdb: the header keeps the state's shorter form while connected" % (w, h),
          re.search(r"\[connected[^]]*\]", line_of(shown, 0)) is not None, line_of(shown, 0))
    check("%dx%d: gdb: once the target exited, the header says [ended...] in a form that fits" % (w, h),
          re.search(r"\[ended[^]]*\]", line_of(txt, 0)) is not None, line_of(txt, 0))
    keys(s, "d")
    txt = wait_until(s, lambda t: "diagnostics" in t and "none" in t, 10)
    flat = " ".join(" ".join(txt.splitlines()[3:]).split())
    said = re.search(r"the source ended: (?:gdb:\S+: )?the target exited with status 3, at \d\d:\d\d:\d\d \(00:\d\d\.\d into "
                     r"the run\); the profile holds the (\d+) samples counted until then", flat)
    check("%dx%d: gdb: d says the target exited, when, and the samples counted (399)" % (w, h),
          said is not None and said.group(1) == "399" and "otherwise none" in flat, flat[:400])
    tmux("kill-session", "-t", s)
    srv.thread.join(5)


def pty_gone_test(w=120, h=16):
    """A pty whose other end closed (a socat gone) never comes back: the view kept reopening its path,
    and the next terminal opened took that number (another program's, a shell's): it opened it, set it
    raw and read it. Now the pty's end is the source's end, said in the header and under d."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    r = scen.Result("stream")
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    os.close(slave)
    s = "cmprof-pty-gone"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (tool, path, r.elf))
    opened = wait_port_open(path)
    data = open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read()
    os.write(master, data[:data.index(b"\n", len(data) // 2) + 1])
    wait_until(s, lambda t: "samples " in line_of(t, 1) and not line_of(t, 1).startswith("samples 0"), 10)
    os.close(master)
    held = []  # new ptys until one takes the number (another program's terminal, as it would be)
    for _ in range(64):
        m, sl = pty.openpty()
        held.append((m, sl))
        if os.ttyname(sl) == path:
            break
    time.sleep(3)  # several reconnect attempts' time
    pid = tool_pid(s)
    reopened = bool(pid) and any(os.path.realpath("/proc/%s/fd/%s" % (pid[0], fd)) == path
                                 for fd in os.listdir("/proc/%s/fd" % pid[0]))
    head = line_of(screen(s), 0)
    keys(s, "d")
    txt = wait_until(s, lambda t: "pty does not come back" in " ".join(t.split()), 10)
    for m, sl in held:
        os.close(m)
        os.close(sl)
    check("%dx%d: a pty whose other end closed: never reopened (its number went to another terminal), "
          "the header says it ended, d why" % (w, h), opened and not reopened and "[ended" in head and "hung up" in head
          and "pty does not come back" in " ".join(txt.split()), "reopened %s; %s" % (reopened, head))
    tmux("kill-session", "-t", s)


def pages_and_task_keys_test():
    """Two things a field trial (FreeRTOS's full demo, TraceRecorder on, live at 80x24) found: its
    diagnostics page held 5 diagnostics, 21 lines, and cut the last (the data lost) with no key to
    reach it; and Enter or c on a task row did nothing at all. Here on the rtos capture: at 60x8 its
    one diagnostic does not fit either; the page says which lines it shows and End, Home scroll it.
    At 80x24 in the task view, Enter and c say what they need instead of doing nothing."""
    tool = os.path.abspath(os.environ.get("CMPROF_TOOL") or TOOL)
    r = scen.Result("rtos")
    cap = os.path.join(scen.BUILD, "rtos", "uart.txt")
    s = "cmprof-pages"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "60", "-y", "8", "%s %s %s; sleep 30" % (tool, cap, r.elf))
    wait_until(s, lambda t: "end of file" in t and "SHARE" in t, 20)
    keys(s, "d")
    cut = lambda t: line_of(t, 4).startswith("diagnostics") and re.search(r"^lines 1-\d+ of \d+", t, re.M)  # noqa
    txt = wait_until(s, cut)
    check("60x8: d: a diagnostics page taller than the screen says which lines it shows",
          bool(cut(txt)) and "partial" not in txt, " | ".join(txt.splitlines()[4:7]))
    keys(s, "End")
    end = lambda t: "partial" in t and re.search(r"^lines \d+-(\d+) of \1", t, re.M)  # noqa: E731
    txt = wait_until(s, end)
    check("60x8: End scrolls the diagnostics page to its last line", bool(end(txt)),
          " | ".join(txt.splitlines()[4:7]))
    keys(s, "Home")
    txt = wait_until(s, lambda t: line_of(t, 5).startswith("! data lost"))
    check("60x8: Home scrolls it back to its first line", line_of(txt, 5).startswith("! data lost"), line_of(txt, 5))
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "80", "-y", "24", "%s %s %s; sleep 30" % (tool, cap, r.elf))
    wait_until(s, lambda t: "end of file" in t and "SHARE" in t, 20)
    keys(s, "T")
    wait_until(s, lambda t: "by task" in t and in_list(t))
    for key, says in (("Enter", "Enter opens a function's source lines; rows here are tasks"),
                      ("c", "c shows a function's callers; rows here are tasks")):
        keys(s, key)
        txt = wait_until(s, lambda t: says in line_of(t, -1))
        check("80x24: %s on a task row says what it needs (g: by function), not nothing" % key,
              says in line_of(txt, -1) and "by task" in txt, line_of(txt, -1))
    tmux("kill-session", "-t", s)


def late_attach_test(w, h):
    """A view that attaches to a running stream, as to a board that ran before the host (the stream
    capture from a third of the way in, mid-line, on a pty): the samples it could not place yet (before
    the firmware's next announce) are where its profile begins, not a loss. No red "data lost" in the
    header, and the diagnostics page says once, unalarmed, that it joined a running stream."""
    size = "%dx%d: " % (w, h)
    r = scen.Result("stream")
    data = open(os.path.join(scen.BUILD, "stream", "uart.txt"), "rb").read()
    late = data[len(data) // 3 + 5:]  # (a byte inside a line: the view's first line is a tail)
    feeder = Feeder(late, len(late) / 2.0, start=False)
    s = "cmprof-late"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(w), "-y", str(h), "%s %s %s; sleep 30" % (TOOL, feeder.path, r.elf))
    feeder.start()
    total = len(re.findall(rb"^\$", late, re.M))
    txt = wait_until(s, lambda t: re.search(r"^samples [1-9]\d{3,} ", t, re.M) and in_list(t), 15)
    feeder.thread.join(timeout=10)
    time.sleep(1)  # the view's last redraw of what came
    txt = screen(s)
    colored = tmux("capture-pane", "-p", "-e", "-t", s).stdout
    check(size + "late attach: no data lost in the header, nothing in red",
          total > 0 and "data lost" not in line_of(txt, 1) and "\x1b[31m" not in "\n".join(colored.splitlines()[:3]),
          line_of(txt, 1))
    keys(s, "d")
    page = wait_until(s, lambda t: "joined a running stream: the first" in t)
    check(size + "late attach: d says it joined a running stream, once, and no data lost",
          page.count("joined a running stream") == 1 and "data lost:" not in page and
          re.search(r"^  joined a running stream: the first \d+ samples not counted", page, re.M) is not None,
          " | ".join(ln.strip() for ln in page.splitlines()[4:10]))
    keys(s, "q")
    feeder.cut()
    tmux("kill-session", "-t", s)


def captures():
    """The checks on fixed captures and on sources the test plays itself: no QEMU."""
    cut_warning_test()
    for w, h in ((80, 24), (200, 60)):
        no_stacks_note_test(w, h)
    annotate_search_call_tests()
    fit_tests()
    sections_no_clock_test()
    cpp_chain_test()
    stacked_snapshot_test()
    resize_last_column_test()
    crash_tests()
    no_color_test()
    batch_live_tests()
    pages_and_task_keys_test()
    narrow_callers_test()
    narrow_top_test()
    untagged_tasks_test()
    untagged_tasks_test(40, 12)
    narrow_source_test()
    help_says_test()
    clock_stops_test()
    narrow_prompts_test()
    gdb_slow_server_test()
    elf_rebuilt_test()
    tcp_gap_test()
    gdb_end_test()
    pty_gone_test()


def captures_sizes():
    """More checks on fixed captures, at two terminal sizes each: a group of its own, so that
    tests/run.sh runs it in a lane beside captures' (each process has its own tmux server)."""
    for w, h in ((80, 24), (200, 60)):
        replay_tests(w, h)
        inline_and_signal_tests(w, h)
        late_attach_test(w, h)
        section_graph_test(w, h)
        view_items_test(w, h)
        save_and_record_test(w, h)


def qemu():
    """The checks on QEMU sampled by wall time: the demos, and the probe path through its gdbstub."""
    demo_test()
    demo_a_test()
    for w, h in ((80, 24), (200, 60)):
        gdb_test(w, h)
    gdb_demo_test()
    demo_probe_callers()


def diff():
    """--diff on the captures tests/test_diff.py makes."""
    for w, h in ((80, 24), (200, 60)):
        diff_test(w, h)


GROUPS = {"captures": captures, "captures_sizes": captures_sizes, "qemu": qemu, "diff": diff}


def run_all():
    """The named groups (tests/run.sh runs them in different lanes), or all of them."""
    for name in sys.argv[1:] or list(GROUPS):
        GROUPS[name]()


if __name__ == "__main__":
    sys.exit(main())
