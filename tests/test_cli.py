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
TMP = os.path.join(ROOT, "build", "cli-test")



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


def tpiu_frames(data, source_id=1):
    """Wrap bytes in TPIU frames: ID byte, then data; even data bytes carry bit 0 in byte 15."""
    out = bytearray(b"\xff\xff\xff\x7f")
    i = 0
    while i < len(data):
        frame = bytearray(16)
        aux = 0
        frame[0] = (source_id << 1) | 1  # ID change, aux bit 0: the new ID owns byte 1
        chunk = data[i:i + 14]
        i += 14
        chunk = chunk + b"\x00" * 0  # a short last frame is padded with ID 0 (null) data
        pos = 1
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


def main():
    os.makedirs(TMP, exist_ok=True)
    uart, elf = scen_path("loops_jitter", "uart.txt"), scen_path("loops_jitter", "fw.elf")
    if not os.path.exists(uart):
        check("scenario captures present", False, "run scenarios/scen.py run first")
        return 1

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
    bad("unknown option", ["--batch", "--frobnicate", uart, elf], 2, "unknown option '--frobnicate'")
    sec_uart, sec_elf = scen_path("sections", "uart.txt"), scen_path("sections", "fw.elf")
    code, out, _ = run("--batch", sec_uart, sec_elf)
    check("table: section timings, by name (or number)", code == 0 and re.search(r"^sections \(", out, re.M) and
          re.search(r"^  section 0\s+1000\s", out, re.M), out.splitlines()[-6:])
    code, out, _ = run("--batch", "-o", "json", sec_uart, sec_elf)
    check("json: integral counts are integers", code == 0 and re.search(r'"total": \d+,', out) and
          re.search(r'"samples": \d+,', out) and not re.search(r'"samples": \d+\.00', out), out[:80])
    bad("SOURCE and ELF swapped: the order named", ["--batch", elf, uart], 2, "the order is SOURCE ELF")
    bad("a serial port that is not there: --list-ports suggested", ["--batch", "/dev/ttyNOPE0", elf], 1,
        "cmprof-top --list-ports")
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
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
