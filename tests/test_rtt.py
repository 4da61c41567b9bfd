#!/usr/bin/env python3
"""cmprof-top's rtt: source. Against scripted servers whose target RAM holds an RTT control block,
filled a piece per poll with a real capture of the `rtt` scenario (wrapping around a buffer of an odd
size): a GDB server (RSP 'm'/'M', halted for each poll, detached at the end), the block found by the
ELF's _SEGGER_RTT or by searching RAM (the ID across two reads), OpenOCD's Tcl port (no halt); every
byte arrives in order, the record is the capture; no block, a refused read and a bad spec give one
clear line, and the target is left running. With QEMU: a firmware that streams over RTT forever,
attached twice while it runs, keeps running after each detach.
--qemu-only runs the QEMU checks, --no-qemu the others (tests/run.sh runs them in different lanes)."""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check  # noqa: E402
import scen  # noqa: E402

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
RTT_DIR = os.path.join(ROOT, "build", "scenarios", "rtt")
ELF = os.path.join(RTT_DIR, "fw.elf")
CAPTURE = os.path.join(RTT_DIR, "rtt.rec")
ELF_NO_SYMBOL = os.path.join(ROOT, "build", "scenarios", "stream", "fw.elf")  # no _SEGGER_RTT in it
TMP = harness.scratch("test_rtt")
RAM, RAM_SIZE = 0x20000000, 0x10000


def nm(name, elf):
    for ln in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16)
    return None


class RttTarget:
    """Target RAM with an RTT control block at `at`: its firmware writes `data` into the up-buffer, up to
    `step` bytes each time the host reads the offsets (whatever fits: a full buffer waits)."""

    def __init__(self, data, at, size=997, step=700, with_block=True, ram=RAM_SIZE):
        self.mem = bytearray(ram)
        self.data, self.pos, self.size, self.step = data, 0, size, step
        self.desc = at + 24
        self.buf = (at + 24 + 48 + 64) & ~3
        if with_block:
            struct = b"SEGGER RTT".ljust(16, b"\0") + (1).to_bytes(4, "little") + (1).to_bytes(4, "little")
            struct += b"".join(v.to_bytes(4, "little") for v in (0, self.buf, size, 0, 0, 0))
            self.write(at, struct)
        self.lock = threading.Lock()

    def read(self, addr, n):
        if addr < RAM or addr + n > RAM + len(self.mem):
            return None
        if addr == self.desc + 12:
            self.produce()
        return bytes(self.mem[addr - RAM:addr - RAM + n])

    def write(self, addr, data):
        if addr < RAM or addr + len(data) > RAM + len(self.mem):
            return False
        self.mem[addr - RAM:addr - RAM + len(data)] = data
        return True

    def word(self, addr):
        return int.from_bytes(self.mem[addr - RAM:addr - RAM + 4], "little")

    def produce(self):
        wr, rd = self.word(self.desc + 12), self.word(self.desc + 16)
        free = (rd - wr - 1) % self.size
        n = min(free, self.step, len(self.data) - self.pos)
        for k in range(n):
            self.mem[self.buf - RAM + (wr + k) % self.size] = self.data[self.pos + k]
        self.pos += n
        self.write(self.desc + 12, ((wr + n) % self.size).to_bytes(4, "little"))

    def drained(self):
        return self.pos == len(self.data) and self.word(self.desc + 12) == self.word(self.desc + 16)


def frame(data):
    return b"$" + data + b"#" + ("%02x" % (sum(data) & 0xFF)).encode()


