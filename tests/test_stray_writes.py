#!/usr/bin/env python3
"""Nothing the user did not name as an output is written, and a paced replay ends: standard
output that is the capture, the ELF, the baseline or the file on standard input is refused before
a byte is written (as --record is); --record onto a symbolic link replaces the link (its target,
named by nobody, is never created or written); --record onto a FIFO that nothing reads is refused
at once instead of blocking; --rate takes 1 to 1e9, and a long paced batch replay says how long it
takes. Reads a scenario capture (no QEMU). Prints one ok/FAIL line per check."""
import os
import shutil
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.path.abspath(os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top")))
SCEN = os.path.join(ROOT, "build", "scenarios", "m3_loops")
WORK = harness.scratch("stray-writes-test")
HANG = 30  # seconds: only a hang reaches it


def run(args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL):
    """The exit status (or 'hung') and stderr."""
    try:
        r = subprocess.run([TOOL] + args, stdout=stdout, stderr=subprocess.PIPE, stdin=stdin, cwd=WORK,
                           timeout=HANG)
    except subprocess.TimeoutExpired:
        return "hung for %d s" % HANG, ""
    return r.returncode, r.stderr.decode(errors="replace").strip()


def one_line(err):
    return len(err.splitlines()) == 1


def fresh(cap_data, elf_data):
    open(os.path.join(WORK, "cap.txt"), "wb").write(cap_data)
    open(os.path.join(WORK, "fw.elf"), "wb").write(elf_data)


def stdout_tests(cap_data, elf_data):
    fresh(cap_data, elf_data)
    base = os.path.join(WORK, "base.json")
    with open(base, "wb") as f:
        code, err = run(["--batch", "-o", "json", "cap.txt", "fw.elf"], stdout=f)
    check("a JSON baseline written the ordinary way", code == 0, err)
    base_data = open(base, "rb").read()
    cases = (("the capture, opened read-write (1<>cap.txt)", "cap.txt", "r+b", []),
             ("the capture, appended to (>>cap.txt)", "cap.txt", "ab", []),
             ("the ELF, appended to (>>fw.elf)", "fw.elf", "ab", []),
             ("the --diff baseline, appended to", "base.json", "ab", ["--diff", "base.json"]),
             ("the ELF, with -o pprof", "fw.elf", "ab", ["-o", "pprof"]))
    for what, name, mode, extra in cases:
        fresh(cap_data, elf_data)
        open(base, "wb").write(base_data)
        with open(os.path.join(WORK, name), mode) as out:
            code, err = run(["--batch"] + extra + ["cap.txt", "fw.elf"], stdout=out)
        intact = (open(os.path.join(WORK, "cap.txt"), "rb").read() == cap_data and
                  open(os.path.join(WORK, "fw.elf"), "rb").read() == elf_data and open(base, "rb").read() == base_data)
        check("standard output is %s: refused in one line naming it, nothing written (exit 2)" % what,
              code == 2 and intact and one_line(err) and "standard output is " + name in err,
              "exit %s, files intact %s, %r" % (code, intact, err))
    fresh(cap_data, elf_data)
    path = os.path.join(WORK, "cap.txt")
    with open(path, "rb") as inp, open(path, "ab") as out:
        code, err = run(["--batch", "-", "fw.elf"], stdout=out, stdin=inp)
    check("standard output is the file on standard input: refused (exit 2), the capture intact",
          code == 2 and open(path, "rb").read() == cap_data and "standard input" in err, "exit %s, %r" % (code, err))
    with open(os.path.join(WORK, "report.txt"), "wb") as out:
        code, err = run(["--batch", "cap.txt", "fw.elf"], stdout=out)
    check("standard output to another file: the report written (exit 0)",
          code == 0 and b"hot_a" in open(os.path.join(WORK, "report.txt"), "rb").read(), err)


def link_tests(cap_data, elf_data):
    fresh(cap_data, elf_data)
    link, target = os.path.join(WORK, "dangling.rec"), os.path.join(WORK, "nobody-named-me.rec")
    os.symlink("nobody-named-me.rec", link)
    code, err = run(["--batch", "--record", "dangling.rec", "cap.txt", "fw.elf"])
    check("--record onto a dangling symlink without --force: refused, saying to give --force, nothing created",
          code == 1 and "--force" in err and not os.path.exists(target) and os.path.islink(link),
          "exit %s, %r" % (code, err))
    code, err = run(["--batch", "--force", "--record", "dangling.rec", "cap.txt", "fw.elf"])
    check("--record onto a dangling symlink with --force: the link replaced by the recording, its target never created",
          code == 0 and not os.path.exists(target) and not os.path.islink(link) and
          open(link, "rb").read() == cap_data, "exit %s, %r" % (code, err))
    open(target, "wb").write(b"keep me")
    os.remove(link)
    os.symlink("nobody-named-me.rec", link)
    code, err = run(["--batch", "--force", "--record", "dangling.rec", "cap.txt", "fw.elf"])
    check("--record onto a symlink to another file with --force: the link replaced, the file it pointed to kept",
          code == 0 and open(target, "rb").read() == b"keep me" and not os.path.islink(link) and
          open(link, "rb").read() == cap_data, "exit %s, %r" % (code, err))


def fifo_tests(cap_data, elf_data):
    fresh(cap_data, elf_data)
    fifo = os.path.join(WORK, "rec.fifo")
    os.mkfifo(fifo)
    code, err = run(["--batch", "--force", "--record", "rec.fifo", "cap.txt", "fw.elf"])
    check("--record onto a FIFO that nothing reads: refused at once in one line (no wait for a reader)",
          code == 1 and "FIFO" in err and one_line(err), "exit %s, %r" % (code, err))
    if code != 1:
        return
    got = []
    reader_ready = threading.Event()

    def reader():
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # opens at once, as a reader that is there
        reader_ready.set()
        os.set_blocking(fd, True)
        chunks = []
        while True:
            b = os.read(fd, 65536)
            if not b:
                if chunks:
                    break
                continue  # no writer yet
            chunks.append(b)
        got.append(b"".join(chunks))
        os.close(fd)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    reader_ready.wait(5)
    code, err = run(["--batch", "--force", "--record", "rec.fifo", "cap.txt", "fw.elf"])
    t.join(HANG)
    check("--record onto a FIFO with its reader: the reader gets the whole capture (exit 0)",
          code == 0 and got and got[0] == cap_data, "exit %s, got %s bytes, %r" % (code, len(got[0]) if got else 0, err))


def rate_tests(cap_data, elf_data):
    fresh(cap_data, elf_data)
    for bad in ("1e-300", "0.5", "0", "-3", "2e9", "nan", "inf"):
        code, err = run(["--batch", "--rate", bad, "cap.txt", "fw.elf"])
        check("--rate %s: refused, saying the range (exit 2)" % bad,
              code == 2 and "from 1 to 1e9" in err and one_line(err), "exit %s, %r" % (code, err))
    p = subprocess.Popen([TOOL, "--batch", "--rate", "1000", "cap.txt", "fw.elf"], cwd=WORK, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    line = p.stderr.readline().decode(errors="replace").strip()
    p.terminate()
    p.communicate(timeout=HANG)
    want = "%d s" % round(len(cap_data) / 1000)
    check("--rate 1000 on a %d-byte file in batch: says at once that the replay takes %s and how to end it sooner"
          % (len(cap_data), want), want in line and "--duration" in line, line)
    help_text = subprocess.run([TOOL, "--help"], capture_output=True, text=True).stdout
    check("--help gives --rate's unit and range", "bytes per second" in help_text and "1 to 1e9" in help_text)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    cap_data = open(os.path.join(SCEN, "uart.txt"), "rb").read()
    elf_data = open(os.path.join(SCEN, "fw.elf"), "rb").read()
    stdout_tests(cap_data, elf_data)
    link_tests(cap_data, elf_data)
    fifo_tests(cap_data, elf_data)
    rate_tests(cap_data, elf_data)
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
