#!/usr/bin/env python3
"""make bench's harness, without its long rounds: every global name bench/run_bench.py's code
reads is defined (a name lost in a merge ended the run before its first figure), each C bench
links against the tool's library as make bench links it (lists of sources went stale and did not
link on a fresh clone), orbtop's time is taken to the end of its capture although it never ends at
a file's end (bench/orbtop_time.py, against a stand-in that reads like orbtop), and the closing
acceptance table says met only when the goal is met and the outputs were identical.
Needs make tool (build/cmprof-top and its library)."""
import dis
import os
import subprocess
import sys
import tempfile
import textwrap
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += 0 if cond else 1


def global_reads(code):
    """Names a code object and the ones nested in it load as globals."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= global_reads(c)
    return names


def module_attr_reads(code, module):
    """Attributes a code object and the ones nested in it read from the global `module` (module.X)."""
    ins, names = list(dis.get_instructions(code)), set()
    for a, b in zip(ins, ins[1:]):
        if a.opname == "LOAD_GLOBAL" and a.argval == module and b.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            names.add(b.argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= module_attr_reads(c, module)
    return names


def undefined_reads(rel, module):
    """The global names rel's code reads that its module does not define (nor Python)."""
    import builtins
    code = compile(open(os.path.join(ROOT, rel)).read(), rel, "exec")
    return code, sorted(n for n in global_reads(code) - set(vars(module)) if not hasattr(builtins, n))


def names_defined():
    import run_bench
    _, missing = undefined_reads(os.path.join("bench", "run_bench.py"), run_bench)
    check(not missing, "bench/run_bench.py: every global name its code reads is defined%s"
          % ("" if not missing else " (undefined: %s)" % ", ".join(missing)))


def field_names_defined():
    """bench/field/measure.py runs by hand (the demo's sources are not in the repository): a name it
    reads, or one of scen's and scen_check's it reuses, renamed would break it until its next run."""
    sys.path.insert(0, os.path.join(ROOT, "bench", "field"))
    import measure
    code, missing = undefined_reads(os.path.join("bench", "field", "measure.py"), measure)
    for module in ("scen", "scen_check"):
        missing += ["%s.%s" % (module, n) for n in sorted(module_attr_reads(code, module))
                    if not hasattr(getattr(measure, module), n)]
    check(not missing, "bench/field/measure.py: every global name it reads is defined, every scen and "
          "scen_check function it reuses exists%s" % ("" if not missing else " (undefined: %s)" % ", ".join(missing)))


def benches_link():
    import run_bench
    for source, flags in (("bench_decode.c", ()), ("bench_writers.c", ()), ("bench_lookup.c", ("-D_GNU_SOURCE",)),
                          ("bench_count.c", ("-D_GNU_SOURCE",))):
        try:
            exe = run_bench.link_with_tool(source, *flags)
            ok = os.access(exe, os.X_OK)
        except (subprocess.CalledProcessError, AttributeError) as e:
            ok = False
            print("     %s" % e)
        check(ok, "make bench links bench/%s with the tool's library" % source)


def print_floor_runs():
    """bench/print_floor.c (built by hand, docs/performance.md) compiles as its header says and
    tells the distinct answer texts of an output apart."""
    with tempfile.TemporaryDirectory() as tmp:
        exe, out = os.path.join(tmp, "print_floor"), os.path.join(tmp, "out.txt")
        subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", os.path.join(ROOT, "bench", "print_floor.c"),
                        os.path.join(ROOT, "bench", "spread.c"), "-o", exe], check=True)
        with open(out, "w") as f:
            f.write("0x08000010\nf\na.c:3\n0x08000012\nf\na.c:3\n0x08000020\ng\nb.c:9\nf\na.c:4\n")
        got = subprocess.run([exe, out], capture_output=True, text=True, check=True).stdout.splitlines()
    check(got and got[0].startswith("3 answers, 2 distinct texts"), "bench/print_floor.c builds and counts an "
          "output's distinct answers (%s)" % (got[0] if got else "no output"))


# reads its file (argv[-1] after -f) in 64 KB chunks, slowly, then polls it for more forever: orbtop's way
FAKE_ORBTOP = textwrap.dedent("""\
    import sys, time
    path = sys.argv[sys.argv.index("-f") + 1]
    time.sleep(0.2)
    with open(path, "rb") as f:
        while f.read(65536):
            time.sleep(0.05)
        junk = [bytearray(48 << 20)]  # a peak after the last byte, as orbtop's report
        while True:
            f.read(65536)
            time.sleep(0.01)
    """)


def orbtop_end():
    import orbtop_time
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "orbtop")
        open(fake, "w").write("#!%s\n%s" % (sys.executable, FAKE_ORBTOP))
        os.chmod(fake, 0o755)
        cap = os.path.join(tmp, "cap.itm")
        open(cap, "wb").write(b"\x17" * (20 * 65536))
        t = orbtop_time.orbtop_seconds(fake, cap, "/dev/null")
        # 0.2 s + 20 chunks at 0.05 s at least; it would spin for ever if not stopped
        check(1.2 <= t < 10, "orbtop_time: a reader that never ends is timed to its last chunk (%.2f s, >= 1.2)" % t)
        peak = orbtop_time.orbtop_peak(fake, cap, "/dev/null")
        check(peak > 48 * 1024, "orbtop_time: its peak is read after the end, what it allocated there included (%d KB)"
              % peak)
        short = os.path.join(tmp, "short")
        open(short, "w").write("#!/bin/sh\nexit 3\n")
        os.chmod(short, 0o755)
        try:
            orbtop_time.orbtop_seconds(short, cap, "/dev/null")
            check(False, "orbtop_time: a reader that ends before the capture's end is an error")
        except RuntimeError as e:
            check("ended" in str(e), "orbtop_time: a reader that ends before the capture's end is an error (%s)" % e)


def acceptance():
    import run_bench
    run_bench.accepted.clear()
    run_bench.accept("a", "p", "o", [2.0, 3.5, 4.0], 3)
    run_bench.accept("b", "p", "o", [2.0, 2.5, 4.0], 3)
    run_bench.accept("c", "p", "o", [5.0, 6.0, 7.0], 3, valid=False)
    run_bench.accept("d", "p", "o", [0.9, 1.1, 1.2], 1, at_least=False)
    got = [row[-1] for row in run_bench.accepted]
    check(got == ["met", "NOT met", "NOT met", "NOT met"],
          "acceptance rows: met by the median only, never when the outputs differ (%s)" % got)
    check(run_bench.accepted[0][3].startswith("3.50x (IQR"), "acceptance rows give the median and its IQR (%s)"
          % run_bench.accepted[0][3])


if __name__ == "__main__":
    for test in (names_defined, field_names_defined, benches_link, print_floor_runs, orbtop_end, acceptance):
        try:
            test()
        except Exception as e:  # one check's crash is its failure, the others still run
            check(False, "%s: %s: %s" % (test.__name__, type(e).__name__, e))
    sys.exit(1 if failures else 0)
