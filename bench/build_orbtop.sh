#!/bin/sh
# Builds orbtop (orbuculum's profiler; Debian has no package) from a checkout of its sources, for
# make bench's memory comparison (ORBUCULUM=SRC make bench). Only what orbtop needs, as orbuculum's
# meson.build lists it, with the system's libelf, libdwarf and ncurses; nothing is installed.
#     bench/build_orbtop.sh SRC OUT
set -e
[ $# -eq 2 ] || { echo "usage: bench/build_orbtop.sh ORBUCULUM_SOURCES OUT" >&2; exit 2; }
src=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/@VCS_TAG@/source/' "$src/Inc/git_version_info.h.in" > "$tmp/git_version_info.h"
mkdir -p "$(dirname "$out")"
cc -O2 -g -DLINUX -D_GNU_SOURCE -DSCREEN_HANDLING -Wno-error=deprecated-declarations \
   -include uicolours_default.h -I"$tmp" -I"$src/Inc" -I"$src/Inc/external" -I/usr/include/libdwarf \
   "$src/Src/orbtop.c" "$src/Src/symbols.c" "$src/Src/external/cJSON.c" "$src/Src/itmDecoder.c" \
   "$src/Src/tpiuDecoder.c" "$src/Src/msgDecoder.c" "$src/Src/cobs.c" "$src/Src/oflow.c" "$src/Src/msgSeq.c" \
   "$src/Src/generics.c" "$src/Src/readsource.c" "$src/Src/stream_file_posix.c" "$src/Src/stream_socket_posix.c" \
   "$src/Src"/traceDecoder*.c -lelf -ldwarf -lncurses -lpthread -o "$out"
echo "$out"
