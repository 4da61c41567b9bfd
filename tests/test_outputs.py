#!/usr/bin/env python3
"""Issue 32: -o pprof, callgrind, lcov and trace, each read back by the tool its users read it
with (Debian's go tool pprof, callgrind_annotate, genhtml; the trace as JSON against the Trace
Event Format's required fields), with totals that agree with the table; the call stacks of a GDB
server's halts and of the firmware sampler's stack evidence with their caller edges (and
speedscope's file against its format). Also hostile cases: an
empty profile, unresolved addresses and a task name full of JSON's special characters.
Prints one ok/FAIL line per check."""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402

B64, line, check = harness.B64, harness.stream_line, harness.check_brief


TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
SCEN = os.path.join(ROOT, "build", "scenarios")
TMP = harness.scratch("outputs-test")  # (-asan under the ASan tool: the two runs can go side by side)
GO_HOME = tempfile.mkdtemp(prefix="cmprof-go-")  # Go and pprof write here (removed at the end), not in $HOME or the repo


def scenario(name):
    d = os.path.join(SCEN, name)
    cap = os.path.join(d, "gdb.rec") if os.path.exists(os.path.join(d, "gdb.rec")) else os.path.join(d, "uart.txt")
    return cap, os.path.join(d, "fw.elf")


def first_section_ticks(cap):
    """The last run's ticks of the first section a dump reports (its `sect N ... cur=` line)."""
    m = re.search(r"^sect \d+ n=\d+ cur=(\d+)", open(cap, errors="replace").read(), re.M)
    return int(m.group(1)) if m else None


def run(args, binary=False, env=None, cwd=None):
    r = subprocess.run(args, capture_output=True, timeout=120, env=env, cwd=cwd)
    out = r.stdout if binary else r.stdout.decode(errors="replace")
    return r.returncode, out, r.stderr.decode(errors="replace")


def cmprof(cap, elf, fmt, *extra):
    return run([TOOL, "--batch", "-o", fmt, *extra, cap, elf], binary=fmt == "pprof")


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def table_rows(cap, elf, by="function"):
    """{name: samples} and the total, from -o json (the table's rows)."""
    code, out, err = cmprof(cap, elf, "json", "--by", by)
    j = json.loads(out)
    rows = collections.Counter()
    for r in j["rows"]:
        rows[r["name"]] += r["samples"]
    return rows, j["total"], j


# ---- go tool pprof ------------------------------------------------------------------------

