#!/usr/bin/env python3
"""The field measurement: FreeRTOS's own full demo for MPS2 AN385 (CORTEX_MPS2_QEMU_IAR_GCC, its full
demo, Percepio TraceRecorder on) with cmprof added by README's FreeRTOS recipe, plus 100 tasks that
a manager deletes and re-creates (bench/field/field.c), run in QEMU against exact truth.

    bench/field/measure.py FREERTOS_DEMO_REPO KERNEL TRACERECORDER [TREE]

FREERTOS_DEMO_REPO, KERNEL and TRACERECORDER are git directories (a clone's .git or a bare mirror)
or plain directories of the sources (github.com/FreeRTOS/FreeRTOS, FreeRTOS/FreeRTOS-Kernel,
percepio/TraceRecorderSource); nothing of them is copied into the repository: what is needed is
extracted under FIELD_OUT. TREE (default: this checkout) gives the firmware library and
build/cmprof-top (made when missing). Environment:
    FIELD_JOBS         QEMU runs at once (default 2)
    FIELD_CMPROF_OPTS  more -D options for the whole build (one of a macro the recipe sets replaces it)
    FIELD_OUT          where everything goes (default build/field in this checkout)
    FIELD_ROWS         the rows to run, by key (default: all five)
    FIELD_DEMO_REV     the demo repository's commit (a git directory; default HEAD)
    FIELD_KERNEL_REV   the kernel's (default: the demo's FreeRTOS/Source submodule commit)
    FIELD_TRACE_REV    TraceRecorder's (default: the demo's FreeRTOS-Plus-Trace submodule commit)
Prints one table (also FIELD_OUT/table.md); each row's files stay in FIELD_OUT/ROW/, among them
functions.txt: the library's instructions a sample by function, with its calls and instructions a
call (where a new name's cost goes). What each column counts: docs/performance.md, "FreeRTOS's own
full demo"."""
import collections
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scenarios"))
import scen  # noqa: E402  the stream's walkers, the symbol reader, the truth plugin
import scen_check  # noqa: E402  the names' and the stream's bytes, as the churn scenarios count them

DEMO_DIR = "FreeRTOS/Demo/CORTEX_MPS2_QEMU_IAR_GCC"
COMMON_DIR = "FreeRTOS/Demo/Common"
KERNEL_PIN = "FreeRTOS/Source"
TRACE_PIN = "FreeRTOS-Plus/Source/FreeRTOS-Plus-Trace"

# key: (title, -D options of the row)
ROWS = collections.OrderedDict([
    ("none", ("no churn (the demo alone)", {"FIELD_CHURN_TICKS": 0})),
    ("100-names", ("~100 creations/s, 100 distinct names", {"FIELD_CHURN_TICKS": 10, "FIELD_UNIQUE": 0})),
    ("100-unique", ("~100 creations/s, unique names", {"FIELD_CHURN_TICKS": 10, "FIELD_UNIQUE": 1})),
    ("1000-names", ("~1,000 creations/s, 100 distinct names", {"FIELD_CHURN_TICKS": 1, "FIELD_UNIQUE": 0})),
    ("1000-unique", ("~1,000 creations/s, unique names", {"FIELD_CHURN_TICKS": 1, "FIELD_UNIQUE": 1})),
])

# README's FreeRTOS recipe as docs/firmware.md applies it to this demo (the dual timer, 8192 + 0..8191)
RECIPE = ["-DCMPROF_STREAM=1", "-DCMPROF_TAG=cmprof_current_task", "-DCMPROF_TAG_NAMES=1",
          "-DCMPROF_STREAM_LINE=32", "-DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER", "-DCMPROF_JITTER=8191"]
# the demo's own options (its build/gcc/Makefile); -g for the host's lookups
DEMO_FLAGS = ["-mthumb", "-mcpu=cortex-m3", "-ffreestanding", "-g3", "-Os", "-ffunction-sections",
              "-fdata-sections", "-Wall", "-Wextra", "-Wshadow", "-Wno-unused-value"]
