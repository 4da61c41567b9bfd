#!/usr/bin/env python3
"""Field hardening (issue 35): files the tool writes never go over what it reads or over an existing
file (--record, --force); every stopping signal (and q) ends the run within 2 s through the same
close, leaving the target running; --batch on a network source always ends; a source that fails
mid-run gives a partial report and a non-zero exit; a snapshot that cannot be written leaves no
file; --task-var refuses what is no pointer. Servers are scripted stubs on 127.0.0.1.
Prints one ok/FAIL line per check."""
import fcntl
import json
import os
import pty
import resource
import select
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
from live_pty import Live, ShellLive, wait_exit  # noqa: E402
from harness import check  # noqa: E402

TOOL = os.path.abspath(os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top")))
SCEN = os.path.join(ROOT, "build", "scenarios")
ELF = os.path.join(SCEN, "gdb_loops", "fw.elf")
STREAM = os.path.join(SCEN, "stream")
WORK = harness.scratch("field-test")
HANG = 30          # seconds: only a hang reaches it
EXIT_WITHIN = 2.0  # the bound, from the signal to the process's end
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def pc_of(name, elf=ELF):
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16) & ~1
    raise KeyError(name)


def rsp(payload):
    """A GDB remote-protocol packet."""
    return b"$%s#%02x" % (payload, sum(payload) & 0xFF)


INTERRUPT = b"\x03"


def split_packets(buf):
    """The interrupts and packet payloads at the front of buf, and the unfinished rest; acks and
    noise between packets are dropped."""
    items = []
    while buf:
        end = buf.find(b"#") if buf[:1] == b"$" else 0
        if buf[:1] == INTERRUPT:
            items.append(INTERRUPT)
        elif buf[:1] == b"$" and (end < 0 or len(buf) < end + 3):
            break  # the rest of this packet is still on its way
        elif buf[:1] == b"$":
            items.append(buf[1:end])
            buf = buf[end + 2:]
        buf = buf[1:]
    return items, buf


