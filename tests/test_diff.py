#!/usr/bin/env python3
"""--diff and --fail-if-slower, the regression gate: two builds of the three loops where hot_b was
made 30 % slower must fail it; twenty runs of one build with other jitter seeds must not raise a
false alarm; damaged baselines are refused with the byte offset. Runs QEMU (no truth plugin).
Prints one ok/FAIL line per check."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import harness  # noqa: E402
from harness import check  # noqa: E402
import scen  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
TMP = os.path.join(ROOT, "build", "diff-test")


def capture(name, **defs):
    """Build the loops with these options and run them: the UART capture and the ELF."""
    sc = scen.scenario(name, "loops", SAMPLES=10000, CMPROF_RING_N=16384, **dict(scen.JIT, **defs))
    elf = scen.build(sc)
    uart = os.path.join(os.path.dirname(elf), "uart.txt")
    subprocess.run(["qemu-system-arm", "-M", scen.CORES["m4"][0], "-display", "none", "-monitor", "none", "-serial",
                    "file:" + uart, "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
                    "-kernel", elf], check=True, timeout=120, capture_output=True)
    return uart, elf


def run(*args):
    r = subprocess.run([TOOL, "--batch"] + list(args), capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def main():
    os.makedirs(TMP, exist_ok=True)
    base_uart, base_elf = capture("diff_base", SEED=1)
    base = os.path.join(TMP, "base.json")
    code, out, err = run("-o", "json", base_uart, base_elf)
    open(base, "w").write(out)
    check("baseline report written", code == 0, err.strip())

    slow_uart, slow_elf = capture("diff_slower", SEED=1, HOT_B_N=260)
    code, out, err = run("--diff", base, "--fail-if-slower", "10", slow_uart, slow_elf)
    check("a build with hot_b 30 % slower fails --fail-if-slower 10, naming hot_b (exit 3)",
          code == 3 and "hot_b grew from" in err and "hot_a grew" not in err, err.strip())
    code, out, err = run("--diff", base, slow_uart, slow_elf)
    row = [ln for ln in out.splitlines() if " hot_b " in ln]
    check("--diff alone: the change shown, marked significant, exit 0", code == 0 and row and "*" in row[0],
          row[0] if row else out[:200])

    alarms = []
    for seed in range(2, 22):
        uart, elf = capture("diff_seed", SEED=seed)
        code, out, err = run("--diff", base, "--fail-if-slower", "10", uart, elf)
        if code != 0:
            alarms.append("seed %d: exit %d %s" % (seed, code, err.strip()))
    check("no false alarm over 20 other seeds of the same build", not alarms, "; ".join(alarms)[:400])

    damaged = os.path.join(TMP, "damaged.json")
    text = open(base).read()
    cut = text.index('"rows"') + 20
    for name, body, want in (("cut short", text[:cut], "at byte offset"), ("not JSON", "samples 1000\n", "not a JSON"),
                             ("nested too deep", '{"total": 1, "x": ' + "[" * 100000, "nested too deep"), ("no rows", '{"total": 5}', "no \"total\"")):
        open(damaged, "w").write(body)
        code, out, err = run("--diff", damaged, base_uart, base_elf)
        check("--diff with a damaged baseline (%s): refused in one line" % name,
              code == 2 and want in err and len(err.strip().splitlines()) == 1, err.strip()[:200])
    code, out, err = run("--fail-if-slower", "10", base_uart, base_elf)
    check("--fail-if-slower without --diff: refused", code == 2 and "--diff" in err, err.strip())
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
