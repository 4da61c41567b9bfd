#!/usr/bin/env python3
"""make bench: every figure is a ratio against a baseline measured in the same run, from interleaved
runs (each round runs ours and the baseline once, in turn): the median of the per-round ratios
with their spread (interquartile range and range), and the medians of each side. Never a best run:
see interleave.py.
  1. decoder throughput (C, in memory, >= 50 MB streams), against a read-only loop;
  2. batch end to end on 1,000,000 samples, against the reference document's two Python scripts
     (its ITM parser, then its summarizer), run from a temporary copy of the document's text;
  3. symbols on a generated ELF (>= 20,000 functions, >= 100 units, -O2 -g): 100,000 addresses
     through arm-none-eabi-addr2line -f -i, addr2line -a -f -i (whose output is --resolve's byte
     for byte), llvm-addr2line when installed, and cmprof-top --resolve, load included, wall and
     CPU time, with peak memory, at random and confined to 5 % of the units; the fast DWARF reader against libdwarf; then the
     steady-state cached lookup rate against the first pass;
     the first report of a capture that needs every unit against addr2line answering one address;
  3b/3c/3d. counting samples; halting samples through QEMU's gdbstub against a GDB/MI loop
     (gdb-multiarch); --batch's peak memory on a small and a large capture;
  4. the live view: ingest rate from a file, keypress latency, CPU at a live 10,000 samples/s, and
     the time to the first screen on the generated ELF.
Results go to stdout and build/bench/results.md."""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import interleave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
B = os.path.join(ROOT, "build")
TOOL = os.environ.get("CMPROF_TOOL", os.path.join(B, "cmprof-top"))  # (as the tests: another build to time)
# the reference document whose scripts section 2 runs: beside the checkout, or CMPROF_SEED (a clone
# elsewhere has no copy: section 2 then says so and the others run)
SEED = os.environ.get("CMPROF_SEED") or os.path.join(ROOT, "..", "shared", "seeds", "000_b3d6e524a71660dc.txt")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from test_cli import itm_stream, pcs_of  # noqa: E402

# rounds of each comparison (see interleave.py): enough for a median and quartiles that hold still,
# the whole of make bench within about ten minutes on two shared cores
BATCH_ROUNDS = 11
RANDOM_ROUNDS = 25
CONFINED_ROUNDS = 31
PARTS_ROUNDS = 21
WRITER_ROUNDS = 31
GDB_ROUNDS = 5
FIRST_REPORT_ROUNDS = 21
MEMORY_ROUNDS = 3
ORBTOP_ROUNDS = 5
MEMORY_RESOLVE_ROUNDS = 3
GDB_SECONDS = 5
# the scenario captures the benches read, made first on a fresh clone
SCENARIOS = ("loops_jitter", "stream_tagged", "stream")

# LLVM's symbolizer, when installed (Debian's llvm package): a second peer for --resolve
LLVM_ADDR2LINE = shutil.which("llvm-addr2line")

lines_out = []
# the acceptance table, filled by the sections from this run's own rounds: (work, peer, ours, ratio, goal, met)
accepted = []


def accept(work, peer, ours, ratios, goal, at_least=True, fmt="%.2f", valid=True, cpu_ratios=None):
    """One row of the closing table: the median of the per-round ratios (peer / ours for times,
    ours / peer for memory) with its IQR, against goal (a ratio to reach, or not to pass when
    at_least is False; None: no goal asked). valid=False (outputs not identical) fails the row.
    cpu_ratios: the same rounds' ratios of CPU time, shown beside (a loaded machine stretches a
    long run's wall time more than a short one's)."""
    q1, med, q3 = interleave.quartiles(ratios)
    ratio = (fmt + "x (IQR " + fmt + "-" + fmt + ", %d rounds)") % (med, q1, q3, len(ratios))
    if cpu_ratios:
        ratio += "; CPU %.2fx" % interleave.median(cpu_ratios)
    if goal is None:
        accepted.append((work, peer, ours, ratio, "", ""))
        return
    met = valid and (med >= goal if at_least else med <= goal)
    accepted.append((work, peer, ours, ratio, ("≥ %gx" if at_least else "≤ %gx") % goal, "met" if met else "NOT met"))


def acceptance_table():
    say("## Acceptance: each figure against its peer, from this run's interleaved rounds (medians)")
    say()
    say("| work | peer | cmprof-top | ratio (median of the rounds' ratios) | goal | |")
    say("|---|---|---|---|---|---|")
    for row in accepted:
        say("| " + " | ".join(row) + " |")
    say()


def say(s=""):
    print(s, flush=True)
    lines_out.append(s)


def timed(cmd, stdin=None, stdout=subprocess.DEVNULL, env=None, memory=True):
    """Wall time and peak RSS (MB) of one child process. The peak comes from GNU time (the rusage
    Python's wait4 returns for a child counts the RSS this large process had when it forked);
    memory=False runs the command bare, for the time alone (peak 0)."""
    return timed_faults(cmd, stdin, stdout, env, memory)[:2]


