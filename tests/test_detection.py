#!/usr/bin/env python3
"""Format detection end to end. A capture that starts with a long run of 0x00 bytes (an idle SWO
link, or orbuculum's delimiters before the first frame) is told by what follows the run: orbflow
stays orbflow, ITM stays ITM, and the profile is the one of the same capture without the zeros;
from a file, and from a tcp: server that first sends only zeros and closes. A live source that
pauses before the detection window fills (a server that closes, a halted target) is not settled
on too few bytes: an orbflow start is never taken for ITM, and --record of that session replays
to the same profile. A SWO capture of TPIU frames with no full sync (ITM and ETM-like noise mixed,
as an STM32 with the formatter on sends) is detected as TPIU, aligned by content (the report says
at which offset and why; --tpiu-offset forces one) and gives the samples encoded. Leading noise
(random bytes before a text, ITM, TPIU or orbflow capture) is skipped and named, and an orbflow
capture with bad frames all along is still orbflow. Prints one ok/FAIL line per check."""
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import check, tcp_server  # noqa: E402
from test_cli import TOOL, itm_stream, orbflow_frames, pcs_of, scen_path, tpiu_frames  # noqa: E402
from swo_capture import syncless_capture  # noqa: E402

TMP = harness.scratch("detection-test")


def batch(source, elf, *extra):
    r = subprocess.run([TOOL, "--batch", "-o", "json", *extra, source, elf], capture_output=True, timeout=60)
    j = json.loads(r.stdout) if r.stdout.strip() else {}
    return r.returncode, j, r.stderr.decode(errors="replace").strip()


def profile(j):
    return j.get("format"), j.get("total"), {r["name"]: r["samples"] for r in j.get("rows", [])}


def losses(j):
    return " | ".join(j.get("losses", []))


def notes(j):
    return " | ".join(j.get("notes", []))


def syncless_tpiu(pcs, elf, ref):
    """A capture with no full sync: detected, aligned by content, every sample encoded decoded."""
    path = os.path.join(TMP, "syncless.swo")
    open(path, "wb").write(syncless_capture(pcs, lead=5))
    code, j, err = batch(path, elf)
    why = notes(j)
    check("TPIU capture without a full sync: detected as tpiu, every sample it encodes, the same profile",
          code == 0 and j.get("format") == "tpiu" and profile(j)[1:] == ref[1:],
          "exit %d, format %s, %s samples (want %d) %s" % (code, j.get("format"), j.get("total"), ref[1], err))
    check("... the report says where the frames were aligned and why",
          "frames aligned by content at byte offset 5 (ID 1:" in why and "next best offset" in why, why)
    # how the trace was read is no loss: the alignment and the other source IDs' bytes skipped were
    # listed under "lost:" (JSON losses) beside real losses (trial of 2026-12-07)
    r = subprocess.run([TOOL, "--batch", path, elf], capture_output=True, text=True, timeout=60)
    lost = [ln for ln in r.stdout.splitlines() if ln.startswith("lost:")]
    noted = [ln for ln in r.stdout.splitlines() if ln.startswith("note:")]
    check("... as notes, not losses: the table's note: lines, JSON notes; no lost: line, JSON losses empty",
          not lost and not j.get("losses") and any("aligned by content" in ln for ln in noted) and
          any("other source IDs" in ln for ln in noted), "lost %s, notes %s" % (lost, noted))
    code, j, err = batch(path, elf, "--tpiu-offset", "5")
    check("... --tpiu-offset 5 (implies -f tpiu): the same samples", code == 0 and profile(j)[1:] == ref[1:] and
          "as --tpiu-offset asked" in notes(j), "exit %d, %s samples %s" % (code, j.get("total"), notes(j)))
    code, j, err = batch(path, elf, "--tpiu-offset", "6")
    check("... a wrong --tpiu-offset is obeyed: next to no samples", (j.get("total") or 0) < ref[1] // 20,
          "exit %d, %s samples" % (code, j.get("total")))


