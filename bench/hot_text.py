#!/usr/bin/env python3
"""Writes app/hot_text.ld: the code and constants that cmprof-top's ordinary runs use, placed
together at the start of the static tool's text and read-only data.

The kernel maps a file's pages around each one a process touches (fault-around, 64 KB): with
every library's code linked in, pieces used by a run are spread over almost the whole image, and
the resident set counted nearly all of it. Packed together, the pages a run touches are mostly
the ones it uses. Which pieces: those valgrind's lackey sees fetched or read in four short runs
(--batch on an ITM capture, --batch on a tagged text stream, --resolve, the live view in tmux with
a few keys), mapped to their input sections by the link map. A piece left out costs only memory;
the live view's pieces come first, then those the other runs add. The script is to be run again
after large changes (about 5 minutes on a quiet machine; --check says whether it is needed):
    make tool && bench/hot_text.py           (--native: lackey's last findings again, the native pass alone;
                                              --check: the pieces each run uses that the list lacks)"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
B = os.path.join(ROOT, "build")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from test_cli import itm_stream, pcs_of  # noqa: E402

OUT = os.path.join(ROOT, "app", "hot_text.ld")
KEEP = (".text", ".rodata")  # the output sections whose inputs are ordered


def lackey(cmd, touched, stdin=os.devnull):
    """One run of cmd under lackey (its trace on descriptor 9), its touched pieces merged into `touched`."""
    sh = "valgrind --tool=lackey --trace-mem=yes --log-fd=9 %s 9>&1 >/dev/null 2>/dev/null <%s | %s %s" % (
        shlex.join(cmd), shlex.quote(stdin), shlex.quote(os.path.join(B, "hot", "lackey_touch")), shlex.quote(touched))
    subprocess.run(["bash", "-c", "set -o pipefail; " + sh], check=True)


def drive_view(name, cmd, to_end, key_pause, done_by, poll):
    """cmd (a live view) in a tmux pane of 150x40: until the view shows "end of file" (to_end seconds
    at most), then g g i f s G q, key_pause apart, then until the pane is gone (done_by seconds from
    the start at most); the screen and the session looked at every poll seconds."""
    s = "%s-%d" % (name, os.getpid())
    subprocess.run(["tmux", "new-session", "-d", "-s", s, "-x", "150", "-y", "40", cmd], check=True)
    t0 = time.time()
    while time.time() - t0 < to_end and "end of file" not in subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", s], capture_output=True, text=True).stdout:
        time.sleep(poll)
    for k in "ggifsGq":
        time.sleep(key_pause)
        subprocess.run(["tmux", "send-keys", "-t", s, k])
    while time.time() - t0 < done_by and subprocess.run(["tmux", "has-session", "-t", s],
                                                        capture_output=True).returncode == 0:
        time.sleep(poll)


def live_run(tool, cap, elf, touched):
    """The live view under lackey in a tmux pane: to the end of the file, then g g i f s G q."""
    filt = os.path.join(B, "hot", "lackey_touch")
    cmd = "valgrind --tool=lackey --trace-mem=yes --log-fd=9 %s %s %s 9>&1 >/dev/tty 2>/dev/null | %s %s" % (
        tool, cap, elf, filt, touched)
    drive_view("hot-text", cmd, 900, 3, 1200, 0.5)


def input_sections(map_path):
    """(address, size, section, file) of every input section of KEEP in a GNU ld map."""
    out, pending = [], None
    for ln in open(map_path):
        m = re.match(r"^ (\.\S+)\s*$", ln)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$", ln)
        sec = (m.group(1) or pending) if m else None
        pending = None
        if sec and int(m.group(3), 16) and sec.split(".")[1] in [k[1:] for k in KEEP]:
            out.append((int(m.group(2), 16), int(m.group(3), 16), sec, m.group(4)))
    return sorted(out)


def pattern(path):
    """A linker script file pattern for a map's file name: archive:member, or the object."""
    m = re.match(r"(?:.*/)?([^/(]+\.a)\((.+)\)$", path)
    return "*%s:%s" % (m.group(1), m.group(2)) if m else "*" + "/".join(path.split("/")[-2:])


def entries_of(sections, addrs):
    """The linker script lines of the input sections (of KEEP) that hold the sorted addrs, in the map's order."""
    out, i = [], 0
    for a in addrs:
        while i < len(sections) and sections[i][0] + sections[i][1] <= a:
            i += 1
        if i < len(sections) and sections[i][0] <= a:
            addr, size, sec, path = sections[i]
            entry = "    %s(%s)" % (pattern(path), sec)
            if entry not in out:
                out.append(entry)
    return out


