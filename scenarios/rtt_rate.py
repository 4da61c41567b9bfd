#!/usr/bin/env python3
"""What the RTT link carries, measured: a firmware that samples faster than any link here can carry
(the `rtt` app, forever, PERIOD ticks of SysTick at 168 MHz: about 2,400 guest instructions a sample)
streams over RTT; cmprof-top reads it through QEMU's gdbstub for SECONDS at each poll setting. Per
setting: polls a second, the share of wall time the guest was halted, bytes a second, samples a second
carried in the stream's lines, and the share of the samples taken that the ring had to leave out
(weighted in by the reservoir, or lost). Beside it, the UART: the bytes a sample takes in the `stream`
and `stream_tagged` captures (run them first: scen.py run stream stream_tagged), and the samples a
second 115200, 921600 and 2,000,000 baud (8N1: 10 bits a byte) carry at that size.

    python3 scenarios/rtt_rate.py [SECONDS]     prints a Markdown table (docs/rtt.md has one): each
                                                setting run 3 times, the median and the range"""
import json
import os
import re
import subprocess
import sys

import scen

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
REPEATS = 3  # runs of each setting: the median, and the range (the host's load moves QEMU's figures)


def line_samples(rec):
    """Samples carried in the stream lines of a record ('$' and '&' lines, untagged), from its first
    announce on (before it the host cannot place them: they count nowhere)."""
    n, version = 0, 0
    data = open(rec, "rb").read()
    for ln in data[max(data.find(b"@cmprof"), 0):].split(b"\n"):
        if ln.startswith(b"@cmprof v="):
            version = int(ln[10:].split(b" ")[0])
        if ln[:1] == b"&":
            ln = ln[8:]
        if ln[:1] != b"$" or b"!" not in ln:
            continue
        n += scen.sample_line_count(ln[:ln.rindex(b"!")].decode("latin-1"), version)
    return n


def measure(elf, size, rates):
    out = os.path.dirname(elf)
    uart = os.path.join(out, "uart.txt")
    if os.path.exists(uart):
        os.remove(uart)
    port = scen.free_port()
    q = subprocess.Popen(scen.qemu_machine("m4") + ["-display", "none", "-monitor", "none", "-serial", "file:" + uart,
                                                    "-semihosting-config", "enable=on,target=native", "-icount",
                                                    "shift=0", "-kernel", elf, "-gdb", "tcp:127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    try:
        scen.wait_for_text(uart, "boot: rtt scenario", q)
        for label, rate in rates:
            rec = os.path.join(out, "rate.rec")
            cmd = [scen.TOOL, "--batch", "--no-inline", "--force", "--duration", str(SECONDS), "--record", rec,
                   "-o", "json"] + (["--rate", rate] if rate else []) + ["rtt:127.0.0.1:%d" % port, elf]
            runs = []
            for _ in range(REPEATS):
                j = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout)
                carried = line_samples(rec)
                taken = j["total"] + j["lost"]
                h = j.get("halting", {})
                runs.append((h.get("rate", 0), h.get("halted_percent", 0), j["decoder"]["bytes"] / SECONDS / 1000,
                             carried / SECONDS, 100.0 * (1 - carried / taken) if taken else 0))
            cells = []
            for k, f in enumerate(("%.0f", "%.1f %%", "%.1f", "%.0f", "%.0f %%")):
                v = sorted(r[k] for r in runs)
                cells.append((f % v[len(v) // 2]) + ((" (" + f % v[0] + " to " + f % v[-1] + ")") if len(v) > 1 else ""))
            rows.append("| RTT, %d-byte buffer, %s | %s |" % (size, label, " | ".join(cells)))
    finally:
        q.kill()
        q.wait()
    return rows


def uart_rows():
    rows = []
    for name in ("stream", "stream_tagged"):
        path = os.path.join(scen.BUILD, name, "uart.txt")
        if not os.path.exists(path):
            continue
        text = open(path, "rb").read().decode("latin-1")
        version = int(re.search(r"@cmprof v=(\d+) ", text).group(1))
        lines = [ln for ln in text.split("\n") if ln[:1] in ("$", "%") and "!" in ln]
        # full lines (16 samples), newlines included, over their samples
        full = [ln for ln in lines if scen.sample_line_count(ln[:ln.rindex("!")], version) == 16]
        per = sum(len(ln) + 1 for ln in full) / (16.0 * len(full))
        rows.append("| UART, %s stream (%.2f bytes a sample) | %s |" % (
            "tagged" if "tagged" in name else "untagged", per,
            " | ".join("%.0f" % (baud / 10 / per) for baud in (115200, 921600, 2000000))))
    return rows


def main():
    print("| link, poll | polls/s | core halted | KB/s | samples/s carried | left to the ring |")
    print("|---|---|---|---|---|---|")
    for size, rates in ((2048, (("every 10 ms", None), ("as fast as the server answers", "max"))),
                        (8192, (("every 10 ms", None),))):
        s = scen.scenario("rtt_rate_%d" % size, "rtt", CMPROF_STREAM=1, CMPROF_RING_N=256, PERIOD=400,
                          CMPROF_JITTER=255, FOREVER=1, HEARTBEAT=1000000, CMPROF_RTT_SIZE="%du" % size,
                          CMPROF_RTT_ROOM="512u", rtt=True)
        for row in measure(scen.build(s), size, rates):
            print(row, flush=True)
    print()
    print("| UART (8N1) | 115200 baud | 921600 baud | 2 Mbaud |")
    print("|---|---|---|---|")
    for row in uart_rows():
        print(row)


if __name__ == "__main__":
    main()
