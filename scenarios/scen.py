#!/usr/bin/env python3
"""Reference scenarios: build each firmware variant, run it in QEMU under the truth plugin, and
compare what the sampler saw with the exact instruction counts.

    scen.py run [NAME...]     build and run (all by default), two at a time
    scen_check.py report      write scenarios/REPORT.md from the last run
    scen_check.py check       assert every trap and bound; one 'ok'/'FAIL' line per check

The profile side is computed here with arm-none-eabi-nm symbols until the host tool can read
dumps; the truth side comes only from the plugin's counts."""
import collections
import concurrent.futures
import hashlib
import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build", "scenarios")
PLUGIN = os.path.join(ROOT, "build", "truth.so")
TOOL = os.path.join(ROOT, "build", "cmprof-top")

CORES = {
    "m4": ("netduinoplus2", "cortex-m4", "stm32"),
    "m3": ("netduino2", "cortex-m3", "stm32"),
    "m0": ("microbit", "cortex-m0", "nrf51"),
    "an385": ("mps2-an385", "cortex-m3", "mps2"),
    # ARMv8-M mainline: Cortex-M33 on mps2-an505 (board_mps2.c at the Secure aliases), in Secure state
    "m33": ("mps2-an505", "cortex-m33", "an505"),
    # ... the same board in TrustZone-M's usual shape: a Secure image (apps/tz_secure.c) starts the
    # profiled image in Non-Secure state (board_mps2.c at the Non-Secure addresses, an505_ns.ld)
    "m33ns": ("mps2-an505", "cortex-m33", "an505_ns"),
    # Cortex-A on QEMU's virt board (board_virt.c), ARM state, sampled by the PMU's cycle counter
    "a15": ("virt", "cortex-a15", "virt"),
    "a7": ("virt", "cortex-a7", "virt"),
    "a9": ("vexpress-a9", "cortex-a9", "virt"),  # virt has no A9: its PL011 and RAM, no GIC
    # Cortex-R5 on vexpress-a15 (board_r5.c): code in its SRAM, sampled by an SP804 or the PMU
    "r5": ("vexpress-a15", "cortex-r5f", "r5"),
}
# The board files boards share: the AN505's peripherals are the AN385's at other addresses
BOARD_FILE = {"an505": "mps2", "an505_ns": "mps2"}
# QEMU's options for each board beyond -M (vexpress: RAM up to the high vectors, its AACI silent)
QEMU_BOARD = {"virt": ["-net", "none"], "r5": ["-m", "2048", "-audiodev", "none,id=snd0",
                                              "-global", "pl041.audiodev=snd0"]}


def gcc_cpu(cpu):
    """GCC's -mcpu for a QEMU -cpu: GCC has no cortex-r5f (its VFP is unused: soft float)."""
    return "cortex-r5" if cpu == "cortex-r5f" else cpu

# The sampler's interrupt handler for each timer port (CMPROF_PORT), with the scenarios' choices
# of timer: the boards' own clocks use TIM2 (STM32), TIMER0 (nRF51) and TIMER0 (MPS2).
PORT_ISR = {None: "SysTick_Handler", "CMPROF_PORT_SYSTICK": "SysTick_Handler",
            "CMPROF_PORT_CMSDK_TIMER": "TIMER1_Handler", "CMPROF_PORT_CMSDK_DUALTIMER": "DUALTIMER_Handler",
            "CMPROF_PORT_NRF_TIMER": "TIMER1_IRQHandler", "CMPROF_PORT_STM32_TIM": "TIM3_IRQHandler",
            "CMPROF_PORT_PMU": "board_irq_entry", "CMPROF_PORT_SP804": "board_irq_entry"}


def isr_of(s):
    return PORT_ISR[s["defs"].get("CMPROF_PORT")]

# The sampler's own code: it cannot sample itself, so it is kept out of the truth shares.
SAMPLER = {"SysTick_Handler", "TIM3_IRQHandler", "TIMER1_Handler", "DUALTIMER_Handler", "TIMER1_IRQHandler",
           "board_vectors", "board_irq_entry", "board_irq", "cmprof_tick", "cmprof_tick_frame", "cmprof_stop", "truth_begin",
           "truth_end"}

JIT = {"PERIOD": 1691, "CMPROF_JITTER": 2047}  # the document's worst base period plus jitter
HOT = ("hot_a", "hot_b", "hot_c")  # the NOP_LOOP functions of the halting scenarios' firmware


def scenario(name, app, core="m4", opt="-Os", cflags=(), align16=False, lib=True, gdb=False, gdb_args=(),
             even=(), icount=True, rtt=False, strip=(), floor=None, **defs):
    """lib=False: no cmprof code linked in. gdb=True: sampled by cmprof-top through QEMU's gdbstub,
    with gdb_args added to its command line. even: loops whose bodies must draw even halts (see
    uneven_loops); the run is made again when they do not. rtt=True: the stream goes over RTT
    (firmware/cmprof_rtt.c), read by cmprof-top's rtt: source through QEMU's gdbstub. strip: sections
    removed from the linked ELF (.debug_frame: an image whose only unwind tables are .ARM.exidx).
    floor: (functions, n): a halting run with n samples or fewer in the functions is made again, as an
    uneven one is: its checks need that many to tell a wrong answer."""
    return {"name": name, "app": app, "core": core, "opt": opt, "cflags": list(cflags), "align16": align16,
            "lib": lib, "gdb": gdb, "gdb_args": list(gdb_args), "even": list(even), "icount": icount, "rtt": rtt,
            "strip": list(strip), "floor": floor, "defs": defs}


