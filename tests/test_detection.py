#!/usr/bin/env python3
"""Format detection end to end. A capture that starts with a long run of 0x00 bytes (an idle SWO
link, or orbuculum's delimiters before the first frame) is told by what follows the run: orbflow
stays orbflow, ITM stays ITM, and the profile is the one of the same capture without the zeros;
from a file, and from a tcp: server that first sends only zeros and closes. A live source that
pauses before the detection window fills (a server that closes, a halted target) is not settled
on too few bytes: an orbflow start is never taken for ITM, and --record of that session replays
to the same profile. Prints one ok/FAIL line per check."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check, tcp_server  # noqa: E402
from test_cli import TOOL, itm_stream, orbflow_frames, pcs_of, scen_path  # noqa: E402

TMP = os.path.join(os.path.dirname(HERE), "build", "detection-test")


def batch(source, elf, *extra):
    r = subprocess.run([TOOL, "--batch", "-o", "json", *extra, source, elf], capture_output=True, timeout=60)
    j = json.loads(r.stdout) if r.stdout.strip() else {}
    return r.returncode, j, r.stderr.decode(errors="replace").strip()


def profile(j):
    return j.get("format"), j.get("total"), {r["name"]: r["samples"] for r in j.get("rows", [])}


def main():
    os.makedirs(TMP, exist_ok=True)
    uart, elf = scen_path("loops_jitter", "uart.txt"), scen_path("loops_jitter", "fw.elf")
    if not os.path.exists(uart):
        check("scenario capture loops_jitter present (run scen.py)", False, uart)
        return 1
    pcs = pcs_of(uart)[:20000]
    captures = {"orbflow": orbflow_frames(itm_stream(pcs)), "itm": itm_stream(pcs)}
    for fmt, data in captures.items():
        plain = os.path.join(TMP, "plain." + fmt)
        open(plain, "wb").write(data)
        code, j, err = batch(plain, elf)
        ref = profile(j)
        check("%s capture without zeros: the reference profile" % fmt,
              code == 0 and ref[0] == fmt and ref[1] == len(pcs), "exit %d, %s %s" % (code, ref[:2], err))
        for zeros in (4000, 4096, 10000, 100000):
            path = os.path.join(TMP, "zeros%d.%s" % (zeros, fmt))
            open(path, "wb").write(b"\0" * zeros + data)
            code, j, err = batch(path, elf)
            got = profile(j)
            check("%s capture after %d zero bytes (file): detected, the same profile" % (fmt, zeros),
                  code == 0 and got == ref, "exit %d, format %s, %s samples %s" % (code, got[0], got[1], err))

    # a server that sends only zeros, or the start of a frame, then goes away: the pause must not
    # settle the format on those bytes; and the recording of the session replays the same
    data = captures["orbflow"]
    cases = (([b"\0" * 6000 + data], "after 6000 zero bytes, one connection"),
             ([b"\0" * 6000, data], "6000 zero bytes, a reconnection, then the frames"),
             ([data[:34], data[34:]], "34 bytes, a reconnection, then the rest"))
    for k, (parts, what) in enumerate(cases):
        port = tcp_server(parts, 1.0)
        rec = os.path.join(TMP, "session%d.rec" % k)
        if os.path.exists(rec):  # an earlier run's (the plain build's, before the ASan one): never written over
            os.unlink(rec)
        code, j, err = batch("tcp:127.0.0.1:%d" % port, elf, "--duration", "3", "--record", rec)
        got = profile(j)
        check("orbflow on tcp: %s: detected, every sample counted" % what,
              code == 0 and got[0] == "orbflow" and got[1] == len(pcs),
              "exit %d, format %s, %s samples %s" % (code, got[0], got[1], err.splitlines()[-1:] or ""))
        code, j, err = batch(rec, elf)
        check("orbflow on tcp: %s: --record replays to the same profile" % what,
              code == 0 and profile(j) == got, "exit %d, format %s, %s samples" % (code, j.get("format"), j.get("total")))
    return harness.failed


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
