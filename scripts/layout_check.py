#!/usr/bin/env python3
"""The code's layout, measured: which files use each other, and the longest functions.

A file A uses file B when:
- A's object refers to a symbol B's object defines (each C file compiled alone, symbols read with
  nm): an undefined symbol, a weak reference (#pragma weak: "w"), or an alias B exports for its own
  static data; a symbol several files define (a weak default and its strong override) is a use of
  each of them;
- A calls a static inline function of B's header (B.h beside B.c): no symbol shows that use;
- a Python module imports another, by `import`, `from ... import`, importlib.import_module,
  __import__, importlib.util.spec_from_file_location or runpy.run_path (scenarios/, tests/,
  scripts/, bench/).
A loop is a set of files that reach each other through such uses. The headers of base/ (the growth
helper) are a base every layer may include: they hold no .c and include only the C library, so no
use of them can close a loop; the checker fails a base header that includes a project header. The host code is one build; the
firmware is checked in each of its configurations (stream, dump, ring, histogram, tagged, the
Zephyr module), each its own set of objects, since a loop can live in one of them only.
Function lengths come from universal-ctags (a definition's first line to its closing brace), or,
without it, from a scan for a definition's first line and its closing brace in column 0.

  scripts/layout_check.py [--max-lines N] [--allow-loops K] [--root DIR]   exits 1 when over either limit
  (LAYOUT_NO_CTAGS=1: the scan, even with ctags)
"""
import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST_DIRS = ["app", "tui", "report", "source", "decode", "profile", "symbols"]
# -O0: what an object defines and refers to is its source's, no optimisation drops a reference (and
# the compiles cost about half of -O1's CPU)
HOST_FLAGS = ["-std=c11", "-D_GNU_SOURCE", "-O0", "-w"]
FIRMWARE_FLAGS = ["-mcpu=cortex-m3", "-mthumb", "-std=c11", "-O0", "-w", "-Ifirmware"]
FW_CORE = ["firmware/cmprof_sampler.c", "firmware/cmprof_section.c", "firmware/cmprof_dwt.c",
           "firmware/cmprof_stream.c"]
# (name, flags, the library's files in that build: None = every firmware/*.c)
FIRMWARE_CONFIGS = [
    ("stream", ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=cmprof_task_tag"], None),
    ("dump", [], None),
    ("ring", ["-DCMPROF_RING_N=64", "-DCMPROF_JITTER=255"], None),
    ("histogram", ["-DCMPROF_HIST=1", "-DCMPROF_HIST_BASE=0x08000000u"], None),
    ("tagged", ["-DCMPROF_TAG=cmprof_task_tag"], None),
    ("stream histogram", ["-DCMPROF_STREAM=1", "-DCMPROF_HIST=1", "-DCMPROF_HIST_BASE=0x08000000u"], None),
    # zephyr/CMakeLists.txt's definitions, against tests/zoo's stand-in of Zephyr's kernel API
    # (zephyr/cmprof_module.c needs a Zephyr build's headers, its devicetree's among them: it joins
    # when LAYOUT_ZEPHYR_FLAGS gives them, e.g. "-I$ZEPHYR_BASE/include -Ibuild/zephyr/include/generated")
    ("Zephyr module", ["-DCMPROF_NO_ISR=1", "-DCMPROF_TAG=cmprof_current_task", "-DCMPROF_STREAM=1",
                       "-DCMPROF_STREAM_NAMES_KEPT=1", "-DCMPROF_STREAM_TASKS=16", "-DCMPROF_ZEPHYR_NAME_POOL=256",
                       "-I" + os.path.join(ROOT, "tests", "zoo", "zephyr")],
     ["firmware/cmprof_sampler.c", "firmware/cmprof_section.c", "firmware/cmprof_stream.c",
      "firmware/rtos/cmprof_zephyr.c"]),
]
PY_DIRS = ["scenarios", "tests", "scripts", "bench"]
BASE_DIR = "base"  # headers every host layer may include (see the docstring)
SKIP_FUNCTION_DIRS = ("tests/", "fuzz/", "bench/", "scenarios/")


def c_files(root, d):
    path = os.path.join(root, d)
    return sorted(os.path.join(d, f) for f in os.listdir(path) if f.endswith(".c")) if os.path.isdir(path) else []


def base_headers(root):
    """base/'s headers, and what in base/ breaks the rule: a .c there, or a header that includes a
    project header (quotes) rather than only the C library (angle brackets)."""
    path = os.path.join(root, BASE_DIR)
    names = sorted(os.listdir(path)) if os.path.isdir(path) else []
    faults = [f"{BASE_DIR}/{n} is code, not a header" for n in names if n.endswith(".c")]
    headers = [f"{BASE_DIR}/{n}" for n in names if n.endswith(".h")]
    for h in headers:
        text = strip_comments_keep_strings(open(os.path.join(root, h), errors="replace").read())
        faults += [f"{h} includes {m}" for m in re.findall(r'^\s*#\s*include\s*("[^"]*")', text, re.M)]
    return headers, faults


def strip_comments_keep_strings(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def sources(root):
    host = [f for d in HOST_DIRS for f in c_files(root, d)]
    firmware = c_files(root, "firmware")
    return host, firmware


def symbols(root, cc, flags, files, tmp):
    """{file: (the symbols its object defines, those it refers to)}: each file compiled alone, the
    objects' symbols read by one nm run (-A names each line's object: one process, not one a file)."""
    objs = {}
    for src in files:
        objs[src] = os.path.join(tmp, src.replace("/", "_") + ".o")
        subprocess.run([cc, *flags, "-c", src, "-o", objs[src]], cwd=root, check=True)
    nm = "arm-none-eabi-nm" if cc.startswith("arm") else "nm"
    found = {obj: (set(), set()) for obj in objs.values()}
    if objs:
        out = subprocess.run([nm, "-A", "-g", *objs.values()], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            obj, _, sym = line.rpartition(":")  # "OBJECT:ADDRESS TYPE NAME": a C name holds no colon
            parts = sym.split()
            defined, undefined = found[obj]
            if len(parts) == 2 and parts[0] in ("U", "w", "v"):  # undefined, or a weak reference
                undefined.add(parts[1])
            elif len(parts) == 3:  # defined here: strong, weak (W, V) or an alias of this file's data
                defined.add(parts[2])
    return {src: found[obj] for src, obj in objs.items()}


INLINE = re.compile(r"^static\s+inline\b[^;(]*?\b([A-Za-z_]\w*)\s*\(", re.M)


def inline_owners(root, files):
    """{inline function name: the .c beside the header that defines it}, for headers with a .c."""
    owners = {}
    dirs = sorted({os.path.dirname(f) for f in files})
    for d in dirs:
        for h in sorted(os.listdir(os.path.join(root, d))):
            owner = os.path.join(d, h[:-2] + ".c")
            if h.endswith(".h") and os.path.exists(os.path.join(root, owner)):
                for name in INLINE.findall(open(os.path.join(root, d, h), errors="replace").read()):
                    owners[name] = owner
    return owners


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\\n])*\"", " ", text, flags=re.S)


