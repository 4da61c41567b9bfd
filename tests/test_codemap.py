#!/usr/bin/env python3
"""A wrong ELF found from the sampled addresses alone (no build-id needed): a PC a core reports is
where an instruction starts, so PCs inside 32-bit instructions, in literal pools or in padding say
the capture is of another build. Never on the right ELF: every scenario capture against its own
ELF. Always on a wrong one: captures read against the ELF of another program linked at the same
base, from the scenarios and from two builds made here. Prints one ok/FAIL line per check.
    test_codemap.py [--matrix]   --matrix: also count every such crossing of the scenarios"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import harness  # noqa: E402
from harness import check  # noqa: E402
import scen  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
SCEN = os.path.join(ROOT, "build", "scenarios")
TMP = harness.scratch("codemap-test")  # (-asan under the ASan tool: the two runs can go side by side)
WARNING = "not where any of its instructions starts"
BUCKET_WARNING = "histogram buckets with samples hold none of its instructions' starts"

# (capture, ELF): programs of other scenarios linked at the same base, where no other check of the
# tool speaks: Cortex-M3/M4 at 0x08000000, the AN385 at 0, Thumb code on a Cortex-A15, a capture
# of a halting source
CROSSINGS = (("m3_loops", "stream"), ("tasks", "stream"), ("loops_jitter", "irqoff_short"),
             ("handler_lower", "tasks"), ("an385_loops_dualtimer", "rtos"),
             ("a15_loops_thumb", "a15_stream_tagged"), ("gdb_tasks", "stream"))


def capture_of(name):
    """A scenario's capture: the halting ones keep theirs in gdb.rec."""
    rec = os.path.join(SCEN, name, "gdb.rec")
    return rec if os.path.exists(rec) else os.path.join(SCEN, name, "uart.txt")


def report(cap, elf, *args):
    """The JSON report ({} when there is none), and stderr."""
    r = subprocess.run([TOOL, "--batch", "-o", "json"] + list(args) + [cap, elf], capture_output=True, text=True,
                       timeout=60)
    try:
        return json.loads(r.stdout), r.stderr
    except ValueError:
        return {}, r.stderr


def flagged(doc, err, warning=WARNING):
    """The check's three voices: the JSON field, the diagnostic, the stderr warning."""
    cc = doc.get("code_check") or {}
    return (cc.get("wrong_elf") is True, any(warning in d for d in doc.get("diagnostics", [])),
            sum(warning in ln and "warning" in ln for ln in err.splitlines()) == 1)


def right_elfs():
    """Every scenario capture with PC samples against its own ELF: checked, no PC off a start."""
    seen, hists, bad = 0, 0, []
    for name in sorted(os.listdir(SCEN)):
        for cap in ("uart.txt", "gdb.rec"):
            path = os.path.join(SCEN, name, cap)
            if not os.path.exists(path):
                continue
            doc, err = report(path, os.path.join(SCEN, name, "fw.elf"))
            if not doc.get("total"):
                continue  # no samples
            hist = scen.SCENARIOS.get(name, {}).get("defs", {}).get("CMPROF_HIST")
            seen += 1
            hists += bool(hist)
            cc = doc.get("code_check") or {}
            if not cc or cc.get("bad_pcs") != 0 or any(flagged(doc, err)) or any(flagged(doc, err, BUCKET_WARNING)):
                bad.append("%s/%s: %s" % (name, cap, cc or "no code_check"))
    check("never on the right ELF: %d scenario captures (%d of histogram buckets), each PC an instruction start "
          "(each bucket with samples holds one), no warning" % (seen, hists), seen >= 40 and hists >= 10 and not bad,
          "; ".join(bad)[:400])


