#!/usr/bin/env python3
"""A SWO capture as an STM32 with the TPIU formatter on sends it, and a byte capture of the pin keeps
it: ITM (PC samples, on source ID 1) and ETM-like noise (source ID 2) mixed in 16-byte formatter
frames, with no full-sync packet anywhere, starting a few bytes into a frame.

    python3 tests/swo_capture.py UART.TXT OUT.BIN [--lead N] [--seed S]

takes the PCs of a scenario's text dump (uart.txt) and writes the capture; the PCs it encoded go to
OUT.BIN.pcs, one per line, in order."""
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_cli import itm_stream, pcs_of  # noqa: E402


def mix(itm, rng, etm_id=2):
    """(source, byte) in the order the formatter takes them: runs of ITM, runs of ETM noise."""
    items, i = [], 0
    while i < len(itm):
        n = rng.randint(5, 40)
        items += [(1, b) for b in itm[i:i + n]]
        i += n
        items += [(etm_id, rng.randrange(256)) for _ in range(rng.randint(1, 60))]
    return items


def frames(items):
    """Packs (source, byte) items into formatter frames. An ID change (ID << 1 | 1) sits only in an
    even byte; its aux bit (byte 15, bit k for byte 2k) is 0 when the new source owns the next byte,
    1 when the old one does. An even data byte keeps its bit 0 in the aux byte. The last frame is
    padded with the null source (ID 0)."""
    out, i, cur = bytearray(), 0, 0
    while i < len(items):
        f, aux = bytearray(16), 0
        for e in range(0, 15, 2):
            if i >= len(items):  # pad with the null source
                f[e] = 0x01 if cur else 0x00
                cur = 0
                continue
            src, b = items[i]
            if src != cur:
                f[e], cur = src << 1 | 1, src
                if e < 14:
                    f[e + 1] = b
                    i += 1
                continue
            if e < 14 and i + 1 < len(items) and items[i + 1][0] != cur:  # the change after this byte
                f[e] = items[i + 1][0] << 1 | 1
                aux |= 1 << (e // 2)
                f[e + 1] = b
                i += 1
                cur = items[i][0]
                continue
            f[e] = b & 0xFE
            aux |= (b & 1) << (e // 2)
            i += 1
            if e < 14 and i < len(items) and items[i][0] == cur:
                f[e + 1] = items[i][1]
                i += 1
        f[15] = aux
        out += f
    return bytes(out)


def syncless_capture(pcs, lead=5, seed=1):
    """The capture of these PCs: `lead` random bytes (the end of a frame the capture began inside),
    then the frames; never FF FF FF 7F."""
    rng = random.Random(seed)
    data = bytes(rng.randrange(256) for _ in range(lead)) + frames(mix(itm_stream(pcs), rng))
    assert b"\xff\xff\xff\x7f" not in data
    return data


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    lead = int(argv[argv.index("--lead") + 1]) if "--lead" in argv else 5
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 1
    pcs = pcs_of(argv[1])
    open(argv[2], "wb").write(syncless_capture(pcs, lead, seed))
    open(argv[2] + ".pcs", "w").write("".join("%08x\n" % pc for pc in pcs))
    print("%d PCs in %s: %d bytes, frames from byte %d, no full sync" % (len(pcs), argv[2],
                                                                      os.path.getsize(argv[2]), lead))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
