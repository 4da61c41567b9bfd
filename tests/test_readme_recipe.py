#!/usr/bin/env python3
"""README's bare-metal recipe, followed literally: the fenced blocks between the markers
`<!-- recipe: bare metal` and `<!-- recipe end -->` of README.md are taken exactly as printed (each
C block a main.c of its own; the sh block's -mcpu and -D options), built for QEMU's mps2-an385 with
the scenarios' board support standing in for "yours" (board_init, uart_putc, app_step), run under
-icount, and read with cmprof-top --batch: samples, in the application's own functions, in their
shares. The live block is built with cmprof_stream.c and the sh block's options; the dump block
without CMPROF_STREAM. Prints one ok/FAIL line per check; the tool is read from CMPROF_TOOL."""
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
OUT = os.path.join(ROOT, "build", "readme-recipe")
BOARD = os.path.join(ROOT, "scenarios", "board")

# "Yours": the board's UART, and a main loop whose work is 3 parts recipe_hot to 1 part recipe_cold
# (the same loop, 3 times the rounds). The live program never ends by itself: app_step ends the
# run after RECIPE_STEPS rounds (0: never). The dump ends with its "end" line: uart_putc exits there.
APP = r'''
#include "board.h"

#include <stdint.h>

#define SPIN(n) for (volatile uint32_t i = 0; i < (n); i++)

__attribute__((noinline)) void recipe_hot(void) { SPIN(3000u); }
__attribute__((noinline)) void recipe_cold(void) { SPIN(1000u); }

void uart_putc(char c)
{
    static char line[8];
    static unsigned len;
    board_putc(c);
    if (c != '\n') {
        len = len < sizeof line ? len + 1u : len;
        if (len <= sizeof line)
            line[len - 1u] = c;
        return;
    }
    if (len == 3u && line[0] == 'e' && line[1] == 'n' && line[2] == 'd')
        board_exit(0);
    len = 0u;
}

void app_step(void)
{
    static uint32_t steps;
    recipe_hot();
    recipe_cold();
#if RECIPE_STEPS
    if (++steps >= RECIPE_STEPS)
        board_exit(0);
#else
    (void)steps;
#endif
}
'''


def recipe_blocks():
    """{"c": [...], "sh": [...]}: the fenced blocks between README's recipe markers, as printed."""
    text = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"<!-- recipe: bare metal.*?-->(.*?)<!-- recipe end -->", text, re.S)
    if not m:
        raise RuntimeError("README.md: no '<!-- recipe: bare metal' ... '<!-- recipe end -->' markers")
    blocks = {"c": [], "sh": []}
    for lang, body in re.findall(r"^```(\w+)\n(.*?)^```$", m.group(1), re.S | re.M):
        blocks.setdefault(lang, []).append(body)
    return blocks


def build(tag, main_c, cpu, defs, stream):
    """The recipe's main.c with the board stand-ins, cmprof's sampler (and stream), the build-id
    snippet before the machine's own linker script; returns the ELF, or raises with gcc's words."""
    out = os.path.join(OUT, tag)
    os.makedirs(out, exist_ok=True)
    for name, text in (("main.c", main_c), ("app.c", APP)):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    elf = os.path.join(out, "fw.elf")
    fw = os.path.join(ROOT, "firmware")
    cmd = ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-g", "-mcpu=" + cpu, "-mthumb",
           "-mfloat-abi=soft", "-I" + fw, "-I" + BOARD, "-DBOARD_mps2",
           "-DRECIPE_STEPS=%d" % (15000 if stream else 0)] + defs
    cmd += [os.path.join(out, "main.c"), os.path.join(out, "app.c"), os.path.join(fw, "cmprof_sampler.c")]
    cmd += [os.path.join(fw, "cmprof_stream.c")] if stream else []
    # the task table: the stream's names, or a tagged dump's
    cmd += [os.path.join(fw, "cmprof_tasks.c")] if stream or any(d.startswith("-DCMPROF_TAG") for d in defs) else []
    cmd += [os.path.join(BOARD, f) for f in ("board_mps2.c", "board_common.c", "startup.c")]
    # mps2-an385's memory for "your.ld": the FreeRTOS scenario's script has no build-id section of its own
    cmd += ["-nostdlib", "-lc", "-lgcc", "-Wl,--build-id", "-L" + fw, "-Wl,-T,cmprof_build_id.ld",
            "-L" + os.path.join(ROOT, "scenarios", "frtos"), "-Wl,-T,frtos.ld", "-o", elf]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("the recipe does not build: %s" % r.stderr.strip()[-800:])
    return elf


