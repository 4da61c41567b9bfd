#!/usr/bin/env python3
"""Damaged captures decoded by two builds of the decoders (bench/decode_damage.c, built from two trees):
of 100,000 PC samples sent (all distinct), how many come back, and how many PCs come back that were
never sent (or twice). By hand, not in make bench:
    python3 bench/damage.py OLD_BINARY NEW_BINARY
Captures: test_cli's ITM stream (a sync every 1,000 samples) raw and in one-source TPIU frames (the ID
written once), with 50 bits flipped or 50 bytes dropped at random (fixed seeds); TPIU also with 1 byte dropped, and with
25 bytes dropped and 25 bits flipped."""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from test_cli import itm_stream, tpiu_frames  # noqa: E402


def flipped(data, k, seed):
    d, r = bytearray(data), random.Random(seed)
    for _ in range(k):
        d[r.randrange(100, len(d))] ^= 1 << r.randrange(8)
    return bytes(d)


def dropped(data, k, seed):
    d, r = bytearray(data), random.Random(seed)
    for _ in range(k):
        del d[r.randrange(100, len(d))]
    return bytes(d)


def score(sent, got):
    """(PCs sent that came back, PCs got that were never sent or came back twice). The PCs are distinct, and
    spread over 16 MB: one read wrongly is one of them by chance about once in 80."""
    sent, seen = set(sent), set()
    for g in got:
        if g in sent:
            seen.add(g)
    return len(seen), len(got) - len(seen)


def main():
    r = random.Random(1)
    sent = [0x08000000 + 2 * x for x in r.sample(range(1 << 23), 100000)]
    itm = itm_stream(sent)
    tpiu = tpiu_frames(itm, id_once=True)
    cases = [("TPIU, 50 bits flipped, seed %d" % s, "tpiu", flipped(tpiu, 50, s)) for s in (5, 11, 12, 13)]
    cases += [("TPIU, 50 bytes dropped, seed %d" % s, "tpiu", dropped(tpiu, 50, s)) for s in (1, 2, 3, 4, 5, 6)]
    cases += [("TPIU, 1 byte dropped, seed %d" % s, "tpiu", dropped(tpiu, 1, s)) for s in (1, 2, 3, 4)]
    cases += [("TPIU, 25 dropped + 25 flipped, seed %d" % s, "tpiu", flipped(dropped(tpiu, 25, s), 25, s))
              for s in (1, 2, 3)]
    cases += [("raw ITM, 50 bytes dropped, seed %d" % s, "itm", dropped(itm, 50, s)) for s in (1, 2, 3)]
    cases += [("raw ITM, 50 bits flipped, seed %d" % s, "itm", flipped(itm, 50, s)) for s in (1, 2)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "capture")
        for name, fmt, data in cases:
            open(path, "wb").write(data)
            row = []
            for exe in sys.argv[1:3]:
                out = subprocess.run([exe, fmt, path], capture_output=True, text=True, check=True).stdout
                row.append("%6d back, %3d wrong" % score(sent, [int(x, 16) for x in out.split()]))
            print("%-40s %s" % (name, " | ".join(row)))


if __name__ == "__main__":
    main()