def c_edges(cc, flags, files, tmp, root=ROOT):
    defs, undefs = {}, {}
    for f, (defined, undefined) in symbols(root, cc, flags, files, tmp).items():
        defs[f], undefs[f] = defined, undefined
    owner = {}
    for f, names in defs.items():
        for n in names:
            owner.setdefault(n, set()).add(f)
    edges = {f: set() for f in files}
    for f, names in undefs.items():
        for n in names:
            edges[f] |= owner.get(n, set()) - {f}
    inline = inline_owners(root, files)
    if inline:
        calls = re.compile(r"\b(%s)\s*\(" % "|".join(map(re.escape, sorted(inline))))
        for f in files:
            text = strip_comments(open(os.path.join(root, f), errors="replace").read())
            for name in set(calls.findall(text)):
                if inline[name] != f and inline[name] in edges:
                    edges[f].add(inline[name])
    return edges


def firmware_builds(root, firmware):
    """[(configuration, flags, files)] of the firmware library."""
    builds = []
    for name, flags, files in FIRMWARE_CONFIGS:
        files = [f for f in (files or firmware) if os.path.exists(os.path.join(root, f))]
        module = os.path.join("zephyr", "cmprof_module.c")
        zephyr = os.environ.get("LAYOUT_ZEPHYR_FLAGS", "").split()
        if name == "Zephyr module" and zephyr and os.path.exists(os.path.join(root, module)):
            flags = flags + zephyr
            files = files + [module]
        if files:
            builds.append((name, flags, files))
    return builds


PY_LOADERS = {"import_module", "__import__", "spec_from_file_location", "run_path", "SourceFileLoader"}


def python_imports(tree):
    """The module names and paths a Python file imports, statically or through importlib."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Call):
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if fn in PY_LOADERS:
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        yield arg.value


def python_edges(root, files):
    """Uses between Python files: a module name (its last part) or a path's file name names a file,
    in the importer's directory first, else anywhere if only one file has that name."""
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.splitext(os.path.basename(f))[0], []).append(f)
    edges = {f: set() for f in files}
    for f in files:
        tree = ast.parse(open(os.path.join(root, f)).read())
        for m in python_imports(tree):
            name = os.path.splitext(os.path.basename(m))[0] if "/" in m or m.endswith(".py") else m.split(".")[-1]
            found = by_name.get(name, [])
            near = [g for g in found if os.path.dirname(g) == os.path.dirname(f)]
            target = near or (found if len(found) == 1 else [])
            edges[f] |= set(target) - {f}
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


