#!/usr/bin/env python3
"""Writes fuzz/seeds/gdb/ (realistic sessions a GDB server might reply with, in fuzz/fuzz_gdb.c's
input format: a settings byte, then [dt][len][bytes] records) and the regression inputs in
fuzz/crashes/gdb/ (replies that made the sampler shift a negative value or overflow an int)."""
import os

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def checksum(d):
    return "%02x" % (sum(d.encode("latin-1")) & 0xFF)


def packet(d, ack=True):
    """A reply as the server sends it: acknowledging our request first unless in no-ack mode."""
    return (("+" if ack else "") + "$%s#%s" % (d, checksum(d))).encode("latin-1")


def record(b, dt=10):
    """Bytes arriving dt tenths of a millisecond after the last ones, in records of 255 at most."""
    out = b""
    while True:
        part, b = b[:255], b[255:]
        out += bytes([dt, len(part)]) + part
        dt = 0
        if not b:
            return out


def le32(v):
    return v.to_bytes(4, "little").hex()


CORE = "".join('<reg name="r%d" bitsize="32"/>' % i for i in range(13)) + '<reg name="sp" bitsize="32"/><reg name="lr" bitsize="32"/><reg name="pc" bitsize="32"/><reg name="xpsr" bitsize="32" regnum="25"/><reg name="msp" bitsize="32"/><reg name="psp" bitsize="32"/>'


def session(cfg, noack, samples, probe=False, task=False, stack=False, extra=b""):
    ack = not noack
    s = bytes([cfg])
    s += record(b"+" + packet("PacketSize=1000;qXfer:features:read+" + (";QStartNoAckMode+" if noack else ""), False))
    if noack:
        s += record(packet("OK"))
    if probe:
        for ln in ("Target voltage: 3.3V\n", "Available Targets:\n", " 1 ARM Cortex-M\n"):
            s += record(packet("O" + ln.encode().hex(), ack))
        s += record(packet("OK", ack)) + record(packet("T05", ack))
    s += record(packet('l<?xml version="1.0"?><target><architecture>arm</architecture><xi:include href="core.xml"/></target>', ack))
    s += record(packet('l<feature name="org.gnu.gdb.arm.m-profile">%s</feature>' % CORE, ack))
    s += record(packet("S05", ack))
    s += record(packet("00100020" + le32(0x08000101), ack))
    for k in range(samples):
        s += record(packet("T02thread:01;", ack), dt=20)
        s += record(packet(le32(0x08000200 + 4 * (k % 5)), ack))
        if k == 0:
            s += record(packet("03000300", ack))
        if task:
            s += record(packet(le32(0x20000100 if k % 3 else 0x20000200), ack))
            if k < 2:
                s += record(packet(b"motor\0xxxxxxxxxx".hex(), ack))
        if stack:
            regs = [0] * 13 + [0x20001000, 0x08000301 if k % 2 else 0xFFFFFFFD, 0x08000200]
            s += record(packet("".join(le32(r) for r in regs) + le32(0x01000000), ack))
            # a full piece with 3 callers, then a short one (the stack's end), then the process stack
            s += record(packet("".join(le32(0x08000401 + 8 * j if j in (3, 40, 90) else 0x20000000 + j * 4) for j in range(128)), ack))
            s += record(packet("".join(le32(0x20000000) for j in range(16)), ack))
            if k % 2 == 0:
                s += record(packet(le32(0x20002000), ack))
                s += record(packet("".join(le32(x) for x in (0, 0, 0, 0, 0, 0x08000501, 0x08000600, 0x01000000)) + le32(0x08000701) * 3, ack))
    return s + extra
seeds = {
    "ack_max": session(0x10, False, 20),
    "noack_task_stack": session(0x1b | 0x10, True, 12, task=True, stack=True),
    "probe_gentle": session(0x40, False, 10, probe=True),
    "stack64_rate": session(0x2c, True, 8, stack=True),
    "console_then_exit": session(0x10, False, 4, extra=record(packet("O" + b"hello\n".hex())) * 5 + record(packet("W00"))),
    "timeout": session(0x30, False, 3) + bytes([250, 0]) * 30,
}
for name, data in seeds.items():
    open(os.path.join("fuzz/seeds/gdb", name), "wb").write(data)



# regressions: replies that made the old sampler shift a negative value / overflow an int (UBSan)
def handshake(cfg, xml_core):
    s = bytes([cfg]) + record(b"+" + packet("PacketSize=1000;qXfer:features:read+", False))
    s += record(packet('l<target><xi:include href="core.xml"/></target>'))
    s += record(packet("l" + xml_core)) + record(packet("S05")) + record(packet("00100020" + le32(0x08000101)))
    return s
name_bad = handshake(0x13, '<feature>%s</feature>' % CORE)
for k in range(3):
    name_bad += record(packet("T02thread:01;"), dt=20) + record(packet(le32(0x08000200))) + (record(packet("03000300")) if k == 0 else b"")
    name_bad += record(packet(le32(0x20000100))) + (record(packet("zz6f746f72")) if k == 0 else b"")
open("fuzz/crashes/gdb/task-name-non-hex", "wb").write(name_bad)
big = handshake(0x10, '<feature><reg name="r0" bitsize="32" regnum="2147483647"/><reg name="r1" bitsize="32"/><reg name="pc" bitsize="32"/></feature>')
for k in range(3):
    big += record(packet("T02thread:01;"), dt=20) + record(packet(le32(0x08000200))) + (record(packet("03000300")) if k == 0 else b"")
open("fuzz/crashes/gdb/regnum-int-max", "wb").write(big)
