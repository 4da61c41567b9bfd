#!/usr/bin/env bash
# Runs every test and ends with one line "N passed, N failed"; exits non-zero on any failure.
#   1. host unit tests of the firmware library, plain and under AddressSanitizer/UBSan
#   2. the firmware library builds with -Wall -Wextra -Werror for every core and option set, and
#      every timer port but SysTick's is proven (in the object code) to leave SysTick alone; the
#      Cortex-A/R PMU header builds and counts exactly on QEMU's virt board
#   3. the QEMU reference scenarios, checked against the truth plugin, profiled by cmprof-top
#   4. cmprof-top end to end: --resolve parity with addr2line, batch outputs, bad input, the
#      adversarial inputs of issue 12, and the ELF zoo, CLI and hostile inputs again under ASan/UBSan/LSan
#   5. the live view in tmux: a replayed stream on a pty, keys, resize, a cut source, the demo
# Each step prints "ok ..." / "FAIL ..." lines; a step that exits non-zero without a FAIL line
# counts as one failure, so a crash or a missing tool can never pass silently.
# Time: the tool's two builds (the host code compiled once as two libraries, plain and ASan) run
# side by side; everything else runs in lanes, each a function of steps (add a step to the lane its
# kind of test belongs in), started as soon as what it reads exists; a step that needs what another
# lane makes waits for its marker (wait_for). The whole run is bound by CPU (docs/testing.md):
#   firmware_lane         firmware and recipe builds, the SysTick proof, the code's layout:
#                         CPU-bound, nice 10, from the tool's build on
#   unit_lane             the unit tests' build, from the tool's build on; then the unit tests and
#                         fuzz replays (the two that read scenarios' files once those exist):
#                         CPU-bound, nice 10
#   qemu_wall_time_lane   the scenarios and tests that sample QEMU by wall time, one at a time
#                         (never two at once), from the tool's build on: the RTT scenario, the
#                         halting ones, then the tests
#   main                  the scenarios counted by instruction (-icount: the same whatever CPU they
#                         get) on both cores, then every other CPU-bound check: nice 10
#   live_view_lane(_asan), live_view_sizes_lane   the live view in tmux on fixed captures
#   servers_lane(_asan), trace_servers_lane(_asan), field_lane(_asan)   tests that mostly wait on
#                         sockets, pipes and timeouts (the gdb checks apart from OpenOCD's and RTT's)
#   resolve_lane          --resolve against addr2line: CPU-bound, nice 10
# (the last three kinds start once the instruction-count scenarios ran)
# A test's plain and ASan runs write to directories of their own (tests/harness.py's scratch), so
# they run in lanes side by side. The main lane runs one process at a time after the scenarios: the
# lanes whose tests wait on screens and sockets get the CPU first when they wake. A lane keeps its
# own counts; one that ends without them is a failure.
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()

# each step's wall time, CPU seconds, ok/FAIL counts and start go to build/test-times.txt, slowest
# first at the end, to see where the time goes
mkdir -p build
times=build/test-times.txt
: >"$times"
hz=$(getconf CLK_TCK)  # /proc/PID/stat counts CPU time in these ticks
run_t0=$EPOCHREALTIME  # each step's start, from here, shows the lanes side by side