def spawn(cmd, stdin, stdout, env):
    """Run cmd to its end: (wall seconds, its stderr, its rusage); an error when it fails."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s failed: %s" % (cmd[0], err.strip()))
    return t, err, ru


def timed_faults(cmd, stdin=None, stdout=subprocess.DEVNULL, env=None, memory=True):
    """timed(), and the process's minor page faults (from GNU time too; 0 when memory=False): on a
    virtual machine each fresh 4 KB page can cost 10 us or more."""
    t, err, _ = spawn((["/usr/bin/time", "-f", "maxrss %M\nminflt %R"] if memory else []) + cmd, stdin, stdout, env)
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
    say("## 1. Decoder throughput (64 MB streams in memory)")
    exe = link_with_tool("bench_decode.c")
    out = subprocess.run([exe, "64"], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        say("    " + ln)
    say()


def batch_bench(tmp):
    say("## 2. Batch end to end, 1,000,000 samples (ITM capture) against the document's Python scripts")
    if not os.path.exists(SEED):
        say("    not run: the reference document is not at %s (set CMPROF_SEED to its path)" % SEED)
        say()
        return
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
    with open(dump, "w") as f:  # the parser's output, the summarizer's input; its peak memory
        _, m_parse = timed([sys.executable, itm_py, "parse", swo], stdout=f)
    _, m_sum = timed([sys.executable, prof_py, dump, elf])
    _, m_ours = timed([TOOL, "--batch", swo, elf])
    # the scripts take seconds, we take milliseconds: each round runs both scripts, then ours on
    # the capture and on the dump
    runs = interleave.rounds({
        "parse": lambda: timed([sys.executable, itm_py, "parse", swo], memory=False)[0],
        "sum": lambda: timed([sys.executable, prof_py, dump, elf], memory=False)[0],
        "ours": lambda: timed([TOOL, "--batch", swo, elf], memory=False)[0],
        "text": lambda: timed([TOOL, "--batch", dump, elf], memory=False)[0]}, BATCH_ROUNDS)
    scripts = [a + b for a, b in zip(runs["parse"], runs["sum"])]
    med = {name: interleave.median(v) for name, v in runs.items()}
    ref = subprocess.run([sys.executable, prof_py, dump, elf], capture_output=True, text=True).stdout
    ours = subprocess.run([TOOL, "--batch", "--no-inline", swo, elf], capture_output=True, text=True).stdout
    hot_ref = re.search(r"([\d.]+) %\s+[\d.]+\s+hot_a", ref)
    hot_ours = re.search(r"([\d.]+)%\s+[\d.]+%\s+\S+\s+\d+\s+hot_a", ours)
    say("    capture: %.1f MB, %d samples; %d rounds, each the scripts, then cmprof-top on the capture and on "
        "the dump; medians" % (os.path.getsize(swo) / 1e6, len(pcs), BATCH_ROUNDS))
    say("    Python: itm75a.py parse %.2f s (%.0f MB peak) + prof75a.py %.2f s (%.0f MB peak) = %.2f s"
        % (med["parse"], m_parse, med["sum"], m_sum, interleave.median(scripts)))
    say("    cmprof-top --batch: %.3f s (%.0f MB peak)" % (med["ours"], m_ours))
    say("    ratio: %s faster; hot_a %s %% (scripts) vs %s %% (cmprof-top)"
        % (interleave.spread(interleave.ratios(scripts, runs["ours"]), "%.0f", "x"),
           hot_ref.group(1) if hot_ref else "?", hot_ours.group(1) if hot_ours else "?"))
    # the text path: the same samples as a dump of "p" lines, summarised by prof75a.py and by us
    say("    text dump: %.1f MB; prof75a.py %.2f s, cmprof-top --batch %.3f s: %s faster"
        % (os.path.getsize(dump) / 1e6, med["sum"], med["text"],
           interleave.spread(interleave.ratios(runs["sum"], runs["text"]), "%.0f", "x")))
    accept("ITM capture, 1M samples, against the document's two scripts", "itm75a.py + prof75a.py %.2f s"
           % interleave.median(scripts), "--batch %.3f s" % med["ours"], interleave.ratios(scripts, runs["ours"]),
           1, fmt="%.0f")
    accept("text dump of those samples, against its summarizer", "prof75a.py %.2f s" % med["sum"],
           "--batch %.3f s" % med["text"], interleave.ratios(runs["sum"], runs["text"]), 1, fmt="%.0f")
    say()


def run_once(cmd, stdin_path, stdout_path=os.devnull, env=None):
    """One bare run: (wall seconds, CPU seconds of user and system time, all its threads)."""
    with open(stdin_path) as i, open(stdout_path, "w") as o:
        t, _, ru = spawn(cmd, i, o, env)
    return t, ru.ru_utime + ru.ru_stime


def random_addresses(rnd, funcs, n):
    """n instruction addresses (halfwords) inside functions drawn at random from (start, size)."""
    out = []
    for _ in range(n):
        lo, size = funcs[rnd.randrange(len(funcs))]
        out.append(lo + 2 * rnd.randrange(size // 2))
    return out


def code_functions(nm):
    """(start, size) of each code symbol of 4 bytes or more in `nm -S --defined-only` output."""
    return [(int(a, 16) & ~1, int(s, 16)) for a, s, t, n in (ln.split() for ln in nm.splitlines()
                                                             if len(ln.split()) == 4) if t in "Tt" and int(s, 16) >= 4]


def walls(runs):
    return [w for w, _ in runs]


def cpus(runs):
    return [c for _, c in runs]


def symbol_bench(tmp):
    say("## 3. Symbols on a generated ELF")
    big = os.path.join(B, "bench", "large", "big.elf")
    if not os.path.exists(big):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_large_elf.py"), os.path.dirname(big)], check=True,
                       stdout=subprocess.DEVNULL)
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", big], capture_output=True, text=True).stdout
    funcs = code_functions(nm)
    units = len([f for f in os.listdir(os.path.dirname(big)) if f.endswith(".o")])
    inl = subprocess.run("arm-none-eabi-readelf --debug-dump=info %s | grep -c DW_TAG_inlined_subroutine" % big,
                         shell=True, capture_output=True, text=True).stdout.strip()
    rnd = random.Random(42)
    af = os.path.join(B, "bench", "addrs.txt")  # (kept, with the two below, for bench/versus.py)
    open(af, "w").write("".join("%x\n" % a for a in random_addresses(rnd, funcs, 100000)))
    say("    ELF: %.1f MB, %d functions, %d units, %s inlined instances"
        % (os.path.getsize(big) / 1e6, len(funcs), units, inl))
    cmds = {"addr2line": ["arm-none-eabi-addr2line", "-f", "-i", "-e", big],
            "addr2line -a": ["arm-none-eabi-addr2line", "-a", "-f", "-i", "-e", big], "ours": [TOOL, "--resolve", big]}
    if LLVM_ADDR2LINE:  # LLVM's symbolizer in addr2line's mode: the same frames, addresses without leading zeros
        cmds["llvm"] = [LLVM_ADDR2LINE, "-a", "-f", "-i", "-e", big]
    random_bench(tmp, big, af, cmds)
    # 100,000 addresses confined to 5 % of the units: only those units are read
    by_unit = {}
    for ln in nm.splitlines():
        f = ln.split()
        m = re.match(r"f(\d+)_\d+$", f[-1]) if len(f) == 4 and f[2] in "Tt" and int(f[1], 16) >= 4 else None
        if m:
            by_unit.setdefault(int(m.group(1)), []).append((int(f[0], 16) & ~1, int(f[1], 16)))
    few = sorted(by_unit)[:max(1, units // 20)]
    caddrs = random_addresses(rnd, [fn for u in few for fn in by_unit[u]], 100000)
    cf = os.path.join(B, "bench", "confined.txt")
    open(cf, "w").write("".join("%x\n" % a for a in caddrs))
    say("    100,000 addresses in %d of %d units (5 %%):" % (len(few), units))
    confined_bench(tmp, cf, cmds, len(few))
    first = os.path.join(tmp, "confined_first.txt")
    open(first, "w").write("".join("%x\n" % a for a in caddrs[:1024]))
    parts_bench(big, first, cf, len(few))
    first_report_bench(big, nm)
    lookup_bench(big, af)
    say()


def random_bench(tmp, big, af, cmds):
    """100,000 random addresses, load included: addr2line with and without -a, --resolve, and
    --resolve with libdwarf reading every unit, in turn; wall and CPU time."""
    out_theirs, out_ours = os.path.join(tmp, "theirs.txt"), os.path.join(tmp, "ours.txt")
    out_a = os.path.join(tmp, "theirs_a.txt")
    libdwarf = dict(os.environ, CMPROF_DWARF_LIBDWARF="1")
    runs = interleave.rounds({
        "addr2line": lambda: run_once(cmds["addr2line"], af, out_theirs),
        "addr2line -a": lambda: run_once(cmds["addr2line -a"], af, out_a),
        "ours": lambda: run_once(cmds["ours"], af, out_ours),
        "libdwarf": lambda: run_once(cmds["ours"], af, os.path.join(tmp, "libdwarf.txt"), libdwarf),
        **({"llvm": lambda: run_once(cmds["llvm"], af, os.path.join(tmp, "llvm.txt"))} if "llvm" in cmds else {})},
        RANDOM_ROUNDS)
    peak, faults = {}, {}
    for name, cmd, env in (("addr2line", cmds["addr2line"], None), ("ours", cmds["ours"], None),
                           ("libdwarf", cmds["ours"], libdwarf)):
        with open(af) as i:
            _, peak[name], faults[name] = timed_faults(cmd, stdin=i, env=env)
    # same frames? (ours prints the address line too, addr2line without -a does not)
    theirs = [ln.rsplit("/", 1)[-1] for ln in open(out_theirs).read().splitlines()]
    ours = [ln.rsplit("/", 1)[-1] for ln in open(out_ours).read().splitlines() if not ln.startswith("0x")]
    say("    100,000 random instruction addresses, load included; %d rounds of the four in turn, output to a "
        "file; medians, and the spread of the per-round ratios:" % RANDOM_ROUNDS)
    med = {name: (interleave.median(walls(v)), interleave.median(cpus(v))) for name, v in runs.items()}
    for name, label in (("addr2line", "arm-none-eabi-addr2line -f -i"), ("addr2line -a", "addr2line -a -f -i"),
                        ("ours", "cmprof-top --resolve"), ("libdwarf", "--resolve, libdwarf reading every unit"),
                        ("llvm", "llvm-addr2line -a -f -i")):
        if name not in med:
            continue
        say("      %-38s %.3f s wall, %.3f s CPU%s" % (label + ":", med[name][0], med[name][1],
            ", %.0f MB peak, %d minor faults" % (peak[name], faults[name]) if name in peak else ""))
    for name, label in (("addr2line", "addr2line -f -i"), ("addr2line -a", "addr2line -a -f -i"),
                        ("libdwarf", "--resolve with libdwarf"), ("llvm", "llvm-addr2line -a -f -i")):
        if name not in runs:
            continue
        say("      %s / --resolve: wall %s, CPU %s" % (
            label, interleave.spread(interleave.ratios(walls(runs[name]), walls(runs["ours"])), "%.1f", "x"),
            interleave.spread(interleave.ratios(cpus(runs[name]), cpus(runs["ours"])), "%.1f", "x")))
    say("      frames identical (file names without directories): %s" % ("yes" if theirs == ours else
                                                                       "NO (%d vs %d lines)" % (len(theirs), len(ours))))
    same = open(out_a, "rb").read() == open(out_ours, "rb").read()
    say("      --resolve's output byte for byte addr2line -a -f -i's: %s" % ("yes" if same else "NO"))
    accept("`--resolve`, 100k random addresses, 27 MB ELF (output byte-identical: %s)" % ("yes" if same else "NO"),
           "addr2line -a -f -i %.3f s" % med["addr2line -a"][0], "%.3f s" % med["ours"][0],
           interleave.ratios(walls(runs["addr2line -a"]), walls(runs["ours"])), 3, valid=same,
           cpu_ratios=interleave.ratios(cpus(runs["addr2line -a"]), cpus(runs["ours"])))
    if "llvm" in runs:
        accept("the same against LLVM's symbolizer", "llvm-addr2line -a -f -i %.3f s" % med["llvm"][0],
               "%.3f s" % med["ours"][0], interleave.ratios(walls(runs["llvm"]), walls(runs["ours"])), None,
               cpu_ratios=interleave.ratios(cpus(runs["llvm"]), cpus(runs["ours"])))


def confined_bench(tmp, cf, cmds, n_units):
    """Runs of tens of milliseconds, where start-up jitter is a large share of one: the three in
    turn, many rounds. addr2line -a prints what --resolve prints, byte for byte (checked here);
    without -a it prints less, and is timed too."""
    runs = interleave.rounds({name: (lambda cmd=cmd: run_once(cmd, cf)) for name, cmd in cmds.items()},
                             CONFINED_ROUNDS)
    peak, faults = {}, {}
    for name, cmd in cmds.items():
        with open(cf) as i:
            _, peak[name], faults[name] = timed_faults(cmd, stdin=i)
    out_theirs, out_ours = os.path.join(tmp, "theirs.txt"), os.path.join(tmp, "ours.txt")
    run_once(cmds["addr2line -a"], cf, out_theirs)
    run_once(cmds["ours"], cf, out_ours)
    same = open(out_theirs, "rb").read() == open(out_ours, "rb").read()
    med = {name: interleave.median(walls(v)) for name, v in runs.items()}
    say("      %d rounds of the %d in turn, output to /dev/null; medians, and the spread of the per-round ratios:"
        % (CONFINED_ROUNDS, len(cmds)))
    say("      cmprof-top --resolve: %.3f s (%.0f MB peak, %d minor faults)" % (med["ours"], peak["ours"],
                                                                              faults["ours"]))
    for name, label in (("addr2line -a", "addr2line -a -f -i (the same output, byte for byte: %s)"
                         % ("yes" if same else "NO")), ("addr2line", "addr2line -f -i (no address lines)"),
                        ("llvm", "llvm-addr2line -a -f -i")):
        if name not in runs:
            continue
        say("      %s: %.3f s (%.0f MB peak, %d minor faults) -> --resolve faster by wall %s, CPU %s"
            % (label, med[name], peak[name], faults[name],
               interleave.spread(interleave.ratios(walls(runs[name]), walls(runs["ours"])), "%.1f", "x"),
               interleave.spread(interleave.ratios(cpus(runs[name]), cpus(runs["ours"])), "%.1f", "x")))
    accept("`--resolve`, 100k addresses in %d of the units (output byte-identical: %s)"
           % (n_units, "yes" if same else "NO"), "addr2line -a -f -i %.3f s" % med["addr2line -a"],
           "%.3f s" % med["ours"], interleave.ratios(walls(runs["addr2line -a"]), walls(runs["ours"])), 20, valid=same,
           cpu_ratios=interleave.ratios(cpus(runs["addr2line -a"]), cpus(runs["ours"])))


def parts_bench(big, first, cf, n_units):
    """Where --resolve's time goes: the open alone (no address); the open and the first chunk of
    input (the first read takes CHUNK / 8 = 8 KB in app/resolve.c, 1,024 of these lines, which
    need every one of the units already); the whole input. Medians of the per-round differences."""
    parts = {"none": os.devnull, "first": first, "all": cf}
    runs = interleave.rounds({name: (lambda path=path: run_once([TOOL, "--resolve", big], path)[0])
                              for name, path in parts.items()}, PARTS_ROUNDS)
    units_ms = [1e3 * (b - a) for a, b in zip(runs["none"], runs["first"])]
    rest_ms = [1e3 * (b - a) for a, b in zip(runs["first"], runs["all"])]
    say("      of which (%d rounds): the open %s (no address); the %d units and the first 1,024 addresses %s "
        "more; the other 98,976 addresses %s more" % (PARTS_ROUNDS, interleave.spread([1e3 * t for t in runs["none"]],
                                                                                      "%.1f", " ms"),
                                                      n_units, interleave.spread(units_ms, "%.1f", " ms"),
                                                      interleave.spread(rest_ms, "%.1f", " ms")))


def first_report_bench(big, nm):
    """The first report of a capture that needs every unit: one sample at a function of each unit
    (ITM), cmprof-top --batch against addr2line answering one of those addresses, in turn."""
    first = {}
    for ln in nm.splitlines():
        f = ln.split()
        m = re.match(r"f(\d+)_\d+$", f[-1]) if len(f) == 4 and f[2] in "Tt" else None
        if m and int(m.group(1)) not in first:
            first[int(m.group(1))] = int(f[0], 16) & ~1
    pcs = [first[u] for u in sorted(first)]
    cap = os.path.join(B, "bench", "all_units.itm")
    open(cap, "wb").write(itm_stream(pcs))
    open(os.path.join(B, "bench", "first_pcs.txt"), "w").write("".join("%x\n" % pc for pc in pcs))
    runs = interleave.rounds({
        "addr2line": lambda: run_once(["arm-none-eabi-addr2line", "-f", "-i", "-e", big, "%x" % pcs[0]], os.devnull),
        "ours": lambda: run_once([TOOL, "--batch", cap, big], os.devnull)}, FIRST_REPORT_ROUNDS)
    say("    first report, %d samples at a function of each of the %d units (ITM capture): cmprof-top --batch "
        "%.3f s wall (%.3f s CPU); addr2line answering one of those addresses %.3f s (%.3f s CPU); addr2line / "
        "--batch %s (%d rounds of the two in turn)"
        % (len(pcs), len(first), interleave.median(walls(runs["ours"])), interleave.median(cpus(runs["ours"])),
           interleave.median(walls(runs["addr2line"])), interleave.median(cpus(runs["addr2line"])),
           interleave.spread(interleave.ratios(walls(runs["addr2line"]), walls(runs["ours"])), "%.2f", "x"),
           FIRST_REPORT_ROUNDS))
    accept("first report, a sample in each of the %d units of the 27 MB ELF (`--batch`)" % len(first),
           "addr2line -f -i, one address %.3f s" % interleave.median(walls(runs["addr2line"])),
           "%.3f s" % interleave.median(walls(runs["ours"])),
           interleave.ratios(walls(runs["addr2line"]), walls(runs["ours"])), 1,
           cpu_ratios=interleave.ratios(cpus(runs["addr2line"]), cpus(runs["ours"])))


def find_orbtop():
    """orbtop: ORBTOP=path, orbtop on PATH, or built from ORBUCULUM=its source checkout (Debian has
    no package; bench/build_orbtop.sh); None when none of these."""
    if os.environ.get("ORBTOP") or shutil.which("orbtop"):
        return os.environ.get("ORBTOP") or shutil.which("orbtop")
    src = os.environ.get("ORBUCULUM")
    out = os.path.join(B, "bench", "orbtop")
    if src and not os.path.exists(out):
        subprocess.run([os.path.join(HERE, "build_orbtop.sh"), src, out], check=True, stdout=subprocess.DEVNULL)
    return out if os.path.exists(out) else None


def memory_rounds(label, contenders, peer, rounds):
    """Interleaved rounds of peak resident sets (KB): each contender's median, and its ratio to the
    peer's in the same rounds with their spread."""
    runs = interleave.rounds(contenders, rounds)
    say("    %s; %d rounds of the %d in turn, medians of the peaks (KB -> MB), ratio to %s per round:"
        % (label, rounds, len(contenders), peer))
    for name, v in runs.items():
        ratio = "" if name == peer else " -> %s" % interleave.spread(interleave.ratios(v, runs[peer]), "%.2f", "x")
        say("      %-34s %.2f MB (range %.2f..%.2f)%s" % (name, interleave.median(v) / 1024, min(v) / 1024,
                                                          max(v) / 1024, ratio))
    return runs


