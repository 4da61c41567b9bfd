#!/usr/bin/env python3
"""Two builds of cmprof-top, byte for byte: every batch output format over every scenario capture
(build/scenarios/*/: uart.txt, corrupt.txt, gdb.rec beside its fw.elf) and over the ELF zoo
(tests/test_zoo.py's ELFs with a capture of their functions), each run with both tools; stdout,
stderr and the exit status must be the same. For a change that must not change any output.

  scripts/compare_formats.py OLD_TOOL NEW_TOOL [--jobs N]

Prints one line per difference and a last line "N runs compared, N differ"; exits 1 on a difference.
The formats are the ones NEW_TOOL names for an unknown -o."""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPTURES = ("uart.txt", "corrupt.txt", "gdb.rec")
# beside each format's defaults: the options that change what the writers are given
VARIANTS = ([], ["-C", "--by", "line", "--no-inline", "--fold-overhead"], ["--by", "task"])


def formats(tool):
    err = subprocess.run([tool, "--batch", "-o", "no-such-format", "x", "y"], capture_output=True, text=True).stderr
    m = re.search(r"unknown output 'no-such-format' \(([^)]*)\)", err)
    if not m:
        sys.exit("compare_formats: %s does not list its formats: %s" % (tool, err.strip()))
    return m.group(1).split(", ")


def scenario_cases():
    for d in sorted(glob.glob(os.path.join(ROOT, "build", "scenarios", "*", ""))):
        elf = os.path.join(d, "fw.elf")
        for c in CAPTURES:
            if os.path.exists(elf) and os.path.exists(os.path.join(d, c)):
                yield os.path.join(d, c), elf


def zoo_cases():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import test_zoo  # builds the zoo's ELFs in build/zoo
    for k, (name, elf) in enumerate(test_zoo.zoo()):
        addrs = test_zoo.function_addrs(elf) if os.path.getsize(elf) > 1000 else [0x08000000]
        pcs = ["%08x" % (a & ~1) for a in addrs[:40]] or ["08000000"]
        cap = os.path.join(test_zoo.OUT, "compare-cap%d.txt" % k)
        with open(cap, "w") as f:
            f.write("prof raw n=%d\n" % len(pcs))
            for i in range(0, len(pcs), 8):
                f.write("p %s\n" % " ".join(pcs[i:i + 8]))
            f.write("end\n")
        yield cap, elf


def run(tool, args):
    try:
        r = subprocess.run([tool] + args, capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out"
    return r.returncode, r.stdout, r.stderr


def compare(old, new, args):
    a, b = run(old, args), run(new, args)
    return args, a == b, a, b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    names = formats(args.new)
    if names != formats(args.old):
        print("the two tools list different formats: %s / %s" % (formats(args.old), names))
    cases = list(scenario_cases())
    n_scen = len(cases)
    cases += list(zoo_cases())
    runs = [["--batch", "-o", f] + v + [cap, elf] for cap, elf in cases for f in names for v in VARIANTS]
    differ = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for argv, same, a, b in pool.map(lambda r: compare(args.old, args.new, r), runs):
            if not same:
                differ += 1
                print("differ: %s: exit %s/%s, stdout %d/%d bytes, stderr %r / %r" %
                      (" ".join(argv), a[0], b[0], len(a[1]), len(b[1]), a[2][-200:], b[2][-200:]))
    print("%d formats x %d option sets over %d scenario captures and %d zoo ELFs: %d runs compared, %d differ" %
          (len(names), len(VARIANTS), n_scen, len(cases) - n_scen, len(runs), differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
