#!/usr/bin/env python3
"""make install / uninstall into a DESTDIR, the man page checked by mandoc -T lint and by groff's
warnings, and the bash completion offering options, values and serial ports. Prints one ok/FAIL
line per check."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

MAN = os.path.join(ROOT, "docs", "cmprof-top.1")
COMPLETION = os.path.join(ROOT, "scripts", "cmprof-top.bash-completion")


def complete(words):
    """What the completion offers for a command line whose last word is being typed."""
    script = 'source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _cmprof_top; printf "%%s\\n" "${COMPREPLY[@]}"' % (
        COMPLETION, " ".join("'%s'" % w for w in words), len(words) - 1)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=ROOT).stdout.split()


def complete_with_devices(words, devices):
    """complete() with a /dev of its own (a private mount) holding just these names."""
    script = 'source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _cmprof_top; printf "%%s\\n" "${COMPREPLY[@]}"' % (
        COMPLETION, " ".join("'%s'" % w for w in words), len(words) - 1)
    setup = "mount -t tmpfs none /dev && ln -s /proc/self/fd /dev/fd && touch /dev/null %s && exec bash -c \"$0\"" % (
        " ".join("/dev/" + d for d in devices))
    r = subprocess.run(["unshare", "--mount", "sh", "-c", setup, script], capture_output=True, text=True, cwd=ROOT)
    return r.stdout.split(), r.stderr.strip()


def main():
    dest = tempfile.mkdtemp(prefix="cmprof-install-")
    try:
        r = subprocess.run(["make", "-s", "-C", ROOT, "install", "DESTDIR=" + dest, "PREFIX=/usr/local"],
                           capture_output=True, text=True)
        files = ["usr/local/bin/cmprof-top", "usr/local/share/man/man1/cmprof-top.1",
                 "usr/local/share/bash-completion/completions/cmprof-top"]
        there = [os.path.exists(os.path.join(dest, f)) for f in files]
        check("make install DESTDIR=... PREFIX=/usr/local: the tool, its man page, its completion",
              r.returncode == 0 and all(there), r.stderr.strip()[-300:] or str(there))
        v = subprocess.run([os.path.join(dest, files[0]), "--version"], capture_output=True, text=True)
        check("the installed tool runs", v.returncode == 0 and v.stdout.startswith("cmprof-top "), v.stdout.strip())
        r = subprocess.run(["make", "-s", "-C", ROOT, "uninstall", "DESTDIR=" + dest, "PREFIX=/usr/local"],
                           capture_output=True, text=True)
        left = [f for f in files if os.path.exists(os.path.join(dest, f))]
        check("make uninstall removes them", r.returncode == 0 and not left, str(left))
    finally:
        shutil.rmtree(dest, ignore_errors=True)

    if shutil.which("mandoc"):
        lint = subprocess.run(["mandoc", "-T", "lint", "-W", "warning", MAN], capture_output=True, text=True)
        check("man page: mandoc -T lint finds nothing", lint.returncode == 0 and not lint.stdout.strip(),
              (lint.stdout + lint.stderr).strip()[:300])
    else:
        check("mandoc installed (scripts/deps.sh)", False, "apt-get install mandoc")
    groff = subprocess.run(["groff", "-man", "-ww", "-z", MAN], capture_output=True, text=True)
    check("man page: groff renders it without warnings", groff.returncode == 0 and not groff.stderr.strip(),
          groff.stderr.strip()[:300])
    text = subprocess.run(["man", "-l", MAN], capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80"))
    check("man -l shows every source kind and option", text.returncode == 0 and all(
        w in text.stdout for w in ("gdb:HOST:PORT", "openocd:HOST", "--fail-if-slower", "--task-var", "EXIT STATUS")),
          text.stderr.strip()[:200])
    # every long option the tool knows is in the man page and the completion
    helptext = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--help"], capture_output=True,
                              text=True).stdout
    opts = sorted({re.match(r"--[a-z-]+", w).group(0) for w in helptext.split() if re.match(r"--[a-z]", w)})
    man_src, comp_src = open(MAN).read().replace("\\-", "-"), open(COMPLETION).read()
    missing = [o for o in opts if o not in man_src or o not in comp_src]
    check("every option of --help is in the man page and the completion", not missing and len(opts) > 20,
          "missing %s" % missing)
    # the formats, as the tool's one table of them lists them, in each list written by hand: the man
    # page's -o and key o paragraphs, the completion's values for -o; and in --help, made from the table
    err = subprocess.run([os.path.join(ROOT, "build", "cmprof-top"), "--batch", "-o", "?", "x", "y"],
                         capture_output=True, text=True).stderr
    listed = re.search(r"unknown output '\?' \(([^)]*)\)", err)
    names = listed.group(1).split(", ") if listed else []
    paragraphs = re.split(r"\n\.(?:TP|PP|SH)\b", open(MAN).read())
    o_par = next((p for p in paragraphs if p.startswith("\n.BR \\-o")), "")
    key_par = next((p for p in paragraphs if p.startswith("\n.B o\n")), "")
    values = complete(["cmprof-top", "-o", ""])
    lists = {"the man page's -o": o_par, "the man page's key o": key_par.lower(), "--help": helptext,
             "the completion of -o": " ".join(values)}
    missing = ["%s in %s" % (n, where) for where, text in lists.items() for n in names
               if not re.search(r"(^|[^a-z])%s([^a-z]|$)" % re.escape(n), text.replace("\\fB", "").replace("\\fR", ""))]
    check("every output format the tool knows (%d) is in the man page's -o and key o lists, --help and the "
          "completion" % len(names), len(names) >= 9 and not missing and len(values) == len(names),
          "missing %s; completion offers %s" % (missing, values))
    check("completion: options", "--fail-if-slower" in complete(["cmprof-top", "--fa"]) and
          "--format" in complete(["cmprof-top", "--fo"]), str(complete(["cmprof-top", "--f"])))
    check("completion: an option's values", complete(["cmprof-top", "-o", "s"]) == ["speedscope"],
          str(complete(["cmprof-top", "-o", "s"])))
    kinds = {w: complete(["cmprof-top", w]) for w in ("g", "t", "o", "r", "")}
    check("completion: the source kinds gdb:, tcp:, openocd: and rtt: for SOURCE",
          "gdb:" in kinds["g"] and "tcp:" in kinds["t"] and "openocd:" in kinds["o"] and "rtt:" in kinds["r"] and
          {"gdb:", "tcp:", "openocd:", "rtt:"} <= set(kinds[""]), str(kinds["g"] + kinds["t"] + kinds["o"] + kinds["r"]))
    devs, err = complete_with_devices(["cmprof-top", ""], ["ttyUSB7", "ttyACM3", "ttyS0"])
    check("completion: USB serial ports (/dev/ttyUSB*, /dev/ttyACM*) offered for SOURCE, not only files",
          "/dev/ttyUSB7" in devs and "/dev/ttyACM3" in devs and "/dev/ttyS0" not in devs, "%s %s" % (devs, err))
    devs, err = complete_with_devices(["cmprof-top", "gdb:/dev/tty"], ["ttyUSB7", "ttyACM3"])
    check("completion: gdb:/dev/ttyACM3, a Black Magic Probe's GDB port",
          "gdb:/dev/ttyACM3" in devs and "gdb:/dev/ttyUSB7" in devs, "%s %s" % (devs, err))
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
