#!/usr/bin/env bash
# make demo: the demo firmware streams its profile from QEMU over a pty; cmprof-top shows it live.
# Quitting cmprof-top (q) stops QEMU. Extra arguments go to cmprof-top.
set -euo pipefail
cd "$(dirname "$0")/.."
elf=$(python3 scenarios/scen.py build-demo)
log=$(mktemp)
qemu-system-arm -M netduinoplus2 -display none -monitor none -serial pty -icount shift=0 \
    -semihosting-config enable=on,target=native -kernel "$elf" >"$log" 2>&1 &
qemu=$!
trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null; rm -f "$log"' EXIT
pty=""
for _ in $(seq 100); do
    pty=$(sed -n 's/.*redirected to \(\/dev\/pts\/[0-9]*\).*/\1/p' "$log")
    [[ -n $pty ]] && break
    kill -0 $qemu 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
done
[[ -n $pty ]] || { echo "demo: QEMU did not report its pty" >&2; cat "$log" >&2; exit 1; }
build/cmprof-top --budget control=2.5 --budget crc_frame=30 "$@" "$pty" "$elf"
