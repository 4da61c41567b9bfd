#!/usr/bin/env python3
"""Measure the Zephyr churn app (bench/zephyr_churn) in QEMU: for each row (a rate of thread
creations and a name pattern) a copy of one build's ELF with src/main.c's churn_config set, run
under -icount shift=5,sleep=off (idle time skipped, not slept: the same run every time) with the truth plugin (build/truth.so, every instruction counted by PC),
its UART read by cmprof-top --batch --by task. Prints a row a line: lost, unnamed share, names'
share of the stream's bytes (scenarios/scen_check.py's stream_bytes), the library's instructions a
sample (every function of libcmprof.a, from the link map) and the biggest of them; then the creation
hooks' cost a creation, the library's instructions a sample by kind (KINDS), the samples in rows
that name no thread, and late hosts: the capture cut before every 7th sample line and read from
there, the samples such a host leaves unnamed.

  measure.py BUILD_DIR OUT_DIR [ROW ...]      rows: none, 100d, 100u, 1000d, 1000u, 1000l (default: all)

Needs pyelftools (Debian's /usr/bin/python3 has it: run the script with it where python3 is another
interpreter), build/cmprof-top (make) and build/truth.so (scenarios/scen.py builds it, or: cc -std=c11
-D_POSIX_C_SOURCE=200809L -O2 -fPIC -shared -o build/truth.so scenarios/truth/truth.c). The build:
docs/performance.md's Zephyr rows give the cmake line.
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import scen_check  # noqa: E402  (stream_bytes)

# rows: (creations a second, names: 0 w00..w99, 1 unique, 2 worker_00..worker_99: 9 characters, one first word)
ROWS = {"none": (0, 0), "100d": (100, 0), "100u": (100, 1), "1000d": (1000, 0), "1000u": (1000, 1), "1000l": (1000, 2)}
RUN_MS = 6500
LATE_S = 4.0  # seconds of samples a late host reads at least (the bound is 5 s: rounds of repeats go over 4 s)


def symbols(elf):
    """(address, size, name) of every function, sorted."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", elf], capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "Tt":
            syms.append((int(p[0], 16) & ~1, int(p[1], 16), p[3]))
    return sorted(syms)


def library_ranges(build):
    """[start, end) of every input section that came from libcmprof.a, from the link map."""
    text = open(os.path.join(build, "zephyr", "zephyr.map")).read()
    ranges = []
    for m in re.finditer(r"^ (\.text\S*)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+\S*libcmprof\.a", text, re.M):
        start, size = int(m.group(2), 16), int(m.group(3), 16)
        if size and start:  # (sections the link dropped sit at 0)
            ranges.append((start, start + size))
    return ranges


def patch(elf_in, elf_out, values):
    """A copy of the ELF with churn_config's initial words set (in its file image)."""
    from elftools.elf.elffile import ELFFile
    shutil.copyfile(elf_in, elf_out)
    with open(elf_in, "rb") as f:
        e = ELFFile(f)
        sym = e.get_section_by_name(".symtab").get_symbol_by_name("churn_config")[0]
        addr = sym["st_value"]
        for sec in e.iter_sections():
            if sec["sh_type"] == "SHT_PROGBITS" and sec["sh_addr"] <= addr < sec["sh_addr"] + sec["sh_size"]:
                off = sec["sh_offset"] + addr - sec["sh_addr"]
                break
        else:
            raise SystemExit("churn_config: no section holds it")
    with open(elf_out, "r+b") as f:
        f.seek(off)
        f.write(b"".join(v.to_bytes(4, "little") for v in values))


def hook_cost(names, counts, syms):
    """Instructions in the functions named (a hook and the library functions it calls)."""
    return sum(v for a, size, n in syms if n in names for pc, v in counts.items() if a <= pc < a + max(size, 2))