def all_scenarios():
    s = [
        # 1. three loops, constant period as in the document (profile at 100/1000/10000)
        scenario("loops_const", "loops", PERIOD=2013, SAMPLES=10000, CMPROF_RING_N=16384),
        # 2a. the same with a period that falls into a 186-point cycle with our handler cost
        scenario("loops_lockstep", "loops", PERIOD=1958, SAMPLES=10000, CMPROF_RING_N=16384),
        # 2c. jittered: 10 chunks of 10000 samples for the sqrt(N) law
        scenario("loops_jitter", "loops", SAMPLES=10000, CHUNKS=10, CMPROF_RING_N=16384, **JIT),
        # 5. stacks
        scenario("loops_psp", "loops", SAMPLES=10000, USE_PSP=1, CMPROF_RING_N=16384, **JIT),
        # its own MSP-only handler (CMPROF_NO_ISR) on the SysTick port
        scenario("loops_wrong_stack", "loops", SAMPLES=1000, USE_PSP=1, WRONG_STACK=1, CMPROF_NO_ISR=1,
                 CMPROF_PORT="CMPROF_PORT_SYSTICK", **JIT),
        # the ARMv6-M prologue (microbit, Cortex-M0) on MSP and on PSP; and the M3 (netduino2)
        scenario("m0_loops", "loops", core="m0", SAMPLES=2000, CMPROF_RING_N=2048, PERIOD=169, CMPROF_JITTER=255),
        scenario("m0_loops_psp", "loops", core="m0", SAMPLES=2000, USE_PSP=1, CMPROF_RING_N=2048, PERIOD=169,
                 CMPROF_JITTER=255),
        scenario("m3_loops", "loops", core="m3", SAMPLES=10000, CMPROF_RING_N=16384, **JIT),
        # 6. -O2 inlining
        scenario("loops_inline_o2", "loops", opt="-O2", SAMPLES=10000, HOT_INLINE=1, CMPROF_RING_N=16384, **JIT),
        # 3. interrupts disabled
        scenario("irqoff_short", "irqoff", SAMPLES=10000, LOCK_N=300, CMPROF_RING_N=16384, **JIT),
        # the same 30 % share in regions of two sampling periods each (the document: locked(7500))
        scenario("irqoff_long", "irqoff", SAMPLES=10000, LOCK_N=7500, OPEN_N=17500, CMPROF_RING_N=16384, **JIT),
        # 4. a handler at the sampler's priority, then a lower one
        scenario("handler_same", "handler", SAMPLES=10000, ISR_PRIO=0, CMPROF_RING_N=16384, **JIT),
        scenario("handler_lower", "handler", SAMPLES=10000, ISR_PRIO=0x80, CMPROF_RING_N=16384, **JIT),
        # the same with a task tag: the handler's time is its own task row, not main's (issue 7)
        scenario("handler_tagged", "handler", SAMPLES=8000, ISR_PRIO=0x80, CMPROF_RING_N=8192,
                 CMPROF_TAG="current_task", **JIT),
        # 8. two tasks sharing one function, with tags (M3, as in the document)
        scenario("tasks", "tasks", core="m3", SAMPLES=5000, CMPROF_TAG="current_task", CMPROF_RING_N=8192, **JIT),
    ]
    # 2b. timer-driven main loop: periods 9999, 10005, 10577 instructions, several phases, then jitter
    for period in (1680, 1681, 1777):
        for phase in (2000, 6500, 8500):
            s.append(scenario("lockstep_p%d_ph%d" % (period, phase), "lockstep", PERIOD=period, PHASE=phase,
                              TICK=9999, SAMPLES=1000))
    s.append(scenario("lockstep_jitter", "lockstep", SAMPLES=10000, PHASE=1000, TICK=9999, CMPROF_RING_N=16384,
                      **JIT))
    # 7. histogram buckets of 2..16 bytes, with and without 16-byte function alignment
    for shift in (1, 2, 3, 4):
        for aligned in (False, True):
            s.append(scenario("hist_%d%s" % (1 << shift, "_aligned" if aligned else ""), "loops",
                              align16=aligned, SAMPLES=20000,
                              CMPROF_HIST=1, CMPROF_HIST_SHIFT=shift, CMPROF_HIST_BINS=4096 >> shift, **JIT))
    # 9. cost per sample of every build variant
    variants = {
        "ring": {},
        "hist": {"CMPROF_HIST": 1},
        "ring_jitter": {"CMPROF_JITTER": 2047},
        "hist_jitter": {"CMPROF_HIST": 1, "CMPROF_JITTER": 2047},
        "ring_tag": {"CMPROF_TAG": "cost_tag"},
    }
    for core in ("m3", "m4", "m0"):
        for vname, d in variants.items():
            if core == "m0" and vname not in ("ring", "hist"):
                continue
            # the same period in time on every core: 1691 ticks at 168 MHz, 169 at the nRF51's 16 MHz
            s.append(scenario("cost_%s_%s" % (core, vname), "cost", core=core, PERIOD=169 if core == "m0" else 1691,
                              **d))
    # the timer ports QEMU models: CMSDK timer and dual timer (MPS2 AN385, 25 MHz: 40 instructions a
    # tick), nRF51 TIMER1 (16 MHz: 62.5 instructions a tick); about 1700 instructions a period
    for port, core, period in (("systick", "an385", 42), ("cmsdk", "an385", 42), ("dualtimer", "an385", 42),
                               ("nrf", "m0", 27), ("stm32", "m4", 400)):
        d = {} if port == "systick" else {"CMPROF_PORT": {"cmsdk": "CMPROF_PORT_CMSDK_TIMER",
                                                            "dualtimer": "CMPROF_PORT_CMSDK_DUALTIMER",
                                                            "nrf": "CMPROF_PORT_NRF_TIMER",
                                                            "stm32": "CMPROF_PORT_STM32_TIM"}[port]}
        for vname, extra in (("ring", {}), ("ring_jitter", {"CMPROF_JITTER": 15})):
            if port == "systick" and vname != "ring":
                continue
            if port == "stm32":
                extra = dict(extra, PEND_IRQ=29)  # TIM3's IRQ: QEMU 7.2's STM32 timers never interrupt
            s.append(scenario("port_%s_%s_%s" % (core, port, vname), "cost", core=core, PERIOD=period,
                              **dict(d, **extra)))
    # a profile through the dual timer, as an RTOS user would sample (SysTick left to the RTOS)
    s.append(scenario("an385_loops_dualtimer", "loops", core="an385", SAMPLES=10000, CMPROF_RING_N=16384,
                      CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER", PERIOD=42, CMPROF_JITTER=63))
    # issue 7's full flow: our own RTOS with 120 tasks created and deleted, two interrupt sources,
    # a logger sharing the UART with the stream, sampled by the dual timer with task tags
    s.append(scenario("rtos", "rtos", core="an385", CMPROF_STREAM=1, CMPROF_RING_N=512, CMPROF_TAG="current_task",
                      CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER", PERIOD=42, CMPROF_JITTER=63))
    # issue 10: Cortex-A on QEMU virt, sampled on the PMU cycle counter's overflow (PPI 7 via the GICv2)
    PMU = {"CMPROF_PORT": "CMPROF_PORT_PMU"}
    for core in ("a15", "a7"):
        s.append(scenario("%s_loops_jitter" % core, "loops", core=core, SAMPLES=10000, CMPROF_RING_N=16384,
                          **dict(JIT, **PMU)))
        s.append(scenario("%s_cost" % core, "cost", core=core, PERIOD=1691, **PMU))
        # a constant period whose interval (period + the 31 instructions before the handler preloads
        # the counter) less the handler's 41 advances the 5022-instruction loop by 1917 = 27 x 71:
        # a 186-point cycle, as the document's period 2013 on Cortex-M
        s.append(scenario("%s_loops_lockstep" % core, "loops", core=core, SAMPLES=10000, CMPROF_RING_N=16384,
                          PERIOD=1921, **PMU))
        s.append(scenario("%s_cost_jitter" % core, "cost", core=core, PERIOD=1691, CMPROF_JITTER=2047, **PMU))
        s.append(scenario("%s_sections" % core, "sections", core=core, SAMPLES=2000, **dict(JIT, **PMU)))
        # the live stream with task tags, as on Cortex-M (stream_tagged)
        s.append(scenario("%s_stream_tagged" % core, "stream", core=core, SAMPLES=10000, CMPROF_STREAM=1,
                          CMPROF_RING_N=256, PERIOD=64, CMPROF_JITTER=4095, CMPROF_TAG="current_task", **PMU))
        # Thumb-2 code interrupted (the loops; the rest ARM), and the histogram instead of the ring
        s.append(scenario("%s_loops_thumb" % core, "loops", core=core, SAMPLES=10000, CMPROF_RING_N=16384,
                          HOT_THUMB=1, **dict(JIT, **PMU)))
        s.append(scenario("%s_hist" % core, "loops", core=core, SAMPLES=10000, CMPROF_HIST=1, CMPROF_HIST_SHIFT=1,
                          CMPROF_HIST_BINS=512, CMPROF_HIST_BASE="0x40000000u", **dict(JIT, **PMU)))
        s.append(scenario("%s_irqoff" % core, "irqoff", core=core, SAMPLES=10000, LOCK_N=300, CMPROF_RING_N=16384,
                          **dict(JIT, **PMU)))
    # what QEMU 7.2's PMU models, asserted: events, the A9's PMU, event-counter overflow interrupts
    for core in ("a15", "a7", "a9"):
        # (the A9's sections count its own event 0x70, main execution unit instructions: the host names it)
        s.append(scenario("%s_pmu_limits" % core, "pmu_limits", core=core, **dict(PMU, **(
            {"SECTION_EVENT": "0x70"} if core == "a9" else {}))))
    # ... and the sampler on an event counter (INST_RETIRED on counter 2): its interrupts wait too
    s.append(scenario("a15_pmu_event_sampling", "pmu_limits", core="a15", CMPROF_PMU_SAMPLE_COUNTER=2, **PMU))
    # issue 33: Cortex-R5 on vexpress-a15, sampled by the SP804 (1 MHz: 1000 instructions a tick, so
    # 2000 to 5000 instructions a sample) through the GIC, and the PMU's limits there
    SP804 = dict(CMPROF_PORT="CMPROF_PORT_SP804", PERIOD=2, CMPROF_JITTER=3)
    s.append(scenario("r5_loops_jitter", "loops", core="r5", SAMPLES=10000, CMPROF_RING_N=16384, **SP804))
    s.append(scenario("r5_loops_thumb", "loops", core="r5", SAMPLES=10000, CMPROF_RING_N=16384, HOT_THUMB=1, **SP804))
    s.append(scenario("r5_hist", "loops", core="r5", SAMPLES=10000, CMPROF_HIST=1, CMPROF_HIST_SHIFT=1,
                      CMPROF_HIST_BINS=512, CMPROF_HIST_BASE="0x2E000000u", **SP804))
    s.append(scenario("r5_stream_tagged", "stream", core="r5", SAMPLES=10000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_TAG="current_task", **SP804))
    # a constant period of 10 ticks (QEMU: 9000 instructions) less the handler's 33 advances the
    # 5019-instruction loop by a multiple of 21: a 239-point cycle, as the A15's period 1921
    s.append(scenario("r5_loops_lockstep", "loops", core="r5", SAMPLES=10000, CMPROF_RING_N=16384,
                      CMPROF_PORT="CMPROF_PORT_SP804", PERIOD=10))
    s.append(scenario("r5_cost", "cost", core="r5", CMPROF_PORT="CMPROF_PORT_SP804", PERIOD=2))
    s.append(scenario("r5_cost_jitter", "cost", core="r5", **SP804))
    # (3 ticks: the shortest interval, 2000 instructions, outlasts the 1200-instruction masked region, so
    # no sample falls due twice inside it, as on the A15)
    s.append(scenario("r5_irqoff", "irqoff", core="r5", SAMPLES=10000, LOCK_N=300, CMPROF_RING_N=16384,
                      **dict(SP804, PERIOD=3)))
    s.append(scenario("r5_sections", "sections", core="r5", SAMPLES=2000, **SP804))
    s.append(scenario("r5_pmu_limits", "pmu_limits", core="r5", **PMU))
    # ... the section timers' counters without -icount: QEMU's cycles by its clock, no instructions
    s.append(scenario("r5_pmu_noicount", "pmu_limits", core="r5", icount=False, SECTIONS_ONLY=1, **PMU))
    # issue 8: firmware with no cmprof code, sampled by halting it through QEMU's gdbstub
    # (SCALE=100: a hundredth of the calls for the same loop work; a call costs QEMU more host time
    # than a loop instruction, and so draws more wall-clock halts than its instructions)
    s.append(scenario("gdb_loops", "plain", lib=False, gdb=True, PASSES=2000, SCALE=100, even=HOT,
                      floor=(HOT, 2000),
                      gdb_args=("-o", "json", "--record", "{out}/gdb.rec")))
    # ... and call stacks: one function, two callers (70/30), walked with .debug_frame while halted
    # (floor: the halts per guest instruction fall when other programs hold the CPUs, as cmprof-top
    # waits longer to be run after each reply while QEMU runs on; a CI run made 909 samples in work())
    s.append(scenario("gdb_callers", "callers", lib=False, gdb=True, ROUNDS=900, SCALE=100,
                      floor=(("work",), 1000),
                      gdb_args=("-o", "json", "--stack-depth", "16", "--record", "{out}/gdb.rec")))
    # ... and per task: the scheduler's current_task read while halted, names from the TCBs
    task_args = ("--stack-depth", "0", "--task-var", "current_task", "--task-name-offset", "4", "-o", "folded",
                 "--by", "task", "--record", "{out}/gdb.rec")
    # (ROUNDS, PASSES: halts come by wall time, and beside make test's other lanes the tool gets a fifth of the
    # halts it gets alone: 100,000 rounds gave 1,993 loop halts in a clean-clone run against 12,247 alone, 800
    # cooperative rounds 1,713, 1,000 passes of gdb_loops 1,720, each short of its check's 2,000; twice the work,
    # twice the halts under any load; and a run short of its floor is made again)
    s.append(scenario("gdb_tasks", "tasks_plain", lib=False, gdb=True, ROUNDS=200000, floor=(HOT, 2000),
                      gdb_args=task_args))
    # ... the same tasks switched by a plain call: no exception, whose host cost in QEMU biases halts
    s.append(scenario("gdb_tasks_coop", "tasks_plain", lib=False, gdb=True, ROUNDS=1600, SCALE=100, COOP=1,
                      even=HOT, floor=(HOT, 2000), gdb_args=task_args))
    # section timers, with and without sampling
    s.append(scenario("sections", "sections", SAMPLES=2000, **JIT))
    # live streaming: drained every loop; drained too slowly (the ring overflows)
    # (jitter wider than the base period: the drain runs right after samples arrive, and a long
    # minimum interval would hide it in the sampler's dead time)
    s.append(scenario("stream", "stream", SAMPLES=10000, CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=64,
                      CMPROF_JITTER=4095))
    s.append(scenario("stream_tagged", "stream", SAMPLES=10000, CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=64,
                      CMPROF_JITTER=4095, CMPROF_TAG="current_task"))
    s.append(scenario("stream_tagged_write", "stream", SAMPLES=10000, CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=64,
                      CMPROF_JITTER=4095, CMPROF_TAG="current_task", STREAM_WRITE=1))
    s.append(scenario("stream_slow", "stream", SAMPLES=5000, CMPROF_STREAM=1, CMPROF_RING_N=64, DRAIN_EVERY=128,
                      CMPROF_RESERVOIR_N=0, **JIT))  # the full ring's samples dropped and counted
    # a drain starved in bursts: the ring fills exactly while the busy work runs (a fifth of the samples):
    # the reservoir keeps a uniform subsample of them; without it (CMPROF_RESERVOIR_N=0) they are lost
    for name, res in (("stream_starved", {}), ("stream_starved_lossy", {"CMPROF_RESERVOIR_N": 0})):
        s.append(scenario(name, "stream", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=64,
                          CMPROF_JITTER=4095, CMPROF_TAG="current_task", STARVE_EVERY=4000, STARVE_N=2000000, **res))
    # histogram deltas: any sample rate over a slow link
    # issue 30: the real FreeRTOS kernel, 100+ tasks with churn, the recipe as README gives it
    s.append(scenario("frtos", "frtos", core="an385", CMPROF_STREAM=1, CMPROF_RING_N=512,
                      CMPROF_TAG="cmprof_current_task", CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER",
                      PERIOD=500, CMPROF_JITTER=255, CMPROF_STREAM_LINE=32, CMPROF_TAG_NAMES=1))
    # ... with a trace recorder that defines the task hooks first, cmprof's chained after its own
    s.append(scenario("frtos_recorder", "frtos", core="an385", CMPROF_STREAM=1, CMPROF_RING_N=512,
                      CMPROF_TAG="cmprof_current_task", CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER",
                      PERIOD=500, CMPROF_JITTER=255, RUN_TICKS=1500, FRTOS_RECORDER=1, CMPROF_STREAM_LINE=32,
                      CMPROF_TAG_NAMES=1))
    # ... with stack evidence (CMPROF_STACKS): every task's stacks end at its task function, its exit
    # trap (prvTaskExitError, no BL before it) given to the scan by the FreeRTOS header's create hook
    # (64 words scanned, not the default 48: the idle task's deepest path, the drain's name entry
    # num_keep under put_owed, put the idle task's root past 48 words in one sample of a build, and a
    # walk that outruns the words scanned ends unproven, docs/callers.md; what is checked here is
    # that walks end at their task's root)
    s.append(scenario("frtos_stacks", "frtos", core="an385", CMPROF_STREAM=1, CMPROF_RING_N=512,
                      CMPROF_TAG="cmprof_current_task", CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER",
                      PERIOD=500, CMPROF_JITTER=255, CMPROF_STREAM_LINE=32, CMPROF_STACKS=1, SEED=4242,
                      CMPROF_TAG_NAMES=1, CMPROF_STACK_WORDS=64))
    # 100 more workers in a pool, the oldest deleted and a new one created every SPAWN_TICKS ticks (10 kHz:
    # 1,000 creations a second), re-created under 100 distinct names, or each under a name of its own
    for name, unique, spawn in (("frtos_churn_distinct", 0, 10), ("frtos_churn_unique", 1, 10)):
        s.append(scenario(name, "frtos", core="an385", CMPROF_STREAM=1, CMPROF_RING_N=512,
                          CMPROF_TAG="cmprof_current_task", CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER",
                          PERIOD=500, CMPROF_JITTER=255, CMPROF_STREAM_LINE=32, CHURN_POOL=100, CHURN_UNIQUE=unique,
                          SPAWN_TICKS=spawn, RUN_TICKS=3000, MAX_IDS=4096))
    # ... unique names built as README's FreeRTOS recipe says (CMPROF_TAG_NAMES=1: an index a name; version 8's
    # numbered names: u000124 after u000123 in 3 bytes)
    s.append(scenario("frtos_churn_unique_tn", "frtos", core="an385", CMPROF_STREAM=1, CMPROF_RING_N=512,
                      CMPROF_TAG="cmprof_current_task", CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER", PERIOD=500,
                      CMPROF_JITTER=255, CMPROF_STREAM_LINE=32, CHURN_POOL=100, CHURN_UNIQUE=1, SPAWN_TICKS=10,
                      RUN_TICKS=3000, MAX_IDS=4096, CMPROF_TAG_NAMES=1))
    # ... in dump mode (no CMPROF_STREAM): one dump at the end, every task's name in it (a jitter
    # seed of its own: the same seed would repeat the stream run's draw of sample times)
    s.append(scenario("frtos_dump", "frtos", core="an385", CMPROF_RING_N=8192, CMPROF_TAG="cmprof_current_task",
                      CMPROF_PORT="CMPROF_PORT_CMSDK_DUALTIMER", PERIOD=500, CMPROF_JITTER=255, RUN_TICKS=1500,
                      SEED=12345))
    # callers from the sampler's own stack evidence (CMPROF_STACKS): known call shapes, on v7-M and v6-M
    # (the same period in time on both: 1691 ticks at 168 MHz, 169 at the nRF51's 16 MHz, as the cost_*
    # scenarios; with -icount shift=0 about 10,000 instructions a period plus the jitter's mean)
    for core, period in (("m4", 1691), ("m0", 169)):
        for suffix, on in (("", 1), ("_off", 0)):
            s.append(scenario("%s_stacks%s" % (core, suffix), "stacks", core=core, SAMPLES=20000, CMPROF_STREAM=1,
                              CMPROF_RING_N=256, CMPROF_STACKS=on, PERIOD=period, CMPROF_JITTER=255))
    # ... on every sample (CMPROF_STACK_EVERY=1): with the default 8 records the drain falls behind and
    # says how many it dropped ("^~N"); with 64 it keeps them all
    for suffix, records in (("", 8), ("_64", 64)):
        s.append(scenario("m4_stacks_all%s" % suffix, "stacks", core="m4", SAMPLES=20000, CMPROF_STREAM=1,
                          CMPROF_RING_N=256, CMPROF_STACKS=1, CMPROF_STACK_EVERY=1, CMPROF_STACK_RECORDS=records,
                          PERIOD=1691, CMPROF_JITTER=255))
    # ... on ARMv8-M mainline (Cortex-M33, Secure state), SysTick at the 20 MHz system clock: about the
    # M4's period in instructions
    s.append(scenario("m33_stacks", "stacks", core="m33", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=1, CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=31))
    # ... in Non-Secure state over a Secure image (TrustZone-M): the Non-Secure SysTick samples, and
    # about a third of the time goes to a Secure function, whose frames Non-Secure code cannot read
    s.append(scenario("m33_ns_stacks", "stacks", core="m33ns", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=1, CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=31, TZ_NS=1))
    # ... Secure state with FP state live (hard float) and FPCCR.TS set: every frame holds S16-S31 too
    s.append(scenario("m33_stacks_fp_ts", "stacks", core="m33", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      cflags=("-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"), CMPROF_STACKS=1,
                      CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=31, FP_TS=1))
    # ... in a dump (no stream): the ring's newest 1024 samples and 64 records of evidence
    s.append(scenario("m33_ns_dump", "stacks", core="m33ns", SAMPLES=20000, CMPROF_RING_N=1024, CMPROF_STACKS=1,
                      CMPROF_STACK_RECORDS=64, CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=31,
                      TZ_NS=1))
    # ... the same firmware sampled by halting it (the probe path): a halt in Secure code is a halt at a
    # Secure PC, which the Non-Secure ELF does not hold
    s.append(scenario("m33_ns_gdb", "stacks", core="m33ns", SAMPLES=5000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=1, CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=31, TZ_NS=1,
                      gdb=True, gdb_args=("-o", "json", "--stack-depth", "16")))
    # ... the other way round: the firmware and its sampler in Secure state (as m33_stacks), calling a
    # Non-Secure function about a third of the time; ticks there interrupt Non-Secure code
    s.append(scenario("m33_s_calls_ns", "stacks", core="m33", cflags=("-mcmse",), SAMPLES=20000, CMPROF_STREAM=1,
                      CMPROF_RING_N=256, CMPROF_STACKS=1, CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201,
                      CMPROF_JITTER=31, TZ_S=1))
    # ... Secure state, a tick tail-chained after a Non-Secure handler that had interrupted Secure code
    # (EXC_RETURN.DCRS clear, the callee context below the frame), by QEMU's own exception logic: a
    # Non-Secure timer handler (tz_ns_irq.c) interrupts Secure code at the sampler's priority, and a
    # tick that comes while it runs is tail-chained after it (TIMER1 every NS_RELOAD +-32 system clock ticks, drawn by the handler):
    # QEMU's -d int shows 5,051 to 5,235 of the 20,000 ticks so, by build (scen_check.tail_chained_native).
    # A wider jitter than m33_stacks': the handler's quarter of the time stretches the app's round to
    # about half the sampler's mean period, and with 31 the ticks fell in step with it (shares up to
    # 8 sigma off, by NS_RELOAD and build; the points the handler interrupted matched the plugin's
    # counts, the ticks taken afresh did not)
    for core, cflags in (("m33", ("-mcmse",)), ("m23", ("-mcmse", "-mcpu=cortex-m23"))):
        for suffix, on, fp in (("", 0, 0), ("_stacks", 1, 0), ("_stacks_fp", 1, 1)):
            s.append(scenario("%s_tailchain_native%s" % (core, suffix), "stacks", core="m33", cflags=cflags, SAMPLES=20000,
                              CMPROF_STREAM=1, CMPROF_RING_N=256, CMPROF_STACKS=on, CMPROF_STACK_FP=fp, FP_FRAMES=fp,
                              CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=127, NS_IRQ=1, NS_RELOAD=60))
    # ... the same without stack evidence: the prologue itself tells the Secure samples apart
    s.append(scenario("m33_ns", "stacks", core="m33ns", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=0, CMPROF_PORT="CMPROF_PORT_SYSTICK", PERIOD=201, CMPROF_JITTER=31, TZ_NS=1))
    # ... its Non-Secure image built for ARMv8-M baseline (Cortex-M23's instruction set, which the M33
    # runs; QEMU has no M23): the prologue's check in Thumb-1 instructions
    s.append(scenario("m23_ns", "stacks", core="m33ns", cflags=("-mcpu=cortex-m23",), SAMPLES=20000,
                      CMPROF_STREAM=1, CMPROF_RING_N=256, CMPROF_STACKS=0, CMPROF_PORT="CMPROF_PORT_SYSTICK",
                      PERIOD=201, CMPROF_JITTER=31, TZ_NS=1))
    # ... with a function built with -fno-omit-frame-pointer (its CFA on r7): the evidence says where r7
    # pointed (CMPROF_STACK_FP)
    for core, period in (("m4", 1691), ("m0", 169)):
        s.append(scenario("%s_stacks_fp" % core, "stacks", core=core, SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                          CMPROF_STACKS=1, CMPROF_STACK_FP=1, FP_FRAMES=1, PERIOD=period, CMPROF_JITTER=255))
    # ... the same firmware (the same build as m4_stacks) sampled by halting it through QEMU's gdbstub and
    # walked with .debug_frame: the probe path's caller shares against the sampler's
    s.append(scenario("m4_stacks_gdb", "stacks", core="m4", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=1, PERIOD=1691, CMPROF_JITTER=255, gdb=True,
                      gdb_args=("-o", "json", "--stack-depth", "16", "--record", "{out}/gdb.rec")))
    # ... in a dump: the ring's newest 1024 samples, 64 records of evidence for them
    # ... with no DWARF call-frame information: -funwind-tables, .debug_frame removed, walked with .ARM.exidx
    for core, period in (("m4", 1691), ("m0", 169)):
        s.append(scenario("%s_stacks_exidx" % core, "stacks", core=core, cflags=("-funwind-tables",), strip=(".debug_frame",),
                          UNWIND_TABLES=1, SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256, CMPROF_STACKS=1, PERIOD=period,
                          CMPROF_JITTER=255))
    # ... the stream and its evidence over RTT only, read through QEMU's gdbstub (rtt:) as the `rtt` scenario's;
    # a record for each stacked sample the ring holds (256 / 16): the drain waits while the buffer is full
    s.append(scenario("m4_stacks_rtt", "stacks", core="m4", SAMPLES=10000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=1, CMPROF_STACK_RECORDS=16, PERIOD=16000, CMPROF_JITTER=8191, STACKS_RTT=1,
                      rtt=True))
    # ... newlib's memcpy (no call-frame information, a leaf its code proves) from two callers, 3:1
    s.append(scenario("m4_stacks_memcpy", "stacks", core="m4", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_RING_N=256,
                      CMPROF_STACKS=1, MEMCPY_CALLERS=1, PERIOD=1691, CMPROF_JITTER=255))
    s.append(scenario("m4_stacks_dump", "stacks", core="m4", SAMPLES=20000, CMPROF_RING_N=1024, CMPROF_STACKS=1,
                      CMPROF_STACK_RECORDS=64, PERIOD=1691, CMPROF_JITTER=255))
    # the stream over RTT only, read by cmprof-top through QEMU's gdbstub (rtt:), attached while the
    # guest runs (no -S): a period of about 20,000 instructions keeps the stream within what the polls carry
    s.append(scenario("rtt", "rtt", SAMPLES=10000, CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=16000,
                      CMPROF_JITTER=8191, rtt=True))
    s.append(scenario("stream_hist", "stream", SAMPLES=20000, CMPROF_STREAM=1, CMPROF_HIST=1, CMPROF_HIST_SHIFT=1,
                      CMPROF_HIST_BINS=4096, DRAIN_EVERY=64, PERIOD=64, CMPROF_JITTER=4095))
    return s


def semihost_out(s):
    """Whether a scenario's text goes out through semihosting (board_common.c, BOARD_SEMIHOST_OUT), QEMU's
    standard output written to uart.txt: on the STM32 boards, whose USART model costs the host two
    wake-ups of QEMU's main loop a byte; not the firmware without cmprof code nor the RTT ones, which
    tests/ run in QEMU of their own with the UART."""
    return CORES[s["core"]][2] == "stm32" and s["lib"] and not s.get("rtt")


def with_output(s):
    if semihost_out(s):
        s["defs"]["BOARD_SEMIHOST_OUT"] = 1
    return s


SCENARIOS = {s["name"]: with_output(s) for s in all_scenarios()}

# The live demo's firmware: built by `make demo`, run by scripts/demo.sh (never by `run`).
DEMO = scenario("demo", "demo", core="m4", CMPROF_STREAM=1, CMPROF_TAG="current_task", CMPROF_RING_N=1024, CMPROF_STACKS=1,
                CMPROF_JITTER=16383, PERIOD=4096)
# ... with stack evidence on every 4th sample, not every 16th: the same firmware, 4 times the call
# stacks a second of QEMU (tests/test_tui.py's sampler against probe)
DEMO_STACKS_4 = scenario("demo_stacks_4", "demo", **dict(DEMO["defs"], CMPROF_STACK_EVERY=4))


# ---------------------------------------------------------------------------------------------
# build and run

def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (os.path.basename(cmd[0]), r.returncode, r.stderr.strip()))
    return r.stdout


SOURCE_SUFFIXES = (".c", ".h", ".ld", ".s", ".S", ".inc")


def _build_inputs(cmd):
    """Every file a firmware build command can read: its sources, and the sources, headers and
    linker scripts in its source directories (not below), its -I directories (and below: headers
    name subdirectories) and its -L directories, plus the compiler itself."""
    files, shallow, deep = set(), set(), set()
    for arg in cmd[1:]:
        if arg.startswith("-I"):
            deep.add(arg[2:])
        elif arg.startswith("-L"):
            shallow.add(arg[2:])
        elif not arg.startswith("-") and arg.endswith(SOURCE_SUFFIXES) and os.path.isfile(arg):
            files.add(arg)
            shallow.add(os.path.dirname(arg) or ".")
    for d in shallow:
        files.update(os.path.join(d, f) for f in os.listdir(d) if f.endswith(SOURCE_SUFFIXES))
    for d in deep:
        for top, _, names in os.walk(d):
            files.update(os.path.join(top, f) for f in names if f.endswith(SOURCE_SUFFIXES))
    compiler = shutil.which(cmd[0])
    return sorted(files) + ([compiler] if compiler else [])


def build_key(cmd, *extra):
    """A digest of a firmware build: its command, what else it runs (extra), and the content of
    every file it can read (the compiler by size and time)."""
    h = hashlib.sha256(repr((cmd, extra)).encode())
    for path in _build_inputs(cmd):
        h.update(path.encode() + b"\0")
        if path == shutil.which(cmd[0]):
            st = os.stat(path)
            h.update(b"%d %d" % (st.st_size, st.st_mtime_ns))
        else:
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def built_already(elf, key):
    """Whether elf is what the build with this key made, untouched since: the steps of
    tests/run.sh build the same firmware (the demo's, the halting scenarios') many times."""
    try:
        with open(elf + ".key") as f:
            want = f.read()
        st = os.stat(elf)
    except OSError:
        return False
    return want == "%s %d %d\n" % (key, st.st_size, st.st_mtime_ns)


def record_build(elf, key):
    st = os.stat(elf)
    tmp = "%s.key.%d-%d.tmp" % (elf, os.getpid(), threading.get_ident())
    with open(tmp, "w") as f:
        f.write("%s %d %d\n" % (key, st.st_size, st.st_mtime_ns))
    os.replace(tmp, elf + ".key")


OBJECTS = os.path.join(ROOT, "build", "fwobj")
LINK_ONLY = ("-Wl,", "-l", "-L", "-T", "-nostdlib", "-nostartfiles")
TWO_PART = {"-iquote", "-include", "-imacros", "-isystem", "-idirafter", "-x", "-Xlinker", "-MF", "-MT", "-MQ"}


def compile_and_link(cmd):
    """Runs a firmware build command (gcc's flags, sources and link options, "-o ELF" last) as gcc
    would, each source compiled alone with the command's compiler flags, then linked in the same
    order: the same ELF, byte for byte. An object is kept (build/fwobj) under a digest of the
    compiler (path, size, time), the flags that are not -D or -I and the source's preprocessed
    text: scenarios, their variants and the tests' builds compile the same board, library and
    kernel files with options most of them never read. A command of another shape, or a source the preprocessor refuses, runs whole (its errors
    as gcc gives them)."""
    sources = [k for k, a in enumerate(cmd) if k and not a.startswith("-") and a.endswith((".c", ".s", ".S"))
               and cmd[k - 1] != "-o"]
    if not sources or TWO_PART & set(cmd) or cmd[-2] != "-o":
        return sh(cmd)
    flags = [a for k, a in enumerate(cmd[1:-2], 1) if k not in sources and not a.startswith(LINK_ONLY)]
    compiler = shutil.which(cmd[0]) or cmd[0]
    st = os.stat(compiler) if os.path.exists(compiler) else None
    digest_flags = [compiler, st and (st.st_size, st.st_mtime_ns)] + [a for a in flags if not a.startswith(("-D", "-I"))]
    os.makedirs(OBJECTS, exist_ok=True)
    line = list(cmd)
    for k in sources:
        pre = subprocess.run([cmd[0]] + flags + ["-E", cmd[k]], capture_output=True)
        if pre.returncode != 0:
            return sh(cmd)
        h = hashlib.sha256(repr((digest_flags, cmd[k])).encode() + b"\0" + pre.stdout).hexdigest()
        obj = os.path.join(OBJECTS, h[:32] + ".o")
        if not os.path.exists(obj):
            tmp = "%s.%d-%d.tmp" % (obj, os.getpid(), threading.get_ident())
            try:
                sh([cmd[0]] + flags + ["-c", cmd[k], "-o", tmp])
                os.replace(tmp, obj)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        line[k] = obj
    return sh(line)


def link_atomically(cmd, elf, cache=True):
    """Runs cmd, which ends in "-o elf", writing a temporary file renamed to elf at the end: the
    lanes of tests/run.sh may build the same firmware at once, and a reader (another build, or
    cmprof-top) must never open a half-written ELF. An ELF that the same command made from the
    same files is kept (built_already)."""
    assert cmd[-2:] == ["-o", elf]
    key = build_key(cmd) if cache else None
    if key and built_already(elf, key):
        return
    tmp = "%s.%d-%d.tmp" % (elf, os.getpid(), threading.get_ident())
    try:
        compile_and_link(cmd[:-1] + [tmp])
        os.replace(tmp, elf)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    if key:
        record_build(elf, key)


def build_plugin():
    os.makedirs(os.path.dirname(PLUGIN), exist_ok=True)
    src = os.path.join(HERE, "truth", "truth.c")
    if not os.path.exists(PLUGIN) or os.path.getmtime(PLUGIN) < os.path.getmtime(src):
        sh(["cc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC",
            "-shared", "-o", PLUGIN, src])


def aligned_ldscripts(out, board):
    """The board's linker scripts with every function aligned to 16 bytes."""
    text = open(os.path.join(HERE, "board", "sections.ld")).read()
    aligned = text.replace(".text : ALIGN(4)", ".text : ALIGN(16) SUBALIGN(16)")
    if aligned == text:
        raise RuntimeError("sections.ld: no .text statement to align")
    with open(os.path.join(out, "sections.ld"), "w") as f:
        f.write(aligned)
    mem = open(os.path.join(HERE, "board", "%s.ld" % board)).read()
    with open(os.path.join(out, "%s.ld" % board), "w") as f:
        f.write(mem)
    return "%s.ld" % board, out


def build(s):
    out = os.path.join(BUILD, s["name"])
    os.makedirs(out, exist_ok=True)
    machine, cpu, board = CORES[s["core"]]
    if board in ("virt", "r5"):
        return build_virt(s["name"], s["app"], cpu, s["opt"], s["cflags"], **s["defs"])
    if s["app"] == "frtos":
        return build_frtos(s, out, cpu)
    elf = os.path.join(out, "fw.elf")
    # a Non-Secure image calls the Secure image's entries at the addresses its import library gives
    implib = [build_tz_secure(out, cpu)] if board == "an505_ns" else []
    if s["defs"].get("TZ_S") or s["defs"].get("NS_IRQ"):
        build_tz_ns_callee(out, cpu, tz_ns_app(s))
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", s["opt"], "-g", "-mcpu=" + cpu,
           "-mthumb", "-mfloat-abi=soft", "-I" + os.path.join(ROOT, "firmware"), "-I" + os.path.join(HERE, "board"),
           "-DBOARD_" + board]
    if any(f.startswith("-mfloat-abi=") for f in s["cflags"]):
        cmd.remove("-mfloat-abi=soft")  # one -mfloat-abi only: GCC picks newlib's multilib by it
    cmd += s["cflags"]
    if s["app"] in ("tasks", "demo", "tasks_plain"):
        cmd.append(os.path.join(HERE, "apps", "sched.c"))
    if s["defs"].get("CMPROF_STREAM"):
        cmd.append(os.path.join(ROOT, "firmware", "cmprof_stream.c"))
    if s["defs"].get("CMPROF_STACKS"):
        cmd.append(os.path.join(ROOT, "firmware", "cmprof_stack.c"))
    if s.get("rtt"):
        cmd.append(os.path.join(ROOT, "firmware", "cmprof_rtt.c"))
    if s["lib"] and (s["defs"].get("CMPROF_STREAM") or s["defs"].get("CMPROF_TAG")):
        cmd.append(os.path.join(ROOT, "firmware", "cmprof_tasks.c"))  # the task table: stream, or a tagged dump
    ldscript, ldpath = "%s.ld" % board, os.path.join(HERE, "board")
    if s["align16"]:
        # every function in its own section, each aligned to 16 bytes by the linker (SUBALIGN)
        cmd.append("-ffunction-sections")
        ldscript, ldpath = aligned_ldscripts(out, board)

    cmd += ["-D%s=%s" % (k, v) for k, v in sorted(s["defs"].items())]
    cmd.append(os.path.join(HERE, "apps", s["app"] + ".c"))
    if s["lib"]:
        cmd += [os.path.join(ROOT, "firmware", "cmprof_sampler.c"), os.path.join(ROOT, "firmware", "cmprof_section.c")]
    cmd += [os.path.join(HERE, "board", "board_%s.c" % BOARD_FILE.get(board, board)),
            os.path.join(HERE, "board", "board_common.c"),
            os.path.join(HERE, "board", "startup.c")] + implib + [
        "-Wl,--build-id", "-nostdlib", "-lc", "-lgcc", "-L" + ldpath, "-T" + ldscript, "-o", elf]
    if s["strip"]:  # linked under a temporary name, stripped, then renamed: readers never see it unstripped
        strip = ["arm-none-eabi-objcopy"] + ["--remove-section=" + x for x in s["strip"]]
        key = build_key(cmd, strip)
        if built_already(elf, key):
            return elf
        tmp = "%s.%d-%d.unstripped" % (elf, os.getpid(), threading.get_ident())
        try:
            link_atomically(cmd[:-1] + [tmp], tmp, cache=False)
            sh(strip + [tmp])
            os.replace(tmp, elf)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        record_build(elf, key)
        return elf
    link_atomically(cmd, elf)
    return elf


def tz_secure_elf(out):
    return os.path.join(out, "secure.elf")


def build_tz_secure(out, cpu):
    """The Secure image under a Non-Secure scenario (apps/tz_secure.c, an505_s.ld), built with
    -mcmse; returns its import library (the veneers' addresses), which the Non-Secure image links."""
    implib = os.path.join(out, "secure_implib.o")
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-g", "-mcpu=" + cpu, "-mthumb",
           "-mfloat-abi=soft", "-mcmse", "-I" + os.path.join(HERE, "board"), "-I" + os.path.join(HERE, "apps"),
           "-DBOARD_an505", os.path.join(HERE, "apps", "tz_secure.c")]
    cmd += [os.path.join(HERE, "board", f) for f in ("board_mps2.c", "board_common.c", "startup.c")]
    tmp = "%s.%d-%d.tmp" % (implib, os.getpid(), threading.get_ident())  # renamed once whole, as the ELF is
    cmd += ["-nostdlib", "-lc", "-lgcc", "-L" + os.path.join(HERE, "board"), "-Tan505_s.ld",
            "-Wl,--cmse-implib,--out-implib=" + tmp, "-o", tz_secure_elf(out)]
    try:
        link_atomically(cmd, tz_secure_elf(out))
        os.replace(tmp, implib)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return implib


def tz_ns_app(s):
    """The Non-Secure image beside Secure firmware: the function a TZ_S scenario calls into
    (apps/tz_ns_callee.c), or the timer handler of an NS_IRQ one (apps/tz_ns_irq.c)."""
    return "tz_ns_irq" if s["defs"].get("NS_IRQ") else "tz_ns_callee"


def tz_ns_callee_elf(out, app="tz_ns_callee"):
    return os.path.join(out, app[len("tz_"):] + ".elf")  # ns_callee.elf, ns_irq.elf


def build_tz_ns_callee(out, cpu, app="tz_ns_callee"):
    """The Non-Secure image beside a Secure scenario's firmware (tz_ns_app)."""
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-g", "-mcpu=" + cpu, "-mthumb",
           "-mfloat-abi=soft", "-I" + os.path.join(HERE, "apps"), os.path.join(HERE, "apps", app + ".c"),
           "-nostdlib", "-L" + os.path.join(HERE, "board"), "-Tan505_ns.ld", "-o", tz_ns_callee_elf(out, app)]
    link_atomically(cmd, tz_ns_callee_elf(out, app))


