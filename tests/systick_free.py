#!/usr/bin/env python3
"""Proof that the firmware library leaves SysTick alone unless it samples with SysTick (issue 7):
every core x timer port x option set is compiled, and the object code is searched for any access
to the SysTick registers (0xE000E010-0xE000E01F) or SHPR3 (0xE000ED20, SysTick's priority).

The search follows constants the way the compiler builds them: literal-pool words, movw/movt
pairs, mov immediates and adds, and the base + offset of every load and store, so an address
made from a shared base (0xE000E000 + 16) is found too. The SysTick port's own builds must be
found touching SysTick on every core: that proves the search sees what it looks for.
Prints one ok/FAIL line per configuration group."""
import hashlib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402
from firmware_builds import OBJECTS, object_key  # noqa: E402

OUT = os.path.join(ROOT, "build", "systick-free")
FILES = ["cmprof_sampler.c", "cmprof_section.c", "cmprof_stream.c", "cmprof_tasks.c", "cmprof_dwt.c"]
CORES = ["cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7"]
PORTS = {
    "none (CMPROF_NO_ISR)": ["-DCMPROF_NO_ISR=1"],
    "STM32 TIM3 (old switch)": ["-DCMPROF_TIMER_TIM3=1"],
    "STM32 TIM2": ["-DCMPROF_PORT=CMPROF_PORT_STM32_TIM", "-DCMPROF_STM32_TIM=2"],
    "STM32 TIM5": ["-DCMPROF_PORT=CMPROF_PORT_STM32_TIM", "-DCMPROF_STM32_TIM=5"],
    "CMSDK timer": ["-DCMPROF_PORT=CMPROF_PORT_CMSDK_TIMER"],
    "CMSDK dual timer": ["-DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER"],
    "nRF TIMER1": ["-DCMPROF_PORT=CMPROF_PORT_NRF_TIMER"],
    "nRF TIMER4": ["-DCMPROF_PORT=CMPROF_PORT_NRF_TIMER", "-DCMPROF_NRF_TIMER=4"],
    "RP2040 alarm 0": ["-DCMPROF_PORT=CMPROF_PORT_RP2040_ALARM"],
    "RP2040 alarm 2": ["-DCMPROF_PORT=CMPROF_PORT_RP2040_ALARM", "-DCMPROF_RP2040_ALARM=2"],
    "user": ["-DCMPROF_PORT=CMPROF_PORT_USER"],
    "user, no ISR": ["-DCMPROF_PORT=CMPROF_PORT_USER", "-DCMPROF_NO_ISR=1"],
}
OPTIONS = [[], ["-DCMPROF_HIST=1"], ["-DCMPROF_STREAM=1"], ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=task"],
           ["-DCMPROF_STREAM=1", "-DCMPROF_HIST=1"], ["-DCMPROF_JITTER=2047"], ["-DCMPROF_HIST=1", "-DCMPROF_JITTER=255"]]


def forbidden(addr):
    addr &= 0xFFFFFFFF
    return 0xE000E010 <= addr <= 0xE000E01F or 0xE000ED20 <= addr <= 0xE000ED23


REG = r"(r\d+|ip|lr|sl|fp)"
# the patterns scan() tries on every line, compiled once (scan reads about 250,000 lines)
LITERAL_WORD = re.compile(r"^\s*([0-9a-f]+):\s+\.word\s+0x([0-9a-f]+)", re.M)
FUNCTION_START = re.compile(r"^[0-9a-f]+ <")
INSN = re.compile(r"^\s*[0-9a-f]+:\s+(\S+)\s+(.*)$")
LDR = re.compile(r"ldr\S*\s")
PC_LITERAL = re.compile(r"\[pc, #\d+\]\s+@ \(([0-9a-f]+)")
DST = re.compile(REG + r",")
IMM = re.compile(REG + r", #(-?\d+)")
TWO = re.compile(REG + r", " + REG + r", #(-?\d+)")
MEM = re.compile(r"\[" + REG + r"(?:, #(-?\d+))?\]")


