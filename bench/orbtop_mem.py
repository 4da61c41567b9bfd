#!/usr/bin/env python3
"""Peak memory of orbtop and of cmprof-top on the same ITM capture: orbtop (built from its sources,
Debian has no package) reading the file, cmprof-top's live view reading it in a terminal (tmux) of
80x24 and of 120x30, and --batch. Neither live view ends at the end of a file: orbtop's own peak
resident set (VmHWM) is read 1.5 s after it decoded the whole capture (bench/orbtop_time.py: it
spins at a file's end, so its CPU time never stands still), the live view's once it has read the
whole capture and its CPU time has stood still for a second; then each is ended. --batch's peak is
GNU time's. orbtop's objdump child (its disassembly and line table) is not counted: it is part of
what orbtop costs, but not of its own resident set.
    bench/orbtop_mem.py ORBTOP CAPTURE.itm ELF [ROUNDS]"""
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
sys.path.insert(0, HERE)
import interleave  # noqa: E402
import orbtop_time  # noqa: E402


def status_kb(pid, key):
    try:
        for ln in open("/proc/%d/status" % pid):
            if ln.startswith(key + ":"):
                return int(ln.split()[1])
    except OSError:
        pass
    return 0


def cpu_ticks(pid):
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    except OSError:
        return -1


def read_bytes(pid):
    """Bytes pid has read so far, over its threads (orbtop reads its input on a thread of its own)."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            for ln in open("/proc/%d/task/%s/io" % (pid, tid)):
                if ln.startswith("rchar:"):
                    total += int(ln.split()[1])
    except OSError:
        pass
    return total


def settled_peak(pid, size, limit=120.0):
    """VmHWM (KB) of pid once it has read `size` bytes and its CPU time stood still for a second."""
    t0 = time.time()
    while time.time() - t0 < limit and read_bytes(pid) < size:
        time.sleep(0.05)
    last, still = cpu_ticks(pid), time.time()
    while time.time() - t0 < limit and time.time() - still < 1.0:
        time.sleep(0.1)
        now = cpu_ticks(pid)
        if now != last:
            last, still = now, time.time()
    return status_kb(pid, "VmHWM")


def tmux(*args):
    return subprocess.run(["tmux"] + list(args), capture_output=True, text=True)


def live_peak(cap, elf, size=(120, 30)):
    """cmprof-top's live view on the capture in a tmux pane of size (columns, rows): VmHWM at 'end of file'."""
    s = "bench-orbmem-%d" % os.getpid()
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", str(size[0]), "-y", str(size[1]), "exec %s %s %s" % (TOOL, cap, elf))
    pid = int(tmux("list-panes", "-t", s, "-F", "#{pane_pid}").stdout.strip())
    t0 = time.time()
    while time.time() - t0 < 120 and "end of file" not in tmux("capture-pane", "-p", "-t", s).stdout:
        time.sleep(0.05)
    peak = settled_peak(pid, os.path.getsize(cap))
    tmux("kill-session", "-t", s)
    return peak


def gnu_time_peak(cmd, stdin=os.devnull):
    """Peak resident set (KB) of cmd run to its end, by GNU time; its output is thrown away."""
    with open(stdin) as i:
        p = subprocess.run(["/usr/bin/time", "-f", "maxrss %M"] + cmd, stdin=i, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    m = re.findall(r"^maxrss (\d+)$", p.stderr, re.M)
    if p.returncode != 0 or not m:
        raise RuntimeError("%s failed: %s" % (cmd[0], p.stderr.strip()))
    return int(m[-1])


def batch_peak(cap, elf):
    return gnu_time_peak([TOOL, "--batch", cap, elf])


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    orbtop, cap, elf = argv[:3]
    rounds = int(argv[3]) if len(argv) > 3 else 3
    runs = interleave.rounds({"orbtop": lambda: orbtop_time.orbtop_peak(orbtop, cap, elf),
                              "live 80x24": lambda: live_peak(cap, elf, (80, 24)),
                              "live 120x30": lambda: live_peak(cap, elf),
                              "batch": lambda: batch_peak(cap, elf)}, rounds)
    own = runs["orbtop"]
    print("capture %s (%.1f MB), ELF %s; %d rounds of the four in turn, medians of the peaks:"
          % (os.path.basename(cap), os.path.getsize(cap) / 1e6, os.path.basename(elf), rounds))
    print("  orbtop (its own VmHWM)       %.2f MB %s" % (interleave.median(own) / 1024, mb_range(own)))
    for name, label in (("live 80x24", "live view, 80x24"), ("live 120x30", "live view, 120x30"),
                        ("batch", "--batch (GNU time)")):
        print("  cmprof-top %-18s %.2f MB %s  / orbtop: %s"
              % (label, interleave.median(runs[name]) / 1024, mb_range(runs[name]),
                 interleave.spread(interleave.ratios(runs[name], own), "%.2f", "x")))


def mb_range(kb):
    return "(range %.2f..%.2f)" % (min(kb) / 1024, max(kb) / 1024)


if __name__ == "__main__":
    main(sys.argv[1:])