LIBRARY = ("cmprof_sampler.c", "cmprof_stream.c", "cmprof_tasks.c")
KERNEL_FILES = ("tasks.c", "list.c", "queue.c", "timers.c", "event_groups.c", "stream_buffer.c",
                "portable/MemMang/heap_4.c", "portable/GCC/ARM_CM3/port.c")
COMMON_FILES = ("AbortDelay", "BlockQ", "blocktim", "countsem", "death", "dynamic", "EventGroupsDemo", "GenQTest",
                "integer", "IntQueue", "IntSemTest", "MessageBufferAMP", "MessageBufferDemo", "PollQ",
                "QPeek", "QueueOverwrite", "QueueSet", "QueueSetPolling", "recmutex", "semtest",
                "StaticAllocation", "StreamBufferDemo", "StreamBufferInterrupt", "TaskNotify",
                "TaskNotifyArray", "TimerDemo")
TRACE_FILES = ["kernelports/FreeRTOS/trcKernelPort.c", "streamports/RingBuffer/trcStreamPort.c"] + [
    "trc%s.c" % n for n in ("Assert", "Counter", "Dependency", "Diagnostics", "EntryTable", "Error", "Event",
                            "EventBuffer", "Extension", "HardwarePort", "Heap", "InternalEventBuffer",
                            "Interval", "ISR", "MultiCoreEventBuffer", "Object", "Print", "Runnable",
                            "SnapshotRecorder", "StackMonitor", "StateMachine", "StaticBuffer",
                            "StreamingRecorder", "String", "Task", "Timestamp")]
SAMPLER = "DUALTIMER_Handler"
ISRS = ("PendSV_Handler", "SysTick_Handler", "field_TIMER0_Handler", "field_TIMER1_Handler")  # field.c's order
POLLS = ("cmprof_stream_drain", "cmprof_stream_pending")  # the idle hook's quick polls: only idle time
RUN_S = 6.5  # FIELD_RUN_TICKS at 1 kHz
LATE_AT_S, LATE_FOR_S = 1.0, 5.0


def macro(option):
    """The macro a -D option defines (None for any other option)."""
    return option[2:].split("=", 1)[0] if option.startswith("-D") else None


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def is_git_dir(path):
    return subprocess.run(["git", "--git-dir=" + path, "rev-parse", "--git-dir"], capture_output=True).returncode == 0


def gitlink(repo, rev, path):
    """The commit a submodule path is pinned at in repo's rev."""
    out = sh(["git", "--git-dir=" + repo, "ls-tree", rev, path]).split()
    if len(out) < 3 or out[1] != "commit":
        raise SystemExit("measure: %s has no submodule %s at %s" % (repo, path, rev))
    return out[2]


