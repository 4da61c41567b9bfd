#!/usr/bin/env python3
"""make bench: every figure is a ratio against a baseline measured in the same run.
  1. decoder throughput (C, in memory, >= 50 MB streams), against a read-only loop;
  2. batch end to end on 1,000,000 samples, against the reference document's two Python scripts
     (its ITM parser, then its summarizer), run from a temporary copy of the document's text;
  3. symbols on a generated ELF (>= 20,000 functions, >= 100 units, -O2 -g): 100,000 addresses
     through arm-none-eabi-addr2line -f -i and through cmprof-top --resolve, load included, with
     peak memory, at random and confined to 5 % of the units (there also against addr2line -a -f -i,
     whose output is --resolve's byte for byte); the fast DWARF reader against libdwarf; then the
     steady-state cached lookup rate;
  4. the live view: ingest rate from a file, keypress latency, CPU at a live 10,000 samples/s, and
     the time to the first screen on the generated ELF.
Results go to stdout and build/bench/results.md."""
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
B = os.path.join(ROOT, "build")
TOOL = os.path.join(B, "cmprof-top")
SEED = os.path.join(ROOT, "..", "shared", "seeds", "000_b3d6e524a71660dc.txt")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from test_cli import itm_stream, pcs_of  # noqa: E402

lines_out = []


def say(s=""):
    print(s, flush=True)
    lines_out.append(s)


def timed(cmd, stdin=None, stdout=subprocess.DEVNULL, env=None, memory=True):
    """Wall time and peak RSS (MB) of one child process. The peak comes from GNU time (the rusage
    Python's wait4 returns for a child counts the RSS this large process had when it forked);
    memory=False runs the command bare, for the time alone (peak 0)."""
    return timed_faults(cmd, stdin, stdout, env, memory)[:2]


def timed_faults(cmd, stdin=None, stdout=subprocess.DEVNULL, env=None, memory=True):
    """timed(), and the process's minor page faults (from GNU time too; 0 when memory=False): on a
    virtual machine each fresh 4 KB page can cost 10 us or more."""
    t0 = time.perf_counter()
    p = subprocess.Popen((["/usr/bin/time", "-f", "maxrss %M\nminflt %R"] if memory else []) + cmd, stdin=stdin,
                         stdout=stdout, stderr=subprocess.PIPE, env=env)
    _, status, _ = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s failed: %s" % (cmd[0], err.strip()))
    m = re.findall(r"^maxrss (\d+)$", err, re.M)
    f = re.findall(r"^minflt (\d+)$", err, re.M)
    return t, int(m[-1]) / 1024.0 if m else 0.0, int(f[-1]) if f else 0


def extract(text, start, end):
    """The code listing between two headings of the reference document."""
    a = text.index("\n" + start)
    a = text.index("\n", a + 1) + 1
    b = text.index("\n" + end, a)
    return text[a:b].strip("\n") + "\n"


