#!/usr/bin/env python3
"""The default pace's halted share on QEMU's gdbstub, alone or beside a CPU hog: RUNS runs of
tests/test_gdb.py's qemu_share() (4 s, guest halted at reset, then attached to a running one), each
printing the halted percent and the halts a second; --hog N starts N busy loops (same nice level)
for the runs and kills them after; --tools A,B alternates two builds of cmprof-top run by run
(before and after a change, under the same load). Not a test: the figures depend on the machine and its load.

    python3 bench/gdb_pace.py [--hog N] [--tools A,B] [RUNS] [-- extra cmprof-top arguments]"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import test_gdb  # noqa: E402


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    hog = 0
    if args[:1] == ["--hog"]:
        hog, args = int(args[1]), args[2:]
    tools = [test_gdb.TOOL]
    if args[:1] == ["--tools"]:
        tools, args = args[1].split(","), args[2:]
    runs = int(args[0]) if args else 6
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True) for _ in range(hog)]
    shares = {t: [] for t in tools}
    try:
        for i in range(runs * len(tools)):
            tool = test_gdb.TOOL = tools[i % len(tools)]
            running = i // len(tools) % 2 == 1
            code, share, j, err = test_gdb.qemu_share(*extra, running=running)
            rate = j.get("halting", {}).get("rate")
            shares[tool].append(share if share is not None else 100.0)
            print("%s run %d%s: exit %s, halted %s %%, %s halts/s, %s samples" % (
                tool, i // len(tools), " (running)" if running else "", code, share, rate, j.get("total")), flush=True)
    finally:
        for h in hogs:
            os.killpg(h.pid, signal.SIGKILL)
            h.wait()
    for tool, sh in shares.items():
        print("%s, hog %d: halted %% min %.2f max %.2f, over 12 %%: %d of %d" % (
            tool, hog, min(sh), max(sh), sum(s > 12 for s in sh), len(sh)))


main()
