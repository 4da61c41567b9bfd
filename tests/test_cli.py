#!/usr/bin/env python3
"""cmprof-top end to end, without a terminal: batch outputs agree with each other and across
stream formats, and every kind of bad input gets a one-line error and a non-zero exit, never a
crash. Uses the scenario captures (run scen.py first). Prints one ok/FAIL line per check."""
import csv
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
SCEN = os.path.join(ROOT, "build", "scenarios")
TMP = harness.scratch("cli-test")  # (-asan under the ASan tool: the two runs can go side by side)



def run(*args, stdin=None):
    r = subprocess.run([TOOL] + list(args), input=stdin, capture_output=True)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def scen_path(name, f):
    return os.path.join(SCEN, name, f)


def pcs_of(uart):
    pcs = []
    for line in open(uart):
        if line.startswith("p "):
            pcs += [int(x, 16) for x in line.split()[1:]]
    return pcs


def itm_stream(pcs):
    """A realistic SWO capture: PC packets mixed with other packets, syncs and an overflow."""
    out = bytearray(b"\x00\x00\x00\x00\x00\x80")
    for k, pc in enumerate(pcs):
        out += bytes([0x17]) + pc.to_bytes(4, "little")
        if k % 7 == 3:
            out += bytes([0x01, 0x41 + k % 26])
        if k % 100 == 30:
            out += bytes([0xC0, 0x85, 0x12])
        if k % 64 == 20:
            out += bytes([0x15, 0x00])
        if k % 1000 == 999:
            out += b"\x00\x00\x00\x00\x00\x80"
    return bytes(out)


def cobs(data):
    """COBS, from its description: each run of non-zero bytes (at most 254) as its length + 1, then
    the run; a zero ends a run shorter than 254."""
    out, run = bytearray(), bytearray()
    for b in data:
        if b == 0:
            out += bytes([len(run) + 1]) + run
            run = bytearray()
            continue
        run.append(b)
        if len(run) == 254:
            out += b"\xff" + run
            run = bytearray()
    return bytes(out + bytes([len(run) + 1]) + run)


def orbflow_frames(data, tag=1, size=100):
    """orbuculum's orbflow: [tag][payload][sum] with a zero sum, COBS-encoded, zero-delimited; a
    frame of another stream now and then."""
    out = bytearray(b"\0")
    for k, i in enumerate(range(0, len(data), size)):
        for t, payload in ((tag, data[i:i + size]),) + (((2, b"\x01\x02"),) if k % 7 == 3 else ()):
            fr = bytes([t]) + payload
            out += cobs(fr + bytes([-sum(fr) & 0xFF])) + b"\0"
    return bytes(out)


