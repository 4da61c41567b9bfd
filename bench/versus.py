#!/usr/bin/env python3
"""Commands against each other, in interleaved rounds (interleave.py): each round runs every
command once, in the order given, with stdin from INPUT and stdout to /dev/null; then each one's
median wall and CPU time (user + system, all threads), and the spread of its per-round ratio to
the first command. A command may start with NAME=VALUE environment settings. After the rounds,
each command runs once more with its output kept, and the line says whether that output is byte
for byte the first command's (a speed bought with a different answer is no speed).
    bench/versus.py ROUNDS INPUT LABEL=COMMAND [LABEL=COMMAND ...]
e.g. bench/versus.py 15 addrs.txt "a2l=arm-none-eabi-addr2line -a -f -i -e big.elf" \\
                                   "ours=build/cmprof-top --resolve big.elf\""""
import os
import shlex
import subprocess
import sys
import tempfile
import time

import interleave


def run(cmd, stdin_path, out_path=os.devnull):
    env = dict(os.environ)
    parts = shlex.split(cmd)
    while parts and "=" in parts[0] and not parts[0].startswith(("/", ".")):
        k, v = parts.pop(0).split("=", 1)
        env[k] = v
    with open(stdin_path) as i, open(out_path, "w") as o:
        t0 = time.perf_counter()
        p = subprocess.Popen(parts, stdin=i, stdout=o, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("versus.py: %s failed" % cmd)
    return wall, ru.ru_utime + ru.ru_stime


def main(argv):
    if len(argv) < 3 or "=" not in argv[2]:
        sys.exit(__doc__)
    rounds, stdin_path = int(argv[0]), argv[1]
    cmds = dict(a.split("=", 1) for a in argv[2:])
    runs = interleave.rounds({k: (lambda c=c: run(c, stdin_path)) for k, c in cmds.items()}, rounds)
    first = next(iter(cmds))
    print("%d rounds, load average %.1f at the end" % (rounds, os.getloadavg()[0]))
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {}
        for k, c in cmds.items():
            run(c, stdin_path, os.path.join(tmp, k))
            with open(os.path.join(tmp, k), "rb") as f:
                outputs[k] = f.read()
    for k, v in runs.items():
        walls, cpus = [w for w, _ in v], [c for _, c in v]
        line = "%-10s wall %.4f s (IQR %.4f..%.4f), CPU %.4f s" % (
            k, interleave.median(walls), interleave.quartiles(walls)[0], interleave.quartiles(walls)[2],
            interleave.median(cpus))
        if k != first:
            line += "; %s / %s: wall %s, CPU %s" % (
                first, k, interleave.spread(interleave.ratios([w for w, _ in runs[first]], walls), "%.2f", "x"),
                interleave.spread(interleave.ratios([c for _, c in runs[first]], cpus), "%.2f", "x"))
            line += "; output %s %s's" % ("identical to" if outputs[k] == outputs[first] else "DIFFERS from", first)
        print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