def go_env():
    env = dict(os.environ)
    env.update(HOME=GO_HOME, GOCACHE=os.path.join(GO_HOME, "cache"), GOPATH=os.path.join(GO_HOME, "path"),
               GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local", PPROF_TMPDIR=os.path.join(GO_HOME, "pprof"))
    return env


def pprof(*args):
    return run(["go", "tool", "pprof", *args], env=go_env(), cwd=GO_HOME)


def pprof_top(path, index="samples", cum=False):
    """{function: flat (or cum)} from go tool pprof -top, nothing dropped."""
    code, out, err = pprof("-top", "-sample_index=" + index, "-nodecount=100000", "-nodefraction=0",
                           "-edgefraction=0", path)
    got = {}
    started = False
    for ln in out.splitlines():
        if re.match(r"\s*flat\s+flat%", ln):
            started = True
            continue
        m = re.match(r"\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.*\S)\s*$", ln)
        n = int(m.group(2) if cum else m.group(1)) if m else 0
        if started and n:  # (a function only inlined somewhere is "name (inline)")
            got[re.sub(r" \(inline\)$", "", m.group(3))] = n
    return code, got, out + err


def pprof_raw(path):
    code, out, err = pprof("-raw", path)
    return code, out + err


def raw_locations(raw):
    """{address: [(function, file:line), ...]} from -raw's Locations section, innermost first."""
    locs, cur, inside = {}, None, False
    for ln in raw.splitlines():
        if ln.startswith("Locations"):
            inside = True
            continue
        if ln.startswith("Mappings"):
            break
        if not inside:
            continue
        m = re.match(r"\s*\d+: (0x[0-9a-f]+) M=\d+ (\S+) (\S+) s=\d+", ln)
        if m:
            cur = int(m.group(1), 16)
            locs[cur] = [(m.group(2), m.group(3))]
            continue
        m = re.match(r"\s+(\S+) (\S+) s=\d+$", ln)
        if m and cur is not None:
            locs[cur].append((m.group(1), m.group(2)))
    return locs


def pprof_checks():
    cap, elf = scenario("stream_tagged")
    rows, total, j = table_rows(cap, elf)
    code, data, err = cmprof(cap, elf, "pprof")
    path = write("tagged.pb.gz", data)
    check("pprof: written, gzipped", code == 0 and data[:2] == b"\x1f\x8b", err)
    code, top, out = pprof_top(path)
    check("pprof: go tool pprof -top reads it", code == 0 and top, out)
    check("pprof: -top's flat samples per function are the table's rows",
          top == {k: v for k, v in rows.items() if v}, "%s | %s" % (sorted(top.items()), sorted(rows.items())))
    code, raw = pprof_raw(path)
    ns = (j["stream"]["period"] + j["stream"]["jitter"] / 2) * 1e9 / j["stream"]["timer_hz"]
    m = re.search(r"^Period: (\d+)$", raw, re.M)
    check("pprof: sample types samples/count and cpu/nanoseconds, the period from the announce",
          "samples/count cpu/nanoseconds" in raw and "PeriodType: cpu nanoseconds" in raw and m
          and int(m.group(1)) == round(ns), raw[:400])
    vals = [tuple(map(int, v)) for v in re.findall(r"^\s+(\d+)\s+(\d+): [\d ]+$", raw, re.M)]
    check("pprof: cpu time is samples times the period (rounded as a running sum)",
          vals and sum(v[0] for v in vals) == total and abs(sum(v[1] for v in vals) - total * ns) <= 1, vals[:5])
    bid = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", elf])[1])
    check("pprof: the mapping carries the ELF's build-id",
          bid and re.search(r"^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x0 fw.elf %s \[FN\]\[FL\]\[LN\]\[IN\]" % bid.group(1), raw,
                            re.M), raw[-300:])
    tasks, _, _ = table_rows(cap, elf, "task")
    code, out, err = pprof("-tags", path)
    got = dict((name, float(pct)) for pct, name in re.findall(r"\(\s*([\d.]+)%\): (.+)$", out, re.M))
    check("pprof: the task is a label, with the table's shares",
          got and all(abs(got.get(t, -1) - 100.0 * n / total) < 0.01 for t, n in tasks.items()), out + err)
    # inline chains: the lines of one location, as --resolve (addr2line -i) gives them
    cap, elf = scenario("loops_inline_o2")
    code, data, err = cmprof(cap, elf, "pprof")
    path = write("inline.pb.gz", data)
    code, raw = pprof_raw(path)
    locs = raw_locations(raw)
    inlined = {a: l for a, l in locs.items() if len(l) > 1}
    check("pprof: -raw shows inlined frames as lines of one location", len(inlined) >= 3, raw[:600])
    ok, res = bool(inlined), ""
    for a, lines in list(inlined.items())[:4]:
        _, res, _ = run([TOOL, "--resolve", elf, "0x%x" % a])
        want = res.splitlines()[1:]
        ok &= [x for fl in lines for x in fl] == want
    check("pprof: each location's lines are its inline chain, innermost first (--resolve)", ok,
          "%s | %s" % (inlined, res))
    code, top, out = pprof_top(path)
    rows, total, _ = table_rows(cap, elf)
    check("pprof: with inlined code, -top is still the table", top == {k: v for k, v in rows.items() if v}, out)
    merge_checks()
    stack_checks()


def merge_checks():
    """Two boards' profiles (here: one capture, all of it and its first 3000 samples) merge into
    the sum of their samples."""
    cap, elf = scenario("stream_tagged")
    code, a, err = cmprof(cap, elf, "pprof")
    code2, b, err2 = cmprof(cap, elf, "pprof", "--samples", "3000")
    pa, pb = write("board-a.pb.gz", a), write("board-b.pb.gz", b)
    merged = os.path.join(TMP, "merged.pb.gz")
    if os.path.exists(merged):
        os.unlink(merged)
    code3, out, err3 = pprof("-proto", "-output", merged, pa, pb)
    check("pprof: go tool pprof -proto merges two profiles", code3 == 0 and os.path.exists(merged), out + err3)
    ra, ta, _ = table_rows(cap, elf)
    rb, tb, _ = table_rows(cap, elf)
    _, rb_, _ = run([TOOL, "--batch", "-o", "json", "--samples", "3000", cap, elf])
    rb = collections.Counter({r["name"]: r["samples"] for r in json.loads(rb_)["rows"]})
    code, top, out = pprof_top(merged)
    want = {k: v for k, v in (ra + rb).items() if v}
    check("pprof: the merged profile's samples are the sum of both, function by function", top == want,
          "%s | %s" % (sorted(top.items()), sorted(want.items())))


def folded_inclusive(cap, elf):
    """{function: samples whose stack holds it} from -o folded (each stack once per function)."""
    code, out, err = run([TOOL, "--batch", "-o", "folded", cap, elf])
    inc = collections.Counter()
    for ln in out.splitlines():
        stack, n = ln.rsplit(" ", 1)
        for f in set(stack.split(";")):
            inc[f] += int(n)
    return inc


def stack_checks():
    cap, elf = scenario("gdb_callers")
    code, data, err = cmprof(cap, elf, "pprof")
    path = write("stacks.pb.gz", data)
    rows, total, _ = table_rows(cap, elf)
    code, top, out = pprof_top(path)
    check("pprof: GDB call stacks: -top's flat samples are the table's rows", top == {k: v for k, v in rows.items() if v},
          out)
    code, cum, out = pprof_top(path, cum=True)
    inc = folded_inclusive(cap, elf)
    check("pprof: GDB call stacks: -top's cumulative samples are those whose stack holds the function",
          cum and cum == dict(inc) and cum.get("main", 0) > rows.get("main", 0), "%s | %s" % (cum, inc))


# ---- callgrind ------------------------------------------------------------------------------

def annotate(path, inclusive=False):
    """(total, {function: cost}) from callgrind_annotate, every function listed."""
    # from "/": run inside the tree, callgrind_annotate lists each function twice in inclusive mode, under
    # its absolute file name and again under the name relative to the working directory
    code, out, err = run(["callgrind_annotate", "--threshold=100", "--auto=no",
                          "--inclusive=" + ("yes" if inclusive else "no"), os.path.abspath(path)], cwd="/")
    total, funcs = None, collections.Counter()
    for ln in out.splitlines():
        m = re.match(r"\s*([\d,]+|\.)(?: \(\s*[\d.]+%\))?\s+(.*\S)\s*$", ln)
        if not m:
            continue
        n = 0 if m.group(1) == "." else int(m.group(1).replace(",", ""))  # '.': nothing
        if m.group(2).startswith("PROGRAM TOTALS"):
            total = n
        elif n and ":" in m.group(2):
            funcs[m.group(2).rsplit(":", 1)[1]] += n
    return code, total, funcs, out + err


def callgrind_checks():
    cap, elf = scenario("stream_tagged")
    rows, total, _ = table_rows(cap, elf)
    code, out, err = cmprof(cap, elf, "callgrind")
    path = write("tagged.callgrind", out)
    check("callgrind: written, with the format's header", code == 0 and out.startswith("# callgrind format\n") and
          "events: Samples\n" in out, err)
    code, tot, funcs, text = annotate(path)
    check("callgrind: callgrind_annotate reads it, its total is the table's", code == 0 and tot == total,
          text[:600])
    check("callgrind: per-function costs are the table's rows", funcs == {k: v for k, v in rows.items() if v},
          "%s | %s" % (sorted(funcs.items()), sorted(rows.items())))
    check("callgrind: no warnings from callgrind_annotate", "uninitialized" not in text, text[-400:])
    # inlined code under its own name and file, with an edge from the caller's call site
    cap, elf = scenario("loops_inline_o2")
    code, out, err = cmprof(cap, elf, "callgrind")
    path = write("inline.callgrind", out)
    rows, total, _ = table_rows(cap, elf)
    code, tot, funcs, text = annotate(path)
    check("callgrind: inlined functions under their own names (the table's rows)",
          tot == total and funcs == {k: v for k, v in rows.items() if v}, "%s | %s" % (funcs, rows))
    check("callgrind: an inlined call is an edge (cfn=, calls=) at its call site",
          re.search(r"^fn=\(\d+\)(?: run)?\n(?:.*\n)*?cfn=\(\d+\) hot_a\ncalls=%d 0\n83 %d$" % (rows["hot_a"], rows["hot_a"]),
                    out, re.M) is not None, out[:800])
    # call edges from GDB's stacks: inclusive costs are the samples whose stack holds the function
    cap, elf = scenario("gdb_callers")
    code, out, err = cmprof(cap, elf, "callgrind")
    path = write("stacks.callgrind", out)
    code, tot, funcs, text = annotate(path, inclusive=True)
    inc = folded_inclusive(cap, elf)
    check("callgrind: GDB call stacks: callgrind_annotate --inclusive=yes gives each function's stack samples",
          code == 0 and funcs == dict(inc) and "uninitialized" not in text, "%s | %s | %s" % (funcs, inc, text[-300:]))


# ---- the sampler's stack evidence, read back by each tool with its caller edges ---------------

EDGES = (("caller_a", "leaf"), ("caller_b", "leaf"), ("chain_5", "deep_leaf"), ("recurse", "rec_leaf"),
         ("via_pointer", "ptr_target"), ("framed", "step"))


def folded_edges(cap, elf):
    """The folded stacks ({stack: samples}) and {(caller, callee): samples whose stack ends in that call}."""
    code, out, err = run([TOOL, "--batch", "-o", "folded", cap, elf])
    stacks, edges = collections.Counter(), collections.Counter()
    for ln in out.splitlines():
        stack, n = ln.rsplit(" ", 1)
        stacks[stack] += int(n)
        frames = stack.split(";")
        if len(frames) >= 2:
            edges[(frames[-2], frames[-1])] += int(n)
    return stacks, edges


def caller_tree(path):
    """{(caller, callee): inclusive cost} from callgrind_annotate --tree=caller: each function's
    block lists its callers ('<' lines) above its own ('*') line."""
    code, out, err = run(["callgrind_annotate", "--tree=caller", "--inclusive=yes", "--threshold=100", "--auto=no",
                          os.path.abspath(path)], cwd="/")
    edges, pending = {}, []
    for ln in out.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+([<*])\s+\S*:(\S+)", ln)
        if not m:
            pending = []
            continue
        n = int(m.group(1).replace(",", ""))
        if m.group(2) == "<":
            pending.append((m.group(3), n))
        else:
            for caller, cost in pending:
                edges[(caller, m.group(3))] = cost
            pending = []
    return code, edges, out + err


def pprof_callers(path, function):
    """{caller: samples} of a function from go tool pprof -peek (its callers listed above it)."""
    code, out, err = pprof("-sample_index=samples", "-peek", "^%s$" % function, path)
    callers = {}
    for ln in out.splitlines():
        m = re.match(r"\s+(\d+)\s+[\d.]+%\s+\|\s+(\S+)\s*$", ln)
        if m:
            callers[m.group(2)] = int(m.group(1))
    return code, callers, out + err


def sampler_stack_time_checks(cap, elf, path):
    """The stacked samples (1 in 16) stand for the whole run: pprof's cpu time is all the samples
    times the period (go tool pprof: "Total samples" 100 % of the duration, not 6.25 %)."""
    _, total, j = table_rows(cap, elf)
    ns = (j["stream"]["period"] + j["stream"]["jitter"] / 2) * 1e9 / j["stream"]["timer_hz"]
    code, raw = pprof_raw(path)
    vals = [tuple(map(int, v)) for v in re.findall(r"^\s+(\d+)\s+(\d+): [\d ]+$", raw, re.M)]
    stacked = sum(v[0] for v in vals)
    check("pprof: the sampler's stacks (%d of %d samples): the cpu time adds up to all samples times the period"
          % (stacked, total), vals and stacked < total and abs(sum(v[1] for v in vals) - total * ns) <= 0.001 * total * ns,
          "cpu %d ns, run %.0f ns" % (sum(v[1] for v in vals), total * ns))
    code, out, err = pprof("-top", path)
    check("pprof: the sampler's stacks: go tool pprof -top's total samples are 100 % of the duration",
          code == 0 and re.search(r"Total samples = [\d.]+m?s \(\s*100%\)", out), out[:400])


def sampler_stack_checks():
    """The firmware sampler's stack evidence (m4_stacks: every 16th sample walked on the host):
    callgrind_annotate, go tool pprof and speedscope's format each give the same caller edges, with
    the costs the folded stacks give."""
    cap, elf = scenario("m4_stacks")
    stacks, edges = folded_edges(cap, elf)
    check("sampler stacks: the capture's folded stacks hold every edge of the app's call shapes",
          all(edges[e] > 0 for e in EDGES), str(dict(edges)))
    code, out, err = cmprof(cap, elf, "callgrind")
    path = write("sampler.callgrind", out)
    code, tree, text = caller_tree(path)
    check("callgrind: the sampler's stacks: callgrind_annotate --tree=caller shows each caller edge with its inclusive "
          "cost", code == 0 and all(tree.get(e) == edges[e] for e in EDGES),
          "%s | %s | %s" % ({e: tree.get(e) for e in EDGES}, {e: edges[e] for e in EDGES}, text[-300:]))
    # a recursive function's calls to itself are edges too, each level's cost its own (as valgrind's
    # callgrind writes them): its inclusive cost counts every level, so it is left out here
    recursive = {a for st in stacks for a, b in zip(st.split(";"), st.split(";")[1:]) if a == b}
    code, tot, funcs, text = annotate(path, inclusive=True)
    inc = {k: v for k, v in folded_inclusive(cap, elf).items() if k not in recursive}
    check("callgrind: the sampler's stacks: --inclusive=yes gives each function's stacked samples (%s recursive)"
          % ", ".join(sorted(recursive)), code == 0 and recursive and {k: v for k, v in funcs.items() if k not in recursive}
          == inc, "%s | %s" % (funcs, inc))
    code, data, err = cmprof(cap, elf, "pprof")
    path = write("sampler.pb.gz", data)
    peeks = {callee: pprof_callers(path, callee) for callee in {e[1] for e in EDGES}}
    got = {e: peeks[e[1]][1].get(e[0]) for e in EDGES}
    check("pprof: the sampler's stacks: go tool pprof -peek lists each function's callers with their samples",
          all(p[0] == 0 for p in peeks.values()) and all(got[e] == edges[e] for e in EDGES),
          "%s | %s" % (got, {e: edges[e] for e in EDGES}))
    code, cum, out = pprof_top(path, cum=True)
    check("pprof: the sampler's stacks: -top's cumulative samples are those whose stack holds the function",
          cum and cum == dict(folded_inclusive(cap, elf)), out[-300:])
    sampler_stack_time_checks(cap, elf, path)
    code, out, err = cmprof(cap, elf, "speedscope")
    doc = json.loads(out)
    prof = doc["profiles"][0] if doc.get("profiles") else {}
    _, total, j = table_rows(cap, elf)
    run_ns = total * (j["stream"]["period"] + j["stream"]["jitter"] / 2) * 1e9 / j["stream"]["timer_hz"]
    check("speedscope: the sampler's stacks (1 sample in 16) weigh the whole run's time, not the stacked samples' "
          "(endValue and the weights' sum are all samples times the period)",
          prof.get("unit") == "nanoseconds" and abs(prof.get("endValue", 0) - run_ns) <= 1e-6 * run_ns
          and abs(sum(prof.get("weights", [])) - run_ns) <= 1e-6 * run_ns,
          "endValue %s, weights %s, run %.0f ns" % (prof.get("endValue"), sum(prof.get("weights", [])), run_ns))
    names = [f["name"] for f in doc.get("shared", {}).get("frames", [])]
    ok = doc.get("$schema") == "https://www.speedscope.app/file-format-schema.json" and prof.get("type") == "sampled" \
        and prof.get("unit") in ("nanoseconds", "none") and len(prof.get("samples", [])) == len(prof.get("weights", [])) \
        and all(isinstance(i, int) and 0 <= i < len(names) for st in prof.get("samples", []) for i in st)
    check("speedscope: the file has the format's fields: $schema, shared frames, a sampled profile, samples and weights "
          "of one length, every frame index in range", ok, out[:300])
    back = collections.Counter()
    for st, w in zip(prof.get("samples", []), prof.get("weights", [])):
        back[";".join(names[i] for i in st)] += w
    per = {k: back[k] / stacks[k] for k in stacks if k in back}
    check("speedscope: its stacks are the folded ones, each weighed by its samples times one period",
          set(back) == set(stacks) and per and max(per.values()) - min(per.values()) <= 1e-6 * max(per.values()),
          "%d stacks in speedscope, %d folded; weight per sample %s" % (len(back), len(stacks),
                                                                       sorted(set(round(v, 3) for v in per.values()))[:4]))


# ---- lcov ---------------------------------------------------------------------------------

def genhtml(path, name):
    out_dir = os.path.join(TMP, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    code, out, err = run(["genhtml", "--quiet", "-o", out_dir, path])
    return code, out_dir, out + err


def html_counts(out_dir):
    """{(file name, line): count} from genhtml's source pages."""
    got = {}
    for page in glob.glob(os.path.join(out_dir, "**", "*.gcov.html"), recursive=True):
        base = os.path.basename(page)[:-len(".gcov.html")]
        with open(page, errors="replace") as f:
            for line, n in re.findall(r'<span class="lineNum">\s*(\d+) </span><span class="lineCov">\s*(\d+) :',
                                      f.read()):
                got[(base, int(line))] = int(n)
    return got


def lcov_checks():
    cap, elf = scenario("stream_tagged")
    code, out, err = cmprof(cap, elf, "lcov")
    path = write("tagged.info", out)
    _, _, j = table_rows(cap, elf, "line")
    lines = {(os.path.basename(r["file"]), r["line"]): r["samples"] for r in j["rows"] if r["file"] and r["line"]}
    da = collections.Counter()
    sf = None
    zero_lines, lf_lh = set(), []
    for ln in out.splitlines():
        if ln.startswith("SF:"):
            sf = os.path.basename(ln[3:])
        elif ln.startswith("DA:"):
            n, c = ln[3:].split(",")
            da[(sf, int(n))] += int(c)
            if int(c) == 0:
                zero_lines.add((sf, int(n)))
        elif ln.startswith("LF:") or ln.startswith("LH:"):
            lf_lh.append(int(ln[3:]))
    sampled = {k: v for k, v in da.items() if v}
    check("lcov: DA records with samples are the table's line rows", code == 0 and sampled == lines,
          "%s | %s" % (sorted(sampled.items())[:8], sorted(lines.items())[:8]))
    check("lcov: the sampled functions' other lines have DA records of 0 (%d), so LH < LF" % len(zero_lines),
          zero_lines and not (zero_lines & set(lines)) and sum(lf_lh[1::2]) < sum(lf_lh[0::2]) and
          sum(lf_lh[1::2]) == len(lines), "LF/LH %s" % lf_lh[:10])
    rows, total, _ = table_rows(cap, elf)
    fnda = collections.Counter()
    for name_count in re.findall(r"^FNDA:(\d+),(.*)$", out, re.M):
        fnda[name_count[1]] += int(name_count[0])
    check("lcov: FNDA records are the table's function rows", dict(fnda) == {k: v for k, v in rows.items() if v},
          "%s | %s" % (fnda, rows))
    cap, elf = scenario("m4_stacks")  # with stack evidence on 1 sample in 16: lcov counts all 16
    code, out, err = cmprof(cap, elf, "lcov")
    rows, total, _ = table_rows(cap, elf)
    fnda = collections.Counter()
    for name_count in re.findall(r"^FNDA:(\d+),(.*)$", out, re.M):
        fnda[name_count[1]] += int(name_count[0])
    check("lcov, a capture with the sampler's stacks: FNDA records are the table's function rows (all samples, "
          "not the stacked 1 in 16)", code == 0 and dict(fnda) == {k: v for k, v in rows.items() if v},
          "%s | %s" % (sorted(fnda.items())[:6], sorted(rows.items())[:6]))
    code, out_dir, text = genhtml(path, "html")
    check("genhtml renders it", code == 0 and os.path.exists(os.path.join(out_dir, "index.html")), text)
    got = html_counts(out_dir)
    check("genhtml: each sampled line shows its samples", got and all(got.get(k) == v for k, v in lines.items()),
          "%s | %s" % (sorted(got.items())[:8], sorted(lines.items())[:8]))
    with open(os.path.join(out_dir, "index.html"), errors="replace") as f:
        rates = re.findall(r'headerCovTableEntry\w*">\s*([0-9.]+)\s*%', f.read())
    check("genhtml: its line summary reads the share of lines sampled, under 100 %% (%s)" % rates[:1],
          rates and float(rates[0]) < 100 and abs(float(rates[0]) - 100.0 * len(lines) / len(da)) < 0.1,
          "%s, %d of %d lines sampled" % (rates, len(lines), len(da)))


# ---- trace events -------------------------------------------------------------------------

BASE = 0x08000164  # the tasks scenario's first code address
RUNS = [("A", 20), ("B", 7), ("-AW", 3), ("A", 50), ("C", 30), ("B", 34), ("A", 16)]  # 160 samples, 10 lines
PERIOD_US = 100  # clk = tclk = 1 MHz, period 100 ticks, no jitter
HOSTILE = 'co"m\\ms\u00e9'  # a quote, a backslash, a non-ASCII letter


def instruction_offsets(n=16):
    """The first n instruction starts of the tasks scenario's code, in halfwords from BASE (a sample is
    always an instruction start: PCs anywhere else would be another build's, and say so)."""
    elf = os.path.join(SCEN, "tasks", "fw.elf")
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", "--start-address=0x%x" % BASE,
                          "--stop-address=0x%x" % (BASE + 256), elf], capture_output=True, text=True).stdout
    starts = [(int(m, 16) - BASE) // 2 for m in re.findall(r"^ *([0-9a-f]+):\t[0-9a-f]{2}", dis, re.M)]
    return (starts + [0] * n)[:n]


def tagged_stream(sections=True):
    offsets = instruction_offsets()
    out = line("@cmprof v=2 clk=1000000 tclk=1000000 period=100 jitter=0 base=%08x" % BASE)
    out += line("@task A 20000000 motor") + line("@task B 20001000 %s" % HOSTILE) + line("@task C 20002000 idle")
    out += line("@secname 0 control")
    tags = [t for t, n in RUNS for _ in range(n)]
    for k in range(len(tags) // 16):
        body = "".join(tags[k * 16 + j] + "".join(B64[(offsets[j] >> s) & 63] for s in (18, 12, 6, 0))
                       for j in range(16))
        out += line("%" + body)
        if sections and k == 2:  # after 48 samples: five runs so far, the last 2000 us
            out += line("@sect 0 n=5 cur=2000 min=1000 max=2000 sum=7000")
        if sections and k == 6:  # the same report again: no new run
            out += line("@sect 0 n=5 cur=2000 min=1000 max=2000 sum=7000")
        if sections and k == 7:  # after 128 samples: one more run of 500 us
            out += line("@sect 0 n=6 cur=500 min=500 max=2000 sum=7500")
    return out


def trace_events(cap, elf):
    code, out, err = cmprof(cap, elf, "trace")
    try:
        return code, json.loads(out), err
    except ValueError as e:
        return code, None, "%s: %s" % (e, out[:300])


def required_fields(doc):
    """The Trace Event Format's required fields: name, ph, ts, pid, tid (dur for complete events)."""
    ev = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(ev, list):
        return False
    for e in ev:
        if not all(k in e for k in ("name", "ph", "ts", "pid", "tid")) or not isinstance(e["ts"], (int, float)):
            return False
        if e["ph"] == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            return False
        if e["ph"] == "M" and e["name"] in ("process_name", "thread_name") and "name" not in e.get("args", {}):
            return False
    return True


def lanes(doc):
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            slices[names.get(e["tid"])].append(e)
    return slices


def trace_checks():
    elf = os.path.join(SCEN, "tasks", "fw.elf")
    cap = write("tagged-stream.txt", tagged_stream())
    code, doc, err = trace_events(cap, elf)
    check("trace: valid JSON with the format's required fields", code == 0 and doc and required_fields(doc), err)
    if not doc:
        return
    tasks, total, _ = table_rows(cap, elf, "task")
    slices = lanes(doc)
    runs = sorted((e["ts"], e["name"], e["args"]["samples"], e["dur"]) for k, v in slices.items()
                  if not k.startswith("section: ") for e in v)
    isr = [t for t in tasks if t.startswith("ISR: ")]
    names = {"A": "motor", "B": HOSTILE, "C": "idle", "-AW": isr[0] if isr else "?"}
    want, t = [], 0
    for tag, n in RUNS:
        want.append((t * PERIOD_US, names[tag], n, n * PERIOD_US))
        t += n
    check("trace: one slice per run of a task's consecutive samples, timed by the announced period",
          [(round(a, 3), b, c, round(d, 3)) for a, b, c, d in runs] == want, "%s | %s" % (runs, want))
    check("trace: one lane per task and interrupt, named as the table names them (special characters too)",
          set(k for k in slices if not k.startswith("section: ")) == set(tasks), "%s | %s" % (list(slices), tasks))
    span = sum(e["dur"] for k, v in slices.items() if not k.startswith("section: ") for e in v)
    check("trace: each task's slices add up to its share of the time",
          all(abs(sum(e["dur"] for e in slices[k]) / span - n / total) < 1e-9 for k, n in tasks.items()),
          "%s | %s" % ({k: sum(e["dur"] for e in v) for k, v in slices.items()}, tasks))
    sect = sorted((e["ts"], e["dur"], e["args"]["runs"], e["args"]["mean_us"]) for e in slices.get("section: control", []))
    check("trace: each section report's last run a complete event ending where the report came, with its duration",
          sect == [(2800.0, 2000.0, 5, 1400.0), (12300.0, 500.0, 1, 500.0)], sect)
    cap, elf = scenario("sections")  # a dump: no clock announced, its section times are ticks
    code, doc, err = trace_events(cap, elf)
    sect = [e for e in (doc or {}).get("traceEvents", []) if e.get("cat") == "section"]
    check("trace: every section event as long as its run (none shrunk to nothing where reports come close)",
          code == 0 and sect and all(e["dur"] == e["args"]["duration_ticks"] > 0 for e in sect), sect)
    check("trace: section runs of unknown clock are given in ticks, not called microseconds",
          code == 0 and sect and all("duration_ticks" in e["args"] and "duration_us" not in e["args"] for e in sect)
          and sect[0]["args"]["duration_ticks"] == first_section_ticks(cap), sect)
    cap, elf = scenario("m3_loops")  # no task tags: one lane, and the trace says why
    code, doc, err = trace_events(cap, elf)
    names = [e["args"]["name"] for e in (doc or {}).get("traceEvents", []) if e.get("name") == "thread_name"]
    check("trace: an untagged capture's one lane says the capture has no task tags, and otherData warns",
          code == 0 and len(names) == 1 and "no task tags" in names[0] and
          "CMPROF_TAG" in (doc or {}).get("otherData", {}).get("warning", ""), "%s %s" % (names, err))
    # a real capture: stream_tagged's tasks, their shares
    cap, elf = scenario("stream_tagged")
    code, doc, err = trace_events(cap, elf)
    tasks, total, _ = table_rows(cap, elf, "task")
    ok = code == 0 and doc and required_fields(doc)
    slices = lanes(doc) if ok else {}
    span = sum(e["dur"] for v in slices.values() for e in v)
    check("trace: stream_tagged: slices per task match the table's shares (to 0.01 %)", ok and span > 0 and all(
        abs(100 * sum(e["dur"] for e in slices.get(k, [])) / span - 100.0 * n / total) < 0.01 for k, n in tasks.items()),
        "%s | %s" % ({k: len(v) for k, v in slices.items()}, tasks))
    ends = collections.defaultdict(float)
    overlap = False
    for e in sorted((e for v in slices.values() for e in v), key=lambda e: e["ts"]):
        overlap |= e["ts"] + 1e-6 < ends[e["tid"]]
        ends[e["tid"]] = e["ts"] + e["dur"]
    check("trace: a lane's slices never overlap", ok and not overlap)


# ---- hostile: nothing sampled, nothing resolved ----------------------------------------------

def reads_back(fmt, path):
    """Whether the format's own reader takes the file; (ok, detail)."""
    if fmt == "pprof":
        code, top, out = pprof_top(path)
        return code == 0, out
    if fmt == "callgrind":
        code, tot, funcs, text = annotate(path)
        return code == 0 and tot is not None, text
    if fmt == "lcov":
        code, out_dir, text = genhtml(path, "html-hostile")
        return code == 0 or "no valid records" in text, text  # nothing sampled: lcov's own word for it
    try:
        with open(path) as f:
            return required_fields(json.load(f)), ""
    except ValueError as e:
        return False, str(e)


def hostile_checks():
    elf = os.path.join(SCEN, "tasks", "fw.elf")
    empty = write("empty.txt", "")
    unresolved = write("unresolved.txt", "prof raw n=4\np deadbee0 00000010 f0000000 08000164\nend\n")
    for fmt, ext in (("pprof", "pb.gz"), ("callgrind", "callgrind"), ("lcov", "info"), ("trace", "json")):
        code, out, err = cmprof(empty, elf, fmt)
        path = write("empty." + ext, out)
        ok, detail = reads_back(fmt, path)
        ok &= len(out) > 0 and (fmt != "lcov" or out.startswith("TN:"))  # a file of the format, not nothing
        check("%s: an empty profile (exit 2, no samples) is still a file its reader takes" % fmt, code == 2 and ok,
              "%s %s %s" % (code, err, detail))
        code, out, err = cmprof(unresolved, elf, fmt)
        path = write("unresolved." + ext, out)
        ok, detail = reads_back(fmt, path)
        check("%s: addresses with no symbol are read back" % fmt, code == 0 and ok, err + detail)
    code, top, out = pprof_top(os.path.join(TMP, "unresolved.pb.gz"))
    rows, total, _ = table_rows(unresolved, elf)
    check("pprof: unresolved addresses are named by address, as the table names them",
          top == {k: v for k, v in rows.items() if v}, "%s | %s" % (top, rows))
    with open(os.path.join(TMP, "unresolved.info")) as f:
        info = f.read()
    check("lcov: unresolved addresses have no line, only the resolved one is recorded (its function's other "
          "lines at 0)", info.count("SF:") == 1 and [c for c in re.findall(r"^DA:\d+,(\d+)$", info, re.M) if c != "0"]
          == ["1"] and "LH:1\n" in info, info)


def clones_elf(debug):
    """tests/zoo/clones.c at -O2 with -fipa-cp-clone (crc32.constprop.0 and .1, scale.constprop.0
    and .1); without DWARF (debug False) its copies renamed as the other kinds GCC makes:
    crc32.part.0, crc32.part.0.cold, scale.isra.0, scale.constprop.1. Returns (elf, symbols)."""
    elf = os.path.join(TMP, "clones%s.elf" % ("" if debug else "-nodebug"))
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-ffunction-sections",
                        "-Wl,--gc-sections", "-Wl,-Ttext=0x08000000", "-Wl,-e,Reset_Handler", "-O2", "-g",
                        "-fipa-cp-clone", os.path.join(HERE, "zoo", "clones.c"), "-lgcc", "-o", elf],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("clones.c: " + r.stderr[-400:])
    if not debug:
        subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", "--redefine-sym", "crc32.constprop.0=crc32.part.0",
                        "--redefine-sym", "crc32.constprop.1=crc32.part.0.cold", "--redefine-sym",
                        "scale.constprop.0=scale.isra.0", elf], check=True)
    syms = {}
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return elf, syms


