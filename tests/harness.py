"""Shared by the Python test scripts: one 'ok'/'FAIL' line per check, and the failure count."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenarios"))
import scen  # noqa: E402  (the stream's alphabet, check and names, shared with the scenario checks)

failed = 0
free_port = scen.free_port  # a port free now, for a server started next to listen on
REFUSING = []  # the sockets closed_port() holds: bound, never listening


def closed_port():
    """A port that refuses connections for as long as this process runs: bound and never listening (a
    SYN to it is answered with a reset), so no other test can take it meanwhile. (A port bound and
    closed again was free for any test's server: another lane's OpenOCD stand-in got one, and the
    connections meant to be refused reached it.)"""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    REFUSING.append(s)
    return s.getsockname()[1]


def instruction_starts(elf, lo, hi):
    """The offsets (pc - lo) / 2 of the instructions that start in [lo, hi): a real core samples only
    those (any other PC says the capture is of another build, and fails a batch run)."""
    import re
    import subprocess
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", "--start-address=0x%x" % lo, "--stop-address=0x%x" % hi,
                          elf], capture_output=True, text=True).stdout
    return [(int(m.group(1), 16) - lo) // 2 for m in re.finditer(r"^ +([0-9a-f]+):\t", dis, re.M)]


def scratch(name):
    """build/NAME, where a test writes; build/NAME-asan (after the tool's directory) when CMPROF_TOOL
    names another build of the tool, so that a test's plain and ASan runs can go side by side."""
    tool = os.environ.get("CMPROF_TOOL")
    suffix = "-" + os.path.basename(os.path.dirname(os.path.abspath(tool))) if tool else ""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", name + suffix)


def check(name, ok, detail=""):
    global failed
    failed += 0 if ok else 1
    detail = " | ".join(ln for ln in str(detail).splitlines() if ln.strip())  # one line per check, always
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)
    return ok


def check_brief(name, ok, detail=""):
    """check() that prints the evidence only when the check fails."""
    return check(name, ok, "" if ok else detail)


B64 = scen.B64
stream_names = scen.stream_names  # every name a capture gives: (line offset, index, tag, name)


def stream_line(text):
    """A live stream line (docs/stream.md): the text, '!', and its sum12 check as two base64 digits."""
    return "%s!%s\n" % (text, scen.stream_line_check(text))


def tmux_socket_gone(name):
    """Remove the socket file a private tmux server (tmux -L name) leaves behind once it has exited."""
    import subprocess
    if subprocess.run(["tmux", "-L", name, "has-session"], capture_output=True).returncode == 0:
        return  # still serving someone
    path = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), "tmux-%d" % os.getuid(), name)
    try:
        os.unlink(path)
    except OSError:
        pass


def tcp_server(parts, gap, hold=0):
    """A probe's SWO server on a free port of 127.0.0.1: one connection per part, closed `hold`
    seconds after it (the tool must keep its samples and retry), then it goes away for `gap` seconds."""
    import socket
    import threading
    import time
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def serve():
        sock = srv
        for k, part in enumerate(parts):
            if k:
                time.sleep(gap)  # the device is gone for a while: connections refused ...
            sock.listen(1)
            sock.settimeout(60)  # a tool that never connects does not keep this thread (long: a loaded machine)
            try:
                conn, _ = sock.accept()
                conn.sendall(part)
                time.sleep(hold)  # a live source that stays connected, as a port does
                conn.close()
            except OSError:
                pass
            sock.close()
            # ... by a socket bound and not listening, which keeps the port from any other test's server
            # (closed for the gap, it was free for one: a reconnect then reached another lane's server)
            if k + 1 < len(parts):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))

    threading.Thread(target=serve, daemon=True).start()
    return port


class OneConnection:
    """A scripted server on a free port of 127.0.0.1 that takes one connection: what arrives is
    added to a buffer, and consume(conn, buf) answers what it can and returns the rest. A subclass
    sets its own fields before this __init__: serving starts here."""

    def __init__(self):
        import socket
        import threading
        self.log = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.sock.accept()
        conn.settimeout(20)
        buf = b""
        try:
            while True:
                data = conn.recv(8192)
                if not data:
                    return
                buf = self.consume(conn, buf + data)
        except OSError:
            return
        finally:
            conn.close()


class TclServer(OneConnection):
    """OpenOCD's Tcl RPC port, scripted (test_openocd.py, test_rtt.py): every command and reply ends
    with 0x1a, cmprof-top wraps each command in `list [catch {...} r] $r`, and answer(body) gives the
    reply to what is inside. log keeps every command (the body only, when log_body)."""

    log_body = False  # log the command whole, or only what the catch wraps
    unwrapped = "invalid command"  # the reply to a command not wrapped as cmprof-top wraps them

    def answer(self, body):
        return "1 {invalid command name \"%s\"}" % body.split()[0]

    def consume(self, conn, buf):
        import re
        while b"\x1a" in buf:
            cmd, buf = buf.split(b"\x1a", 1)
            cmd = cmd.decode()
            m = re.match(r"list \[catch \{(.*)\} r\] \$r$", cmd, re.S)
            self.log.append(m.group(1) if m and self.log_body else cmd)
            conn.sendall((self.answer(m.group(1)) if m else self.unwrapped).encode() + b"\x1a")
        return buf