class GdbServer(harness.OneConnection):
    """A GDB server in all-stop mode with one connection: the target runs after 'c' until 0x03."""

    def __init__(self, target, packet_size=0x400, refuse_reads=False, delay=0.0):
        self.target, self.packet_size, self.refuse_reads, self.delay = target, packet_size, refuse_reads, delay
        self.running, self.halts = False, 0
        super().__init__()
        self.spec = "rtt:127.0.0.1:%d" % self.port

    def answer(self, p):
        t = self.target
        if p.startswith(b"qSupported"):
            return b"PacketSize=%x;qXfer:features:read+" % self.packet_size
        if p == b"?":
            return b"S05"
        m = re.match(rb"m([0-9a-f]+),([0-9a-f]+)$", p)
        if m:
            data = None if self.refuse_reads else t.read(int(m.group(1), 16), int(m.group(2), 16))
            return b"E14" if data is None else data.hex().encode()
        m = re.match(rb"M([0-9a-f]+),([0-9a-f]+):([0-9a-f]*)$", p)
        if m:
            return b"OK" if t.write(int(m.group(1), 16), bytes.fromhex(m.group(3).decode())) else b"E14"
        if p == b"c":
            self.running = True
            return None
        if p == b"D":
            self.running = True
            return b"OK"
        return b""

    def consume(self, conn, buf):
        while buf:
            if buf[:1] in (b"+", b"-"):
                buf = buf[1:]
            elif buf[:1] == b"\x03":
                buf = buf[1:]
                self.log.append("^C")
                if self.running:
                    self.running = False
                    self.halts += 1
                    conn.sendall(frame(b"T02thread:01;"))
            elif buf[:1] == b"$":
                end = buf.find(b"#")
                if end < 0 or len(buf) < end + 3:
                    break
                p, buf = buf[1:end], buf[end + 3:]
                self.log.append(p.decode()[:40])
                if self.running and p != b"D":
                    self.log.append("request while running")
                reply = self.answer(p)
                time.sleep(self.delay)  # a slow server (or probe)
                conn.sendall(b"+" + (frame(reply) if reply is not None else b""))
            else:
                buf = buf[1:]
        return buf


class TclServer(harness.TclServer):
    """OpenOCD's Tcl port: read_memory ADDR 8 N and write_memory ADDR 32 V, the core never halted."""

    log_body, unwrapped = True, "1 {bad}"

    def __init__(self, target):
        self.target = target
        super().__init__()
        self.spec = "rtt:openocd:127.0.0.1:%d" % self.port

    def answer(self, body):
        m = re.match(r"read_memory 0x([0-9a-f]+) 8 (\d+)$", body)
        if m:
            data = self.target.read(int(m.group(1), 16), int(m.group(2)))
            if data is None:
                return "1 {Failed to read memory}"
            return "0 {%s}" % " ".join("0x%02x" % b for b in data)
        m = re.match(r"write_memory 0x([0-9a-f]+) 32 0x([0-9a-f]+)$", body)
        if m:
            self.target.write(int(m.group(1), 16), int(m.group(2), 16).to_bytes(4, "little"))
            return "0 {}"
        return "1 {invalid command name \"%s\"}" % body.split()[0]


