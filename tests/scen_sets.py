#!/usr/bin/env python3
"""The QEMU scenarios in the two sets tests/run.sh runs apart, and their firmware built alone.
    scen_sets.py list icount|halting|rtt   the names: counted by instruction (-icount, the same on
                                    a busy machine), or sampled by wall time (one at a time):
                                    halted through QEMU's gdbstub, or read over RTT through it
    scen_sets.py build NAME...      build these scenarios' ELFs without running them (the tests
                                    that read only a halting scenario's fw.elf start before it runs)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenarios"))
import scen  # noqa: E402


def kind(s):
    """scen.run_all's own test: the halting and RTT scenarios run after the rest, one at a time."""
    return "halting" if s["gdb"] else "rtt" if s.get("rtt") else "icount"


def main(args):
    if len(args) == 2 and args[0] == "list" and args[1] in ("icount", "halting", "rtt"):
        print(" ".join(n for n, s in scen.SCENARIOS.items() if kind(s) == args[1]))
        return 0
    if args and args[0] == "build" and all(n in scen.SCENARIOS for n in args[1:]):
        for n in args[1:]:
            scen.build(scen.SCENARIOS[n])
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
