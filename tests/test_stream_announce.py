#!/usr/bin/env python3
"""The stream's announce against its lines: sample lines of another version than the announce
(version 3 lines after a version 2 announce, version 2 or version 1 "~" lines under a version 3
one) are named as such, never decoded into wrong PCs and blamed on the ELF; a newer announce
(v=10) says the firmware is newer than this host; announced numbers out of range (a period of
2^64-1 ticks, a 1 Hz clock, 64-bit section figures) are refused by name, and no report turns
them into negative or huge figures.
Prints one ok/FAIL line per check."""
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402

B64, line, check = harness.B64, harness.stream_line, harness.check

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
ELF = os.path.join(ROOT, "build", "scenarios", "tasks", "fw.elf")
TMP = harness.scratch("stream-announce-test")  # (-asan under the ASan tool: the two runs can go side by side)
BASE = 0x08000164
V2 = line("@cmprof v=2 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)
V3 = line("@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)
V6 = line("@cmprof v=6 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)


def crc12(text):
    """Version 1's check: CRC-12, polynomial 0x80F, MSB first, as "~CC"."""
    crc = 0
    for byte in text.encode():
        for bit in range(7, -1, -1):
            top = (crc >> 11) ^ ((byte >> bit) & 1)
            crc = ((crc << 1) & 0xFFF) ^ (0x80F if top else 0)
    return "%s~%s%s\n" % (text, B64[crc >> 6], B64[crc & 63])


STARTS = []


def pcs(version, n, rnd):
    """n sample PCs among the instructions of the ELF's first 0x60 bytes, in a version's alphabet."""
    STARTS[:] = STARTS or harness.instruction_starts(ELF, BASE, BASE + 0x60)
    out = ""
    for _ in range(n):
        off = rnd.choice(STARTS)
        if version == 6:  # 3 chars '?' + 6 bits
            out += "".join(chr(63 + v) for v in ((off >> 12) & 63, (off >> 6) & 63, off & 63))
            continue
        out += "".join((chr(48 + v) if version == 3 else B64[v]) for v in
                       ((off >> 18) & 63, (off >> 12) & 63, (off >> 6) & 63, off & 63))
    return out


def lines(version, count, seed, v1_check=False):
    rnd = random.Random(seed)
    mk = crc12 if v1_check else line
    return "".join(mk("$" + pcs(version, 16, rnd)) for _ in range(count))


def run(text, name, fmt="json"):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([TOOL, "--batch", "-o", fmt, path, ELF], capture_output=True, timeout=60)
    out = r.stdout.decode(errors="replace") if fmt != "pprof" else r.stdout
    try:
        j = json.loads(out) if fmt == "json" else {}
    except ValueError:
        j = {}
    return r.returncode, j, out, r.stderr.decode(errors="replace")


def other_versions():
    cases = (("v3 lines after a v2 announce", V2 + lines(2, 10, 1) + lines(3, 40, 2), 3, 2),
             ("v2 lines under a v3 announce", V3 + lines(3, 10, 3) + lines(2, 40, 4), 2, 3),
             ("v1 lines under a v3 announce", V3 + lines(3, 10, 5) + lines(2, 40, 6, v1_check=True), 1, 3),
             ("v3 lines under a v6 announce", V6 + lines(6, 10, 12) + lines(3, 40, 13), 3, 6))
    for label, text, other, announced in cases:
        code, j, out, err = run(text, label + ".txt")
        _, ref, _, _ = run(text[:text.index("\n", text.index("\n") + 1)] + "\n" + "".join(
            ln + "\n" for ln in text.splitlines()[2:11]), label + " ref.txt")  # the announced version's lines only
        want = "40 sample lines of stream version %d under a version %d announce not decoded" % (other, announced)
        losses = j.get("losses", [])
        check("%s: the 160 samples of the announced version, none of the other" % label,
              code == 0 and j.get("total") == 160, "exit %d, %s samples: %s" % (code, j.get("total"), err[-300:]))
        check("%s: the report names the version mismatch" % label,
              any(x.startswith(want) for x in losses), losses)
        diags = j.get("diagnostics", [])
        check("%s: the rows and diagnostics of the announced version's lines alone (no wrong-ELF blame), nothing "
              "called malformed" % label, j.get("rows") == ref.get("rows") and diags == ref.get("diagnostics") and
              ref.get("total") == 160 and not any("malformed" in x for x in losses), diags + losses)
    # nothing but the other version's samples: the no-samples line says why
    code, j, out, err = run(V2 + lines(3, 20, 7), "only other.txt", "table")
    check("only v3 lines after a v2 announce: no samples, and the one line says the versions disagree",
          code != 0 and "of another stream version than its announce" in err and "cmprof_start" not in err, err)


def newer_firmware():
    v4 = line("@cmprof v=10 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE)
    code, j, out, err = run(v4 + lines(3, 5, 8), "v4.txt", "table")
    check("a v=10 announce: a newer firmware than this host understands, not a malformed line",
          code != 0 and "newer firmware than this host understands" in err and "malformed" not in err.split(";")[0]
          .split("(")[-1].replace("0 malformed", ""), err)
    code, j, out, err = run(v4 + lines(3, 5, 8) + V3 + lines(3, 5, 9), "v4 then v3.txt")
    losses = j.get("losses", [])
    check("a v=10 announce, then a v=3 one: the v3 samples decode, the report names the newer version and its lines",
          code == 0 and j.get("total") == 80 and
          any("announces version 10: a newer firmware than this host understands" in x and "5 of its sample lines" in x
              for x in losses) and not any("malformed" in x for x in losses), "%s %s" % (j.get("total"), losses))


def refused_numbers():
    absurd = (("period=18446744073709551615", "period"), ("clk=1 tclk=1 period=18446744073709551615 jitter=0", "clk"),
              ("tclk=1000 period=4294967295", "period"), ("clk=99999999999", "clk"),
              ("jitter=18446744073709551615", "jitter"), ("tclk=10", "tclk"))
    for fields, first in absurd:
        ann = "@cmprof v=3 clk=1000 tclk=1000 period=10 jitter=1023 base=%08x" % BASE
        for f in fields.split():  # the absurd values replace the good ones
            key = f.split("=")[0]
            ann = re.sub(r"(?<= )%s=\d+" % key, f, ann)
        text = V3 + lines(3, 5, 10) + line(ann) + lines(3, 5, 11) + \
            line("@sect 0 n=1 cur=18446744073709551615 min=1 max=18446744073709551615 sum=18446744073709551615")
        code, j, out, err = run(text, "absurd %s.txt" % fields.split()[0])
        losses = j.get("losses", [])
        check("announce with %s: refused by name, the first announce's numbers kept" % fields,
              code == 0 and j.get("total") == 160 and j.get("stream", {}).get("period") == 10 and
              j.get("stream", {}).get("timer_hz") == 1000 and
              any(x.startswith("1 announce lines refused: %s=" % first) for x in losses), "%s | %s" % (
                  j.get("stream"), losses))
        check("announce with %s: the 64-bit section figures are refused" % fields,
              not j.get("sections"), j.get("sections"))
    # only the absurd announce: no samples, the line names the field
    code, j, out, err = run(line("@cmprof v=3 clk=1 tclk=1 period=18446744073709551615 jitter=0 base=%08x" % BASE) +
                            lines(3, 5, 12), "absurd only.txt", "table")
    check("only an absurd announce: no samples, the field named on stderr",
          code != 0 and "announce was refused: clk=1 is out of range" in err, err)
    # pprof of a stream whose re-announce was absurd: a positive period and duration
    code, j, data, err = run(V3 + lines(3, 5, 13) + line("@cmprof v=3 clk=1000 tclk=1 period=18446744073709551615 "
                                                          "jitter=0 base=%08x" % BASE), "absurd pprof.txt", "pprof")
    path = os.path.join(TMP, "absurd.pb.gz")
    with open(path, "wb") as f:
        f.write(data)
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), GOFLAGS="-mod=mod", GOPROXY="off",
               GOTOOLCHAIN="local", PPROF_TMPDIR=TMP)
    try:
        r = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, timeout=120, env=env, cwd=TMP)
        raw = r.stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        raw = str(e)
    period = re.search(r"^Period: (-?\d+)$", raw, re.M)
    duration = re.search(r"^Duration: (\S+)", raw, re.M)
    check("pprof after an absurd re-announce: the first announce's period ((10 + 1023 / 2) / 1 kHz), a positive "
          "duration", code == 0 and period and int(period.group(1)) == 521500000 and duration and "-" not in duration.group(1),
          raw[:300] + err)


def main():
    os.makedirs(TMP, exist_ok=True)
    if not check("the tasks scenario's ELF is built", os.path.exists(ELF), ELF):
        sys.exit(1)
    other_versions()
    newer_firmware()
    refused_numbers()
    sys.exit(1 if harness.failed else 0)


if __name__ == "__main__":
    main()