def pprof_strings(gz):
    """A profile.proto's string table (field 6 of the Profile message), read by hand."""
    import gzip
    data, i, strings = gzip.decompress(gz), 0, []

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(data):
        key = varint()
        if key & 7 == 0:
            varint()
        elif key & 7 == 2:
            n = varint()
            if key >> 3 == 6:
                strings.append(data[i:i + n].decode(errors="replace"))
            i += n
        else:
            i += 8 if key & 7 == 1 else 4
    return strings


def names_in(fmt, out):
    """The function names an output gives (pprof: the strings of its string table)."""
    if fmt == "pprof":
        return set(pprof_strings(out))
    if fmt == "table":  # "  37.20%  3.64%  33.63-40.92%  250  name  file"
        return {m.group(1).split("  ")[0] for m in re.finditer(r"^\s+[\d.]+%\s+\S+\s+\S+\s+\d+  (.*)$", out, re.M)}
    if fmt == "csv":
        return {row[5] for row in __import__("csv").reader(out.splitlines()[1:]) if len(row) > 5}
    if fmt == "json":
        return {r["name"] for r in json.loads(out)["rows"]}
    if fmt == "folded":
        return {f for ln in out.splitlines() for f in ln.rpartition(" ")[0].split(";")}
    if fmt == "speedscope":
        return {f["name"] for f in json.loads(out)["shared"]["frames"]}
    if fmt == "callgrind":
        return set(re.findall(r"^c?fn=\(\d+\)(?: (.*))?$", out, re.M)) - {""}
    return set(re.findall(r"^FNDA?:\d+,(.*)$", out, re.M))  # lcov


