#!/usr/bin/env python3
"""Regression tests for the adversarial run (issue 12): inputs that crashed, hung or silently lied.
Each check drives the real cmprof-top binary; a hang is caught by a generous timeout and fails the
check. Uses the scenario ELFs (run scenarios/scen.py first). Prints one ok/FAIL line per check."""
import json
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
SCEN = os.path.join(ROOT, "build", "scenarios")
TMP = harness.scratch("hardening-test")  # (-asan under the ASan tool: the two runs can go side by side)
HANG_SECONDS = 60  # far beyond any of these inputs' real cost; only a hang reaches it


def run(*args, stdin=None, timeout=HANG_SECONDS, env=None, as_user=False):
    """as_user: as 'nobody' when we are root, for the permission checks root would bypass."""
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if as_user and os.geteuid() == 0 else []
    try:
        r = subprocess.run(prefix + [TOOL] + list(args), input=stdin, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def parse_json(text):
    """The report as a dict, {} when it is not JSON (a check then fails instead of the script)."""
    try:
        return json.loads(text)
    except ValueError:
        return {}


def tmp(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def elf_of(name):
    return os.path.join(SCEN, name, "fw.elf")


def test_big_histogram_buckets():
    """Item 2: 64 KiB buckets used to make a slot per halfword: minutes and gigabytes."""
    # every bucket has samples; the first, which holds the ELF's code, most of them (a capture with
    # most samples outside the ELF's code is of another program: a batch run fails on it)
    count = [0xffff] + [1 + k % 8 for k in range(1, 256)]
    lines = ["prof hist base=0x08000000 shift=16 n=256 out=0"]
    for k in range(0, 256, 8):
        lines.append("h " + " ".join("%04x" % count[k + i] for i in range(8)))
    lines.append("end")
    cap = tmp("bighist.txt", "\n".join(lines) + "\n")
    code, out, err = run("--batch", "-o", "json", cap, elf_of("hist_16"))
    ok = code == 0
    js = parse_json(out) if ok else {}
    expect = sum(count)
    check("64 KiB histogram buckets: finishes, every sample counted",
          ok and abs(js["total"] - expect) < 1e-6 and len(js["rows"]) < 1000,
          "exit %s, %s" % (code, err.strip()[:200]))


def section(data, name):
    """(offset, size) of a section of a little-endian ELF32, by name."""
    shoff = int.from_bytes(data[32:36], "little")
    shentsize, shnum, shstrndx = (int.from_bytes(data[i:i + 2], "little") for i in (46, 48, 50))
    hdr = [data[shoff + k * shentsize: shoff + (k + 1) * shentsize] for k in range(shnum)]
    field = lambda h, i: int.from_bytes(h[i:i + 4], "little")  # noqa: E731
    strtab = field(hdr[shstrndx], 16)
    for h in hdr:
        n = field(h, 0)
        if data[strtab + n: data.index(b"\0", strtab + n)].decode() == name:
            return field(h, 16), field(h, 20)
    raise KeyError(name)


def test_fuzz_elfs():
    """ELFs the fuzzer found crashing the symbol loader (ours, or libdwarf inside the child): the
    tool answers, with no crash and no sanitizer report, through both DWARF readers."""
    folder = os.path.join(ROOT, "fuzz", "crashes", "elf")
    for name in sorted(os.listdir(folder)):
        for reader, env in (("fast reader", None), ("libdwarf", dict(os.environ, CMPROF_DWARF_LIBDWARF="1"))):
            # addresses all over a small firmware, so that every unit is read
            addrs = "".join("%x\n" % a for a in list(range(0, 0x400, 2)) + list(range(0x08000000, 0x08004000, 2)))
            code, out, err = run("--resolve", os.path.join(folder, name), stdin=addrs.encode(), env=env)
            check("fuzzer's ELF %s, %s: answers, no crash" % (name, reader),
                  code == 0 and out.startswith("0x00000000") and "runtime error" not in err and "Sanitizer" not in err,
                  "exit %s, %r" % (code, err.strip()[-300:]))


def test_bad_elfs():
    elf = elf_of("loops_inline_o2")
    data = open(elf, "rb").read()
    # Item 1: 16 bytes of .debug_rnglists that make libdwarf 20210528 free a block twice and abort
    off, size = section(data, ".debug_rnglists")
    # the fast DWARF reader reads these bytes without crashing and answers as addr2line does;
    # libdwarf, which reads what the fast reader leaves, crashes on them: forced here. Where in the
    # section they crash it depends on the firmware's build: the first place that does, from 0x44
    libdwarf = dict(os.environ, CMPROF_DWARF_LIBDWARF="1")
    for at in [0x44] + list(range(0, max(size - 16, 0), 4)):
        bad = bytearray(data)
        bad[off + at: off + at + 16] = bytes.fromhex("20823cfde6f1c26b30f90ec7dd01e488")
        path = tmp("rnglists.elf", bytes(bad))
        code, out, err = run("--resolve", path, "0x08000200", env=libdwarf)
        if "ELF symbol table only" in err:
            break
    check("corrupted .debug_rnglists: --resolve survives libdwarf's crash, names from the symbol table",
          code == 0 and out.splitlines()[1:2] == ["SysTick_Handler"] and "ELF symbol table only" in err,
          "exit %s, %r" % (code, err.strip()))
    cap = tmp("pcs.txt", "prof raw n=3\np 08000200 08000200 08000202\nend\n")
    code, out, err = run("--batch", cap, path, env=libdwarf)
    check("corrupted .debug_rnglists: --batch survives, warns once",
          code == 0 and "SysTick_Handler" in out and err.count("ELF symbol table only") == 1, "exit %s, %r" % (code, err))
    code, out, err = run("--resolve", path, "0x08000200")
    theirs = subprocess.run(["arm-none-eabi-addr2line", "-f", "-i", "-e", path, "0x08000200"], capture_output=True,
                            text=True).stdout
    check("corrupted .debug_rnglists, fast reader: the frames addr2line gives",
          code == 0 and out.splitlines()[1:] == theirs.splitlines(), "exit %s, %r vs %r" % (code, out, theirs))
    # Item 4: a line table libdwarf refuses is reported, not silently dropped
    off, _ = section(data, ".debug_line")
    bad = bytearray(data)
    bad[off + 4: off + 6] = b"\x09\x00"  # version 9
    # units are read when a lookup needs them: unit 0 (loops.c) is read for main, not for the
    # handler, which must come out whole and without the warning
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    main = int(next(ln.split()[0] for ln in nm.splitlines() if ln.endswith(" main")), 16) & ~1
    _, whole, _ = run("--resolve", elf, "0x08000200")
    code, out, err = run("--resolve", tmp("line.elf", bytes(bad)), "0x08000200")
    check("damaged line table of another unit: the handler resolves as from the intact ELF, no warning",
          code == 0 and out == whole and ".c:" in out and err == "", "exit %s, %r %r" % (code, out, err.strip()))
    code, out, err = run("--resolve", tmp("line.elf", bytes(bad)), "0x08000200", "0x%x" % main)
    check("damaged line table: warning names the unit and libdwarf's error",
          code == 0 and "damaged DWARF" in err and "line table of unit 0" in err, err.strip())
    # Item 4: zstd-compressed debug sections
    z = os.path.join(TMP, "zstd.elf")
    r = subprocess.run(["arm-none-eabi-objcopy", "--compress-debug-sections=zstd", elf, z], capture_output=True)
    code, out, err = run("--resolve", z, "0x08000200")
    check("zstd-compressed DWARF: a warning naming zstd, functions still named",
          r.returncode == 0 and code == 0 and "zstd" in err and out.splitlines()[1:2] == ["SysTick_Handler"],
          "objcopy %d, exit %s, %r" % (r.returncode, code, err.strip()))
    zl = os.path.join(TMP, "zlib.elf")
    subprocess.run(["arm-none-eabi-objcopy", "--compress-debug-sections=zlib", elf, zl], check=True)
    code, out, err = run("--resolve", zl, "0x08000200")
    check("zlib-compressed DWARF: read, no warning", code == 0 and err == "" and ".c:" in out, err)
    # Item 7: truncated ELFs are refused as addr2line refuses them
    for cut in (len(data) // 2, 200, 60):
        code, out, err = run("--resolve", tmp("cut.elf", data[:cut]), "0x08000200")
        check("ELF truncated to %d bytes: refused with one line" % cut,
              code not in (0, None) and code < 128 and len(err.strip().splitlines()) == 1 and
              ("truncated" in err or "not an ELF" in err), "exit %s, %r" % (code, err.strip()))
    # Item 17: a directory and a fifo as the ELF
    code, out, err = run("--resolve", TMP, "0x08000200")
    check("a directory as the ELF: 'is a directory'", code == 1 and "is a directory" in err, err.strip())
    fifo = os.path.join(TMP, "elf.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    code, out, err = run("--resolve", fifo, "0x08000200", timeout=20)
    check("a fifo as the ELF: refused at once, no blocking", code == 1 and "not a regular file" in err,
          "exit %s, %r" % (code, err.strip()))


def test_untrusted_names():
    """Items 11-13: names from the ELF and the stream reach JSON, folded stacks and the terminal."""
    elf = elf_of("m3_loops")
    evil = os.path.join(TMP, "evil.elf")
    name = b"evil\x1b[31m;x\nred\xff\xc2\x9b"
    subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", "--redefine-sym",
                    b"SysTick_Handler=" + name, elf, evil], check=True)
    pc = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    addr = [ln.split()[0] for ln in pc.splitlines() if ln.endswith(" SysTick_Handler")][0]
    cap = tmp("evil.txt", b"task 20000100 t\x1b]0;owned\x07\xff\nprof raw n=2\np %s %s\ng 20000100 20000100\nend\n"
              % (addr.encode(), addr.encode()))
    code, out, err = run("--batch", cap, evil)
    raw = subprocess.run([TOOL, "--batch", cap, evil], capture_output=True).stdout
    check("table: no escape or control bytes from an ELF symbol", code == 0 and b"\x1b" not in raw and
          b"\x9b" not in raw and b"\\x1b" in raw, repr(raw[-120:]))
    raw = subprocess.run([TOOL, "--batch", "--by", "task", cap, evil], capture_output=True).stdout
    check("table: no escape or control bytes from a stream task name", b"\x1b" not in raw and b"\x07" not in raw
          and b"\\x1b" in raw, repr(raw[-120:]))
    for by in ("function", "task"):
        r = subprocess.run([TOOL, "--batch", "-o", "json", "--by", by, cap, evil], capture_output=True)
        try:
            js = json.loads(r.stdout.decode("utf-8"))  # strict: invalid UTF-8 raises
            ok = js["total"] == 2
        except (UnicodeDecodeError, ValueError) as e:
            ok, js = False, str(e)
        check("json --by %s: valid UTF-8 and valid JSON with hostile names" % by, ok, str(js)[:200])
    formula = tmp("formula.txt", b"task 20000100 =HYPERLINK(\"http://x\",\"y\")\nprof raw n=2\np %s %s\n"
                  b"g 20000100 20000100\nend\n" % (addr.encode(), addr.encode()))
    r = subprocess.run([TOOL, "--batch", "-o", "csv", "--by", "task", formula, elf], capture_output=True, text=True)
    row = (r.stdout.splitlines() + ["", ""])[1]
    check("csv: a task name a spreadsheet would run as a formula stays text (a ' before it, quoted)",
          r.returncode == 0 and ",\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"," in row, row)
    import gzip
    for by in ("function", "task"):
        r = subprocess.run([TOOL, "--batch", "-o", "csv", "--by", by, cap, evil], capture_output=True)
        check("csv --by %s: no escape, control or invalid bytes from hostile names (cat shows it)" % by,
              r.returncode == 0 and not any(b < 0x20 and b != 0x0a or b in (0x7f, 0x9b, 0xff) for b in r.stdout)
              and b"\\x1b" in r.stdout and r.stdout.count(b"\n") == 2, repr(r.stdout[-120:]))
        r = subprocess.run([TOOL, "--batch", "-o", "pprof", "--by", by, cap, evil], capture_output=True)
        try:
            pb = gzip.decompress(r.stdout)
        except OSError as e:
            pb = str(e).encode()
        check("pprof --by %s: no escape or invalid bytes from hostile names in its strings (pprof -top prints "
              "them)" % by, r.returncode == 0 and b"\x1b" not in pb and b"\xff" not in pb and b"\\x1b" in pb,
              repr(pb[-160:]))
    r = subprocess.run([TOOL, "--batch", "-o", "folded", cap, evil], capture_output=True)
    lines = r.stdout.splitlines()
    check("folded: one line, one frame, count 2, with ';' and newline in the name",
          len(lines) == 1 and lines[0].count(b";") == 0 and lines[0].endswith(b" 2") and b"\x1b" not in lines[0],
          repr(r.stdout))


def systick_renamed(name, file_name):
    """m3_loops' ELF, its DWARF stripped and SysTick_Handler renamed `name` (bytes), as TMP/file_name;
    and the handler's address (bytes, hex)."""
    elf = elf_of("m3_loops")
    out = os.path.join(TMP, file_name)
    subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", "--redefine-sym", b"SysTick_Handler=" + name, elf, out],
                   check=True)
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    return out, [ln.split()[0] for ln in nm.splitlines() if ln.endswith(" SysTick_Handler")][0].encode()


def test_backslash_escaped():
    """A name holding the four characters \\x1b and one holding the ESC byte print differently in every
    text output (table, csv, pprof's strings, callgrind, folded): each backslash is written \\\\, where
    the text ones wrote it raw, so that a function or task named 'fn\\x1b' read as 'fn<ESC>'."""
    lit, addr = systick_renamed(b"fn\\x1b", "backslash.elf")
    cap = tmp("backslash.txt", b"task 20000100 C:\\t\\x07\nprof raw n=2\np %s %s\ng 20000100 20000100\nend\n"
              % (addr, addr))
    import gzip
    for fmt in ("table", "csv", "pprof", "callgrind", "folded"):
        for by, want in (("function", b"fn\\\\x1b"), ("task", b"C:\\\\t\\\\x07")):
            if fmt == "callgrind" and by == "task":
                continue
            r = subprocess.run([TOOL, "--batch", "-o", fmt, "--by", by, cap, lit], capture_output=True)
            out = r.stdout
            if fmt == "pprof":
                try:
                    out = gzip.decompress(out)
                except OSError as e:
                    out = str(e).encode()
            bare = out.replace(b"\\\\", b"")
            check("-o %s --by %s: a literal backslash is written \\\\ (a name's text \\x1b is not an escape)"
                  % (fmt, by), r.returncode == 0 and want in out and b"\\x" not in bare, repr(out[-160:]))


def test_names_in_messages_escaped():
    """Names reach messages too: --fail-if-slower's 'X is new' line wrote a function's name raw to stderr
    (a CI log), and the table's '! interrupts-disabled skid ... in X' line raw to stdout."""
    nm = subprocess.run(["arm-none-eabi-nm", elf_of("m3_loops")], capture_output=True, text=True).stdout
    poll = [int(ln.split()[0], 16) for ln in nm.splitlines() if ln.endswith(" cmprof_sections_poll")][0]
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", elf_of("m3_loops")], capture_output=True, text=True).stdout
    after = [int(ln.split(":")[0], 16) + 4 for ln in dis.splitlines() if re.search(r"msr\s+PRIMASK", ln)
             and int(ln.split(":")[0], 16) > poll][0]  # the instruction after the re-enable in that function
    evil = os.path.join(TMP, "evil-poll.elf")
    subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", "--redefine-sym",
                    b"cmprof_sections_poll=poll\x1b[31m\nred", elf_of("m3_loops"), evil], check=True)
    cap = tmp("evil-poll.txt", b"prof raw n=40\n" + (b"p" + b" %08x" % after * 8 + b"\n") * 5 + b"end\n")
    r = subprocess.run([TOOL, "--batch", cap, evil], capture_output=True)
    skid = [ln for ln in r.stdout.splitlines() if b"skid" in ln]
    check("table: the skid diagnostic names the function escaped", len(skid) == 1 and b"\x1b" not in r.stdout
          and b"poll\\x1b[31m\\x0ared" in skid[0], repr(r.stdout[:300]))
    base = tmp("evil-poll-base.json", subprocess.run([TOOL, "--batch", "-o", "json", os.path.join(
        SCEN, "m3_loops", "uart.txt"), elf_of("m3_loops")], capture_output=True).stdout)
    r = subprocess.run([TOOL, "--batch", "--diff", base, "--fail-if-slower", "10", cap, evil], capture_output=True)
    check("--fail-if-slower: a new row's name escaped on stderr", r.returncode == 3 and b"\x1b" not in r.stderr
          and b"poll\\x1b[31m\\x0ared is new" in r.stderr, repr(r.stderr[-300:]))


