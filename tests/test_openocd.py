#!/usr/bin/env python3
"""cmprof-top's openocd: source. Against the real openocd binary (Debian's package, no probe):
connection, the no-target error, and OpenOCD still serving after we leave. Against a scripted
responder that follows the OpenOCD manual's Tcl RPC protocol (every command and reply ends with
0x1a): exact counts from known PCSR bursts, sleep reads, DEMCR.TRCENA set and put back, the
halting fallback when PCSR reads 0, and refusals. No probe is involved: the PCSR path has not
run on hardware. Prints one ok/FAIL line per check."""
import fcntl
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
ELF = os.path.join(ROOT, "build", "scenarios", "gdb_loops", "fw.elf")
DEMCR, PCSR = 0xE000EDFC, 0xE000101C


def nm(name):
    for ln in subprocess.run(["arm-none-eabi-nm", ELF], capture_output=True, text=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16) & ~1
    raise KeyError(name)


class TclResponder(harness.TclServer):
    """One connection; answers the commands cmprof-top sends, wrapped in `list [catch {...} r] $r`."""

    def __init__(self, burst, demcr=0, pcsr_zero=False, refuse_write=False):
        self.burst, self.demcr, self.pcsr_zero, self.refuse_write = burst, demcr, pcsr_zero, refuse_write
        self.halts = 0
        super().__init__()

    def answer(self, body):
        if body.startswith("read_memory 0x%08x 32 1" % DEMCR):
            return "0 0x%x" % self.demcr
        m = re.match(r"write_memory 0x%08x 32 (0x[0-9a-f]+)$" % DEMCR, body)
        if m:
            if self.refuse_write:
                return "1 {Error: Failed to write memory at 0xe000edfc}"
            self.demcr = int(m.group(1), 16)
            return "0 {}"
        if "read_memory 0x%08x 32 1" % PCSR in body:
            n = int(re.search(r"\$i < (\d+)", body).group(1))
            if self.pcsr_zero:
                return "0 {%s}" % " ".join(["0x0"] * n)
            return "0 {%s}" % " ".join("0x%x" % v for v in self.burst[:n])
        if re.search(r"\bhalt 100\b", body):
            self.halts += 1
            return "0 0x%08x" % self.burst[self.halts % len(self.burst)]
        return "1 {invalid command name \"%s\"}" % body.split()[0]


class Target:
    """A target's registers behind the stub servers: memory words by address."""

    def __init__(self, demcr):
        self.mem = {DEMCR: demcr}
        self.first = dict(self.mem)  # as the first connection finds them


class ManyConnections:
    """A scripted OpenOCD that takes any number of connections until stop(), each served by
    serve(conn, index) in a thread of its own. A subclass sets its own fields before this __init__:
    serving starts here."""

    def __init__(self, accept_timeout):
        self.log, self.conns, self.done = [], 0, False
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(accept_timeout)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def stop(self):
        self.done = True

    def accept(self):
        while not self.done:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self.serve, args=(conn, self.conns), daemon=True).start()
            self.conns += 1
        self.sock.close()


def next_command(conn, buf):
    """The next command (up to its 0x1a) and what follows it in buf; (None, buf) once the
    connection has ended."""
    while b"\x1a" not in buf:
        data = conn.recv(4096)
        if not data:
            return None, buf
        buf += data
    cmd, buf = buf.split(b"\x1a", 1)
    return cmd.decode(), buf


class HostileServer(ManyConnections):
    """Many connections, each answered like TclResponder until plan(conn, answered) says otherwise:
    'drop' closes it, 'trickle' sends a reply a byte at a time that never ends, 'silence' reads and
    never answers, 'garbage' floods seeded random bytes, 'noterm' answers without the 0x1a.
    Every command received is logged, whatever the mode."""

    def __init__(self, burst, target, plan, pcsr_zero=False):
        self.burst, self.target, self.plan, self.pcsr_zero = burst, target, plan, pcsr_zero
        self.hostile_since = None
        self.demcr_seen = []  # DEMCR as each connection read it
        super().__init__(0.2)

    def answer(self, body, mode="answer"):
        t = self.target
        if mode == "pcsr_error" and "read_memory 0x%08x 32 1" % PCSR in body:
            return "1 {Error: Failed to read memory at 0xe000101c}"
        if mode == "pcsr_huge" and "read_memory 0x%08x 32 1" % PCSR in body:
            return "0 {0x1ffffffff 0x8000124}"
        m = re.search(r"write_memory (0x[0-9a-f]+) 32 (0x[0-9a-f]+)", body)
        if m:
            t.mem[int(m.group(1), 16)] = int(m.group(2), 16)
            return "0 {}"
        if body.startswith("read_memory 0x%08x 32 1" % DEMCR):
            self.demcr_seen.append(t.mem[DEMCR])
            return "0 0x%x" % t.mem[DEMCR]
        if "read_memory 0x%08x 32 1" % PCSR in body:
            n = int(re.search(r"\$i < (\d+)", body).group(1))
            return "0 {%s}" % " ".join(["0x0" if self.pcsr_zero else "0x%x" % v for v in self.burst[:n]])
        if re.search(r"\bhalt 100\b", body):
            return "0 0x%08x" % self.burst[len(self.log) % len(self.burst)]
        return "0 {}"

    def hostile(self, conn, mode):
        rng, buf = random.Random(35), b""
        conn.settimeout(0.01)
        if mode == "trickle":
            conn.sendall(b"0 {0x8")
        while not self.done:
            try:
                data = conn.recv(4096)
                if not data:
                    return
                *cmds, buf = (buf + data).split(b"\x1a")
                with self.lock:
                    self.log += [c.decode(errors="replace") for c in cmds]
                if mode == "noterm":
                    conn.sendall(b"0 {0x8000124}")
            except socket.timeout:
                pass
            if mode == "trickle":
                conn.sendall(b"0")
                time.sleep(0.04)
            elif mode == "garbage":
                conn.sendall(bytes(rng.randrange(256) for _ in range(512)))

    def serve(self, conn, index):
        buf, answered = b"", 0
        try:
            while not self.done:
                mode = self.plan(index, answered)
                if mode not in ("answer", "pcsr_error", "pcsr_huge", "slow"):
                    if self.hostile_since is None:
                        self.hostile_since = time.time()
                    if mode != "drop":
                        self.hostile(conn, mode)
                    return
                cmd, buf = next_command(conn, buf)
                if cmd is None:
                    return
                with self.lock:
                    self.log.append(cmd)
                m = re.match(r"list \[catch \{(.*)\} r\] \$r$", cmd, re.S)
                reply = (self.answer(m.group(1), mode) if m else "invalid command").encode() + b"\x1a"
                if mode == "slow":
                    if self.hostile_since is None:
                        self.hostile_since = time.time()
                    for k in range(len(reply)):
                        if self.done:
                            return
                        conn.sendall(reply[k:k + 1])
                        time.sleep(0.05)
                else:
                    conn.sendall(reply)
                answered += 1
        except OSError:
            return
        finally:
            conn.close()


