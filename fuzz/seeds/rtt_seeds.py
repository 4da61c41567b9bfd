#!/usr/bin/env python3
"""Writes fuzz/seeds/rtt/: sessions a GDB server or OpenOCD's Tcl port might reply with to the rtt:
reader, in fuzz/fuzz_rtt.c's input format (a settings byte, then [dt][len][bytes] records): the
block at the given address or searched for (its ID across two reads), polls that wrap the buffer,
the program's end, a timeout."""
import os

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def frame(d):
    d = d.encode("latin-1")
    return b"+$" + d + b"#" + ("%02x" % (sum(d) & 0xFF)).encode()


def rec(dt, data):
    out = b""
    while True:
        out += bytes([dt, min(len(data), 255)]) + data[:255]
        data, dt = data[255:], 0
        if not data:
            return out


BUF, SIZE = 0x20000500, 64
HDR = b"SEGGER RTT".ljust(16, b"\0") + (1).to_bytes(4, "little") + (1).to_bytes(4, "little")
DESC = b"".join(v.to_bytes(4, "little") for v in (0, BUF, SIZE, 0, 0, 0))
LINE = b"@cmprof v=4 clk=1 tclk=1 period=1 jitter=0 base=08000000!AA\n"


def polls(reply, after):
    s = b""
    for k in range(3):
        wr, rd = (k + 1) * 40 % SIZE, k * 40 % SIZE
        s += after(k)
        s += rec(0, reply((wr.to_bytes(4, "little") + rd.to_bytes(4, "little"))))
        s += rec(0, reply(LINE[:SIZE - rd if wr < rd else wr - rd]))
        if wr < rd:
            s += rec(0, reply(LINE[:wr]))
        s += rec(0, reply(None))
    return s


def rsp(cfg, search):
    s = bytes([cfg]) + rec(0, frame("PacketSize=100;qXfer:features:read+")) + rec(0, frame("T02thread:01;"))
    s += rec(0, frame("S05"))
    if search:
        chunk = (0x100 - 16) // 2
        s += rec(0, frame((b"\0" * (chunk - 5) + HDR[:5]).hex()))
        s += rec(0, frame((HDR[5:] + b"\0" * chunk).hex()[:chunk * 2]))
    s += rec(0, frame(HDR.hex())) + rec(0, frame(DESC.hex()))
    s += polls(lambda b: frame("OK" if b is None else b.hex()), lambda k: rec(120, b"") + rec(0, frame("T02thread:01;")))
    return s + rec(0, frame("W00"))


def tcl(cfg):
    def reply(b):
        return b"0 {}\x1a" if b is None else ("0 {%s}\x1a" % " ".join("0x%02x" % x for x in b)).encode()
    s = bytes([cfg]) + rec(0, reply(HDR)) + rec(0, reply(DESC))
    s += polls(reply, lambda k: rec(150, b"") if k else b"")
    return s + rec(0, b"1 {Error: target not halted}\x1a")


os.makedirs("fuzz/seeds/rtt", exist_ok=True)
for name, data in (("rsp_block", rsp(2, False)), ("rsp_search", rsp(4, True)), ("tcl_block", tcl(3)),
                   ("rsp_timeout", bytes([2]) + rec(0, frame("PacketSize=zz")) + rec(250, b""))):
    open(os.path.join("fuzz/seeds/rtt", name), "wb").write(data)