def crossings():
    for cap_of, elf_of in CROSSINGS:
        elf = os.path.join(SCEN, elf_of, "fw.elf")
        doc, err = report(capture_of(cap_of), elf)
        cc = doc.get("code_check") or {}
        check("%s's capture read with %s's ELF (same base): flagged in JSON, diagnostics and on stderr"
              % (cap_of, elf_of), all(flagged(doc, err)) and doc.get("total", 0) > 0,
              "%s %s" % (cc, err.strip()[:200]))
    # a histogram capture (buckets, no build-id in the dump) read with another program linked at the
    # same base: its hot buckets lie on the other's literal pools (it exited 0 with a plausible profile)
    r = subprocess.run([TOOL, "--batch", "-o", "json", capture_of("hist_4"), os.path.join(SCEN, "tasks", "fw.elf")],
                       capture_output=True, text=True, timeout=60)
    doc = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    check("hist_4's histogram read with tasks' ELF (same base): flagged in JSON, diagnostics and on stderr, exit 5",
          all(flagged(doc, r.stderr, BUCKET_WARNING)) and r.returncode == 5 and
          (doc.get("code_check") or {}).get("buckets") is True,
          "exit %s, %s %s" % (r.returncode, doc.get("code_check"), r.stderr.strip()[:300]))
    # --duration reads the file as a live source would, without a screen: the same report and warning
    doc, err = report(capture_of(CROSSINGS[0][0]), os.path.join(SCEN, CROSSINGS[0][1], "fw.elf"), "--duration", "60")
    check("the same, read as a live source without a screen (--batch --duration): flagged the same three ways",
          all(flagged(doc, err)), "%s %s" % (doc.get("code_check"), err.strip()[:200]))


APP = """
volatile unsigned sink[8];
#define WORK(n) __attribute__((noinline)) void work##n(unsigned k) { \\
    for (unsigned i = 0; i < k; i++) sink[(i + n) & 7] += i * %s + (sink[n & 7] >> %d); }
WORK(0) WORK(1) WORK(2) WORK(3) WORK(4) WORK(5)
void Reset_Handler(void) { for (;;) { work0(100); work1(200); work2(300); work3(40); work4(50); work5(60); } }
"""


def build_pair():
    """Two builds of one program that differ in their arithmetic, linked at the same base."""
    elfs = []
    for k, (mul, shift) in enumerate((("3u", 2), ("0x12345u", 9))):
        src = os.path.join(TMP, "app%d.c" % k)
        with open(src, "w") as f:
            f.write(APP % (mul, shift))
        elf = os.path.join(TMP, "app%d.elf" % k)
        subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-g", "-nostdlib",
                        "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler", src, "-o", elf], check=True)
        elfs.append(elf)
    return elfs


def starts_of(elf):
    """Every instruction's address in a function, as objdump disassembles the ELF (not .word lines,
    literal pools, nor the padding after a function: no core runs those)."""
    nm = subprocess.run(["arm-none-eabi-nm", "-S", elf], capture_output=True, text=True, check=True).stdout
    funcs = [(int(a, 16) & ~1, int(a, 16) + int(n, 16)) for a, n, t, _ in (ln.split() for ln in nm.splitlines()
                                                                            if len(ln.split()) == 4) if t in "Tt"]
    out = subprocess.run(["arm-none-eabi-objdump", "-d", elf], capture_output=True, text=True, check=True).stdout
    lines = re.finditer(r"^\s+([0-9a-f]+):\s+[0-9a-f]{4}(?: [0-9a-f]{4})?\s+(\S+)", out, re.M)
    return [a for a, op in ((int(m.group(1), 16), m.group(2)) for m in lines)
            if not op.startswith(".") and any(lo <= a < hi for lo, hi in funcs)]


def built_pair():
    a, b = build_pair()
    pcs = starts_of(a)
    pcs = [pc for k, pc in enumerate(pcs) for _ in range(1 + k % 5)]  # uneven, as a profile is
    lines = "".join("p %s\n" % " ".join("%08x" % pc for pc in pcs[k:k + 8]) for k in range(0, len(pcs), 8))
    cap = os.path.join(TMP, "app0.txt")
    with open(cap, "w") as f:
        f.write("prof raw n=%d\n%send\n" % (len(pcs), lines))
    doc, err = report(cap, a)
    cc = doc.get("code_check") or {}
    check("every instruction start of a build (%d places), read with that build: checked, none off a start"
          % len(set(pcs)), cc.get("pcs") == len(set(pcs)) and cc.get("bad_pcs") == 0 and not any(flagged(doc, err)),
          "%s %s" % (cc, err.strip()[:200]))
    doc, err = report(cap, b)
    check("... read with the other build at the same base: flagged", all(flagged(doc, err)),
          "%s %s" % (doc.get("code_check"), err.strip()[:200]))


