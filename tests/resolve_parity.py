#!/usr/bin/env python3
"""--resolve parity with binutils: for every instruction address objdump lists in an ELF,
cmprof-top --resolve and arm-none-eabi-addr2line -a -f -i must print the same frames. Function
names, line numbers and discriminators must match exactly; file paths may differ only in their
directory prefix. ELFs: every scenario's, plus the scenario apps built at -O0/-Os/-O2/-O3 with
DWARF 4 and 5, the Cortex-A demo in ARM state (A32), and one function with thousands of inlined
calls (tests/zoo/many_inlines.c). Prints one ok/FAIL line per ELF.

Each ELF is also resolved with libdwarf reading every unit (CMPROF_DWARF_LIBDWARF=1): the fast
reader, which reads the section bytes itself, must print exactly the same text, paths included.

Every ELF is resolved once more after every 4th address was asked first (in a batch of its own):
the answers must not change (a batch also answers the halfwords between its close addresses).

Every halfword of each ELF's code is also looked up in batches and one at a time, by
build/lookup-check (tests/lookup_check.c) and its ASan/UBSan build: a batch resumes each search from
the address before and reuses an answer while it holds, and must give what a lone lookup gives.

Addresses inside a function symbol's extent must all match. Alignment padding after a function
(zero fill between 16-byte-aligned functions, a nop pad) lies outside every function, never executes
and is never sampled; differences there are counted and printed, not failed.

One exception: addr2line's answer may depend on the addresses asked before it (it keeps units it
read for earlier addresses, and a unit's DWARF can run past the addresses its .debug_aranges
state: newlib's assembler memcpy ends a byte into memset, so memset's first instruction reads as
"memcpy ??:?" after any memcpy address). Where ours differs from addr2line's answer in the list,
it must equal addr2line's answer for that address asked alone (tests/resolve_order.py shows ours
does not depend on order); such addresses are counted and printed."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import scen  # noqa: E402

TOOL = os.path.join(ROOT, "build", "cmprof-top")
LOOKUP_CHECKS = [os.path.join(ROOT, "build", "lookup-check"), os.path.join(ROOT, "build", "asan", "lookup-check")]
OUT = os.path.join(ROOT, "build", "parity")


def variant_elfs():
    """Scenario apps at every optimisation level and DWARF version (built, not run)."""
    elfs = []
    for app in ("loops", "lockstep", "irqoff", "tasks", "sections"):
        for opt in ("-O0", "-Os", "-O2", "-O3"):
            for dwarf in ("-gdwarf-4", "-gdwarf-5"):
                name = "%s%s%s" % (app, opt, dwarf[2:])
                core = "m3" if app == "tasks" else "m4"
                s = scen.scenario(name, app, core=core, opt=opt, cflags=[dwarf], CMPROF_JITTER=2047,
                                  HOT_INLINE=1 if opt != "-O0" else 0)
                s["name"] = os.path.join("..", "parity", name)
                elfs.append(scen.build(s))
    return elfs


def addresses(elf):
    out = subprocess.run(["arm-none-eabi-objdump", "-d", elf], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"^\s*([0-9a-f]+):\t", out, re.M)]  # no indent from 0x10000000 up


FRAME_WHERE = re.compile(r"^(.*?):(\d+|\?)( \(discriminator \d+\))?$")


def normalise(text):
    """Frames with file paths cut to their last component (each distinct line cut once: the same
    names and places come back thousands of times in an ELF's answers)."""
    cut = {}

    def one(ln):
        m = FRAME_WHERE.match(ln)
        if m:
            return "%s:%s%s" % (os.path.basename(m.group(1)), m.group(2), m.group(3) or "")
        return ln
    return [ln if ln.startswith("0x") else cut[ln] if ln in cut else cut.setdefault(ln, one(ln))
            for ln in text.splitlines()]


def build_zoo(src, name, compiler, opt, dwarf, extra=(), libs=()):
    """A tests/zoo source linked alone at 0x08000000 for a Cortex-M4, as build/parity/NAME.elf."""
    out = os.path.join(OUT, name + ".elf")
    os.makedirs(OUT, exist_ok=True)
    subprocess.run([compiler, "-mcpu=cortex-m4", "-mthumb", opt, dwarf, "-nostdlib", *extra, "-ffunction-sections",
                    "-Wl,--gc-sections", "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler", "-Wall", "-Wextra",
                    "-Werror", os.path.join(HERE, "zoo", src), *libs, "-o", out], check=True)
    return out


def zoo_elfs():
    """C++ from tests/zoo at several optimisation levels and DWARF versions: linkage names,
    overloads, templates, clones, inlined members."""
    return [build_zoo("cpp_app.cpp", "cpp%s%s" % (opt, dwarf[2:]), "arm-none-eabi-g++", opt, dwarf,
                      extra=("-fno-exceptions", "-fno-rtti"), libs=("-lgcc",))
            for opt in ("-O0", "-Os", "-O2", "-O3") for dwarf in ("-gdwarf-4", "-gdwarf-5")] + \
        [build_zoo("clones.c", "clones-O2-nodwarf", "arm-none-eabi-gcc", "-O2", "-g0", extra=("-std=c11",))]
    # (no DWARF, only the symbol table's file symbols: addr2line names a local function's file by them)


def many_inlines_elfs():
    """One function with about 10,300 inline ranges, at DWARF 4 and 5: the search for the deepest
    inline range around an address, where ranges overlap by the thousand."""
    return [build_zoo("many_inlines.c", "many_inlines-O2%s" % dwarf[2:], "arm-none-eabi-gcc", "-O2", dwarf,
                      extra=("-std=gnu11",))
            for dwarf in ("-gdwarf-4", "-gdwarf-5")]


def check(elf, demangle=False):
    addrs = addresses(elf)
    feed = "\n".join(addrs) + "\n"
    c = ["-C"] if demangle else []
    ours = subprocess.run([TOOL, "--resolve"] + c + [elf], input=feed, capture_output=True, text=True)
    theirs = subprocess.run(["arm-none-eabi-addr2line", "-a", "-f", "-i"] + c + ["-e", elf], input=feed,
                            capture_output=True, text=True)
    if ours.returncode != 0:
        return len(addrs), None, [], [], ours.stderr.strip()
    reference = subprocess.run([TOOL, "--resolve"] + c + [elf], input=feed, capture_output=True, text=True,
                               env=dict(os.environ, CMPROF_DWARF_LIBDWARF="1"))
    if reference.stdout != ours.stdout or reference.returncode != 0:
        diff = next((i for i, (x, y) in enumerate(zip(ours.stdout.splitlines(), reference.stdout.splitlines()))
                     if x != y), None)
        return len(addrs), None, [], [], "the fast DWARF reader and libdwarf differ%s" % (
            "" if diff is None else " at output line %d: %r vs %r" % (
                diff + 1, ours.stdout.splitlines()[diff], reference.stdout.splitlines()[diff]))
    # an answer must not depend on the batches before it: a batch also answers the halfwords between
    # its close addresses, so every 4th address first (over 8 KB: a batch of its own), then all
    lead = ""
    while len(lead) <= 8192:
        lead += "\n".join(addrs[::4]) + "\n"
    alone = subprocess.run([TOOL, "--resolve"] + c + [elf], input=lead, capture_output=True, text=True)
    after = subprocess.run([TOOL, "--resolve"] + c + [elf], input=lead + feed, capture_output=True, text=True)
    if after.stdout != alone.stdout + ours.stdout:
        got = after.stdout[len(alone.stdout):].splitlines()
        diff = next((i for i, (x, y) in enumerate(zip(got, ours.stdout.splitlines())) if x != y), None)
        return len(addrs), None, [], [], "the answers change after other addresses were asked%s" % (
            "" if diff is None else " at output line %d: %r vs %r" % (diff + 1, got[diff], ours.stdout.splitlines()[diff]))
    a, b = normalise(ours.stdout), normalise(theirs.stdout)
    # compare address by address
    def split(lines):
        out, cur = {}, None
        for ln in lines:
            if ln.startswith("0x"):
                cur = ln
                out[cur] = []
            else:
                out[cur].append(ln)
        return out
    sa, sb = split(a), split(b)
    bad = [k for k in sb if sa.get(k) != sb[k]]
    funcs = FUNCS.get(elf) or scen.functions(elf) if bad else []
    def in_function(addr):
        return any(lo <= addr < lo + size for lo, size, _ in funcs)
    fill = [k for k in bad if not in_function(int(k, 16))]
    bad = [k for k in bad if k not in fill]
    order = [k for k in bad if len(bad) <= ORDER_EXCEPTIONS_MAX and sa.get(k) == addr2line_alone(elf, k, c)]
    bad = [k for k in bad if k not in order]
    return len(addrs), bad, fill, order, (sa.get(bad[0]), sb[bad[0]], bad[0]) if bad else None


FUNCS = {}  # ELF -> its function symbols as scen.functions gives them, read for all ELFs at once


def functions_of(elfs):
    """scen.functions of every ELF from one nm (nm loads binutils' LTO plugin at each start, about 20
    ms: a run for each ELF cost more than the rest of its check)."""
    out = subprocess.run(["arm-none-eabi-nm", "-n", "-S", "--defined-only"] + elfs, capture_output=True, text=True,
                         check=True).stdout
    funcs, cur, seen, names = {}, None, set(), set(elfs)
    for line in out.splitlines():
        if line.endswith(":") and line[:-1] in names:
            cur, seen = funcs.setdefault(line[:-1], []), set()
            continue
        f = line.split()
        if cur is not None and len(f) == 4 and f[2] in "TtW":
            a = int(f[0], 16) & ~1
            if a not in seen:
                seen.add(a)
                cur.append((a, int(f[1], 16), f[3]))
    return funcs


ORDER_EXCEPTIONS_MAX = 16  # more differences than this are a bug of ours, not addr2line's order


def addr2line_alone(elf, addr, c):
    """addr2line's frames for one address asked alone (paths cut as normalise cuts them)."""
    p = subprocess.run(["arm-none-eabi-addr2line", "-a", "-f", "-i"] + c + ["-e", elf, addr], capture_output=True,
                       text=True)
    return normalise(p.stdout)[1:]


def main():
    # every scenario's ELF (scen.py run built them), the demo's, and the variants
    elfs = [os.path.join(scen.BUILD, name, "fw.elf") for name in sorted(scen.SCENARIOS)]
    elfs += [scen.build(scen.DEMO)] + variant_elfs() + many_inlines_elfs()
    # Cortex-A firmware in ARM state (A32): the live demo at three optimisation levels and DWARF 4/5
    for cpu, opt, dwarf in (("cortex-a15", "-Os", "-gdwarf-5"), ("cortex-a7", "-O2", "-gdwarf-4"),
                            ("cortex-a15", "-O0", "-gdwarf-5")):
        elfs.append(scen.build_virt(os.path.join("..", "parity", "demo_a_%s%s%s" % (cpu[7:], opt, dwarf[2:])),
                                    cpu=cpu, opt=opt, cflags=[dwarf], **scen.DEMO_A))
    runs = [(elf, False) for elf in elfs] + [(elf, d) for elf in zoo_elfs() for d in (False, True)]
    FUNCS.update(functions_of(sorted(set(elf for elf, _ in runs))))
    total = mismatched = fill_total = order_total = 0
    failed = 0
    for elf, demangle in runs:
        n, bad, fill, order, example = check(elf, demangle)
        fill_total += len(fill)
        order_total += len(order)
        total += n
        name = os.path.relpath(elf, os.path.join(ROOT, "build")) + (" -C" if demangle else "")
        if bad is None:
            print("FAIL resolve parity %s: cmprof-top failed: %s" % (name, example))
            failed += 1
        elif bad:
            mismatched += len(bad)
            failed += 1
            print("FAIL resolve parity %s: %d of %d addresses differ, e.g. %s: ours %s, addr2line %s"
                  % (name, len(bad), n, example[2], example[0], example[1]))
        else:
            print("ok   resolve parity %s: %d addresses, fast reader = libdwarf%s%s"
                  % (name, n, ", %d fill halfwords differ" % len(fill) if fill else "",
                     ", as addr2line alone at %s" % " ".join(order) if order else ""))
    print("resolve parity: %d runs, %d addresses, %d differ inside functions, %d fill halfwords differ, "
          "%d as addr2line alone" % (len(runs), total, mismatched, fill_total, order_total))
    # batches against lone lookups, on every ELF (each once: -C changes no lookup)
    checked = sorted(set(elf for elf, _ in runs))
    for exe in LOOKUP_CHECKS:
        kind = os.path.relpath(exe, os.path.join(ROOT, "build"))
        if not os.path.exists(exe):
            print("FAIL %s: not built (make unit)" % kind)
            failed += 1
            continue
        p = subprocess.run([exe] + checked, capture_output=True, text=True)
        lines = p.stdout.splitlines()
        oks = sum(1 for ln in lines if ln.startswith("ok "))
        for ln in lines:
            if ln.startswith("FAIL"):
                print(ln)
        # a lone lookup (a first report's samples) reads only its function's part of a unit of many
        # functions (the C++ zoo's main unit: 8 and more, one section each)
        part = [ln.split()[3].rstrip(":") for ln in lines
                if ln.startswith("ok ") and ln.endswith("a function at a time")]
        whole = [elf for elf in checked if os.path.basename(elf).startswith("cpp-") and elf not in part]
        if p.returncode != 0 or oks != len(checked):
            print("FAIL %s: %d of %d ELFs as lone lookups (status %d) %s" % (kind, oks, len(checked), p.returncode,
                                                                           p.stderr.strip()[-300:]))
            failed += 1
        elif whole:
            print("FAIL %s: a lone lookup read its whole unit in %s" % (kind, " ".join(whole)))
            failed += 1
        else:
            print("ok   %s: every halfword of %d ELFs, batches as lone lookups; %d ELFs' units read a function at "
                  "a time" % (kind, len(checked), len(part)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