def decode_bench():
    say("## 1. Decoder throughput (64 MB streams in memory, best of 10)")
    exe = os.path.join(B, "bench_decode")
    subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", os.path.join(HERE, "bench_decode.c"),
                    os.path.join(ROOT, "decode", "itm.c"), os.path.join(ROOT, "decode", "text.c"), "-o", exe],
                   check=True)
    out = subprocess.run([exe, "64"], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        say("    " + ln)
    say()


def batch_bench(tmp):
    say("## 2. Batch end to end, 1,000,000 samples (ITM capture) against the document's Python scripts")
    text = open(SEED, encoding="utf-8").read()
    itm_py = os.path.join(tmp, "itm75a.py")
    prof_py = os.path.join(tmp, "prof75a.py")
    open(itm_py, "w").write(extract(text, "itm75a.py — parser", "Next: section 76"))
    open(prof_py, "w").write(extract(text, "prof75a.py — summarizes", "dwt75a.c — PC sampling"))
    elf = os.path.join(B, "scenarios", "loops_jitter", "fw.elf")
    pcs = pcs_of(os.path.join(B, "scenarios", "loops_jitter", "uart.txt"))
    pcs = (pcs * (1000000 // len(pcs) + 1))[:1000000]
    swo = os.path.join(tmp, "swo.bin")
    open(swo, "wb").write(itm_stream(pcs))
    dump = os.path.join(tmp, "dump.txt")
    # best of 3 for the scripts (seconds each), of 10 for ours (milliseconds: start-up jitter on a
    # shared machine is a large share of one run); the peak memory from the first run
    with open(dump, "w") as f:
        t_parse, m_parse = timed([sys.executable, itm_py, "parse", swo], stdout=f)
    t_parse = min([t_parse] + [timed([sys.executable, itm_py, "parse", swo], stdout=subprocess.DEVNULL,
                                     memory=False)[0] for _ in range(2)])
    t_sum, m_sum = timed([sys.executable, prof_py, dump, elf], stdout=subprocess.DEVNULL)
    t_sum = min([t_sum] + [timed([sys.executable, prof_py, dump, elf], stdout=subprocess.DEVNULL,
                                 memory=False)[0] for _ in range(2)])
    t_ours = min(timed([TOOL, "--batch", swo, elf], memory=False)[0] for _ in range(10))
    _, m_ours = timed([TOOL, "--batch", swo, elf])
    ref = subprocess.run([sys.executable, prof_py, dump, elf], capture_output=True, text=True).stdout
    ours = subprocess.run([TOOL, "--batch", "--no-inline", swo, elf], capture_output=True, text=True).stdout
    hot_ref = re.search(r"([\d.]+) %\s+[\d.]+\s+hot_a", ref)
    hot_ours = re.search(r"([\d.]+)%\s+[\d.]+%\s+\S+\s+\d+\s+hot_a", ours)
    say("    capture: %.1f MB, %d samples" % (os.path.getsize(swo) / 1e6, len(pcs)))
    say("    Python: itm75a.py parse %.2f s (%.0f MB peak) + prof75a.py %.2f s (%.0f MB peak) = %.2f s"
        % (t_parse, m_parse, t_sum, m_sum, t_parse + t_sum))
    say("    cmprof-top --batch: %.3f s (%.0f MB peak)" % (t_ours, m_ours))
    say("    ratio: %.0fx faster; hot_a %s %% (scripts) vs %s %% (cmprof-top)"
        % ((t_parse + t_sum) / t_ours, hot_ref.group(1) if hot_ref else "?", hot_ours.group(1) if hot_ours else "?"))
    # the text path: the same samples as a dump of "p" lines, summarised by prof75a.py and by us
    t_text = min(timed([TOOL, "--batch", dump, elf], memory=False)[0] for _ in range(10))
    say("    text dump: %.1f MB; prof75a.py %.2f s, cmprof-top --batch %.3f s: %.0fx faster"
        % (os.path.getsize(dump) / 1e6, t_sum, t_text, t_sum / t_text))
    say()


def symbol_bench(tmp):
    say("## 3. Symbols on a generated ELF")
    big = os.path.join(B, "bench", "large", "big.elf")
    if not os.path.exists(big):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_large_elf.py"), os.path.dirname(big)], check=True,
                       stdout=subprocess.DEVNULL)
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", big], capture_output=True, text=True).stdout
    funcs = [(int(a, 16) & ~1, int(s, 16)) for a, s, t, n in (ln.split() for ln in nm.splitlines() if len(ln.split()) == 4)
             if t in "Tt" and int(s, 16) >= 4]
    units = len([f for f in os.listdir(os.path.dirname(big)) if f.endswith(".o")])
    inl = subprocess.run("arm-none-eabi-readelf --debug-dump=info %s | grep -c DW_TAG_inlined_subroutine" % big,
                         shell=True, capture_output=True, text=True).stdout.strip()
    rnd = random.Random(42)
    addrs = []
    for _ in range(100000):
        lo, size = funcs[rnd.randrange(len(funcs))]
        addrs.append(lo + 2 * rnd.randrange(size // 2))
    af = os.path.join(tmp, "addrs.txt")
    open(af, "w").write("".join("%x\n" % a for a in addrs))
    say("    ELF: %.1f MB, %d functions, %d units, %s inlined instances; 100,000 random instruction addresses"
        % (os.path.getsize(big) / 1e6, len(funcs), units, inl))
    out_theirs, out_ours = os.path.join(tmp, "theirs.txt"), os.path.join(tmp, "ours.txt")
    def best_of_3(cmd, out_path, env=None):
        """The best time of three bare runs, and the peak memory of one more."""
        best = None
        for _ in range(3):
            with open(af) as i, open(out_path, "w") as o:
                t, _ = timed(cmd, stdin=i, stdout=o, env=env, memory=False)
            best = t if best is None else min(best, t)
        with open(af) as i:
            _, m, f = timed_faults(cmd, stdin=i, env=env)
        return best, m, f
    t_a2l, m_a2l, f_a2l = best_of_3(["arm-none-eabi-addr2line", "-f", "-i", "-e", big], out_theirs)
    t_ours, m_ours, f_ours = best_of_3([TOOL, "--resolve", big], out_ours)
    # same frames? (ours prints the address line too, addr2line without -a does not)
    theirs = [ln.rsplit("/", 1)[-1] for ln in open(out_theirs).read().splitlines()]
    ours = [ln.rsplit("/", 1)[-1] for ln in open(out_ours).read().splitlines() if not ln.startswith("0x")]
    say("    arm-none-eabi-addr2line -f -i (stdin): %.2f s, %.0f MB peak, %d minor faults (best of 3)"
        % (t_a2l, m_a2l, f_a2l))
    say("    cmprof-top --resolve (stdin):         %.2f s, %.0f MB peak, %d minor faults (best of 3) -> %.1fx faster"
        % (t_ours, m_ours, f_ours, t_a2l / t_ours))
    say("    frames identical (file names without directories): %s" % ("yes" if theirs == ours else
                                                                        "NO (%d vs %d lines)" % (len(theirs), len(ours))))
    # the same through libdwarf for every unit: what the fast DWARF reader gains
    t_lib, m_lib, _ = best_of_3([TOOL, "--resolve", big], os.devnull, dict(os.environ, CMPROF_DWARF_LIBDWARF="1"))
    say("    the same with libdwarf reading every unit (CMPROF_DWARF_LIBDWARF=1): %.2f s, %.0f MB peak -> the fast "
        "reader is %.1fx faster" % (t_lib, m_lib, t_lib / t_ours))
    # 100,000 addresses confined to 5 % of the units: only those units are read
    by_unit = {}
    for ln in nm.splitlines():
        f = ln.split()
        m = re.match(r"f(\d+)_\d+$", f[-1]) if len(f) == 4 and f[2] in "Tt" and int(f[1], 16) >= 4 else None
        if m:
            by_unit.setdefault(int(m.group(1)), []).append((int(f[0], 16) & ~1, int(f[1], 16)))
    few = sorted(by_unit)[:max(1, units // 20)]
    confined = [fn for u in few for fn in by_unit[u]]
    caddrs = []
    for _ in range(100000):
        lo, size = confined[rnd.randrange(len(confined))]
        caddrs.append(lo + 2 * rnd.randrange(size // 2))
    cf = os.path.join(tmp, "confined.txt")
    open(cf, "w").write("".join("%x\n" % a for a in caddrs))
    # runs of tens of milliseconds, where start-up jitter is a large share of one and the machine's
    # speed drifts from one second to the next: the three in turn, 20 rounds, the best of each and
    # the medians. addr2line -a prints what --resolve prints, byte for byte (the address line of
    # each answer, then its frames: checked below); without -a it prints less, and is timed too.
    cmds = {"addr2line -a": ["arm-none-eabi-addr2line", "-a", "-f", "-i", "-e", big],
            "addr2line": ["arm-none-eabi-addr2line", "-f", "-i", "-e", big], "ours": [TOOL, "--resolve", big]}
    runs = {name: [] for name in cmds}
    for _ in range(20):
        for name, cmd in cmds.items():
            with open(cf) as i:
                runs[name].append(timed(cmd, stdin=i, memory=False)[0])
    peak, faults = {}, {}
    for name, cmd in cmds.items():
        with open(cf) as i:
            _, peak[name], faults[name] = timed_faults(cmd, stdin=i)
    with open(cf) as i, open(out_theirs, "w") as o:
        timed(cmds["addr2line -a"], stdin=i, stdout=o, memory=False)
    with open(cf) as i, open(out_ours, "w") as o:
        timed(cmds["ours"], stdin=i, stdout=o, memory=False)
    same = open(out_theirs, "rb").read() == open(out_ours, "rb").read()
    best = {name: min(v) for name, v in runs.items()}
    med = {name: statistics.median(v) for name, v in runs.items()}
    say("    100,000 addresses in %d of %d units (5 %%), best of 20 each, run in turn, and medians:" % (len(few), units))
    say("      cmprof-top --resolve:          %.3f s, median %.3f s (%.0f MB peak, %d minor faults)"
        % (best["ours"], med["ours"], peak["ours"], faults["ours"]))
    say("      addr2line -a -f -i (the same output, byte for byte: %s): %.3f s, median %.3f s (%.0f MB peak, %d minor "
        "faults) -> %.1fx faster, medians %.1fx" % ("yes" if same else "NO", best["addr2line -a"], med["addr2line -a"],
                                                     peak["addr2line -a"], faults["addr2line -a"],
                                                     best["addr2line -a"] / best["ours"],
                                                     med["addr2line -a"] / med["ours"]))
    say("      addr2line -f -i (no address lines: less output): %.3f s, median %.3f s (%.0f MB peak) -> "
        "%.1fx faster, medians %.1fx" % (best["addr2line"], med["addr2line"], peak["addr2line"],
                                         best["addr2line"] / best["ours"], med["addr2line"] / med["ours"]))
    # where that time goes: the open alone (no address); the open and the first chunk of input
    # (the first read takes CHUNK / 8 = 8 KB in app/resolve.c, 1,024 of these lines, which need
    # every one of the units already); the whole input (interleaved, best of 10 each)
    first = os.path.join(tmp, "confined_first.txt")
    open(first, "w").write("".join("%x\n" % a for a in caddrs[:1024]))
    parts = {"none": os.devnull, "first": first, "all": cf}
    part_best = {}
    for _ in range(10):
        for name, path in parts.items():
            with open(path) as i:
                t, _ = timed([TOOL, "--resolve", big], stdin=i, memory=False)
            part_best[name] = min(part_best.get(name, t), t)
    say("    of which: the open %.1f ms (no address); the %d units and the first 1,024 addresses %.1f ms more; "
        "the other 98,976 addresses %.1f ms more" % (part_best["none"] * 1e3, len(few),
                                                 (part_best["first"] - part_best["none"]) * 1e3,
                                                 (part_best["all"] - part_best["first"]) * 1e3))
    exe = os.path.join(B, "bench_lookup")
    subprocess.run(["cc", "-std=c11", "-O2", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                    os.path.join(HERE, "bench_lookup.c"), os.path.join(ROOT, "app", "hugeheap.c")] +
                   [os.path.join(ROOT, "symbols", f) for f in ("table.c", "elf.c", "symtab.c", "frames.c", "dwarf.c", "rawdwarf.c", "rawscopes.c", "rawlines.c", "aranges.c", "isolate.c", "units.c", "lookup.c", "demangle.c", "codemap.c")] + ["-lelf",
                    "-ldwarf", "-liberty", "-pthread", "-o", exe], check=True)
    out = subprocess.run([exe, big, os.path.join(tmp, "addrs.txt")], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        say("    " + ln)
    say()


def count_bench():
    say("## 3b. Counting samples into the profile (the generated ELF's code, 20 M samples, best of 3)")
    big = os.path.join(B, "bench", "large", "big.elf")
    exe = os.path.join(B, "bench_count")
    subprocess.run(["cc", "-std=c11", "-O2", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                    os.path.join(HERE, "bench_count.c"), os.path.join(ROOT, "app", "hugeheap.c")] +
                   [os.path.join(ROOT, "profile", f) for f in ("profile.c", "stacks.c", "pcindex.c", "escape.c")] +
                   [os.path.join(ROOT, "symbols", f) for f in ("table.c", "elf.c", "symtab.c", "frames.c", "dwarf.c", "rawdwarf.c", "rawscopes.c", "rawlines.c", "aranges.c", "isolate.c", "units.c", "lookup.c",
                                                               "demangle.c", "codemap.c")] +
                   ["-lelf", "-ldwarf", "-liberty", "-lm", "-pthread", "-o", exe], check=True)
    out = subprocess.run([exe, big], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        say("    " + ln)
    say()


def gdb_bench():
    """Issue 8: halting samples through QEMU's gdbstub: the rate achieved, the core's halted share,
    and what the sampling costs on our side against the server's round trips."""
    say("## 3c. Halting samples through a GDB server (QEMU's gdbstub, -singlestep; 5 s), without and with "
        "call stacks")
    sys.path.insert(0, os.path.join(ROOT, "scenarios"))
    import scen
    import json
    import socket
    elf = scen.build(scen.scenario("bench_gdb", "callers", lib=False, ROUNDS=100000000))
    for rate, depth in ((0, 0), (0, 16), (500, 16)):
        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            port = sk.getsockname()[1]
        q = subprocess.Popen(["qemu-system-arm", "-M", scen.CORES["m4"][0], "-display", "none", "-monitor", "none",
                              "-serial", "null", "-icount", "shift=0", "-singlestep", "-kernel", elf, "-gdb",
                              "tcp:127.0.0.1:%d" % port, "-S"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            t0 = time.perf_counter()
            p = subprocess.Popen([TOOL, "--batch", "-o", "json", "--duration", "5", "--stack-depth", str(depth)] +
                                 (["--rate", str(rate)] if rate else []) + ["gdb:127.0.0.1:%d" % port, elf],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            j = json.loads(p.stdout.read().decode() or "{}")
        finally:
            q.kill()
            q.wait()
        n = j.get("total", 0)
        h = j.get("halting", {})
        halted_ms = 10.0 * h.get("halted_percent", 0) / max(h.get("rate", 0), 1)  # ms halted per sample
        # user time is our work (protocol, unwinding, counting); system time is the kernel's
        # sockets, sleeps and wake-ups, which a virtual machine makes dear
        say("    %s, --stack-depth %d: %d samples, %.0f halts/s, core halted %.1f %% (%.3f ms a sample); "
            "cmprof-top's CPU in %.1f s (start-up and symbols included): user %.3f s = %.0f us a sample, system "
            "%.3f s = %.0f us a sample, against %.2f ms of wall time a sample"
            % ("as fast as possible" if not rate else "--rate %d" % rate, depth, n, h.get("rate", 0),
               h.get("halted_percent", 0), halted_ms, wall, ru.ru_utime, 1e6 * ru.ru_utime / max(n, 1), ru.ru_stime,
               1e6 * ru.ru_stime / max(n, 1), 1e3 * wall / max(n, 1)))
    say()


def main():
    os.makedirs(os.path.join(B, "bench"), exist_ok=True)
    subprocess.run(["make", "-s", "-C", ROOT, "tool"], check=True)
    if not os.path.exists(os.path.join(B, "scenarios", "loops_jitter", "uart.txt")):
        subprocess.run([sys.executable, os.path.join(ROOT, "scenarios", "scen.py"), "run", "loops_jitter"], check=True)
    tmp = tempfile.mkdtemp(prefix="cmprof-bench-")  # the document's scripts live here only
    try:
        say("# cmprof benchmarks (%s)" % time.strftime("%Y-%m-%d %H:%M"))
        say()
        decode_bench()
        batch_bench(tmp)
        symbol_bench(tmp)
        count_bench()
        gdb_bench()
        say("## 4. The live view")
        out = subprocess.run([sys.executable, os.path.join(HERE, "live_bench.py"), "ingest", "cpu"],
                             capture_output=True, text=True, check=True).stdout
        for ln in out.splitlines():
            say("    " + ln)
        say("    (memory over a long replay loop: bench/live_bench.py soak 600)")
        out = subprocess.run([sys.executable, os.path.join(HERE, "live_bench.py"), "first"], capture_output=True,
                             text=True, check=True).stdout
        for ln in out.splitlines():
            say("    " + ln)
        say()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    open(os.path.join(B, "bench", "results.md"), "w").write("\n".join(lines_out) + "\n")


if __name__ == "__main__":
    main()
