#!/usr/bin/env python3
"""Live view costs, measured on this machine (run from make bench, or alone):
  ingest   cmprof-top in tmux on a 10,000,000-sample ITM capture: samples/s until the header says
           'end of file', and how long a keypress takes to show on screen meanwhile;
  cpu      a pty fed at 10,000 samples/s (the text stream): cmprof-top's CPU time per second;
  soak S   a pty fed in a loop for S seconds: resident memory every 10 s;
  first    time to the first screen of samples on the big generated ELF (bench/gen_large_elf.py),
           samples in 5 % of its units and in all of them, against libdwarf reading every unit
           (rounds of the two in turn: medians, and the spread of the per-round ratios).
    live_bench.py [ingest] [cpu] [soak SECONDS] [first]"""
import os
import re
import subprocess
import sys
import threading
import time

import interleave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
from test_cli import itm_stream, pcs_of  # noqa: E402
from test_tui import Feeder, keep_server, screen, tmux, wait_for  # noqa: E402

TOOL = os.path.join(ROOT, "build", "cmprof-top")
B = os.path.join(ROOT, "build")
ELF = os.path.join(B, "scenarios", "stream", "fw.elf")
STREAM = os.path.join(B, "scenarios", "stream", "uart.txt")
FIRST_ROUNDS = 9  # of the first screen, each reader once a round


def pid_of(session):
    out = tmux("list-panes", "-t", session, "-F", "#{pane_pid}").stdout.strip()
    kids = subprocess.run(["pgrep", "-P", out], capture_output=True, text=True).stdout.split()
    return int(kids[0]) if kids else int(out)


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid):
    for ln in open("/proc/%d/status" % pid):
        if ln.startswith("VmRSS:"):
            return int(ln.split()[1])
    return 0


def ingest():
    pcs = pcs_of(os.path.join(B, "scenarios", "loops_jitter", "uart.txt"))
    pcs = (pcs * 100)[:10000000]
    path = os.path.join(B, "bench", "big.itm")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path):
        open(path, "wb").write(itm_stream(pcs))
    elf = os.path.join(B, "scenarios", "loops_jitter", "fw.elf")
    s = "bench-ingest"
    tmux("kill-session", "-t", s)
    t0 = time.time()
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "30", "%s %s %s; sleep 30" % (TOOL, path, elf))
    latencies = []
    sort = False
    while time.time() - t0 < 60:
        txt = screen(s)
        if "[end of file]" in txt:
            break
        if re.search(r"samples [1-9]\d{5,}", txt) and len(latencies) < 5:
            sort = not sort
            k0 = time.time()
            tmux("send-keys", "-t", s, "s")
            want = "sort name" if sort else "sort share"
            while time.time() - k0 < 2 and want not in screen(s):
                time.sleep(0.002)
            latencies.append(time.time() - k0)
        time.sleep(0.01)
    t_end = time.time() - t0
    txt = screen(s)
    m = re.search(r"samples (\d+)", txt)
    n = int(m.group(1)) if m else 0
    tmux("kill-session", "-t", s)
    print("ingest: %d samples (%.0f MB ITM) in %.2f s = %.2f M samples/s through the live view"
          % (n, os.path.getsize(path) / 1e6, t_end, n / t_end / 1e6))
    if latencies:
        print("keypress to screen while ingesting: %s ms (max %.0f ms; includes tmux capture polling)"
              % (", ".join("%.0f" % (1000 * x) for x in latencies), 1000 * max(latencies)))


def stream_bytes(seconds, rate_samples):
    """Stream text for `seconds` at `rate_samples` samples/s: the capture's lines, repeated."""
    lines = open(STREAM, "rb").read().split(b"\n")
    head = [ln for ln in lines if ln.startswith(b"@cmprof")][0] + b"\n"
    full = max(len(ln) for ln in lines if ln.startswith(b"$"))  # a full line of 16 samples, whatever the version
    body = b"".join(ln + b"\n" for ln in lines if ln.startswith(b"$") and len(ln) == full)
    per_sample = len(body) / (16.0 * body.count(b"\n"))
    need = int(seconds * rate_samples * per_sample)
    # the firmware repeats its announce every second: a host that attaches late still gets one
    body_lines = [ln + b"\n" for ln in body.split(b"\n") if ln]
    per_second = max(1, rate_samples // 16)
    data, k = b"", 0
    while len(data) < need:
        data += head + b"".join(body_lines[(k + i) % len(body_lines)] for i in range(per_second))
        k += per_second
    return data[:need], per_sample * rate_samples


def cpu():
    data, rate = stream_bytes(12, 10000)
    f = Feeder(data, rate)
    s = "bench-cpu"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "30", "%s %s %s; sleep 30" % (TOOL, f.path, ELF))
    wait_for(s, r"samples [1-9]", 10)
    time.sleep(1)
    pid = pid_of(s)
    c0, t0 = cpu_seconds(pid), time.time()
    time.sleep(8)
    c1, t1 = cpu_seconds(pid), time.time()
    rate_seen = re.search(r"(\d+)/s", screen(s))
    f.cut()
    tmux("kill-session", "-t", s)
    print("cpu at a live %s samples/s (text stream on a pty, %.0f bytes/s): %.2f %% of one core"
          % (rate_seen.group(1) if rate_seen else "?", rate, 100 * (c1 - c0) / (t1 - t0)))