FREERTOS = os.environ.get("FREERTOS_KERNEL") or os.path.join(ROOT, "..", "shared", "third_party", "FreeRTOS-Kernel")
FREERTOS_PORTS = {"cortex-m3": "ARM_CM3", "cortex-m0": "ARM_CM0", "cortex-m4": "ARM_CM4F"}


def build_frtos(s, out, cpu, extra=()):
    """The FreeRTOS scenario (scenarios/frtos/) against the read-only kernel: the kernel's files
    are referenced where they are, never copied. The recipe's build-id snippet goes on the link
    line before the application's own script, as README tells a user."""
    if not os.path.isfile(os.path.join(FREERTOS, "tasks.c")):
        raise RuntimeError("%s: no FreeRTOS kernel at %s (set FREERTOS_KERNEL)" % (s["name"], FREERTOS))
    port = os.path.join(FREERTOS, "portable", "GCC", FREERTOS_PORTS[cpu])
    fpu = ["-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"] if cpu == "cortex-m4" else ["-mfloat-abi=soft"]
    elf = os.path.join(out, "fw.elf")
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", s["opt"], "-g", "-mcpu=" + cpu, "-mthumb"]
    cmd += fpu + ["-I" + os.path.join(HERE, "frtos"), "-I" + os.path.join(FREERTOS, "include"), "-I" + port,
                  "-I" + os.path.join(ROOT, "firmware"), "-I" + os.path.join(HERE, "board"), "-I" + os.path.join(HERE, "apps"), "-DBOARD_mps2"]
    cmd += s["cflags"] + list(extra) + ["-D%s=%s" % (k, v) for k, v in sorted(s["defs"].items())]
    cmd += [os.path.join(HERE, "frtos", "frtos.c")] + [os.path.join(FREERTOS, f) for f in ("tasks.c", "queue.c", "list.c")]
    cmd += [os.path.join(port, f) for f in ("port.c", "portasm.c") if os.path.exists(os.path.join(port, f))]
    cmd.append(os.path.join(FREERTOS, "portable", "MemMang", "heap_4.c"))
    cmd += [os.path.join(ROOT, "firmware", f) for f in ("cmprof_sampler.c", "cmprof_stream.c", "cmprof_tasks.c")]
    cmd += [os.path.join(ROOT, "firmware", "cmprof_stack.c")] if s["defs"].get("CMPROF_STACKS") else []
    cmd += [os.path.join(HERE, "board", f) for f in ("board_mps2.c", "board_common.c", "startup.c")]
    cmd += ["-nostdlib", "-lc", "-lgcc", "-Wl,--build-id", "-L" + os.path.join(ROOT, "firmware"),
            "-Wl,-T,cmprof_build_id.ld", "-L" + os.path.join(HERE, "frtos"), "-Wl,-T,frtos.ld", "-o", elf]
    link_atomically(cmd, elf)
    return elf


