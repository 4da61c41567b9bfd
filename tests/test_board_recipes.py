#!/usr/bin/env python3
"""docs/boards.md's board recipes, followed literally: the fenced blocks between each
`<!-- recipe: NAME (CPU)` marker and the next `<!-- recipe end -->` are taken exactly as printed
(the C block is main.c; the sh or cmake block gives the -D options), built for the recipe's core
with its timer port, and run where QEMU has the machine, then read with cmprof-top --batch:

  nucleo-f4  Cortex-M4, STM32 TIM3, USART2: built so; run on netduinoplus2 (an STM32F405), USART2
             its second serial port, with SysTick for TIM3 (QEMU 7.2's STM32 timers never interrupt);
  nrf52-dk   Cortex-M4, nRF TIMER1, UART0: built for the nRF52's M4, and run for the nRF51's M0 on
             microbit (the same TIMER and legacy UART registers);
  pico       Cortex-M0+, RP2040 alarm 0: built and linked (no RP2040 in QEMU 7.2), the pico-sdk's
             uart/gpio calls stood in for; the alarm vector checked in the ELF.

"Yours" (app_step) is a loop of 3 parts recipe_hot to 1 part recipe_cold that ends the run by
semihosting after a number of rounds. Prints one ok/FAIL line per check; the tool is read from
CMPROF_TOOL."""
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
OUT = os.path.join(ROOT, "build", "board-recipes")
BOARD = os.path.join(ROOT, "scenarios", "board")
FW = os.path.join(ROOT, "firmware")

APP = r'''
#include <stdint.h>

#define SPIN(n) for (volatile uint32_t i = 0; i < (n); i++)

__attribute__((noinline)) void recipe_hot(void) { SPIN(3000u); }
__attribute__((noinline)) void recipe_cold(void) { SPIN(1000u); }

/* semihosting SYS_EXIT, ADP_Stopped_ApplicationExit: QEMU ends */
static void qemu_exit(void)
{
    register uint32_t r0 __asm__("r0") = 0x18u;
    register uint32_t r1 __asm__("r1") = 0x20026u;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}

void app_step(void)
{
    static uint32_t steps;
    recipe_hot();
    recipe_cold();
    if (++steps >= RECIPE_STEPS)
        qemu_exit();
}
'''

# The pico-sdk calls the Pico recipe makes, as stand-ins with the SDK's signatures.
PICO_UART_H = r'''
#pragma once
#include <stdint.h>
typedef struct uart_inst uart_inst_t;
extern uart_inst_t *const pico_uart0;
#define uart0 pico_uart0
unsigned uart_init(uart_inst_t *uart, unsigned baudrate);
void uart_putc_raw(uart_inst_t *uart, char c);
static inline void uart_putc(uart_inst_t *uart, char c) { uart_putc_raw(uart, c); }
'''
PICO_GPIO_H = r'''
#pragma once
enum gpio_function { GPIO_FUNC_UART = 2 };
void gpio_set_function(unsigned gpio, enum gpio_function fn);
'''
PICO_SDK_C = r'''
#include "hardware/gpio.h"
#include "hardware/uart.h"
struct uart_inst { volatile uint32_t dr; };
static struct uart_inst uart0_inst;
uart_inst_t *const pico_uart0 = &uart0_inst;
unsigned uart_init(uart_inst_t *uart, unsigned baudrate) { (void)uart; return baudrate; }
void uart_putc_raw(uart_inst_t *uart, char c) { uart->dr = (uint8_t)c; }
void gpio_set_function(unsigned gpio, enum gpio_function fn) { (void)gpio; (void)fn; }
'''

MACHINE = {"nucleo-f4": ("netduinoplus2", "stm32", ["-serial", "null", "-serial", "file:{uart}"], 0),
           "nrf52-dk": ("microbit", "nrf51", ["-serial", "file:{uart}"], 4)}


def recipes():
    """{name: (cpu, {"c": [...], "sh": [...], "cmake": [...]})} from docs/boards.md, as printed."""
    text = open(os.path.join(ROOT, "docs", "boards.md")).read()
    out = {}
    for name, cpu, body in re.findall(r"<!-- recipe: ([\w-]+) \(([\w-]+)\)\..*?-->(.*?)<!-- recipe end -->", text, re.S):
        blocks = {}
        for lang, code in re.findall(r"^```(\w+)\n(.*?)^```$", body, re.S | re.M):
            blocks.setdefault(lang, []).append(code)
        out[name] = (cpu, blocks)
    return out


def options(blocks):
    """The -D options of the sh block, or of the cmake block's target_compile_definitions."""
    if "sh" in blocks:
        sh = " ".join(b.replace("\\\n", " ") for b in blocks["sh"])
        return re.findall(r"(?<!\S)-D\S+", sh), re.search(r"-mcpu=(\S+)", sh).group(1)
    m = re.search(r"target_compile_definitions\(\w+ PRIVATE ([^)]*)\)", "".join(blocks.get("cmake", [])))
    return ["-D" + d for d in m.group(1).split()] if m else [], None


def library_files(blocks):
    """The library's files the recipe's sh or cmake block names (cmprof/firmware/X.c), as printed."""
    text = "".join(blocks.get("sh", []) + blocks.get("cmake", []))
    return sorted(set(re.findall(r"cmprof/firmware/(\w+\.c)", text)))