def test_json_outputs_agree():
    """-o json, speedscope and trace write a hostile name by one rule (JSON's escapes, U+FFFD for
    invalid UTF-8): speedscope once wrote the folded stacks' \\xNN text instead, so a viewer showed
    't\\x1b]0\\x3bowned' where the other two showed the name. A literal backslash stays one."""
    evil, addr = systick_renamed(b"fn\x1b[31m;x\\x41\xff\xc2\x9b", "evil-json.elf")
    cap = tmp("evil-json.txt", b"task 20000100 t\x1b]0;owned\x07\xff\xc2\x9b\"q\\x41\\\nprof raw n=2\np %s %s\n"
              b"g 20000100 20000100\nend\n" % (addr, addr))

    def doc(fmt, by):
        r = subprocess.run([TOOL, "--batch", "-o", fmt, "--by", by, cap, evil], capture_output=True)
        try:
            return json.loads(r.stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return {}
    for by in ("task", "function"):
        rows = [r["name"] for r in doc("json", by).get("rows", [])]
        frames = [f["name"] for f in doc("speedscope", by).get("shared", {}).get("frames", [])]
        check("json outputs --by %s: speedscope's frame is the name -o json gives (not \\xNN text)" % by,
              len(rows) == 1 and rows[0] in frames, "json %r; speedscope %r" % (rows, frames))
        if by == "task":
            lanes = [e["args"]["name"] for e in doc("trace", by).get("traceEvents", []) if e["name"] == "thread_name"]
            check("json outputs: trace's lane is the task name -o json gives (a C1 control as \\u009b too)",
                  len(rows) == 1 and lanes == rows, "json %r; trace %r" % (rows, lanes))


def test_streams_and_sources():
    elf = elf_of("m3_loops")
    uart = os.path.join(SCEN, "m3_loops", "uart.txt")
    # Item 5: --samples N is exact, and nonsense values are refused
    for n in (1, 100, 1234):
        code, out, err = run("--batch", "-o", "json", "--samples", str(n), uart, elf)
        js = parse_json(out) if code == 0 else {}
        check("--samples %d counts exactly %d" % (n, n), js.get("total") == n and js.get("past_limit", 0) > 0,
              "exit %s total %s" % (code, js.get("total")))
    for bad in ("-5", "0", "1e3", "99999999999999999999999", " 7"):
        code, out, err = run("--batch", "--samples", bad, uart, elf)
        check("--samples %r refused, not clamped" % bad, code == 2 and "--samples" in err, err.strip())
    # Item 8: permanent source errors end batch mode with one line
    for src, want in (("tcp:localhost:notaport", "port"), ("tcp:127.0.0.1:99999", "port"),
                      ("tcp:nosuchhost.invalid:7", "cannot open source")):
        code, out, err = run("--batch", src, elf, timeout=30)
        check("batch on %s: ends with one line" % src, code not in (0, None) and want in err and
              len(err.strip().splitlines()) == 1, "exit %s, %r" % (code, err.strip()))
    code, out, err = run("--batch", "/dev/null", elf, timeout=30)
    check("batch on /dev/null: read to its end, 'no samples'", code == 2 and "no samples" in err, repr(err))
    master, slave = os.openpty()
    pty = os.ttyname(slave)
    os.chmod(pty, 0o200)  # write-only for its owner, nothing for others: opening it to read fails
    code, out, err = run("--batch", pty, elf, timeout=30, as_user=True)
    check("batch on a pty without read permission: refused at once", code == 1 and "Permission denied" in err,
          "exit %s, %r" % (code, err.strip()))
    os.close(master)
    os.close(slave)
    # tcp:[::1]:PORT parses (IPv6): a server that sends a dump and closes
    import socket
    import threading
    srv = socket.socket(socket.AF_INET6)
    srv.bind(("::1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    def serve():
        c, _ = srv.accept()
        c.sendall(b"prof raw n=2\np 08000200 08000200\nend\n")
        c.close()
    th = threading.Thread(target=serve, daemon=True)
    th.start()
    code, out, err = run("--batch", "--samples", "2", "-o", "json", "tcp:[::1]:%d" % port, elf, timeout=30)
    check("tcp:[::1]:PORT: IPv6 source read", code == 0 and parse_json(out).get("total") == 2, "exit %s %r" % (code, err))
    srv.close()
    # Item 9: a boot banner longer than the detection window is still text
    banner = "boot: " + "x" * 5000 + "\n"
    body = open(uart).read()
    code, out, err = run("--batch", "-o", "json", tmp("banner.txt", banner + body), elf)
    js = parse_json(out) if code == 0 else {}
    check("a 5 KB first line: still detected as text", js.get("format") == "text" and js.get("total", 0) > 0,
          "exit %s format %s" % (code, js.get("format")))
    # Item 10: a dump that announces more samples than it carries says so; NUL bytes do not eat samples
    code, out, err = run("--batch", tmp("miss.txt", "prof raw n=5000\np 08000200 08000202\nend\n"), elf)
    check("dump with 4998 of 5000 samples missing: the table says so", code == 0 and "4998 samples missing" in out,
          out)
    code, out, err = run("--batch", "-o", "json", tmp("miss.txt", "prof raw n=5000\np 08000200 08000202\nend\n"), elf)
    check("... and the JSON", code == 0 and parse_json(out).get("missing") == 4998, out[-300:])
    check("a raw dump's missing samples are not blamed on histogram buckets", "histogram" not in out and
          any("4998 samples missing" in x and "cut short" in x for x in parse_json(out).get("losses", [])), out[-400:])
    code, out, err = run("--batch", "-o", "json", tmp("misshist.txt", "prof hist base=0x08000000 shift=16 n=70000 "
                                                      "out=0\nh ffff\nend\n"), elf)
    check("a histogram short of its n=: saturated buckets named",
          any("4465 samples missing" in x and "saturated" in x for x in parse_json(out).get("losses", [])), out[-400:])
    # a sample whose own PC read 0xFFFFFFFF: named by its address, as the table does; callgrind called it
    # "[unproven caller]" (the unwinder's mark for a caller it could not prove), which it is not
    code, out, err = run("--batch", "-o", "callgrind", tmp("allones.txt", "prof raw n=3\np ffffffff ffffffff "
                                                            "ffffffff\nend\n"), elf)
    check("callgrind: a sample at PC 0xffffffff is 0xffffffff, not an unproven caller", code == 0 and
          "fn=(1) 0xffffffff\n" in out and "unproven" not in out, out[-200:])
    code, out, err = run("--batch", tmp("taken.txt", "prof raw n=2 taken=4096\np 08000200 08000202\nend\n"), elf)
    check("issue 7: a ring that kept 2 of 4096 samples: 4094 reported lost", code == 0 and
          "4094 samples taken but not kept" in out, out)
    code, out, err = run("--batch", "-o", "json", tmp("nul.txt", b"prof raw n=3\n\0p 08000200 08000202 0800\x000200\nend\n"), elf)
    js = parse_json(out) if code == 0 else {}
    check("p lines with NUL bytes keep their samples, the NULs are counted", js.get("total") == 3 and
          any("NUL" in x for x in js.get("losses", [])), out[-300:])
    # Item 14: TPIU frames of another source ID: the IDs seen are named; -f itm on TPIU warns
    sys.path.insert(0, HERE)
    from test_cli import tpiu_frames, itm_stream, pcs_of
    itm = itm_stream(pcs_of(uart)[:500])
    cap = tmp("tpiu3.bin", tpiu_frames(itm, source_id=3))
    code, out, err = run("--batch", cap, elf)
    check("TPIU with source ID 3 only: the error names ID 3", code == 2 and "ID" in err and "source IDs 3" in err,
          err.strip())
    cap = tmp("tpiu1.bin", tpiu_frames(itm, source_id=1))
    code, out, err = run("--batch", "-f", "itm", cap, elf)
    check("-f itm on TPIU data: the table reports the bad packets", "bad ITM packets" in out, out[-300:])


def test_cpp_names():
    """Item 3: linkage names as addr2line -f prints them; overloads and template instances never
    merge; -C demangles as addr2line -f -C does."""
    elf = os.path.join(TMP, "cpp.elf")
    subprocess.run(["arm-none-eabi-g++", "-mcpu=cortex-m4", "-mthumb", "-O2", "-g", "-nostdlib", "-fno-exceptions",
                    "-fno-rtti", "-ffunction-sections", "-Wl,--gc-sections", "-Wl,-Ttext=0x08000000",
                    "-Wl,-e,Reset_Handler", os.path.join(HERE, "zoo", "cpp_app.cpp"), "-lgcc", "-o", elf], check=True)
    syms = {}
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        parts = ln.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    want = ["_ZN5motor5scaleEl", "_ZN5motor5scaleEx", "_ZN5motor5scaleEf", "_ZN5motor6FilterIlLi4EE3runEl",
            "_ZN5motor6FilterIsLi8EE3runEs"]
    pcs = []
    for k, name in enumerate(want):
        pcs += ["%08x" % (syms[name] + 2)] * (k + 1)
    cap = tmp("cpp.txt", "prof raw n=%d\np %s\nend\n" % (len(pcs), " ".join(pcs)))
    code, out, err = run("--batch", "-o", "json", cap, elf)
    rows = {r["name"]: r["samples"] for r in parse_json(out).get("rows")} if code == 0 else {}
    check("C++ overloads and template instances: one row each, keyed by linkage name",
          all(rows.get(n) == k + 1 for k, n in enumerate(want)), str(rows))
    code, out, err = run("--batch", "-C", "-o", "json", cap, elf)
    rows = {r["name"]: r["samples"] for r in parse_json(out).get("rows")} if code == 0 else {}
    check("-C: demangled as addr2line -C prints them",
          rows.get("motor::scale(long)") == 1 and rows.get("motor::scale(long long)") == 2 and
          rows.get("motor::scale(float)") == 3 and rows.get("motor::Filter<long, 4>::run(long)") == 4, str(rows))


def test_linked_at_zero():
    """Item 16: a firmware linked at 0 with --gc-sections; the discarded function's DWARF (low_pc 0,
    its real length) lies over __aeabi_uldivmod and __udivmoddi4 from libgcc."""
    elf = os.path.join(TMP, "at0.elf")
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-O2", "-g", "-nostdlib", "-ffunction-sections",
                    "-fdata-sections", "-Wl,--gc-sections", "-Wl,-Ttext=0", "-Wl,-e,Reset_Handler", "-Wl,-u,vectors",
                    "-Wall", "-Wextra", "-Werror", os.path.join(HERE, "zoo", "linked_at_zero.c"), "-lgcc", "-o", elf],
                   check=True)
    syms = {}
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        parts = ln.split()
        syms[parts[-1]] = int(parts[0], 16)
    info = subprocess.run(["arm-none-eabi-readelf", "--debug-dump=info", elf], capture_output=True, text=True).stdout
    div, udiv = syms["__aeabi_uldivmod"], syms["__udivmoddi4"]
    setup = "discarded_trace_push" in info and "discarded_trace_push" not in syms and div < 0x100
    pcs = ["%08x" % a for a in (div + 4, div + 4, udiv + 0x10)]
    cap = tmp("at0.txt", "prof raw n=3\np %s\nend\n" % " ".join(pcs))
    for extra in ([], ["--no-inline"]):
        code, out, err = run("--batch", "-o", "json", *extra, cap, elf)
        rows = {r["name"]: r["samples"] for r in parse_json(out).get("rows")} if code == 0 else {}
        check("linked at 0, --gc-sections%s: libgcc's functions keep their names, no discarded function" %
              (" " + extra[0] if extra else ""),
              setup and rows == {"__aeabi_uldivmod": 2, "__udivmoddi4": 1}, str(rows))
    code, out, err = run("--resolve", elf, "%x" % (div + 4))
    check("linked at 0: --resolve names the symbol table's function and its own line table",
          out.splitlines()[1:2] == ["__aeabi_uldivmod"] and "bpabi.S" in out, out)


def test_unordered_line_rows():
    """A sequence of the line table that lists its rows out of address order: answers as
    addr2line's, through both readers (the fast reader notes the order as it reads the rows; a
    merge that trusted a wrong note would search unsorted rows)."""
    elf = os.path.join(TMP, "unordered_lines.elf")
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-Ttext=0x08000000",
                    os.path.join(HERE, "zoo", "unordered_lines.s"), "-o", elf], check=True)
    addrs = ["%08x" % (0x08000000 + k) for k in range(0, 16, 2)]
    theirs = subprocess.run(["arm-none-eabi-addr2line", "-a", "-f", "-i", "-e", elf] + addrs, capture_output=True,
                            text=True).stdout
    # (the rows at +8 and +12 name lines 20 and 30; binutils starts the sequence at its first row)
    named = ["unordered.c:20", "unordered.c:20", "unordered.c:30", "unordered.c:30"]
    setup = theirs.splitlines()[2::3][4:] == named
    for reader, env in (("fast reader", None), ("libdwarf", dict(os.environ, CMPROF_DWARF_LIBDWARF="1"))):
        code, out, err = run("--resolve", elf, *addrs, env=env)
        check("line rows out of address order, %s: the lines addr2line gives" % reader,
              setup and code == 0 and out == theirs,
              "exit %s, lines %s (addr2line: %s) %s" % (code, out.splitlines()[2::3], theirs.splitlines()[2::3],
                                                         err.strip()[:200]))