step() {
    local name=$1
    shift
    local out rc p f t0=$EPOCHREALTIME ticks
    # the step's status and CPU time (user + system of its subshell and of the subshell's finished
    # children: fields 14 to 17 of its stat), read in that subshell, where no lane's end is
    # counted, and passed back as a last line
    out=$("$@" 2>&1; rc=$?; read -ra st <"/proc/$BASHPID/stat"; printf '\n@step %d %d\n' "$rc" $((st[13] + st[14] + st[15] + st[16])))
    ticks=${out##*$'\n'@step }
    out=${out%$'\n'@step *}
    rc=${ticks%% *}
    ticks=${ticks#* }
    local t1=$EPOCHREALTIME
    printf '%s\n' "$out" | grep -E '^(ok|FAIL)' || true
    mapfile -t -O "${#failures[@]}" failures < <(printf '%s\n' "$out" | grep '^FAIL' | cut -c1-300)
    p=$(printf '%s\n' "$out" | grep -c '^ok ')
    f=$(printf '%s\n' "$out" | grep -c '^FAIL')
    if ((rc != 0 && f == 0)); then
        printf '%s\n' "$out" | tail -20
        echo "FAIL $name: exited with status $rc"
        failures+=("FAIL $name: exited with status $rc")
        f=1
    fi
    awk -v a="$t0" -v b="$t1" -v c="$ticks" -v hz="$hz" -v p="$p" -v f="$f" \
        -v z="$run_t0" -v n="$name" \
        'BEGIN { printf "%7.1f s %7.1f cpu %5d ok %3d FAIL  at %4.0f s  %s\n", b - a, c / hz, p, f, a - z, n }' >>"$times"
    passed=$((passed + p))
    failed=$((failed + f))
}

for tool in cc make arm-none-eabi-gcc arm-none-eabi-addr2line qemu-system-arm python3 tmux openocd mandoc \
            go genhtml callgrind_annotate; do
    if ! command -v "$tool" >/dev/null; then
        echo "FAIL dependency: $tool is not installed (run scripts/deps.sh)"
        failures+=("FAIL dependency: $tool is not installed")
        failed=$((failed + 1))
    fi
done

# ---- the lanes: each a function of steps, run in the background with its own counts -------------
lane_dir=$(mktemp -d)
trap 'rm -rf "$lane_dir"' EXIT
lanes=()
start_lane() {
    local fn=$1
    (
        passed=0 failed=0 failures=()
        "$fn"
        echo "$passed $failed" >"$lane_dir/$fn.counts"
        ((${#failures[@]} == 0)) || printf '%s\n' "${failures[@]}" >"$lane_dir/$fn.failures"
    ) >"$lane_dir/$fn.log" 2>&1 &
    lanes+=("$fn $!")
}

# A step that reads what a later step makes waits for that step's marker (touched when it ends,
# passed or not: the reader's own checks then fail on what is missing, never hang).
wait_for() {
    while [[ ! -e $lane_dir/$1 ]]; do sleep 1; done
}

echo "== build"
# the two builds of the tool side by side; the unit tests and fuzz replays are built next, in their
# lane, beside the scenarios: the other lanes need only the tool
step "build cmprof-top and its ASan/UBSan build (make -j2)" make -s -j2 tool asan-tool

# every core x option set, each file compiled only when its preprocessed text is new for that core
firmware_builds() {
    python3 tests/firmware_builds.py
}
# The Zephyr hooks against the stand-in of Zephyr's API (the module itself is built by hand: README)
zephyr_hooks_builds() {
    local cpu opts
    mkdir -p build/firmware-check
    for cpu in cortex-m0 cortex-m3 cortex-m4 cortex-m7; do
        for opts in "-DCMPROF_STREAM=1" "-DCMPROF_STREAM=0"; do
            if arm-none-eabi-gcc -std=c11 -Wall -Wextra -Werror -Wshadow -Wredundant-decls -Os -mcpu=$cpu -mthumb \
                $opts -Ifirmware -Itests/zoo/zephyr -c firmware/rtos/cmprof_zephyr.c -o build/firmware-check/cmprof_zephyr.o; then
                echo "ok   firmware $cpu $opts: the Zephyr hooks build"
            else
                echo "FAIL firmware $cpu $opts: the Zephyr hooks build"
            fi
        done
    done
    # the module's timer port from four boards' devicetrees, the app's own hooks beside cmprof's,
    # cmprof.h from the module's include directories, thread names in a dump, the drain's
    # write_line byte for byte at every length, its sleep after a pass (drain_wait_us)
    python3 tests/test_zephyr_module.py boards chain include dump line wake
}
# The module's way out of a starved drain: its priority and the full ring's reservoir are Kconfig
# options with help, and the module and its CMake use them (the module is built by hand: README)
zephyr_options() {
    local k=zephyr/Kconfig
    if grep -A4 '^config CMPROF_DRAIN_PRIORITY$' $k | grep -q '^	help' &&
        grep -q 'CMPROF_DRAIN_PRIORITY, 0, CONFIG_CMPROF_START_DELAY_MS' zephyr/cmprof_module.c &&
        grep -q '^#if CONFIG_CMPROF_DRAIN_PRIORITY == 255' zephyr/cmprof_module.c; then
        echo "ok   Zephyr: the drain thread's priority is CONFIG_CMPROF_DRAIN_PRIORITY, with help"
    else
        echo "FAIL Zephyr: the drain thread's priority is CONFIG_CMPROF_DRAIN_PRIORITY, with help"
    fi
    if grep -A4 '^config CMPROF_RESERVOIR$' $k | grep -q '^	help' &&
        grep -q 'CMPROF_RESERVOIR_N=${CONFIG_CMPROF_RESERVOIR}u' zephyr/CMakeLists.txt; then
        echo "ok   Zephyr: the full ring's reservoir is CONFIG_CMPROF_RESERVOIR, with help"
    else
        echo "FAIL Zephyr: the full ring's reservoir is CONFIG_CMPROF_RESERVOIR, with help"
    fi
    # help and ranges everywhere, Zephyr's dependency conventions, the configure-time checks
    python3 tests/test_zephyr_module.py options
}

# no two files use each other (host, each firmware configuration, Python), no function over 150
# lines; the checker itself must find the loops hidden in tests/layout_fixtures/
layout_gate() {
    local out
    if out=$(python3 scripts/layout_check.py --allow-loops 0 --max-lines 150); then
        echo "ok   layout: no loop of files, no function over 150 lines: $(printf '%s\n' "$out" | grep -E '^(loops|over)' | tr '\n' ' ')"
    else
        echo "FAIL layout: $(printf '%s\n' "$out" | grep -E '^(loops|  loop|over)' | tr '\n' ' ')"
    fi
}

# The firmware library, its RTOS adapters and recipes built and run on QEMU (-icount), and the
# timer ports' SysTick proof: CPU-bound and needing only the compilers, QEMU and the tool, at nice
# 10 from the tool's build on, beside the scenario runs (which leave a core part idle) and the rest.
firmware_lane() {
    renice -n 10 -p "$BASHPID" >/dev/null
    echo "== firmware builds"
    step "firmware builds" firmware_builds
    step "Zephyr hooks build" zephyr_hooks_builds
    step "Zephyr options" zephyr_options
    step "stream drain stack (-fstack-usage)" python3 tests/stack_check.py
    step "FreeRTOS builds: recorder #error, either include order, M0 and M4F ports, dump mode with --gc-sections" python3 tests/test_frtos_builds.py
    step "README's bare-metal recipe, built as printed, run on mps2-an385" python3 tests/test_readme_recipe.py
    step "docs/boards.md recipes: Nucleo-F4, nRF52 DK, Pico built as printed; run on netduinoplus2 and microbit" \
        python3 tests/test_board_recipes.py
    step "build-id snippet" python3 tests/test_build_id.py
    step "Cortex-A/R PMU API, on QEMU virt" python3 tests/test_pmu.py
    # in a directory of its own (build/systick-free)
    step "timer ports leave SysTick alone" python3 tests/systick_free.py
    # the code's layout (sources only, compiled alone): here, beside the scenario runs, not after them
    step "symbols/ in layers, no loop" python3 tests/test_symbols_layers.py
    step "layout: loops and long functions" layout_gate
    step "layout checker: the loops and long functions it must find" python3 tests/test_layout_check.py
}
start_lane firmware_lane

# The unit tests and the fuzz replays, built beside the scenario runs (mostly links: the host code
# is two libraries the tool's build made), then run at once, but for the two that read scenarios'
# files (test_view reads build/scenarios/stream/fw.elf, test_ingest the rtos capture): those run
# once the scenarios ran. CPU-bound, nice 10.
UNIT_READS_SCENARIOS="test_view test_ingest"
unit_lane() {
    renice -n 10 -p "$BASHPID" >/dev/null
    echo "== unit tests"
    step "build the unit tests and the fuzz replays" make -s -j2 unit replay
    touch "$lane_dir/unit.built"  # the resolve lane runs build/lookup-check
    local kind t target inputs
    for kind in plain asan; do
        for t in build/tests/$kind/test_*; do
            [[ -x $t && " $UNIT_READS_SCENARIOS " != *" $(basename "$t") "* ]] || continue
            echo "-- $kind/$(basename "$t")"
            step "$kind/$(basename "$t")" "$t"
        done
    done
    echo "== fuzz regressions"
    for target in $(make -s --no-print-directory fuzz-replayed); do  # the Makefile lists the targets
        inputs=(fuzz/crashes/$target/*)
        [[ -e ${inputs[0]} ]] || continue
        step "replay $target" build/tests/asan/replay_$target "${inputs[@]}"
    done
    wait_for scenarios.icount
    for kind in plain asan; do
        for t in $UNIT_READS_SCENARIOS; do
            echo "-- $kind/$t"
            step "$kind/$t" "build/tests/$kind/$t"
        done
    done
}
start_lane unit_lane

# The scenarios' names by kind; their runs in two parts: those sampled by wall time (halting and
# RTT, one at a time) in the QEMU wall-time lane, the rest (counted by instruction) in the main lane.
scen_icount=$(python3 tests/scen_sets.py list icount)
scen_halting=$(python3 tests/scen_sets.py list halting)
scen_rtt=$(python3 tests/scen_sets.py list rtt)
# run_scenarios NICE NAME...: scen.py runs every scenario when given no name: an empty set runs none
run_scenarios() {
    local n=$1
    shift
    (($#)) || return 0
    nice -n "$n" python3 scenarios/scen.py run "$@"
}
# the firmware of those sampled by wall time first (seconds): the wall-time lane starts on it, and so
# do the tests that read only their ELFs (gdb_loops', gdb_tasks')
# shellcheck disable=SC2086  # the names, one word each
step "halting and RTT scenarios' firmware" python3 tests/scen_sets.py build $scen_halting $scen_rtt

# The scenarios and tests that sample QEMU by wall time, one after another (never two at once), from
# the tool's build on, beside the CPU-bound lanes at nice 10: the RTT scenario first (the servers
# lanes read its capture), then the halting ones (the scenario checks, test_codemap and test_outputs
# read theirs), then the tests.
qemu_wall_time_lane() {
    echo "== QEMU sampled by wall time"
    # shellcheck disable=SC2086
    step "scenario runs: RTT" run_scenarios 0 $scen_rtt
    touch "$lane_dir/scenarios.rtt"
    # shellcheck disable=SC2086
    step "scenario runs: halting" run_scenarios 0 $scen_halting
    touch "$lane_dir/scenarios.wall"
    step "demo: its first seconds, --record" python3 tests/test_demo.py
    step "gdb server source: QEMU's halted share" python3 tests/test_gdb.py --qemu-only
    step "gdb server source: QEMU's halted share (asan)" env CMPROF_TOOL=build/asan/cmprof-top \
        python3 tests/test_gdb.py --qemu-only
    step "rtt: source through QEMU's gdbstub, attached twice while the guest runs" python3 tests/test_rtt.py --qemu-only
    step "tui: the demos live, QEMU's gdbstub live" python3 tests/test_tui.py qemu
    wait_for scenarios.icount  # test_field reads the stream scenario's capture
    step "Ctrl-Z with QEMU's gdbstub, batch and live" python3 tests/test_field.py qemu_job_control_tests
}
start_lane qemu_wall_time_lane

# The OpenOCD and RTT sources against scripted servers: mostly waiting on sockets and timeouts. They
# read the halting scenarios' ELFs (built above) and the RTT and stream scenarios' files (their
# markers), so they wait beside the scenario runs. (test_gdb's, whose pace and deadline checks beside
# the scenario runs and three other jobs failed 3 checks, waits for them: below.)
trace_servers_lane() {  # each waits on its own sockets
    echo "== openocd and rtt sources"
    step "openocd source" python3 tests/test_openocd.py
    wait_for scenarios.rtt  # its capture
    wait_for scenarios.icount  # the stream scenario's ELF (one with no RTT block)
    step "rtt: source against scripted GDB and OpenOCD servers" python3 tests/test_rtt.py --no-qemu
}
start_lane trace_servers_lane
trace_servers_asan_lane() {
    echo "== openocd and rtt sources, ASan"
    step "openocd source (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_openocd.py
    wait_for scenarios.rtt
    wait_for scenarios.icount
    step "rtt: source against scripted servers (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_rtt.py --no-qemu
}
start_lane trace_servers_asan_lane

# The scenarios counted by instruction (-icount: the same whatever CPU they get), on both cores at
# nice 10: the wall-time lane's QEMU gets the CPU first
echo "== QEMU scenario runs"
# shellcheck disable=SC2086
step "scenario runs" run_scenarios 10 $scen_icount
touch "$lane_dir/scenarios.icount"

# The live view in tmux on fixed captures (no QEMU): waits on screens. A test's plain and ASan runs
# write to directories of their own (harness.scratch), so they go in lanes side by side.
live_view_lane() {
    echo "== live view on captures (tmux)"
    step "tui: on captures" python3 tests/test_tui.py captures
    step "live view: issue 35 fixes" python3 tests/test_live_view.py
    step "overhead without the idle polls, idle tasks by name" python3 tests/test_idle_overhead.py
    # test_tui's --diff view reads the captures test_diff makes in the main lane
    while [[ ! -e $lane_dir/diff.done ]]; do sleep 1; done
    step "tui: --diff live" python3 tests/test_tui.py diff
}
start_lane live_view_lane
live_view_sizes_lane() {  # test_tui's checks at two sizes each, beside the rest (its own tmux server)
    echo "== live view on captures (tmux), at two sizes"
    step "tui: on captures, at two sizes" python3 tests/test_tui.py captures_sizes
}
start_lane live_view_sizes_lane
live_view_asan_lane() {
    echo "== live view on captures (tmux), ASan"
    step "live view: issue 35 fixes (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_live_view.py
    step "overhead without the idle polls (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_idle_overhead.py
}
start_lane live_view_asan_lane

# Scripted GDB servers and stopped runs: mostly waiting on sockets and timeouts
servers_lane() {
    echo "== gdb sources"
    step "gdb server source" python3 tests/test_gdb.py --no-qemu
}
start_lane servers_lane
servers_asan_lane() {
    echo "== gdb sources, ASan"
    step "gdb server source (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_gdb.py --no-qemu
}
start_lane servers_asan_lane

field_lane() {
    echo "== field hardening, format detection"
    step "field hardening: files, signals, batch ends" python3 tests/test_field.py
    step "format detection: leading zeros, an early pause" python3 tests/test_detection.py
    step "no stray writes: stdout, --record links and FIFOs, --rate" python3 tests/test_stray_writes.py
}
start_lane field_lane
field_asan_lane() {
    echo "== field hardening, format detection, ASan"
    step "field hardening (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_field.py
    step "format detection (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_detection.py
    step "no stray writes (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_stray_writes.py
}
start_lane field_asan_lane

# --resolve against addr2line on every scenario's ELF and more, once the lookup-check programs are
# built: CPU-bound, nice 10, beside the main lane
resolve_lane() {
    renice -n 10 -p "$BASHPID" >/dev/null
    echo "== --resolve"
    wait_for unit.built
    step "resolve parity" python3 tests/resolve_parity.py
}
start_lane resolve_lane
resolve_order_lane() {  # beside parity: the lane that ended the run last when the two went one after the other
    renice -n 10 -p "$BASHPID" >/dev/null
    echo "== --resolve, order"
    wait_for unit.built
    step "resolve order" python3 tests/resolve_order.py
}
start_lane resolve_order_lane

# The ASan runs of the main lane's tests, beside it (each writes to a directory of its own:
# harness.scratch; test_task_roots builds one ELF, so its two runs stay in the main lane): most of
# their time is waiting on the tool's deadlines, not CPU. nice 10, like the main lane.
main_asan_lane() {
    renice -n 10 -p "$BASHPID" >/dev/null
    local asan=build/asan/cmprof-top
    echo "== cmprof-top, ASan"
    step "diff baselines (asan)" env CMPROF_TOOL=$asan python3 tests/test_diff.py --baselines-only
    step "zoo (asan)" python3 tests/test_zoo.py
    step "cli (asan)" env CMPROF_TOOL=$asan python3 tests/test_cli.py
    step "hardening (asan)" env CMPROF_TOOL=$asan python3 tests/test_hardening.py
    step "unnamed task tags (asan)" env CMPROF_TOOL=$asan python3 tests/test_unnamed_tags.py
    step "functions of one name in two files (asan)" env CMPROF_TOOL=$asan python3 tests/test_same_name.py
    step "stream versions and announced numbers (asan)" env CMPROF_TOOL=$asan python3 tests/test_stream_announce.py
    wait_for scenarios.wall  # gdb.rec of the halting scenarios
    step "wrong ELF from the sampled addresses (asan)" env CMPROF_TOOL=$asan python3 tests/test_codemap.py
    step "other tools' formats (asan)" env CMPROF_TOOL=$asan python3 tests/test_outputs.py
}
start_lane main_asan_lane

# The main lane from here: work for the CPU, none of it timed, one process at a time. It yields to
# the lanes, whose tests wait on screens, sockets and timeouts and must get the CPU when they wake.
renice -n 10 -p "$BASHPID" >/dev/null

echo "== diff"
step "diff and the regression gate" python3 tests/test_diff.py
touch "$lane_dir/diff.done"  # the live view lane's last step reads its captures

echo "== cmprof-top"
step "cli" python3 tests/test_cli.py
step "hardening" python3 tests/test_hardening.py
step "RTOS task roots" python3 tests/test_task_roots.py
step "unnamed task tags" python3 tests/test_unnamed_tags.py
step "functions of one name in two files: rows, line information in part, formats, callers, drill-down" python3 tests/test_same_name.py
step "stream versions and announced numbers" python3 tests/test_stream_announce.py
step "install, man page, completion" python3 tests/test_install.py
step "make bench's harness: names, links, orbtop's end, the acceptance rows" python3 tests/test_bench.py
step "RTOS task roots (asan)" env CMPROF_TOOL=build/asan/cmprof-top python3 tests/test_task_roots.py

# what reads the halting scenarios' captures (gdb.rec): every scenario's, gdb_callers'
wait_for scenarios.wall
echo "== QEMU scenarios"
step "scenario checks" python3 scenarios/scen_check.py check
step "wrong ELF from the sampled addresses" python3 tests/test_codemap.py
step "other tools' formats: pprof, callgrind, lcov, trace" python3 tests/test_outputs.py

# the lanes' results join the rest, in the order they started
for lane in "${lanes[@]}"; do
    read -r fn pid <<<"$lane"
    wait "$pid"
    cat "$lane_dir/$fn.log"
    if read -r p f 2>/dev/null <"$lane_dir/$fn.counts"; then
        passed=$((passed + p))
        failed=$((failed + f))
        [[ ! -e $lane_dir/$fn.failures ]] || mapfile -t -O "${#failures[@]}" failures <"$lane_dir/$fn.failures"
    else  # the lane died before its count: a failure, never a pass
        echo "FAIL $fn: ended without its count"
        failures+=("FAIL $fn: ended without its count")
        failed=$((failed + 1))
    fi
done

# every lane has ended: no tool of this checkout may still run
step "no tool left running" python3 tests/leftovers.py

# The failures again, last, so a log cut in its middle still names them.
if ((${#failures[@]})); then
    echo "== failures"
    printf '%s\n' "${failures[@]}"
fi
sort -rn -o "$times" "$times"
echo "$passed passed, $failed failed"
((failed == 0))