class GdbStub:
    """A GDB server for one connection that answers the halting sampler: PCs from a list, 'S05' to
    '?', a stop reply to each interrupt. flood: 'O' console packets without pause while the target
    runs (as a chatty semihosting target makes them). close_after: hang up after that many PCs.
    Records each request, and whether the target was left running when the client hung up."""

    def __init__(self, pcs, flood=False, close_after=None, offer_noack=True, stall_after=None, connections=1,
                 bad=None, pace=0.0):
        self.pace = pace  # flood: one O packet every `pace` seconds (0: without pause)
        self.pcs, self.flood, self.close_after, self.offer_noack = pcs, flood, close_after, offer_noack
        self.bad = bad  # a protocol error on every connection: see broken()
        self.stall_after, self.connections = stall_after, connections  # stall: half a reply, then silence
        self.log, self.samples, self.conns = [], 0, 0
        self.running = self.noack = False
        self.running_at_close = None  # None: the client never hung up
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=1)
        self.spec = "gdb:127.0.0.1:%d" % self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def answer(self, pkt):
        if pkt.startswith(b"qSupported"):
            return b"PacketSize=1000;QStartNoAckMode+" if self.offer_noack else b"PacketSize=1000"
        if pkt == b"QStartNoAckMode":
            return b"OK"
        if pkt == b"?":
            return b"S05"
        if pkt == b"c":
            self.running = True
            return None
        if pkt == b"D":
            self.running = True  # detached: the target runs
            return b"OK"
        if pkt.startswith(b"p") and int(pkt[1:] or b"0", 16) == 15:
            pc = self.pcs[self.samples % len(self.pcs)]
            self.samples += 1
            return pc.to_bytes(4, "little").hex().encode()
        return b""

    def broken(self, pkt, reply):
        """The packet for reply, framed, or broken as self.bad says: 'checksum' (every reply's checksum
        wrong), 'nonhex' (a PC of non-hex digits), 'rle' (a PC whose run-length count has nothing to
        repeat), 'big_qsupported' (1 MiB of features), 'never_stops' (see serve_one: no stop reply)."""
        framed = rsp(reply)
        if self.bad == "checksum":
            return framed[:-2] + b"%02x" % ((sum(reply) + 1) & 0xFF)
        if self.bad == "nonhex" and pkt.startswith(b"p"):
            return rsp(b"zzzzzzzz")
        if self.bad == "rle" and pkt.startswith(b"p"):
            return rsp(b"*\"00000000")
        if self.bad == "big_qsupported" and pkt.startswith(b"qSupported"):
            return rsp(reply + b";" + b"x" * (1 << 20))
        return framed

    def serve(self):
        """connections in turn (one by default: a reconnect is refused)"""
        try:
            for k in range(self.connections):
                conn, _ = self.listener.accept()
                if k + 1 == self.connections:
                    self.listener.close()  # the last one: a reconnect is refused
                self.conns += 1
                self.noack = False  # a new client starts in ack mode
                self.serve_one(conn)
        finally:
            self.listener.close()

    def serve_one(self, conn):
        conn.setblocking(False)
        chatter = rsp(b"O" + b"console output from the target\n".hex().encode()) * 64
        buf, out, deaf = b"", b"", False
        try:
            while True:
                want_out = not deaf and (bool(out) or (self.flood and self.running))
                r, w, _ = select.select([conn], [conn] if want_out else [], [], 5)
                if w:
                    try:
                        out = out or (chatter[:len(chatter) // 64] if self.pace else chatter)
                        out = out[conn.send(out):]
                        time.sleep(self.pace)  # (a trickle: each read of the tool finds a little)
                    except OSError:  # the client is gone: still read what it sent before
                        deaf = True
                if not r:
                    continue
                data = conn.recv(65536)
                if not data:
                    self.running_at_close = self.running
                    return
                items, buf = split_packets(buf + data)
                for pkt in items:
                    if pkt == INTERRUPT:
                        self.log.append("^C")
                        if self.bad != "never_stops":
                            self.running = False
                            out += rsp(b"T02")
                        continue
                    self.log.append(pkt.decode("latin-1"))
                    reply = self.answer(pkt)
                    out += (b"" if self.noack else b"+") + (self.broken(pkt, reply) if reply is not None else b"")
                    self.noack |= pkt == b"QStartNoAckMode"
                    if self.stall_after is not None and self.conns == 1 and self.samples >= self.stall_after:
                        out += b"$T05thread:01;"  # mid-packet, and never more on this connection
                        conn.setblocking(True)
                        conn.sendall(out)
                        while conn.recv(65536):
                            pass
                        self.running_at_close = self.running
                        return
                    if self.close_after is not None and self.samples >= self.close_after:
                        conn.setblocking(True)
                        conn.sendall(out)
                        self.running_at_close = self.running
                        return
        except OSError:
            return
        finally:
            conn.close()

    def wait_samples(self, n, seconds=15):
        end = time.monotonic() + seconds
        while self.samples < n and time.monotonic() < end:
            time.sleep(0.02)
        return self.samples >= n


def stop(p, sig):
    """Send sig to a batch run: (exit code or None, seconds from the signal to the end, stdout, stderr)."""
    p.send_signal(sig)  # (it polls first: a process already ended is reaped there)
    code, took = (p.returncode, 0.0) if p.returncode is not None else wait_exit(p.pid, HANG)
    if code is None:
        p.kill()
        p.wait()
    p.returncode = code  # reaped above: Popen must not wait again
    out, err = p.stdout.read().decode(errors="replace"), p.stderr.read().decode(errors="replace")
    try:
        return code, took, json.loads(out), err
    except ValueError:
        return code, took, {}, err


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def wait_until(cond, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def suspend_cycles(pid, tries, target_running, back, live=None, marker="hot_a"):
    """SIGTSTP, then SIGCONT, tries times: [(stopped within 2 s, the target running while stopped,
    the samples going on after SIGCONT, the view released and repainted)]."""
    results = []
    for _ in range(tries):
        mark = len(live.out) if live else 0
        t0 = time.monotonic()
        os.kill(pid, signal.SIGTSTP)
        stopped = wait_until(lambda: proc_state(pid) == "T", EXIT_WITHIN)
        took = time.monotonic() - t0
        time.sleep(0.3)  # stopped a while: the target must run all of it
        running = stopped and proc_state(pid) == "T" and target_running()
        # the terminal's own screen back (written before the stop; the reader thread may lag behind)
        released = not live or wait_until(lambda: b"\x1b[?1049l" in live.out[mark:], 2)
        got = live.out[mark:] if live else b""
        mark = len(live.out) if live else 0
        os.kill(pid, signal.SIGCONT)
        going = back()
        repainted = not live or wait_until(lambda: marker.encode() in live.out[mark:], 5)
        seen = "" if released and repainted else "released %s (%r), repainted %s (%r)" % (
            released, got[-120:], repainted, live.out[mark:][:400])
        results.append((stopped, running, going, released and repainted, took, seen))
    return results



def start_for_job_control(mode, args):
    """The tool in batch (its own process group, as a shell's job) or in the live view: the Popen
    (batch) or None, the tool's pid, and the live view's shell (or None)."""
    if mode == "batch":
        p = subprocess.Popen([TOOL, "--batch", "-o", "json"] + args, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, process_group=0)
        return p, p.pid, None
    live = ShellLive(args)
    return None, live.tool, live

def job_control_tests():
    """Ctrl-Z (SIGTSTP, then SIGCONT) in batch and live mode, against the GDB stub and the OpenOCD
    stub: the target running (the GDB server's client gone after 'D' or 'c'; DEMCR as found and no
    halt pending) the whole time the tool is stopped, the samples going on after SIGCONT, the view
    giving the terminal back and repainting; then SIGTERM still ends the run as usual."""
    import test_openocd
    pcs = [pc_of("hot_a") + 4, pc_of("hot_b") + 2]
    tries = 4
    for mode in ("batch", "live"):
        stub = GdbStub(pcs, connections=tries + 1)
        args = ["--rate", "max", stub.spec, ELF]
        p, pid, live = start_for_job_control(mode, args)
        started = stub.wait_samples(20)
        k = [1]

        def gdb_running():
            return stub.conns == k[0] and stub.running_at_close is True

        def gdb_back():
            k[0] += 1
            n = stub.samples
            return wait_until(lambda: stub.conns == k[0] and stub.samples > n + 5, 10)
        res = suspend_cycles(pid, tries, gdb_running, gdb_back, live)
        if mode == "batch":
            code, took, j, err = stop(p, signal.SIGTERM)
        else:
            os.kill(pid, signal.SIGTERM)
            code, took = live.finish()
        check("%s on a GDB server, Ctrl-Z then SIGCONT %d times: stopped within %g s with the target running "
              "(detached), sampling again after SIGCONT%s; SIGTERM still exits 143" % (
                  mode, tries, EXIT_WITHIN, ", the terminal released and the view repainted" if live else ""),
              started and all(all(r[:4]) for r in res) and code == 143,
              "started %s, (stopped, running, going on, view) %s, exit %s, connections %d, log %s" % (
                  started, [r[:4] + ("%.2f s" % r[4],) + ((r[5],) if r[5] else ()) for r in res], code, stub.conns, stub.log[-4:]))

    burst = [pc_of("hot_a") + 4] * 30 + [0xFFFFFFFF] * 2
    for mode in ("batch", "live"):
        target = test_openocd.Target(0)
        srv = test_openocd.HostileServer(burst, target, lambda conn, n: "answer")
        spec = "openocd:127.0.0.1:%d" % srv.port
        if mode == "batch":
            p = subprocess.Popen([TOOL, "--batch", "-o", "json", spec, ELF], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, process_group=0)
            pid, live = p.pid, None
        else:
            live = ShellLive([spec, ELF])
            pid = live.tool
        started = wait_until(lambda: len(srv.log) > 10, 10)

        def ocd_restored():
            return target.mem[test_openocd.DEMCR] == 0

        def ocd_back():
            n = len(srv.log)
            return wait_until(lambda: len(srv.log) > n + 5 and target.mem[test_openocd.DEMCR] != 0, 10)
        res = suspend_cycles(pid, 3, ocd_restored, ocd_back, live)
        if mode == "batch":
            code, took, j, err = stop(p, signal.SIGTERM)
        else:
            os.kill(pid, signal.SIGTERM)
            code, took = live.finish()
        srv.stop()
        check("%s on OpenOCD, Ctrl-Z then SIGCONT 3 times: stopped within %g s with DEMCR as found, sampling "
              "again after SIGCONT; SIGTERM exits 143 with DEMCR as found" % (mode, EXIT_WITHIN),
              started and all(all(r[:4]) for r in res) and code == 143 and target.mem[test_openocd.DEMCR] == 0,
              "started %s, (stopped, restored, going on, view) %s, exit %s, DEMCR %#x, connections %d" % (
                  started, [r[:4] + ("%.2f s" % r[4],) + ((r[5],) if r[5] else ()) for r in res], code, target.mem[test_openocd.DEMCR],
                  srv.conns))


class Monitor:
    """QEMU's human monitor on a TCP port: the VM's run state ("paused": halted by a debugger)."""

    def __init__(self, port):
        self.sock = None
        for _ in range(100):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                time.sleep(0.05)
        self.until_prompt()

    def until_prompt(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            data = self.sock.recv(4096)
            if not data:
                break
            buf += data
        return buf.decode(errors="replace")

    def status(self):
        self.sock.sendall(b"info status\n")
        text = self.until_prompt()
        return "running" if "VM status: running" in text else "paused" if "VM status: paused" in text else text


def qemu_job_control_tests():
    """Ctrl-Z with real QEMU's gdbstub, batch and live: QEMU's monitor says the VM runs the whole time
    the tool is stopped; after SIGCONT the tool halts it again to sample; SIGTERM leaves it running."""
    elf = subprocess.run([sys.executable, os.path.join(ROOT, "scenarios", "scen.py"), "build-demo-plain"],
                         capture_output=True, text=True, check=True).stdout.strip()
    tries = 5
    for mode in ("batch", "live"):
        gport, mport = harness.free_port(), harness.free_port()
        q = subprocess.Popen(["qemu-system-arm", "-M", "netduinoplus2", "-display", "none", "-serial", "null",
                              "-icount", "shift=0", "-kernel", elf, "-gdb", "tcp:127.0.0.1:%d" % gport,
                              "-monitor", "tcp:127.0.0.1:%d,server=on,wait=off" % mport],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            mon = Monitor(mport)
            spec = "gdb:127.0.0.1:%d" % gport
            args = ["--rate", "max", spec, elf]
            p, pid, live = start_for_job_control(mode, args)
            seen = []

            def halts_again():  # the tool samples: the VM is seen paused (debug) now and then
                seen.clear()
                return wait_until(lambda: seen.append(mon.status()) or seen[-1] == "paused", 10)
            started = halts_again()
            res = suspend_cycles(pid, tries, lambda: mon.status() == "running", halts_again, live, marker=spec)
            if mode == "batch":
                code, took, j, err = stop(p, signal.SIGTERM)
            else:
                os.kill(pid, signal.SIGTERM)
                code, took = live.finish()
                j, err = {}, ""
            end = wait_until(lambda: mon.status() == "running", 2) and mon.status()
            check("QEMU, %s, Ctrl-Z then SIGCONT %d times: the VM running whenever the tool is stopped, halted "
                  "for samples again after SIGCONT%s; SIGTERM exits 143, the VM left running" % (
                      mode, tries, ", the view repainted" if live else ""),
                  started and all(all(r[:4]) for r in res) and code == 143 and end == "running" and
                  (live or j.get("total", 0) > 0),
                  "sampling %s, (stopped, running, going on, view) %s, exit %s after %.2f s, VM %s, total %s, %s" % (
                      started, [r[:4] + ("%.2f s" % r[4],) + ((r[5],) if r[5] else ()) for r in res], code, took, end, j.get("total"),
                      err.strip()[-200:]))
        finally:
            q.kill()
            q.wait()


def sampling(start, end, pcs, flood, noack, n):
    """A GdbStub and the tool that start(stub) runs on it, once the stub has answered n PCs: (stub,
    tool, whether it did, the samples of the attempts the tool gave up). A flooding stub, starved of
    the CPU with the tool, can miss the tool's 2 s for a stop reply: the tool then gives the server up
    (the reconnect is refused) before it has n, and the attempt is made again (up to 3 in all), the
    tool's own end(tool) first; a tool still connected at the deadline is the failure it was."""
    gave_up = []
    for _ in range(3):
        stub = GdbStub(pcs, flood=flood, offer_noack=noack)
        tool = start(stub)
        wait_until(lambda: stub.samples >= n or not stub.thread.is_alive(), 60)
        if stub.samples >= n or stub.thread.is_alive():
            break
        gave_up.append(stub.samples)
        end(tool)
    return stub, tool, stub.samples >= n, " (the tool gave up %d attempts, at %s samples)" % (len(gave_up), gave_up) if gave_up else ""


def stop_tests():
    """Item 3: SIGINT, SIGTERM, SIGHUP, SIGQUIT and q, in batch and live mode, against a polite GDB
    server and one flooding 'O' packets: out within 2 s, the target left running ('c' or 'D')."""
    pcs = [pc_of("hot_a") + 4, pc_of("hot_b") + 2]
    # in ack mode a flood is still unread when the tool closes: the close must not reset the
    # connection before the server has its 'D' or 'c'. --rate max: a flood makes each halt slow, and
    # the gentle default would then take its 20 samples too slowly for this test of the close.
    for flood, noack in ((False, True), (True, True), (True, False)):
        kind = ("a server flooding O packets" if flood else "a polite server") + ("" if noack else " in ack mode")
        for sig in STOPS:
            name = signal.Signals(sig).name
            # the 21st PC asked for: the 20th sample is the tool's (the stub counts a PC when it answers, and
            # a signal right after the 20th answer could end the run before the tool had it: 19 reported)
            stub, p, started, gave_up = sampling(lambda stub: subprocess.Popen(
                [TOOL, "--batch", "-o", "json", "--rate", "max", stub.spec, ELF], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE), lambda p: (p.kill(), p.wait()), pcs, flood, noack, 21)
            code, took, j, err = stop(p, sig)
            stub.thread.join(5)
            check("batch, %s, %s: ends within %g s, exit %d, the report marked interrupted, the target left "
                  "running" % (kind, name, EXIT_WITHIN, 128 + sig),
                  started and code == 128 + sig and took < EXIT_WITHIN and j.get("interrupted") == name and
                  j.get("total", 0) >= 20 and stub.running_at_close is True,
                  "started %s%s, exit %s after %.2f s, interrupted %s, total %s, running at close %s, last %s, %s" % (
                      started, gave_up, code, took, j.get("interrupted"), j.get("total"), stub.running_at_close,
                      stub.log[-3:], err.strip()[-200:]))
        for sig in STOPS + ("q",):
            name = signal.Signals(sig).name if sig != "q" else "key q"
            # (a precondition with a deadline for a loaded machine: it returns as soon as it holds)
            stub, live, sampled, gave_up = sampling(lambda stub: Live(["--rate", "max", stub.spec, ELF]),
                                                    lambda live: (os.kill(live.pid, signal.SIGKILL), live.finish()),
                                                    pcs, flood, noack, 20)
            shown = live.shown("hot_a", 60)
            started = sampled and shown
            t0 = time.monotonic()
            if sig == "q":
                live.keys("q")
            else:
                os.kill(live.pid, sig)
            code, took = live.finish()
            took = time.monotonic() - t0 if code is not None else took
            stub.thread.join(5)
            want = 0 if sig in ("q", signal.SIGINT) else 128 + sig
            check("live view, %s, %s: ends within %g s, exit %d, the target left running" % (
                kind, name, EXIT_WITHIN, want),
                started and code == want and took < EXIT_WITHIN and stub.running_at_close is True,
                "20 samples %s%s, shown %s, exit %s after %.2f s, running at close %s, last %s" % (
                    sampled, gave_up, shown, code, took, stub.running_at_close, stub.log[-3:]))


def unreachable_quit_test():
    """Item 3: q ends the live view within 2 s also while it keeps trying a server that never
    answers."""
    sockets, port, unanswered = unanswering_server()
    live = Live(["gdb:127.0.0.1:%d" % port, ELF])
    up = live.shown("reconnecting", 10)
    time.sleep(1.5)  # well into an attempt
    t0 = time.monotonic()
    live.keys("q")
    code, took = live.finish()
    took = time.monotonic() - t0
    for s in sockets:
        s.close()
    check("live view trying a gdb: server that never answers: q ends it within %g s" % EXIT_WITHIN,
          unanswered and up and code == 0 and took < EXIT_WITHIN, "queue full %s, view up %s, exit %s after %.2f s" % (
              unanswered, up, code, took))


def stdin_stop_tests():
    """Item 12: a batch on standard input (a stream from nc, say) stopped by a signal reports what it
    read, marked interrupted, with exit 128 + N."""
    data = open(os.path.join(STREAM, "uart.txt"), "rb").read()
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = subprocess.Popen([TOOL, "--batch", "-o", "json", "-", os.path.join(STREAM, "fw.elf")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(data[:len(data) // 2])  # half a capture, and the pipe stays open
        p.stdin.flush()
        # the tool has read it all (a fixed second was too short for a start on a busy machine: the
        # signal came before the tool had read a byte, or before it had started)
        # (fread then holds them: the signal ends its wait for more, and what it read is fed on)
        read = wait_until(lambda: unread(p.stdin) == 0, HANG)
        code, took, j, err = stop(p, sig)
        p.stdin.close()
        name = signal.Signals(sig).name
        check("batch on stdin stopped by %s: the samples read so far, marked interrupted, exit %d" % (name, 128 + sig),
              read and code == 128 + sig and took < EXIT_WITHIN and j.get("interrupted") == name and j.get("total", 0) > 0,
              "read %s, exit %s after %.2f s, %r, total %s" % (read, code, took, err.strip(), j.get("total")))


def unread(pipe):
    """The bytes written to a pipe that its reader has not read yet."""
    return struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def run(args, seconds=HANG, cwd=None):
    """(exit code or None on a hang, stdout, stderr, seconds taken)."""
    t0 = time.monotonic()
    try:
        r = subprocess.run([TOOL] + args, capture_output=True, text=True, timeout=seconds, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, "", "hung for %d s" % seconds, time.monotonic() - t0
    return r.returncode, r.stdout, r.stderr, time.monotonic() - t0


def unanswering_server():
    """A port whose connections are never answered (as a host out of reach): a listener whose accept
    queue is full, so a further handshake waits. (its sockets, the port, whether it works so)"""
    full = socket.create_server(("127.0.0.1", 0), backlog=0)
    sockets = [full]
    for _ in range(4):  # fill the queue; a connect beyond it hangs rather than completes
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(full.getsockname())
        sockets.append(s)
    time.sleep(0.2)
    with socket.socket() as probe:
        probe.settimeout(1.5)
        unanswered = probe.connect_ex(full.getsockname()) != 0
    return sockets, full.getsockname()[1], unanswered


def batch_end_tests():
    """Items 11 and 12: --batch on network sources ends with its source; failures are said and
    marked partial; refused and unanswered connections give up after --connect-timeout."""
    data = open(os.path.join(STREAM, "uart.txt"), "rb").read()
    elf = os.path.join(STREAM, "fw.elf")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        c, _ = srv.accept()
        c.sendall(data)
        c.close()
        srv.close()
    threading.Thread(target=serve, daemon=True).start()
    code, out, err, took = run(["--batch", "-o", "json", "tcp:127.0.0.1:%d" % srv.getsockname()[1], elf])
    total = json.loads(out).get("total") if code == 0 else None
    check("batch on tcp:, the server sends a capture and closes: the report ends there, exit 0",
          code == 0 and total == 10000 and "partial" not in out, "exit %s, total %s, %s" % (code, total, err.strip()))

    for src in ("tcp:127.0.0.1:%d", "gdb:127.0.0.1:%d", "openocd:127.0.0.1:%d"):
        spec = src % harness.closed_port()
        code, out, err, took = run(["--batch", "--connect-timeout", "1", spec, elf])
        check("batch on %s, connection refused, --connect-timeout 1: exit 1 after a bounded wait, saying why"
              % src.split(":")[0], code == 1 and took < 1 + 5 and "Connection refused" in err and
              "--connect-timeout" in err and len(err.strip().splitlines()) == 1,
              "exit %s after %.1f s, %r" % (code, took, err.strip()))
    code, out, err, took = run(["--batch", "tcp:127.0.0.1:%d" % harness.closed_port(), elf])
    check("batch on tcp:, connection refused, no option: gives up by itself (10 s), exit 1",
          code == 1 and "--connect-timeout" in err, "exit %s after %.1f s, %r" % (code, took, err.strip()))
    sockets, port, unanswered = unanswering_server()
    code, out, err, took = run(["--batch", "--connect-timeout", "1", "gdb:127.0.0.1:%d" % port, ELF])
    check("batch on a gdb: server that never answers the connection: exit 1 within a few seconds",
          unanswered and code == 1 and took < 1 + 5 and "--connect-timeout" in err,
          "queue full %s, exit %s after %.1f s, %r" % (unanswered, code, took, err.strip()))
    for s in sockets:
        s.close()

    pcs = [pc_of("hot_a") + 4]
    for extra in ([], ["--duration", "3"]):
        stub = GdbStub(pcs, close_after=5)
        code, out, err, took = run(["--batch", "-o", "json"] + extra + [stub.spec, ELF])
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        check("batch%s on a gdb: server that hangs up after 5 samples: stderr says why, exit 4, JSON partial" % (
            " --duration 3" if extra else ""),
            code == 4 and j.get("total") == 5 and j.get("partial") and
            "failed after 5 samples: %s; the report is partial" % (j["partial"].get("reason") if isinstance(j["partial"], dict) else "?") in err,
            "exit %s, total %s, partial %r, %r" % (code, j.get("total"), j.get("partial"), err.strip()))
    stub = GdbStub(pcs, close_after=5)
    code, out, err, took = run(["--batch", stub.spec, ELF])
    check("... and the table says partial", code == 4 and "partial: the source failed" in out, out[-300:])


def failed_and_back_tests():
    """A failure is never forgotten: a gdb: server that stalls mid-packet once, then takes the
    reconnect, with --duration and without: exit 4, stderr names the stall, the JSON's partial
    object counts the failure and the reconnect, the table says it too."""
    pcs = [pc_of("hot_a") + 4]
    for extra in (["--duration", "4"], []):
        stub = GdbStub(pcs, stall_after=15, connections=3)
        code, out, err, took = run(["--batch", "-o", "json", "--rate", "200"] + extra + [stub.spec, ELF])
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        pa = j.get("partial") if isinstance(j.get("partial"), dict) else {}
        stub.thread.join(5)
        check("batch%s on a gdb: server that stalls mid-packet once, then takes the reconnect: exit 4, "
              "the stall named on stderr and in JSON partial (1 failure)%s" % (
                  " " + " ".join(extra) if extra else "", ", the target left running by the last connection" if extra else ""),
              code == 4 and (not extra or stub.running_at_close is True) and j.get("total", 0) >= 15 and pa.get("failures") == 1 and
              "no answer" in pa.get("reason", "") and pa.get("reason", "") in err and "partial" in err and
              [r.get("times") for r in pa.get("reasons", [])] == [1] and (not extra or pa.get("reconnects") == 1),
              "exit %s after %.1f s, total %s, partial %r, connections %d, running at close %s, %r" % (
                  code, took, j.get("total"), pa, stub.conns, stub.running_at_close, err.strip()[-400:]))
    stub = GdbStub(pcs, stall_after=15, connections=3)
    code, out, err, took = run(["--batch", "--rate", "200", "--duration", "4", stub.spec, ELF])
    check("... and the table says partial, with the failures counted",
          code == 4 and "partial: the source failed: " in out and "partial: 1 failure, 1 reconnect" in out,
          out[-400:])


def first_failure_tests():
    """Every early end names its cause: a gdb: server with a protocol error (bad checksums, non-hex
    or run-length-misusing PCs, a target that never stops, 1 MiB of qSupported) that then refuses
    the reconnect: the report and stderr name that error, not only the refused reconnect."""
    pcs = [pc_of("hot_a") + 4]
    for bad in ("checksum", "nonhex", "rle", "never_stops", "big_qsupported", "never_stops, O packets flooding",
                "never_stops, O packets trickling (one a millisecond)"):
        # (the trickle: each read after the reply's deadline finds bytes waiting, which the tool reads
        # before judging; it must still give the server up, not read on while any come)
        stub = GdbStub(pcs, bad=bad.split(",")[0], flood="flood" in bad or "trickl" in bad,
                       pace=0.001 if "trickl" in bad else 0.0)
        code, out, err, took = run(["--batch", "-o", "json", "--duration", "3", stub.spec, ELF])
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        pa = j.get("partial") if isinstance(j.get("partial"), dict) else {}
        first = pa.get("reason", "")
        check("batch --duration 3, a gdb: server with %s, then a refused reconnect: ends in time (< 6 s), exit non-zero, "
              "the first failure named on stderr and in JSON partial" % bad,
              code in (2, 4) and took < 3 + 3 and first and "Connection refused" not in first and first in err and
              pa.get("failures") == 1,
              "exit %s after %.1f s, partial %r, %r" % (code, took, pa, err.strip()[-400:]))


def openocd_end_test():
    """Item 11/12 for openocd: an OpenOCD that hangs up after a few PCSR bursts ends the batch with
    the samples so far, marked partial (the Tcl responder of test_openocd.py)."""
    import test_openocd

    class HangsUp(test_openocd.TclResponder):
        bursts = 0

        def answer(self, body):
            if "read_memory 0x%08x 32 1" % test_openocd.PCSR in body:
                self.bursts += 1
                if self.bursts > 3:
                    raise OSError("hang up")  # serve() closes the connection
            return super().answer(body)
    srv = HangsUp([pc_of("hot_a") + 4] * 10)
    code, out, err, took = run(["--batch", "-o", "json", "openocd:127.0.0.1:%d" % srv.port, ELF])
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    check("batch on an openocd: server that hangs up after 3 bursts: ends, exit 4, the 30 samples marked partial",
          code == 4 and j.get("total") == 30 and j.get("partial") and "partial" in err and
          j.get("format") == "openocd-pcsr",
          "exit %s, total %s, partial %r, %r" % (code, j.get("total"), j.get("partial"), err.strip()))


def record_tests():
    """Item 2: --record never writes over the source, the ELF, --diff's file or (without --force)
    any existing file; compared by the file, not its name."""
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    cap_data = open(os.path.join(STREAM, "uart.txt"), "rb").read()[:20000]
    elf = os.path.join(WORK, "fw.elf")
    shutil.copy(os.path.join(STREAM, "fw.elf"), elf)
    cap = os.path.join(WORK, "cap.txt")
    os.symlink("cap.txt", os.path.join(WORK, "link.txt"))
    os.link(elf, os.path.join(WORK, "hard.elf"))
    cases = [("the source itself", ["--record", "cap.txt", "cap.txt", "fw.elf"]),
             ("the source through a symlink, with --force", ["--force", "--record", "link.txt", "cap.txt", "fw.elf"]),
             ("the source by another path, with --force", ["--force", "--record", "../%s/./cap.txt" % os.path.basename(WORK),
                                                           "cap.txt", "fw.elf"]),
             ("the ELF through a hard link, with --force", ["--force", "--record", "hard.elf", "cap.txt", "fw.elf"]),
             ("the ELF, in live mode", ["--force", "--record", "fw.elf", "cap.txt", "fw.elf"])]
    for what, args in cases:
        open(cap, "wb").write(cap_data)
        before = open(elf, "rb").read()
        code, out, err, took = run((["--batch"] if "live" not in what else []) + args, cwd=WORK)
        intact = open(cap, "rb").read() == cap_data and open(elf, "rb").read() == before
        check("--record over %s: refused, nothing written" % what,
              code == 1 and intact and "reads" in err and len(err.strip().splitlines()) == 1,
              "exit %s, files intact %s, %r" % (code, intact, err.strip()))
    open(cap, "wb").write(cap_data)
    shutil.copy(cap, os.path.join(WORK, "in.bin"))
    r = subprocess.run([TOOL, "--batch", "--force", "--record", "in.bin", "-", "fw.elf"],
                       stdin=open(os.path.join(WORK, "in.bin"), "rb"), capture_output=True, text=True, cwd=WORK,
                       timeout=HANG)
    check("--record over the file that is standard input: refused, with --force too",
          r.returncode == 1 and open(os.path.join(WORK, "in.bin"), "rb").read() == cap_data, r.stderr.strip())
    other = os.path.join(WORK, "other.bin")
    open(other, "wb").write(b"keep me")
    code, out, err, took = run(["--batch", "--record", "other.bin", "cap.txt", "fw.elf"], cwd=WORK)
    check("--record over an existing file: refused without --force, the file kept",
          code == 1 and open(other, "rb").read() == b"keep me" and "--force" in err, "exit %s, %r" % (code, err))
    code, out, err, took = run(["--batch", "--force", "--record", "other.bin", "cap.txt", "fw.elf"], cwd=WORK)
    check("--record over an existing file with --force: written, the replay's input",
          code == 0 and open(other, "rb").read() == cap_data, "exit %s, %r" % (code, err))
    code, out, err, took = run(["--batch", "--record", "new.bin", "tcp:127.0.0.1:%d" % harness.closed_port(), "fw.elf",
                                "--connect-timeout", "0.5"], cwd=WORK)
    check("--record with a source that cannot be reached: no file left behind",
          code == 1 and not os.path.exists(os.path.join(WORK, "new.bin")), "exit %s, %r" % (code, err))


def full_disk_test():
    """Item 12: a report that cannot be written (stdout on a full disk, /dev/full) is an error, not
    exit 0 with half a report; for a capture file and for a live source."""
    for what, source in (("a capture file", os.path.join(STREAM, "uart.txt")), ("a gdb: server", None)):
        stub = GdbStub([pc_of("hot_a") + 4]) if source is None else None
        args = [TOOL, "--batch"] + (["--samples", "20"] if stub else []) + [source or stub.spec,
                                                                            os.path.join(STREAM, "fw.elf")]
        with open("/dev/full", "w") as full:
            r = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=HANG)
        check("batch on %s, the report to a full disk: said, exit 1" % what,
              r.returncode == 1 and "writing the report: No space left on device" in r.stderr,
              "exit %s, %r" % (r.returncode, r.stderr.strip()))
    # --resolve's answers (as arguments, and read from stdin), --help and --version: exit 0 with the output lost before
    elf = os.path.join(STREAM, "fw.elf")
    for what, args, stdin in (("--resolve ADDR", ["--resolve", elf, hex(pc_of("hot_a"))], None),
                              ("--resolve on stdin", ["--resolve", elf], "%s\n" % hex(pc_of("hot_a")) * 5000),
                              ("--help", ["--help"], None), ("--version", ["--version"], None)):
        with open("/dev/full", "w") as full:
            r = subprocess.run([TOOL] + args, stdout=full, stderr=subprocess.PIPE, input=stdin, text=True, timeout=HANG)
        lines = r.stderr.strip().splitlines()
        check("%s to a full disk: said in one line naming standard output, exit 1" % what,
              r.returncode == 1 and len(lines) == 1 and "standard output" in lines[0],
              "exit %s, %r" % (r.returncode, lines))
        if args[0] in ("--resolve", "--help"):  # said "a write failed (the disk full?)": the errno was lost
            check("%s to a full disk: the line names the error (and --resolve the file)" % what, len(lines) == 1 and
                  ("(/dev/full)" in lines[0] or args[0] == "--help") and "No space left on device" in lines[0],
                  repr(lines))
    # --resolve on stdin stops at the first write that failed: it read all its input first (a pipe
    # that never ends, never). The offset of the file it was given tells how far it read.
    big = os.path.join(WORK, "addresses.txt")
    with open(big, "w") as f:
        f.write("%s\n" % hex(pc_of("hot_a")) * 1000000)  # 10 MB
    for writer in ("0", "1"):
        with open(big, "rb") as src, open("/dev/full", "w") as full:
            r = subprocess.run([TOOL, "--resolve", elf], stdin=src, stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=HANG, env=dict(os.environ, CMPROF_RESOLVE_WRITER=writer))
            read = os.lseek(src.fileno(), 0, os.SEEK_CUR)
        check("--resolve on stdin to a full disk (%s): stops at the first failed write, not at its input's end"
              % ("a writer thread" if writer == "1" else "one thread"),
              r.returncode == 1 and read <= 1 << 20 and "standard output (/dev/full): No space left on device" in r.stderr
              and len(r.stderr.strip().splitlines()) == 1 and "not an address" not in r.stderr,
              "exit %s, read %d of %d bytes, %r" % (r.returncode, read, os.path.getsize(big), r.stderr.strip()))


def snapshot_tests():
    """Item 21: a snapshot that cannot be written whole (a file size limit here, as a full disk
    would) is removed and the view says why; the view goes on."""
    data = open(os.path.join(STREAM, "uart.txt"), "rb").read()
    elf = os.path.join(STREAM, "fw.elf")
    snapdir = os.path.join(WORK, "snap")
    os.makedirs(snapdir, exist_ok=True)
    cap = os.path.join(WORK, "stream.txt")
    open(cap, "wb").write(data)
    live = Live(["--rate", "100000", cap, elf], cwd=snapdir, fsize=1000)
    shown = live.shown("hot_a")
    time.sleep(0.5)
    live.keys("o")
    time.sleep(0.3)
    live.keys("j")
    said = live.shown("could not save", 5)
    time.sleep(0.3)
    left = os.listdir(snapdir)
    alive = wait_exit(live.pid, 0.01)[0] is None
    live.keys("q")
    code, took = live.finish()
    check("snapshot past a file size limit: removed, the view says why and goes on",
          shown and said and b"File too large" in live.out and not left and alive and code == 0,
          "view up %s, said %s, left %s, alive %s, exit %s" % (shown, said, left, alive, code))


def task_var_tests():
    """Item 21: --task-var takes a pointer-sized variable, not a structure or an array."""
    src = os.path.join(WORK, "tasks.c")
    elf = os.path.join(WORK, "tasks.elf")
    open(src, "w").write("struct tcb { unsigned top; char name[16]; };\n"
                         "struct tcb idle_tcb;\nstruct tcb *volatile current_tcb = &idle_tcb;\n"
                         "unsigned stacks[4][8];\nstruct small { unsigned short a, b; } small_tcb;\n"
                         "char tag[4];\nunsigned long task_count;\n"
                         "void Reset_Handler(void) { for (;;) stacks[0][0] += current_tcb->top + small_tcb.a +"
                         " tag[1] + task_count; }\n")
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-O1", "-g", "-nostdlib",
                    "-Wl,-Ttext=0x08000000", "-Wl,-Tdata=0x20000000", "-Wl,-e,Reset_Handler", src, "-o", elf],
                   check=True)
    kinds = {"idle_tcb": "a structure", "stacks": "an array", "small_tcb": "a 4-byte structure",
             "tag": "a 4-byte array"}
    for var, kind in kinds.items():
        code, out, err, took = run(["--batch", "--duration", "1", "--task-var", var, "gdb:127.0.0.1:%d" %
                                    harness.closed_port(), elf], seconds=HANG)
        check("--task-var %s (%s): refused, saying it is no task pointer" % (var, kind),
            code == 2 and "not a task pointer" in err and len(err.strip().splitlines()) == 1,
            "exit %s, %r" % (code, err.strip()))
    code, out, err, took = run(["--batch", "--duration", "1", "--task-var", "current_tcb", "gdb:127.0.0.1:%d" %
                                harness.closed_port(), elf], seconds=HANG)
    check("--task-var current_tcb (a pointer): taken", "not a task pointer" not in err and "task names from "
          "current_tcb->name" in err, "exit %s, %r" % (code, err.strip()))
    code, out, err, took = run(["--batch", "--duration", "1", "--task-var", "task_count", "gdb:127.0.0.1:%d" %
                                harness.closed_port(), elf], seconds=HANG)
    check("--task-var task_count (a number, a task's id): taken as a tag (the run goes on to the server)",
          "not a task pointer" not in err and "not reached within 1 s (--duration)" in err,
          "exit %s, %r" % (code, err.strip()))


def starved_drain_tests():
    """A starved drain (a thread that never sleeps above it, an idle task that never runs) sends no
    announce and no sample: batch on a connected source that gives nothing, log lines only, or an
    announce only says so at the end, with the likely causes; exit 2."""
    elf = os.path.join(STREAM, "fw.elf")
    announce = [ln for ln in open(os.path.join(STREAM, "uart.txt"), "rb").read().split(b"\n")
                if ln.startswith(b"@cmprof ")][0] + b"\n"
    for what, first, want in (("nothing", b"", "nothing from the firmware"),
                              ("log lines only", b"boot: app\nsensor: 12\nsensor: 13\n", "3 log lines only, no announce"),
                              ("an announce only", b"boot: app\n" + announce, "the firmware's announce and no sample")):
        srv = socket.create_server(("127.0.0.1", 0))

        def serve(srv=srv, first=first):
            c, _ = srv.accept()
            c.sendall(first)
            time.sleep(4)  # connected, silent: the run's --duration ends first
            c.close()
            srv.close()
        threading.Thread(target=serve, daemon=True).start()
        code, out, err, took = run(["--batch", "--duration", "2", "tcp:127.0.0.1:%d" % srv.getsockname()[1], elf])
        check("batch on tcp:, connected with %s for 2 s: exit 2, the likely causes of a starved drain said" % what,
              code == 2 and want in err and "likely causes: the drain never runs" in err and
              "CONFIG_CMPROF_DRAIN_PRIORITY" in err and "idle task that never runs" in err and
              "timer's interrupt is off" in err and len(err.strip().splitlines()) == 1,
              "exit %s, %r" % (code, err.strip()))
    # an SWO server whose trace has no PC sample (sync and stimulus-port writes only): the trace's causes, not a drain's
    itm = (b"\x00" * 5 + b"\x80") + b"\x01A\x01B" * 200
    srv = socket.create_server(("127.0.0.1", 0))

    def serve_itm(srv=srv):
        c, _ = srv.accept()
        c.sendall(itm)
        time.sleep(4)
        c.close()
        srv.close()
    threading.Thread(target=serve_itm, daemon=True).start()
    code, out, err, took = run(["--batch", "--duration", "2", "-f", "itm", "tcp:127.0.0.1:%d" % srv.getsockname()[1], elf])
    check("batch on an SWO server whose trace has no PC sample: exit 2, the trace's likely causes (PC sampling, the "
          "TPIU, the pin rate), not a firmware drain's", code == 2 and "trace bytes but no PC sample" in err and
          "PCSAMPLENA" in err and "drain" not in err, "exit %s, %r" % (code, err.strip()))


def stalled_stream_tests():
    """A drain starved after it ran (a thread that stops sleeping above it): the stream stops while
    the line stays connected. Batch says at the end that the profile stops before the run did, with
    the likely causes (stderr, the table's "stalled:" line, JSON "stalled"); a stream that flows to
    the end says nothing of the kind."""
    elf = os.path.join(STREAM, "fw.elf")
    data = open(os.path.join(STREAM, "uart.txt"), "rb").read()
    for what, pace in (("stops after its first second", None), ("flows to the end", 0.05)):
        srv = socket.create_server(("127.0.0.1", 0))

        def serve(srv=srv, pace=pace):
            c, _ = srv.accept()
            if pace is None:
                c.sendall(data)
                time.sleep(9)  # connected, silent
            else:  # the capture's lines over and over, 2,000 bytes every 50 ms, past the run's end
                end, k = time.monotonic() + 7, 0
                while time.monotonic() < end:
                    c.sendall(data[k:k + 2000])
                    k = k + 2000 if k + 2000 < len(data) else 0
                    time.sleep(pace)
            c.close()
            srv.close()
        threading.Thread(target=serve, daemon=True).start()
        code, out, err, took = run(["--batch", "-o", "json", "--duration", "6",
                                    "tcp:127.0.0.1:%d" % srv.getsockname()[1], elf])
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        stalled = j.get("stalled", "")
        if pace is None:
            ok = (code == 0 and j.get("total", 0) > 0 and "the stream stopped: no sample for" in err and
                  "likely causes: the drain never runs" in err and "the stream stopped" in stalled)
        else:
            ok = code == 0 and j.get("total", 0) > 0 and not stalled and "stream stopped" not in err
        check("batch on tcp:, a stream that %s: %s" % (what, "the stall and its likely causes said (stderr, JSON)"
                                                     if pace is None else "no stall said"), ok,
              "exit %s, total %s, stalled %r, %r" % (code, j.get("total"), stalled[:80], err.strip()[-300:]))


def main():
    for need in (ELF, os.path.join(STREAM, "uart.txt")):
        if not os.path.exists(need):
            check("scenario files built (scenarios/scen.py run)", False, need)
            return 1
    if sys.argv[1:]:  # only the named groups, e.g. failed_and_back_tests
        for name in sys.argv[1:]:
            globals()[name]()
        return 1 if harness.failed else 0
    record_tests()
    batch_end_tests()
    failed_and_back_tests()
    first_failure_tests()
    starved_drain_tests()
    stalled_stream_tests()
    openocd_end_test()
    task_var_tests()
    snapshot_tests()
    full_disk_test()
    stdin_stop_tests()
    unreachable_quit_test()
    stop_tests()
    job_control_tests()  # (qemu_job_control_tests: by name, in run.sh's QEMU lane)
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
