#!/usr/bin/env python3
"""What moves the --resolve against addr2line ratio (issue 35, item 20: the README once said 13-16x,
a side-by-side median gave 1.8x). On the generated big ELF, 100,000 random addresses (run_bench.py's,
same seed), load included; every question is answered by rounds of interleaved runs on the same
minute, medians and the spread of the per-round ratios (interleave.py):
  procedure  the old bench's best of 3 (three addr2line runs, then three of ours) against the median
             of interleaved rounds taken right after
  order      --resolve right after addr2line, against right after another --resolve
  cores      --resolve free to use both cores, against confined to one (taskset -c 0)
  flags      addr2line -a -f -i against -f -i
  output     each to a file, to /dev/null and to a pipe
  cold       each with the ELF dropped from the page cache first, against cached (both right after
             a --resolve, as the order matters)
  pages      what a fresh 4 KB and a fresh 2 MB page cost now (the kernel's, and on a virtual
             machine its host's, work: the share of the run that is page faults)
    resolve_factors.py [QUESTION...]   (all of them when none: 3-6 minutes on two shared cores)
Not part of make bench: a diagnosis, printed to stdout."""
import mmap
import os
import random
import subprocess
import sys
import tempfile
import time

import interleave
from run_bench import B, TOOL, code_functions, random_addresses, run_once

BIG = os.path.join(B, "bench", "large", "big.elf")
ROUNDS = 8


def ratio_line(label, num, den):
    print("  %s: %s" % (label, interleave.spread(interleave.ratios(num, den), "%.1f", "x")), flush=True)


def medians(runs):
    return ", ".join("%s %.3f s" % (name, interleave.median(v)) for name, v in runs.items())


def wall(cmd, af, out=os.devnull):
    return run_once(cmd, af, out)[0]


def procedure(a2l, ours, af, out):
    """The old figure's way against the new, on the same minute, four times over."""
    print("procedure: best of 3 in blocks (old make bench) against interleaved medians, same minute", flush=True)
    for k in range(4):
        best_a = min(wall(a2l, af, out) for _ in range(3))
        best_o = min(wall(ours, af, out) for _ in range(3))
        runs = interleave.rounds({"addr2line": lambda: wall(a2l, af, out), "ours": lambda: wall(ours, af, out)}, 5)
        print("  %d. best of 3: addr2line %.3f s, --resolve %.3f s -> %.1fx; interleaved (5 rounds): %s -> %s"
              % (k + 1, best_a, best_o, best_a / best_o, medians(runs),
                 interleave.spread(interleave.ratios(runs["addr2line"], runs["ours"]), "%.1f", "x")), flush=True)


def order(a2l, ours, af, out):
    runs = interleave.rounds({"addr2line": lambda: wall(a2l, af, out), "after addr2line": lambda: wall(ours, af, out),
                              "after --resolve": lambda: wall(ours, af, out)}, ROUNDS)
    print("order (%d rounds of addr2line, --resolve, --resolve): %s" % (ROUNDS, medians(runs)), flush=True)
    ratio_line("--resolve right after addr2line / right after --resolve", runs["after addr2line"],
               runs["after --resolve"])


def cores(a2l, ours, af, out):
    one = ["taskset", "-c", "0"]
    runs = interleave.rounds({"addr2line": lambda: wall(a2l, af, out), "all cores": lambda: wall(ours, af, out),
                              "one core": lambda: wall(one + ours, af, out),
                              "addr2line, one core": lambda: wall(one + a2l, af, out)}, ROUNDS)
    print("cores (%d rounds; load average %.1f): %s" % (ROUNDS, os.getloadavg()[0], medians(runs)), flush=True)
    ratio_line("--resolve on all cores / on one core", runs["all cores"], runs["one core"])
    ratio_line("addr2line / --resolve, all cores", runs["addr2line"], runs["all cores"])
    ratio_line("addr2line / --resolve, each on one core", runs["addr2line, one core"], runs["one core"])


def flags(a2l, ours, af, out):
    a2l_a = a2l[:1] + ["-a"] + a2l[1:]
    runs = interleave.rounds({"-f -i": lambda: wall(a2l, af, out), "-a -f -i": lambda: wall(a2l_a, af, out)}, ROUNDS)
    print("flags (%d rounds): %s" % (ROUNDS, medians(runs)), flush=True)
    ratio_line("addr2line -a -f -i / -f -i", runs["-a -f -i"], runs["-f -i"])


def piped(cmd, af):
    """Wall time of one run writing into a pipe that this process drains."""
    with open(af) as i:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=i, stdout=subprocess.PIPE)
        while p.stdout.read(65536):
            pass
        p.stdout.close()
        p.wait()
    return time.perf_counter() - t0


