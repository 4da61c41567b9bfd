#!/usr/bin/env python3
"""The ELF zoo under AddressSanitizer/UBSan with leak checking: cmprof-top built with sanitizers
(build/asan/cmprof-top) resolves every function of each ELF and reports a capture in every output
format, with DWARF read in the child process (as shipped) and in-process (so the sanitizers see
every libdwarf call we make). No sanitizer report, no crash, a warning where data is missing.
Zoo: DWARF 2/3/4/5, split DWARF, zlib and zstd sections, big-endian, stripped, no DWARF, C++,
Rust-mangled names, truncated and corrupted files. Prints one ok/FAIL line per check."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.path.join(ROOT, "build", "asan", "cmprof-top")
OUT = os.path.join(ROOT, "build", "zoo")
APP = os.path.join(ROOT, "scenarios", "apps")
SAN_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=98")
SAN_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "SUMMARY: ")

C_SRC = r"""
#include <stdint.h>
volatile uint32_t sink;
static inline uint32_t mix(uint32_t a, uint32_t b) { return (a ^ (b << 5)) + (b >> 2); }
__attribute__((noinline)) uint32_t work_a(uint32_t x) { return mix(x, 3u) * 7u; }
__attribute__((noinline)) uint32_t work_b(uint32_t x) { return mix(x, work_a(x)) + 1u; }
%s
void Reset_Handler(void) { for (;;) sink = work_a(sink) + work_b(sink) %s; }
"""
# Rust's legacy and v0 manglings, given to C functions: the demangler must read both
RUST = ('__attribute__((noinline)) uint32_t rust_legacy(uint32_t x) '
        '__asm__("_ZN7mycrate5motor4step17h0123456789abcdefE");\n'
        'uint32_t rust_legacy(uint32_t x) { return x + 11u; }\n'
        '__attribute__((noinline)) uint32_t rust_v0(uint32_t x) __asm__("_RNvNtCs1234_7mycrate5motor4tick");\n'
        'uint32_t rust_v0(uint32_t x) { return x * 13u; }\n', "+ rust_legacy(sink) + rust_v0(sink)")


def build(name, flags, src=None, cxx=False):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".elf")
    if src is None:
        src_path = os.path.join(OUT, name + ".c")
        with open(src_path, "w") as f:
            f.write(C_SRC % ("", ""))
    else:
        src_path = src
    cc = "arm-none-eabi-g++" if cxx else "arm-none-eabi-gcc"
    r = subprocess.run([cc, "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-ffunction-sections", "-Wl,--gc-sections",
                        "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler"] + flags + [src_path, "-lgcc", "-o", path],
                       capture_output=True, text=True, cwd=OUT)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (name, r.stderr[-400:]))
    return path


def function_addrs(elf):
    out = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True).stdout.decode(errors="replace")
    return [int(ln.split()[0], 16) for ln in out.splitlines() if len(ln.split()) == 3 and ln.split()[1] in "Tt"]


def zoo():
    z = []
    for v in (2, 3, 4, 5):
        z.append(("dwarf%d" % v, build("dwarf%d" % v, ["-O2", "-gdwarf-%d" % v])))
    z.append(("split-dwarf", build("split", ["-O2", "-g", "-gsplit-dwarf"])))
    base = build("base", ["-O2", "-g"])
    for kind in ("zlib", "zstd"):
        path = os.path.join(OUT, kind + ".elf")
        subprocess.run(["arm-none-eabi-objcopy", "--compress-debug-sections=" + kind, base, path], check=True)
        z.append((kind, path))
    z.append(("big-endian", build("be", ["-O2", "-g", "-mbig-endian"])))
    stripped = os.path.join(OUT, "stripped.elf")
    subprocess.run(["arm-none-eabi-strip", "-o", stripped, base], check=True)
    z.append(("stripped", stripped))
    nodwarf = os.path.join(OUT, "nodwarf.elf")
    subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", base, nodwarf], check=True)
    z.append(("no DWARF", nodwarf))
    z.append(("C++", build("cpp", ["-O2", "-g", "-fno-exceptions", "-fno-rtti"],
                           src=os.path.join(HERE, "zoo", "cpp_app.cpp"), cxx=True)))
    rust_src = os.path.join(OUT, "rust.c")
    with open(rust_src, "w") as f:
        f.write(C_SRC % RUST)
    z.append(("Rust names", build("rust", ["-O2", "-g"], src=rust_src)))
    data = open(base, "rb").read()
    for cut in (len(data) // 3, 300):
        path = os.path.join(OUT, "cut%d.elf" % cut)
        open(path, "wb").write(data[:cut])
        z.append(("truncated to %d bytes" % cut, path))
    sys.path.insert(0, HERE)
    from test_hardening import section
    for k, name in enumerate((".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_rnglists",
                                   ".debug_aranges")):
        off, size = section(data, name)
        at = off + size // 3
        bad = bytearray(data)
        for i in range(min(64, size - size // 3)):  # a 64-byte smear a third of the way in
            bad[at + i] = (bad[at + i] * 31 + 17 * i + k) & 0xFF
        path = os.path.join(OUT, "smear%d.elf" % k)
        open(path, "wb").write(bytes(bad))
        z.append(("%s corrupted" % name, path))
    crashes = os.path.join(ROOT, "fuzz", "crashes", "elf")
    for f in sorted(os.listdir(crashes)) if os.path.isdir(crashes) else []:
        z.append(("fuzzer find %s" % f, os.path.join(crashes, f)))
    return z


def run(args, in_process, stdin=None):
    env = dict(SAN_ENV)
    if in_process:
        env["CMPROF_DWARF_IN_PROCESS"] = "1"
    try:
        r = subprocess.run([TOOL] + args, capture_output=True, env=env, input=stdin, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "", "timed out"
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def main():
    if not os.path.exists(TOOL):
        check("sanitizer build present", False, "make asan-tool")
        return 1
    for name, elf in zoo():
        addrs = function_addrs(elf) if os.path.getsize(elf) > 1000 else [0x08000000]
        feed = "".join("%x\n%x\n" % (a, a + 2) for a in addrs[:200]).encode()
        # functions' first instructions: a PC a core could report (others say the capture is of
        # another build, which fails a batch run with exit 5)
        pcs = ["%08x" % (a & ~1) for a in addrs[:40]] or ["08000000"]
        cap = os.path.join(OUT, "cap.txt")
        with open(cap, "w") as f:
            f.write("prof raw n=%d\n" % len(pcs))
            for k in range(0, len(pcs), 8):  # a dump line holds up to 16 words; the firmware writes 8
                f.write("p %s\n" % " ".join(pcs[k:k + 8]))
            f.write("end\n")
        # a libdwarf crash in-process is the one thing the child exists for: skip that mode there
        libdwarf_crash = name.startswith("fuzzer find")
        for in_process in ((False,) if libdwarf_crash else (False, True)):
            mode = "in-process DWARF" if in_process else "DWARF in a child"
            bad = []
            for args, stdin in ((["--resolve", "-C", elf], feed), (["--batch", cap, elf], None),
                                (["--batch", "-o", "json", "-C", cap, elf], None),
                                (["--batch", "-o", "folded", "--by", "task", cap, elf], None),
                                (["--batch", "-o", "csv", "--by", "line", "--no-inline", cap, elf], None)):
                code, out, err = run(args, in_process, stdin)
                marks = [m for m in SAN_MARKS if m in err]
                refused = code == 1 and len(err.strip().splitlines()) == 1 and "cmprof-top: " in err
                if code is None or marks or code >= 64 or not (code == 0 or refused):
                    bad.append("%s: exit %s %s %s" % (args[0], code, marks, err.strip()[-200:]))
            check("zoo under ASan/UBSan/LSan, %s: %s" % (mode, name), not bad, "; ".join(bad)[:400])
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