# The library's functions by what they do, for the breakdown line: the work a sample (the tick, its
# line's formatting, the module's UART loop), the drain's passes (a pass every CONFIG_CMPROF_DRAIN_MS,
# whether a line waits or not), the names (a thread's first sample, its '=' entry, the rounds of
# "@N" repeats for a late host: paced by the names' share of the bytes), the announce (once about a
# second), the creation hooks. Anything else of the library goes under "other".
KINDS = (
    ("tick", ("cmprof_tick_frame", "cmprof_tick_thread", "cmprof_zephyr_isr")),
    ("lines", ("put_samples", "send", "send_line", "put_far_pc", "learn_tag", "other_tag", "cmprof_tasks_chars",
               "group_start", "group_head", "before_mark", "page_line", "owed_stop", "put_tail", "sum_fold")),
    ("write_line", ("write_line",)),
    ("passes", ("cmprof_thread", "cmprof_stream_drain", "cmprof_stream_drain_lines", "cmprof_stream_pending",
                "cmprof_stream_peek", "cmprof_stream_sent", "cmprof_stream_stored", "cmprof_stream_lost", "send_lost",
                "set_quiet", "cmprof_stream_release", "cmprof_stream_mark", "send_sections", "line_begin")),
    ("names", ("cmprof_tasks_miss", "put_owed", "put_entry", "repeat_names", "num_code_at", "num_keep", "put_copy",
               "name_id", "put_name7", "put_numbered", "flush_repeats", "repeat_retired", "retire_name", "sweep",
               "release_index", "put_def_entry", "due_names", "due_names_rare", "due_queue", "owe_name",
               "send_due_names", "repeat_add", "put_retired_in", "retired_code", "count_spares", "take_index",
               "copy_name", "named_index", "block_name", "place_name", "unname_index", "index_unlink")),
    ("announce", ("send_announce", "put_text", "put_field", "put_hex", "put_dec", "send_full", "reannounce_after")),
    ("hooks", ("__wrap_sys_trace_thread_create", "__wrap_sys_trace_thread_name_set", "cmprof_stream_task_new",
               "cmprof_stream_task_later", "move_entry", "block_renamed", "learn_offset", "rename_rest",
               "cmprof_tasks_renamed", "drop_stale")),
)


def kinds_line(lib_per, samples):
    """The library's instructions a sample by kind (KINDS), "other" for the rest."""
    done, parts = set(), []
    for kind, names in KINDS:
        n = sum(v for k, v in lib_per.items() if k in names)
        done.update(names)
        parts.append("%s %.1f" % (kind, n / max(samples, 1)))
    parts.append("other %.1f" % (sum(v for k, v in lib_per.items() if k not in done) / max(samples, 1)))
    return ", ".join(parts)


# A row of the by-task report that names no thread: a full table, a pending or unknown name, a raw tag.
UNNAMED = re.compile(r"^(\(|task #|0x)|no tag|unknown|pending")


def unnamed_samples(report):
    """Samples in the by-task report's rows that carry no thread's name, and those rows."""
    n, rows = 0, []
    for line in report.splitlines():
        m = re.match(r"\s+[\d.]+%\s+[\d.]+%\s+\S+\s+(\d+)\s+(.*)$", line)
        if m and UNNAMED.search(m.group(2)):
            n += int(m.group(1))
            rows.append(m.group(2))
    return n, rows


def late_hosts(d, elf, seconds):
    """A host that attaches late: the capture cut before every 7th sample line (a late host's first
    line), each cut leaving at least `seconds` of samples (at the announced rate), read by cmprof-top
    --batch --by task: (cuts, the sample lines each leaves at least, cuts whose reading leaves samples
    unnamed, those samples)."""
    lines = open(os.path.join(d, "uart.txt"), "rb").read().decode("latin-1").split("\n")
    starts = [k for k, l in enumerate(lines) if l.startswith("%")]
    ann = dict(re.findall(r" (tclk|period|jitter)=(\d+)", next((l for l in lines if l.startswith("@cmprof")), "")))
    rate = int(ann.get("tclk", 0)) / max(int(ann.get("period", 0)) + int(ann.get("jitter", 0)) / 2, 1)
    min_left = int(seconds * (rate or 1000) / 32 + 0.999)
    cuts = bad = unnamed = 0
    cut_file = os.path.join(d, "late.txt")
    for c in range(7, len(starts) - min_left, 7):
        with open(cut_file, "w", encoding="latin-1") as f:
            f.write("\n".join(lines[starts[c]:]))
        r = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", "--by", "task", cut_file, elf],
                           capture_output=True, text=True)
        n = unnamed_samples(r.stdout)[0]
        cuts, bad, unnamed = cuts + 1, bad + (n > 0), unnamed + n
    return cuts, min_left, bad, unnamed


