#!/usr/bin/env python3
"""Seeds made from the scenario captures (build/scenarios) for the fuzz targets that take a built
stream or a report: python3 fuzz/seeds.py TARGET DIR. Each seed starts with the bytes its target's
LLVMFuzzerTestOneInput reads first (see fuzz/fuzz_TARGET.c). The hand-made seeds are the files in
fuzz/seeds/TARGET/; scripts/fuzz.sh copies those itself."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from test_cli import itm_stream, orbflow_frames, pcs_of, tpiu_frames  # noqa: E402

SCEN = os.path.join(ROOT, "build", "scenarios")
CAPTURES = ("loops_jitter", "m3_loops", "m0_loops", "tasks", "stream_tagged", "sections", "rtos")
MAX = 60000  # under fuzz.sh's -max_len


def captures():
    for name in CAPTURES:
        uart = os.path.join(SCEN, name, "uart.txt")
        if os.path.exists(uart):
            yield name, uart


def streams(uart, n):
    """The capture's first n PC samples as ITM, TPIU and orbflow, and its text as it came."""
    pcs = pcs_of(uart)[:n]
    text = open(uart, "rb").read()[:MAX // 4]
    yield "text", text
    if pcs:
        yield "itm", itm_stream(pcs)
        yield "tpiu", tpiu_frames(itm_stream(pcs))
        yield "orbflow", orbflow_frames(itm_stream(pcs), size=60)


def write(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data[:MAX])


def orbflow(out):
    for name, uart in captures():
        pcs = pcs_of(uart)[:1500]
        if pcs:  # [tag][piece], then the frames; and after a run of zeros
            write(out, name + ".orbflow", bytes([1, 7]) + orbflow_frames(itm_stream(pcs), size=80))
            write(out, name + "-zeros.orbflow", bytes([1, 0]) + b"\0" * 300 + orbflow_frames(itm_stream(pcs[:200])))


def record(out):
    for name, uart in captures():
        for fmt, data in streams(uart, 2000):
            # [format: auto][piece: 17 bytes * 9][pause: none][cut: none], then the recording
            write(out, "%s.%s" % (name, fmt), bytes([0, 9, 0xFF, 0xFF]) + data)
            write(out, "%s-paused-cut.%s" % (name, fmt), bytes([0, 1, 40, 200]) + b"\0" * 64 + data[:5000])


def baseline(out):
    tool = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
    for name, uart in captures():
        elf = os.path.join(SCEN, name, "fw.elf")
        for by in ("function", "line", "file", "task"):
            r = subprocess.run([tool, "--batch", "-o", "json", "--by", by, uart, elf], capture_output=True)
            if r.returncode == 0 and r.stdout:
                write(out, "%s-%s.json" % (name, by), r.stdout)


if __name__ == "__main__":
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    {"orbflow": orbflow, "record": record, "baseline": baseline}[target](out)