def output(a2l, ours, af, out):
    runs = interleave.rounds({"addr2line file": lambda: wall(a2l, af, out), "ours file": lambda: wall(ours, af, out),
                              "addr2line null": lambda: wall(a2l, af), "ours null": lambda: wall(ours, af),
                              "addr2line pipe": lambda: piped(a2l, af), "ours pipe": lambda: piped(ours, af)}, ROUNDS)
    print("output (%d rounds): %s" % (ROUNDS, medians(runs)), flush=True)
    for to in ("file", "null", "pipe"):
        ratio_line("addr2line / --resolve, output to %s" % {"file": "a file", "null": "/dev/null", "pipe": "a pipe"}[to], runs["addr2line " + to], runs["ours " + to])


def cold(a2l, ours, af, out):
    def dropped(cmd):
        fd = os.open(BIG, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # (the ELF's cached pages only)
        os.close(fd)
        return wall(cmd, af, out)

    before = lambda: wall(ours, af, out)  # noqa: E731 (each timed run comes right after a --resolve)
    runs = interleave.rounds({"before 1": before, "ours cold": lambda: dropped(ours), "before 2": before,
                              "ours cached": lambda: wall(ours, af, out), "before 3": before,
                              "addr2line cold": lambda: dropped(a2l), "before 4": before,
                              "addr2line cached": lambda: wall(a2l, af, out)}, ROUNDS)
    print("cold (%d rounds): %s" % (ROUNDS, medians({k: v for k, v in runs.items() if not k.startswith("before")})),
          flush=True)
    ratio_line("--resolve, ELF not cached / cached", runs["ours cold"], runs["ours cached"])
    ratio_line("addr2line, ELF not cached / cached", runs["addr2line cold"], runs["addr2line cached"])


def page_cost(size, page, huge):
    """Seconds per page to touch a fresh anonymous mapping of `size` bytes, a page at a time."""
    m = mmap.mmap(-1, size + (2 << 20), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # (shared would be shmem)
    m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    t0 = time.perf_counter()
    for off in range(0, size, page):
        m[off] = 1
    t = time.perf_counter() - t0
    m.close()
    return t / (size // page)


def pages(a2l, ours, af, out):
    """The page-fault cost drifts with the virtual machine's memory (a host that takes back free
    guest memory backs it again at the next touch): it moves addr2line's 60,000 4 KB faults and
    2 MB pages differently (the tool asks for none: docs/performance.md)."""
    small = [page_cost(64 << 20, 4096, False) * 1e6 for _ in range(ROUNDS)]
    big = [page_cost(64 << 20, 2 << 20, True) * 1e3 for _ in range(ROUNDS)]
    print("pages (%d rounds): a fresh 4 KB page %s, a fresh 2 MB page %s (a Python loop: an upper bound)"
          % (ROUNDS, interleave.spread(small, "%.1f", " us"), interleave.spread(big, "%.2f", " ms")), flush=True)
    runs = interleave.rounds({"addr2line": lambda: run_once(a2l, af, out), "ours": lambda: run_once(ours, af, out)},
                             ROUNDS)
    print("  CPU (user and system): addr2line %.3f s, --resolve %.3f s" % (
        interleave.median([c for _, c in runs["addr2line"]]), interleave.median([c for _, c in runs["ours"]])))
    ratio_line("addr2line / --resolve, CPU", [c for _, c in runs["addr2line"]], [c for _, c in runs["ours"]])
    ratio_line("addr2line / --resolve, wall", [w for w, _ in runs["addr2line"]], [w for w, _ in runs["ours"]])


QUESTIONS = {"procedure": procedure, "order": order, "cores": cores, "flags": flags, "output": output, "cold": cold,
             "pages": pages}


def main(argv):
    wanted = argv or list(QUESTIONS)
    unknown = [q for q in wanted if q not in QUESTIONS]
    if unknown:
        sys.exit("resolve_factors.py: no question %s (%s)" % (", ".join(unknown), ", ".join(QUESTIONS)))
    if not os.path.exists(BIG):
        sys.exit("resolve_factors.py: %s missing (make bench, or bench/gen_large_elf.py, builds it)" % BIG)
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", BIG], capture_output=True, text=True).stdout
    funcs = code_functions(nm)
    with tempfile.TemporaryDirectory(prefix="cmprof-factors-") as tmp:
        af, out = os.path.join(tmp, "addrs.txt"), os.path.join(tmp, "out.txt")
        open(af, "w").write("".join("%x\n" % a for a in random_addresses(random.Random(42), funcs, 100000)))
        a2l = ["arm-none-eabi-addr2line", "-f", "-i", "-e", BIG]
        ours = [TOOL, "--resolve", BIG]
        print("100,000 random addresses of %s, load included; load average %.1f" % (BIG, os.getloadavg()[0]))
        for q in wanted:
            QUESTIONS[q](a2l, ours, af, out)


if __name__ == "__main__":
    main(sys.argv[1:])