def live_screen(cap, elf, want):
    """The live view's screen once want(screen) holds (the whole of what the caller judges: a capture
    may catch a redraw half written), or what it shows after 60 s (a deadline generous enough for a
    loaded machine: a screen that shows it returns at once)."""
    s = "cmprof-codemap"
    tmux = ["tmux", "-L", "cmprof-codemap-%d" % os.getpid()]  # a server of its own: no other run's sessions
    subprocess.run(tmux + ["kill-session", "-t", s], capture_output=True)
    subprocess.run(tmux + ["new-session", "-d", "-s", s, "-x", "120", "-y", "30", "%s %s %s; sleep 60" % (TOOL, cap, elf)],
                   check=True)
    end, text = time.time() + 60, ""
    while time.time() < end and not want(text):
        time.sleep(0.2)
        text = subprocess.run(tmux + ["capture-pane", "-p", "-t", s], capture_output=True, text=True).stdout
    subprocess.run(tmux + ["kill-session", "-t", s], capture_output=True)
    harness.tmux_socket_gone(tmux[2])
    return text


def live_header():
    cap = capture_of("m3_loops")
    def flagged(text):
        first = text.splitlines()[:4]
        return len(first) == 4 and first[0].startswith("cmprof-top ") and "WRONG ELF?" in first[0] and \
            WARNING in first[3]

    text = live_screen(cap, os.path.join(SCEN, "stream", "fw.elf"), flagged)
    check("live view, the wrong ELF: the header says WRONG ELF? and the diagnostic line why", flagged(text),
          " / ".join(text.splitlines()[:4]))
    text = live_screen(cap, os.path.join(SCEN, "m3_loops", "fw.elf"), lambda t: re.search(r"^samples 10000 ", t, re.M))
    first = text.splitlines()[:4]
    check("live view, the right ELF: all samples in, no such notice",
          len(first) == 4 and "samples 10000" in first[1] and "WRONG ELF" not in text and WARNING not in text,
          " / ".join(first))


def matrix():
    """Every capture against every ELF of another program at the same base: how many are flagged."""
    def base(elf):
        out = subprocess.run(["arm-none-eabi-readelf", "-l", elf], capture_output=True, text=True).stdout
        m = re.search(r"LOAD\s+\S+\s+(\S+)", out)
        return m.group(1) if m else None
    names = sorted(n for n in os.listdir(SCEN) if n in scen.SCENARIOS)
    bases = {n: base(os.path.join(SCEN, n, "fw.elf")) for n in names}
    pairs = starts = others = either = 0
    hist_pairs = hist_wrong = hist_buckets = 0  # of them, histogram captures: any wrong-ELF sign, the buckets' check
    for c in names:
        doc, _ = report(capture_of(c), os.path.join(SCEN, c, "fw.elf"))
        if not doc.get("code_check") or not doc.get("total"):
            continue
        for e in names:
            if scen.SCENARIOS[e]["app"] == scen.SCENARIOS[c]["app"] or bases[e] != bases[c]:
                continue
            doc, err = report(capture_of(c), os.path.join(SCEN, e, "fw.elf"))
            mine = (doc.get("code_check") or {}).get("wrong_elf") is True
            other = any("wrong ELF" in d and WARNING not in d for d in doc.get("diagnostics", []))
            pairs += 1
            starts += mine
            others += other
            either += mine or other
            if scen.SCENARIOS[c].get("defs", {}).get("CMPROF_HIST"):
                hist_pairs += 1
                hist_wrong += (doc.get("code_check") or {}).get("wrong_elf") is True
                hist_buckets += (doc.get("code_check") or {}).get("not_starts") is True
    print("matrix: %d crossings of different programs at one base; flagged by the instruction starts %d, by the "
          "other wrong-ELF checks %d, by either %d; of them histogram captures %d: a wrong ELF said (exit 5) %d, by "
          "their buckets %d" % (pairs, starts, others, either, hist_pairs, hist_wrong, hist_buckets))


def main():
    os.makedirs(TMP, exist_ok=True)
    if not os.path.isdir(SCEN) or not os.listdir(SCEN):
        check("scenario ELFs present", False, "run scenarios/scen.py run first")
        return 1
    right_elfs()
    crossings()
    built_pair()
    live_header()
    if "--matrix" in sys.argv[1:]:
        matrix()
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
