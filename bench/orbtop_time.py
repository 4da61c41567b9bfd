#!/usr/bin/env python3
"""How long orbtop (orbuculum's profiler, built from its sources) takes to read an ITM capture
file, against cmprof-top --batch on the same file and ELF, in interleaved rounds.

orbtop never ends at the end of a file: it keeps polling for more (its file stream's read returns
0 and it loops). So its time is taken from outside: from its start until its file offset on the
capture (/proc/PID/fdinfo) reached the file's size AND it made another read system call after that
(the read that found the end, so the last chunk was decoded). Its objdump child (it disassembles
the ELF at start) runs inside that time, as cmprof-top's own ELF reading runs inside its time.
Before it reads the ELF, orbtop sleeps one second on purpose (it waits for the file to stand still:
ELF_RELOAD_DELAY_TIME in orbuculum's Src/symbols.c); that second is idle, not work, so the
ratios are given with it taken off (the figure that flatters orbtop) and with it.
    bench/orbtop_time.py ORBTOP CAPTURE.itm ELF [ROUNDS]"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
sys.path.insert(0, HERE)
import interleave  # noqa: E402

POLL = 0.01  # seconds between two looks at orbtop's /proc entries (a light load beside it)
ELF_WAIT = 1.0  # orbtop's deliberate sleep before it loads the ELF (see above)
LIMIT = 600.0  # a run that has not read its capture by then is an error, never a figure


def capture_offset(pid, path):
    """orbtop's file offset on path, or -1 while it has not opened it."""
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == path:
                    for ln in open("/proc/%d/fdinfo/%s" % (pid, fd)):
                        if ln.startswith("pos:"):
                            return int(ln.split()[1])
            except OSError:
                continue
    except OSError:
        pass
    return -1


def read_calls(pid):
    """read-like system calls pid made so far, over its threads."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            for ln in open("/proc/%d/task/%s/io" % (pid, tid)):
                if ln.startswith("syscr:"):
                    total += int(ln.split()[1])
    except OSError:
        pass
    return total


def orbtop_seconds(orbtop, cap, elf):
    """Wall seconds from orbtop's start until it has read and decoded the whole capture."""
    return orbtop_run(orbtop, cap, elf, lambda pid, t: t)


def orbtop_peak(orbtop, cap, elf):
    """orbtop's own peak resident set (VmHWM, KB) once it has decoded the whole capture and then
    run 1.5 s more (its report is built every second: the peak of one after the last byte is in).
    A wait for its CPU time to stand still (the live view's) never ends with orbtop, which spins at a
    file's end, and took its 120 s limit every run."""
    def settle(pid, _):
        time.sleep(1.5)
        for ln in open("/proc/%d/status" % pid):
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
        raise RuntimeError("orbtop's VmHWM not found")
    return orbtop_run(orbtop, cap, elf, settle)


def orbtop_run(orbtop, cap, elf, at_end):
    """Run orbtop on the capture; at_end(pid, seconds so far) once it has read and decoded all of
    it; returns at_end's value, and kills orbtop."""
    path, size = os.path.realpath(cap), os.path.getsize(cap)
    t0 = time.perf_counter()
    p = subprocess.Popen([orbtop, "-M", "-p", "ITM", "-f", path, "-e", elf], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        calls = None
        while True:
            if p.poll() is not None:
                raise RuntimeError("orbtop ended (status %d) before reading %s" % (p.returncode, cap))
            if time.perf_counter() - t0 > LIMIT:
                raise RuntimeError("orbtop had not read %s after %.0f s" % (cap, LIMIT))
            if calls is None and capture_offset(p.pid, path) >= size:
                calls = read_calls(p.pid)
            elif calls is not None and read_calls(p.pid) > calls:
                return at_end(p.pid, time.perf_counter() - t0)
            time.sleep(POLL)
    finally:
        p.kill()
        p.wait()


def batch_seconds(cap, elf):
    """Wall seconds of cmprof-top --batch on the capture, its report to /dev/null."""
    t0 = time.perf_counter()
    p = subprocess.run([TOOL, "--batch", cap, elf], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t = time.perf_counter() - t0
    if p.returncode != 0:  # (a warning's status too: a figure is only taken from a clean run)
        raise RuntimeError("cmprof-top --batch %s failed (%d): %s" % (cap, p.returncode, p.stderr.decode().strip()))
    return t


def rounds(orbtop, cap, elf, n):
    """{"orbtop": [s...], "orbtop working": [s...], "ours": [s...]} from n rounds of the two in
    turn; "orbtop working" is orbtop's time less its one-second wait."""
    runs = interleave.rounds({"orbtop": lambda: orbtop_seconds(orbtop, cap, elf),
                              "ours": lambda: batch_seconds(cap, elf)}, n)
    runs["orbtop working"] = [t - ELF_WAIT for t in runs["orbtop"]]
    return runs


if __name__ == "__main__":
    runs = rounds(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 5)
    print("orbtop %s (less its 1 s wait %s), cmprof-top --batch %s; orbtop / --batch %s, less the wait %s" % (
        interleave.spread(runs["orbtop"], "%.3f", " s"), interleave.spread(runs["orbtop working"], "%.3f", " s"),
        interleave.spread(runs["ours"], "%.3f", " s"),
        interleave.spread(interleave.ratios(runs["orbtop"], runs["ours"]), "%.1f", "x"),
        interleave.spread(interleave.ratios(runs["orbtop working"], runs["ours"]), "%.1f", "x")))