def scan(obj):
    """Addresses in SysTick's range that the object code loads, stores or builds."""
    text = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", obj], capture_output=True,
                          text=True, check=True).stdout
    literals = {}
    for m in LITERAL_WORD.finditer(text):
        literals[int(m.group(1), 16)] = int(m.group(2), 16)
    hits = set(v for v in literals.values() if forbidden(v))
    regs = {}
    for line in text.splitlines():
        if FUNCTION_START.match(line):  # a new function: nothing is known
            regs = {}
            continue
        m = INSN.match(line)
        if not m:
            continue
        op, args = m.group(1).split(".")[0], m.group(2)
        lit = LDR.search(line) and PC_LITERAL.search(args)
        dst = DST.match(args)
        if lit and dst:
            regs[dst.group(1)] = literals.get(int(lit.group(1), 16))
            continue
        imm = IMM.match(args)
        if op in ("movw", "mov", "movs") and imm:
            regs[imm.group(1)] = int(imm.group(2)) & 0xFFFFFFFF
        elif op in ("mvn", "mvns") and imm:
            regs[imm.group(1)] = ~int(imm.group(2)) & 0xFFFFFFFF
        elif op == "movt" and imm and regs.get(imm.group(1)) is not None:
            regs[imm.group(1)] = (regs[imm.group(1)] & 0xFFFF) | (int(imm.group(2)) << 16)
        elif op in ("add", "adds", "addw", "sub", "subs", "subw"):
            two = TWO.match(args)
            if two and regs.get(two.group(2)) is not None:
                k = int(two.group(3)) * (1 if op.startswith("add") else -1)
                regs[two.group(1)] = (regs[two.group(2)] + k) & 0xFFFFFFFF
            elif imm and regs.get(imm.group(1)) is not None:
                k = int(imm.group(2)) * (1 if op.startswith("add") else -1)
                regs[imm.group(1)] = (regs[imm.group(1)] + k) & 0xFFFFFFFF
            elif dst:
                regs[dst.group(1)] = None
        elif op.startswith(("ldr", "str")):
            mem = MEM.search(args)
            if mem and regs.get(mem.group(1)) is not None:
                addr = regs[mem.group(1)] + int(mem.group(2) or 0)
                if forbidden(addr):
                    hits.add(addr & 0xFFFFFFFF)
            if op.startswith("ldr") and dst:
                regs[dst.group(1)] = None
        elif dst:  # anything else that writes a register makes it unknown
            regs[dst.group(1)] = None
        for v in regs.values():
            if v is not None and forbidden(v):
                hits.add(v)
    return hits


def gcc(cpu, flags, src, *out):
    return ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-mcpu=" + cpu, "-mthumb"] + flags + \
        [os.path.join(ROOT, "firmware", src)] + list(out)


def preprocess(cpu, flags, files):
    """{file: its preprocessed text, or None when that fails} for one core and option set: one
    compiler run for the files (gcc -E writes each file's text in turn, each starting with its own
    name on a line marker, byte for byte what a run on that file alone writes), each file alone
    when that fails."""
    cmd = gcc(cpu, flags, files[0], "-E")
    at = cmd.index(os.path.join(ROOT, "firmware", files[0]))
    whole = subprocess.run(cmd[:at] + [os.path.join(ROOT, "firmware", f) for f in files] + cmd[at + 1:],
                           capture_output=True)
    starts = []
    for f in files:
        mark = b'# 0 "%s"\n# 0 "<built-in>"\n' % os.path.join(ROOT, "firmware", f).encode()
        k = whole.stdout.find(mark, starts[-1] + 1 if starts else 0)
        starts.append(k)
    if whole.returncode == 0 and starts[0] == 0 and all(a < b for a, b in zip(starts, starts[1:])):
        ends = starts[1:] + [len(whole.stdout)]
        return {f: whole.stdout[a:b] for f, a, b in zip(files, starts, ends)}
    texts = {}
    for f in files:
        pre = subprocess.run(gcc(cpu, flags, f, "-E"), capture_output=True)
        texts[f] = pre.stdout if pre.returncode == 0 else None
    return texts


COMMENT_OR_LITERAL = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
MARKER = re.compile(rb'^# \d+ "([^"<][^"]*)"', re.M)
_names_in = {}  # a source file read by the preprocessor -> the identifiers in it, outside comments


def names_read(text):
    """Every identifier outside comments in the files the preprocessor read to make text (each
    named by a line marker), string literals included: all that its run could look up as a macro."""
    names = set()
    for path in set(MARKER.findall(text)):
        if path not in _names_in:
            with open(path.decode(), "rb") as f:
                code = COMMENT_OR_LITERAL.sub(lambda m: m.group(0) if m.group(0)[:1] in b"\"'" else b" ", f.read())
            if b"##" in code:  # a pasted token may spell any name: none is known to be left out
                _names_in[path] = None
            else:
                _names_in[path] = set(IDENTIFIER.findall(code))
        if _names_in[path] is None:
            return None
        names |= _names_in[path]
    return names


_texts = {}  # (core, file) -> [(-D options, preprocessed text, the names its run could look up)]


def defines(flags):
    return dict((f[2:].split("=", 1) + ["1"])[:2] for f in flags)