def leading_noise(captures, elf, refs):
    """512 random bytes before each kind of capture: detected past them, nothing lost, and said."""
    rng = random.Random(42)
    noise = bytes(rng.randrange(256) for _ in range(512))
    for fmt, data in captures.items():
        path = os.path.join(TMP, "noise." + fmt)
        open(path, "wb").write(noise + data)
        code, j, err = batch(path, elf)
        said = [x for x in j.get("losses", []) if "bytes of noise before the %s stream skipped" % fmt in x]
        check("512 random bytes before a %s capture: detected, every sample, the noise named" % fmt,
              code == 0 and profile(j)[:2] == refs[fmt][:2] and said,
              "exit %d, format %s, %s samples (want %s) %s %s" % (code, j.get("format"), j.get("total"),
                                                                  refs[fmt][1], losses(j)[:300], err[-200:]))


def saved_as_unicode(elf):
    """A text capture as an editor or a Windows console saves it: with a UTF-8 byte order mark, or as
    UTF-16 (little- or big-endian, with or without a mark, CRLF lines) reads as the capture itself: the
    same profile by task, no loss. Before, the mark spoiled the first line (its task name lost: 59 % of
    samples 'unnamed'), and UTF-16 read as ITM ('TPIU frames read as ITM? try -f tpiu', no sample)."""
    tasks_uart, tasks_elf = scen_path("tasks", "uart.txt"), scen_path("tasks", "fw.elf")
    text = open(tasks_uart, "rb").read().decode()
    code, j, err = batch(tasks_uart, tasks_elf, "--by", "task")
    ref = profile(j)[1:]
    for what, data in (("UTF-8 with a byte order mark", b"\xef\xbb\xbf" + text.encode()),
                       ("UTF-16 LE with its mark, CRLF", text.replace("\n", "\r\n").encode("utf-16")),
                       ("UTF-16 LE without a mark", text.encode("utf-16-le")),
                       ("UTF-16 BE with its mark", b"\xfe\xff" + text.encode("utf-16-be"))):
        path = os.path.join(TMP, "saved as %s.txt" % what)
        open(path, "wb").write(data)
        code, j, err = batch(path, tasks_elf, "--by", "task")
        check("a text capture saved as %s: read as text, the same profile by task, no loss, no diagnostic" % what,
              code == 0 and j.get("format") == "text" and profile(j)[1:] == ref and not j.get("losses") and
              not j.get("diagnostics"), "exit %d, %s, %s %s" % (code, profile(j)[:2], losses(j), j.get("diagnostics")))
    path = os.path.join(TMP, "utf16 read as itm.txt")
    open(path, "wb").write(text.encode("utf-16"))
    code, j, err = batch(path, tasks_elf, "-f", "itm")
    check("... and forced to be read as ITM: no samples, said to be UTF-16 text to convert",
          code == 2 and "its bytes are UTF-16 text" in err and "try -f tpiu" not in err + losses(j), err)


def orbflow_bad_frames(data, elf, ref):
    """Bad frames all along an orbflow capture: still orbflow, every good frame's samples."""
    rng = random.Random(7)
    frames, out = data.split(b"\0"), []
    for k, f in enumerate(frames):
        out.append(f)
        if k % 3 == 1 and 0 < k < len(frames) - 1:  # a frame of random non-zero bytes: bad COBS or sum
            out.append(bytes(rng.randrange(1, 256) for _ in range(rng.randint(5, 40))))
    path = os.path.join(TMP, "badframes.orbflow")
    open(path, "wb").write(b"\0".join(out))
    code, j, err = batch(path, elf)
    check("orbflow with a bad frame after every two good ones: detected, every sample",
          code == 0 and profile(j) == ref and "orbflow frames dropped" in losses(j),
          "exit %d, format %s, %s samples (want %d) %s" % (code, j.get("format"), j.get("total"), ref[1], err))


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

    refs = {}
    for fmt, data in (("itm", captures["itm"]), ("orbflow", captures["orbflow"]),
                      ("tpiu", tpiu_frames(captures["itm"])), ("text", open(uart, "rb").read())):
        path = os.path.join(TMP, "ref." + fmt)
        open(path, "wb").write(data)
        refs[fmt] = profile(batch(path, elf)[1])
        captures.setdefault(fmt, data)
    saved_as_unicode(elf)
    syncless_tpiu(pcs, elf, refs["itm"])
    leading_noise(captures, elf, refs)
    orbflow_bad_frames(captures["orbflow"], elf, refs["orbflow"])

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
