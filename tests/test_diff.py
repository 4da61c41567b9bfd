#!/usr/bin/env python3
"""--diff and --fail-if-slower, the regression gate: two builds of the three loops where hot_b was
made 30 % slower must fail it; twenty other draws of the jitter (ten seeds of one build, and the
loops_jitter scenario's ten chunks) must not raise a false alarm; damaged baselines are refused with
the byte offset. Baselines that would mislead (another --by, absurd totals, another build, names past
512 bytes) are caught on the scenario captures first. Runs QEMU (no truth plugin). Prints one ok/FAIL line per check."""
import json
import os
import re
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
TMP = harness.scratch("diff-test")  # (-asan under the ASan tool: the two runs can go side by side)
SCEN = os.path.join(ROOT, "build", "scenarios")


def capture(name, **defs):
    """Build the loops with these options and run them: the capture and the ELF. The text goes out
    through semihosting as the scenarios' does on this board (scen.with_output), not QEMU's USART
    at two host wake-ups a byte; the samples are the same (the dump follows the sampled stretch)."""
    sc = scen.with_output(scen.scenario(name, "loops", SAMPLES=10000, CMPROF_RING_N=16384, **dict(scen.JIT, **defs)))
    elf = scen.build(sc)
    uart = os.path.join(os.path.dirname(elf), "uart.txt")
    semihosted = sc["defs"].get("BOARD_SEMIHOST_OUT")
    with open(uart if semihosted else os.devnull, "wb") as text_out:
        subprocess.run(["qemu-system-arm", "-M", scen.CORES["m4"][0], "-display", "none", "-monitor", "none", "-serial",
                        "null" if semihosted else "file:" + uart, "-semihosting-config", "enable=on,target=native",
                        "-icount", "shift=0", "-kernel", elf], check=True, timeout=120, stdout=text_out,
                       stderr=subprocess.PIPE)
    return uart, elf


JITTER_ELF = os.path.join(SCEN, "loops_jitter", "fw.elf")


def jitter_chunks():
    """The loops_jitter scenario's capture cut into its chunks, one capture each (span, dump, end) as a
    one-chunk run of the loops writes it; none when a chunk is not a whole dump of 10000 samples."""
    path = os.path.join(SCEN, "loops_jitter", "uart.txt")
    if not (os.path.exists(path) and os.path.exists(JITTER_ELF)):
        return []
    chunks = re.split(r"(?m)^(?=span=)", open(path, errors="replace").read())
    chunks = [c for c in chunks if c]
    if not all(re.match(r"span=\d+\nprof raw n=10000\n", c) and c.endswith("\nend\n") for c in chunks):
        return []
    return [save("jitter_chunk%d.txt" % k, c) for k, c in enumerate(chunks)]


