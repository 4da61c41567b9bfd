#!/usr/bin/env python3
"""The code's layout, measured: which files use each other, and the longest functions.

A file A uses file B when A's object refers to a symbol that only B's object defines (each C file
compiled alone, symbols read with nm), or when a Python module imports another. A loop is a set of
files that reach each other through such uses. Function lengths are counted from the first line of
a definition to its closing brace in column 0 (the project's style).

  scripts/layout_check.py [--max-lines N] [--allow-loops K]   exits 1 when over either limit
"""
import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST_DIRS = ["app", "tui", "report", "source", "decode", "profile", "symbols"]
HOST_FLAGS = ["-std=c11", "-D_GNU_SOURCE", "-O1", "-w"]
FIRMWARE_FLAGS = ["-mcpu=cortex-m3", "-mthumb", "-std=c11", "-O1", "-w", "-DCMPROF_STREAM=1",
                  "-DCMPROF_TAG=cmprof_task_tag", "-Ifirmware"]
SKIP_FUNCTION_DIRS = ("tests/", "fuzz/", "bench/", "scenarios/")


def sources():
    host = []
    for d in HOST_DIRS:
        path = os.path.join(ROOT, d)
        if os.path.isdir(path):
            host += sorted(os.path.join(d, f) for f in os.listdir(path) if f.endswith(".c"))
    firmware = sorted(os.path.join("firmware", f) for f in os.listdir(os.path.join(ROOT, "firmware"))
                      if f.endswith(".c"))
    return host, firmware


def symbols(cc, flags, src, tmp):
    obj = os.path.join(tmp, src.replace("/", "_") + ".o")
    subprocess.run([cc, *flags, "-c", src, "-o", obj], cwd=ROOT, check=True)
    nm = "arm-none-eabi-nm" if cc.startswith("arm") else "nm"
    out = subprocess.run([nm, "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3:
            defined.add(parts[2])
    return defined, undefined


def c_edges(cc, flags, files, tmp):
    defs, undefs = {}, {}
    for f in files:
        defs[f], undefs[f] = symbols(cc, flags, f, tmp)
    owner = {}
    for f, names in defs.items():
        for n in names:
            owner.setdefault(n, set()).add(f)
    edges = {f: set() for f in files}
    for f, names in undefs.items():
        for n in names:
            if len(owner.get(n, ())) == 1:
                (g,) = owner[n]
                if g != f:
                    edges[f].add(g)
    return edges


def python_edges(files):
    names = {os.path.splitext(os.path.basename(f))[0]: f for f in files}
    edges = {f: set() for f in files}
    for f in files:
        tree = ast.parse(open(os.path.join(ROOT, f)).read())
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            for m in mods:
                if m in names and names[m] != f:
                    edges[f].add(names[m])
    return edges


def loops(edges):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


DEFINITION = re.compile(r"^[A-Za-z_][^;=]*\b([A-Za-z_]\w*)\s*\(")


def function_lengths(files):
    """(lines, file:line name) of every function definition in the C files."""
    result = []
    for f in files:
        lines = open(os.path.join(ROOT, f), errors="replace").read().split("\n")
        start = name = None
        for i, line in enumerate(lines):
            if start is None:
                m = DEFINITION.match(line)
                if m and not line.rstrip().endswith(";") and not line.startswith(("typedef", "struct ", "#")):
                    start, name = i, m.group(1)
                continue
            if line.startswith(";") or (line.rstrip().endswith(";") and not line.startswith((" ", "\t", "{"))):
                start = None
                continue
            if line.startswith("}"):
                result.append((i - start + 1, f"{f}:{start + 1} {name}"))
                start = None
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-lines", type=int, default=None, help="fail when a function is longer")
    ap.add_argument("--allow-loops", type=int, default=None, help="fail when there are more loops")
    ap.add_argument("--top", type=int, default=10, help="how many of the longest functions to list")
    args = ap.parse_args()

    host, firmware = sources()
    with tempfile.TemporaryDirectory() as tmp:
        edges = c_edges("cc", HOST_FLAGS, host, tmp)
        edges.update(c_edges("arm-none-eabi-gcc", FIRMWARE_FLAGS, firmware, tmp))
    py = sorted(os.path.join("scenarios", f) for f in os.listdir(os.path.join(ROOT, "scenarios"))
                if f.endswith(".py"))
    edges.update(python_edges(py))

    found = loops(edges)
    print(f"files: {len(host)} host C, {len(firmware)} firmware C, {len(py)} scenario Python")
    print(f"loops: {len(found)}")
    for component in found:
        print("  loop: " + " ".join(component))

    measured = [(n, w) for n, w in function_lengths(host + firmware) if not w.startswith(SKIP_FUNCTION_DIRS)]
    measured.sort(reverse=True)
    print(f"longest functions (of {len(measured)}):")
    for n, where in measured[: args.top]:
        print(f"  {n:4d} {where}")

    bad = False
    if args.max_lines is not None:
        over = [m for m in measured if m[0] > args.max_lines]
        print(f"over {args.max_lines} lines: {len(over)}")
        bad |= bool(over)
    if args.allow_loops is not None and len(found) > args.allow_loops:
        bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