def run_until_drained(spec, elf, target, record, extra=(), limit=30.0):
    """cmprof-top on spec until the target's data is all read (then SIGINT: a normal batch end)."""
    p = subprocess.Popen([TOOL, "--batch", "--no-inline", "--force", "--record", record, "-o", "json"] + list(extra) +
                         [spec, elf], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + limit
    while time.monotonic() < end and not target.drained() and p.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    if p.poll() is None:
        p.send_signal(2)
    out, err = p.communicate(timeout=10)
    try:
        j = json.loads(out)
    except ValueError:
        j = None
    return p.returncode, j, err


def expected_total():
    r = subprocess.run([TOOL, "--batch", "--no-inline", "-o", "json", CAPTURE, ELF], capture_output=True, text=True)
    return json.loads(r.stdout)["total"]


def server_checks():
    os.makedirs(TMP, exist_ok=True)
    data = open(CAPTURE, "rb").read()
    want = expected_total()
    block = nm("_SEGGER_RTT", ELF)
    # a GDB server, the block from the ELF's symbol
    t = RttTarget(data, block)
    g = GdbServer(t)
    rec = os.path.join(TMP, "gdb.rec")
    code, j, err = run_until_drained(g.spec, ELF, t, rec)
    got = open(rec, "rb").read() if os.path.exists(rec) else b""
    check("rtt: through a GDB server, every byte of the capture arrives in order (the block from _SEGGER_RTT)",
          got == data and j and j["total"] == want, "%d of %d bytes, %s samples of %d; exit %s %s" % (
              len(got), len(data), j and j["total"], want, code, err.strip()[-200:]))
    check("rtt: through a GDB server, each poll halts the core: polls/s and its halted share reported",
          j and j.get("halting", {}).get("rate", 0) > 0 and "polls/s" in j.get("source_detail", "") and g.halts > 3,
          "%s; %s; %d halts" % (j and j.get("halting"), j and j.get("source_detail"), g.halts))
    check("rtt: no request sent while the target runs, and it is left running (detached)",
          "request while running" not in g.log and g.running and "D" in g.log[-3:], g.log[-6:])
    # a server slower than the poll period: the target still runs between polls, the bytes still come
    t = RttTarget(data[:8000], block)
    g = GdbServer(t, delay=0.005)
    code, j, err = run_until_drained(g.spec, ELF, t, os.path.join(TMP, "slow.rec"))
    got = open(os.path.join(TMP, "slow.rec"), "rb").read() if os.path.exists(os.path.join(TMP, "slow.rec")) else b""
    share = j.get("halting", {}).get("halted_percent", 100) if j else 100
    check("rtt: a server slower than the 10 ms period: the core still runs between polls, every byte arrives",
          got == data[:8000] and share < 95, "%d of 8000 bytes, core halted %.1f %%; %s" % (len(got), share, err.strip()[-150:]))
    # no symbol in the ELF: the block is searched for, its ID across the seam of two reads
    chunk = (0x200 - 16) // 2
    t = RttTarget(data, RAM + chunk - 5)
    g = GdbServer(t, packet_size=0x200)
    rec = os.path.join(TMP, "search.rec")
    code, j, err = run_until_drained(g.spec, ELF_NO_SYMBOL, t, rec)
    got = open(rec, "rb").read() if os.path.exists(rec) else b""
    check("rtt: no _SEGGER_RTT in the ELF: the block is found in RAM (its ID across two reads), every byte arrives",
          got == data, "%d of %d bytes; exit %s %s" % (len(got), len(data), code, err.strip()[-200:]))
    # OpenOCD's Tcl port: memory read while the core runs, never halted
    t = RttTarget(data, block, size=1531, step=1200)
    o = TclServer(t)
    rec = os.path.join(TMP, "tcl.rec")
    code, j, err = run_until_drained(o.spec, ELF, t, rec)
    got = open(rec, "rb").read() if os.path.exists(rec) else b""
    check("rtt: through OpenOCD's Tcl port, every byte arrives, the core never halted",
          got == data and j and j["total"] == want and not any("halt" in c for c in o.log) and "halting" not in j,
          "%d of %d bytes, %s samples; %d commands, halts %s; exit %s %s" % (
              len(got), len(data), j and j["total"], len(o.log), [c for c in o.log if "halt" in c][:2], code,
              err.strip()[-200:]))
    # no block anywhere: one clear line, a failure, the target running
    t = RttTarget(b"", block, with_block=False)
    g = GdbServer(t)
    # (not found is no reason to give up: the firmware may not have made its block yet; it tries again)
    r = subprocess.run([TOOL, "--batch", "--duration", "4", "-o", "json", g.spec, ELF_NO_SYMBOL],
                       capture_output=True, text=True, timeout=60)
    check("rtt: no control block in RAM: said, searched range named, the target left running",
          r.returncode != 0 and "no RTT control block" in r.stderr and "0x20000000-0x2000ffff" in r.stderr and g.running,
          "exit %d: %s; running %s" % (r.returncode, r.stderr.strip()[:300], g.running))
    # a part with 16 KB of RAM (an nRF51): the search ends where reads fail, and says so
    t = RttTarget(b"", RAM, with_block=False, ram=0x4000)
    g = GdbServer(t)
    r = subprocess.run([TOOL, "--batch", "--duration", "4", "-o", "json", g.spec, ELF_NO_SYMBOL],
                       capture_output=True, text=True, timeout=60)
    check("rtt: no control block in a RAM smaller than the search: said where the RAM ended, target left running",
          r.returncode != 0 and "where the readable RAM ends" in r.stderr and g.running,
          "exit %d: %s; running %s" % (r.returncode, r.stderr.strip()[:300], g.running))
    t = RttTarget(data, block)
    g = GdbServer(t, refuse_reads=True)
    r = subprocess.run([TOOL, "--batch", "--duration", "4", "-o", "json", g.spec, ELF],
                       capture_output=True, text=True, timeout=60)
    check("rtt: a server that refuses the reads: said, the target left running",
          r.returncode != 0 and "refused reading the RTT block" in r.stderr and g.running,
          "exit %d: %s" % (r.returncode, r.stderr.strip()[:300]))
    # a block whose write offset lies past its buffer (overwritten): the failure is the cause, not a starved drain
    # (it went on with "nothing from the firmware (is it running, on this port and baud?); likely causes: the drain
    # never runs ...")
    t = RttTarget(data, block)
    t.write(t.desc + 12, (5000).to_bytes(4, "little"))
    t.produce = lambda: None
    g = GdbServer(t)
    r = subprocess.run([TOOL, "--batch", "--duration", "4", "-o", "json", g.spec, ELF], capture_output=True, text=True,
                       timeout=60)
    check("rtt: a block with its write offset past its buffer: said (the offsets), no drain's causes, no port or baud",
          r.returncode == 2 and "has offsets past its buffer (write 5000, read 0, size 997)" in r.stderr and
          "likely causes" not in r.stderr and "baud" not in r.stderr, "exit %d: %s" % (r.returncode, r.stderr.strip()))
    # a server that takes every connection and never answers: the run's end said "connected; before: ..."
    for form in ("rtt:127.0.0.1:%d", "rtt:openocd:127.0.0.1:%d"):
        lsn, held = socket.socket(), []
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(8)

        def take(lsn=lsn, held=held):
            while True:
                try:
                    held.append(lsn.accept()[0])
                except OSError:
                    return
        threading.Thread(target=take, daemon=True).start()
        r = subprocess.run([TOOL, "--batch", "--duration", "3", form % lsn.getsockname()[1], ELF], capture_output=True,
                           text=True, timeout=30)
        lsn.close()
        for c in held:
            c.close()
        first = r.stderr.strip().splitlines()[:1]
        check("%s: a server that never answers is not 'connected' at the end" % form.split("127")[0],
              r.returncode == 2 and first and "(connected" not in first[0] and "RTT control block has not been read"
              in first[0], "exit %s, %s" % (r.returncode, first))
    for spec in ("rtt:nohost", "rtt:127.0.0.1:0", "rtt:openocd:127.0.0.1:99999", "rtt::3333"):
        r = subprocess.run([TOOL, "--batch", "-o", "json", spec, ELF], capture_output=True, text=True, timeout=30)
        check("rtt: bad spec %s refused in one line" % spec,
              r.returncode != 0 and "use rtt:HOST:PORT" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
              "exit %d: %s" % (r.returncode, r.stderr.strip()))


def beats(uart):
    return len(re.findall(r"^beat \d+$", open(uart, errors="replace").read(), re.M))


def wait(cond, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def qemu_checks():
    """A firmware streaming over RTT forever, attached twice through QEMU's gdbstub while it runs."""
    s = scen.scenario("rtt_forever", "rtt", CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=16000,
                      CMPROF_JITTER=8191, FOREVER=1, rtt=True)
    elf = scen.build(s)
    uart = os.path.join(os.path.dirname(elf), "uart.txt")
    if os.path.exists(uart):
        os.remove(uart)
    port = scen.free_port()
    q = subprocess.Popen(scen.qemu_machine("m4") + ["-display", "none", "-monitor", "none", "-serial", "file:" + uart,
                                                    "-semihosting-config", "enable=on,target=native", "-icount",
                                                    "shift=0", "-kernel", elf, "-gdb", "tcp:127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        scen.wait_for_text(uart, "boot: rtt scenario", q)
        for k in (1, 2):
            r = subprocess.run([TOOL, "--batch", "--no-inline", "--duration", "3", "-o", "json",
                                "rtt:127.0.0.1:%d" % port, elf], capture_output=True, text=True, timeout=60)
            j = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            rows = {row["name"]: row["samples"] for row in j.get("rows", [])}
            check("rtt with QEMU, attach %d while the guest runs: samples of the three loops, polls and halted share"
                  % k, r.returncode == 0 and j.get("total", 0) > 100 and rows.get("hot_a", 0) > rows.get("hot_b", 0) >
                  rows.get("hot_c", 0) > 0 and j.get("halting", {}).get("rate", 0) > 0,
                  "exit %d, %s samples %s; %s; %s" % (r.returncode, j.get("total"), sorted(rows.items())[:4],
                                                    j.get("source_detail"), r.stderr.strip()[-200:]))
            before = beats(uart)
            check("rtt with QEMU: the guest runs on after the host detached (attach %d)" % k,
                  wait(lambda: beats(uart) >= before + 2, 30) and q.poll() is None,
                  "heartbeats %d then %d" % (before, beats(uart)))
    finally:
        q.kill()
        q.wait()


def main():
    args = sys.argv[1:]
    if "--qemu-only" not in args:
        server_checks()
    if "--no-qemu" not in args:
        qemu_checks()
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