def test_shared_uart():
    """Issue 7: a stream line sent while the application was half-way through a log line is cut off
    the log line and decoded, and counted; before, its samples were silently counted as log."""
    src = os.path.join(SCEN, "stream", "uart.txt")
    elf = os.path.join(SCEN, "stream", "fw.elf")
    lines = open(src).read().split("\n")
    glued = 0
    for i, ln in enumerate(lines):
        if ln.startswith(("$", "@task", "@sect")) and i % 5 == 0:
            lines[i] = "log: temp=%d%s" % (i, ln)
            glued += 1
    code, out, err = run("--batch", "-o", "json", src, elf)
    want = parse_json(out).get("total")
    code, out, err = run("--batch", "-o", "json", tmp("glued.txt", "\n".join(lines)), elf)
    js = parse_json(out)
    check("shared UART: %d stream lines glued onto log lines keep their samples, and are counted" % glued,
          glued > 50 and want and js.get("total") == want and
          any(x.startswith("%d stream lines were glued" % glued) for x in js.get("losses", [])),
          "total %s of %s, losses %s" % (js.get("total"), want, js.get("losses")))


def test_isr_rows():
    """Issue 7: samples tagged CMPROF_ISR_TAG(n) are interrupt rows in the task view, named by the
    ELF's vector table; a default handler behind many vectors is named by its vector."""
    elf = elf_of("m3_loops")
    cap = tmp("isr.txt", "task 20000100 motor\nprof raw n=4\np 08000200 08000200 08000202 08000200\n"
                         "g 20000100 fffffe0f fffffe0f fffffe16\nend\n")
    code, out, err = run("--batch", "-o", "json", "--by", "task", cap, elf)
    rows = {r["name"]: r["samples"] for r in parse_json(out).get("rows", [])}
    check("task view: interrupt rows named from the vector table, never the interrupted task",
          rows == {"motor": 1, "ISR: SysTick_Handler": 2, "ISR: IRQ 6": 1}, str(rows))