def soak(seconds):
    data, _ = stream_bytes(60, 100000)  # one minute at 100k samples/s, replayed in a loop
    s = "bench-soak"
    f = Feeder(b"", 1.0)
    f.stopped = True
    stop = [False]

    def loop():
        while not stop[0]:
            for i in range(0, len(data), 65536):
                if stop[0]:
                    return
                try:
                    os.write(f.master, data[i:i + 65536])
                except OSError:
                    return

    th = threading.Thread(target=loop, daemon=True)
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "30", "%s %s %s; sleep 30" % (TOOL, f.path, ELF))
    th.start()
    wait_for(s, r"samples [1-9]", 10)
    pid = pid_of(s)
    t0 = time.time()
    points = []
    while time.time() - t0 < seconds:
        time.sleep(10)
        m = re.search(r"samples (\d+)", screen(s))
        points.append((time.time() - t0, rss_kb(pid), int(m.group(1)) if m else 0))
    stop[0] = True
    os.close(f.master)
    tmux("kill-session", "-t", s)
    first, last = points[0], points[-1]
    print("soak %.0f s: %d samples; RSS %d kB after 10 s, %d kB at the end, max %d kB"
          % (last[0], last[2], first[1], last[1], max(p[1] for p in points)))
    print("  rss_kb over time: " + " ".join("%d" % p[1] for p in points))


def big_elf_functions():
    big = os.path.join(B, "bench", "large", "big.elf")
    if not os.path.exists(big):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_large_elf.py"), os.path.dirname(big)], check=True,
                       stdout=subprocess.DEVNULL)
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", big], capture_output=True, text=True).stdout
    funcs = []
    for ln in nm.splitlines():
        f = ln.split()
        m = re.match(r"f(\d+)_\d+$", f[-1]) if len(f) == 4 and f[2] in "Tt" else None
        if m:
            funcs.append((int(f[0], 16) & ~1, int(f[1], 16), int(m.group(1))))
    return big, funcs


def first():
    """The first screen that shows a sampled function: a text capture of 20,000 samples."""
    import random
    big, funcs = big_elf_functions()
    units = max(u for _, _, u in funcs) + 1
    rnd = random.Random(7)
    for label, pool in (("5 %% of the units (%d of %d)" % (units // 20, units),
                         [f for f in funcs if f[2] < units // 20]), ("all %d units" % units, funcs)):
        pcs = []
        for _ in range(20000):
            lo, size, _ = pool[rnd.randrange(len(pool))]
            pcs.append(lo + 2 * rnd.randrange(max(size // 2, 1)))
        cap = os.path.join(B, "bench", "first.txt")
        with open(cap, "w") as f:
            f.write("prof raw n=%d\n" % len(pcs))
            for k in range(0, len(pcs), 8):
                f.write("p " + " ".join("%08x" % a for a in pcs[k:k + 8]) + "\n")
            f.write("end\n")
        runs = interleave.rounds({reader: (lambda env=env: first_screen(env, cap, big)) for reader, env in
                                  (("fast reader", ""), ("libdwarf", "CMPROF_DWARF_LIBDWARF=1 "))}, FIRST_ROUNDS)
        print("first screen, samples in %s: %.3f s (fast reader), %.3f s (libdwarf): libdwarf takes %s (%d rounds of "
              "the two in turn, medians, tmux start included)"
              % (label, interleave.median(runs["fast reader"]), interleave.median(runs["libdwarf"]),
                 interleave.spread(interleave.ratios(runs["libdwarf"], runs["fast reader"]), "%.1f", "x"),
                 FIRST_ROUNDS))



def first_screen(env, cap, big):
    """Seconds from starting the view in tmux to a sampled function's name on its screen."""
    s = "bench-first"
    tmux("kill-session", "-t", s)
    t0 = time.time()
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "30", "%s%s %s %s; sleep 30" % (env, TOOL, cap, big))
    while time.time() - t0 < 30 and not re.search(r"\b(f|mix|step)\d+_\d+", screen(s)):
        time.sleep(0.002)
    t = time.time() - t0
    tmux("kill-session", "-t", s)
    return t


def main(argv):
    subprocess.run(["make", "-s", "-C", ROOT, "tool"], check=True)
    args = argv or ["ingest", "cpu"]
    keep_server()
    try:
        run(args)
    finally:
        keep_server(False)


def run(args):
    i = 0
    while i < len(args):
        if args[i] == "ingest":
            ingest()
        elif args[i] == "cpu":
            cpu()
        elif args[i] == "first":
            first()
        elif args[i] == "soak":
            soak(float(args[i + 1]))
            i += 1
        i += 1


if __name__ == "__main__":
    main(sys.argv[1:])