def tpiu_frames(data, source_id=1, id_once=False):
    """Wrap bytes in TPIU frames: ID byte, then data; even data bytes carry bit 0 in byte 15. id_once:
    the ID in the first frame only, as a formatter with one source (ITM alone) writes it."""
    out = bytearray(b"\xff\xff\xff\x7f")
    i = 0
    while i < len(data):
        frame = bytearray(16)
        aux = 0
        pos = 0 if id_once and i else 1
        if pos:
            frame[0] = (source_id << 1) | 1  # ID change, aux bit 0: the new ID owns byte 1
        chunk = data[i:i + 15 - pos]
        i += 15 - pos
        # a short last frame is padded with ID 0 (null) data
        for b in chunk:
            if pos % 2 == 1:
                frame[pos] = b
            else:
                frame[pos] = b & 0xFE
                aux |= (b & 1) << (pos // 2)
            pos += 1
        if pos < 15:  # pad: switch to the null source
            if pos % 2 == 1:
                frame[pos] = 0
                pos += 1
            frame[pos] = 0x01  # ID 0
            pos += 1
            while pos < 15:
                frame[pos] = 0
                pos += 1
        frame[15] = aux
        out += frame
    return bytes(out)


def rows_of(source, elf, *extra):
    code, out, err = run("--batch", "-o", "json", *extra, source, elf)
    return code, (json.loads(out) if out else None), err


def first_line(text):
    return text.splitlines()[0] if text.strip() else ""


def loud_wrong_elf():
    """A capture read against another program's ELF, or against a build whose build-id differs, fails
    the batch run (exit 5), says why on stderr, puts its '!' lines first and says wrong_elf in JSON."""
    uart, other = scen_path("m3_loops", "uart.txt"), scen_path("frtos", "fw.elf")
    code, out, err = run("--batch", uart, other)
    check("wrong ELF (another program): exit 5, one stderr line naming the ELF and the cause, '!' first",
          code == 5 and "wrong ELF" in err and other in err and len(err.strip().splitlines()) == 1 and
          first_line(out).startswith("! wrong ELF"),
          "exit %d, stderr %r, first line %r" % (code, err.strip()[:160], first_line(out)))
    port = harness.tcp_server([open(uart, "rb").read()], 0)
    code, out, err = run("--batch", "tcp:127.0.0.1:%d" % port, other)
    check("wrong ELF over tcp: (the live loop's batch): exit 5, the same stderr line, '!' first",
          code == 5 and "wrong ELF" in err and first_line(out).startswith("! wrong ELF"),
          "exit %d, stderr %r, first line %r" % (code, err.strip()[:160], first_line(out)))
    code, j, _ = rows_of(uart, other)
    check("wrong ELF (another program): JSON wrong_elf true, cause outside_code, code_check agrees",
          code == 5 and j and j.get("wrong_elf") is True and j.get("wrong_elf_causes") == ["outside_code"] and
          j.get("outside_code_percent", 0) > 50 and (j.get("code_check") or {}).get("wrong_elf", True) is True,
          "exit %d, %s" % (code, j and {k: j.get(k) for k in ("wrong_elf", "wrong_elf_causes", "code_check")}))
    code, j, err = rows_of(uart, scen_path("m3_loops", "fw.elf"))
    check("the right ELF: exit 0, wrong_elf false, no cause", code == 0 and j and j.get("wrong_elf") is False and
          j.get("wrong_elf_causes") == [] and j.get("quiet", 0) is None, "exit %d %s" % (code, err.strip()[:120]))
    # the same program and capture, the announced build-id changed: the build-id check alone
    cap, elf = scen_path("stream_tagged", "uart.txt"), scen_path("stream_tagged", "fw.elf")
    lines = []
    for ln in open(cap, encoding="latin-1").read().split("\n"):
        m = re.match(r"(@cmprof .* bid=)([0-9a-f]+)!..$", ln)
        lines.append(harness.stream_line(m.group(1) + "%040x" % 0xbadbad).rstrip("\n") if m else ln)
    other_id = os.path.join(TMP, "other build-id.txt")
    open(other_id, "w", encoding="latin-1").write("\n".join(lines))
    code, out, err = run("--batch", other_id, elf)
    check("build-id mismatch: exit 5, stderr names it, '!' first", code == 5 and "build-id" in err and
          first_line(out).startswith("! wrong ELF: the firmware announces a build-id"),
          "exit %d, %r, %r" % (code, err.strip()[:160], first_line(out)))
    code, j, _ = rows_of(other_id, elf)
    check("build-id mismatch: JSON wrong_elf true, cause build_id", code == 5 and j and j.get("wrong_elf") is True and
          j.get("wrong_elf_causes") == ["build_id"], "exit %d %s" % (code, j and j.get("wrong_elf_causes")))
    code, j, _ = rows_of(cap, elf)
    check("the same capture with its own build-id: exit 0", code == 0 and j and j.get("wrong_elf") is False,
          "exit %d" % code)


def loud_quiet():
    """A firmware that announced a sampler and sent no sample (with section timings: the R5 sampling on
    its PMU under QEMU), or stream samples with no announce: said, exit 2."""
    elf = scen_path("stream_tagged", "fw.elf")
    for arch, timer, want in (("ARMv7-R", "PMU-cycle-counter", "QEMU (vexpress-a15) wires no interrupt to the R5"),
                              ("ARMv7-A", "PMU-cycle-counter", "PMU's overflow interrupt routed"),
                              ("ARMv7E-M", "SysTick", "is cmprof_start() called"),
                              # an MPS3 AN547 on Zephyr's own-timer default with no line: a timer that never fires
                              ("ARMv8-M.main", "user", "a timer of your own (CMPROF_PORT_USER) that never fires")):
        text = "boot\n" + harness.stream_line("@cmprof v=3 clk=100000000 tclk=100000000 period=1000 jitter=0 "
                                               "arch=%s timer=%s base=2e000000" % (arch, timer))
        text += harness.stream_line("@secname 0 control")
        text += harness.stream_line("@sect 0 n=10 cur=100 min=90 max=120 sum=1000")
        path = os.path.join(TMP, "announce and sections %s.txt" % arch)
        open(path, "w").write(text)
        code, out, err = run("--batch", path, elf)
        check("announced %s %s sampler, section timings, no samples: exit 2, the cause on stderr and first in "
              "the report" % (arch, timer), code == 2 and want in err and "sent no sample" in err and
              first_line(out).startswith("! no samples:") and "control" in out,
              "exit %d, %r, %r" % (code, err.strip()[:200], first_line(out)))
        code, j, _ = rows_of(path, elf)
        check("... JSON quiet: no_samples (%s)" % arch, code == 2 and j and (j.get("quiet") or {}).get("cause") ==
              "no_samples" and want in j["quiet"]["text"], "exit %d %s" % (code, j and j.get("quiet")))
    # stream samples and no announce (a recipe that never calls cmprof_stream_announce)
    cap = scen_path("stream_tagged", "uart.txt")
    body = [ln for ln in open(cap, encoding="latin-1").read().split("\n") if not ln.startswith("@cmprof")]
    path = os.path.join(TMP, "no announce.txt")
    open(path, "w", encoding="latin-1").write("\n".join(body))
    code, out, err = run("--batch", path, elf)
    check("stream samples, no announce: exit 2, says the announce is missing", code == 2 and
          "cmprof_stream_announce()" in err and len(err.strip().splitlines()) == 1,
          "exit %d, %r" % (code, err.strip()[:200]))
    code, j, _ = rows_of(path, elf)
    check("... JSON quiet: no_announce", j and (j.get("quiet") or {}).get("cause") == "no_announce",
          j and j.get("quiet"))


def late_join_is_no_loss():
    """A capture of a board that ran before its host (stream_tagged from a third of the way in, cut
    mid-line): the samples before its next announce, and version 7's before its first whole group of
    8 lines, are where the profile begins: no loss in the JSON or the table, said once apart (JSON
    joined, a "joined a running stream" line), exit 0 as a CI run needs. A line missed later (one
    sample line taken out) is still a loss."""
    elf = scen_path("stream_tagged", "fw.elf")
    data = open(scen_path("stream_tagged", "uart.txt"), "rb").read()
    late = data[len(data) // 3 + 5:]
    path = os.path.join(TMP, "late.txt")
    open(path, "wb").write(late)
    code, j, _ = rows_of(path, elf)
    joined = (j or {}).get("joined", {})
    check("late capture: no loss, the samples skipped joining said apart, exit 0",
          code == 0 and j["losses"] == [] and joined.get("skipped", 0) > 0 and
          joined["skipped"] == joined["before_announce"] + joined["before_pages"],
          "exit %d, losses %s, joined %s" % (code, j and j.get("losses"), joined))
    code, out, _ = run("--batch", path, elf)
    said = [ln for ln in out.splitlines() if ln.startswith("joined a running stream: the first ")]
    check("... the table says it once, and no lost: line", code == 0 and len(said) == 1 and
          not [ln for ln in out.splitlines() if ln.startswith("lost:")], said or out[-300:])
    lines = late.split(b"\n")
    # a sample line in the middle of the run gone whole, numbered 3 in its group of 8: the 4 after it not read
    samples = [k for k, ln in enumerate(lines) if ln.startswith(b"%") and ((ln[2] - 63) & 7) == 3]
    drop = samples[len(samples) // 2]
    path2 = os.path.join(TMP, "late, a line missed.txt")
    open(path2, "wb").write(b"\n".join(lines[:drop] + lines[drop + 1:]))
    code, j2, _ = rows_of(path2, elf)
    lost = [x for x in (j2 or {}).get("losses", []) if "not read: they came after a sample line this host missed" in x]
    check("... a sample line missed later is still a loss", len(lost) == 1 and
          (j2 or {}).get("joined") == joined, "losses %s, joined %s" % (j2 and j2.get("losses"), j2 and j2.get("joined")))
    # one numbered 7, the last of its group: no sample after it goes unread (the next line's cache starts
    # afresh), so only its number, skipped, tells that it is gone (before: 32 samples fewer, no loss said)
    last = [k for k, ln in enumerate(lines) if ln.startswith(b"%") and ((ln[2] - 63) & 7) == 7]
    drop = last[len(last) // 2]
    path3 = os.path.join(TMP, "late, a group's last line missed.txt")
    open(path3, "wb").write(b"\n".join(lines[:drop] + lines[drop + 1:]))
    code, j3, _ = rows_of(path3, elf)
    said = [x for x in (j3 or {}).get("losses", []) if x.startswith("1 stream sample lines missing: their numbers were skipped")]
    check("... a group's last line lost whole is a loss too, said by its number", len(said) == 1 and
          len(j3["losses"]) == 1 and j3["total"] < j["total"], "losses %s" % (j3 and j3.get("losses")))


def loud_memory_fault():
    """A share of samples at PC 0 (a ring past the machine's RAM reads 0): a memory fault said, not a
    silent 0x00000000 row."""
    uart, elf = scen_path("m3_loops", "uart.txt"), scen_path("m3_loops", "fw.elf")
    out, k = [], 0
    for ln in open(uart).read().split("\n"):
        if ln.startswith("p "):
            pcs = ln.split()[1:]
            for i in range(len(pcs)):
                k += 1
                pcs[i] = "00000000" if k % 12 == 0 else pcs[i]
            ln = "p " + " ".join(pcs)
        out.append(ln)
    path = os.path.join(TMP, "pc zero.txt")
    open(path, "w").write("\n".join(out))
    code, j, err = rows_of(path, elf)
    diag = [d for d in (j or {}).get("diagnostics", []) if d.startswith("memory fault?")]
    check("8 % of samples at PC 0: a memory fault diagnosed, JSON pc_zero_percent, not a wrong ELF",
          code == 0 and j and len(diag) == 1 and "8.3 %" in diag[0] and abs(j.get("pc_zero_percent", -1) - 100 / 12) < 0.1
          and j.get("wrong_elf") is False, "exit %d %s %s" % (code, diag, j and j.get("pc_zero_percent")))
    code, out, err = run("--batch", path, elf)
    check("... a warning on stderr, and the '!' line first in the table", code == 0 and
          "warning: memory fault?" in err and first_line(out).startswith("! memory fault?"),
          "exit %d %r %r" % (code, err.strip()[:120], first_line(out)))
    code, j, _ = rows_of(uart, elf)
    check("no PC 0: no memory fault", j and not any(d.startswith("memory fault?") for d in j["diagnostics"]))


def lockstep_advice():
    """Lockstep's advice names the sampler that took the samples: the firmware's (jitter), the DWT's
    (POSTPRESET/CYCTAP): the same PCs as firmware text and as ITM PC-sample packets."""
    uart, elf = scen_path("loops_lockstep", "uart.txt"), scen_path("loops_lockstep", "fw.elf")
    code, j, _ = rows_of(uart, elf)
    ls = [d for d in (j or {}).get("diagnostics", []) if d.startswith("lockstep")]
    check("lockstep, firmware sampler: build with CMPROF_JITTER", ls and "(build with CMPROF_JITTER)" in ls[0] and
          "POSTPRESET" not in ls[0], ls)
    itm = os.path.join(TMP, "lockstep.itm")
    open(itm, "wb").write(b"".join(bytes([0x17]) + pc.to_bytes(4, "little") for pc in pcs_of(uart)))
    code, j, _ = rows_of(itm, elf)
    ls = [d for d in (j or {}).get("diagnostics", []) if d.startswith("lockstep")]
    check("lockstep, DWT PC sampling over ITM: POSTPRESET/CYCTAP, not 'build with CMPROF_JITTER'",
          j and j["format"] == "itm" and ls and "POSTPRESET" in ls[0] and "CYCTAP" in ls[0] and
          "build with CMPROF_JITTER" not in ls[0], ls)


def overhead_by_symbol():
    """The profiler's overhead counts the library's functions, never an application file that happens
    to be named cmprof_*.c; the library's list of its own helpers covers every function it defines."""
    src = os.path.join(TMP, "cmprof_app.c")
    open(src, "w").write("/* an application file whose name starts with cmprof_ */\n"
                         "volatile unsigned sink;\n"
                         "static void __attribute__((noinline)) send(unsigned v) { sink = v; }\n"
                         "void app_filter(unsigned n) { for (unsigned i = 0; i < n; i++) sink += i * 3u; }\n"
                         "void app_control(unsigned n) { for (unsigned i = 0; i < n; i++) send(i); }\n"
                         "int main(void) { for (;;) { app_filter(100); app_control(50); } }\n")
    elf = os.path.join(TMP, "cmprof_app.elf")
    fw = os.path.join(ROOT, "firmware")
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O1", "-g", "-nostdlib", "-Wl,-Ttext=0x08000000",
                    "-Wl,-e,main", "-I" + fw, "-DCMPROF_STREAM=1", src, os.path.join(fw, "cmprof_sampler.c"),
                    os.path.join(fw, "cmprof_stream.c"), os.path.join(fw, "cmprof_tasks.c"), "-lc", "-lgcc", "-o", elf], check=True)
    nm = subprocess.run(["arm-none-eabi-nm", "-l", elf], capture_output=True, text=True).stdout
    addr = {}
    for ln in nm.splitlines():  # the application's send(), not the library's static one of that name
        f = ln.split()
        if len(f) >= 3 and (f[2] not in addr or "cmprof_app.c" in ln):
            addr[f[2]] = int(f[0], 16) & ~1
    app = ["app_filter"] * 500 + ["app_control"] * 300 + ["send"] * 100  # the application: 90 %
    lib = ["cmprof_stream_drain_lines"] * 40 + ["put_samples"] * 30 + ["cmprof_tick"] * 30  # the library: 10 %
    pcs = ["%08x" % addr[f] for f in app + lib]
    cap = os.path.join(TMP, "cmprof_app.txt")
    open(cap, "w").write("prof raw n=%d\n" % len(pcs) + "".join("p " + " ".join(pcs[i:i + 8]) + "\n"
                                                                 for i in range(0, len(pcs), 8)) + "end\n")
    code, j, err = rows_of(cap, elf)
    check("overhead: an application file named cmprof_app.c is the application's (10 % library, not 100 %)",
          code == 0 and j and abs(j["overhead"] - 10.0) < 1e-6, "exit %d, overhead %s %s" %
          (code, j and j.get("overhead"), err.strip()[:100]))
    # every function the library defines is the library's: cmprof_*, or on the list in profile/profile.c
    text = open(os.path.join(ROOT, "profile", "profile.c")).read()
    listed = set(re.findall(r'"(\w+)"', text[text.index("library_statics[]"):text.index("library_files[]")]))
    missing = set()
    zoo = os.path.join(ROOT, "tests", "zoo")
    for opts in ([], ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=task", "-DCMPROF_JITTER=4095"], ["-DCMPROF_HIST=1"],
                 ["-DCMPROF_STREAM=1", "-DCMPROF_HIST=1"], ["-DCMPROF_PORT=CMPROF_PORT_STM32_TIM"],
                 ["-DCMPROF_PORT=CMPROF_PORT_CMSDK_TIMER"], ["-DCMPROF_PORT=CMPROF_PORT_NRF_TIMER"],
                 ["-DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER"], ["-DCMPROF_PORT=CMPROF_PORT_RP2040_ALARM"],
                 ["-DCMPROF_STREAM=1", "-DCMPROF_STACKS=1", "-DCMPROF_STACK_FP=1"],
                 ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=task", "-DCMPROF_TAG_NAMES=1"]):
        for f in ("cmprof_sampler.c", "cmprof_section.c", "cmprof_stream.c", "cmprof_tasks.c", "cmprof_dwt.c",
                  "rtos/cmprof_zephyr.c", "cmprof_stack.c", "cmprof_rtt.c"):
            obj = os.path.join(TMP, "lib.o")
            r = subprocess.run(["arm-none-eabi-gcc", "-std=c11", "-O0", "-mcpu=cortex-m4", "-mthumb", "-I" + fw,
                                "-I" + zoo, "-I" + os.path.join(zoo, "zephyr"), "-c", os.path.join(fw, f), "-o", obj]
                               + opts, capture_output=True)
            if r.returncode:
                continue
            for ln in subprocess.run(["arm-none-eabi-nm", obj], capture_output=True, text=True).stdout.splitlines():
                name = ln.split()[-1]
                if ln.split()[-2] in "tT" and not name.startswith(("cmprof_", "k_")):  # (k_: the Zephyr stand-in)
                    missing |= {name} - listed
    check("overhead: every function of the library's objects is cmprof_* or on profile.c's list",
          not missing and len(listed) > 50, sorted(missing))


def no_internal_items():
    """No user-visible text names the project's own work items ('issue 30', 'wave', 'stop 38'): the
    binary's strings, --help, the man page, the firmware's messages and the user docs."""
    pattern = re.compile(r"\b(issues? \d+|waves?\b|stop \d+)", re.I)
    found = []
    strings = subprocess.run(["strings", TOOL], capture_output=True, text=True).stdout
    found += ["binary: " + ln for ln in strings.splitlines() if pattern.search(ln)]
    found += ["--help: " + ln for ln in run("--help")[1].splitlines() if pattern.search(ln)]
    docs = sorted("docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith((".md", ".1")))
    for rel in docs + ["README.md"]:
        found += ["%s: %s" % (rel, ln) for ln in open(os.path.join(ROOT, rel)).read().splitlines()
                  if pattern.search(ln)]
    for d, _, files in os.walk(os.path.join(ROOT, "firmware")):
        for f in files:
            if f.endswith((".c", ".h")):
                for lit in re.findall(r'"(?:[^"\\\n]|\\.)*"', open(os.path.join(d, f)).read()):
                    found += ["firmware/%s: %s" % (f, lit)] if pattern.search(lit) else []
    check("no user-visible text names an internal work item", not found and len(strings) > 10000, found[:5])


def flat_stacks():
    """--stack-depth 0 on a capture with the firmware's stack evidence: a flat profile, every sample in
    -o folded; without it -o folded keeps the stacked samples only."""
    d = scen_path("m4_stacks", "")
    cap, elf = os.path.join(d, "uart.txt"), os.path.join(d, "fw.elf")
    def folded_total(*args):
        r = subprocess.run([TOOL, "--batch", "-o", "folded"] + list(args) + [cap, elf], capture_output=True, text=True)
        return sum(int(ln.rsplit(" ", 1)[1]) for ln in r.stdout.splitlines() if ln.strip()), r.returncode, r.stderr
    flat, stacked = folded_total("--stack-depth", "0"), folded_total()
    check("--stack-depth 0 on the sampler's stack evidence: every sample folded flat; without it the stacked ones",
          flat[1] == 0 and stacked[1] == 0 and flat[0] == 20000 and 0 < stacked[0] < flat[0] / 8,
          "flat %s, stacked %s" % (flat[:2], stacked[:2]))
    # a flame graph of a sixteenth of the samples was made without a word: stderr says so, and how
    # to have them all; the flat one has nothing to say
    note = "cmprof-top: note: -o folded holds the %d samples that carry call stacks, of 20000 (the table's)" % stacked[0]
    check("-o folded of the stacked samples says on stderr that it holds %d of the 20000, and --stack-depth 0" %
          stacked[0], stacked[2].startswith(note) and "--stack-depth 0" in stacked[2] and "note:" not in flat[2],
          "stacked: %r; flat: %r" % (stacked[2][:300], flat[2][:200]))


def trickled_stream_reads():
    """A TCP stream that comes a few bytes a segment (QEMU's UART: make demo's cmprof-top read
    12,000 times a second and took 7-8 % of a core) is read at most every 10 ms while its turns
    bring less than 1 KB: about 200 reads a second (each turn's read and the one that finds no
    more). The stream is sent in 16-byte segments, one a millisecond, and the tool's read calls
    counted (/proc/PID/io syscr) while it comes; a slower machine only sends and reads less."""
    import socket
    import threading
    import time
    data = open(scen_path("stream", "uart.txt"), "rb").read()[:48000]
    elf = scen_path("stream", "fw.elf")
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(30)
    port = srv.getsockname()[1]
    proc = subprocess.Popen([TOOL, "--batch", "tcp:127.0.0.1:%d" % port, elf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    counts = []

    def reads():
        with open("/proc/%d/io" % proc.pid) as f:
            return int(next(ln.split()[1] for ln in f if ln.startswith("syscr")))

    def serve():
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sendall(data[:4096])  # the ELF read and the format told before the count starts
        time.sleep(1)
        counts.append((time.time(), reads()))
        for k in range(4096, len(data), 16):
            conn.sendall(data[k:k + 16])
            time.sleep(0.001)
        counts.append((time.time(), reads()))
        conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    t.join(120)
    err = proc.communicate(timeout=60)[1].decode(errors="replace")
    srv.close()
    if len(counts) < 2:
        check("a trickled TCP stream: read at most every 10 ms", False, "no connection: " + err[-200:])
        return
    per_s = (counts[1][1] - counts[0][1]) / (counts[1][0] - counts[0][0])
    check("a TCP stream in 16-byte segments, one a millisecond: read at most 400 times a second (%.0f)" % per_s,
          proc.returncode == 0 and per_s < 400, "exit %s, %.0f reads/s: %s" % (proc.returncode, per_s, err[-200:]))


def resolve_elf_cut_short():
    """--resolve maps the ELF's DWARF: a file cut short while answers go on (rewritten in place) is said
    in one line with exit 1, never a SIGBUS."""
    os.makedirs(TMP, exist_ok=True)
    elf = os.path.join(TMP, "cut-short.elf")
    shutil.copy(scen_path("tasks", "fw.elf"), elf)
    syms = subprocess.run(["arm-none-eabi-nm", "-n", elf], capture_output=True, text=True).stdout.split()
    funcs = [int(syms[i - 2], 16) for i in range(2, len(syms)) if syms[i - 1] in ("t", "T")]
    p = subprocess.Popen([TOOL, "--resolve", elf], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdin.write("%x\n" % funcs[0])
    p.stdin.flush()
    first = [p.stdout.readline(), p.stdout.readline()]
    os.truncate(elf, 0)
    out, err = p.communicate("".join("%x\n" % a for a in funcs[1:]), timeout=30)
    check("--resolve: an ELF cut short while read is said in one line, exit 1, no crash",
          first[1].strip() != "" and p.returncode == 1 and err.count("\n") == 1 and "cut short" in err
          and elf in err, "exit %d, %r" % (p.returncode, err[:200]))


def resolve_unit_without_aranges():
    """A unit with no .debug_aranges set (its object's section removed before the link) among units
    that have one, first, in the middle or last: its ranges come from its DIEs, the others' from their
    sets (moved into the unit index in place until the first unit without one), and every function's
    first and second halfwords resolve as addr2line -a -f -i resolves them."""
    os.makedirs(TMP, exist_ok=True)
    objs = []
    for u in range(3):
        src = os.path.join(TMP, "unit%d.c" % u)
        open(src, "w").write("volatile unsigned sink%d;\n" % u + "".join(
            "unsigned __attribute__((noinline)) u%d_f%d(unsigned x) { for (unsigned i = 0; i < (x & 7u); i++) "
            "x = x * %du + (x >> 3); sink%d = x; return x; }\n" % (u, f, 3 + 2 * f, u) for f in range(4)))
        objs.append(os.path.join(TMP, "unit%d.o" % u))
        subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-g", "-ffunction-sections", "-c",
                        src, "-o", objs[-1]], check=True)
    wrong = []
    for bare in range(3):
        linked = list(objs)
        linked[bare] = os.path.join(TMP, "bare%d.o" % bare)
        subprocess.run(["arm-none-eabi-objcopy", "--remove-section=.debug_aranges", objs[bare], linked[bare]],
                       check=True)
        elf = os.path.join(TMP, "bare%d.elf" % bare)
        subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-Ttext=0x08000000",
                        "-Wl,-e,u0_f0"] + linked + ["-o", elf], check=True)
        sets = subprocess.run(["arm-none-eabi-readelf", "--debug-dump=aranges", elf], capture_output=True,
                              text=True).stdout.count("Offset into .debug_info")
        syms = subprocess.run(["arm-none-eabi-nm", "-n", elf], capture_output=True, text=True).stdout.split()
        funcs = [int(syms[i - 2], 16) & ~1 for i in range(2, len(syms))
                 if syms[i - 1] in ("t", "T") and re.match(r"u\d_f\d$", syms[i])]
        feed = "".join("%x\n%x\n" % (a, a + 2) for a in funcs)
        ours = subprocess.run([TOOL, "--resolve", elf], input=feed, capture_output=True, text=True)
        theirs = subprocess.run(["arm-none-eabi-addr2line", "-a", "-f", "-i", "-e", elf], input=feed,
                                capture_output=True, text=True)
        if sets != 2 or len(funcs) != 12 or ours.returncode != 0 or ours.stdout != theirs.stdout or "u1_f2" not in ours.stdout:
            wrong.append("unit %d bare: %d sets, %d functions, exit %d, %s" % (
                bare, sets, len(funcs), ours.returncode, ours.stderr.strip()[:100] or ours.stdout[:120]))
    check("--resolve: a unit without a .debug_aranges set, first, middle or last, answered as addr2line does",
          not wrong, wrong)


def loud_unread_capture(uart, elf):
    """A trace capture most of whose bytes could not be read (a good start, then 30 KB that is no ITM):
    a profile from its first 21 %, exit 0, and stderr said nothing (a CI run passed on a sliver)."""
    import random
    rnd = random.Random(7)
    path = os.path.join(TMP, "sliver.bin")
    with open(path, "wb") as f:
        f.write(itm_stream(pcs_of(uart)[:1500]) + bytes(rnd.choice([0x04, 0x08, 0x0c, 0x7c]) for _ in range(30000)))
    code, _, err = run("--batch", path, elf)
    check("a trace capture mostly unreadable says so on stderr: how much, that the profile stands on the rest",
          code == 0 and "of its 38033 bytes (79 %) could not be read as itm" in err and path in err, err)
    whole = os.path.join(TMP, "whole.bin")
    with open(whole, "wb") as f:
        f.write(itm_stream(pcs_of(uart)[:1500]))
    code, _, err = run("--batch", whole, elf)
    check("... and a whole one does not", code == 0 and "could not be read" not in err, err)


def resolve_nul_across_reads():
    """A line with a NUL ends at the NUL (addr2line reads C strings), wherever the reads of stdin split
    it: with the split after the NUL, the carried start was joined to the rest past the NUL (80\\0 + 04:
    0x804 answered for 0x80). Without a writer thread stdin is read 128 KB at a time, so a regular file
    puts the split at each place of the line in turn."""
    elf = scen_path("tasks", "fw.elf")
    syms = subprocess.run(["arm-none-eabi-nm", "-n", elf], capture_output=True, text=True).stdout.split()
    funcs = [int(syms[i - 2], 16) for i in range(2, len(syms)) if syms[i - 1] in ("t", "T")]
    pad, head, tail = "%x\n" % funcs[0], "%x" % funcs[1], "%x" % funcs[2]
    line = head + "\0" + tail + "\n"
    os.makedirs(TMP, exist_ok=True)

    def answer(data):
        path = os.path.join(TMP, "nul-lines.txt")
        open(path, "wb").write(data.encode("latin-1"))
        with open(path, "rb") as f:
            r = subprocess.run([TOOL, "--resolve", elf], stdin=f, capture_output=True,
                               env=dict(os.environ, CMPROF_RESOLVE_WRITER="0"))
        return r.returncode, r.stdout
    wrong = []
    for split in range(1, len(line)):  # the first read ends `split` bytes into the line
        before = 131072 - split - len(pad) * 20
        lines = pad * (before // len(pad) - 1)
        lines += "0" * (before - len(lines) - len(pad)) + pad  # leading zeros: the same address
        lines += pad * 20
        whole, cut = answer(lines + line + pad), answer(lines + head + "\n" + pad)
        if whole != cut or whole[0] != 0:
            wrong.append(split)
    check("--resolve: a line with a NUL answered as cut there, wherever a read of stdin splits it",
          not wrong, "splits (bytes into %r) answered otherwise: %s" % (line, wrong))


def readme_is_a_guide():
    """README is a user's guide (about 300 lines at most); the details live in docs/, and every
    local link of README and docs/ leads to a file that exists."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    check("README is a guide of at most 300 lines", readme.count("\n") <= 300, readme.count("\n"))
    broken = []
    for rel in ["README.md"] + ["docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")]:
        base = os.path.dirname(os.path.join(ROOT, rel))
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", open(os.path.join(ROOT, rel)).read()):
            if not os.path.exists(os.path.join(base, target)):
                broken.append("%s -> %s" % (rel, target))
    check("every local link in README and docs/ resolves", not broken, broken[:5])


def options_given_twice(uart, elf):
    """A value option given twice with two values is refused in one line naming both (the last one won
    silently before); the same value twice, and --budget (many values), are no conflict."""
    for args, name in ((("-o", "json", "-o", "csv"), "-o/--output"), (("--by", "task", "--by=line"), "--by"),
                       (("--samples", "5", "--samples", "6"), "--samples"), (("-f", "text", "--format", "itm"), "-f"),
                       (("--diff", "a.json", "--diff", "b.json"), "--diff")):
        code, out, err = run("--batch", *args, uart, elf)
        lines = err.strip().splitlines()
        check("%s given twice with two values: refused in one line naming both" % " ".join(args), code == 2 and
              not out and len(lines) == 1 and name in lines[0] and "twice" in lines[0] and
              all(a.split("=")[-1] in lines[0] for a in args[1::2] if not a.startswith("-")),
              "exit %s, %s" % (code, lines))
    code, out, err = run("--batch", "-o", "json", "--output", "json", "--samples", "3", uart, elf)
    check("-o json given twice: no conflict, the run goes on", code == 0 and '"total": 3' in out, err.strip())


def bad_source_specs(elf):
    """A source spec of the wrong form is a bad argument: exit 2 as README's exit table says (it exited
    1, the code for a source that could not be reached, so a CI script could not tell a typo from a
    probe that was down); a well-formed one that cannot be opened stays exit 1."""
    for spec, want in (("nosuch:xyz", "no kind of source"), ("tcp:host:notaport", "use tcp:HOST:PORT"),
                       ("tcp:localhost", "use tcp:HOST:PORT"), ("gdb:", "use gdb:HOST:PORT"),
                       ("openocd:h:99999", "use openocd:HOST"), ("openocd:localhost,swo=fast", "use swo=CLOCK"),
                       ("rtt:x", "use rtt:HOST:PORT")):
        code, out, err = run("--batch", spec, elf)
        check("source %s: a bad argument, exit 2, one line that says the form" % spec,
              code == 2 and not out and len(err.strip().splitlines()) == 1 and want in err,
              "exit %d, %r" % (code, err.strip()))
    code, out, err = run("--batch", os.path.join(TMP, "no-such-capture.txt"), elf)
    check("a capture that is not there: could not run, exit 1", code == 1 and "No such file" in err,
          "exit %d, %r" % (code, err.strip()))


def unreached_with_duration(elf):
    """A server nobody answers at, with --duration 2: could not run, exit 1 with the one line
    --connect-timeout gives, as without --duration (it was exit 2, 'no samples', and an empty table
    on stdout)."""
    for spec in ("gdb:127.0.0.1:1", "tcp:127.0.0.1:1"):
        code, out, err = run("--batch", "--duration", "2", spec, elf)
        lines = err.strip().splitlines()
        check("%s --duration 2, nobody there: exit 1, one line 'not reached within 2 s (--duration)', no report"
              % spec, code == 1 and not out and len(lines) == 1 and "not reached within 2 s (--duration)" in lines[0],
              "exit %d, %r, stdout %r" % (code, lines, out[:80]))


def ignored_options(uart, elf):
    """-o pprof, callgrind, lcov and trace keep a layout of their own: --by and --no-inline change
    nothing in them, and a warning says so (they were ignored without a word, where folded and
    speedscope refuse --by line); the file is written as without them, exit 0."""
    plain = {}
    for fmt in ("callgrind", "lcov", "trace"):
        plain[fmt] = run("--batch", "-o", fmt, uart, elf)[1]
    for fmt, extra in (("callgrind", ["--by", "line"]), ("lcov", ["--by", "file"]), ("trace", ["--no-inline"]),
                       ("callgrind", ["--by", "task", "--no-inline"])):
        code, out, err = run("--batch", "-o", fmt, *extra, uart, elf)
        lines = err.strip().splitlines()
        check("-o %s %s: written as without it, and one warning that it changes nothing" % (fmt, " ".join(extra)),
              code == 0 and out == plain[fmt] and len(lines) == 1 and "warning" in lines[0] and
              "-o %s" % fmt in lines[0] and all(x in lines[0] for x in extra if x.startswith("--")),
              "exit %d, %r" % (code, lines))
    code, out, err = run("--batch", "-o", "callgrind", uart, elf)
    check("-o callgrind alone: no such warning", code == 0 and not err.strip(), err.strip())


def at_twice_the_baud(data):
    """The bytes a UART at twice the firmware's baud rate reads from data (8N1): each bit seen twice."""
    bits = []
    for b in data:
        bits += [0] + [(b >> k) & 1 for k in range(8)] + [1]
    seen = [x for x in bits for _ in (0, 1)]
    out, i = bytearray(), 0
    while i + 10 <= len(seen):
        if seen[i] == 0:  # a start bit
            out.append(sum(seen[i + 1 + k] << k for k in range(8)))
            i += 10
        else:
            i += 1
    return bytes(out)


def wrong_baud(uart, elf):
    """A firmware stream read at the wrong baud rate is bytes no format reads: they were taken for ITM,
    and the advice was about TPIU ("try -f tpiu"), or, live, a trace not set up; -b was never named. Now
    the no-samples line names the baud rate, from a file and from a live source."""
    data = at_twice_the_baud(open(uart, "rb").read()[:30000])
    path = os.path.join(TMP, "baud2x.bin")
    with open(path, "wb") as f:
        f.write(data)
    code, out, err = run("--batch", path, elf)
    check("a stream read at twice its baud rate: no samples, and the line names the baud rate (-b)",
          code == 2 and "baud rate" in err and "-b BAUD" in err and "no format reads these bytes" in err,
          "exit %s, %r" % (code, err.strip()[-400:]))
    port = harness.tcp_server([data], 0, hold=4)  # a port that stays connected
    code, out, err = run("--batch", "--duration", "2", "tcp:127.0.0.1:%d" % port, elf)
    check("... and from a live source, said once (not again as a starved drain's causes)",
          code == 2 and err.count("baud rate") == 1 and "-b BAUD" in err and "drain never runs" not in err,
          "exit %s, %r" % (code, err.strip()[-600:]))


def untagged_by_task(uart, elf):
    """--by task on a firmware built without CMPROF_TAG: one row "(no tag)", 100 %, and not a word of why.
    A note now says how tasks are told; a tagged capture gets no such note."""
    code, out, err = run("--batch", "--by", "task", uart, elf)
    check("--by task with no task tags: a note says CMPROF_TAG tells tasks",
          code == 0 and "(no tag)" in out and "note: no sample carries a task" in out and "CMPROF_TAG" in out,
          "exit %s, %r" % (code, out[-400:]))
    code, out, err = run("--batch", "--by", "task", scen_path("tasks", "uart.txt"), scen_path("tasks", "fw.elf"))
    check("... and a tagged capture gets none", code == 0 and "no sample carries a task" not in out,
          "exit %s, %r" % (code, out[-300:]))


def restarted_stream():
    """A target reset mid-run (the trial helper's mps2-an385 after QEMU's system_reset): the counts went
    on merged, and nothing said the firmware started again. The stream's lines are numbered afresh after
    its announce: a note says so, once a restart; a stream that did not restart gets no such note."""
    uart, elf = scen_path("stream_tagged", "uart.txt"), scen_path("stream_tagged", "fw.elf")
    data = open(uart, "rb").read()
    path = os.path.join(TMP, "reset-twice.txt")
    with open(path, "wb") as f:
        f.write(data + data + data)
    code, out, err = run("--batch", path, elf)
    check("a stream that began again twice (a target reset): a note says so, with the first offset",
          code == 0 and "note: the firmware's stream began again 2 times, first at byte offset" in out,
          "exit %s, %r" % (code, [ln for ln in out.splitlines() if ln.startswith(("note", "lost"))]))
    code, out, err = run("--batch", uart, elf)
    check("... and one that did not, none", code == 0 and "began again" not in out, out[-300:])
    # the reset cut a sample line and the announce followed with no newline (a real reset on
    # netduinoplus2): the restart went unseen and its lines, numbered afresh, were counted lost
    cut = data.index(b"\n", len(data) // 2) - 10
    with open(path, "wb") as f:
        f.write(data[:cut] + data[data.index(b"@cmprof "):])
    code, out, err = run("--batch", path, elf)
    check("a reset that cut a line, the announce glued to it: the restart said, no line counted lost",
          code == 0 and "note: the firmware's stream began again 1 time, first at byte offset" in out and
          "missing" not in out and "1 malformed lines dropped (1 failed their check), first at byte offset %d" %
          (data.rindex(b"\n", 0, cut) + 1) in out,
          "exit %s, %r" % (code, [ln for ln in out.splitlines() if ln.startswith(("note", "lost"))]))


def main():
    os.makedirs(TMP, exist_ok=True)
    uart, elf = scen_path("loops_jitter", "uart.txt"), scen_path("loops_jitter", "fw.elf")
    if not os.path.exists(uart):
        check("scenario captures present", False, "run scenarios/scen.py run first")
        return 1
    options_given_twice(uart, elf)
    bad_source_specs(elf)
    unreached_with_duration(elf)
    ignored_options(uart, elf)
    wrong_baud(uart, elf)
    untagged_by_task(uart, elf)
    restarted_stream()
    trickled_stream_reads()

    # --- outputs agree -------------------------------------------------------------------------
    code, js, _ = rows_of(uart, elf)
    total = js["total"]
    check("json: total equals the samples in the capture", code == 0 and total == len(pcs_of(uart)),
          "%s vs %d" % (total, len(pcs_of(uart))))
    code, out, _ = run("--batch", "-o", "csv", uart, elf)
    rows = list(csv.reader(io.StringIO(out)))
    check("csv: the header keeps samples,percent,ci95 first", rows[0][:3] == ["samples", "percent", "ci95"])
    body = rows[1:]
    check("csv: rows cover every sample", sum(float(r[0]) for r in body) == total)
    check("csv: most samples first", all(float(a[0]) >= float(b[0]) for a, b in zip(body, body[1:])))
    check("csv: percent and ci95 with at least two decimals",
          all(len(r[1].split(".")[1]) >= 2 and len(r[2].split(".")[1]) >= 2 for r in body))
    p = float(body[0][1]) / 100
    # Wilson's score interval, computed here from its definition
    z2 = 1.96 ** 2
    centre, half = (p + z2 / (2 * total)) / (1 + z2 / total), \
        1.96 * (p * (1 - p) / total + z2 / (4 * total * total)) ** 0.5 / (1 + z2 / total)
    check("csv: lo95,hi95 after ci95: Wilson's interval, ci95 half its width",
          rows[0][:6] == ["samples", "percent", "ci95", "lo95", "hi95", "name"] and
          abs(float(body[0][3]) / 100 - (centre - half)) < 1e-5 and abs(float(body[0][4]) / 100 - (centre + half)) < 1e-5
          and abs(float(body[0][2]) / 100 - half) < 1e-5, body[0][:5])
    code, out, _ = run("--batch", "-o", "folded", uart, elf)
    folded = [ln.rsplit(" ", 1) for ln in out.splitlines()]
    check("folded: counts sum to the total", sum(float(c) for _, c in folded) == total, "%d lines" % len(folded))
    code, out, _ = run("--batch", "-o", "folded", scen_path("loops_inline_o2", "uart.txt"),
                       scen_path("loops_inline_o2", "fw.elf"))
    check("folded: inline chains outer;inner", any(ln.startswith("main;run;hot_a ") or ln.startswith("run;hot_a ")
                                                   for ln in out.splitlines()), out.splitlines()[0] if out else "")
    for by in ("line", "file", "task"):
        code, js2, _ = rows_of(uart, elf, "--by", by)
        check("--by %s covers every sample" % by, code == 0 and abs(sum(r["samples"] for r in js2["rows"]) - total) < 1e-6)
    code, js2, _ = rows_of(scen_path("tasks", "uart.txt"), scen_path("tasks", "fw.elf"), "--by", "task")
    names = {r["name"] for r in js2["rows"]}
    check("--by task names the tasks the stream announced", {"motor", "link"} <= names, str(sorted(names)))
    code, out, _ = run("--batch", "-o", "folded", "--by", "task", scen_path("tasks", "uart.txt"), scen_path("tasks", "fw.elf"))
    stacks = {}
    for ln in out.splitlines():
        st, cnt = ln.rsplit(" ", 1)
        stacks[st] = stacks.get(st, 0) + float(cnt)
    by_root = {}
    for st, cnt in stacks.items():
        by_root[st.split(";")[0]] = by_root.get(st.split(";")[0], 0) + cnt
    want = {r["name"]: r["samples"] for r in js2["rows"]}
    check("folded --by task: the task is the root frame, with the task view's counts", code == 0 and by_root == want
          and "motor;hot_a" in stacks and "link;hot_a" in stacks, "%s vs %s" % (sorted(by_root.items()), sorted(want.items())))
    # speedscope: the folded stacks as shared frames and weighted samples
    code, out, _ = run("--batch", "-o", "speedscope", scen_path("loops_inline_o2", "uart.txt"),
                       scen_path("loops_inline_o2", "fw.elf"))
    code2, folded_out, _ = run("--batch", "-o", "folded", scen_path("loops_inline_o2", "uart.txt"),
                               scen_path("loops_inline_o2", "fw.elf"))
    try:
        sp = json.loads(out)
        prof = sp["profiles"][0]
        frames = [f["name"] for f in sp["shared"]["frames"]]
        got = sorted((";".join(frames[i] for i in smp), w) for smp, w in zip(prof["samples"], prof["weights"]))
    except (ValueError, KeyError, IndexError):
        sp, got = {}, None
    want = sorted((ln.rsplit(" ", 1)[0], float(ln.rsplit(" ", 1)[1])) for ln in folded_out.splitlines())
    check("-o speedscope: a sampled profile whose stacks and weights are the folded output's",
          code == 0 and sp.get("$schema", "").endswith("file-format-schema.json") and prof.get("type") == "sampled"
          and got == want and prof["endValue"] == sum(prof["weights"]), "%d stacks" % len(want))
    check("-o speedscope of a dump (no period announced): weights are samples, unit 'none'",
          code == 0 and prof.get("unit") == "none")
    # a stream that announces its period: weights in nanoseconds, the announced period a sample
    cap, fw = scen_path("stream_tagged", "uart.txt"), scen_path("stream_tagged", "fw.elf")
    code, out, _ = run("--batch", "-o", "speedscope", cap, fw)
    code2, js_text, _ = run("--batch", "-o", "json", cap, fw)
    try:
        prof, info = json.loads(out)["profiles"][0], json.loads(js_text)
        ns = (info["stream"]["period"] + info["stream"]["jitter"] / 2) * 1e9 / info["stream"]["timer_hz"]
        ok = (prof["unit"] == "nanoseconds" and abs(prof["endValue"] - info["total"] * ns) < 1e-6 * prof["endValue"]
              and abs(sum(prof["weights"]) - prof["endValue"]) < 1e-6 * prof["endValue"])
    except (ValueError, KeyError, IndexError, ZeroDivisionError):
        ok, prof = False, {}
    check("-o speedscope of a stream with its period: unit nanoseconds, the samples times the period (%.1f ns)"
          % (ns if ok else 0), code == 0 and ok, str(prof)[:200])
    code, _, err = run("--batch", "-o", "speedscope", "--by", "line", uart, elf)
    check("-o speedscope --by line: refused, not ignored", code == 2 and "speedscope" in err, err.strip())
    code, _, err = run("--batch", "-o", "folded", "--by", "line", uart, elf)
    check("folded --by line: refused, not ignored", code == 2 and "folded" in err, err.strip())

    # the library's own code as one row: its samples are the header's overhead, and no library
    # function keeps a row of its own
    st_uart, st_elf = scen_path("stream_tagged", "uart.txt"), scen_path("stream_tagged", "fw.elf")
    # (--no-inline: the library's code is counted by the function that contains it, as the overhead is)
    plain = json.loads(run("--batch", "-o", "json", "--no-inline", st_uart, st_elf)[1])
    folded_j = json.loads(run("--batch", "-o", "json", "--no-inline", "--fold-overhead", st_uart, st_elf)[1])
    over = [r for r in folded_j["rows"] if r["name"] == "[cmprof overhead]"]
    lib_rows = [r for r in plain["rows"] if r["file"] and os.path.basename(r["file"]).startswith("cmprof_")]
    check("--fold-overhead: one row holds the library's samples, the overhead share",
          len(over) == 1 and lib_rows and abs(over[0]["samples"] - folded_j["overhead"] / 100 * folded_j["total"]) < 0.5
          and over[0]["samples"] == sum(r["samples"] for r in lib_rows)
          and not any(r["name"] == lr["name"] for r in folded_j["rows"] for lr in lib_rows)
          and folded_j["total"] == plain["total"],
          "%s; library rows without folding: %s" % (over, [(r["name"], r["samples"]) for r in lib_rows]))
    code, out, _ = run("--batch", uart, elf)
    check("table: readable report", code == 0 and "hot_a" in out and "±95%" in out, out.splitlines()[0])

    # --- the same samples as ITM and as TPIU give the same profile --------------------------------
    pcs = pcs_of(uart)
    itm = os.path.join(TMP, "capture.itm")
    tpiu = os.path.join(TMP, "capture.tpiu")
    open(itm, "wb").write(itm_stream(pcs))
    open(tpiu, "wb").write(tpiu_frames(itm_stream(pcs)))
    orb = os.path.join(TMP, "capture.orbflow")
    open(orb, "wb").write(orbflow_frames(itm_stream(pcs)))
    ref = {r["name"]: r["samples"] for r in js["rows"]}
    for path, fmt in ((itm, "itm"), (tpiu, "tpiu"), (orb, "orbflow")):
        code, j, err = rows_of(path, elf)
        got = {r["name"]: r["samples"] for r in j["rows"]} if j else {}
        check("%s capture: detected and decoded to the same profile" % fmt,
              code == 0 and j["format"] == fmt and got == ref and j["sleep"] > 0,
              "format %s, %s" % (j and j["format"], err.strip()))
        # (before: the ITM capture's first sync, held apart from the detection's window, read as 6 bytes of
        # noise; orbflow's first delimiter as a byte skipped; the orbflow capture holds a second stream, said)
        said = [x for x in (j or {}).get("losses", []) if "of other streams (2)" not in x or fmt != "orbflow"]
        check("... a clean %s capture: no loss said, nothing skipped" % fmt, j and said == [] and
              j["joined"]["bytes"] == 0, "losses %s, joined %s" % (j and j["losses"], j and j["joined"]))
    # one source, its ID written once (ITM alone through the formatter), and one byte hit on the line in the
    # middle that reads as an ID change to source 2: the rest is still source 1's, and the hit is said (before:
    # every sample after it went to "data of other streams (2)")
    once = bytearray(tpiu_frames(itm_stream(pcs), id_once=True))
    hit = 4 + 16 * ((len(once) - 4) // 32)
    once[hit] = 0x05
    hit_path = os.path.join(TMP, "capture_hit.tpiu")
    open(hit_path, "wb").write(bytes(once))
    code, j, err = rows_of(hit_path, elf)
    got = {r["name"]: r["samples"] for r in j["rows"]} if j else {}
    lost = sum(ref.values()) - sum(got.values())
    check("a one-source TPIU capture with a byte hit into an ID change: the samples after it still counted (at most "
          "3 lost), the stray change said", code == 0 and 0 <= lost <= 3 and
          any("1 stray TPIU ID changes" in x for x in j["losses"]) and j["decoder"].get("tpiu_stray_ids") == 1,
          "exit %s, %d of %d lost, losses %s" % (code, lost, sum(ref.values()), j and j["losses"]))
    # the same capture on a line with bit errors: 50 random bits flipped (a fixed seed) past its first frame
    flipped = bytearray(tpiu_frames(itm_stream(pcs), id_once=True))
    rng = random.Random(5)
    for _ in range(50):
        flipped[rng.randrange(100, len(flipped))] ^= 1 << rng.randrange(8)
    flip_path = os.path.join(TMP, "capture_flips.tpiu")
    open(flip_path, "wb").write(bytes(flipped))
    code, j, err = rows_of(flip_path, elf)
    total = j["total"] if j else 0
    check("a one-source TPIU capture with 50 bit errors: at least 90 % of its samples read, the stray ID changes "
          "counted "
          "(before: 24,030 of 100,000, the rest 'data of other streams')",
          code == 0 and total >= 0.9 * sum(ref.values()) and j["decoder"].get("tpiu_stray_ids", 0) >= 1,
          "exit %s, %d of %d, losses %s" % (code, total, sum(ref.values()), j and j["losses"]))
    # the same capture begun mid-stream after 300 bytes of line noise (a probe started while the pin was set
    # up): the noise reads as changes to many sources, the stream writes no ID; its samples are still read
    # (before: none, "data of other streams")
    rng = random.Random(7)
    noisy = bytes(rng.randrange(256) for _ in range(300)) + tpiu_frames(itm_stream(pcs), id_once=True)[4 + 16 * 40:]
    noisy_path = os.path.join(TMP, "capture_noise.tpiu")
    open(noisy_path, "wb").write(noisy)
    code, j, err = rows_of(noisy_path, elf, "-f", "tpiu")
    total = j["total"] if j else 0
    check("a one-source TPIU capture begun mid-stream after line noise: read (all but the first 2 KB's samples and "
          "those before the ITM's next sync, 1 in 1,000 samples here), no stray PC",
          code == 0 and total >= sum(ref.values()) - 1500 and
          all(r["name"] in ref for r in j["rows"]),
          "exit %s, %d of %d, rows %s, %s" % (code, total, sum(ref.values()), j and [r["name"] for r in j["rows"]][:8],
                                              err.strip()[-300:]))
    code, j, err = rows_of(noisy_path, elf)
    total = j["total"] if j else 0
    check("... and without -f: detected as TPIU, the noise skipped and said, all but a few hundred samples read "
          "(before: read as ITM, 40 samples, 'TPIU frames read as ITM? try -f tpiu')",
          code == 0 and j["format"] == "tpiu" and total >= sum(ref.values()) - 400 and
          any("bytes of noise before the tpiu stream skipped" in x for x in j["losses"]),
          "exit %s, format %s, %d of %d, losses %s" % (code, j and j["format"], total, sum(ref.values()),
                                                      j and j["losses"]))
    # two ITM sources through one formatter (IDs 1 and 3), source 1 quiet while 3 sends 400 samples at a time: a
    # change to 3 after source 1's only ID reads as a byte hit, so 3's first burst may be read as 1's, but no later
    # one, and the report says the stray change was another source's (before: every burst of 3's read as 1's)
    def piece(part, sid):
        data = itm_stream(part)
        data = data[:14 + 15 * ((len(data) - 14) // 15)]  # whole frames: no null padding between the pieces
        return tpiu_frames(data, sid, id_once=True)[4:]
    two = b"\xff\xff\xff\x7f" + b"".join(piece(pcs[k * 700:k * 700 + 300], 1) + piece(pcs[k * 700 + 300:k * 700 + 700], 3)
                                         for k in range(3))
    two_path = os.path.join(TMP, "capture_two_itm.tpiu")
    open(two_path, "wb").write(two)
    code, j, err = rows_of(two_path, elf, "-f", "tpiu")
    total = j["total"] if j else 0
    check("two ITM sources (1, 3), 1 asked, 3 alone for 400 samples at a time: at most 3's first burst read as 1's, "
          "and said", code == 0 and 890 <= total <= 900 + 400 and
          any("wrote that source's ID again after" in x and x.endswith("may have been read as its")
              for x in j["losses"]),
          "exit %s, %d samples (source 1 sent 900), losses %s" % (code, total, j and j["losses"]))
    # a format forced on bytes of another: said what they are (before: -f tpiu on text advised --tpiu-id,
    # -f itm on text 'TPIU frames read as ITM? try -f tpiu')
    for opts, fmt in ((["-f", "tpiu"], "tpiu"), (["-f", "itm"], "itm"), (["-f", "orbflow"], "orbflow"),
                      (["--tpiu-offset", "2"], None)):
        code, out, err = run("--batch", *opts, uart, elf)
        opt = "-f %s" % fmt if fmt else "--tpiu-offset"
        check("%s on a text capture: 'its bytes are text', drop %s; no other format's advice" % (" ".join(opts), opt),
              code == 2 and "its bytes are text (the firmware's lines); drop %s (the format is detected) or give "
              "-f text" % opt in err and "--tpiu-id" not in err + out and "try -f" not in err + out and
              "ends inside" not in err,  # (nor a cut TPIU frame of bytes that were never frames)
              "exit %d: %s | %s" % (code, err.strip(), [ln for ln in out.splitlines() if "lost" in ln][:2]))
    # a capture cut inside a packet, a frame or a line: its samples are not counted, and that is said, naming
    # the file and the offset (before: one PC fewer from ITM, two from TPIU, a stream line's 16, not a word)
    stream_elf = scen_path("stream_tagged", "fw.elf")
    for path, what, short, path_elf in ((itm, "an ITM packet", 7, elf), (tpiu, "a TPIU frame", 7, elf),
                                        (orb, "an orbflow frame", 50, elf),
                                        (scen_path("stream_tagged", "uart.txt"), "a line", 30, stream_elf)):
        data = open(path, "rb").read()
        cut = os.path.join(TMP, "cut_" + os.path.basename(path))
        open(cut, "wb").write(data[:-short])  # (the text's last 30 bytes: in its last sample line)
        code, out, err = run("--batch", cut, path_elf)
        said = re.search(r"warning: '%s' ends inside %s \(its last (\d+) bytes, from byte offset (\d+)\): cut short, "
                         r"not decoded" % (re.escape(cut), what), err)
        check("a capture cut inside %s: said with its file and offset, the report still made (exit 0)" % what,
              code == 0 and said and int(said.group(1)) + int(said.group(2)) == len(data) - short,
              "exit %d: %s" % (code, err.strip()[-300:]))
        code, out, err = run("--batch", path, path_elf)
        check("... the whole capture: no such warning", code == 0 and "ends inside" not in err, err.strip()[-200:])
        if len(data) > 1 << 17:  # past the reads' 64 KB: --samples stops before the end (a smaller file is read whole)
            code, out, err = run("--batch", "--samples", "10", cut, path_elf)
            check("... the cut capture read to --samples 10 only: no such warning (its end was not read)",
                  code == 0 and "ends inside" not in err, err.strip()[-200:])
    # a dump cut at a line's end, between its PC lines and its tag lines: no line is cut, but its tags are gone
    # (before: every sample '(no tag)' and not a word)
    tasks_lines = open(scen_path("tasks", "uart.txt"), "rb").read().split(b"\n")
    cut = os.path.join(TMP, "cut_before_tags.txt")
    open(cut, "wb").write(b"\n".join(ln for ln in tasks_lines if not ln.startswith((b"g ", b"end"))) + b"\n")
    code, j, err = rows_of(cut, scen_path("tasks", "fw.elf"))
    check("a dump cut short before its 'end' line: said as a loss (its tags, names or stacks may be missing)",
          code == 0 and any(x.startswith("the dump ends without its \"end\" line") for x in (j or {}).get("losses", [])),
          "exit %d, losses %s" % (code, j and j.get("losses")))
    code, out, err = run("--batch", "-f", "text", itm, elf)
    check("-f text on an ITM capture: 'its bytes are raw ITM'", code == 2 and "its bytes are raw ITM" in err,
          "exit %d: %s" % (code, err.strip()))
    code, out, err = run("--batch", "--tpiu-id", "3", orb, elf)
    check("orbflow capture of streams 1 and 2, stream 3 asked for: says which streams there are",
          code != 0 and "only for streams 1, 2" in err, err.strip())
    r = subprocess.run([TOOL, "--batch", "-o", "json", "-", elf], input=open(itm, "rb").read(), capture_output=True)
    check("stdin source", r.returncode == 0 and json.loads(r.stdout)["total"] == len(pcs))

    # --- bad input: one clear line, non-zero exit, no crash --------------------------------------
    def bad(name, args, want_code, want_text, stdin=None):
        code, out, err = run(*args, stdin=stdin)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        check("bad input: %s" % name, code == want_code and lines and want_text in lines[0] and code < 128,
              "exit %d: %s" % (code, lines[0] if lines else "(no message)"))

    bad("missing ELF", ["--batch", uart, os.path.join(TMP, "nope.elf")], 1, "nope.elf")
    bad("not an ELF", ["--batch", uart, uart], 1, "is not an ELF file")
    bad("ELF for another machine", ["--batch", uart, TOOL], 1, "another machine")
    bad("missing source", ["--batch", os.path.join(TMP, "nope.txt"), elf], 1, "nope.txt")
    # (before: batch printed an empty report, "no samples ... (end of file; first failure: Is a directory)",
    # exit 2; the live view showed "[end of file]" and "no data from the source yet")
    for mode in (["--batch"], []):
        bad("a directory as the source%s: cannot open it, exit 1" % (" (batch)" if mode else " (live)"),
            mode + [TMP, elf], 1, "cannot open source '%s': Is a directory" % TMP)
    # (before: "exists: give --force to write over it", which --force does not)
    bad("--record naming a directory: said, no --force advice", ["--batch", "--record", TMP, uart, elf], 1,
        "--record %s is a directory: give a file's path" % TMP)
    bad("unknown option", ["--batch", "--frobnicate", uart, elf], 2, "unknown option '--frobnicate'")
    sec_uart, sec_elf = scen_path("sections", "uart.txt"), scen_path("sections", "fw.elf")
    code, out, _ = run("--batch", sec_uart, sec_elf)
    check("table: section timings, by name (or number)", code == 0 and re.search(r"^sections \(", out, re.M) and
          re.search(r"^  section 0\s+1000\s", out, re.M), out.splitlines()[-6:])
    code, out, _ = run("--batch", "-o", "json", sec_uart, sec_elf)
    check("json: integral counts are integers", code == 0 and re.search(r'"total": \d+,', out) and
          re.search(r'"samples": \d+,', out) and not re.search(r'"samples": \d+\.00', out), out[:80])
    bad("SOURCE and ELF swapped: the order named", ["--batch", elf, uart], 2, "the order is SOURCE ELF")
    # (before: 'no samples in ... itm stream', as if the ELF's bytes were a capture)
    bad("the ELF given as the source too: said, the sources named", ["--batch", elf, elf], 2,
        "is an ELF file, not a source of samples")
    bad("a serial port that is not there: --list-ports suggested", ["--batch", "/dev/ttyNOPE0", elf], 1,
        "cmprof-top --list-ports")
    code, out, err = run("--batch", "--budget", "control=1", uart, elf)
    check("--budget in batch: a warning that it checks no budget (it passed silently, as if a CI gate)",
          code == 0 and "warning: --budget is the live view's (its sections page, key t): --batch checks no budget" in err,
          "exit %d: %s" % (code, err.strip()))
    bad("a malformed --budget, in batch mode too", ["--batch", "--budget", "control=fast", uart, elf], 2,
        "NAME=MICROSECONDS")
    bad("unknown output", ["--batch", "-o", "xml", uart, elf], 2, "unknown output 'xml'")
    garbage = os.path.join(TMP, "garbage.bin")
    rnd = random.Random(1234)
    open(garbage, "wb").write(bytes(rnd.randrange(256) for _ in range(200000)))
    bad("garbage stream", ["--batch", garbage, elf], 2, "no samples in")
    bad("resolve: not an address", ["--resolve", elf, "zzz"], 1, "'zzz' is not an address")

    # truncated capture: everything before the cut still counts
    data = open(uart, "rb").read()
    cut = os.path.join(TMP, "truncated.txt")
    open(cut, "wb").write(data[: len(data) // 2 + 7])
    code, j, _ = rows_of(cut, elf)
    expect = len(pcs_of(cut))
    check("truncated capture: every complete sample counted", code == 0 and j["total"] >= expect - 8,
          "%s of %d" % (j and j["total"], expect))

    # stripped and debug-less ELFs: warnings, raw addresses or functions only
    stripped = os.path.join(TMP, "stripped.elf")
    nodebug = os.path.join(TMP, "nodebug.elf")
    subprocess.run(["arm-none-eabi-strip", "-o", stripped, elf], check=True)
    subprocess.run(["arm-none-eabi-strip", "--strip-debug", "-o", nodebug, elf], check=True)
    code, j, err = rows_of(uart, stripped)
    check("stripped ELF: warning, raw addresses", code == 0 and "no symbols" in err and
          j["rows"][0]["name"].startswith("0x"), err.strip())
    code, j, err = rows_of(uart, nodebug)
    check("ELF without DWARF: warning, functions by symbol", code == 0 and "no DWARF" in err and
          j["rows"][0]["name"] == "hot_a", err.strip())
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    hot_a = next(int(ln.split()[0], 16) for ln in nm.splitlines() if ln.endswith(" hot_a"))
    code, out, _ = run("--resolve", nodebug, "%x" % (hot_a + 2))
    check("resolve without DWARF: function, ??:?", code == 0 and out.splitlines()[1:] == ["hot_a", "??:?"],
          out.replace("\n", " | "))
    # a bad line's message comes where the line was: after the answers before it, on one terminal
    feed = "%x\nzzz\n%x\n" % (hot_a + 2, hot_a + 4)
    for extra in ([], ["-C"]):
        r = subprocess.run([TOOL, "--resolve"] + extra + [nodebug], input=feed.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        got = [ln for ln in r.stdout.decode().splitlines() if not ln.startswith("cmprof-top: warning:")]
        want = ["0x%08x" % (hot_a + 2), "hot_a", "??:?", "cmprof-top: 'zzz' is not an address",
                "0x%08x" % (hot_a + 4), "hot_a", "??:?"]
        check("resolve %s: an error line in order among the answers" % (" ".join(extra) or "(threaded)"),
              r.returncode == 1 and got == want, " | ".join(got))
    code, out, _ = run("-V")
    check("-V prints the version", code == 0 and out.startswith("cmprof-top "))
    code, out, _ = run("-h")
    check("-h prints usage", code == 0 and "--batch" in out)
    loud_wrong_elf()
    loud_quiet()
    late_join_is_no_loss()
    loud_memory_fault()
    lockstep_advice()
    overhead_by_symbol()
    no_internal_items()
    readme_is_a_guide()
    flat_stacks()
    resolve_elf_cut_short()
    resolve_nul_across_reads()
    resolve_unit_without_aranges()
    loud_unread_capture(uart, elf)
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