def test_stripped_elf():
    """A stripped ELF (no symbols, no DWARF) has no function for a sample to fall in: the report said
    "wrong ELF? 100.0 % of samples fall outside every function" for the right firmware's ELF (and
    exited 0 all the same). It names the cause instead: no function symbols, nothing checkable."""
    stripped = os.path.join(TMP, "stripped.elf")
    subprocess.run(["arm-none-eabi-strip", "-o", stripped, elf_of("tasks")], check=True)
    code, out, err = run("--batch", os.path.join(SCEN, "tasks", "uart.txt"), stripped)
    check("a stripped ELF: no 'wrong ELF?' claim; the report says it has no function symbols",
          code == 0 and "wrong ELF" not in out + err and "no function symbols (stripped?)" in out
          and "no symbols and no DWARF" in err, "exit %s, %r %r" % (code, out[:300], err.strip()))
    # -o lcov has nothing to write without DWARF's lines: it wrote "TN:cmprof" alone and exited 0, which
    # genhtml and a CI's coverage step read as a profile of no file. Now: nothing, one line, exit 1.
    nodwarf = os.path.join(TMP, "nodwarf.elf")
    subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", elf_of("tasks"), nodwarf], check=True)
    for elf in (stripped, nodwarf):
        code, out, err = run("--batch", "-o", "lcov", os.path.join(SCEN, "tasks", "uart.txt"), elf)
        said = [ln for ln in err.splitlines() if "warning" not in ln]
        check("-o lcov on an ELF without DWARF (%s): no tracefile, one line naming the ELF, exit 1"
              % os.path.basename(elf), code == 1 and out == "" and len(said) == 1 and elf in said[0]
              and "no DWARF line information" in said[0], "exit %s, %r %r" % (code, out[:100], err.strip()))