def memory_bench(tmp):
    """Peak resident memory: the live view (its VmHWM at the end of the file, tmux) and --batch
    (GNU time) against orbtop on a small and a large ITM capture, and against addr2line with the
    generated 27 MB ELF, each in interleaved rounds (bench/orbtop_mem.py measures each one)."""
    import orbtop_mem
    import orbtop_time
    say("## 3d. Memory: peak resident set against orbtop and addr2line, interleaved")
    elf = os.path.join(B, "scenarios", "loops_jitter", "fw.elf")
    pcs = pcs_of(os.path.join(B, "scenarios", "loops_jitter", "uart.txt"))
    orbtop = find_orbtop()
    for n, rounds in ((100000, MEMORY_ROUNDS), (10000000, MEMORY_ROUNDS)):
        cap = os.path.join(tmp, "mem%d.itm" % n)
        open(cap, "wb").write(itm_stream((pcs * (n // len(pcs) + 1))[:n]))
        contenders = {"orbtop (its own VmHWM)": lambda cap=cap: orbtop_time.orbtop_peak(orbtop, cap, elf)} \
            if orbtop else {}
        contenders["cmprof-top live view"] = lambda cap=cap: orbtop_mem.live_peak(cap, elf)
        contenders["cmprof-top --batch"] = lambda cap=cap: orbtop_mem.batch_peak(cap, elf)
        runs = memory_rounds("ITM, %s samples (%.1f MB), loops_jitter's ELF"
                             % (format(n, ","), os.path.getsize(cap) / 1e6),
                             contenders, "orbtop (its own VmHWM)" if orbtop else "cmprof-top --batch", rounds)
        for name in ("cmprof-top live view", "cmprof-top --batch") if orbtop else ():
            peer = runs["orbtop (its own VmHWM)"]
            accept("peak memory, %s, %s-sample ITM file" % (name[11:], format(n, ",")),
                   "orbtop %.2f MB" % (interleave.median(peer) / 1024), "%.2f MB" % (interleave.median(runs[name]) / 1024),
                   interleave.ratios(runs[name], peer), 1, at_least=False)
        os.unlink(cap)
    if not orbtop:
        say("    orbtop: not found (Debian has no package: ORBTOP=path, or ORBUCULUM=its sources to build it)")
    small_elf = os.path.join(B, "scenarios", "stream_tagged", "fw.elf")
    small = os.path.join(B, "scenarios", "stream_tagged", "uart.txt")
    memory_rounds("stream_tagged's text capture (%.0f KB; orbtop reads ITM only)" % (os.path.getsize(small) / 1e3),
                  {"cmprof-top --batch": lambda: orbtop_mem.batch_peak(small, small_elf),
                   "cmprof-top live view": lambda: orbtop_mem.live_peak(small, small_elf)},
                  "cmprof-top --batch", MEMORY_ROUNDS)
    big = os.path.join(B, "bench", "large", "big.elf")
    cap, addrs = os.path.join(B, "bench", "all_units.itm"), os.path.join(B, "bench", "addrs.txt")
    first = open(os.path.join(B, "bench", "first_pcs.txt")).read().split()
    a2l = ["arm-none-eabi-addr2line", "-f", "-i", "-e", big]
    memory_rounds("the 27 MB ELF: a sample in each of its units", {
        "addr2line -f -i, those addresses": lambda: orbtop_mem.gnu_time_peak(a2l + first),
        "cmprof-top --batch": lambda: orbtop_mem.batch_peak(cap, big),
        "cmprof-top live view": lambda: orbtop_mem.live_peak(cap, big)},
        "addr2line -f -i, those addresses", MEMORY_ROUNDS)
    memory_rounds("the 27 MB ELF: 100,000 random addresses", {
        "addr2line -a -f -i": lambda: orbtop_mem.gnu_time_peak(["arm-none-eabi-addr2line", "-a"] + a2l[1:], addrs),
        "cmprof-top --resolve": lambda: orbtop_mem.gnu_time_peak([TOOL, "--resolve", big], addrs)},
        "addr2line -a -f -i", MEMORY_RESOLVE_ROUNDS)
    say()


def lookup_bench(big, af):
    exe = link_with_tool("bench_lookup.c", "-D_GNU_SOURCE")
    out = subprocess.run([exe, big, af], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        say("    " + ln)


def link_with_tool(source, *flags):
    """build/NAME: bench/SOURCE linked with the tool's own library (the objects make tool built, with
    its flags), so a bench never lists the sources its code needs: such lists went stale as the code
    moved (the count bench missed profile/count.c, the lookup bench symbols/leaf.c, the writers bench
    source/'s registry)."""
    exe = os.path.join(B, os.path.splitext(source)[0])
    subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", *flags, os.path.join(HERE, source),
                    os.path.join(HERE, "spread.c"), os.path.join(B, "obj", "plain", "libcmprof.a"),
                    "-lelf", "-ldwarf", "-liberty", "-lserialport", "-lncursesw", "-ltinfo", "-lz", "-lm", "-pthread",
                    "-o", exe], check=True)
    return exe


def count_bench():
    say("## 3b. Counting samples into the profile (the generated ELF's code, 20 M samples)")
    big = os.path.join(B, "bench", "large", "big.elf")
    exe = link_with_tool("bench_count.c", "-D_GNU_SOURCE")
    out = subprocess.run([exe, big], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        say("    " + ln)
    say()


def writers_bench(tmp):
    """Each report writer's cost on the 1M-sample ITM capture of batch_bench (untagged), and on a
    1M-sample tagged stream (stream_tagged's capture, 100 times: the trace's runs), as ratios to the
    CSV writer in the same rounds."""
    say("## 2b. Report writers, 1,000,000 samples: each -o format's cost against -o csv's")
    exe = link_with_tool("bench_writers.c")
    tagged = os.path.join(tmp, "tagged.txt")
    with open(os.path.join(B, "scenarios", "stream_tagged", "uart.txt")) as f:
        text = f.read()
    with open(tagged, "w") as f:
        f.write(text * 100)
    swo = os.path.join(tmp, "swo.bin")
    if not os.path.exists(swo):  # (section 2 wrote it, unless it did not run)
        pcs = pcs_of(os.path.join(B, "scenarios", "loops_jitter", "uart.txt"))
        open(swo, "wb").write(itm_stream((pcs * (1000000 // len(pcs) + 1))[:1000000]))
    for label, cap, elf in (("ITM capture, untagged", swo, "loops_jitter"),
                            ("tagged stream (stream_tagged x 100)", tagged, "stream_tagged")):
        out = subprocess.run([exe, cap, os.path.join(B, "scenarios", elf, "fw.elf"), str(WRITER_ROUNDS)],
                             capture_output=True, text=True, check=True).stdout
        say("    " + label + ": " + out.splitlines()[0])
        for ln in out.splitlines()[1:]:
            say("    " + ln)
    say()


def with_qemu(elf, fn):
    """fn(port) with a fresh QEMU halted at reset behind its gdbstub (-singlestep) on that port."""
    sys.path.insert(0, os.path.join(ROOT, "scenarios"))
    import scen
    import socket
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    q = subprocess.Popen(["qemu-system-arm", "-M", scen.CORES["m4"][0], "-display", "none", "-monitor", "none",
                          "-serial", "null", "-icount", "shift=0", "-singlestep", "-kernel", elf, "-gdb",
                          "tcp:127.0.0.1:%d" % port, "-S"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return fn(port)
    finally:
        q.kill()
        q.wait()


def gdb_halting(elf, rate, depth, port):
    """One cmprof-top run of GDB_SECONDS against the server: (samples/s, halted %, user s, system s,
    samples, wall s)."""
    import json
    t0 = time.perf_counter()
    p = subprocess.Popen([TOOL, "--batch", "-o", "json", "--duration", str(GDB_SECONDS), "--stack-depth", str(depth)] +
                         ["--rate", str(rate) if rate else "max", "gdb:127.0.0.1:%d" % port, elf],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    j = json.loads(p.stdout.read().decode() or "{}")
    h = j.get("halting", {})
    return h.get("rate", 0), h.get("halted_percent", 0), ru.ru_utime, ru.ru_stime, j.get("total", 0), wall


def gdb_bench():
    """Halting samples through QEMU's gdbstub against a GDB/MI loop (gdbmi_loop.py: interrupt, read
    $pc, continue) on the same firmware, each round one run of each, a fresh QEMU each run: the
    rates, the core's halted share, and what the sampling costs on our side."""
    say("## 3c. Halting samples through a GDB server (QEMU's gdbstub, -singlestep; %d s a run), against a "
        "GDB/MI loop" % GDB_SECONDS)
    sys.path.insert(0, os.path.join(ROOT, "scenarios"))
    import scen
    import gdbmi_loop
    elf = scen.build(scen.scenario("bench_gdb", "callers", lib=False, ROUNDS=100000000))
    have_mi = shutil.which(gdbmi_loop.GDB) is not None
    configs = {"max": (0, 0), "max16": (0, 16), "500": (500, 16)}
    contenders = {name: (lambda r=r, d=d: with_qemu(elf, lambda port: gdb_halting(elf, r, d, port)))
                  for name, (r, d) in configs.items()}
    if have_mi:
        contenders["mi"] = lambda: with_qemu(elf, lambda port: gdbmi_loop.sample(
            elf, "127.0.0.1:%d" % port, GDB_SECONDS))
    runs = interleave.rounds(contenders, GDB_ROUNDS)
    med = lambda name, i: interleave.median([r[i] for r in runs[name]])  # noqa: E731
    say("    %d rounds of %s in turn; medians (IQR, range of the rounds)" % (
        GDB_ROUNDS, "the three runs of ours and the MI loop" if have_mi else "the three runs of ours"))
    for name, label in (("max", "as fast as possible (--rate max)"), ("max16", "--rate max --stack-depth 16"),
                        ("500", "--rate 500 --stack-depth 16")):
        n = med(name, 4)
        say("    cmprof-top %s: %s halts/s, core halted %.1f %%; CPU user %.3f s = %.0f us a sample, system %.3f s"
            % (label, interleave.spread([r[0] for r in runs[name]], "%.0f"), med(name, 1), med(name, 2),
               1e6 * med(name, 2) / max(n, 1), med(name, 3)))
    if have_mi:
        say("    GDB/MI loop (%s, interrupt / read $pc / continue): %s samples/s, core halted %.0f %%"
            % (gdbmi_loop.GDB, interleave.spread([r[1] for r in runs["mi"]], "%.0f"), 100 * med("mi", 2)))
        say("    ratio, samples/s (--rate max / MI loop, per round): %s" % interleave.spread(
            interleave.ratios([r[0] for r in runs["max"]], [r[1] for r in runs["mi"]]), "%.1f", "x"))
        accept("halting samples/s at `--rate max`, QEMU's gdbstub", "GDB/MI loop %.0f/s, core halted %.0f %%"
               % (med("mi", 1), 100 * med("mi", 2)), "%.0f/s, core halted %.0f %%" % (med("max", 0), med("max", 1)),
               interleave.ratios([r[0] for r in runs["max"]], [r[1] for r in runs["mi"]]), 1, fmt="%.1f")
    else:
        say("    GDB/MI loop: not run (%s is not installed: scripts/deps.sh bench)" % gdbmi_loop.GDB)
    say()


def orbtop_bench(tmp):
    """--batch against orbtop reading the same ITM capture (bench/orbtop_time.py: orbtop never ends
    at a file's end, so its time runs until it has read and decoded the last byte): 10M samples on a
    small ELF, and 1M samples at random instruction addresses of the 27 MB ELF."""
    import orbtop_time
    say("## 2c. ITM captures: cmprof-top --batch against orbtop (orbuculum), interleaved")
    orbtop = find_orbtop()
    if not orbtop:
        say("    not run: orbtop not found (Debian has no package: ORBTOP=path, or ORBUCULUM=its sources to build it)")
        say()
        return
    pcs = pcs_of(os.path.join(B, "scenarios", "loops_jitter", "uart.txt"))
    big = os.path.join(B, "bench", "large", "big.elf")
    # samples land where instructions start (a halfword inside a 32-bit one is a wrong-ELF sign)
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", big], capture_output=True,
                             text=True, check=True).stdout
    starts = [int(a, 16) for a in re.findall(r"^ *([0-9a-f]+):\t", listing, re.M)]
    rnd = random.Random(7)
    spread_pcs = [starts[rnd.randrange(len(starts))] for _ in range(1000000)]
    for label, elf, cap_pcs in (
            ("10,000,000 samples, loops_jitter's ELF", os.path.join(B, "scenarios", "loops_jitter", "fw.elf"),
             (pcs * (10000000 // len(pcs) + 1))[:10000000]),
            ("1,000,000 samples at random instructions (%s distinct PCs), the 27 MB ELF"
             % format(len(set(spread_pcs)), ","), big, spread_pcs)):
        cap = os.path.join(tmp, "orbtop_time.itm")
        open(cap, "wb").write(itm_stream(cap_pcs))
        size = os.path.getsize(cap) / 1e6
        runs = orbtop_time.rounds(orbtop, cap, elf, ORBTOP_ROUNDS)
        os.unlink(cap)
        say("    ITM, %s (%.1f MB); %d rounds of the two in turn:" % (label, size, ORBTOP_ROUNDS))
        say("      orbtop %s, of which 1 s its own wait before it reads the ELF" % interleave.spread(runs["orbtop"], "%.3f",
                                                                                                 " s"))
        say("      cmprof-top --batch %s" % interleave.spread(runs["ours"], "%.3f", " s"))
        say("      orbtop / --batch: %s; orbtop less its 1 s wait / --batch: %s" % (
            interleave.spread(interleave.ratios(runs["orbtop"], runs["ours"]), "%.1f", "x"),
            interleave.spread(interleave.ratios(runs["orbtop working"], runs["ours"]), "%.1f", "x")))
        accept("ITM %.0f MB, %s" % (size, label), "orbtop %.2f s (%.2f s less its 1 s wait)"
               % (interleave.median(runs["orbtop"]), interleave.median(runs["orbtop working"])),
               "--batch %.3f s" % interleave.median(runs["ours"]),
               interleave.ratios(runs["orbtop working"], runs["ours"]), 1, fmt="%.1f")
    say()


def live_section():
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


def main():
    os.makedirs(os.path.join(B, "bench"), exist_ok=True)
    subprocess.run(["make", "-s", "-C", ROOT, "tool"], check=True)
    missing = [n for n in SCENARIOS if not os.path.exists(os.path.join(B, "scenarios", n, "uart.txt"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(ROOT, "scenarios", "scen.py"), "run"] + missing, check=True)
    tmp = tempfile.mkdtemp(prefix="cmprof-bench-")  # the document's scripts live here only
    try:
        say("# cmprof benchmarks (%s)" % time.strftime("%Y-%m-%d %H:%M"))
        say()
        decode_bench()
        batch_bench(tmp)
        writers_bench(tmp)
        symbol_bench(tmp)
        count_bench()
        memory_bench(tmp)
        gdb_bench()
        orbtop_bench(tmp)
        live_section()
        acceptance_table()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    open(os.path.join(B, "bench", "results.md"), "w").write("\n".join(lines_out) + "\n")


if __name__ == "__main__":
    main()