def clone_name_checks():
    """One name for GCC's copies of a function in every output, by one rule: with -C (for people,
    as the live view shows it) the source name with the kind of copy noted, "crc32 [constprop]";
    without (as linked) the ELF's symbols as they are, "crc32.constprop.0, crc32.constprop.1". A
    name that is a copy's own symbol (no DWARF): "crc32 [part.0]" / crc32.part.0. (-o trace names
    tasks and sections only.)"""
    formats = ("table", "csv", "json", "folded", "speedscope", "callgrind", "lcov", "pprof")
    for debug, want in ((True, {False: {"crc32.constprop.0, crc32.constprop.1", "scale.constprop.0, scale.constprop.1"},
                                True: {"crc32 [constprop]", "scale [constprop]"}}),
                        (False, {False: {"crc32.part.0", "crc32.part.0.cold", "scale.isra.0", "scale.constprop.1"},
                                 True: {"crc32 [part.0]", "crc32 [part.0.cold]", "scale [isra.0]",
                                        "scale [constprop.1]"}})):
        elf, syms = clones_elf(debug)
        copies = sorted(a for n, a in syms.items() if n.startswith(("crc32.", "scale.")))
        pcs = [a + 4 for a in copies for _ in range(10)]
        cap = write("clones-%d.txt" % debug, "prof raw n=%d\n" % len(pcs) + "".join(
            "p %08x\n" % a for a in pcs) + "end\n")
        for demangle in (False, True):
            for fmt in formats:
                if not debug and fmt == "lcov":
                    continue  # no lines without DWARF: nothing for lcov
                code, out, err = cmprof(cap, elf, fmt, *(["-C"] if demangle else []))
                got = names_in(fmt, out) if code == 0 else set()
                ok = want[demangle] <= got and not {"crc32", "scale"} & got and (
                    demangle or not any("[" in n for n in got))
                if ok and fmt in ("callgrind", "lcov"):  # its reader takes the names (callgrind_annotate, genhtml)
                    ok, why = reads_back(fmt, write("clones-%d%d.%s" % (debug, demangle, fmt), out))
                    err += why if not ok else ""
                check("clone names, %s, %s: %s" % ("DWARF" if debug else "symbols only",
                                                   "-C" if demangle else "as linked", fmt) +
                      (" (%s)" % ", ".join(sorted(want[demangle])) if fmt == "table" else ""), ok,
                      "exit %d %s; names %s" % (code, err.strip()[-200:], sorted(got)))