def test_capture_of_another_program():
    """The tasks firmware's capture read against m3_loops' ELF: 88 % of it landed in memcpy, exit 0, and
    not a word, as its addresses off instruction starts (11 of 43) held only 4.2 % of the samples, under
    the 5 % that makes it a wrong ELF. It now says so on stderr (the exit status as before)."""
    code, out, err = run("--batch", os.path.join(SCEN, "tasks", "uart.txt"), elf_of("m3_loops"))
    check("a capture of another program under 5 % of samples off instruction starts: a warning names it",
          code == 0 and "warning: another build? 11 of 43 sampled addresses are not where any of the ELF's "
          "instructions starts" in err, "exit %s, %r" % (code, err.strip()))
    code, out, err = run("--batch", os.path.join(SCEN, "tasks", "uart.txt"), elf_of("tasks"))
    check("... and not for the right ELF", code == 0 and "another build" not in err, err.strip())


def tcp_twice(parts, scenario):
    """A batch run of 4 s on a TCP server that sends each part on a connection of its own, a second
    apart, against the scenario's ELF: the run and its JSON ({} when none)."""
    port = harness.tcp_server(parts, 1.0, hold=0.5)
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--duration", "4", "tcp:127.0.0.1:%d" % port,
                        os.path.join(SCEN, scenario, "fw.elf")], capture_output=True, text=True, timeout=30)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, {}


