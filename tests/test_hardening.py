#!/usr/bin/env python3
"""Regression tests for the adversarial run (issue 12): inputs that crashed, hung or silently lied.
Each check drives the real cmprof-top binary; a hang is caught by a generous timeout and fails the
check. Uses the scenario ELFs (run scenarios/scen.py first). Prints one ok/FAIL line per check."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
SCEN = os.path.join(ROOT, "build", "scenarios")
TMP = os.path.join(ROOT, "build", "hardening-test")
HANG_SECONDS = 60  # far beyond any of these inputs' real cost; only a hang reaches it


def run(*args, stdin=None, timeout=HANG_SECONDS, env=None):
    try:
        r = subprocess.run([TOOL] + list(args), input=stdin, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def tmp(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def elf_of(name):
    return os.path.join(SCEN, name, "fw.elf")


def test_big_histogram_buckets():
    """Item 2: 64 KiB buckets used to make a slot per halfword: minutes and gigabytes."""
    lines = ["prof hist base=0x08000000 shift=16 n=256 out=0"]
    for k in range(0, 256, 8):
        lines.append("h " + " ".join("%04x" % (1000 + k + i) for i in range(8)))
    lines.append("end")
    cap = tmp("bighist.txt", "\n".join(lines) + "\n")
    code, out, err = run("--batch", "-o", "json", cap, elf_of("hist_16"))
    ok = code == 0
    js = json.loads(out) if ok else {}
    expect = sum(1000 + k for k in range(256))
    check("64 KiB histogram buckets: finishes, every sample counted",
          ok and abs(js["total"] - expect) < 1e-6 and len(js["rows"]) < 1000,
          "exit %s, %s" % (code, err.strip()[:200]))


def section(data, name):
    """(offset, size) of a section of a little-endian ELF32, by name."""
    shoff = int.from_bytes(data[32:36], "little")
    shentsize, shnum, shstrndx = (int.from_bytes(data[i:i + 2], "little") for i in (46, 48, 50))
    hdr = [data[shoff + k * shentsize: shoff + (k + 1) * shentsize] for k in range(shnum)]
    field = lambda h, i: int.from_bytes(h[i:i + 4], "little")  # noqa: E731
    strtab = field(hdr[shstrndx], 16)
    for h in hdr:
        n = field(h, 0)
        if data[strtab + n: data.index(b"\0", strtab + n)].decode() == name:
            return field(h, 16), field(h, 20)
    raise KeyError(name)


def test_bad_elfs():
    elf = elf_of("loops_inline_o2")
    data = open(elf, "rb").read()
    # Item 1: 16 bytes of .debug_rnglists that make libdwarf 20210528 free a block twice and abort
    off, _ = section(data, ".debug_rnglists")
    bad = bytearray(data)
    bad[off + 0x44: off + 0x54] = bytes.fromhex("20823cfde6f1c26b30f90ec7dd01e488")
    path = tmp("rnglists.elf", bytes(bad))
    code, out, err = run("--resolve", path, "0x08000200")
    check("corrupted .debug_rnglists: --resolve survives libdwarf's crash, names from the symbol table",
          code == 0 and out.splitlines()[1:2] == ["SysTick_Handler"] and "libdwarf crashed" in err,
          "exit %s, %r" % (code, err.strip()))
    cap = tmp("pcs.txt", "prof raw n=3\np 08000200 08000200 08000202\nend\n")
    code, out, err = run("--batch", cap, path)
    check("corrupted .debug_rnglists: --batch survives, warns once",
          code == 0 and "SysTick_Handler" in out and err.count("libdwarf crashed") == 1, "exit %s, %r" % (code, err))
    # Item 4: a line table libdwarf refuses is reported, not silently dropped
    off, _ = section(data, ".debug_line")
    bad = bytearray(data)
    bad[off + 4: off + 6] = b"\x09\x00"  # version 9
    code, out, err = run("--resolve", tmp("line.elf", bytes(bad)), "0x08000200")
    check("damaged line table: warning names the unit and libdwarf's error",
          code == 0 and "damaged DWARF" in err and "line table of unit 0" in err, err.strip())
    # Item 4: zstd-compressed debug sections
    z = os.path.join(TMP, "zstd.elf")
    r = subprocess.run(["arm-none-eabi-objcopy", "--compress-debug-sections=zstd", elf, z], capture_output=True)
    code, out, err = run("--resolve", z, "0x08000200")
    check("zstd-compressed DWARF: a warning naming zstd, functions still named",
          r.returncode == 0 and code == 0 and "zstd" in err and out.splitlines()[1:2] == ["SysTick_Handler"],
          "objcopy %d, exit %s, %r" % (r.returncode, code, err.strip()))
    zl = os.path.join(TMP, "zlib.elf")
    subprocess.run(["arm-none-eabi-objcopy", "--compress-debug-sections=zlib", elf, zl], check=True)
    code, out, err = run("--resolve", zl, "0x08000200")
    check("zlib-compressed DWARF: read, no warning", code == 0 and err == "" and ".c:" in out, err)
    # Item 7: truncated ELFs are refused as addr2line refuses them
    for cut in (len(data) // 2, 200, 60):
        code, out, err = run("--resolve", tmp("cut.elf", data[:cut]), "0x08000200")
        check("ELF truncated to %d bytes: refused with one line" % cut,
              code not in (0, None) and code < 128 and len(err.strip().splitlines()) == 1 and
              ("truncated" in err or "not an ELF" in err), "exit %s, %r" % (code, err.strip()))
    # Item 17: a directory and a fifo as the ELF
    code, out, err = run("--resolve", TMP, "0x08000200")
    check("a directory as the ELF: 'is a directory'", code == 1 and "is a directory" in err, err.strip())
    fifo = os.path.join(TMP, "elf.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    code, out, err = run("--resolve", fifo, "0x08000200", timeout=20)
    check("a fifo as the ELF: refused at once, no blocking", code == 1 and "not a regular file" in err,
          "exit %s, %r" % (code, err.strip()))


def main():
    os.makedirs(TMP, exist_ok=True)
    if not os.path.exists(elf_of("hist_16")):
        check("scenario ELFs present", False, "run scenarios/scen.py run first")
        return 1
    test_big_histogram_buckets()
    test_bad_elfs()
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