def build_virt(name, app, cpu="cortex-a15", opt="-Os", cflags=(), **defs):
    if cpu == "cortex-a9":
        cflags, text = list(cflags) + ["-DBOARD_VEXPRESS_A9"], "0x60000000"
    else:
        text = "0x40000000"
    board, link = "virt", ["-Wl,-Ttext=" + text, "-Wl,-e,_start"]
    if cpu == "cortex-r5f":  # Cortex-R5 on vexpress-a15: code in its SRAM, vectors at 0xFFFF0000
        board, link = "r5", ["-L" + os.path.join(HERE, "board"), "-Wl,-T,r5.ld"]
    """A Cortex-A firmware for QEMU's virt board (board/board_virt.c): ARM state, linked at
    0x40000000, sampled by the PMU's cycle counter (CMPROF_PORT_PMU)."""
    out = os.path.join(BUILD, name)
    os.makedirs(out, exist_ok=True)
    elf = os.path.join(out, "fw.elf")
    defs.setdefault("CMPROF_PORT", "CMPROF_PORT_PMU")
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", opt, "-g", "-mcpu=" + gcc_cpu(cpu), "-marm",
           "-mno-unaligned-access", "-I" + os.path.join(ROOT, "firmware"), "-I" + os.path.join(HERE, "board"),
           "-DCMPROF_NO_ISR=1", "-DBOARD_" + board] + list(cflags)
    cmd += ["-D%s=%s" % (k, v) for k, v in sorted(defs.items())]
    cmd += [os.path.join(HERE, "apps", app + ".c"), os.path.join(HERE, "board", "board_%s.c" % board),
            os.path.join(HERE, "board", "board_common.c"), os.path.join(ROOT, "firmware", "cmprof_sampler.c"),
            os.path.join(ROOT, "firmware", "cmprof_section.c")]
    if defs.get("CMPROF_STREAM"):
        cmd.append(os.path.join(ROOT, "firmware", "cmprof_stream.c"))
    if defs.get("CMPROF_STREAM") or defs.get("CMPROF_TAG"):
        cmd.append(os.path.join(ROOT, "firmware", "cmprof_tasks.c"))
    cmd += ["-nostdlib", "-Wl,--build-id", "-L" + os.path.join(ROOT, "firmware"), "-Wl,-T,cmprof_build_id.ld"] + link
    cmd += ["-lc", "-lgcc", "-o", elf]
    link_atomically(cmd, elf)
    return elf