def write_script(groups):
    """The linker script: one output section before .text, the input sections of the first group (the
    live view's: the run whose memory counts most) first, its code then its constants, then those only
    the next group adds, and so on. Code and constants of a run side by side: the pages between them
    (another run's code) are not mapped around the ones it touches."""
    seen, lines, counts = set(), [], {k: 0 for k in KEEP}
    for g, group in enumerate(groups):
        for kind in KEEP:
            for entry in group + own_constants(group):
                sec = entry.rsplit("(", 1)[1].rstrip(")")
                if "." + sec.split(".")[1] == kind and entry not in seen:
                    seen.add(entry)
                    lines.append(entry)
                    counts[kind] += 1
        if g == 0:
            # the linker merges equal constants of all objects into one piece, which the map puts under
            # whichever object came first: an address there names no object. All of them (5 KB) come
            # along with the live view's.
            lines.append("    *(.rodata.cst*)")
    text = ["/* Generated by bench/hot_text.py: the input sections ordinary runs touch, first (see there). */",
            "SECTIONS", "{", "  .text.hot :", "  {"] + lines + ["  }", "}", "INSERT BEFORE .text;"]
    open(OUT, "w").write("\n".join(text) + "\n")
    return counts


def own_constants(group):
    """The constants of each function in the group (`.rodata.F`, its strings `.rodata.F.str1.1`...),
    whether or not a run was seen reading them. The linker merges equal strings of every input
    section of an output section, so the map names one owner for a string many functions use: a
    format string read by printf was put under another function, or left out, and the native pass
    did not converge (6 rounds, 160 KB of cold constants mapped around three strings). And all the
    strings of the object: a literal two functions use sits in the section of whichever one the
    compiler wrote first ("%s" of a live view's snprintf under a cold function's name)."""
    out = []
    for entry in group:
        m = re.match(r"^(\s*\S+)\(\.text(?:\.(.+))?\)$", entry)
        if m and m.group(2):
            out.append("%s(.rodata.%s .rodata.%s.*)" % (m.group(1), m.group(2), m.group(2)))
        if m and "%s(.rodata.str* .rodata.*.str*)" % m.group(1) not in out:
            out.append("%s(.rodata.str* .rodata.*.str*)" % m.group(1))
    return out


def native_faults(cmd, faults, stdin=os.devnull, live=False):
    """One run of cmd natively under `perf record -e page-faults -d`: the addresses of the image whose
    first touch faulted (one a 64 KB window: the kernel maps the rest around it), into `faults`. The
    live view runs in a tmux pane to the end of the file, then the keys live_run sends."""
    data = faults + ".data"
    perf = ["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", data, "--"] + cmd
    if live:
        drive_view("hot-native", "%s 2>/dev/null" % shlex.join(perf), 60, 0.5, 90, 0.2)
    else:
        with open(stdin) as i:
            subprocess.run(perf, stdin=i, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    out = subprocess.run(["perf", "script", "-i", data, "-F", "addr"], capture_output=True, text=True).stdout
    with open(faults, "w") as f:
        for ln in out.split():
            if 0x400000 <= int(ln, 16) < 0x1000000:
                f.write(ln + "\n")


def native_pass(runs, groups, rounds=10):
    """What lackey cannot see: code that runs only natively (the vDSO's setup, which valgrind hides; a
    CPU's own paths). The tool linked with the script runs natively; a page fault outside the ordered
    section, or among a later run's pieces, names a piece that belongs to the run's. Again until no
    run faults there."""
    ordered = os.path.join(B, "hot", "cmprof-top-ordered")
    for r in range(rounds):
        subprocess.run(["make", "-s", "-C", ROOT, os.path.relpath(ordered, ROOT)], check=True)
        sections = input_sections(ordered + ".map")
        added = 0
        for i, (cmd, kw) in enumerate(runs):
            faults = ordered + ".faults"
            native_faults([ordered] + cmd, faults, **kw)
            for entry in entries_of(sections, sorted(int(ln, 16) for ln in open(faults))):
                # outside the ordered section, or under a later run's pieces (the live view uses
                # memcmp's variant that lackey saw only in --batch): to this run's
                later = [g for g in groups[i + 1:] if entry in g]
                if later or not any(entry in g for g in groups[:i + 1]):
                    for g in later:
                        g.remove(entry)
                    groups[i].append(entry)
                    added += 1
        if not added:
            return r
        write_script(groups)
    return rounds


def check(runs):
    """--check: the list against the code as it is now, nothing written. Each run natively, its page
    faults outside the ordered section named (each maps up to 64 KB of cold image around a piece the
    list lacks: functions added since the list was written, another CPU's string functions).
    Returns how many pieces."""
    ordered = os.path.join(B, "hot", "cmprof-top-ordered")
    subprocess.run(["make", "-s", "-C", ROOT, os.path.relpath(ordered, ROOT)], check=True)
    sections = input_sections(ordered + ".map")
    lo, hi = hot_span(ordered + ".map")
    missing = 0
    for name, (cmd, kw) in zip(("live view", "--batch, ITM", "--batch, text", "--resolve"), runs):
        faults = ordered + ".faults"
        native_faults([ordered] + cmd, faults, **kw)
        for entry in entries_of(sections, sorted(a for a in (int(ln, 16) for ln in open(faults))
                                                 if not lo <= a < hi)):
            print("%s: %s outside the list" % (name, entry.strip()))
            missing += 1
    print("%s: %s" % (os.path.relpath(OUT, ROOT), "%d pieces missing: run bench/hot_text.py" % missing
                      if missing else "no run faults outside it"))
    return missing


def hot_span(map_path):
    """The ordered output section's addresses in a link map."""
    for ln in open(map_path):
        m = re.match(r"^\.text\.hot\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", ln)
        if m:
            return int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)
    raise RuntimeError("no .text.hot in " + map_path)