def extract(src, rev, paths, dest):
    """src's paths at rev (a git directory) under dest, once per commit; a plain directory is used
    where it is. Returns (the sources' root, the commit or 'directory')."""
    if not is_git_dir(src):
        if not os.path.isdir(src):
            raise SystemExit("measure: %s is neither a git directory nor a directory" % src)
        return os.path.abspath(src), "directory " + os.path.abspath(src)
    commit = sh(["git", "--git-dir=" + src, "rev-parse", rev + "^{commit}"]).strip()
    root = os.path.join(dest, commit[:12])
    stamp = os.path.join(root, ".extracted")
    if not os.path.exists(stamp):
        os.makedirs(root, exist_ok=True)
        archive = subprocess.Popen(["git", "--git-dir=" + src, "archive", commit] + list(paths or []), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", root], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise SystemExit("measure: git archive of %s at %s failed: %s" % (src, commit, archive.stderr.read()))
        open(stamp, "w").close()
    return root, commit


def replace_once(text, old, new, what):
    if text.count(old) != 1:
        raise SystemExit("measure: %s: expected one %r, found %d (another version of the demo?)"
                         % (what, old, text.count(old)))
    return text.replace(old, new)


def patched_demo(demo, out):
    """The demo's files that the recipe (and the harness) change, changed, in out/patched: the full
    demo selected, the idle and daemon start-up hooks calling field.c, FreeRTOSConfig.h ending with
    field_config.h, the vector table with the sampler's handler and the truth's wrappers, printf
    writing each message whole through the stream's .write (docs/firmware.md's pitfalls)."""
    d = os.path.join(out, "patched")
    os.makedirs(d, exist_ok=True)
    proj = os.path.join(demo, DEMO_DIR)
    edits = {
        "main.c": [("#define mainCREATE_SIMPLE_BLINKY_DEMO_ONLY    1", "#define mainCREATE_SIMPLE_BLINKY_DEMO_ONLY    0"),
                   ("void vApplicationIdleHook( void )\n{", "void vApplicationIdleHook( void )\n{\n    field_idle();"),
                   ("\t xTraceEnable(TRC_START);\n}", "\t xTraceEnable(TRC_START);\n    field_start();\n}")],
        "FreeRTOSConfig.h": [("#endif /* FREERTOS_CONFIG_H */", "#include \"field_config.h\"\n#endif /* FREERTOS_CONFIG_H */")],
        "build/gcc/startup_gcc.c": [
            ("extern void TIMER1_Handler( void );", "extern void TIMER1_Handler( void );\nvoid PendSV_Handler( void );\n"
             "void SysTick_Handler( void );\nvoid field_TIMER0_Handler( void );\nvoid field_TIMER1_Handler( void );\n"
             "void DUALTIMER_Handler( void );"),
            ("&xPortPendSVHandler, //", "&PendSV_Handler, //"),
            ("&xPortSysTickHandler,//", "&SysTick_Handler,//"),
            ("( uint32_t * ) TIMER0_Handler,", "( uint32_t * ) field_TIMER0_Handler,"),
            ("( uint32_t * ) TIMER1_Handler,     // Timer 1\n    0,",
             "( uint32_t * ) field_TIMER1_Handler,     // Timer 1\n    ( uint32_t * ) DUALTIMER_Handler, // cmprof's sampler"),
        ],
        "build/gcc/printf-stdarg.c": [
            ("static int tiny_print( char **out, const char *format, va_list args, unsigned int buflen );",
             "#include <stdint.h>\nvoid field_write(const char *buf, uint32_t len);\n"
             "static int tiny_print( char **out, const char *format, va_list args, unsigned int buflen );"),
            ("        va_start( args, format );\n        return tiny_print( 0, format, args, 0 );",
             "        char buf[128], *end = buf;\n        int n;\n        va_start( args, format );\n"
             "        n = tiny_print( &end, format, args, sizeof buf - 1u );\n"
             "        field_write( buf, (uint32_t)( end - buf ) );\n        return n;"),
        ],
    }
    for rel, changes in edits.items():
        text = open(os.path.join(proj, rel)).read()
        for old, new in changes:
            text = replace_once(text, old, new, rel)
        path = os.path.join(d, os.path.basename(rel))
        if not os.path.exists(path) or open(path).read() != text:  # kept as it is: the objects' dependency
            with open(path, "w") as f:
                f.write(text)
    return d


def sources(demo, kernel, trace, patched, tree):
    """Every C file of the build but field.c."""
    proj, common = os.path.join(demo, DEMO_DIR), os.path.join(demo, COMMON_DIR, "Minimal")
    out = [os.path.join(kernel, f) for f in KERNEL_FILES]
    out += [os.path.join(common, f + ".c") for f in COMMON_FILES] + [os.path.join(proj, "IntQueueTimer.c")]
    out += [os.path.join(patched, f) for f in ("main.c", "startup_gcc.c", "printf-stdarg.c")]
    out += [os.path.join(proj, f) for f in ("main_blinky.c", "main_full.c", "build/gcc/RegTest.c")]
    out += [os.path.join(trace, f) for f in TRACE_FILES]
    return out + [os.path.join(tree, "firmware", f) for f in LIBRARY]


def includes(demo, kernel, trace, patched, tree):
    proj = os.path.join(demo, DEMO_DIR)
    dirs = [patched, HERE, os.path.join(kernel, "include"), os.path.join(kernel, "portable/GCC/ARM_CM3"),
            os.path.join(demo, COMMON_DIR, "include"), proj, os.path.join(proj, "CMSIS"),
            os.path.join(proj, "TraceRecorderConfig"), os.path.join(trace, "include"),
            os.path.join(trace, "kernelports/FreeRTOS/include"), os.path.join(trace, "streamports/RingBuffer/include"),
            os.path.join(tree, "firmware")]
    return ["-I" + d for d in dirs]


def prefix_maps(pairs):
    """The sources' places out of the ELF (__FILE__ in asserts, the debug lines): where the sources
    sit would otherwise move the code, and each row's figures by about 1 instruction and 0.1 byte a
    sample. GCC tries the last given first, so a folder inside another comes after it."""
    return ["-ffile-prefix-map=%s=%s" % (path, name) for path, name in pairs]


def up_to_date(obj):
    """obj is newer than its source and every header it read (gcc -MMD's list beside it)."""
    try:
        deps = open(obj[:-2] + ".d").read().replace("\\\n", " ").split(":", 1)[1].split()
        return all(os.path.getmtime(dep) <= os.path.getmtime(obj) for dep in deps)
    except (OSError, IndexError):
        return False


def compile_one(args):
    cmd, obj = args
    r = subprocess.run(["arm-none-eabi-gcc"] + cmd + ["-MMD", "-MF", obj[:-2] + ".d", "-c", "-o", obj],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("measure: compiling %s failed:\n%s" % (cmd[-1], r.stderr[-3000:]))
    return obj


def build_row(key, flags, srcs, demo, tree, out, jobs):
    """The row's ELF: the shared objects once (under a digest of their flags), field.c with the
    row's options; linked as the recipe says (the build-id snippet before the demo's script)."""
    defs = ["-D%s=%s" % kv for kv in sorted(ROWS[key][1].items())]
    common = os.path.join(out, "obj", hashlib.sha256(repr(flags).encode()).hexdigest()[:16])
    os.makedirs(common, exist_ok=True)
    todo, objs = [], []
    for src in srcs:
        obj = os.path.join(common, hashlib.sha256(src.encode()).hexdigest()[:8] + "_" + os.path.basename(src)[:-2] + ".o")
        objs.append(obj)
        if not up_to_date(obj):
            todo.append((flags + [src], obj))
    rowdir = os.path.join(out, key)
    os.makedirs(rowdir, exist_ok=True)
    field_obj = os.path.join(rowdir, "field.o")
    todo.append((flags + defs + [os.path.join(HERE, "field.c")], field_obj))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(compile_one, todo))
    elf = os.path.join(rowdir, "fw.elf")
    sh(["arm-none-eabi-gcc"] + DEMO_FLAGS + objs + [field_obj] +
       ["-nostartfiles", "-specs=nano.specs", "-specs=nosys.specs", "-Xlinker", "--gc-sections",
        "-Wl,--build-id", "-L" + os.path.join(tree, "firmware"), "-Wl,-T,cmprof_build_id.ld",
        "-L" + os.path.join(demo, DEMO_DIR, "build/gcc"), "-T", "mps2_m3.ld",
        "-Xlinker", "-Map=" + os.path.join(rowdir, "fw.map"), "-o", elf])
    return elf


def run_row(key, elf):
    """QEMU with -icount shift=3 (8 ns an instruction) and the truth plugin; the firmware ends it."""
    d = os.path.dirname(elf)
    f = {n: (a, size) for a, size, n in scen.functions(elf)}
    args = ["out=" + os.path.join(d, "counts.txt"), "begin=0x%x" % f["field_truth_begin"][0],
            "end=0x%x" % f["field_truth_end"][0], "ctx=" + os.path.join(d, "contexts.txt"),
            "tasks=0x%x:%d" % (f["field_task_marks"][0], f["field_task_marks"][1] // 4),
            "isrs=0x%x:%d" % (f["field_isr_marks"][0], f["field_isr_marks"][1] // 4),
            "leave=0x%x" % f["field_isr_leave"][0],
            "skip=0x%x:0x%x" % (f[SAMPLER][0], f[SAMPLER][0] + f[SAMPLER][1])]
    uart = os.path.join(d, "uart.txt")
    cmd = ["qemu-system-arm", "-M", "mps2-an385", "-cpu", "cortex-m3", "-icount", "shift=3", "-display", "none",
           "-monitor", "none", "-serial", "file:" + uart, "-semihosting-config", "enable=on,target=native",
           "-kernel", elf, "-plugin", scen.PLUGIN + "," + ",".join(args)]
    t0 = time.time()
    err_path = os.path.join(d, "qemu.err")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(err_path, "w"))
    while p.poll() is None: # a demo whose own check failed (configASSERT) spins for ever: said at once
        time.sleep(0.5)
        if os.path.exists(uart) and "ASSERT!" in open(uart, errors="replace").read():
            p.kill()
            p.wait()
            said = [ln for ln in open(uart, errors="replace").read().splitlines() if "ASSERT!" in ln]
            raise SystemExit("measure: %s: the demo's own check failed: %s" % (key, said[0].strip()))
        if time.time() - t0 > 3600:
            p.kill()
            raise SystemExit("measure: %s: qemu still running after an hour" % key)
    err = open(err_path, errors="replace").read()
    if p.returncode != 0:
        raise SystemExit("measure: %s: qemu exited %d: %s" % (key, p.returncode, err.strip()[-2000:]))
    if "field end" not in open(uart, errors="replace").read():
        raise SystemExit("measure: %s: the firmware did not finish (no 'field end' on the UART)" % key)
    return time.time() - t0


# ---- reading a row ---------------------------------------------------------------------------------

def window_counts(path):
    """counts.txt's window count per PC."""
    out = {}
    for line in open(path):
        f = line.split()
        if f[0] == "error":
            raise SystemExit("measure: truth plugin: " + line.strip())
        if len(f) == 3 and int(f[2]):
            out[int(f[0], 16)] = int(f[2])
    return out


def library_names(flags, tree, out):
    """The functions the library's files define, each compiled alone with the build's flags."""
    names = set()
    for f in LIBRARY:
        names.update(scen.object_functions(flags, os.path.join(tree, "firmware", f), os.path.join(out, f[:-2] + ".lib.o")))
    return names


def name_clashes(elf, lib):
    """Library function names that the ELF defines more than once (another file's function of the
    same name would be counted as the library's)."""
    with open(elf, "rb") as f:
        seen = collections.Counter(n for _, _, n in scen._nm_function_symbols(f.read()))
    return sorted(n for n in lib if seen[n] > 1)


def library_cost(elf, counts, lib, path=None):
    """(library instructions a sample, the polls' own a sample, samples in the window); with path,
    each library function's instructions a sample, its calls (the count at its first instruction)
    and instructions a call written there, most first."""
    sym = scen.Symbols(elf)
    samples = counts.get(sym.by_name[SAMPLER][0], 0)
    per = collections.Counter()
    for pc, n in counts.items():
        per[sym.lookup(pc)] += n
    polls = sum(per[f] for f in POLLS)
    total = sum(v for f, v in per.items() if f in lib) - polls
    if path:
        with open(path, "w") as f:
            f.write("# a sample  calls  a call  function (%d samples; %s: the idle polls, not counted)\n"
                    % (samples, " ".join(POLLS)))
            for name, v in per.most_common():
                if name in lib:
                    calls = counts.get(sym.by_name[name][0], 0) if name in sym.by_name else 0
                    f.write("%8.1f %8d %8.1f  %s\n" % (v / max(samples, 1), calls, v / max(calls, 1), name))
    return total / max(samples, 1), polls / max(samples, 1), samples


def checked_lines(text):
    """(line, its text before the '!', samples in it) of each stream line whose check holds."""
    state = {}
    for line in text.splitlines(True):
        body = scen.checked_body(line.rstrip("\r\n"))
        if body is not None:
            scen.stream_state(body, state)
            yield line, body, scen.sample_line_count(body, state.get("version", 0)) if body[:1] in "%$&" else 0


def sample_line_bytes(text):
    """(bytes of the sample lines, names inside them and newlines included, samples in them)."""
    size = samples = 0
    for line, body, n in checked_lines(text):
        if body[:1] in "%$&":
            size, samples = size + len(line.encode("utf-8", "surrogateescape")), samples + n
    return size, samples


def tool_json(tree, uart, elf):
    r = subprocess.run([os.path.join(tree, "build", "cmprof-top"), "--batch", "-o", "json", "--by", "task", uart, elf],
                       capture_output=True, text=True)
    if r.returncode not in (0, 2):
        raise SystemExit("measure: cmprof-top --batch %s failed (%d): %s" % (uart, r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def unnamed(row):
    return row["name"].startswith(("0x", "(", "task #"))


def unnamed_share(j):
    n = sum(r["samples"] for r in j["rows"])
    return sum(r["samples"] for r in j["rows"] if unnamed(r)) / max(n, 1), n


def late_attach(text, samples_total, path):
    """The capture cut at a line's end LATE_AT_S into the run and LATE_FOR_S of it (by the samples'
    count: RUN_S of them in all), written to path for a host that attaches late."""
    per_s = samples_total / RUN_S
    lines, seen, start = [], 0, None
    for line, _, n in checked_lines(text):
        if start is not None:
            lines.append(line)
        seen += n
        if start is None and seen >= LATE_AT_S * per_s:
            start = seen
        elif start is not None and seen - start >= LATE_FOR_S * per_s:
            break
    with open(path, "w", errors="surrogateescape") as f:
        f.write("".join(lines))


def truth_shares(d, text):
    """Exact instructions per task name (the 'tid' lines name each id; IDLE is the host's idle) and
    per wrapped handler ('ISR: ' and its vector's name), inside the window."""
    names = {}
    for line in text.splitlines():
        f = line.split(None, 2)
        if len(f) == 3 and f[0] == "tid" and f[1].isdigit():
            names[int(f[1])] = "idle" if f[2] == "IDLE" else f[2]
    t = collections.Counter()
    for line in open(os.path.join(d, "contexts.txt")):
        kind, k, n = line.split()
        k, n = int(k), int(n)
        if not n:
            continue
        if kind == "task":
            t[names.get(k, "(task id %d)" % k)] += n
        elif k < len(ISRS):
            t["ISR: " + ISRS[k]] += n
    return t


def against_truth(truth, j):
    """(rows, rows past 1.96 sigma, worst sigma): each name's share of the host's samples against
    its exact share of the instructions, sigma from the truth share (at least 1/n)."""
    got = collections.Counter({r["name"]: r["samples"] for r in j["rows"]})
    n, tot = sum(got.values()), sum(truth.values())
    zs = [abs(got[k] / n - truth[k] / tot) / scen.sigma(truth[k] / tot, n) for k in set(truth) | set(got)]
    return len(zs), sum(1 for z in zs if z > 1.96), max(zs)


def read_row(key, elf, tree, lib):
    d = os.path.dirname(elf)
    text = open(os.path.join(d, "uart.txt"), errors="surrogateescape").read()
    cost, polls, taken = library_cost(elf, window_counts(os.path.join(d, "counts.txt")), lib,
                                      os.path.join(d, "functions.txt"))
    total, names = scen_check.stream_bytes(text)
    sample_bytes, samples = sample_line_bytes(text)
    j = tool_json(tree, os.path.join(d, "uart.txt"), elf)
    share, n = unnamed_share(j)
    late = os.path.join(d, "late.txt")
    late_attach(text, samples, late)
    late_share, late_n = unnamed_share(tool_json(tree, late, elf))
    rows, past, worst = against_truth(truth_shares(d, text), j)
    bad = [ln for ln in text.splitlines() if ln.startswith("field end") and not ln.endswith("bad_ids=00000")]
    return {"key": key, "lost": j.get("lost", 0), "unnamed": share, "names": names / max(total, 1),
            "bytes": sample_bytes / max(samples, 1), "all_bytes": total / max(samples, 1), "cost": cost, "polls": polls, "taken": taken,
            "samples": n, "late": late_share, "late_n": late_n, "rows": rows, "past": past, "worst": worst,
            "bad_ids": bad}


def table(results, header):
    out = [header, "",
           "| FreeRTOS full demo + 100 churning tasks | lost | unnamed share | names, % of bytes | "
           "bytes a tagged sample: sample lines (every line) | library instructions a sample (idle polls apart) | "
           "named 5 s after a late attach | task shares against truth |",
           "|---|---|---|---|---|---|---|---|"]
    for r in results:
        late = "yes" if r["late"] == 0 else "no: %.2f %%" % (100 * r["late"])
        out.append("| %s | %d | %.2f %% | %.1f %% | %.2f (%.2f) | %.1f (polls %.1f) | %s | %d rows: %d past 1.96 "
                   "sigma, worst %.1f |" % (ROWS[r["key"]][0], r["lost"], 100 * r["unnamed"], 100 * r["names"],
                                            r["bytes"], r["all_bytes"], r["cost"], r["polls"], late, r["rows"],
                                            r["past"], r["worst"]))
        out += ["  (!) %s: %s" % (r["key"], b) for b in r["bad_ids"]]
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    demo_src, kernel_src, trace_src = (os.path.abspath(a) for a in argv[1:4])
    tree = os.path.abspath(argv[4]) if len(argv) == 5 else ROOT
    out = os.path.abspath(os.environ.get("FIELD_OUT") or os.path.join(ROOT, "build", "field"))
    jobs = int(os.environ.get("FIELD_JOBS", "2"))
    keys = (os.environ.get("FIELD_ROWS") or " ".join(ROWS)).split()
    if any(k not in ROWS for k in keys):
        raise SystemExit("measure: FIELD_ROWS: rows are %s" % " ".join(ROWS))
    demo_rev = os.environ.get("FIELD_DEMO_REV", "HEAD")
    demo, demo_commit = extract(demo_src, demo_rev, [DEMO_DIR, COMMON_DIR], os.path.join(out, "src", "demo"))
    pin = is_git_dir(demo_src)
    kernel, kernel_commit = extract(kernel_src, os.environ.get("FIELD_KERNEL_REV") or (gitlink(demo_src, demo_commit, KERNEL_PIN)
                                                                                     if pin else "HEAD"),
                                    None, os.path.join(out, "src", "kernel"))
    trace, trace_commit = extract(trace_src, os.environ.get("FIELD_TRACE_REV") or (gitlink(demo_src, demo_commit, TRACE_PIN)
                                                                                  if pin else "HEAD"),
                                  None, os.path.join(out, "src", "trace"))
    if not os.path.exists(os.path.join(tree, "build", "cmprof-top")):
        sh(["make", "-C", tree, "-j%d" % jobs, "tool"])
    scen.build_plugin()
    patched = patched_demo(demo, out)
    opts = os.environ.get("FIELD_CMPROF_OPTS", "").split()
    recipe = [d for d in RECIPE if macro(d) not in {macro(o) for o in opts}] + opts  # an option replaces the recipe's
    flags = DEMO_FLAGS + recipe + includes(demo, kernel, trace, patched, tree) + \
        prefix_maps([(tree, "cmprof"), (HERE, "field"), (out, "out"), (demo, "demo"), (kernel, "kernel"),
                     (trace, "trace"), (patched, "patched")])
    srcs = sources(demo, kernel, trace, patched, tree)
    top = subprocess.run(["git", "-C", tree, "rev-parse", "--show-toplevel"], capture_output=True, text=True).stdout.strip()
    tree_rev = subprocess.run(["git", "-C", tree, "describe", "--always", "--dirty"], capture_output=True,
                              text=True).stdout.strip() if top == tree else "not a git checkout"
    header = ("tree %s (%s); demo %s, kernel %s, TraceRecorder %s; cmprof options: %s"
              % (tree, tree_rev, demo_commit, kernel_commit, trace_commit, " ".join(recipe)))
    print(header, flush=True)
    elfs = {k: build_row(k, flags, srcs, demo, tree, out, jobs) for k in keys}
    lib = library_names(flags, tree, out)
    clashes = name_clashes(elfs[keys[0]], lib)
    if clashes:
        raise SystemExit("measure: library function names defined elsewhere too (the count would take them "
                         "for the library's): %s" % " ".join(clashes))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        secs = dict(zip(keys, pool.map(lambda k: run_row(k, elfs[k]), keys)))
    for k in keys:
        print("%s: QEMU %.0f s" % (k, secs[k]), file=sys.stderr)
    results = [read_row(k, elfs[k], tree, lib) for k in keys]
    text = table(results, header)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