def tmux(*args):
    """tmux on a server of this run's own (another run's would share session names)."""
    return subprocess.run(["tmux", "-L", "cmprof-outputs-%d" % os.getpid(), *args], capture_output=True, text=True,
                          timeout=20).stdout


def wait_screen(session, pattern, timeout=20.0):
    """The match once pattern shows on the screen; the deadline is stretched 4 times, for a
    loaded machine (a screen that shows it returns at once)."""
    import time
    end = time.monotonic() + 4 * timeout
    while time.monotonic() < end:
        m = re.search(pattern, tmux("capture-pane", "-p", "-t", session))
        if m:
            return m
        time.sleep(0.2)
    return None


def live_snapshot_check():
    """The live view's key o, then p (pprof) and e (trace): files the readers take, of the view's samples."""
    cap, elf = scenario("stream_tagged")
    work = os.path.join(TMP, "live")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    s = "cmprof-outputs"
    tmux("kill-session", "-t", s)
    tmux("new-session", "-d", "-s", s, "-x", "160", "-y", "40", "%s --save-dir %s %s %s; sleep 30" % (TOOL, work, cap, elf))
    try:
        started = wait_screen(s, r"samples 10000 ")
        got = {}
        for key, ext in (("p", r"pb\.gz"), ("e", r"trace\.json")):
            tmux("send-keys", "-t", s, "o")
            wait_screen(s, r"p pprof  k callgrind  l lcov  e trace", 5)
            tmux("send-keys", "-t", s, key)
            m = wait_screen(s, r"saved (fw-\d{8}-\d{6}\.%s) \(10000 samples\)" % ext, 10)
            got[key] = os.path.join(work, m.group(1)) if m else None
        tmux("send-keys", "-t", s, "q")
        # the view gone before its session is (a SIGHUP in the middle of an ASan build's exit once left
        # it spinning for good: tests/leftovers.py)
        gone_by = time.monotonic() + 80
        while tmux("display-message", "-p", "-t", s, "#{pane_current_command}").strip() == "cmprof-top" and \
                time.monotonic() < gone_by:
            time.sleep(0.1)
    finally:
        tmux("kill-session", "-t", s)
        harness.tmux_socket_gone("cmprof-outputs-%d" % os.getpid())
    rows, total, _ = table_rows(cap, elf)
    top = pprof_top(got["p"])[1] if started and got.get("p") else {}
    check("live view: o then p saves a pprof snapshot that go tool pprof reads as the table",
          top == {k: v for k, v in rows.items() if v}, "%s %s" % (got, top))
    doc = json.load(open(got["e"])) if got.get("e") else None
    check("live view: o then e saves a trace snapshot", doc and required_fields(doc) and
          sum(e["args"]["samples"] for e in doc["traceEvents"] if e.get("cat") == "task") == total, str(got))