def batch(spec, *extra, timeout=30):
    r = subprocess.run([TOOL, "--batch", "-o", "json", "--no-inline"] + list(extra) + [spec, ELF],
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}), r.stderr


def tcl(port, command):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(command.encode() + b"\x1a")
        buf = b""
        while not buf.endswith(b"\x1a"):
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        return buf.rstrip(b"\x1a").decode()


def real_openocd():
    if not shutil.which("openocd"):
        check("openocd installed (scripts/deps.sh)", False, "apt-get install openocd")
        return
    port = harness.free_port()
    oo = subprocess.Popen(["openocd", "-c", "adapter driver dummy", "-c", "tcl_port %d" % port, "-c",
                           "telnet_port disabled", "-c", "gdb_port disabled", "-c", "noinit"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(50):  # until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        t0 = time.time()
        code, j, err = batch("openocd:127.0.0.1:%d" % port)
        check("real openocd with no target (noinit): a clear error at once, non-zero exit",
              code != 0 and "OpenOCD has no target" in err and time.time() - t0 < 10, err.strip())
        check("real openocd: still serving after we left", oo.poll() is None and
              tcl(port, "version").startswith("Open On-Chip Debugger"), "")
        tcl(port, "shutdown")
        oo.wait(timeout=10)
        check("real openocd: shut down cleanly", oo.returncode == 0, "exit %s" % oo.returncode)
    finally:
        if oo.poll() is None:
            oo.kill()
    # port 1 (nobody serves it; the freed port above could be any other lane's server by now)
    code, j, err = batch("openocd:127.0.0.1:1", "--duration", "1")
    check("no OpenOCD listening: says why, non-zero exit", code != 0 and "Connection refused" in err, err.strip())


def wait_for(cond, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def start_tool(spec, how):
    """The tool on spec: headless for a signal, the live view on a pty (120x40) for the q key."""
    if how != "q":
        return subprocess.Popen([TOOL, "--batch", "-o", "json", "--no-inline", "--duration", "60", spec, ELF],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE), None
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([TOOL, spec, ELF], stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),  # /dev/tty is this pty
                            env=dict(os.environ, TERM="xterm-256color"))
    os.close(slave)

    def drain():  # the view must never block on a full terminal
        try:
            while os.read(master, 65536):
                pass
        except OSError:
            pass
    threading.Thread(target=drain, daemon=True).start()
    return proc, master


def exit_seconds(proc, master, how):
    """Seconds from the signal or the q key to the tool's exit (None: still running after 10 s)."""
    t0 = time.time()
    if how == "q":
        os.write(master, b"q")
    else:
        proc.send_signal(getattr(signal, how))
    try:
        proc.wait(timeout=10)
        return time.time() - t0
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None
    finally:
        if master is not None:
            os.close(master)


def hostile_servers(burst):
    """Item 3: whatever the server does once sampling runs, q, SIGINT and SIGTERM end the tool
    within 2 s; when it was halting the core, the close sends resume before DEMCR's restore."""
    cases = [("trickle", "SIGINT", False), ("trickle", "SIGTERM", True), ("trickle", "q", False),
             ("silence", "SIGINT", True), ("silence", "q", True), ("garbage", "SIGTERM", False),
             ("garbage", "q", False), ("noterm", "SIGINT", False), ("noterm", "SIGTERM", True)]
    for mode, how, halting in cases:
        srv = HostileServer(burst, Target(0), lambda conn, n, mode=mode: "answer" if conn == 0 and n < 5 else mode,
                            pcsr_zero=halting)
        proc, master = start_tool("openocd:127.0.0.1:%d" % srv.port, how)
        began = wait_for(lambda: srv.hostile_since is not None, 15)
        time.sleep(0.5)  # a reply is overdue now, well before the tool's own 3 s patience runs out
        dt = exit_seconds(proc, master, how)
        srv.stop()
        what = "%s server, %s%s" % (mode, how, ", halting" if halting else "")
        check("openocd: %s: exits within 2 s" % what, began and dt is not None and dt < 2.0,
              "hostile from the start: %s, exit after %s s" % (began, dt if dt is None else "%.2f" % dt))
        if halting:
            # the first close is the halting connection's (at the signal, or at a timeout before it
            # on a slow host): DEMCR's original value written back, after a resume
            closing = [c for c in srv.log if "write_memory 0x%08x 32 0x00000000" % DEMCR in c]
            check("openocd: %s: the close resumes the core, then puts DEMCR back" % what,
                  closing and 0 <= closing[0].find("resume") < closing[0].find("write_memory"),
                  "%s; connections %d, the last commands %s" % (closing, srv.conns, srv.log[-3:]))


def resume_after_failed_read():
    """Item 4: real OpenOCD (Jim Tcl) with a target made of procs whose PC read fails: the halting
    fallback's resume still comes, and the failure is named."""
    port = harness.free_port()
    target = ("set ::halted 0; set ::halts 0; set ::resumes 0; "
              "proc halt {args} {incr ::halts; set ::halted 1; return {}}; "
              "proc resume {args} {incr ::resumes; set ::halted 0; return {}}; "
              "proc reg {args} {error {Error: the PC could not be read (stub)}}; "
              "proc write_memory {args} {return {}}; "
              "proc read_memory {addr width count} {if {$addr eq {0xe000edfc}} {return 0x01000000}; return 0}")
    oo = subprocess.Popen(["openocd", "-c", "adapter driver dummy", "-c", "tcl_port %d" % port, "-c",
                           "telnet_port disabled", "-c", "gdb_port disabled", "-c", "noinit", "-c", target],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 5)
        code, j, err = batch("openocd:127.0.0.1:%d" % port, "--duration", "1.5")
        halted, halts, resumes = (tcl(port, "set ::%s" % v) for v in ("halted", "halts", "resumes"))
        check("openocd: the PC read fails in the halting fallback: the core is resumed all the same",
              halted == "0" and int(halts) >= 1 and int(resumes) >= int(halts),
              "halted %s, halts %s, resumes %s" % (halted, halts, resumes))
        check("openocd: ... and the failure is named, non-zero exit",
              code != 0 and "the PC could not be read" in err, err.strip())
        tcl(port, "shutdown")
        oo.wait(timeout=10)
    finally:
        if oo.poll() is None:
            oo.kill()
            oo.wait()


def restored_after_a_drop(burst):
    """Item 5: the connection drops once after TRCENA was set; the next connection finds TRCENA on.
    At exit every register the tool wrote holds the value the first connection found."""
    target = Target(0x00000400)  # VC_HARDERR set, trace off
    # the second connection is the close's, to put DEMCR back: dropped too, so that the reconnect
    # after it finds the TRCENA the first connection set
    srv = HostileServer(burst, target, lambda conn, n: "drop" if (conn == 0 and n == 4) or conn == 1 else "answer")
    # --duration: a batch reconnects only while a duration bounds it (else a closed connection ends it)
    code, j, err = batch("openocd:127.0.0.1:%d" % srv.port, "--samples", "600", "--duration", "30")
    srv.stop()
    written = sorted({int(m, 16) for c in srv.log for m in re.findall(r"write_memory (0x[0-9a-f]+)", c)})
    # the drop cost samples: the report says so (exit 4, JSON partial), though the run went on
    check("openocd: a dropped connection, then TRCENA found on: the second connection sampled, the drop reported",
          code == 4 and isinstance(j.get("partial"), dict) and j["partial"].get("failures") == 1 and j.get("total") == 600 and srv.conns >= 2 and srv.demcr_seen[:2] == [0x400, 0x01000400],
          "exit %d, total %s, connections %d, DEMCR read %s, %s" % (code, j.get("total"), srv.conns,
                                                                  [hex(v) for v in srv.demcr_seen], err.strip()))
    check("openocd: at exit DEMCR (and all the tool wrote) holds the first connection's values",
          written == [DEMCR] and all(target.mem[a] == target.first.get(a) for a in written),
          "wrote %s; now %s, first %s" % ([hex(a) for a in written], {hex(a): hex(v) for a, v in target.mem.items()},
                                          {hex(a): hex(v) for a, v in target.first.items()}))


def slow_replies(burst):
    """OpenOCD answering one byte at a time (each reply whole and right, but seconds long): the
    closing DEMCR write must not queue behind a reply still coming. On every failure and at the end
    DEMCR holds what the tool found; the run ends in bounded time naming the slow reply, also when
    no sample ever came; a signal during a slow reply restores DEMCR too."""
    cases = [("after 4 commands, batch", lambda conn, n: "slow" if conn == 0 and n >= 4 else "answer", [], None),
             ("from the first burst on, every connection, --duration 5",
              lambda conn, n: "slow" if n >= 2 else "answer", ["--duration", "5"], None),
             ("after 4 commands, SIGTERM during a slow reply", lambda conn, n: "slow" if n >= 4 else "answer", [],
              "SIGTERM")]
    for what, plan, extra, sig in cases:
        target = Target(0x00000400)  # VC_HARDERR set, trace off
        srv = HostileServer(burst, target, plan)
        t0 = time.time()
        if sig:
            proc, master = start_tool("openocd:127.0.0.1:%d" % srv.port, sig)
            began = wait_for(lambda: srv.hostile_since is not None, 15)
            time.sleep(0.5)
            took = exit_seconds(proc, master, sig)
            code, j, err = proc.returncode, {}, proc.stderr.read().decode()
        else:
            code, j, err = batch("openocd:127.0.0.1:%d" % srv.port, *extra)
            took, began = time.time() - t0, True
        time.sleep(0.3)  # a close's second connection is served by its own thread
        srv.stop()
        demcr = target.mem[DEMCR]
        named = sig or ("no answer to" in err and "within 3 s" in err)
        check("openocd slow replies %s: DEMCR as found at the end (0x400), ends in bounded time, the slow reply named"
              % what, began and demcr == 0x400 and took is not None and took < (2 if sig else 5 + 4) and named and
              (code == 128 + 15 if sig else code in (2, 4)),
              "exit %s after %s s, DEMCR %#x, connections %d, %r" % (
                  code, took if took is None else "%.1f" % took, demcr, srv.conns, err.strip()[-300:]))


def failed_and_back(burst):
    """A failure is never forgotten: a server that fails a PCSR burst once (an error, a number past
    32 bits), then takes the reconnect: with --duration and without, exit 4, the failure named on
    stderr and counted in JSON partial; the report labelled by its source, not "itm"."""
    for mode, said in (("pcsr_error", "Failed to read memory"), ("pcsr_huge", "unexpected answer")):
        for extra in (["--duration", "3"], []):
            target = Target(0)
            srv = HostileServer(burst, target, lambda conn, n, mode=mode: mode if conn == 0 and n >= 5 else "answer")
            t0 = time.time()
            code, j, err = batch("openocd:127.0.0.1:%d" % srv.port, *extra)
            took = time.time() - t0
            time.sleep(0.2)
            srv.stop()
            pa = j.get("partial") if isinstance(j.get("partial"), dict) else {}
            check("openocd %s%s, then a good reconnect: exit 4, named on stderr and in JSON partial, DEMCR as found" % (
                mode, " " + " ".join(extra) if extra else ""),
                code == 4 and target.mem[DEMCR] == 0 and pa.get("failures") == 1 and said in pa.get("reason", "") and
                pa.get("reason", "") in err and j.get("format") == "openocd-pcsr" and
                (not extra or (pa.get("reconnects") == 1 and j.get("total", 0) > 100)),
                "exit %s after %.1f s, total %s, format %s, DEMCR %#x, partial %r, %r" % (
                    code, took, j.get("total"), j.get("format"), target.mem[DEMCR], pa, err.strip()[-300:]))


# ---- swo=: the SWO trace set up through OpenOCD's own commands ----
DWT_CTRL, ITM_TCR, ITM_TER0, DBGMCU_CR, TPIU = 0xE0001000, 0xE0000E80, 0xE0000E00, 0xE0042004, 0xE0040000


def swo_target(dbgmcu=True):
    """An STM32F4's trace registers as a reset leaves them (DWT_CTRL with NUMCOMP 4, CYCCNT on as a
    section timer leaves it); DBGMCU_CR absent on a part that has none."""
    mem = {DEMCR: 0x00000400, DWT_CTRL: 0x40000001, ITM_TCR: 0, TPIU + 0x004: 1, TPIU + 0x010: 0,
           TPIU + 0x0F0: 1, TPIU + 0x304: 0x102}
    mem.update({ITM_TER0 + 4 * i: 0 for i in range(8)})
    if dbgmcu:
        mem[DBGMCU_CR] = 0x7
    return mem


def itm_pcs(pcs):
    out = bytearray(b"\x00\x00\x00\x00\x00\x80")
    for pc in pcs:
        out += b"\x15\x00" if pc == 0xFFFFFFFF else bytes([0x17]) + pc.to_bytes(4, "little")
    return bytes(out)


class SwoServer(ManyConnections):
    """OpenOCD as seen through its Tcl port, for swo=: tpiu names/cget/configure/enable/disable,
    itm port, mww, read_memory (in the tool's foreach scripts too) on a register map. `enable` does
    what OpenOCD 0.12's does to the registers (TPIU, DBGMCU's trace pins) and opens the trace port,
    which sends trace (bytes) to each connection and keeps it open. die_after: the Tcl connection
    number 0 is closed instead of answering its command number die_after (dead=True: the server
    stops listening too, as when OpenOCD is killed)."""

    def __init__(self, trace, mem, die_after=None, dead=False, names="stm32f4x.tpiu"):
        self.trace, self.mem, self.first = trace, mem, dict(mem)
        self.die_after, self.dead, self.names = die_after, dead, names
        self.trace_conns, self.trace_sock = 0, None
        self.restores = []  # the registers after each restore script
        super().__init__(0.1)

    def read(self, a):
        return "0x%x" % self.mem[a] if a in self.mem else None

    def answer(self, body):
        mem = self.mem
        if body == "tpiu names":
            return "0 {%s}" % self.names
        if re.fullmatch(r"\S+ cget -baseaddr", body):
            return "0 0x%x" % TPIU
        m = re.fullmatch(r"set s \{\}; foreach a \{([^}]*)\} \{.*read_memory \$a 32 1.*\}; set s", body)
        if m:
            return "0 {%s}" % " ".join(self.read(int(a, 16)) or "-" for a in m.group(1).split())
        m = re.fullmatch(r"mww (0x[0-9a-f]+) (0x[0-9a-f]+)", body)
        if m:
            mem[int(m.group(1), 16)] = int(m.group(2), 16)
            return "0 {}"
        m = re.fullmatch(r"(\S+) configure -protocol uart -traceclk (\d+) -pin-freq (\d+) -output (:\d+|/\S+)", body)
        if m:
            self.clk, self.pin, self.output = int(m.group(2)), int(m.group(3)), m.group(4)
            return "0 {}"
        if re.fullmatch(r"\S+ enable", body):  # OpenOCD 0.12's arm_tpiu_swo enable and the F4's pre-enable
            if DBGMCU_CR in mem:
                mem[DBGMCU_CR] = (mem[DBGMCU_CR] & ~0xC0) | 0x20
            mem.update({TPIU + 0x004: 1, TPIU + 0x010: self.clk // self.pin - 1, TPIU + 0x0F0: 2,
                        TPIU + 0x304: mem[TPIU + 0x304] & ~2})
            self.open_trace()
            return "0 {}"
        if body == "itm port 0 on":  # armv7m_trace_itm_config: TCR and the eight TERs
            mem[ITM_TCR] = 0x00010009
            mem.update({ITM_TER0 + 4 * i: 1 if i == 0 else 0 for i in range(8)})
            return "0 {}"
        m = re.fullmatch(r"catch \{(\S+) disable\}; foreach \{a v\} \{([^}]*)\} \{.*mww \$a \$v.*\}", body)
        if m:
            if self.trace_sock:  # shutdown wakes the accept() that a close alone leaves listening
                try:
                    self.trace_sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self.trace_sock.close()
                self.trace_sock = None
            f = m.group(2).split()
            for a, v in zip(f[0::2], f[1::2]):
                if int(a, 16) in mem and mem[int(a, 16)] != int(v, 16):
                    mem[int(a, 16)] = int(v, 16)
            self.restores.append(dict(mem))
            return "0 {}"
        return "1 {invalid command name \"%s\"}" % body.split()[0]

    def open_trace(self):
        if self.output.startswith("/"):  # OpenOCD appends to the file or pipe
            with open(self.output, "ab") as f:
                f.write(self.trace)
            self.trace_conns += 1
            return
        self.trace_port = int(self.output[1:])
        if self.trace_sock:
            return
        self.trace_sock = socket.socket()
        self.trace_sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.trace_sock.bind(("127.0.0.1", self.trace_port))
        self.trace_sock.listen(4)
        sock = self.trace_sock

        def serve_trace():
            while not self.done:
                try:
                    c, _ = sock.accept()
                except OSError:
                    return
                self.trace_conns += 1
                c.sendall(self.trace)
                threading.Thread(target=lambda: (time.sleep(30), c.close()), daemon=True).start()
        threading.Thread(target=serve_trace, daemon=True).start()

    def serve(self, conn, index):
        buf, answered = b"", 0
        try:
            while not self.done:
                cmd, buf = next_command(conn, buf)
                if cmd is None:
                    return
                m = re.match(r"list \[catch \{(.*)\} r\] \$r$", cmd, re.S)
                body = m.group(1) if m else cmd
                if index == 0 and answered == self.die_after:
                    if self.dead:
                        self.done = True
                    return
                with self.lock:
                    self.log.append(body)
                conn.sendall(self.answer(body).encode() + b"\x1a")
                answered += 1
        except OSError:
            return
        finally:
            conn.close()


def kinds(log):
    """The commands' shapes, numbers left out: the sequence the tool sent."""
    out = []
    for c in log:
        c = re.sub(r"0x[0-9a-f]{8}", "A", c)
        out.append(re.sub(r"\{(A ?)+\}", "{..}", c)[:60])
    return out


def swo_setup(burst):
    """swo=168M: the commands in order, the trace counted exactly, every register put back."""
    tport = harness.free_port()
    trace = itm_pcs(burst * 10) + b"\x00" * 5 + b"\x80"
    mem = swo_target()
    srv = SwoServer(trace, mem)
    spec = "openocd:127.0.0.1:%d,swo=168M,trace=%d" % (srv.port, tport)
    code, j, err = batch(spec, "--samples", "600")
    time.sleep(0.2)
    srv.stop()
    rows = {x["name"]: x["samples"] for x in j.get("rows", [])}
    check("openocd swo=: the trace OpenOCD serves counted exactly (30:20:10 a burst), sleeps too, format from the bytes",
          code == 0 and rows == {"hot_a": 300, "hot_b": 200, "hot_c": 100} and j.get("sleep") == 40 and
          j.get("format") == "itm", "exit %d, %s, sleep %s, format %s, %s" % (code, rows, j.get("sleep"),
                                                                              j.get("format"), err.strip()))
    want = ["tpiu names", "stm32f4x.tpiu cget -baseaddr",
            "set s {}; foreach a {..} {if {[catch {read_memory $a 32 1} v]} {set v -}",
            "mww A A", "stm32f4x.tpiu configure -protocol uart -traceclk 168000000 -pin-",
            "stm32f4x.tpiu enable", "itm port 0 on", "mww A A", "mww A A",
            "catch {stm32f4x.tpiu disable}; foreach {a v} {..} {if {![catch {read_memory"]
    got = kinds(srv.log)
    check("openocd swo=: the set-up in OpenOCD 0.12's commands, in order, then the restore",
          got == [w[:60] for w in want], "sent %s" % got)
    cfg = [c for c in srv.log if "configure" in c]
    writes = [c for c in srv.log if c.startswith("mww")]
    # 168 MHz / 2 MHz = 84: pin 2 MHz; a sample every 100 * 84 = 8400 cycles, rounded up to 9216
    # (POSTPRESET 8, CYCTAP 1): DWT_CTRL 0x40000001 -> 0x40001611 (SYNCTAP 1, PCSAMPLENA)
    check("openocd swo=: pin 2 MHz from the 168 MHz trace clock, TRCENA, ITM's DWT packets, a sample every 9216 cycles",
          cfg == ["stm32f4x.tpiu configure -protocol uart -traceclk 168000000 -pin-freq 2000000 -output :%d" % tport]
          and writes == ["mww 0xe000edfc 0x01000400", "mww 0xe0000e80 0x0001000d", "mww 0xe0001000 0x40001611"] and
          "SWO 2 MHz, a PC sample every 9216 cycles" in j.get("source_detail", ""),
          "%s %s %s" % (cfg, writes, j.get("source_detail")))
    changed = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
    check("openocd swo=: at exit every register holds what the tool first found (DEMCR, DWT, ITM, TPIU, DBGMCU)",
          len(writes) == 3 and len(srv.restores) == 1 and not changed, "still changed: %s" % changed)


def swo_options_set(burst):
    """pin=, period=, exc and tpiu= as given: no `tpiu names`, the pin rate the trace clock's whole
    divisor at most pin=, CYCTAP and POSTPRESET for the period, EXCTRCENA."""
    tport = harness.free_port()
    mem = swo_target()
    srv = SwoServer(itm_pcs(burst * 10), mem)
    code, j, err = batch("openocd:127.0.0.1:%d,swo=168M,pin=5M,period=2048,exc,tpiu=stm32f4x.tpiu,trace=%d" % (
        srv.port, tport), "--samples", "600")
    time.sleep(0.2)
    srv.stop()
    cfg = [c for c in srv.log if "configure" in c]
    dwt = [c for c in srv.log if c.startswith("mww 0xe0001000")]
    # 168 MHz / 5 MHz -> divisor 34: 4.94 MHz; 2048 cycles: CYCTAP 1, POSTPRESET 1; EXCTRCENA (bit 16)
    check("openocd swo=, pin=5M,period=2048,exc,tpiu=: the object named, pin 4941176 Hz, DWT_CTRL 0x40011603",
          code == 0 and "tpiu names" not in srv.log and
          cfg == ["stm32f4x.tpiu configure -protocol uart -traceclk 168000000 -pin-freq 4941176 -output :%d" % tport]
          and dwt == ["mww 0xe0001000 0x40011603"] and all(srv.first[a] == v for a, v in mem.items()),
          "exit %d, %s %s, %s" % (code, cfg, dwt, err.strip()[-200:]))


def swo_dies(burst):
    """The server drops the connection during the set-up (after each step in turn): the error is
    named, the close's second connection puts every register back; a server killed outright
    (nothing listens any more) ends the run in bounded time with its reason."""
    for after in (3, 4, 5, 6, 7, 8):
        mem = swo_target()
        srv = SwoServer(itm_pcs(burst), mem, die_after=after)
        t0 = time.time()
        code, j, err = batch("openocd:127.0.0.1:%d,swo=168M,trace=%d" % (srv.port, harness.free_port()))
        took = time.time() - t0
        time.sleep(0.2)
        srv.stop()
        changed = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
        check("openocd swo=: the connection dropped after %d set-up commands: named, non-zero exit, every register "
              "put back" % after, code != 0 and "OpenOCD closed the connection" in err and not changed and took < 10,
              "exit %d after %.1f s, changed %s, %s" % (code, took, changed, err.strip()[-200:]))
    mem = swo_target()
    srv = SwoServer(itm_pcs(burst), mem, die_after=5, dead=True)
    t0 = time.time()
    code, j, err = batch("openocd:127.0.0.1:%d,swo=168M,trace=%d" % (srv.port, harness.free_port()))
    took = time.time() - t0
    srv.stop()
    check("openocd swo=: OpenOCD killed mid-set-up: its reason, non-zero exit, within 5 s",
          code != 0 and "OpenOCD closed the connection" in err and took < 5, "exit %d after %.1f s, %s" % (
              code, took, err.strip()[-200:]))


def swo_exits(burst):
    """While the trace runs: SIGINT, SIGTERM, q end the tool within 2 s with every register put
    back; Ctrl-Z (SIGTSTP) puts them back while stopped, SIGCONT sets the trace up again."""
    for how in ("SIGINT", "SIGTERM", "q"):
        mem = swo_target(dbgmcu=how != "q")
        srv = SwoServer(itm_pcs(burst * 50), mem)
        proc, master = start_tool("openocd:127.0.0.1:%d,swo=168M,trace=%d" % (srv.port, harness.free_port()), how)
        began = wait_for(lambda: srv.trace_conns > 0, 15)
        time.sleep(0.3)
        dt = exit_seconds(proc, master, how)
        time.sleep(0.2)
        srv.stop()
        changed = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
        check("openocd swo=: %s while the trace runs: exit within 2 s, every register put back%s" % (
              how, "" if how != "q" else " (a part without DBGMCU_CR)"),
              began and dt is not None and dt < 2.0 and not changed,
              "trace connected %s, exit after %s s, changed %s" % (began, dt, changed))
    mem = swo_target()
    srv = SwoServer(itm_pcs(burst * 50), mem)
    proc, master = start_tool("openocd:127.0.0.1:%d,swo=168M,trace=%d" % (srv.port, harness.free_port()), "SIGINT")
    began = wait_for(lambda: srv.trace_conns > 0, 15)
    proc.send_signal(signal.SIGTSTP)
    # the registers right after the stop's restore (a process group without a terminal is not
    # stopped by the kernel: the tool may set the trace up again at once)
    restored = wait_for(lambda: srv.restores, 5) and srv.restores[0] == srv.first
    at_stop = "%s, last sent %s" % ({hex(a): (hex(srv.first[a]), hex(v)) for a, v in
                                     (srv.restores[0] if srv.restores else mem).items() if srv.first[a] != v},
                                    kinds(srv.log)[-2:])
    proc.send_signal(signal.SIGCONT)
    again = wait_for(lambda: srv.trace_conns > 1 and mem[DWT_CTRL] == 0x40001611, 10)
    dt = exit_seconds(proc, None, "SIGINT")
    time.sleep(0.2)
    srv.stop()
    changed = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
    check("openocd swo=: Ctrl-Z puts every register back, fg sets the trace up again, SIGINT restores at exit",
          began and restored and again and dt is not None and not changed,
          "trace %s, restored when stopped %s (%s), set up again %s, exit after %s s, changed %s, %s" % (
              began, restored, at_stop, again, dt, changed, proc.stderr.read().decode().strip()[-300:]))


def swo_ctrl_z_in_a_shell(burst):
    """The live view as a shell's foreground job, really stopped by Ctrl-Z: while it is stopped
    every register holds what the tool first found; fg (SIGCONT) sets the trace up again; SIGTERM
    ends it with every register put back."""
    from live_pty import ShellLive
    mem = swo_target()
    srv = SwoServer(itm_pcs(burst * 50), mem)
    live = ShellLive(["openocd:127.0.0.1:%d,swo=168M,trace=%d" % (srv.port, harness.free_port()), ELF])

    def state():
        try:
            return open("/proc/%d/stat" % live.tool).read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return "gone"
    began = wait_for(lambda: srv.trace_conns > 0, 15)
    os.kill(live.tool, signal.SIGTSTP)
    stopped = wait_for(lambda: state() == "T", 2)
    time.sleep(0.3)  # stopped: nothing more can come from the tool
    while_stopped = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
    os.kill(live.tool, signal.SIGCONT)
    again = wait_for(lambda: srv.trace_conns > 1 and mem[DWT_CTRL] == 0x40001611, 10)
    os.kill(live.tool, signal.SIGTERM)
    code, took = live.finish()
    time.sleep(0.2)
    srv.stop()
    changed = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
    check("openocd swo=, live view in a shell: Ctrl-Z stops it with every register as found, fg sets the trace up "
          "again, SIGTERM exits 143 with every register put back",
          began and stopped and not while_stopped and again and code == 143 and not changed,
          "trace %s, stopped %s, changed while stopped %s, set up again %s, exit %s after %.2f s, changed %s" % (
              began, stopped, while_stopped, again, code, took, changed))


def swo_options():
    """Bad swo= options are refused at once in one line; a server with no TPIU object is named."""
    for spec, said in (("openocd:localhost,swo=fast", "swo=CLOCK"), ("openocd:localhost,swo=168M,period=100", "period=100"),
                       ("openocd:localhost,period=1024", "need swo=CLOCK"), ("openocd:localhost,swo=8M,tpiu=a;b", "tpiu=NAME"),
                       ("openocd:localhost:0,swo=8M", "openocd:HOST"),
                       # the last of two values won silently before
                       ("openocd:localhost,swo=168M,swo=8M", "'swo' given twice"),
                       ("openocd:localhost,swo=8M,trace=4444,trace=/tmp/swo.bin", "'trace' given twice")):
        r = subprocess.run([TOOL, "--batch", spec, ELF], capture_output=True, text=True)
        check("openocd swo=: '%s' refused at once, in one line" % spec, r.returncode != 0 and said in r.stderr and
              "not reached" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr.strip())
    srv = SwoServer(b"", swo_target(), names="")
    code, j, err = batch("openocd:127.0.0.1:%d,swo=168M" % srv.port)
    srv.stop()
    check("openocd swo=: no TPIU object in OpenOCD: says so and how to name one, non-zero exit",
          code != 0 and "no TPIU/SWO object" in err and "tpiu=NAME" in err, err.strip())


def swo_real_openocd():
    """Debian's openocd 0.12 with no probe (dummy adapter, noinit) but a DAP, a TPIU object and a
    Cortex-M target declared as a target configuration does: its own tpiu configure/enable and itm
    port take the tool's commands (enable is deferred to an init that never comes, so no trace
    port opens); memory is a Tcl array behind read_memory/mww procs. Every command is accepted, the
    run ends naming the missing trace port, and the restore (Jim Tcl's foreach and compare) writes
    back exactly the registers the set-up changed."""
    if not shutil.which("openocd"):
        check("openocd installed (scripts/deps.sh)", False, "apt-get install openocd")
        return
    port, tport = harness.free_port(), harness.free_port()
    mem = swo_target()
    regs = " ".join("0x%08x 0x%x" % (a, v) for a, v in sorted(mem.items()))
    stubs = ("array set ::mem {%s}; set ::writes {}; "
             "proc read_memory {a w c} {set k [format 0x%%08x $a]; if {![info exists ::mem($k)]} {error {Error: Failed to read memory}}; "
             "return [format 0x%%x $::mem($k)]}; "
             "proc mww {a v} {set k [format 0x%%08x $a]; lappend ::writes $k; set ::mem($k) [expr {$v + 0}]; return {}}" % regs)
    oo = subprocess.Popen(["openocd", "-c", "adapter driver dummy", "-c", "transport select jtag", "-c",
                           "jtag newtap chip cpu -irlen 4 -expected-id 0", "-c", "dap create chip.dap -chain-position chip.cpu",
                           "-c", "tpiu create chip.tpiu -dap chip.dap -ap-num 0 -baseaddr 0xE0040000", "-c",
                           "target create chip.cpu cortex_m -dap chip.dap", "-c", "tcl_port %d" % port, "-c",
                           "telnet_port disabled", "-c", "gdb_port disabled", "-c", "noinit", "-c", stubs],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 5)
        code, j, err = batch("openocd:127.0.0.1:%d,swo=168M,trace=%d" % (port, tport))
        check("real openocd 0.12: tpiu names/cget/configure/enable, itm port, mww all accepted; the run ends naming "
              "the trace port that never opened", code != 0 and "no trace from OpenOCD's port 127.0.0.1:%d" % tport in err
              and "refused" not in err.replace("Connection refused", ""), err.strip()[-300:])
        cfg = tcl(port, "chip.tpiu cget -traceclk") + " " + tcl(port, "chip.tpiu cget -pin-freq") + " " + tcl(
            port, "chip.tpiu cget -output")
        check("real openocd 0.12: its TPIU object holds the tool's settings (UART at 2 MHz, trace on the port asked)",
              cfg == "168000000 2000000 :%d" % tport, cfg)
        now = dict(zip(*[iter(tcl(port, "array get ::mem").split())] * 2))
        now = {int(k, 16): int(v, 0) for k, v in now.items()}
        writes = tcl(port, "set ::writes").split()
        check("real openocd 0.12 (Jim Tcl): the restore script runs, every register as found, only the 3 changed ones "
              "written back", now == mem and len(writes) == 6 and sorted(writes[:3]) == sorted(writes[3:]),
              "writes %s, changed %s" % (writes, {hex(a): hex(v) for a, v in now.items() if mem.get(a) != v}))
        tcl(port, "shutdown")
        oo.wait(timeout=10)
    finally:
        if oo.poll() is None:
            oo.kill()
            oo.wait()


def host_doc_swo_recipe():
    """docs/host.md's SWO-server row for OpenOCD, run as printed against Debian's openocd 0.12 and its
    target/stm32f4x.cfg (dummy adapter, no init): it said `$_TARGETNAME.tpiu configure -output :3344`,
    which 0.12 refuses (invalid command name "stm32f4x.cpu.tpiu": the object is stm32f4x.tpiu) and
    which left the protocol and trace clock unset. Every command but init and enable is run."""
    if not shutil.which("openocd"):
        check("openocd installed (scripts/deps.sh)", False, "apt-get install openocd")
        return
    row = [ln for ln in open(os.path.join(ROOT, "docs", "host.md")) if ln.startswith("| OpenOCD")]
    m = re.search(r'-c "([^"]*)"', row[0]) if row else None
    cmds = [c.strip() for c in m.group(1).split(";")] if m else []
    setup = [c for c in cmds if c != "init" and not c.endswith(" enable")]
    tpiu = setup[0].split()[0] if setup else "?"
    script = "; ".join(setup) + "; echo \"got [%s cget -protocol] [%s cget -traceclk] [%s cget -output]\"" % (
        tpiu, tpiu, tpiu)
    r = subprocess.run(["openocd", "-f", "interface/dummy.cfg", "-f", "target/stm32f4x.cfg", "-c",
                        "gdb_port disabled; tcl_port disabled; telnet_port disabled", "-c", script, "-c", "shutdown"],
                       capture_output=True, text=True, timeout=30)
    got = [ln for ln in r.stderr.splitlines() if ln.startswith("got ") or "invalid command" in ln]
    check("docs/host.md's OpenOCD SWO recipe: accepted by openocd 0.12 with target/stm32f4x.cfg, UART protocol, "
          "trace clock and output port set", got == ["got uart 168000000 :3344"] and cmds[-1:] == [tpiu + " enable"],
          "%s: %s" % (cmds, got))


def swo_trace_file(burst):
    """trace=/PATH: OpenOCD writes the trace to a file (read from its end: what was there before is
    not this run's) or a named pipe; counted exactly, registers put back."""
    import tempfile
    d = tempfile.mkdtemp()
    try:
        for kind in ("file", "fifo"):
            path = os.path.join(d, "trace." + kind)
            if kind == "fifo":
                os.mkfifo(path)
            else:
                with open(path, "wb") as f:
                    f.write(itm_pcs([nm("hot_c")] * 500))  # an earlier run's
            mem = swo_target()
            srv = SwoServer(itm_pcs(burst * 10), mem)
            code, j, err = batch("openocd:127.0.0.1:%d,swo=168M,trace=%s" % (srv.port, path), "--samples", "600")
            time.sleep(0.2)
            srv.stop()
            rows = {x["name"]: x["samples"] for x in j.get("rows", [])}
            changed = {hex(a): (hex(srv.first[a]), hex(v)) for a, v in mem.items() if srv.first[a] != v}
            check("openocd swo=, trace=/PATH (a %s): counted exactly, every register put back" % kind,
                  code == 0 and rows == {"hot_a": 300, "hot_b": 200, "hot_c": 100} and not changed,
                  "exit %d, %s, changed %s, %s" % (code, rows, changed, err.strip()[-200:]))
    finally:
        shutil.rmtree(d)


def main():
    if not os.path.exists(ELF):
        check("gdb_loops ELF built (run scenarios/scen.py first)", False, ELF)
        return 1
    if sys.argv[1:]:  # only the named groups, e.g. failed_and_back
        a, b, c = nm("hot_a"), nm("hot_b"), nm("hot_c")
        burst = [a + 4] * 30 + [b + 2] * 20 + [c + 6] * 10 + [0xFFFFFFFF] * 4
        for name in sys.argv[1:]:
            globals()[name](*([] if name in ("real_openocd", "swo_options", "swo_real_openocd", "host_doc_swo_recipe") else [burst]))
        return 1 if harness.failed else 0
    real_openocd()
    a, b, c = nm("hot_a"), nm("hot_b"), nm("hot_c")
    burst = [a + 4] * 30 + [b + 2] * 20 + [c + 6] * 10 + [0xFFFFFFFF] * 4  # 64 reads

    r = TclResponder(burst, demcr=0x00000000)
    code, j, err = batch("openocd:127.0.0.1:%d" % r.port, "--samples", "600")
    r.thread.join(5)
    rows = {x["name"]: x["samples"] for x in j.get("rows", [])}
    check("openocd: PCSR bursts counted exactly (30:20:10 a burst), 0xFFFFFFFF as sleep",
          code == 0 and rows == {"hot_a": 300, "hot_b": 200, "hot_c": 100} and j.get("sleep") == 40,
          "exit %d, %s, sleep %s, %s" % (code, rows, j.get("sleep"), err.strip()))
    writes = [x for x in r.log if "write_memory" in x]
    check("openocd: DEMCR.TRCENA set to sample, then put back as it was",
          len(writes) == 2 and "0x01000000" in writes[0] and "0x00000000" in writes[1] and r.demcr == 0, writes)
    check("openocd: samples/s and the cost of a burst reported", "PCSR" in j.get("source_detail", "") and
          "ms a burst" in j.get("source_detail", ""), j.get("source_detail"))

    r = TclResponder([0xFFFFFFFF] * 64)  # a core that never runs (halted by another debugger, held in reset)
    code, j, err = batch("openocd:127.0.0.1:%d" % r.port, "--duration", "1")
    r.thread.join(5)
    check("openocd: every PCSR read 0xFFFFFFFF: no samples, and why (the core asleep or halted), reads/s not "
          "'samples/s' (it named no cause, and a rate of samples that were none)",
          code == 2 and re.search(r"PCSR \d+ reads/s", err) and "samples/s" not in err and
          re.search(r"all \d+ reads found the core asleep or halted \(PC 0xFFFFFFFF", err), err.strip()[-300:])

    r = TclResponder(burst, demcr=0x01000000)
    code, j, err = batch("openocd:127.0.0.1:%d" % r.port, "--samples", "60")
    r.thread.join(5)
    check("openocd: DEMCR left alone when trace was already on", code == 0 and
          not any("write_memory" in x for x in r.log), [x for x in r.log if "memory" in x][:3])

    r = TclResponder(burst, pcsr_zero=True)
    code, j, err = batch("openocd:127.0.0.1:%d" % r.port, "--samples", "30")
    r.thread.join(5)
    check("openocd: a PCSR that reads 0 (not implemented): falls back to halting, and says so",
          code == 0 and j.get("total") == 30 and r.halts >= 30 and "no PCSR: halting" in j.get("source_detail", ""),
          "exit %d, total %s, halts %d, %s" % (code, j.get("total"), r.halts, j.get("source_detail")))

    r = TclResponder(burst, refuse_write=True)
    code, j, err = batch("openocd:127.0.0.1:%d" % r.port, "--duration", "1")
    check("openocd: a refused write is named, non-zero exit", code != 0 and "OpenOCD refused enabling DWT" in err,
          err.strip())

    resume_after_failed_read()
    restored_after_a_drop(burst)
    failed_and_back(burst)
    slow_replies(burst)
    hostile_servers(burst)
    swo_setup(burst)
    swo_options_set(burst)
    swo_dies(burst)
    swo_exits(burst)
    swo_ctrl_z_in_a_shell(burst)
    swo_options()
    swo_trace_file(burst)
    swo_real_openocd()
    host_doc_swo_recipe()

    r = subprocess.run([TOOL, "--batch", "openocd:127.0.0.1:0", ELF], capture_output=True, text=True)
    check("openocd: a malformed address is refused at once, in one line", r.returncode != 0 and
          "openocd:HOST" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr.strip())
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
