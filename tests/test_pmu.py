#!/usr/bin/env python3
"""firmware/cmprof_pmu.h, the Cortex-A/R PMU API (issue 10, first part): it builds with -Werror for
ARMv7-A and -R in ARM and Thumb state and refuses Cortex-M; on QEMU's virt board (Cortex-A15 and
Cortex-A7, -icount shift=0, one instruction per cycle) a bare-metal program (tests/pmu/pmu_virt.c)
measures loops of exactly two instructions per iteration: the cycle counter and INST_RETIRED must
grow by exactly 2 per iteration, PMCR.D must divide by 64, an overflow must set its flag, reset and
stop must work. Prints ok/FAIL lines."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from harness import check  # noqa: E402
import harness  # noqa: E402

OUT = os.path.join(ROOT, "build", "pmu-test")
GCC = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-g", "-I" + os.path.join(ROOT, "firmware"),
       "-I" + os.path.join(ROOT, "scenarios", "board")]
# bare metal on QEMU virt: scenarios/board/board_virt.c, the sampler on the PMU port
VIRT = ["-marm", "-mno-unaligned-access", "-DCMPROF_NO_ISR=1", "-DCMPROF_PORT=CMPROF_PORT_PMU", "-nostdlib",
        "-Wl,-Ttext=0x40000000", "-Wl,-e,_start", os.path.join(ROOT, "scenarios", "board", "board_virt.c"),
        os.path.join(ROOT, "scenarios", "board", "board_common.c"),
        os.path.join(ROOT, "firmware", "cmprof_sampler.c")]


def builds():
    src = os.path.join(HERE, "pmu", "pmu_virt.c")
    for cpu in ("cortex-a7", "cortex-a15", "cortex-a9", "cortex-r5"):
        for state in ("-marm", "-mthumb"):
            r = subprocess.run(GCC + ["-mcpu=" + cpu, state, "-c", src, "-o", os.path.join(OUT, "pmu.o")],
                               capture_output=True, text=True)
            s = subprocess.run(GCC + ["-mcpu=" + cpu, state, "-c", os.path.join(ROOT, "firmware", "cmprof_section.c"),
                                      "-o", os.path.join(OUT, "section.o")], capture_output=True, text=True)
            check("cmprof_pmu.h and cmprof_section.c build for %s %s" % (cpu, state[2:]),
                  r.returncode == 0 and s.returncode == 0, (r.stderr + s.stderr).strip()[:300])
    for cpu in ("cortex-a7", "cortex-a15", "cortex-r5"):
        for state in ("-marm", "-mthumb"):
            r = subprocess.run(GCC + ["-mcpu=" + cpu, state, "-DCMPROF_NO_ISR=1", "-DCMPROF_PORT=CMPROF_PORT_PMU",
                                      "-DCMPROF_JITTER=1023", "-c", os.path.join(ROOT, "firmware", "cmprof_sampler.c"),
                                      "-o", os.path.join(OUT, "sampler.o")], capture_output=True, text=True)
            check("the sampler with the PMU port builds for %s %s" % (cpu, state[2:]), r.returncode == 0,
                  r.stderr.strip()[:300])
    r = subprocess.run(GCC + ["-mcpu=cortex-m4", "-mthumb", "-c", src, "-o", os.path.join(OUT, "m.o")],
                       capture_output=True, text=True)
    check("cmprof_pmu.h refuses Cortex-M, pointing to the DWT", r.returncode != 0 and "DWT" in r.stderr,
          r.stderr.strip()[:200])


def run(cpu):
    elf = os.path.join(OUT, "pmu_%s.elf" % cpu)
    subprocess.run(GCC + ["-mcpu=" + cpu] + VIRT + [os.path.join(HERE, "pmu", "pmu_virt.c"),
                                                   os.path.join(ROOT, "firmware", "cmprof_section.c"), "-lgcc", "-o", elf],
                   check=True)
    r = subprocess.run(["qemu-system-arm", "-M", "virt", "-cpu", cpu, "-display", "none", "-monitor", "none",
                        "-serial", "stdio", "-net", "none", "-semihosting-config", "enable=on,target=native",
                        "-icount", "shift=0", "-kernel", elf], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, elf


def main():
    os.makedirs(OUT, exist_ok=True)
    builds()
    for cpu, counters in (("cortex-a15", 6), ("cortex-a7", 4)):
        code, out, elf = run(cpu)
        head = re.search(r"pmcr=(\d+) counters=(\d+)", out)
        loops = {int(n): (int(c), int(i)) for n, c, i in re.findall(r"loop n=(\d+) cycles=(\d+) insns=(\d+)", out)}
        check("%s: runs to the end; PMCR names ARM (0x41) and N = %d counters" % (cpu, counters),
              code == 0 and "done" in out and head is not None and int(head.group(1)) >> 24 == 0x41 and
              int(head.group(2)) == counters, out.strip()[:200])
        ok = len(loops) == 3 and all(n in loops for n in (1000, 2000, 100000))
        if ok:
            (c1, i1), (c2, i2), (c3, i3) = loops[1000], loops[2000], loops[100000]
            ok = c2 - c1 == 2000 and c3 - c1 == 198000 and i2 - i1 == 2000 and i3 - i1 == 198000 and \
                0 <= c1 - 2000 <= 16 and c1 - i1 == c2 - i2 == c3 - i3
        check("%s: the cycle counter and INST_RETIRED count exactly 2 per two-instruction iteration" % cpu, ok,
              str(loops))
        div = re.search(r"div64 cycles=(\d+)", out)
        check("%s: PMCR.D counts every 64th cycle (128,000 cycles: 2,000, +-1 at the boundary, +overhead)" % cpu,
              div is not None and 2000 <= int(div.group(1)) <= 2002, div.group(0) if div else out.strip()[-200:])
        check("%s: an overflow of the cycle counter sets its PMOVSR flag" % cpu, "overflow=1" in out, out.strip()[-120:])
        check("%s: reset zeroes the cycle counter, stop freezes it" % cpu,
              "reset_small=1 stopped_delta=0" in out, out.strip()[-120:])
        # the section timers, unchanged API, on the last event counter: 5 x spin(1000) and 3 x spin(3000)
        sect = {int(i): (int(n), int(c), int(lo), int(hi), int(sm)) for i, n, c, lo, hi, sm in
                re.findall(r"^sect (\d+) n=(\d+) cur=(\d+) min=(\d+) max=(\d+) sum=(\d+)$", out, re.M)}
        ok = "sections=1" in out and set(sect) == {0, 1}
        if ok:
            (n0, c0, lo0, hi0, s0), (n1, c1, lo1, hi1, s1) = sect[0], sect[1]
            ok = n0 == 5 and n1 == 3 and c0 == lo0 == hi0 and c1 == lo1 == hi1 and s0 == 5 * c0 and s1 == 3 * c1 and \
                c1 - c0 == 4000 and 2000 <= c0 <= 2064
        check("%s: section timers on a PMU event counter (CPU_CYCLES): every run the same, 2 cycles an iteration "
              "apart" % cpu,
              ok, str(sect))
        uart = os.path.join(OUT, "uart_%s.txt" % cpu)
        open(uart, "w").write(out)
        r = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", "-o", "json", uart, elf],
                           capture_output=True, text=True)
        import json
        try:
            j = json.loads(r.stdout)
        except ValueError:
            j = {}
        got = {x["index"]: (x["count"], x["current"]) for x in j.get("sections", [])}
        want = {i: (v[0], v[1]) for i, v in sect.items()}
        check("%s: cmprof-top --batch reads the A-profile firmware's sections (no samples: exit 0)" % cpu,
              r.returncode == 0 and got == want and want, "exit %d, %s vs %s, %s" % (r.returncode, got, want,
                                                                                  r.stderr.strip()))
    sampling()
    skid()
    return 1 if harness.failed else 0


def skid():
    """A third of each round with IRQs masked in ARM state: the overflows there are taken right after
    cpsie i, and cmprof-top names that skid from the A32 encoding (the ELF's $a mapping symbols)."""
    elf = os.path.join(OUT, "skid.elf")
    uart = os.path.join(OUT, "skid.txt")
    subprocess.run(GCC + ["-mcpu=cortex-a15", "-DCMPROF_JITTER=1023", "-DCMPROF_RING_N=8192"] + VIRT +
                   [os.path.join(HERE, "pmu", "pmu_skid.c"), "-lgcc", "-o", elf], check=True)
    subprocess.run(["qemu-system-arm", "-M", "virt", "-cpu", "cortex-a15", "-display", "none", "-monitor", "none",
                    "-serial", "file:" + uart, "-net", "none", "-semihosting-config", "enable=on,target=native",
                    "-icount", "shift=0", "-kernel", elf], capture_output=True, timeout=120)
    out = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", uart, elf], capture_output=True,
                         text=True).stdout
    diag = [ln for ln in out.splitlines() if ln.startswith("!") and "skid" in ln]
    check("cortex-a15, ARM state: the masked third of the time is diagnosed as skid after 'cpsie i' in masked_work",
          len(diag) == 1 and "right after 'cpsie i'" in diag[0] and "masked_work" in diag[0] and
          re.search(r"(2[6-9]|3[0-7])\.\d %", diag[0]) is not None, diag[0] if diag else out[-300:])