def run(*args):
    r = subprocess.run([TOOL, "--batch"] + list(args), capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def scen_report(name, *args):
    """A scenario capture's JSON report, as text, and the capture and ELF it came from."""
    uart, elf = os.path.join(SCEN, name, "uart.txt"), os.path.join(SCEN, name, "fw.elf")
    code, out, err = run("-o", "json", *args, uart, elf)
    return out if code == 0 else "", uart, elf


def save(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def one_line(err):
    return len(err.strip().splitlines()) == 1


def check_other_grouping():
    text, uart, elf = scen_report("m3_loops")
    base = save("by_function.json", text)
    code, out, err = run("--diff", base, "--by", "line", "--fail-if-slower", "10", uart, elf)
    check("--diff with a baseline by function, --by line: refused in one line naming both groupings (exit 2)",
          code == 2 and one_line(err) and "by function" in err and "by line" in err, "exit %s: %s" % (code, err[:300]))
    code, out, err = run("--diff", base, "--fail-if-slower", "10", uart, elf)
    check("--diff of the same capture by the same grouping: no row grew (exit 0)", code == 0, err[:300])
    # an -o with no comparison columns: the baseline was read and the report said nothing of it (exit 0)
    for fmt in ("pprof", "folded", "callgrind", "lcov", "speedscope", "trace"):
        r = subprocess.run([TOOL, "--batch", "--diff", base, "-o", fmt, uart, elf], capture_output=True, timeout=60)
        code, out, err = r.returncode, r.stdout, r.stderr.decode(errors="replace")  # (pprof: gzip bytes)
        check("--diff with -o %s (no comparison in it): refused in one line (exit 2)" % fmt,
              code == 2 and not out and one_line(err) and "-o %s" % fmt in err, "exit %s: %s" % (code, err[:300]))
    code, out, err = run("--diff", base, "--fail-if-slower", "10", "-o", "folded", uart, elf)
    check("--diff --fail-if-slower with -o folded: the check runs, the export is written (exit 0)",
          code == 0 and len(out.splitlines()) > 1, "exit %s: %s" % (code, err[:300]))
    nogroup = save("no_group.json", re.sub(r'\n  "group": "function",', "", text, count=1))
    code, out, err = run("--diff", nogroup, uart, elf)
    check("--diff with a baseline that does not say its grouping: refused (exit 2)",
          code == 2 and one_line(err) and "group" in err, "exit %s: %s" % (code, err[:300]))


def check_build_ids():
    text, uart, elf = scen_report("stream")
    ident = json.loads(text).get("stream", {}).get("build_id", "") if text else ""
    base = save("stream.json", text)
    code, out, err = run("--diff", base, uart, elf)
    check("--diff, the same build: no build-id warning", code == 0 and ident and "build-id" not in err,
          "exit %s, id %r: %s" % (code, ident, err[:300]))
    other = ("0" if ident[:1] != "0" else "1") + ident[1:]
    base = save("other_build.json", text.replace('"build_id": "%s"' % ident, '"build_id": "%s"' % other))
    code, out, err = run("--diff", base, uart, elf)
    check("--diff, a baseline of another build: one warning naming both build-ids, the report still made (exit 0)",
          code == 0 and ident and other in err and ident in err and "warning" in err and out.strip(),
          "exit %s: %s" % (code, err[:300]))


def check_absurd_numbers():
    text, uart, elf = scen_report("m3_loops")
    lines = text.splitlines(True)
    total_line = next((k + 1 for k, ln in enumerate(lines) if ln.startswith('  "total"')), 0)
    row_line = next((k + 1 for k, ln in enumerate(lines) if '"samples": ' in ln and '"name"' in ln), 0)
    row_samples = re.compile(r'"samples": [0-9.]+')
    cases = (("a total of 1 under rows of thousands", re.sub(r'"total": [0-9.]+', '"total": 1', text, count=1),
              total_line),
             ("a negative row count", "".join(row_samples.sub('"samples": -5', ln, count=1) if k + 1 == row_line
                                              else ln for k, ln in enumerate(lines)), row_line),
             ("a count past 2^53", "".join(row_samples.sub('"samples": 1e300', ln, count=1) if k + 1 == row_line
                                           else ln for k, ln in enumerate(lines)), row_line),
             ("a total past 2^53", re.sub(r'"total": [0-9.]+', '"total": 18446744073709551616', text, count=1),
              total_line))
    for name, body, line in cases:
        base = save("absurd.json", body)
        code, out, err = run("--diff", base, "--fail-if-slower", "10", uart, elf)
        check("--diff with %s: refused in one line naming the file and line %d (exit 2)" % (name, line),
              line and code == 2 and one_line(err) and ("%s line %d:" % (base, line)) in err,
              "exit %s: %s" % (code, err[:300]))


def check_extra_reports():
    """A baseline holding more than one report's rows: a copied row would count twice (a false
    regression), trailing data or a second report would be read as the first alone."""
    text, uart, elf = scen_report("m3_loops")
    lines = text.splitlines(True)
    row_line = next((k + 1 for k, ln in enumerate(lines) if '"samples": ' in ln and '"name"' in ln), 0)
    dup = lines[:row_line] + [lines[row_line - 1]] + lines[row_line:] if row_line else lines
    # the total raised by the copy's samples, so the rows still add up to it
    copied = float(re.search(r'"samples": ([0-9.]+)', lines[row_line - 1]).group(1)) if row_line else 0
    total = float(re.search(r'"total": ([0-9.]+)', text).group(1))
    dup = re.sub(r'"total": [0-9.]+', '"total": %.15g' % (total + copied), "".join(dup), count=1)
    cases = (("a row given twice (the total raised to match)", dup, row_line + 1, "a second row named"),
             ("two reports run together", text + text, len(lines) + 1, "a second report"),
             ("trailing data after the report", text + "garbage\n", len(lines) + 1, "data after the end"))
    for name, body, line, want in cases:
        base = save("extra.json", body)
        code, out, err = run("--diff", base, "--fail-if-slower", "10", uart, elf)
        check("--diff with %s: refused in one line naming the file and line %d (exit 2)" % (name, line),
              row_line and code == 2 and one_line(err) and ("%s line %d:" % (base, line)) in err and want in err,
              "exit %s: %s" % (code, err[:300]))


LONG_APP = """
volatile unsigned sink;
__attribute__((noinline)) void %s(void) { for (unsigned i = 0; i < 100; i++) sink += i; }
__attribute__((noinline)) void short_one(void) { sink++; }
void Reset_Handler(void) { for (;;) { %s(); short_one(); } }
"""


def check_long_names():
    name = "f_" + "long_name_" * 70  # 702 bytes
    src = save("long.c", LONG_APP % (name, name))
    elf = os.path.join(TMP, "long.elf")
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O1", "-g", "-nostdlib", "-Wl,-Ttext=0x08000000",
                    "-Wl,-e,Reset_Handler", src, "-o", elf], check=True)
    syms = {}
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        parts = ln.split()
        syms[parts[-1]] = int(parts[0], 16)
    pcs = ["%08x" % syms[name]] * 300 + ["%08x" % syms["short_one"]] * 100
    lines = "".join("p %s\n" % " ".join(pcs[k:k + 8]) for k in range(0, len(pcs), 8))  # as the firmware writes them
    cap = save("long.txt", "prof raw n=%d\n%send\n" % (len(pcs), lines))
    code, out, err = run("-o", "json", cap, elf)
    base = save("long.json", out)
    code, out, err = run("--diff", base, "--fail-if-slower", "10", cap, elf)
    check("--diff of a capture against itself with a %d-byte function name: no row grew (exit 0)" % len(name),
          code == 0 and not err.strip(), "exit %s: %s" % (code, err[:200]))
    code, out, err = run("--diff", base, "-o", "json", cap, elf)
    rows = json.loads(out).get("rows", []) if code == 0 else []
    check("... and the long name's row has its baseline share (75 %)",
          any(r["name"] == name and abs(r.get("base_percent", 0) - 75) < 1e-6 for r in rows), str(rows)[:200])