def run_row(build, out, row):
    hz, unique = ROWS[row]
    d = os.path.join(out, row)
    os.makedirs(d, exist_ok=True)
    elf = os.path.join(d, "fw.elf")
    patch(os.path.join(build, "zephyr", "zephyr.elf"), elf, (hz, unique, RUN_MS))
    cmd = ["qemu-system-arm", "-M", "mps2-an385", "-cpu", "cortex-m3", "-display", "none", "-monitor", "none",
           "-icount", "shift=5,sleep=off", "-semihosting-config", "enable=on,target=native",
           "-serial", "file:" + os.path.join(d, "uart.txt"), "-kernel", elf,
           "-plugin", os.path.join(ROOT, "build", "truth.so") + ",out=" + os.path.join(d, "counts.txt")]
    subprocess.run(cmd, check=True, timeout=900)
    counts = {}
    for line in open(os.path.join(d, "counts.txt")):
        p = line.split()
        if len(p) == 3:
            counts[int(p[0], 16)] = int(p[1])
    syms = symbols(elf)
    per = {}
    import bisect
    starts = [s[0] for s in syms]
    for pc, n in counts.items():
        k = bisect.bisect_right(starts, pc) - 1
        name = syms[k][2] if k >= 0 and pc < syms[k][0] + max(syms[k][1], 2) else "?"
        per[name] = per.get(name, 0) + n
    lib = library_ranges(build)
    lib_per = {}
    for pc, n in counts.items():
        if any(a <= pc < b for a, b in lib):
            k = bisect.bisect_right(starts, pc) - 1
            lib_per[syms[k][2]] = lib_per.get(syms[k][2], 0) + n
    isr = [s[0] for s in syms if s[2] in ("cmprof_zephyr_isr",)]
    samples = counts.get(isr[0], 0) if isr else 0
    uart = open(os.path.join(d, "uart.txt"), "rb").read().decode("latin-1")
    total, names = scen_check.stream_bytes(uart)
    top = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", "--by", "task",
                          os.path.join(d, "uart.txt"), elf], capture_output=True, text=True)
    with open(os.path.join(d, "report.txt"), "w") as f:
        f.write(top.stdout + top.stderr)
    with open(os.path.join(d, "functions.txt"), "w") as f:
        for name, n in sorted(per.items(), key=lambda kv: -kv[1]):
            f.write("%12d %8.1f %s%s\n" % (n, n / max(samples, 1), name, " (library)" if name in lib_per else ""))
    lib_total = sum(lib_per.values())
    biggest = sorted(lib_per.items(), key=lambda kv: -kv[1])[:4]
    print("%-6s samples %6d  names %5.1f %% of %d bytes  library %6.1f a sample  uart_poll_out %5.1f  [%s]" % (
        row, samples, 100.0 * names / max(total, 1), total, lib_total / max(samples, 1),
        per.get("uart_cmsdk_apb_poll_out", 0) / max(samples, 1),
        ", ".join("%s %.1f" % (k, v / max(samples, 1)) for k, v in biggest)))
    entry = {name: (a, size) for a, size, name in syms}
    calls = {name: counts.get(entry[name][0], 0) for name in entry if name.startswith("__wrap_sys_trace_")}
    # a creation: the create and the rename hooks, and what they call in the library (the tag
    # cache's look, the park and its return; main's pool: the name's hash and copy)
    naming = ("__wrap_sys_trace_thread_create", "__wrap_sys_trace_thread_name_set", "cmprof_stream_task_new",
              "cmprof_stream_task_later", "name_thread", "move_entry", "block_renamed", "learn_offset", "kept_name",
              "same_name", "cmprof_tasks_register", "supersede", "cmprof_tasks_find", "rename_rest", "cmprof_tasks_renamed",
              "drop_stale", "copy_is")
    made = calls.get("__wrap_sys_trace_thread_name_set", 0)
    hooks = ["create + rename %d x %.1f" % (made, hook_cost(naming, counts, syms) / max(made, 1))]
    for name in ("__wrap_sys_trace_thread_abort", "__wrap_sys_trace_k_thread_switched_in",
                 "__wrap_sys_trace_k_thread_switched_out"):
        own = (name, "cmprof_stream_task_gone", "gone_short", "forget_thread") if "abort" in name or "out" in name else (name,)
        hooks.append("%s %d x %.1f" % (name.replace("__wrap_sys_trace_", ""), calls.get(name, 0),
                                       hook_cost(own, counts, syms) / max(calls.get(name, 1), 1)))
    print("       hooks: " + ", ".join(hooks))
    print("       by kind, a sample: " + kinds_line(lib_per, samples))
    n_unnamed, rows = unnamed_samples(top.stdout)
    print("       unnamed samples %d%s" % (n_unnamed, " (%s)" % ", ".join(rows[:3]) if rows else ""))
    cuts, min_left, bad, late = late_hosts(d, elf, LATE_S)
    print("       late hosts: %d cuts (each leaving at least %d lines, %.1f s), %d left samples unnamed (%d samples)" % (
        cuts, min_left, LATE_S, bad, late))
    js = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", "-o", "json",
                         os.path.join(d, "uart.txt"), elf], capture_output=True, text=True).stdout
    m = re.search(r'"lost": (\d+)', js)
    print("       lost %s" % (m.group(1) if m else "?"))
    summary = [l for l in (top.stdout + top.stderr).splitlines()
               if re.search(r"lost|unnamed|no tag|samples", l, re.I)][:8]
    for l in summary:
        print("       " + l.strip())
    sys.stdout.flush()


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    for need in ("truth.so", "cmprof-top"):
        if not os.path.exists(os.path.join(ROOT, "build", need)):
            raise SystemExit("measure.py: no build/%s in %s (see the usage below)\n%s" % (need, ROOT, __doc__))
    for row in sys.argv[3:] or list(ROWS):
        run_row(sys.argv[1], sys.argv[2], row)


if __name__ == "__main__":
    main()
