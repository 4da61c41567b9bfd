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


def main():
    os.makedirs(TMP, exist_ok=True)
    if not os.path.exists(elf_of("hist_16")):
        check("scenario ELFs present", False, "run scenarios/scen.py run first")
        return 1
    test_big_histogram_buckets()
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