# The Cortex-A live demo's firmware (make demo TARGET=cortex-a15 or cortex-a7)
DEMO_A = dict(app="demo_a", CMPROF_STREAM=1, CMPROF_JITTER=4095, CMPROF_RING_N=1024)
# ... and the Cortex-R5's (make demo TARGET=cortex-r5): the SP804 samples, jitter in its 1 MHz ticks
DEMO_R5 = dict(DEMO_A, CMPROF_PORT="CMPROF_PORT_SP804", CMPROF_JITTER=15)


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


B64_VAL = {c: i for i, c in enumerate(B64)}


NUM8 = "#$%&'()*,-.:;<>?@[]^_`{|}~"  # version 8: a numbered name's lead chars (no base64 char)


def num_name(ref, s, i):
    """Version 8: the numbered name at s[i] (2 chars: NUM8's k-th, then base64: the difference k * 64 +
    value - 832) of ref (its trailing number, its last digits up to 9, in as many digits); None when
    ref is None or has none."""
    delta = NUM8.index(s[i]) * 64 + B64_VAL[s[i + 1]] - 832
    d = 0
    while ref and d < min(len(ref), 9) and ref[len(ref) - 1 - d].isdigit():
        d += 1
    if not d:
        return None
    v = int(ref[len(ref) - d:]) + delta
    return ref[:len(ref) - d] + "%0*d" % (d, v) if 0 <= v < 10 ** d else None


def ends_in_digits(name):
    """Version 9: a numbered name refers to the last name written out that ends in two digits."""
    return name is not None and len(name) >= 2 and name[-2:].isdigit()


def _name_entry(s, i, prev=None, prev_index=None):
    """One name entry at s[i] (an "@N" line's, or before version 5 a sample line's after '='): the index,
    6 chars of tag (version 7: or '=', the index's own, 0xFFFFA000 + index), 1 of length, the name
    (version 8: or numbered, 2 chars, prev's with another number: prev is the line's entry before;
    version 9: '.' for the index after prev_index's, under its own tag). Returns (index, tag, name, where
    it ends)."""
    val = B64_VAL
    if s[i] == "." and prev_index is not None:  # version 9: the index after the entry before's, its own tag
        index, i = prev_index + 1, i + 1
        tag = 0xFFFFA000 + index
    else:
        index, i = (62 + (val[s[i + 1]] << 6 | val[s[i + 2]]), i + 3) if s[i] == "+" else (val[s[i]], i + 1)
    if s[i - 1] == "." and prev_index is not None:
        pass  # (the tag is the index's own)
    elif s[i] == "=":
        tag, i = 0xFFFFA000 + index, i + 1
    else:
        tag = 0
        for c in s[i:i + 6]:
            tag = tag << 6 | val[c]
        i += 6
    if s[i] in NUM8:
        return index, "%08x" % tag, num_name(prev, s, i), i + 2
    n = val[s[i]]
    return index, "%08x" % tag, s[i + 1:i + 1 + n], i + 1 + n


def _def_entry(s, i, state):
    """A '=' entry at s[i] (after the '='). Version 5: the index, a head of 2 chars (0x800: a tag of 6
    follows, 0x400: a name follows, its length in 1 then the name; the low 10 bits the name's id),
    the name by its id otherwise, the tag the index's otherwise. Returns (index, tag, name, end); the
    name or the tag None when the reader missed the entry that gave it (a capture cut mid-stream)."""
    if state.get("version", 0) < 5:
        return _name_entry(s, i)
    val = B64_VAL
    if state.get("version", 0) >= 7:  # no index: the sample right after the entry has it as its tag
        index = None
    else:
        index, i = (62 + (val[s[i + 1]] << 6 | val[s[i + 2]]), i + 3) if s[i] == "+" else (val[s[i]], i + 1)
    if state.get("version", 0) >= 8 and s[i] == "=":  # the index's last name inside, numbered against the new
        index, tag, name, end = _def_entry(s, i + 3, state)
        state["retired"] = (index, num_name(name, s, i + 1))
        return index, tag, name, end
    if state.get("version", 0) >= 8 and s[i] in NUM8:  # numbered: the epoch's last name, another number
        name = num_name(state.get("num_ref") if state.get("num_ref_ok") else None, s, i)
        state["num_ref"], state["num_ref_ok"] = name, name is not None
        index = sample_tag7(s, i + 2)[0]
        tag = state.setdefault("tags", {}).get(index)
        return index, tag, name, i + 2
    head = val[s[i]] << 6 | val[s[i + 1]]
    i += 2
    tag = state.setdefault("tags", {}).get(index)
    if head & 0x800:
        t = 0
        for c in s[i:i + 6]:
            t = t << 6 | val[c]
        tag, i = "%08x" % t, i + 6
    ids = state.setdefault("ids", {})
    if head & 0x400:
        n = val[s[i]]
        if state.get("version", 0) >= 7 and n >= 32:  # front-coded: shared with the line's last whole name
            shared, i = n - 32, i + 1
            n = val[s[i]]
            name = state.get("front", "")[:shared] + s[i + 1:i + 1 + n]
        else:
            name = state["front"] = s[i + 1:i + 1 + n]
        ids[head & 0x3FF] = name
        if state.get("version", 0) < 9 or ends_in_digits(name):  # version 9: ending in two digits
            state["num_ref"], state["num_ref_ok"] = name, True  # version 8: the epoch's last name written out
        i += 1 + n
    if index is None:
        index = sample_tag7(s, i)[0]
        tag = tag if head & 0x800 else state["tags"].get(index)
    state["tags"][index] = tag
    return index, tag, ids.get(head & 0x3FF), i


TAG6_ONE, TAG6_LEAD = "0123456789:;<>\"#$%&", "'(),"


def sample_tag6(s, i):
    """A version 6 tag at s[i] (decode/stream.c's sample_tag6): (task index or None for an
    exception's or no slot's, where it ends); (None, i) when s[i] is a PC's first character."""
    c = s[i]
    if c in "-+":
        v = B64_VAL[s[i + 1]] << 6 | B64_VAL[s[i + 2]]
        return (62 + v if c == "+" else None), i + 3
    if c == "/":
        return None, i + 1
    if c in TAG6_ONE:
        return TAG6_ONE.index(c), i + 1
    if c in TAG6_LEAD:
        return 19 + TAG6_LEAD.index(c) * 64 + B64_VAL[s[i + 1]], i + 2
    return None, i


TAG7_ONE = "0123456789:;<>\"#$%&'(),opqrstuvwxyz{|"


def sample_tag7(s, i):
    """A version 7 tag at s[i] (decode/stream.c's sample_tag7): (task index or None for an
    exception's or no slot's, where it ends); (None, i) when s[i] is a PC's first character."""
    c = s[i]
    if c in TAG7_ONE:
        return TAG7_ONE.index(c), i + 1
    if c == "}":
        return 37 + B64_VAL[s[i + 1]], i + 2
    if c == "+":
        return 101 + (B64_VAL[s[i + 1]] << 6 | B64_VAL[s[i + 2]]), i + 3
    if c in "-~/":
        return None, i + {"-": 2, "~": 3, "/": 1}[c]
    return None, i


def pc7_len(c):
    """A version 7 PC's characters from its first: 3 ('?'..'N'), 2 (a page hit, 'O'..'n'), '.' and 4,
    '*' and 6."""
    return 3 if "?" <= c <= "N" else 2 if "O" <= c <= "n" else 5 if c == "." else 7


def sample_line_items(body, state):
    """Walk a '$' or '%' line's text before its '!' (a reservoir's '&' head cut off) in the form of
    the capture's version (state, as stream_state keeps it; '=' entries update its name ids): yields
    ("def", index, tag, name, bytes) for each '=' entry and ("sample", index) for each sample, index
    the task index written before it (None: no tag there, or an exception's or no slot's)."""
    if body.startswith("&") and body[8:9] in ("%", "$"):  # a reservoir's group: its line after the head
        body = body[8:]
    version, tagged, val = state.get("version", 0), body[:1] == "%", B64_VAL
    i = 3 if version >= 7 else 1  # version 7: the line's number first
    state["front"] = ""  # version 7: a front-coded name refers to the line's last whole one
    if version >= 7 and tagged:  # version 8: numbered names refer within the page epoch (8 lines)
        number = (ord(body[1]) - 63) << 6 | (ord(body[2]) - 63)
        if number % 8 == 0:
            state["num_ref"], state["num_ref_ok"] = None, True
        elif state.get("num_line") is None or number != (state["num_line"] + 1) % 4096:
            state["num_ref_ok"] = False
        state["num_line"] = number
    while i < len(body):
        c, index = body[i], None
        if tagged and c == "=":
            index, tag, name, end = _def_entry(body, i + 1, state)
            retired = state.pop("retired", None)
            if retired:  # version 8: the index's last name, as an @N entry of it, first (its bytes in the entry's)
                yield "def", retired[0], "%08x" % (0xFFFFA000 + retired[0]), retired[1], 0
            yield "def", index, tag, name, end - i
            i = end
            continue
        if version >= 7:  # a tag where the host could not tell it; a page hit in 2 chars
            if tagged:
                index, i = sample_tag7(body, i)
            i += pc7_len(body[i])
        elif version >= 6:  # a tag only where it changes; 3 PC chars '?'..'~', '.' and 4, '*' and 6
            if tagged:
                index, i = sample_tag6(body, i)
            i += {"*": 7, ".": 5}.get(body[i], 3)
        else:
            if tagged and c in "-/":
                i += 3 if c == "-" else 1
            elif tagged:
                index, i = (62 + (val[body[i + 1]] << 6 | val[body[i + 2]]), i + 3) if c == "+" else (val[c], i + 1)
            i += 7 if body[i] == "*" else 4
        yield "sample", index


