#!/usr/bin/env python3
"""An address's answer must not depend on the addresses asked with it or before it (issue 35,
item 18). Over every halfword of a few scenario ELFs' code, cmprof-top --resolve answers the same
set of addresses sorted, reversed, shuffled (fixed seed) and each alone, in a process of its own:
every address must get the same frames every time. The --batch report, given one sample at each
address, must count the same rows as those answers (by function and by line; the rows of a name the
ELF's static functions share are named with their files, "put_str (cmprof_sampler.c)", and add up).

The case that started it: newlib's memcpy is assembler whose DWARF subprogram starts at its
Thumb address (low_pc odd), so its range ends one byte into memset; memset's first instruction was
named memcpy ??:? whenever an address of memcpy had been asked first (addr2line does the same).

The tool is $CMPROF_TOOL (default build/cmprof-top)."""
import collections
import json
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time

from harness import check
import harness

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
SCENARIOS = os.path.join(ROOT, "build", "scenarios")
# Cortex-M3 and M4 with newlib's memcpy/memset, flash at 0 (AN385), Thumb-1 (M0), an RTOS, and
# A32 code (Cortex-A15)
ELFS = ("cost_m3_hist", "cost_m4_ring_tag", "an385_loops_dualtimer", "cost_m0_ring", "gdb_tasks", "a15_hist")


def code_halfwords(elf):
    """Every halfword address of the ELF's executable sections."""
    out = subprocess.run(["arm-none-eabi-readelf", "-SW", elf], capture_output=True, text=True, check=True).stdout
    addrs = []
    for m in re.finditer(r"^\s*\[\s*\d+\]\s+\S+\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S+)",
                         out, re.M):
        lo, size, flags = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
        if "X" in flags:
            addrs += range(lo, lo + size, 2)
    return addrs


