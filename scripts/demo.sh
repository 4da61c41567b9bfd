#!/usr/bin/env bash
# make demo: the demo firmware streams its profile from QEMU over TCP (127.0.0.1, a free port);
# cmprof-top shows it live. Quitting cmprof-top (q) stops QEMU. Extra arguments go to cmprof-top
# (--batch --duration 5 -o json: a report instead of the view; --record FILE: the raw stream).
# QEMU waits for cmprof-top to connect before the firmware starts, so the stream is read from its
# first byte: the announce the firmware sends before it samples is never missed (on a pty, QEMU
# drops what the firmware writes before a reader opens it: the first samples came before any
# announce and counted as lost, and the first line was a tail).
#   TARGET=cortex-m4 (default): the motor-controller demo on an STM32F4 board, sampled by SysTick
#   TARGET=cortex-a15 | cortex-a7: a control loop and a CRC on QEMU's virt board, sampled by the
#                                  PMU's cycle counter overflowing into the GIC
#   TARGET=cortex-r5: the same on a Cortex-R5 (QEMU's vexpress-a15 board), sampled by its SP804 timer
#   TARGET=gdb: the cortex-m4 demo built with no cmprof code at all, sampled by halting it through
#               QEMU's gdbstub (the probe path: what cmprof-top does with OpenOCD, pyOCD or J-Link)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${TARGET:-cortex-m4}
case $target in
cortex-m4)
    elf=$(python3 scenarios/scen.py build-demo)
    machine=(-M netduinoplus2)
    budgets=(--budget control=2.5 --budget crc_frame=30) ;;
gdb)
    elf=$(python3 scenarios/scen.py build-demo-plain)
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # -S: halted at reset until cmprof-top attaches; -singlestep: a halt lands on any instruction
    qemu-system-arm -M netduinoplus2 -display none -monitor none -serial null -icount shift=0 -singlestep \
        -kernel "$elf" -gdb "tcp:127.0.0.1:$port" -S &
    qemu=$!
    trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null' EXIT
    for _ in $(seq 100); do  # until the gdbstub listens
        python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
            "$port" 2>/dev/null && break
        kill -0 $qemu 2>/dev/null || exit 1
        sleep 0.05
    done
    build/cmprof-top --task-var current_task --task-name-offset 4 "$@" "gdb:127.0.0.1:$port" "$elf"
    exit ;;
cortex-a15 | cortex-a7)
    elf=$(python3 scenarios/scen.py build-demo-a "$target")
    machine=(-M virt -cpu "$target" -net none)
    budgets=() ;;
cortex-r5)
    elf=$(python3 scenarios/scen.py build-demo-a cortex-r5)
    machine=(-M vexpress-a15 -cpu cortex-r5f -m 2048 -audiodev none,id=snd0 -global pl041.audiodev=snd0)
    budgets=() ;;
*)
    echo "demo: TARGET is cortex-m4 (the default), cortex-a15, cortex-a7, cortex-r5 or gdb, not '$target'" >&2
    exit 2 ;;
esac
log=$(mktemp)
qemu-system-arm "${machine[@]}" -display none -monitor none -serial tcp:127.0.0.1:0,server=on,wait=on \
    -icount shift=0 -semihosting-config enable=on,target=native -kernel "$elf" >"$log" 2>&1 &
qemu=$!
trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null; rm -f "$log"' EXIT
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/.*waiting for connection on: .*tcp:127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
    [[ -n $port ]] && break
    kill -0 $qemu 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
done
[[ -n $port ]] || { echo "demo: QEMU did not report its port" >&2; cat "$log" >&2; exit 1; }
for arg in "$@"; do [[ $arg == --batch ]] && budgets=(); done  # the live view's (batch checks none, and says so)
build/cmprof-top "${budgets[@]}" "$@" "tcp:127.0.0.1:$port" "$elf"