def sample_line_defs(body, state=None):
    """The '=' entries of a '%' (or '&') sample line's text before its '!': (index, tag, name, bytes).
    state: the capture's version and name ids so far (stream_state), updated."""
    state = {} if state is None else state
    return [item[1:] for item in sample_line_items(body, state) if item[0] == "def"]


def stream_state(body, state):
    """Follow a capture's announces (the version says how '=' entries read); @N entries keep tags."""
    m = re.match(r"@cmprof v=(\d+)", body)
    if m:
        state["version"] = int(m.group(1))


def checked_body(line):
    """A stream line's text before its '!' when its check holds, also when the application's log
    text came before it on the same line (a log line the stream's line was glued onto, as the host
    reads it); None for any other line."""
    if len(line) < 4 or line[-3] != "!":
        return None
    for k, ch in enumerate(line[:-3]):
        if (k == 0 or ch in "$%&@") and stream_line_check(line[k:-3]) == line[-2:]:
            return line[k:-3]
    return None


def stream_names(text):
    """Every name a stream gives, in order, as (offset of its line, index, tag as 8 hex digits,
    name): "@task" lines, "@N" lines' entries and the '=' entries inside sample lines
    (docs/stream.md). Lines with a bad check are skipped whole, as the host does."""
    val = B64_VAL
    out = []
    at = 0
    state = {}
    for line in text.splitlines(True):
        body, start, at = checked_body(line.rstrip("\r\n")), at, at + len(line)
        if body is None:
            continue
        stream_state(body, state)
        m = re.match(r"@task (\+..|.) ([0-9a-f]{8}) (.*)$", body)
        if m:
            f = m.group(1)
            index = val[f] if len(f) == 1 else 62 + (val[f[1]] << 6 | val[f[2]])
            state.setdefault("tags", {})[index] = m.group(2)
            out.append((start, index, m.group(2), m.group(3)))
        elif body.startswith("@N"):
            i = 2
            prev = index = None
            while i < len(body):
                index, tag, name, i = _name_entry(body, i, prev, index)
                if state.get("version", 0) < 9 or ends_in_digits(name):  # version 9: refers to such names
                    prev = name
                state.setdefault("tags", {})[index] = tag
                out.append((start, index, tag, name))
        else:
            out += [(start, index, tag, name) for index, tag, name, _ in sample_line_defs(body, state)
                    if name is not None]  # else the host waits for the repeat (tag None: the index's, unknown)
    return out


def sample_line_count(body, version):
    """The samples in a '$' or '%' line's text before its '!' (a reservoir's '&' head cut off), in
    the sample form of the announced version (docs/stream.md); '=' entries skipped."""
    return sum(1 for item in sample_line_items(body, {"version": version}) if item[0] == "sample")


def stream_line_check(text):
    """The sum12 check of a stream line's text (docs/stream.md), as its two base64 characters."""
    raw = text.encode("utf-8", "surrogateescape")
    raw += b"\0" * (-len(raw) % 4)
    a = b = 0
    for i in range(0, len(raw), 4):
        a += int.from_bytes(raw[i:i + 4], "little")
        b += a
    c = (a + 3 * b) % 4095
    return B64[c >> 6] + B64[c & 63]