def sampling():
    """PC sampling on the cycle counter's overflow (CMPROF_PORT_PMU, the GIC's PPI 7): three loops
    of 14,000, 4,000 and 2,000 instructions a round must get 70 / 20 / 10 % of the samples within
    4 sigma, every sample in them, through cmprof-top --batch on the A32 ELF."""
    import json
    for cpu in ("cortex-a15", "cortex-a7"):
        elf = os.path.join(OUT, "sample_%s.elf" % cpu)
        uart = os.path.join(OUT, "sample_%s.txt" % cpu)
        subprocess.run(GCC + ["-mcpu=" + cpu, "-DCMPROF_JITTER=1023", "-DCMPROF_RING_N=16384"] + VIRT +
                       [os.path.join(HERE, "pmu", "pmu_sample.c"), "-lgcc", "-o", elf], check=True)
        r = subprocess.run(["qemu-system-arm", "-M", "virt", "-cpu", cpu, "-display", "none", "-monitor", "none",
                            "-serial", "file:" + uart, "-net", "none", "-semihosting-config", "enable=on,target=native",
                            "-icount", "shift=0", "-kernel", elf], capture_output=True, text=True, timeout=120)
        b = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", "-o", "json", uart, elf],
                           capture_output=True, text=True)
        try:
            j = json.loads(b.stdout)
        except ValueError:
            j = {}
        rows = {x["name"]: x["samples"] for x in j.get("rows", [])}
        total = j.get("total", 0)
        fails = []
        for name, p in (("hot_a", 0.7), ("hot_b", 0.2), ("hot_c", 0.1)):
            got = rows.get(name, 0) / total if total else 0
            sigma = (p * (1 - p) / total) ** 0.5 if total else 1
            if abs(got - p) > 4 * sigma:
                fails.append("%s %.2f %% (%.0f %% expected)" % (name, 100 * got, 100 * p))
        outside = total - sum(rows.get(n, 0) for n in ("hot_a", "hot_b", "hot_c"))
        check("%s: PMU overflow sampling, 70/20/10 %% within 4 sigma, %d samples" % (cpu, total),
              r.returncode == 0 and b.returncode == 0 and total == 10000 and not fails and outside <= 20,
              "qemu %d, batch %d, %s, %d outside the loops, %s" % (r.returncode, b.returncode, fails or rows, outside,
                                                                 b.stderr.strip()[:200]))


if __name__ == "__main__":
    sys.exit(main())
