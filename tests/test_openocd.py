#!/usr/bin/env python3
"""cmprof-top's openocd: source. Against the real openocd binary (Debian's package, no probe):
connection, the no-target error, and OpenOCD still serving after we leave. Against a scripted
responder that follows the OpenOCD manual's Tcl RPC protocol (every command and reply ends with
0x1a): exact counts from known PCSR bursts, sleep reads, DEMCR.TRCENA set and put back, the
halting fallback when PCSR reads 0, and refusals. No probe is involved: the PCSR path has not
run on hardware. Prints one ok/FAIL line per check."""
import json
import os
import re
import shutil
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

TOOL = os.environ.get("CMPROF_TOOL", os.path.join(ROOT, "build", "cmprof-top"))
ELF = os.path.join(ROOT, "build", "scenarios", "gdb_loops", "fw.elf")
DEMCR, PCSR = 0xE000EDFC, 0xE000101C


def nm(name):
    for ln in subprocess.run(["arm-none-eabi-nm", ELF], capture_output=True, text=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16) & ~1
    raise KeyError(name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TclResponder:
    """One connection; answers the commands cmprof-top sends, wrapped in `list [catch {...} r] $r`."""

    def __init__(self, burst, demcr=0, pcsr_zero=False, refuse_write=False):
        self.burst, self.demcr, self.pcsr_zero, self.refuse_write = burst, demcr, pcsr_zero, refuse_write
        self.log, self.halts = [], 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

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

    def serve(self):
        conn, _ = self.sock.accept()
        conn.settimeout(20)
        buf = b""
        try:
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                buf += data
                while b"\x1a" in buf:
                    cmd, buf = buf.split(b"\x1a", 1)
                    cmd = cmd.decode()
                    self.log.append(cmd)
                    m = re.match(r"list \[catch \{(.*)\} r\] \$r$", cmd, re.S)
                    reply = self.answer(m.group(1)) if m else "invalid command"
                    conn.sendall(reply.encode() + b"\x1a")
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
    port = free_port()
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
    code, j, err = batch("openocd:127.0.0.1:%d" % port, "--duration", "1")
    check("no OpenOCD listening: says why, non-zero exit", code != 0 and "Connection refused" in err, err.strip())


def main():
    if not os.path.exists(ELF):
        check("gdb_loops ELF built (run scenarios/scen.py first)", False, ELF)
        return 1
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

    r = subprocess.run([TOOL, "--batch", "openocd:127.0.0.1:0", ELF], capture_output=True, text=True)
    check("openocd: a malformed address is refused at once, in one line", r.returncode != 0 and
          "openocd:HOST" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr.strip())
    return 1 if harness.failed else 0


if __name__ == "__main__":
    sys.exit(main())