def gcc(name, cpu, main_c, defs, extra, link, steps, library):
    out = os.path.join(OUT, name + "-" + cpu)
    os.makedirs(out, exist_ok=True)
    files = {"main.c": main_c, "app.c": APP}
    files.update(extra)
    for f, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(out, f)), exist_ok=True)
        with open(os.path.join(out, f), "w") as fh:
            fh.write(text)
    elf = os.path.join(out, "fw.elf")
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-g", "-mcpu=" + cpu, "-mthumb",
           "-mfloat-abi=soft", "-I" + FW, "-I" + out, "-DRECIPE_STEPS=%d" % steps] + defs
    cmd += [os.path.join(out, f) for f in files if f.endswith(".c")]
    cmd += [os.path.join(FW, f) for f in library] + link + ["-o", elf]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("recipe %s does not build for %s: %s" % (name, cpu, r.stderr.strip()[-800:]))
    return elf


def board_link(board):
    """The scenarios' startup (vector table, .data copy) and linker script standing in for yours."""
    return ["-DBOARD_" + board, os.path.join(BOARD, "startup.c"), "-nostdlib", "-lc", "-lgcc", "-Wl,--build-id",
            "-L" + FW, "-Wl,-T,cmprof_build_id.ld", "-L" + BOARD, "-Wl,-T,%s.ld" % board]


def run_and_judge(name, elf):
    machine, _, serial, shift = MACHINE[name]
    uart = os.path.join(os.path.dirname(elf), "uart.txt")
    r = subprocess.run(["qemu-system-arm", "-M", machine, "-display", "none", "-monitor", "none"] +
                       [a.format(uart=uart) for a in serial] +
                       ["-semihosting-config", "enable=on,target=native", "-icount", "shift=%d" % shift,
                        "-kernel", elf], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("qemu exited %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--no-inline", uart, elf], capture_output=True, text=True)
    j = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    rows = {row["name"]: row["samples"] for row in j.get("rows", [])}
    hot, cold, total = rows.get("recipe_hot", 0), rows.get("recipe_cold", 0), j.get("total", 0)
    n = hot + cold
    # the two loops differ only in rounds: 3 to 1 in instructions, so 0.75 of their samples, +-4 sigma
    share_ok = n > 0 and abs(hot / n - 0.75) <= 4 * math.sqrt(0.75 * 0.25 / n)
    check("boards.md %s on QEMU %s: the stream read by cmprof-top --batch, samples nearly all in the application's "
          "loops, 3 to 1 as their instructions, none lost" % (name, machine),
          r.returncode == 0 and total >= 300 and n >= 0.9 * total and share_ok and not j.get("lost"),
          "exit %d, %s samples: recipe_hot %d, recipe_cold %d (%.3f of the two), lost %s; %s" % (
              r.returncode, total, hot, cold, hot / n if n else 0, j.get("lost"), r.stderr.strip()[-200:]))
    return j


def vector_check(name, elf, isr, label):
    """The port's vector is defined, and the stream announces the port's timer."""
    syms = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    strings = subprocess.run(["arm-none-eabi-strings", "-a", elf], capture_output=True, text=True).stdout.split()
    check("boards.md %s: built for its core, the sampler's vector %s defined, the timer announced as %s" % (
          name, isr, label), re.search(r" T %s$" % isr, syms, re.M) is not None and label in strings,
          "vector %s, label %s" % (isr in syms, label in strings))


def call_at(code, func):
    """Where a statement calling func begins in code (comments aside), or len(code)."""
    m = re.search(r"^\s*%s\(" % func, code, re.M)
    return m.start() if m else len(code)


def main():
    found = recipes()
    check("boards.md: the three recipes (nucleo-f4, nrf52-dk, pico), each a C block and its build options",
          sorted(found) == ["nrf52-dk", "nucleo-f4", "pico"] and all(len(b.get("c", [])) == 1 for _, b in found.values()),
          sorted(found))
    for name, (cpu, blocks) in sorted(found.items()):
        main_c = blocks["c"][0]
        defs, sh_cpu = options(blocks)
        library = library_files(blocks)
        check("boards.md %s: the build names the stream, a timer port, and the recipe's core" % name,
              "-DCMPROF_STREAM=1" in defs and any(d.startswith("-DCMPROF_PORT=") for d in defs) and
              sh_cpu in (None, cpu) and {"cmprof_sampler.c", "cmprof_stream.c"} <= set(library) and
              call_at(main_c, "cmprof_stream_announce") < call_at(main_c, "cmprof_start") < len(main_c),
              "%s, -mcpu %s, %s" % (defs, sh_cpu, library))
        if name == "pico":
            extra = {"hardware/uart.h": PICO_UART_H, "hardware/gpio.h": PICO_GPIO_H, "pico_sdk.c": PICO_SDK_C}
            elf = gcc(name, cpu, main_c, defs, extra, board_link("nrf51"), 1, library)
            vector_check(name, elf, "isr_timer_0", "RP2040-alarm")
            continue
        board = MACHINE[name][1]
        elf = gcc(name, cpu, main_c, defs, {}, board_link(board), 1, library)
        port = {"nucleo-f4": ("TIM3_IRQHandler", "STM32-TIM"), "nrf52-dk": ("TIMER1_IRQHandler", "nRF-TIMER")}[name]
        vector_check(name, elf, *port)
        if name == "nrf52-dk":  # the nRF51 in QEMU: the same registers, a Cortex-M0
            elf = gcc(name, "cortex-m0", main_c, defs, {}, board_link(board), 3000, library)
        else:  # QEMU 7.2's STM32 timers never interrupt: SysTick stands in for TIM3 on the run
            systick = [d for d in defs if not d.startswith(("-DCMPROF_PORT=", "-DCMPROF_STM32_TIM="))]
            elf = gcc(name, cpu, main_c, systick, {}, board_link(board), 3000, library)
        run_and_judge(name, elf)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a step that could not run is a failure, never a skip
        check("boards.md recipes", False, "%s: %s" % (type(e).__name__, e))
    sys.exit(1 if harness.failed else 0)