# a definition's first line: a name and "(" with no "{", "=" or ";" before them (a line that
# opens a struct's body is no definition; one returning a struct is)
DEFINITION = re.compile(r"^[A-Za-z_][^;={]*\b([A-Za-z_]\w*)\s*\(")


def scanned_lengths(root, files):
    """(lines, file:line name) of every function definition, by the scan (no ctags)."""
    result = []
    for f in files:
        lines = open(os.path.join(root, f), errors="replace").read().split("\n")
        start = name = None
        for i, line in enumerate(lines):
            if start is None:
                m = DEFINITION.match(line)
                if m and not line.rstrip().endswith(";") and not line.startswith(("typedef", "#")):
                    start, name = i, m.group(1)
                continue
            if line.startswith(";") or (line.rstrip().endswith(";") and not line.startswith((" ", "\t", "{"))):
                start = None
                continue
            if line.startswith("}"):
                result.append((i - start + 1, f"{f}:{start + 1} {name}"))
                start = None
    return result


def ctags_lengths(root, files):
    """(lines, file:line name) of every function definition, from universal-ctags; None without it."""
    ctags = shutil.which("ctags")
    if not ctags or not files or os.environ.get("LAYOUT_NO_CTAGS"):
        return None
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version:
        return None
    out = subprocess.run([ctags, "--output-format=json", "--fields=+ne", "--kinds-C=f", "--language-force=C",
                          "-f", "-", *files], cwd=root, capture_output=True, text=True, check=True).stdout
    result = []
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and "end" in tag:
            result.append((tag["end"] - tag["line"] + 1, f"{tag['path']}:{tag['line']} {tag['name']}"))
    return result


def function_lengths(root, files):
    found = ctags_lengths(root, files)
    return (found, "ctags") if found is not None else (scanned_lengths(root, files), "scan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-lines", type=int, default=None, help="fail when a function is longer")
    ap.add_argument("--allow-loops", type=int, default=None, help="fail when there are more loops")
    ap.add_argument("--top", type=int, default=10, help="how many of the longest functions to list")
    ap.add_argument("--root", default=ROOT, help="the tree to check (default: this one)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    host, firmware = sources(root)
    builds = firmware_builds(root, firmware)
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        if host:
            found += [("host", c) for c in loops(c_edges("cc", HOST_FLAGS, host, tmp, root))]
        for name, flags, files in builds:
            found += [(f"firmware, {name}", c) for c in
                      loops(c_edges("arm-none-eabi-gcc", FIRMWARE_FLAGS + flags, files, tmp, root))]
    py = [os.path.join(d, f) for d in PY_DIRS if os.path.isdir(os.path.join(root, d))
          for f in sorted(os.listdir(os.path.join(root, d))) if f.endswith(".py")]
    found += [("python", c) for c in loops(python_edges(root, py))]
    # a loop seen in several firmware builds is one loop
    unique = {}
    for where, component in found:
        unique.setdefault(tuple(component), []).append(where)

    fw_files = sorted({f for _, _, files in builds for f in files})
    print(f"files: {len(host)} host C, {len(fw_files)} firmware C in {len(builds)} configurations "
          f"({', '.join(b[0] for b in builds)}), {len(py)} Python")
    if any(b[0] == "Zephyr module" for b in builds) and not os.environ.get("LAYOUT_ZEPHYR_FLAGS"):
        print("  (Zephyr module: zephyr/cmprof_module.c not compiled: LAYOUT_ZEPHYR_FLAGS gives a Zephyr "
              "build's include flags)")
    base, base_faults = base_headers(root)
    if base:
        print(f"base headers (every layer may include them): {' '.join(base)}")
    for fault in base_faults:
        print(f"  base: {fault}")
    print(f"loops: {len(unique)}")
    for component, where in unique.items():
        print("  loop: " + " ".join(component) + "   (" + "; ".join(where) + ")")

    lengths, how = function_lengths(root, host + fw_files)
    measured = [(n, w) for n, w in lengths if not w.startswith(SKIP_FUNCTION_DIRS)]
    measured.sort(reverse=True)
    print(f"longest functions (of {len(measured)}, by {how}):")
    for n, where in measured[: args.top]:
        print(f"  {n:4d} {where}")

    bad = bool(base_faults)
    if args.max_lines is not None:
        over = [m for m in measured if m[0] > args.max_lines]
        print(f"over {args.max_lines} lines: {len(over)}")
        for n, where in over:
            print(f"  over: {n:4d} {where}")
        bad |= bool(over)
    if args.allow_loops is not None and len(unique) > args.allow_loops:
        bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
