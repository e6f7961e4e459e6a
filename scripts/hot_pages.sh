#!/usr/bin/env bash
# hot_pages.sh [LIBDIR] — the pages one blocking round trip touches on one CPU (target 3
# of bench/README.md: after an idle spell each is a TLB miss the VM's nested page walk
# pays for): bench/after_idle/hot_pages.c under valgrind's lackey, the last of 5 round
# trips, split by bench/after_idle/hot_pages.py into code and data pages with the objects
# and functions behind them. LIBDIR holds a libtether.so.0 (default: this checkout's
# release build). Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" valgrind python3

lib=${1:-}
if [ -z "$lib" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target tether
  lib=build/release/src
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Iinclude bench/after_idle/hot_pages.c -L"$lib" -ltether -o "$out/hot_pages"
LD_LIBRARY_PATH=$lib taskset -c 0 valgrind --tool=lackey --trace-mem=yes --log-file="$out/trace" \
  "$out/hot_pages" "$out/maps" 5 >"$out/markers"
python3 bench/after_idle/hot_pages.py "$out/trace" "$out/maps" <"$out/markers"
