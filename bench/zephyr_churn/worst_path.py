#!/usr/bin/env python3
"""The longest path through a function of an ARM ELF, in instructions: every conditional branch
taken either way (a bound, not a measurement), calls and tail calls followed into their callees
(the functions named after it, the kernel's own, counted as nothing); a loop stops it with a
message. With --masked: the longest stretch of any function from a `cpsid` to the next `msr`
(PRIMASK restored), callees included.

  worst_path.py ELF FUNCTION [NOT_COUNTED ...]
  worst_path.py --masked ELF

docs/performance.md ("Zephyr: no hook at a create") gives the figures: the rename hook of
bench/zephyr_churn's build, `worst_path.py B/zephyr/zephyr.elf __wrap_sys_trace_thread_name_set
sys_trace_thread_name_set`."""
import functools
import re
import subprocess
import sys

COND = "(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)"


def disassembly(elf):
    """{function: [(address, mnemonic, operands)]}, {address: function}"""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", elf], capture_output=True, text=True,
                         check=True).stdout
    funcs, starts, cur = {}, {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            cur = m.group(2)
            funcs[cur], starts[int(m.group(1), 16)] = [], cur
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and cur and not m.group(2).startswith("."):
            funcs[cur].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs, starts


def longest_of(funcs, starts, outside):
    @functools.lru_cache(None)
    def longest(fn):
        if fn in outside:
            return 0
        ins = funcs[fn]
        at = {a: k for k, (a, _, _) in enumerate(ins)}

        @functools.lru_cache(None)
        def from_(k, seen):
            if k >= len(ins):
                return 0
            a, op, args = ins[k]
            if k in seen:
                raise SystemExit("worst_path: a loop in %s at %x" % (fn, a))
            seen = seen | frozenset([k])
            base = op.split(".")[0]
            m = re.search(r"^([0-9a-f]+) <", args)
            target = int(m.group(1), 16) if m else None
            if base in ("bl", "blx") and target is not None:
                return 1 + longest(starts[target]) + from_(k + 1, seen)
            conditional = base in ("cbz", "cbnz") or re.fullmatch("b" + COND, base) is not None
            if base == "b" or conditional:
                taken = from_(at[target], seen) if target in at else longest(starts[target]) if target in starts else 0
                return 1 + (max(taken, from_(k + 1, seen)) if conditional else taken)
            if (base in ("pop", "ldmia") and "pc" in args) or (base == "bx" and "lr" in args):
                return 1
            return 1 + from_(k + 1, seen)
        return from_(0, frozenset())
    return longest


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    if sys.argv[1] == "--masked":
        funcs, starts = disassembly(sys.argv[2])
        best, where = 0, "-"
        for fn, ins in list(funcs.items()):
            for k, (_, op, _) in enumerate(ins):
                end = next((j for j in range(k, len(ins)) if ins[j][1] == "msr"), None) if op == "cpsid" else None
                if end is None:
                    continue
                funcs["(masked)"] = ins[k:end + 1] + [(0, "bx", "lr")]
                n = longest_of(funcs, starts, frozenset())("(masked)") - 1  # (the closing bx)
                if n > best:
                    best, where = n, fn
        print("longest masked stretch: %d instructions, in %s" % (best, where))
        return
    funcs, starts = disassembly(sys.argv[1])
    print("%s: %d instructions on the longest path" % (sys.argv[2], longest_of(funcs, starts, frozenset(sys.argv[3:]))(sys.argv[2])))


if __name__ == "__main__":
    main()