def main():
    subprocess.run(["make", "-s", "-C", ROOT, os.path.join("build", "hot", "cmprof-top")], check=True)
    tool = os.path.join(B, "hot", "cmprof-top")
    with tempfile.TemporaryDirectory(prefix="cmprof-hot-") as tmp:
        # lackey's findings are kept in build/hot: `--native` takes them again (the code unchanged)
        # and runs the native pass alone
        touched = [os.path.join(B, "hot", "touched%d.txt" % i) for i in range(4)]
        lj = os.path.join(B, "scenarios", "loops_jitter")
        st = os.path.join(B, "scenarios", "stream_tagged")
        cap = os.path.join(tmp, "tiny.itm")
        pcs = pcs_of(os.path.join(lj, "uart.txt"))
        open(cap, "wb").write(itm_stream((pcs * (2000 // len(pcs) + 1))[:2000]))
        tagged = os.path.join(tmp, "tagged.txt")
        open(tagged, "w").write(open(os.path.join(st, "uart.txt")).read()[:20000])
        addrs = os.path.join(tmp, "addrs.txt")
        open(addrs, "w").write("".join("%x\n" % pc for pc in sorted(set(pcs))[:50]))
        runs = [([cap, os.path.join(lj, "fw.elf")], {"live": True}),
                (["--batch", cap, os.path.join(lj, "fw.elf")], {}),
                (["--batch", tagged, os.path.join(st, "fw.elf")], {}),
                (["--resolve", os.path.join(lj, "fw.elf")], {"stdin": addrs})]
        if "--check" in sys.argv[1:]:
            sys.exit(1 if check(runs) else 0)
        if "--native" not in sys.argv[1:]:
            for t in touched:
                open(t, "w").close()
            live_run(tool, cap, os.path.join(lj, "fw.elf"), touched[0])
            lackey([tool, "--batch", cap, os.path.join(lj, "fw.elf")], touched[1])
            lackey([tool, "--batch", tagged, os.path.join(st, "fw.elf")], touched[2])
            lackey([tool, "--resolve", os.path.join(lj, "fw.elf")], touched[3], stdin=addrs)
        sections = input_sections(os.path.join(B, "hot", "cmprof-top.map"))
        groups = [entries_of(sections, sorted(int(ln, 16) for ln in open(t))) for t in touched]
        counts = write_script(groups)
        print("%s: %s input sections touched under lackey (%s pieces of 16 bytes)"
              % (os.path.relpath(OUT, ROOT), ", ".join("%d %s" % (n, k) for k, n in counts.items()),
                 ", ".join(str(len(open(t).read().split())) for t in touched)))
        if subprocess.run(["perf", "--version"], capture_output=True).returncode != 0:
            print("perf not found: no native pass (code that runs only outside valgrind stays out of the list)")
            return
        n = native_pass(runs, groups)
        counts = write_script(groups)
        print("%s: %s input sections after %d native rounds (page faults outside the ordered section)"
              % (os.path.relpath(OUT, ROOT), ", ".join("%d %s" % (v, k) for k, v in counts.items()), n))


if __name__ == "__main__":
    main()
