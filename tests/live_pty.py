"""The live view on a pty of its own, as the field and OpenOCD tests drive it: Live (its own
controlling terminal) and ShellLive (a shell's foreground job, which Ctrl-Z really stops)."""
import fcntl
import os
import pty
import resource
import signal
import struct
import termios
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOOL = os.path.abspath(os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top")))
HANG = 30  # seconds: only a hang reaches it


def wait_exit(pid, seconds):
    """(exit code as subprocess gives it, seconds until then); (None, seconds) if it did not end."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), time.monotonic() - t0
        time.sleep(0.005)
    return None, time.monotonic() - t0


class Live:
    """The live view on a pty of its own (its controlling terminal), 100x30, its output drained."""

    def __init__(self, args, cwd=None, fsize=None):
        self.pid, self.master = pty.fork()
        if self.pid == 0:
            if cwd:
                os.chdir(cwd)
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            os.environ["TERM"] = "xterm"
            os.execv(TOOL, [TOOL] + args)
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.out = b""
        self.reader = threading.Thread(target=self.drain, daemon=True)
        self.reader.start()

    def drain(self):
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.out += data

    def shown(self, text, seconds=10):
        end = time.monotonic() + seconds
        while text.encode() not in self.out and time.monotonic() < end:
            time.sleep(0.05)
        return text.encode() in self.out

    def keys(self, k):
        os.write(self.master, k.encode())

    def finish(self, seconds=HANG):
        code, took = wait_exit(self.pid, seconds)
        if code is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self.reader.join(2)
        os.close(self.master)
        return code, took


class ShellLive(Live):
    """The live view as a shell's foreground job: a session leader on its own pty waits for it, the
    view in a process group of its own that owns the terminal, so that SIGTSTP stops it as Ctrl-Z in
    a shell would (a session leader's own group is orphaned: the kernel discards its stop signals).
    self.pid: the session leader (its exit code is the view's); self.tool: the view."""

    def __init__(self, args):
        r, w = os.pipe()
        self.pid, self.master = pty.fork()
        if self.pid == 0:
            os.close(r)
            os.environ["TERM"] = "xterm"
            tool = os.fork()
            if tool == 0:
                os.setpgid(0, 0)
                signal.signal(signal.SIGTTOU, signal.SIG_IGN)
                os.tcsetpgrp(0, os.getpgrp())
                signal.signal(signal.SIGTTOU, signal.SIG_DFL)
                os.write(w, b"%d\n" % os.getpid())
                os.execv(TOOL, [TOOL] + args)
            try:
                os.setpgid(tool, tool)
            except OSError:
                pass
            _, status = os.waitpid(tool, 0)  # a stop is no end
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)
        os.close(w)
        self.tool = int(os.read(r, 64))
        os.close(r)
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.out = b""
        self.reader = threading.Thread(target=self.drain, daemon=True)
        self.reader.start()