def run(name):
    s = SCENARIOS[name]
    elf = build(s)
    out = os.path.dirname(elf)
    syms = {n: a for a, _, n in functions(elf)}
    handler = syms.get(isr_of(s))
    args = ["out=" + os.path.join(out, "counts.txt"), "begin=0x%x" % syms["truth_begin"],
            "end=0x%x" % syms["truth_end"], "mark=0x%x" % (handler or 0), "marks=" + os.path.join(out, "marks.txt")]
    if s["app"] == "frtos":
        args += frtos_truth_args(out, elf)
    uart = os.path.join(out, "uart.txt")
    serial = "null" if s["defs"].get("BOARD_SEMIHOST_OUT") else "file:" + uart
    cmd = qemu_machine(s["core"]) + [
           "-display", "none", "-monitor", "none", "-serial", serial,
           "-semihosting-config", "enable=on,target=native,userspace=on"] + (["-icount", "shift=0"] if s["icount"] else []) + \
        kernel_args(s, elf) + ["-plugin", PLUGIN + "," + ",".join(args)]
    if s["gdb"]:
        return run_halting(name, cmd, elf, uart, s["gdb_args"])
    if s.get("rtt"):
        return run_rtt(name, cmd, elf, uart)
    with text_sink(name, uart) as text_out:
        r = subprocess.run(cmd, stdout=text_out, stderr=subprocess.PIPE, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError("%s: qemu exited %d: %s" % (name, r.returncode, r.stderr.strip()))
    text = open(uart, errors="replace").read()
    if "end\n" not in text and "cost " not in text and "taken=" not in text and "done\n" not in text:
        raise RuntimeError("%s: no dump on the UART" % name)
    return name


def text_sink(name, uart):
    """QEMU's standard output: uart.txt where the firmware's text goes out through semihosting
    (semihost_out), else nothing (-monitor none; the UART writes uart.txt itself)."""
    return open(uart, "wb") if SCENARIOS[name]["defs"].get("BOARD_SEMIHOST_OUT") else open(os.devnull, "wb")


def kernel_args(s, elf):
    """QEMU's images: the scenario's firmware; for a Non-Secure one, QEMU boots the Secure image
    (its vectors at the Secure alias) and loads the firmware beside it; Secure firmware that calls
    Non-Secure code (TZ_S) or runs a Non-Secure handler (NS_IRQ) has that image loaded beside it."""
    if CORES[s["core"]][2] == "an505_ns":
        return ["-kernel", tz_secure_elf(os.path.dirname(elf)), "-device", "loader,file=" + elf]
    if s["defs"].get("TZ_S") or s["defs"].get("NS_IRQ"):
        return ["-kernel", elf, "-device", "loader,file=" + tz_ns_callee_elf(os.path.dirname(elf), tz_ns_app(s))]
    return ["-kernel", elf]


def qemu_machine(core):
    """qemu-system-arm and its options for core's machine (the board, the CPU, the RAM)."""
    machine, cpu, board = CORES[core]
    return ["qemu-system-arm", "-M", machine] + (["-cpu", cpu] + QEMU_BOARD[board] if board in QEMU_BOARD else [])


_memory_cache = {}


def memory_map(core):
    """The memory QEMU gives core's machine, as its monitor's `info mtree -f` lists it: sorted
    [start, end, kind] (end exclusive; kind "ram", or "rom" for ROM and ROM devices, which ignore
    writes), regions of one kind that touch merged. Anything else (I/O, nothing) is no memory:
    QEMU reads 0 there and drops writes without a fault."""
    if core in _memory_cache:
        return _memory_cache[core]
    out = sh(qemu_machine(core) + ["-display", "none", "-serial", "none", "-monitor", "stdio", "-S"],
             input="info mtree -f\nquit\n", timeout=60)
    regions = set()
    # TrustZone boards (mps2-an505): the CPU reaches its SRAMs through memory protection controllers
    # (tz-mpc-upstream windows, open to Secure accesses as reset leaves them); the RAM behind each sits
    # at 0 in a view of its own, which is not the CPU's
    views = [v for v in re.split(r"^FlatView #\d+$", out, flags=re.M) if 'AS "tz-mpc-downstream"' not in v]
    for m in re.finditer(r"^\s*([0-9a-f]+)-([0-9a-f]+) \(prio -?\d+, (ram|rom|romd|i/o)\): (\S+)", "".join(views), re.M):
        if m.group(3) != "i/o" or m.group(4) == "tz-mpc-upstream":
            regions.add((int(m.group(1), 16), int(m.group(2), 16) + 1, "rom" if m.group(3).startswith("rom") else "ram"))
    merged = []
    for start, end, kind in sorted(regions):
        if merged and merged[-1][2] == kind and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    if not merged:
        raise RuntimeError("%s: no memory in QEMU's info mtree" % CORES[core][0])
    _memory_cache[core] = merged
    return merged


def elf_layout(elf):
    """(sections, segments, symbols) of a 32-bit little-endian ELF: sections as (name, addr, size,
    writable) for those that take memory (SHF_ALLOC, size > 0); PT_LOAD segments as (paddr, filesz,
    vaddr, memsz, writable); the value of every named symbol in .symtab."""
    import struct
    data = open(elf, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise RuntimeError("%s: not a 32-bit little-endian ELF" % elf)
    phoff, shoff = struct.unpack_from("<II", data, 28)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 42)
    heads = [struct.unpack_from("<IIIIIIIIII", data, shoff + k * shentsize) for k in range(shnum)]
    names = heads[shstrndx][4]
    sections = []
    for h in heads:
        if h[2] & 2 and h[5]:  # SHF_ALLOC
            name = data[names + h[0]:data.index(b"\0", names + h[0])].decode()
            sections.append((name, h[3], h[5], bool(h[2] & 1)))
    segments = []
    for k in range(phnum):
        p = struct.unpack_from("<IIIIIIII", data, phoff + k * phentsize)
        if p[0] == 1:  # PT_LOAD
            segments.append((p[3], p[4], p[2], p[5], bool(p[6] & 2)))
    symbols = {}
    for h in heads:
        if h[1] == 2:  # SHT_SYMTAB, its names in the string table it links to
            strtab = heads[h[6]][4]
            for off in range(h[4], h[4] + h[5], 16):
                name, value = struct.unpack_from("<II", data, off)
                if name:
                    symbols[data[strtab + name:data.index(b"\0", strtab + name)].decode()] = value
    return sections, segments, symbols


MIN_MAIN_STACK = 1024  # bytes left between .bss and the top of a Cortex-M board's RAM, at the least


def memory_misfits(core, elf, layout=None):
    """What of elf's image lies outside the memory QEMU gives core's machine: code, data, .bss
    (the sampler's ring and histogram, the Cortex-A/R boards' stacks) and the loader's copies each
    inside one region, everything written to in RAM; on Cortex-M (sections.ld's _estack) the main
    stack between .bss and _estack in RAM, at least MIN_MAIN_STACK bytes of it. One line each."""
    regions = memory_map(core)

    def place(start, size, need_ram):
        for lo, hi, kind in regions:
            if lo <= start and start + size <= hi:
                return None if kind == "ram" or not need_ram else "in ROM [0x%x, 0x%x)" % (lo, hi)
        return "outside the machine's memory"

    sections, segments, symbols = layout or elf_layout(elf)
    bad = []
    for name, addr, size, writable in sections:
        why = place(addr, size, writable)
        if why:
            bad.append("%s [0x%x, 0x%x) %s" % (name, addr, addr + size, why))
    for paddr, filesz, vaddr, memsz, writable in segments:
        for what, start, size, ram in (("load", paddr, filesz, False), ("segment", vaddr, memsz, writable)):
            why = place(start, size, ram) if size else None
            if why:
                bad.append("%s [0x%x, 0x%x) %s" % (what, start, start + size, why))
    if "_estack" in symbols:
        low = symbols.get("_ebss", 0)
        why = place(low, symbols["_estack"] - low, True) if symbols["_estack"] > low else "below .bss's end"
        if why or symbols["_estack"] - low < MIN_MAIN_STACK:
            bad.append("main stack [0x%x, 0x%x) %s" % (low, symbols["_estack"], why or "under %d bytes" % MIN_MAIN_STACK))
    return bad


def frtos_truth_args(out, elf):
    """The plugin's contexts for the FreeRTOS scenario: task marker stubs, handler markers, and the
    sampler's code, which runs in no context (it cannot sample itself)."""
    f = {n: (a, size) for a, size, n in functions(elf)}
    args = ["ctx=" + os.path.join(out, "contexts.txt"), "tasks=0x%x:%d" % (f["truth_task_marks"][0],
                                                                         f["truth_task_marks"][1] // 4),
            "isrs=0x%x:%d" % (f["truth_isr_marks"][0], f["truth_isr_marks"][1] // 4),
            "leave=0x%x" % f["truth_isr_leave"][0]]
    return args + ["skip=0x%x:0x%x" % (f[n][0], f[n][0] + f[n][1]) for n in sorted(SAMPLER) if n in f]


def free_port():
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


EVEN_P = 0.001  # a loop's halts are uneven beyond chance when a chi-square this unlikely says so ...
EVEN_DEV = 0.2  # ... and by more than this on one instruction against the body's mean
HALTING_ATTEMPTS = 3


def chi2_sf(x, df):
    """P(chi-square with df degrees of freedom >= x), exact for even df."""
    if df % 2:
        raise ValueError("chi2_sf: odd degrees of freedom")
    term = total = math.exp(-x / 2)
    for k in range(1, df // 2):
        term *= x / 2 / k
        total += term
    return total


def recorded_halts(name):
    """Halts per PC in a halting scenario's record (gdb.rec, from cmprof-top --record)."""
    with open(os.path.join(BUILD, name, "gdb.rec"), errors="replace") as fp:
        return collections.Counter(int(ln.split()[1], 16) for ln in fp if ln.startswith("p "))


def uneven_loops(name):
    """The premise the halting scenarios rest on, checked on the run's own halts: QEMU spends the
    same host time on each guest instruction, so halts land in proportion to instructions. Each
    loop body runs its instructions equally often (the plugin's counts say which those are), so its
    halts must spread evenly over them. Returns {loop: {chi2, p, dev, halts}}: the chi-square of
    the halts per body instruction, its p, and the largest relative deviation from their mean.
    Some QEMU runs break the premise for their whole length: one run here put 2,418 halts on one
    instruction of hot_a's body and 670-932 on each of the other four (dev 1.12). Normal runs show
    a small unevenness that a long run makes significant (p < 0.001 in 5 of 30), hence EVEN_DEV."""
    r = Result(name)
    halts = recorded_halts(name)
    out = {}
    for f in r.s["even"]:
        a, size = r.sym.by_name[f]
        mine = {pc: n for pc, n in r.counts.items() if a <= pc < a + size}
        top = max(mine.values())
        # the loop's compare and branch run once more a call than the rest of the body
        body = sorted(pc for pc, n in mine.items() if n * 100 >= top * 99)
        seen = [halts[pc] for pc in body]
        mean = sum(seen) / len(seen)
        chi2 = sum((x - mean) ** 2 / mean for x in seen) if mean else 0.0
        out[f] = {"chi2": chi2, "p": chi2_sf(chi2, len(seen) - 1),
                  "dev": max(abs(x - mean) for x in seen) / mean if mean else 0.0, "halts": seen}
    return out


def loop_uneven(fig):
    """One loop's uneven_loops figures break the premise: beyond chance and by more than a fifth."""
    return fig["p"] < EVEN_P and fig["dev"] > EVEN_DEV


def control_holds(attempt):
    """True when no loop of one attempt's uneven_loops figures is uneven."""
    return not any(loop_uneven(fig) for fig in attempt.values())


def samples_in(name, functions):
    """The samples a halting scenario's report (gdb.out: JSON rows, or folded stacks by their leaf)
    gives the functions."""
    text = open(os.path.join(BUILD, name, "gdb.out")).read()
    if text.startswith("{"):
        return sum(row.get("samples", 0) for row in json.loads(text).get("rows", []) if row.get("name") in functions)
    return sum(float(ln.rsplit(" ", 1)[1]) for ln in text.splitlines()
               if ln.rsplit(" ", 1)[0].split(";")[-1] in functions)


def run_halting(name, cmd, elf, uart, extra):
    """Runs a halting scenario; when its loops' halts show that QEMU's host time was not even per
    instruction (uneven_loops), or it made no more samples than its floor, runs it again, up to
    HALTING_ATTEMPTS times in all. control.json keeps every attempt's loop figures and attempts.json
    its samples in the floor's functions, for the checks and the report."""
    spec, control, got = SCENARIOS[name], [], []
    for _ in range(HALTING_ATTEMPTS):
        run_halting_once(name, cmd, elf, uart, extra)
        if spec["even"]:
            control.append(uneven_loops(name))
            with open(os.path.join(os.path.dirname(elf), "control.json"), "w") as fp:
                json.dump(control, fp)
        if spec["floor"]:
            got.append(samples_in(name, spec["floor"][0]))
            with open(os.path.join(os.path.dirname(elf), "attempts.json"), "w") as fp:
                json.dump(got, fp)
        if (not control or control_holds(control[-1])) and (not got or got[-1] > spec["floor"][1]):
            break
    return name


def run_halting_once(name, cmd, elf, uart, extra):
    """QEMU waits at reset with its gdbstub (-S); cmprof-top samples through it until the program
    ends. -singlestep: otherwise QEMU stops only at translation-block starts (design-notes 9)."""
    port = free_port()
    extra = [a.replace("{out}", os.path.dirname(elf)) for a in extra]
    with text_sink(name, uart) as text_out:
        q = subprocess.Popen(cmd + ["-singlestep", "-gdb", "tcp:127.0.0.1:%d" % port, "-S"],
                             stdout=text_out, stderr=subprocess.PIPE, text=True)
    try:
        # --force: --record writes over the last attempt's gdb.rec
        t = subprocess.run([TOOL, "--batch", "--no-inline", "--duration", "300", "--force", "--rate", "max"] +
                           (extra or ["-o", "json"]) +
                           ["gdb:127.0.0.1:%d" % port, elf], capture_output=True, text=True, timeout=360)
        qerr = q.communicate(timeout=60)[1]
    finally:
        if q.poll() is None:
            q.kill()
    if q.returncode != 0:
        raise RuntimeError("%s: qemu exited %d: %s" % (name, q.returncode, qerr.strip()))
    # the program's end cuts the run short of --duration: said, and the partial status (4)
    ended = t.returncode == 4 and "the target exited with status 0" in t.stderr
    if not ended or "done\n" not in open(uart, errors="replace").read():
        raise RuntimeError("%s: cmprof-top exited %d: %s" % (name, t.returncode, t.stderr.strip()))
    open(os.path.join(os.path.dirname(elf), "gdb.out"), "w").write(t.stdout)
    return name


def wait_for_text(path, text, proc, timeout=60.0):
    """Waits until the file at path holds text (what the guest prints), or fails when proc ended first."""
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and text in open(path, errors="replace").read():
            return
        if proc.poll() is not None:
            raise RuntimeError("qemu exited %s before printing %r" % (proc.returncode, text))
        time.sleep(0.05)
    raise RuntimeError("no %r in %s within %.0f s" % (text, path, timeout))


def run_rtt(name, cmd, elf, uart):
    """QEMU runs from reset with its gdbstub (no -S: the guest runs when cmprof-top attaches); the
    firmware waits, spinning, until a host has read its announce out of the RTT buffer. cmprof-top
    reads the stream through rtt: until the program ends; its record (rtt.rec, the stream's bytes) and
    JSON report (rtt.json) are what the checks read."""
    port = free_port()
    out = os.path.dirname(elf)
    for f in ("rtt.rec", "rtt.json", uart):
        if os.path.exists(os.path.join(out, f)):
            os.remove(os.path.join(out, f))
    q = subprocess.Popen(cmd + ["-gdb", "tcp:127.0.0.1:%d" % port], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        wait_for_text(uart, "boot: ", q)
        t = subprocess.run([TOOL, "--batch", "--no-inline", "--duration", "300", "--force", "--record",
                            os.path.join(out, "rtt.rec"), "-o", "json", "rtt:127.0.0.1:%d" % port, elf],
                           capture_output=True, text=True, timeout=360)
        qerr = q.communicate(timeout=60)[1]
    finally:
        if q.poll() is None:
            q.kill()
    if q.returncode != 0:
        raise RuntimeError("%s: qemu exited %d: %s" % (name, q.returncode, qerr.strip()))
    ended = t.returncode == 4 and "the target exited with status 0" in t.stderr
    if not ended or "done\n" not in open(uart, errors="replace").read():
        raise RuntimeError("%s: cmprof-top exited %d: %s" % (name, t.returncode, t.stderr.strip()))
    open(os.path.join(out, "rtt.json"), "w").write(t.stdout)
    return name


def run_all(names):
    build_plugin()
    failed = 0
    # the scenarios sampled by wall-clock halts run last, one at a time: another QEMU on the other
    # core changes how much host time each guest instruction takes, and so their shares
    halting = [n for n in names if SCENARIOS[n]["gdb"] or SCENARIOS[n].get("rtt")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futs = {pool.submit(run, n): n for n in names if n not in halting}
        for f in concurrent.futures.as_completed(futs):
            try:
                print("ran %s" % f.result(), flush=True)
            except Exception as e:  # report every failure, keep running the rest
                failed += 1
                print("error: %s" % e, flush=True)
    for n in halting:
        try:
            print("ran %s" % run(n), flush=True)
        except Exception as e:
            failed += 1
            print("error: %s" % e, flush=True)
    return failed


# ---------------------------------------------------------------------------------------------
# reading results

_funcs_cache = {}


def _arm_mapping_symbol(name):
    """nm hides the ARM ELF mapping symbols ($a, $t, $d, $x and their "$t.N" forms)."""
    return len(name) >= 2 and name[0] == "$" and name[1] in "atdx" and (len(name) == 2 or name[2] == ".")


def _nm_function_symbols(data):
    """(value, size, name) of the symbols `nm -S --defined-only` shows as T, t or W with a size,
    read from a 32-bit little-endian ELF's own symbol table: a global or local symbol in an
    executable section (T/t), or a weak defined symbol that is not an object (W)."""
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x01\x01":
        raise ValueError("not a 32-bit little-endian ELF file")
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    secs = [struct.unpack_from("<10I", data, shoff + i * shentsize) for i in range(shnum)]
    syms = []
    for sec in (s for s in secs if s[1] == 2):  # SHT_SYMTAB
        strtab = secs[sec[6]][4]
        for off in range(sec[4], sec[4] + sec[5], sec[9] or 16):
            name_off, value, size, info, _, shndx = struct.unpack_from("<IIIBBH", data, off)
            bind, kind = info >> 4, info & 15
            if shndx == 0 or size == 0 or kind in (3, 4):  # undefined, sizeless, section, file
                continue
            if bind == 2:
                keep = kind != 1  # a weak object is nm's V
            else:
                keep = bind in (0, 1) and kind != 10 and shndx < shnum and secs[shndx][2] & 4  # SHF_EXECINSTR
            raw = data[strtab + name_off:data.index(b"\0", strtab + name_off)]
            name = raw.decode()
            # a name with white space would not split into nm's four fields
            if keep and len(name.split()) == 1 and not _arm_mapping_symbol(name):
                syms.append((value, raw, size, name))
    syms.sort(key=lambda s: s[:2])  # nm -n: by value, then by name (C.UTF-8 collation: bytes)
    return [(value, size, name) for value, _, size, name in syms]


def shared_function_names(elf):
    """{name: its files} of the function names the ELF's local symbols define in two files or more
    (each symbol's file: the STT_FILE symbol before it, as nm -l would not say), which cmprof-top's
    rows name with their files, "put_str (cmprof_sampler.c)"."""
    with open(elf, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    secs = [struct.unpack_from("<10I", data, shoff + i * shentsize) for i in range(shnum)]
    files, current = collections.defaultdict(set), None
    for sec in (s for s in secs if s[1] == 2):  # SHT_SYMTAB
        strtab = secs[sec[6]][4]
        for off in range(sec[4], sec[4] + sec[5], sec[9] or 16):
            name_off, value, size, info, _, shndx = struct.unpack_from("<IIIBBH", data, off)
            name = data[strtab + name_off:data.index(b"\0", strtab + name_off)].decode()
            if info & 15 == 4:  # STT_FILE
                current = name
            elif info & 15 == 2 and info >> 4 == 0 and current:  # a local function
                files[re.sub(r"\.(constprop|isra|part|cold|lto_priv)(\.\d+)*", "", name)].add(current)
    return {name: fs for name, fs in files.items() if len(fs) > 1}


def by_function_name(rows, elf):
    """Samples per function name from cmprof-top's function rows, as the truth names functions (by
    symbol, nm's way): the rows of a name the ELF's static functions share ("put_str (a.c)", one per
    file) add up; a row named with a file any other way keeps that name (and matches no truth)."""
    shared, out = shared_function_names(elf), collections.Counter()
    for row in rows:
        m = re.match(r"^(.*) \(([^()]+)\)$", row["name"])
        out[m.group(1) if m and m.group(2) in shared.get(m.group(1), ()) else row["name"]] += row["samples"]
    return out


def functions(elf):
    """Function symbols (address, size, name), Thumb bit cleared, by address: nm -n's T, t and W,
    the first name at each address. Read from the ELF's symbol table here, as nm would load
    binutils' LTO plugin on each of the hundreds of ELFs the checks read."""
    if elf in _funcs_cache:
        return _funcs_cache[elf]
    with open(elf, "rb") as f:
        data = f.read()
    try:
        symbols = _nm_function_symbols(data)
    except (ValueError, struct.error) as e:
        raise RuntimeError("%s: cannot read its symbol table: %s" % (elf, e))
    funcs, seen = [], set()
    for value, size, name in symbols:
        a = value & ~1
        if a not in seen:
            seen.add(a)
            funcs.append((a, size, name))
    _funcs_cache[elf] = funcs
    return funcs


class Symbols:
    def __init__(self, elf):
        self.funcs = functions(elf)
        self.starts = [a for a, _, _ in self.funcs]
        self.by_name = {n: (a, sz) for a, sz, n in self.funcs}

    def lookup(self, pc):
        import bisect
        i = bisect.bisect_right(self.starts, pc) - 1
        if i >= 0 and pc < self.funcs[i][0] + self.funcs[i][1]:
            return self.funcs[i][2]
        return "?"


class Result:
    def __init__(self, name):
        self.name = name
        self.s = SCENARIOS[name]
        d = os.path.join(BUILD, name)
        self.elf = os.path.join(d, "fw.elf")
        self.sym = Symbols(self.elf)
        self._resolved = {}
        self.total, self.window, self.counts, self.wcounts = 0, 0, {}, {}
        for line in open(os.path.join(d, "counts.txt")):
            f = line.split()
            if f[0] == "total":
                self.total = int(f[1])
            elif f[0] == "window":
                self.window = int(f[1])
            elif f[0] == "error":
                raise RuntimeError("%s: truth plugin: %s" % (name, line.strip()))
            else:
                pc = int(f[0], 16)
                self.counts[pc] = int(f[1])
                if int(f[2]):
                    self.wcounts[pc] = int(f[2])
        marks = os.path.join(d, "marks.txt")
        self.marks = [int(x) for x in open(marks)] if os.path.exists(marks) else []
        self.parse_uart(open(os.path.join(d, "uart.txt"), errors="replace").read())

    def parse_uart(self, text):
        self.chunks, self.hist, self.tasks, self.kv = [], None, {}, {}
        cur = None
        for line in text.splitlines():
            f = line.split()
            if not f:
                continue
            if line.startswith("prof raw"):
                cur = {"pcs": [], "tags": []}
                self.chunks.append(cur)
            elif line.startswith("prof hist"):
                m = re.match(r"prof hist base=0x([0-9a-f]+) shift=(\d+) n=(\d+) out=(\d+)", line)
                self.hist = {"base": int(m.group(1), 16), "shift": int(m.group(2)), "n": int(m.group(3)),
                             "out": int(m.group(4)), "bins": []}
            elif f[0] == "p":
                cur["pcs"] += [int(x, 16) for x in f[1:]]
            elif f[0] == "g":
                cur["tags"] += [int(x, 16) for x in f[1:]]
            elif f[0] == "h":
                self.hist["bins"] += [int(x, 16) for x in f[1:]]
            elif f[0] == "task":
                self.tasks[int(f[1], 16)] = f[2]
            elif f[0] == "sect":
                self.kv.setdefault("sect", []).append(dict({k: int(v) for k, v in (x.split("=") for x in f[2:])},
                                                           index=int(f[1])))
            elif f[0] == "sectev":
                self.kv.setdefault("sectev", {})[(int(f[1]), int(f[2]))] = {k: int(v) for k, v in
                                                                           (x.split("=") for x in f[3:])}
            else:
                for x in f:
                    if "=" in x:
                        k, v = x.split("=", 1)
                        if v.isdigit():
                            self.kv[k] = int(v)

    @property
    def pcs(self):
        return [pc for c in self.chunks for pc in c["pcs"]]

    @property
    def tags(self):
        return [t for c in self.chunks for t in c["tags"]]

    def truth(self, exclude=SAMPLER):
        """Instructions per function inside the truth window, the sampler excluded."""
        t = collections.Counter()
        for pc, n in self.wcounts.items():
            f = self.sym.lookup(pc)
            if f not in exclude:
                t[f] += n
        return t

    def tool(self, by="function", inline=False, samples=None, elf=None, extra=()):
        """Run cmprof-top --batch -o json on this scenario's UART capture."""
        cmd = [TOOL, "--batch", "-o", "json", "--by", by] + ([] if inline else ["--no-inline"])
        cmd += ["--samples", str(samples)] if samples else []
        cmd += list(extra) + [os.path.join(BUILD, self.name, "uart.txt"), elf or self.elf]
        r = subprocess.run(cmd, capture_output=True, text=True)
        # 5: a wrong ELF, which a check may ask for on purpose (elf=: another scenario's)
        if r.returncode not in ((0, 2, 5) if elf else (0, 2)):
            raise RuntimeError("cmprof-top failed (%d): %s" % (r.returncode, r.stderr.strip()))
        return json.loads(r.stdout)

    def resolved(self, pcs):
        """PC -> the containing function, as cmprof-top --resolve names it (outermost frame)."""
        todo = sorted(set(pcs) - set(self._resolved))
        if todo:
            out = sh([TOOL, "--resolve", self.elf], input="\n".join("%x" % pc for pc in todo) + "\n")
            lines, cur, frames = out.splitlines(), None, []
            for ln in lines + ["0x"]:
                if ln.startswith("0x"):
                    if cur is not None:
                        self._resolved[cur] = frames[-1] if frames else "??"
                    cur = int(ln, 16) if len(ln) > 2 else None
                    frames, odd = [], True
                elif odd:
                    frames.append(ln)
                    odd = False
                else:
                    odd = True
        return self._resolved

    def profile(self, pcs=None):
        """Samples per function. The whole capture goes through cmprof-top --batch; a slice of the
        samples is counted here with cmprof-top --resolve names."""
        if pcs is None:
            return by_function_name(self.tool()["rows"], self.elf)
        names = self.resolved(pcs)
        return collections.Counter(names[pc] for pc in pcs)

    def hist_profile(self):
        """Bucket counts spread over the functions each bucket overlaps, by byte share."""
        h = self.hist
        size = 1 << h["shift"]
        cnt = collections.Counter()
        for k, n in enumerate(h["bins"]):
            if not n:
                continue
            start = h["base"] + k * size
            owners = [self.sym.lookup(a) for a in range(start, start + size, 2)]
            owners = [o for o in owners if o != "?"] or ["?"]
            for o in owners:
                cnt[o] += n / len(owners)
        return cnt

    def library_cost(self, putc="board_putc"):
        """Instructions per sample spent in the library's own code between the truth marks
        (handler, ring, tags, formatting, check, drain), and in the board's putc it calls."""
        lib = library_functions(self.name)
        per = {}
        for pc, n in self.counts.items():
            f = self.sym.lookup(pc)
            per[f] = per.get(f, 0) + n
        return sum(v for f, v in per.items() if f in lib), per.get(putc, 0)

    def handler_cost(self):
        """Instructions executed by the sampling interrupt per sample, from the truth counts."""
        isr = isr_of(SCENARIOS[self.name]) if self.name in SCENARIOS else "SysTick_Handler"
        names = (isr, "board_vectors", "board_irq", "cmprof_tick", "cmprof_tick_frame")
        total = sum(n for pc, n in self.counts.items() if self.sym.lookup(pc) in names)
        entry = self.sym.by_name[isr][0]
        return total, self.counts.get(entry, 0)


def library_functions(name):
    """Names of the functions the firmware library contributes to a scenario's build: the sampler
    and, when streaming, the stream code, compiled alone with the scenario's own options."""
    sc = SCENARIOS[name]
    cpu = gcc_cpu(CORES[sc["core"]][1])
    names = set()
    files = ["cmprof_sampler.c"] + (["cmprof_stream.c"] if sc["defs"].get("CMPROF_STREAM") else []) + \
        (["cmprof_stack.c"] if sc["defs"].get("CMPROF_STACKS") else [])
    files += ["cmprof_rtt.c"] if sc.get("rtt") else []
    files += ["cmprof_tasks.c"] if sc["defs"].get("CMPROF_STREAM") or sc["defs"].get("CMPROF_TAG") else []
    for f in files:
        obj = os.path.join(BUILD, name, f[:-2] + ".lib.o")
        flags = ["-std=c11", sc["opt"], "-mcpu=" + cpu, "-mthumb", "-mfloat-abi=soft",
                 "-I" + os.path.join(ROOT, "firmware")] + sc["cflags"] + \
            ["-D%s=%s" % (k, v) for k, v in sorted(sc["defs"].items())]
        names.update(object_functions(flags, os.path.join(ROOT, "firmware", f), obj))
    return names


def object_functions(flags, src, obj):
    """The text symbols of src compiled alone with flags (into obj). Kept (build/fwobj) under a digest
    of the compiler, the flags that are not -D or -I and the preprocessed source, as compile_and_link
    keeps objects: the checks ask for the same library files of many scenarios, mostly the same text."""
    gcc = "arm-none-eabi-gcc"
    pre = subprocess.run([gcc] + flags + ["-E", src], capture_output=True)
    compiler = shutil.which(gcc) or gcc
    st = os.stat(compiler) if os.path.exists(compiler) else None
    key = repr(([compiler, st and (st.st_size, st.st_mtime_ns)] + [a for a in flags if not a.startswith(("-D", "-I"))],
                src)).encode() + b"\0" + pre.stdout
    kept = os.path.join(OBJECTS, hashlib.sha256(key).hexdigest()[:32] + ".names")
    if pre.returncode == 0 and os.path.exists(kept):
        with open(kept) as fp:
            return fp.read().split()
    sh([gcc] + flags + ["-c", src, "-o", obj])  # (a source the preprocessor refuses fails here, as gcc says)
    names = [parts[2] for parts in (line.split() for line in sh(["arm-none-eabi-nm", "--defined-only", obj]).splitlines())
             if len(parts) == 3 and parts[1] in "Tt"]
    os.makedirs(OBJECTS, exist_ok=True)
    tmp = "%s.%d-%d.tmp" % (kept, os.getpid(), threading.get_ident())
    with open(tmp, "w") as fp:
        fp.write("\n".join(names) + "\n")
    os.replace(tmp, kept)
    return names


def shares(counter):
    tot = sum(counter.values())
    return {k: v / tot for k, v in counter.items()} if tot else {}


def sigma(p, n):
    return math.sqrt(max(p * (1 - p), 1.0 / n) / n)


def lockstep_cycle(pcs):
    """Smallest P with pcs[i] == pcs[i+P] for every i, or None."""
    n = len(pcs)
    for p in range(1, n // 2):
        if all(pcs[i] == pcs[i + p] for i in range(n - p)):
            return p
    return None


def chi2_bounds(dof, z=3.0):
    """Wilson-Hilferty bounds of chi-square/dof at +-z standard normal deviations."""
    a = 2.0 / (9 * dof)
    lo = (1 - a - z * math.sqrt(a)) ** 3
    hi = (1 - a + z * math.sqrt(a)) ** 3
    return max(lo, 0.0), hi


def disasm(elf):
    return sh(["arm-none-eabi-objdump", "-d", elf])


def addr2line(elf, pcs):
    out = sh(["arm-none-eabi-addr2line", "-f", "-i", "-a", "-e", elf] + ["0x%x" % pc for pc in pcs])
    res, cur = {}, None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            cur = int(lines[i], 16)
            res[cur] = []
            i += 1
        else:
            res[cur].append(lines[i])
            i += 2
    return res


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "run"
    if cmd == "run":
        names = sys.argv[2:] or list(SCENARIOS)
        sys.exit(1 if run_all(names) else 0)
    elif cmd == "build-demo":
        print(build(DEMO))
    elif cmd == "build-demo-plain":  # the same firmware with no cmprof code, for make demo TARGET=gdb
        print(build(scenario("demo_plain", "demo", lib=False, NO_CMPROF=1)))
    elif cmd == "build-demo-a" and len(sys.argv) == 3 and sys.argv[2] in ("cortex-a15", "cortex-a7"):
        print(build_virt("demo_" + sys.argv[2], cpu=sys.argv[2], **DEMO_A))
    elif cmd == "build-demo-a" and sys.argv[2:] == ["cortex-r5"]:
        print(build_virt("demo_cortex-r5", cpu="cortex-r5f", **DEMO_R5))
    else:
        print("usage: scen.py run [NAME...] | build-demo | build-demo-plain | build-demo-a cortex-a15|cortex-a7|cortex-r5"
              " (checks and the report: scen_check.py check | report)",
              file=sys.stderr)
        sys.exit(2)