def check_other_program():
    """A baseline of another program (no row name in common): said in one warning with how little the
    two share; a row the baseline lacks is said to be new, not "+100 %" as if it had doubled."""
    text, uart, elf = scen_report("m3_loops")
    foreign = save("other_program.json", re.sub(r'"name": "', '"name": "other_', text))
    code, out, err = run("--diff", foreign, "--fail-if-slower", "10", uart, elf)
    check("--diff, a baseline of another program: a warning that says how little the rows share (exit 3)",
          code == 3 and "0.0 % of this capture's samples" in err and "another program" in err,
          "exit %s: %s" % (code, err[:400]))
    check("--fail-if-slower, a row the baseline lacks: said to be new, not grown by +100 %",
          "hot_a is new: 69.39 %" in err and "+100 %" not in err, err[:400])
    code, out, err = run("--diff", save("m3.json", text), uart, elf)
    check("--diff, the same program: no such warning", code == 0 and "another program" not in err, err[:300])


def check_stripped_elf():
    """The right build's ELF, stripped, against a baseline made with symbols: every row a raw address
    compared with named rows. It exited 3 naming 24 addresses as new (a slowdown in CI for a packaging
    mistake); now refused in one line (exit 2, as a baseline of another --by), and the other way round."""
    text, uart, elf = scen_report("m3_loops")
    base = save("named.json", text)
    stripped = os.path.join(TMP, "stripped.elf")
    subprocess.run(["arm-none-eabi-strip", "-o", stripped, elf], check=True)
    code, out, err = run("--diff", base, "--fail-if-slower", "10", uart, stripped)
    check("--diff --fail-if-slower, a stripped ELF against a baseline with names: refused in one line (exit 2)",
          code == 2 and one_line(err) and "stripped" in err and "is new" not in err and not out,
          "exit %s: %s" % (code, err[:300]))
    code, by_task, err = run("-o", "json", "--by", "task", uart, elf)
    code, out, err = run("--diff", save("by_task.json", by_task), "--by", "task", uart, stripped)
    check("--diff --by task, a stripped ELF: compared (tasks are named by the stream), exit 0",
          code == 0 and "every row would compare" not in err, "exit %s: %s" % (code, err[:300]))
    code, raw, err = run("-o", "json", uart, stripped)
    code, out, err = run("--diff", save("raw.json", raw), "--fail-if-slower", "10", uart, elf)
    check("--diff --fail-if-slower, a baseline of raw addresses against the ELF with symbols: refused (exit 2)",
          code == 2 and one_line(err) and "raw addresses" in err and not out, "exit %s: %s" % (code, err[:300]))
    code, out, err = run(uart, stripped)
    check("--batch on a stripped ELF: stderr says it is stripped and which ELF to give (exit 0)",
          code == 0 and "(stripped?)" in err and "the linker wrote" in err, "exit %s: %s" % (code, err[:300]))


def check_misleading_baselines():
    """Baselines that would make --diff lie, on the scenario captures (no QEMU)."""
    check_other_grouping()
    check_build_ids()
    check_other_program()
    check_stripped_elf()
    check_absurd_numbers()
    check_extra_reports()
    check_long_names()


def main():
    os.makedirs(TMP, exist_ok=True)
    check_misleading_baselines()
    if "--baselines-only" in sys.argv[1:]:  # the checks above alone, without the QEMU runs
        return 1 if harness.failed else 0
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

    # twenty other draws of the jitter: ten seeds of this build, run here, and the ten chunks of the
    # loops_jitter scenario (the same loops, period, jitter and sample count; one QEMU run for all ten)
    # (each seed's capture is judged before the next seed's run writes over it)
    alarms, draws = [], [("seed %d" % seed, "diff_seed", seed) for seed in range(2, 12)]
    draws += [("loops_jitter chunk %d" % k, uart, None) for k, uart in enumerate(jitter_chunks())]
    for what, uart, seed in draws:
        uart, elf = capture(uart, SEED=seed) if seed else (uart, JITTER_ELF)
        code, out, err = run("--diff", base, "--fail-if-slower", "10", uart, elf)
        if code != 0:
            alarms.append("%s: exit %d %s" % (what, code, err.strip()))
    check("no false alarm over 20 other draws of the jitter (10 seeds of the same build, loops_jitter's 10 chunks)",
          len(draws) == 20 and not alarms, "%d draws; %s" % (len(draws), "; ".join(alarms)[:400]))

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
