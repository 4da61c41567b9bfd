#!/usr/bin/env python3
"""Write a board's stand-in header for tests/test_zephyr_module.py: the lines of a real Zephyr build's
autoconf.h and devicetree_generated.h that cmprof's port selection reads (the options, the chosen
cmprof,timer, timer1/dtimer0, the counters of the kinds it looks for, each such node and its parent).

usage: dt_excerpt.py BUILD_DIR BOARD_NAME > tests/zoo/zephyr/boards/BOARD.h"""
import os
import re
import sys

COMPATS = ["arm_cmsdk_timer", "arm_cmsdk_dtimer", "nordic_nrf_timer", "nordic_nrf_rtc", "st_stm32_counter",
           "atmel_sam_tc"]
OPTIONS = re.compile(r"#define (CONFIG_(CMPROF_\w+|ZERO_LATENCY_IRQS|ARMV7_M_ARMV8_M_MAINLINE|ARMV6_M_ARMV8_M_BASELINE|"
                     r"NUM_IRQS|CPU_CORTEX_M\d+|TRACING_USER|SYS_CLOCK_HW_CYCLES_PER_SEC)) ")
PROPS = ("_EXISTS", "_STATUS_okay", "_IRQ_IDX_0_EXISTS", "_IRQ_IDX_0_VAL_irq", "_REG_IDX_0_VAL_ADDRESS", "_PARENT",
         "_FULL_NAME", "_ORD")


def main():
    build, board = sys.argv[1:3]
    gen = os.path.join(build, "zephyr", "include", "generated", "zephyr")
    out = ["/* %s: excerpt of a Zephyr 4.3 build's autoconf.h and devicetree_generated.h, written by" % board,
           " * tests/zoo/zephyr/dt_excerpt.py (cmprof's samples/cmprof, the board's overlay). */"]
    out += sorted(set(ln.rstrip() for ln in open(os.path.join(gen, "autoconf.h")) if OPTIONS.match(ln)))
    dt = [ln.rstrip() for ln in open(os.path.join(gen, "devicetree_generated.h"))]
    defs = {}
    for ln in dt:
        m = re.match(r"#define (\w+)\s+(.*)", ln)
        if m:
            defs[m.group(1)] = ln
    wanted = [k for k in defs if k.startswith("DT_CHOSEN_cmprof_timer") or k.startswith("DT_CHOSEN_zephyr_console")]
    wanted += ["DT_N_NODELABEL_timer1", "DT_N_NODELABEL_dtimer0"]
    wanted += ["DT_COMPAT_HAS_OKAY_" + c for c in COMPATS] + ["DT_N_INST_0_" + c for c in COMPATS]
    nodes = set()
    for k in list(wanted):
        if k in defs:
            v = defs[k].split(None, 2)[2].split("/*")[0].strip()
            if v.startswith("DT_N_S_"):
                nodes.add(v)
    for n in list(nodes):
        parent = defs.get(n + "_PARENT")
        if parent:
            nodes.add(parent.split(None, 2)[2].strip())
    for n in sorted(nodes):
        wanted += [n + p for p in PROPS] + [k for k in defs if k.startswith(n + "_COMPAT_MATCHES_")]
    out += [defs[k] for k in dict.fromkeys(wanted) if k in defs]
    print("\n".join(out))


main()
