#!/usr/bin/env python3
"""The firmware library's seven files built with -Wall -Wextra -Werror -Os for every core and
option set (tests/run.sh's firmware builds): one ok/FAIL line per core and option set, and per
core one for the FreeRTOS adapter's trace macros.

Most option sets leave most files unchanged: a file whose preprocessed text was compiled before for
the same core compiles the same way (the -D options act only through the preprocessor; every other
flag is the same), so its earlier result stands and only the files whose text is new are compiled
(504 compilations shrink to about 190; the seven files are preprocessed in one compiler run)."""
import hashlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "firmware-check")
FILES = ["cmprof_%s.c" % n for n in ("sampler", "section", "dwt", "stream", "stack", "rtt", "tasks")]
CORES = ["cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m23", "cortex-m33"]
OPTIONS = ["", "-DCMPROF_HIST=1", "-DCMPROF_JITTER=2047", "-DCMPROF_HIST=1 -DCMPROF_JITTER=2047",
           "-DCMPROF_TAG=task", "-DCMPROF_TIMER_TIM3=1", "-DCMPROF_TIMER_TIM3=1 -DCMPROF_STM32F1=1",
           "-DCMPROF_STREAM=1", "-DCMPROF_STREAM=1 -DCMPROF_TAG=task -DCMPROF_JITTER=4095",
           "-DCMPROF_STREAM=1 -DCMPROF_HIST=1", "-DCMPROF_STREAM=1 -DCMPROF_STACKS=1",
           "-DCMPROF_STREAM=1 -DCMPROF_STACKS=1 -DCMPROF_TAG=task",
           "-DCMPROF_STREAM=1 -DCMPROF_TAG=task -DCMPROF_TAG_NAMES=1 -DCMPROF_STACKS=1",
           # evidence with the frame pointer kept, on every sample, and in a dump (no stream)
           "-DCMPROF_STREAM=1 -DCMPROF_STACKS=1 -DCMPROF_STACK_FP=1 -DCMPROF_TAG=task",
           "-DCMPROF_STREAM=1 -DCMPROF_STACKS=1 -DCMPROF_STACK_EVERY=1 -DCMPROF_STACK_RECORDS=64",
           "-DCMPROF_STACKS=1 -DCMPROF_STACK_FP=1"]


def gcc(cpu, opts, *rest):
    return ["arm-none-eabi-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Os", "-mcpu=" + cpu,
            "-mthumb"] + opts.split() + list(rest)


def source(f):
    return os.path.join(ROOT, "firmware", f)


def preprocessed(cpu, opts):
    """{file: its preprocessed text, or None when that fails}: one compiler run for the seven files
    (gcc -E writes each file's text in turn, each starting with its own name on a line marker), each
    file alone when that fails."""
    whole = subprocess.run(gcc(cpu, opts, "-E", *map(source, FILES)), capture_output=True)
    starts = []
    for f in FILES:
        mark = b'# 0 "%s"\n# 0 "<built-in>"\n' % source(f).encode()
        starts.append(whole.stdout.find(mark, starts[-1] + 1 if starts else 0))
    if whole.returncode == 0 and starts[0] == 0 and all(a < b for a, b in zip(starts, starts[1:])):
        ends = starts[1:] + [len(whole.stdout)]
        return {f: whole.stdout[a:b] for f, a, b in zip(FILES, starts, ends)}
    texts = {}
    for f in FILES:
        pre = subprocess.run(gcc(cpu, opts, "-E", source(f)), capture_output=True)
        texts[f] = pre.stdout if pre.returncode == 0 else None
    return texts


OBJECTS = os.path.join(OUT, "objects")  # each object compiled, by object_key (tests/systick_free.py reads them)
_version = []


def object_key(command, text):
    """The name of the object that command (the compiler and every flag but the -D options and the
    source) makes of a file whose preprocessed text is text: the same name, the same object."""
    if not _version:
        _version.append(subprocess.run([command[0], "-dumpfullversion"], capture_output=True).stdout)
    return hashlib.sha256(_version[0] + b"\0" + " ".join(command).encode() + b"\0" + text).hexdigest() + ".o"


def compile_files(cpu, opts, files):
    """{file: whether it compiled}: the files in one compiler run (objects in OUT), each alone when
    that run fails, to know which."""
    if subprocess.run(gcc(cpu, opts, "-c", *map(source, files)), cwd=OUT, capture_output=True).returncode == 0:
        return {f: True for f in files}
    return {f: subprocess.run(gcc(cpu, opts, "-c", source(f)), cwd=OUT, capture_output=True).returncode == 0
            for f in files}


def keep_objects(cpu, texts, results):
    """The objects just compiled, under their object_key, for the SysTick proof's scan of the same
    files at the same flags."""
    os.makedirs(OBJECTS, exist_ok=True)
    for f, ok in results.items():
        if ok and texts[f] is not None:
            os.replace(os.path.join(OUT, f[:-2] + ".o"), os.path.join(OBJECTS, object_key(gcc(cpu, ""), texts[f])))


def main():
    os.makedirs(OUT, exist_ok=True)
    failed = 0
    compiled = {}  # (core, digest of a file's preprocessed text) -> whether it compiled
    for cpu in CORES:
        for opts in OPTIONS:
            texts = preprocessed(cpu, opts)
            keys = {f: (cpu, hashlib.sha256(texts[f]).hexdigest()) if texts[f] is not None else None
                    for f in FILES}
            new = [f for f in FILES if keys[f] is None or keys[f] not in compiled]
            results = compile_files(cpu, opts, new) if new else {}
            keep_objects(cpu, texts, results)
            for f, ok in results.items():
                if keys[f] is not None:
                    compiled[keys[f]] = ok
            ok = all(results[f] if f in results else compiled[keys[f]] for f in FILES)
            failed += not ok
            print("%s firmware %s %s" % ("ok  " if ok else "FAIL", cpu, opts or "(defaults)"), flush=True)
        hooks = subprocess.run(gcc(cpu, "", "-Ifirmware", "-Itests/zoo", "-c", "tests/zoo/freertos_hooks.c", "-o",
                                   os.path.join(OUT, "freertos_hooks.o")), cwd=ROOT, capture_output=True)
        failed += hooks.returncode != 0
        print("%s firmware %s: the FreeRTOS adapter's trace macros build" % (
            "ok  " if hooks.returncode == 0 else "FAIL", cpu), flush=True)
    print("firmware builds: %d compilations for %d core and option sets" % (len(compiled), len(CORES) * len(OPTIONS)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