def test_tcp_reset_mid_line():
    """A TCP server that drops the connection inside a line and is back a second later: the half line
    glued to the next connection's first read as '1 malformed lines dropped (1 failed their check)', a
    decoding error where the source went away (its gap is said as such)."""
    data = open(os.path.join(SCEN, "stream", "uart.txt"), "rb").read()
    cut = data.index(b"\n$", len(data) // 2) + 9  # inside a stream sample line
    r, j = tcp_twice([data[:cut], data], "stream")
    losses = j.get("losses", [])
    check("tcp: a connection dropped inside a line and taken again: no malformed line said, the gap said",
          j.get("decoder", {}).get("text_bad_lines") == 0 and not any("malformed" in x for x in losses)
          and "went away and came back 1 time" in r.stderr, "exit %s, %r %r" % (
              r.returncode, losses, r.stderr.strip()[-300:]))


def test_tcp_reset_mid_itm_packet():
    """The same with raw ITM (an SWO server): the packet cut by the drop read as '1 bad ITM packets ...
    (TPIU frames read as ITM? try -f tpiu)', advice for a stream that was fine; the bytes up to the next
    sync are the gap's."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_cli import itm_stream, pcs_of
    data = itm_stream(pcs_of(os.path.join(SCEN, "tasks", "uart.txt")))
    cut = data.index(b"\x17", len(data) // 2) + 3  # inside a PC sample packet
    r, j = tcp_twice([data[:cut], data[cut + 2000:]], "tasks")
    losses = j.get("losses", [])
    check("tcp: an ITM stream dropped inside a packet and taken again: no bad packet, no -f tpiu advice",
          j.get("total", 0) > 4000 and j.get("decoder", {}).get("itm_errors") == 0 and not any(
              "bad ITM" in x or "tpiu" in x for x in losses) and "came back 1 time" in r.stderr,
          "exit %s, %r %r" % (r.returncode, losses, r.stderr.strip()[-300:]))


def test_tcp_reset_mid_frame():
    """An SWO server's TPIU frames (one source, its ID long gone) or orbuculum's orbflow frames, the
    connection dropped inside a frame and taken again 2,007 bytes later: the second connection's
    samples were lost (TPIU: 2,500 of 5,000 kept, the frames read out of step until a block's check
    re-aligned them as nobody's) or counted a bad frame; now the frames are found again from what
    comes, and only the gap's samples are missing."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_cli import itm_stream, orbflow_frames, pcs_of, tpiu_frames
    itm = itm_stream(pcs_of(os.path.join(SCEN, "tasks", "uart.txt")))
    for name, data in (("TPIU", tpiu_frames(itm, id_once=True)), ("orbflow", orbflow_frames(itm))):
        cut = len(data) // 2 + 5
        path = os.path.join(TMP, "whole-%s.bin" % name)
        open(path, "wb").write(data)
        code, out, _ = run("--batch", "-o", "json", path, elf_of("tasks"))
        whole = json.loads(out).get("total", 0) if out else 0
        r, j = tcp_twice([data[:cut], data[cut + 2007:]], "tasks")
        dec, losses = j.get("decoder", {}), j.get("losses", [])
        # the gap's samples (2,007 bytes of about 5.3 a sample, 6 a sample in orbflow), and up to 1,000
        # more while the ITM waits for its next sync (itm_stream puts one every 1,000 samples)
        check("tcp: %s frames dropped inside a frame and taken again: the rest read, no slip, no bad frame, "
              "the gap said" % name, j.get("total", 0) >= whole - 400 - 1000 and dec.get("itm_errors") == 0 and
              dec.get("tpiu_realigns") == 0 and dec.get("orbflow_bad") == 0 and
              "came back 1 time" in r.stderr, "%s of %s samples, %r, %r %r" % (
                  j.get("total"), whole, dec, losses, r.stderr.strip()[-300:]))


def test_pty_hangup():
    """A pty whose other end closes mid-stream (a board's USB serial unplugged, a socat gone): batch
    ends at once with exit 4 and one line naming the hang-up (it said "end of input", as for a file)."""
    import pty
    import time
    import tty
    master, slave = pty.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    cap = open(os.path.join(SCEN, "stream", "uart.txt"), "rb").read()
    p = subprocess.Popen([TOOL, "--batch", path, elf_of("stream")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(100):  # the tool has the pty open: what comes before would be lost
        time.sleep(0.05)
        if any(os.path.realpath(os.path.join("/proc/%d/fd" % p.pid, f)) == path
               for f in os.listdir("/proc/%d/fd" % p.pid)):
            break
    os.write(master, cap[:cap.index(b"\n", 4000) + 1])
    time.sleep(0.5)
    os.close(slave)
    os.close(master)
    try:
        out, err = p.communicate(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    err = err.decode(errors="replace")
    check("a pty closed mid-stream: exit 4 at once, one line naming the hang-up, the samples reported",
          p.returncode == 4 and "hung up" in err and len(err.strip().splitlines()) == 1 and b"hot_a" in out,
          "exit %s, %r" % (p.returncode, err.strip()))


def test_link_to_someones_terminal():
    """A link to a pty (socat's link=) left behind when its pty went: the pty's number goes to the next
    terminal opened, a shell's. cmprof-top set that terminal raw and read its keystrokes; now it leaves
    a terminal that is some process's controlling terminal as it is, and says so."""
    import pty
    import signal
    import termios
    import time
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    pid = os.fork()
    if pid == 0:  # a shell's session, its controlling terminal the pty
        os.setsid()
        os.open(path, os.O_RDWR)
        time.sleep(30)
        os._exit(0)
    link = os.path.join(TMP, "stale-link")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(path, link)
    try:
        for _ in range(100):  # the child's session has taken it
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[4] != "0":
                    break
            time.sleep(0.02)
        before = termios.tcgetattr(slave)
        code, out, err = run("--batch", "--duration", "2", link, elf_of("tasks"))
        same = termios.tcgetattr(slave) == before
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(slave)
        os.close(master)
    check("a link to a shell's terminal: its settings left as they were, nothing read, one line saying why",
          same and code != 0 and "controlling terminal of process %d" % pid in err and
          len(err.strip().splitlines()) == 1, "exit %s, settings kept %s, %r" % (code, same, err.strip()))


def test_serial_port_opened_once_a_connect():
    """A serial port libserialport knows is opened by its connect alone: the look for someone's terminal
    (test_link_to_someones_terminal) reads its device number by stat, not by an open and close of its own
    (a USB serial adapter's open and close raise and drop DTR, which resets boards wired for it). Counted
    with inotify on the first port --list-ports gives, when one can be opened here (a container's
    /dev/ttyS0 as root): the type's look at the start, then the connect's one open."""
    import ctypes
    import select
    import struct
    ports = [line.split()[0] for line in run("--list-ports")[1].splitlines() if line.startswith("/dev/")]
    port = next((p for p in ports if os.access(p, os.R_OK)), None)
    if port is None:
        print("NOT RUN a serial port opened once a connect: no serial port libserialport knows can be opened here "
              "(a pty goes the other way and cannot show it)")
        return
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    libc.inotify_add_watch(fd, port.encode(), 0x20 | 0x18)  # IN_OPEN, IN_CLOSE (two like events in a row are one)
    try:
        code, out, err = run("--batch", "--duration", "1", port, elf_of("tasks"))
        data = os.read(fd, 65536) if select.select([fd], [], [], 0)[0] else b""
    finally:
        os.close(fd)
    opens, i = 0, 0
    while i + 16 <= len(data):
        _, mask, _, size = struct.unpack_from("iIII", data, i)
        opens += bool(mask & 0x20)
        i += 16 + size
    check("%s: opened twice in a run of one connect (the type's look, the connect's open), no third" % port,
          opens == 2 and "connected" in err, "%d opens, exit %s, %r" % (opens, code, err.strip()[:160]))


def test_dev_null_source():
    """/dev/null as the capture: no samples, exit 2, one line, and no advice for a live firmware (it
    asked 'is it running, on this port and baud?' and blamed the drain's priority)."""
    code, out, err = run("--batch", "/dev/null", elf_of("tasks"))
    check("/dev/null as the source: exit 2, one line naming it, no port or drain advice",
          code == 2 and "no samples from '/dev/null'" in err and len(err.strip().splitlines()) == 1
          and "baud" not in err and "drain" not in err, "exit %s, %r" % (code, err.strip()))


def main():
    os.makedirs(TMP, exist_ok=True)
    if not os.path.exists(elf_of("hist_16")):
        check("scenario ELFs present", False, "run scenarios/scen.py run first")
        return 1
    test_big_histogram_buckets()
    test_bad_elfs()
    test_fuzz_elfs()
    test_untrusted_names()
    test_backslash_escaped()
    test_names_in_messages_escaped()
    test_json_outputs_agree()
    test_streams_and_sources()
    test_cpp_names()
    test_linked_at_zero()
    test_unordered_line_rows()
    test_shared_uart()
    test_isr_rows()
    test_stripped_elf()
    test_capture_of_another_program()
    test_tcp_reset_mid_line()
    test_tcp_reset_mid_itm_packet()
    test_tcp_reset_mid_frame()
    test_pty_hangup()
    test_link_to_someones_terminal()
    test_serial_port_opened_once_a_connect()
    test_dev_null_source()
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
