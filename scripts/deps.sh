#!/usr/bin/env bash
# Install the Debian packages cmprof needs to build, test and demo.
# Usage: scripts/deps.sh [fuzz|bench]   (fuzz: also clang and its libFuzzer runtime, for make fuzz;
#                                       bench: also GNU time, whose %M is each run's peak memory,
#                                       and gdb-multiarch for the GDB/MI loop)
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
set -euo pipefail

packages=(
  make gcc libc6-dev pkg-config python3
  gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi
  qemu-system-arm
  libelf-dev libdwarf-dev libiberty-dev libserialport-dev libncurses-dev
  tmux util-linux
  openocd mandoc
  zlib1g-dev golang-go lcov valgrind  # -o pprof's gzip; the readers tests/test_outputs.py checks the outputs with
)
if [[ ${1:-} == fuzz ]]; then
  packages+=(clang libclang-rt-14-dev)
fi
if [[ ${1:-} == bench ]]; then
  packages+=(time gdb-multiarch)  # gdb-multiarch: the GDB/MI loop the halting samples are compared with
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  $cmd
else
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run as root:  sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