def terminal_check():
    """-o pprof refuses to write gzipped binary to a terminal, as gzip does."""
    import pty
    cap, elf = scenario("stream_tagged")
    master, slave = pty.openpty()
    try:
        r = subprocess.run([TOOL, "--batch", "-o", "pprof", cap, elf], stdout=slave, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    err = r.stderr.decode(errors="replace")
    check("pprof: refused on a terminal, in one line", r.returncode == 2 and "redirect it to a file" in err
          and len(err.splitlines()) == 1, err)


def main():
    os.makedirs(TMP, exist_ok=True)
    for tool in ("go", "genhtml", "callgrind_annotate", "readelf", "tmux"):
        check("dependency: %s is installed (scripts/deps.sh)" % tool, shutil.which(tool) is not None)
    check("the scenarios' captures are built", all(os.path.exists(scenario(s)[0]) for s in
                                                   ("stream_tagged", "loops_inline_o2", "gdb_callers", "tasks", "m4_stacks")))
    for part in (clone_name_checks, pprof_checks, callgrind_checks, sampler_stack_checks, lcov_checks, trace_checks, hostile_checks, terminal_check,
                 live_snapshot_check):
        try:
            part()
        except Exception as e:  # an output so wrong that reading it failed: said, and the rest still run
            check("%s ran to its end" % part.__name__, False, repr(e))
    shutil.rmtree(GO_HOME, ignore_errors=True)
    sys.exit(1 if harness.failed else 0)


if __name__ == "__main__":
    main()
