#!/usr/bin/env python3
"""Issue 30, item 5: the stream drain's worst-case stack, from GCC's own figures. The firmware
library is built as a user would build it (arm-none-eabi-gcc -Os -mcpu=cortex-m3, with and without
task tags, and in histogram mode) with -fstack-usage -fcallgraph-info=su; the deepest call path from
cmprof_stream_drain (and cmprof_stream_flush) adds up the frames. It must stay within 256 bytes,
which FreeRTOS's smallest idle stacks leave for an idle hook. The user's putc/write is not the
library's and counts 0; a libgcc helper counts LIBGCC_FRAME. Prints one ok/FAIL line per check."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

LIMIT = 256
LIBGCC_FRAME = 48  # more than __aeabi_uldivmod and memcpy take on Cortex-M
OUT = os.path.join(ROOT, "build", "stack-check")
SOURCES = ["firmware/cmprof_sampler.c", "firmware/cmprof_stream.c", "firmware/cmprof_stack.c", "firmware/cmprof_tasks.c"]
BUILDS = {
    "tagged": ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=cmprof_current_task"],
    "untagged": ["-DCMPROF_STREAM=1"],
    "histogram": ["-DCMPROF_STREAM=1", "-DCMPROF_HIST=1"],
    "stack evidence": ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=cmprof_current_task", "-DCMPROF_STACKS=1"],
}
NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "[^"]*\\n(\d+) bytes \(([a-z,]+)\)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


def short(name):
    return name.rsplit(":", 1)[-1]


def graph(flags, tag):
    """Frames and calls of the library built with flags: {function: (bytes, kind)}, {function: {callee}}."""
    frames, calls = {}, {}
    os.makedirs(os.path.join(OUT, tag), exist_ok=True)
    for src in SOURCES:
        obj = os.path.join(OUT, tag, os.path.basename(src)[:-2] + ".o")
        r = subprocess.run(["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-mcpu=cortex-m3",
                            "-mthumb", "-fstack-usage", "-fcallgraph-info=su"] + flags +
                           ["-c", os.path.join(ROOT, src), "-o", obj], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(r.stderr)
        with open(obj[:-2] + ".ci") as f:
            for line in f:
                m = NODE.match(line)
                if m:
                    frames[short(m.group(1))] = (int(m.group(2)), m.group(3))
                m = EDGE.match(line)
                if m:
                    calls.setdefault(short(m.group(1)), set()).add(short(m.group(2)))
    return frames, calls


def deepest(frames, calls, fn, path=()):
    """(bytes, path) of the deepest chain from fn; raises on recursion or a dynamic frame."""
    if fn in path:
        raise RuntimeError("recursion: " + " -> ".join(path + (fn,)))
    if fn == "__indirect_call":
        return 0, [fn + " (the user's putc/write)"]
    if fn not in frames:
        return LIBGCC_FRAME, [fn + " (libgcc)"]
    size, kind = frames[fn]
    if kind != "static":
        raise RuntimeError("%s has a %s frame" % (fn, kind))
    best = (0, [])
    for callee in sorted(calls.get(fn, ())):
        best = max(best, deepest(frames, calls, callee, path + (fn,)), key=lambda x: x[0])
    return size + best[0], ["%s %d" % (fn, size)] + best[1]


def main():
    for tag, flags in BUILDS.items():
        try:
            frames, calls = graph(flags, tag)
            for entry in ("cmprof_stream_drain", "cmprof_stream_flush"):
                size, path = deepest(frames, calls, entry)
                print("     %s, %s: %d bytes: %s" % (tag, entry, size, " > ".join(path)))
                check("%s build: %s needs at most %d bytes of stack" % (tag, entry, LIMIT), size <= LIMIT,
                      "%d bytes" % size)
        except (RuntimeError, OSError) as e:
            check("%s build: stack figures" % tag, False, e)
    sys.exit(1 if harness.failed else 0)


if __name__ == "__main__":
    main()