def run(elf):
    uart = os.path.join(os.path.dirname(elf), "uart.txt")
    r = subprocess.run(["qemu-system-arm", "-M", "mps2-an385", "-display", "none", "-monitor", "none", "-serial",
                        "file:" + uart, "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
                        "-kernel", elf], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("qemu exited %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    return uart


def judge(label, uart, elf, want_total=None):
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--no-inline", uart, elf], capture_output=True, text=True)
    j = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    rows = {row["name"]: row["samples"] for row in j.get("rows", [])}
    hot, cold, total = rows.get("recipe_hot", 0), rows.get("recipe_cold", 0), j.get("total", 0)
    n = hot + cold
    # the two loops differ only in rounds: 3 to 1 in instructions, so 0.75 of their samples, +-4 sigma
    share_ok = n > 0 and abs(hot / n - 0.75) <= 4 * math.sqrt(0.75 * 0.25 / n)
    check("README recipe, %s: cmprof-top --batch exits 0 with samples, nearly all in the application's loops, "
          "3 to 1 as their instructions" % label,
          r.returncode == 0 and total >= (want_total or 300) and n >= 0.9 * total and share_ok and
          (want_total is None or total == want_total),
          "exit %d, %s samples: recipe_hot %d, recipe_cold %d (%.3f of the two); %s" % (
              r.returncode, total, hot, cold, hot / n if n else 0, r.stderr.strip()[-200:]))


def call_at(code, func):
    """Where a statement calling func begins in code (comments aside), or len(code)."""
    m = re.search(r"^\s*%s\(" % func, code, re.M)
    return m.start() if m else len(code)


def main():
    blocks = recipe_blocks()
    sh = " ".join(b.replace("\\\n", " ") for b in blocks["sh"])
    cpu = re.search(r"-mcpu=(\S+)", sh)
    defs = re.findall(r"(?<!\S)-D\S+", sh)
    check("README recipe: two C blocks (live, dump) and a build line naming the sampler, the stream, the task table, the "
          "build-id snippet, CMPROF_STREAM and a CPU",
          len(blocks["c"]) == 2 and cpu is not None and "-DCMPROF_STREAM=1" in defs and
          all(f in sh for f in ("cmprof_sampler.c", "cmprof_stream.c", "cmprof_tasks.c", "cmprof_build_id.ld",
                                "--build-id")),
          "%d C blocks, options %s" % (len(blocks["c"]), defs))
    live, dump = blocks["c"][0], blocks["c"][1]
    check("README recipe, live: it announces before it starts sampling, and drains in its loop",
          call_at(live, "cmprof_stream_announce") < call_at(live, "cmprof_start") < len(live) and
          "cmprof_stream_drain(" in live,
          "announce at %d, start at %d" % (call_at(live, "cmprof_stream_announce"), call_at(live, "cmprof_start")))
    elf = build("live", live, cpu.group(1), defs, stream=True)
    judge("live stream", run(elf), elf)
    elf = build("dump", dump, cpu.group(1), [d for d in defs if not d.startswith("-DCMPROF_STREAM")], stream=False)
    limit = re.search(r"cmprof_start\(\w+, (\d+)u?\)", dump)
    judge("dump", run(elf), elf, int(limit.group(1)) if limit else -1)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a step that could not run is a failure, never a skip
        check("README recipe", False, "%s: %s" % (type(e).__name__, e))
    sys.exit(1 if harness.failed else 0)
