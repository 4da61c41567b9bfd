#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang and runs each for FUZZ_SECONDS (default 60).
# Seed corpora come from the scenario outputs (build/scenarios, made by `make scenarios`) and
# fuzz/seeds/. Crashing inputs land in build/fuzz/crashes/TARGET/; copy the ones worth keeping to
# fuzz/crashes/TARGET/, where `make test` replays them. Prints executions and findings per target.
#   FUZZ_SECONDS=N  FUZZ_TARGETS="ingest text elf gdb"  FUZZ_JOBS=1
set -u
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"ingest text elf gdb"}
jobs=${FUZZ_JOBS:-1}
command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)" >&2; exit 1; }
[[ -d build/scenarios ]] || python3 scenarios/scen.py run >/dev/null
B=build/fuzz
mkdir -p "$B"
common=(decode/itm.c decode/text.c decode/tpiu.c decode/orbflow.c decode/detect.c)
syms=(symbols/table.c symbols/elf.c symbols/symtab.c symbols/frames.c symbols/dwarf.c symbols/rawdwarf.c symbols/rawscopes.c symbols/rawlines.c symbols/aranges.c symbols/isolate.c symbols/units.c symbols/lookup.c symbols/demangle.c)
flags=(-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
libs=(-lelf -ldwarf -liberty -lm -pthread)
build() {
    case $1 in
    ingest) clang "${flags[@]}" fuzz/fuzz_ingest.c app/batch.c app/baseline.c app/speedscope.c profile/ingest.c profile/profile.c profile/stacks.c profile/pcindex.c profile/escape.c \
                "${syms[@]}" "${common[@]}" "${libs[@]}" -o "$B/fuzz_ingest" ;;
    text) clang "${flags[@]}" fuzz/fuzz_text.c decode/text.c -o "$B/fuzz_text" ;;
    elf) clang "${flags[@]}" fuzz/fuzz_elf.c "${syms[@]}" "${libs[@]}" -o "$B/fuzz_elf" ;;
    gdb) clang "${flags[@]}" fuzz/fuzz_gdb.c source/gdb.c source/rsp.c source/outq.c source/net.c -o "$B/fuzz_gdb" ;;
    esac
}
seed() {
    local t=$1 dir=$B/corpus/$1 f
    mkdir -p "$dir"
    [[ -d fuzz/seeds/$t ]] && cp fuzz/seeds/$t/* "$dir"/ 2>/dev/null
    case $t in
    ingest | text)
        for f in build/scenarios/*/uart.txt build/scenarios/*/gdb.rec; do  # gdb.rec: call stacks
            [[ -f $f ]] && head -c 3000 "$f" >"$dir/$(basename "$(dirname "$f")")-$(basename "$f").txt"
        done ;;
    elf)
        for f in build/scenarios/{m3_loops,m0_loops,loops_inline_o2,demo,tasks}/fw.elf; do
            [[ -f $f ]] && cp "$f" "$dir/$(basename "$(dirname "$f")").elf"
        done ;;
    esac
}
# Each input that crashed the in-process ELF target: where it crashed (the first frame), and whether
# cmprof-top, which loads DWARF in a child, survives it. Fails when a crash is in our own code or
# the tool does not contain it.
triage_elf() {
    local f where rc ours=0 contained=0 total=0 uncontained=0
    declare -A places
    for f in "$B"/crashes/elf/*; do
        total=$((total + 1))
        where=$(ASAN_OPTIONS=detect_leaks=0 timeout 20 "$B/fuzz_elf" "$f" 2>&1 |
            grep -a -m1 -E '^ +#[0-9]+ .* in [^_]' | grep -a -v -E '__interceptor|__asan|__ubsan|libc\.so' |
            sed -E 's/.* in ([^ ]+) .*\((.*)\+0x.*/\1 (\2)/; s/.* in ([^ ]+) (.*):[0-9]+.*/\1 (\2)/')
        [[ -z $where ]] && where=$(ASAN_OPTIONS=detect_leaks=0 timeout 20 "$B/fuzz_elf" "$f" 2>&1 |
            grep -a -m1 -E 'runtime error|ERROR: AddressSanitizer|ERROR: libFuzzer' | cut -c1-80)
        where=${where:-"no report when replayed (timeout or memory limit)"}
        places[$where]=$(( ${places[$where]:-0} + 1 ))
        [[ $where == *libdwarf* || $where == *libelf* ]] || ours=$((ours + 1))
        timeout 60 build/cmprof-top --resolve "$f" 0x0 >/dev/null 2>&1
        rc=$?
        if ((rc < 128)); then contained=$((contained + 1)); else uncontained=$((uncontained + 1)); fi
    done
    for where in "${!places[@]}"; do echo "  ${places[$where]}x  $where"; done | sort -rn
    echo "fuzz elf: $total crashing inputs, $ours outside libdwarf/libelf; cmprof-top contains $contained of $total (exit < 128)"
    ((ours == 0 && uncontained == 0))
}

status=0
for t in $targets; do
    build "$t" || { echo "fuzz: $t did not build" >&2; status=1; continue; }
    seed "$t"
    rm -rf "$B/crashes/$t"
    mkdir -p "$B/crashes/$t"
    env=()
    [[ $t == ingest ]] && env=(FUZZ_ELF=build/scenarios/m3_loops/fw.elf)
    extra=()
    # the ELF target meets libdwarf's own crashes, which the tool contains in a child process:
    # keep going after each one so that our code gets its share of the run
    [[ $t == elf ]] && extra=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    log=$B/$t.log
    env "${env[@]}" "$B/fuzz_$t" "$B/corpus/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
        -max_len=65536 -artifact_prefix="$B/crashes/$t/" -print_final_stats=1 "${extra[@]}" >"$log" 2>&1
    rc=$?
    execs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
    [[ $execs == 0 ]] && execs=$(grep -a -o '#[0-9]*' "$log" | tail -1 | tr -d '#')
    found=$(ls "$B/crashes/$t" | wc -l)
    echo "fuzz $t: ${seconds} s, ${execs:-?} executions, corpus $(ls "$B/corpus/$t" | wc -l), $found crashing inputs in $B/crashes/$t (exit $rc)"
    if [[ $t == elf ]] && ((found)); then
        triage_elf || status=1
    elif ((found)); then
        status=1
    fi
done
exit $status