def preprocessed(cpu, flags):
    """{file: its preprocessed text, or None when that fails} for one core and option set. A file's
    text is the one an earlier option set of the same core gave when the two sets differ only in
    macros whose names appear nowhere in the files that earlier run read (outside comments; no
    token pasting there): the preprocessor never looked those names up, so it took the same path
    and wrote the same text. The rest are preprocessed (one compiler run for the five files became
    one for the sampler's alone in most of the 420 option sets: the timer port acts on it only)."""
    known = {}
    if all(f.startswith("-D") for f in flags):
        d = defines(flags)
        for f in FILES:
            for d0, text, names in _texts.get((cpu, f), ()):
                if names is not None and not {n.encode() for n in set(d) | set(d0) if d.get(n) != d0.get(n)} & names:
                    known[f] = text
                    break
    new = [f for f in FILES if f not in known]
    texts = dict(known, **(preprocess(cpu, flags, new) if new else {}))
    if all(f.startswith("-D") for f in flags):
        for f in new:
            if texts[f] is not None:
                _texts.setdefault((cpu, f), []).append((defines(flags), texts[f], names_read(texts[f])))
    return texts


_scanned = {}
_reused = []


def scan_builds(cpu, flags):
    """{file: the SysTick addresses its object code reaches} for one core and option set. Most
    option sets leave most files unchanged: a file whose preprocessed text (and core) was compiled
    and scanned before has the same object code, so its earlier result stands (about 1,400
    compilations shrink to about 350; the files preprocess() must read are preprocessed in one compiler run). An
    object tests/firmware_builds.py compiled of the same text with the same compiler and flags
    (its object_key) is scanned, not compiled again."""
    os.makedirs(OUT, exist_ok=True)
    hits = {}
    texts = preprocessed(cpu, flags)
    for f in FILES:
        key = (cpu, hashlib.sha256(texts[f]).hexdigest()) if texts[f] is not None else None
        if key not in _scanned or key is None:
            kept = os.path.join(OBJECTS, object_key(gcc(cpu, [], f)[:-1], texts[f])) if key else None
            if kept and os.path.exists(kept):
                _scanned[key] = scan(kept)
                _reused.append(kept)
                hits[f] = _scanned[key]
                continue
            obj = os.path.join(OUT, "x-%s.o" % f[:-2])
            r = subprocess.run(gcc(cpu, flags, f, "-c", "-o", obj), capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(r.stderr.strip().splitlines()[0] if r.stderr.strip() else "build failed")
            _scanned[key] = scan(obj)
        hits[f] = _scanned[key]
    return hits


def main():
    for port, pflags in PORTS.items():
        bad, built = [], 0
        for cpu in CORES:
            for k, opts in enumerate(OPTIONS):
                if "-DCMPROF_NO_ISR=1" in pflags and "CMPROF_PORT" not in " ".join(pflags) and \
                        any("JITTER" in o for o in opts):
                    continue  # no timer to re-arm: refused at build time (checked below)
                try:
                    scanned = scan_builds(cpu, pflags + opts)
                except RuntimeError as e:
                    bad.append("%s %s: %s" % (cpu, " ".join(opts), e))
                    continue
                built += 1
                for f, hits in scanned.items():
                    if hits:
                        bad.append("%s %s x-%s.o: %s" % (cpu, " ".join(opts), f[:-2],
                                                       ", ".join("0x%08x" % h for h in sorted(hits))))
        check("SysTick untouched, %s port: %d builds (M0..M7, every option set)" % (port, built), not bad and built,
              "; ".join(bad[:3]))
    missed = []
    for cpu in CORES:
        for opts in ([], ["-DCMPROF_JITTER=2047"]):
            hits = scan_builds(cpu, opts)["cmprof_sampler.c"]
            if not {0xE000E010, 0xE000ED20} <= hits:
                missed.append("%s %s: found %s" % (cpu, " ".join(opts), sorted(hex(h) for h in hits)))
    check("control: the search finds the SysTick port's CSR and SHPR3 accesses on every core", not missed,
          "; ".join(missed))
    r = subprocess.run(["arm-none-eabi-gcc", "-std=c11", "-Os", "-mcpu=cortex-m3", "-mthumb", "-DCMPROF_NO_ISR=1",
                        "-DCMPROF_JITTER=255", "-c", os.path.join(ROOT, "firmware", "cmprof_sampler.c"),
                        "-o", os.path.join(OUT, "refused.o")], capture_output=True, text=True)
    check("CMPROF_NO_ISR with jitter and no port is refused at build time, with the reason",
          r.returncode != 0 and "CMPROF_JITTER needs a timer port" in r.stderr, r.stderr.strip()[:200])
    print("SysTick proof: %d objects scanned, %d of them tests/firmware_builds.py's" % (len(_scanned), len(_reused)))
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