def run_small(cmd, feed, env, timeout):
    """subprocess.run(cmd, input=feed, capture_output=True, text=True, timeout=timeout, env=env)'s
    returncode, stdout and stderr, for a feed that fits in a pipe: one posix_spawn, stderr to a file,
    no communicate() threads or polls (over ten thousand runs, subprocess.run's own work cost more
    CPU than the tool's)."""
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    with tempfile.TemporaryFile() as err:
        try:
            os.write(w_in, feed.encode())
            os.close(w_in)
            pid = os.posix_spawnp(cmd[0], cmd, env, file_actions=[
                (os.POSIX_SPAWN_DUP2, r_in, 0), (os.POSIX_SPAWN_DUP2, w_out, 1),
                (os.POSIX_SPAWN_DUP2, err.fileno(), 2), (os.POSIX_SPAWN_CLOSE, r_out)])
        finally:
            os.close(r_in)
            os.close(w_out)
        chunks, poll, deadline = [], select.poll(), time.monotonic() + timeout
        poll.register(r_out, select.POLLIN)
        try:
            while True:
                if not poll.poll(max(0, deadline - time.monotonic()) * 1000):
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    raise subprocess.TimeoutExpired(cmd, timeout)
                chunk = os.read(r_out, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(r_out)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        err.seek(0)
        return status, b"".join(chunks).decode(), err.read().decode(errors="replace")


def resolve(elf, addrs, writer="1", read_threads=""):
    """{address: its frames} from one --resolve run over addrs (on stdin), in that order; writer "1"
    answers with the writer thread, "0" on one thread (the tool picks by the machine's load);
    read_threads "1" reads the symbol table and the units on the opening thread, "2" on threads of
    their own ("": the tool picks, as for the writer)."""
    feed = "".join("0x%x\n" % a for a in addrs)
    env = dict(os.environ, CMPROF_RESOLVE_WRITER=writer, CMPROF_READ_THREADS=read_threads)
    if len(feed) < 4096:  # each address alone: ten thousand runs
        returncode, stdout, stderr = run_small([TOOL, "--resolve", elf], feed, env, 120)
    else:
        p = subprocess.run([TOOL, "--resolve", elf], input=feed, capture_output=True, text=True, timeout=120, env=env)
        returncode, stdout, stderr = p.returncode, p.stdout, p.stderr
    if returncode != 0:
        raise RuntimeError("--resolve exited with %d: %s" % (returncode, stderr.strip()[-200:]))
    answers, cur = collections.OrderedDict(), None
    for ln in stdout.splitlines():
        if ln.startswith("0x"):
            cur = int(ln, 16)
            answers[cur] = []
        else:
            answers[cur].append(ln)
    if list(answers) != list(addrs):
        raise RuntimeError("--resolve answered %d addresses of %d" % (len(answers), len(addrs)))
    return answers


def alone(elf, addrs):
    """Each address in a process of its own: nothing asked before it."""
    return {a: resolve(elf, [a])[a] for a in addrs}


def differences(want, got):
    return [a for a in want if want[a] != got[a]]


def example(elf, a, want, got):
    return "%s 0x%08x: %s, alone %s" % (os.path.basename(os.path.dirname(elf)), a, got[a][:2], want[a][:2])


def expected_rows(answers, by):
    """The rows --batch must count, one sample per address, from the innermost frames."""
    rows = collections.Counter()
    for a, frames in answers.items():
        function, where = frames[0], frames[1]
        m = re.match(r"^(.*):(\d+|\?)", where)
        path, line = m.group(1), m.group(2)
        if by == "function":
            rows[function if function != "??" else "0x%08x" % a] += 1
        else:
            rows["%s:%s" % (os.path.basename(path), line if line != "?" else 0) if path != "??" else "0x%08x" % a] += 1
    return rows


def batch_rows(elf, addrs, by, shared):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as dump:
        dump.write("prof raw\n" + "".join("p %x\n" % a for a in addrs) + "end\n")
        dump.flush()
        p = subprocess.run([TOOL, "--batch", "-o", "json", "--by", by, dump.name, elf], capture_output=True, text=True,
                           timeout=120)
    report = json.loads(p.stdout) if p.stdout.startswith("{") else {}
    # a sample at every halfword is, rightly, no core's capture: the report is made, and the run fails
    # as a wrong ELF because of the PCs off the instruction starts, and for that alone
    if p.returncode != 0 and not (p.returncode == 5 and report.get("wrong_elf_causes") == ["not_starts"]):
        raise RuntimeError("--batch exited with %d: %s" % (p.returncode, p.stderr.strip()[-200:]))
    rows = collections.Counter()
    for r in report["rows"]:
        rows[source_name(r["name"], shared) if by == "function" else r["name"]] += r["samples"]
    return rows, report["total"]


CLONE = re.compile(r"\.(constprop|isra|part|cold|lto_priv)(\.\d+)*")


def shared_names(elf):
    """{source name: the files} of the names the ELF's local function symbols define in two files or
    more (each symbol's file: the STT_FILE symbol before it), as batch rows name them "put_str (a.c)"."""
    out = subprocess.run(["arm-none-eabi-readelf", "-sW", elf], capture_output=True, text=True, check=True).stdout
    files, current = collections.defaultdict(set), None
    for ln in out.splitlines():
        f = ln.split()
        if len(f) >= 8 and f[3] == "FILE":
            current = f[7]
        elif len(f) >= 8 and f[3] == "FUNC" and f[4] == "LOCAL" and current:
            files[CLONE.sub("", f[7])].add(os.path.basename(current))
    return {name: fs for name, fs in files.items() if len(fs) > 1}


def source_name(shown, shared):
    """A batch row's function by its source name, as addr2line prints it: without -C batch names a
    GCC copy by its symbol as linked ("f.constprop.0", or "f, f.constprop.0" when both exist), and
    one of several functions of a name (shared: static ones in two files) with its file, "put_str
    (a.c)": the rows of such a name add up to its count. Any other row keeps its name (and fails)."""
    m = re.match(r"^(.*) \(([^()]+)\)$", shown)
    if m and m.group(2) in shared.get(CLONE.sub("", m.group(1)), ()):
        shown = m.group(1)
    names = {CLONE.sub("", part) for part in shown.split(", ")}
    return names.pop() if len(names) == 1 else shown


def main():
    rng = random.Random(35)
    memset_seen = 0
    for name in ELFS:
        elf = os.path.join(SCENARIOS, name, "fw.elf")
        if not check("%s: built" % name, os.path.exists(elf),
                     "" if os.path.exists(elf) else "%s is missing (python3 scenarios/scen.py run)" % elf):
            continue
        addrs = code_halfwords(elf)
        shuffled = list(addrs)
        rng.shuffle(shuffled)
        try:
            want = alone(elf, addrs)
            orders = {"sorted": resolve(elf, addrs), "reversed": resolve(elf, addrs[::-1]),
                      "shuffled": resolve(elf, shuffled), "shuffled, one thread": resolve(elf, shuffled, "0"),
                      "shuffled, read on one thread": resolve(elf, shuffled, "0", "1"),
                      "shuffled, read on threads": resolve(elf, shuffled, "1", "2")}
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            check("%s: --resolve runs" % name, False, e)
            continue
        for order, got in orders.items():
            bad = differences(want, got)
            check("%s: %d halfwords %s answer as each alone" % (name, len(addrs), order), not bad,
                  "%d differ, e.g. %s" % (len(bad), example(elf, bad[0], want, got)) if bad else "")
        # memset's first instruction, right after memcpy's last, is memset's
        nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True, check=True).stdout
        start = re.search(r"^([0-9a-f]+) T memset$", nm, re.M)
        if start and int(start.group(1), 16) in want:
            memset_seen += 1
            a = int(start.group(1), 16)
            for order, got in orders.items():
                check("%s: 0x%08x is memset (%s)" % (name, a, order), got[a][0] == "memset",
                      "" if got[a][0] == "memset" else got[a][:2])
        for by in ("function", "line"):
            try:
                rows, total = batch_rows(elf, shuffled, by, shared_names(elf))
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                check("%s: --batch --by %s runs" % (name, by), False, e)
                continue
            expected = expected_rows(want, by)
            bad = sorted(k for k in set(rows) | set(expected) if rows[k] != expected[k])
            check("%s: --batch --by %s counts the rows --resolve names" % (name, by), not bad and total == len(addrs),
                  "%d of %d samples; %d rows differ, e.g. %s: batch %d, resolve %d" % (
                      total, len(addrs), len(bad), bad[0], rows[bad[0]], expected[bad[0]]) if bad else
                  "%d of %d samples" % (total, len(addrs)))
    check("memset follows memcpy in some ELF", memset_seen > 0, "" if memset_seen else "no memset: the ELF list needs a look")
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
