#!/usr/bin/env python3
"""Call stacks of RTOS tasks end at the task's entry function (issue 35, item 24). A FreeRTOS task
built from the real kernel (../shared/third_party/FreeRTOS-Kernel, Cortex-M3 port) starts with
LR = prvTaskExitError, which the linker places right after another function. A GDB server stub
(test_gdb.FakeServer) answers the registers and the stack of a core halted in the task; with
--stack-depth and -o folded, every stack must be rooted in the task function, never in the function
before prvTaskExitError, while a real call inside the task is still followed. Prints ok/FAIL lines."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402
from test_gdb import FakeServer  # noqa: E402

KERNEL = os.environ.get("FREERTOS_KERNEL") or os.path.join(ROOT, "..", "shared", "third_party", "FreeRTOS-Kernel")
APP = os.path.join(HERE, "zoo", "task_roots")
ELF = os.path.join(ROOT, "build", "task-roots", "fw.elf")
SP = 0x20001000
TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))


def build():
    os.makedirs(os.path.dirname(ELF), exist_ok=True)
    port = os.path.join(KERNEL, "portable", "GCC", "ARM_CM3")
    sources = [os.path.join(APP, "app.c"), os.path.join(port, "port.c")] + \
        [os.path.join(KERNEL, f) for f in ("tasks.c", "list.c", os.path.join("portable", "MemMang", "heap_4.c"))]
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-O2", "-g", "-I", APP, "-I",
                        os.path.join(KERNEL, "include"), "-I", port] + sources +
                       ["--specs=nosys.specs", "-nostartfiles", "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler",
                        "-o", ELF], capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def functions():
    """name -> (address, size) of the ELF's function symbols."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", ELF], capture_output=True, text=True).stdout
    syms = {}
    for ln in out.splitlines():
        f = ln.split()
        if len(f) == 4 and f[2] in "tT":
            syms[f[3]] = (int(f[0], 16) & ~1, int(f[1], 16))
    return syms


def folded(pcs, regs, stack_word):
    """Stacks (outermost first, ';'-joined) -> samples, from -o folded, the stub answering pcs in turn."""
    srv = FakeServer(pcs, memory={SP: stack_word.to_bytes(4, "little") * 32}, regs=regs)
    r = subprocess.run([TOOL, "--batch", "--no-inline", "-o", "folded", "--samples", "60", "--stack-depth", "8",
                        srv.spec, ELF], capture_output=True, text=True, timeout=30)
    srv.thread.join(5)
    stacks = {}
    for ln in r.stdout.splitlines():
        stack, _, count = ln.rpartition(" ")
        stacks[stack] = stacks.get(stack, 0) + int(count)
    return r.returncode, stacks, r.stderr


def main():
    if not os.path.isdir(KERNEL):
        check("FreeRTOS kernel sources (FREERTOS_KERNEL, else ../shared/third_party)", False, KERNEL)
        return 1
    ok, err = build()
    check("a FreeRTOS task built from the kernel's sources (Cortex-M3 port)", ok, err.strip()[-300:])
    if not ok:
        return 1
    syms = functions()
    trap, worker, step = syms["prvTaskExitError"][0], syms["worker"], syms["step"]
    prev = max((a, n) for n, (a, s) in syms.items() if a < trap)
    before = prev[1]
    gap = trap - prev[0] - syms[before][1]
    check("the linker put prvTaskExitError right after %s (LR - 2 falls in it or its padding)" % before,
          0 <= gap < 4, "%d bytes between them" % gap)
    # a core halted in the task: at its first instruction (LR live) and in its loop (LR pushed);
    # the whole stack snapshot holds prvTaskExitError|1, so wherever the CFI puts LR, that is it
    regs = [0] * 13 + [SP, trap | 1, 0]
    code, stacks, err = folded([worker[0], worker[0] + 2, worker[0] + worker[1] - 2], regs, trap | 1)
    check("task stacks end at the task's entry function, not in %s" % before, code == 0 and
          stacks == {"worker": 60}, "exit %d, %s, %s" % (code, stacks, err.strip()))
    # the control: halted in step (a leaf), called from the task: the call is followed, the root is
    # still the task
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", ELF], capture_output=True, text=True).stdout
    calls = [int(ln.split(":")[0], 16) + 4 for ln in dis.splitlines() if "bl\t" in ln and "<step>" in ln]
    regs = [0] * 13 + [SP, (calls[0] if calls else 0) | 1, 0]
    code, stacks, err = folded([step[0] + 2, step[0] + 4], regs, trap | 1)
    check("a call inside the task is still followed: worker;step", code == 0 and len(calls) == 1 and
          stacks == {"worker;step": 60}, "exit %d, calls %s, %s, %s" % (code, calls, stacks, err.strip()))
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
