#!/usr/bin/env python3
"""After every test has ended: no cmprof-top of this checkout is still running. A tool a test started
must end with it (a live view under ASan told to quit and, before it had exited, killed with its tmux
session once spun for good: LeakSanitizer's stop-the-world at exit met the session's SIGHUP, and the
orphan took a core through the rest of the run and after it). Any found is killed and named.
Prints one ok/FAIL line."""
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from harness import check  # noqa: E402


def ours(pid):
    """The command line of process pid when it is this checkout's cmprof-top, else None."""
    try:
        with open("/proc/%s/comm" % pid) as f:
            if f.read().strip() != "cmprof-top":
                return None
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        cwd = os.readlink("/proc/%s/cwd" % pid)
    except OSError:
        return None
    exe = cmd.split(" ", 1)[0]
    where = os.path.normpath(os.path.join(cwd, exe))
    return cmd if where.startswith(os.path.join(ROOT, "build") + os.sep) else None


def main():
    left = {int(p): ours(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()}
    left = {p: c for p, c in left.items() if c}
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    check("no cmprof-top left running once the tests ended", not left,
          "; ".join("pid %d: %s" % (p, c[:160]) for p, c in sorted(left.items())) or "none")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
