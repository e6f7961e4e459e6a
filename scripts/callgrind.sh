#!/usr/bin/env bash
# callgrind.sh — instructions per fire-and-forget actor call, on the calling thread and on
# the actor's thread (bench/callgrind/fire_and_forget.c under valgrind --tool=callgrind
# --separate-threads=yes, N = 30,000 minus N = 10,000, divided by 20,000). Deterministic:
# compare two commits by running it in each checkout. Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" valgrind

cmake --preset release >/dev/null
cmake --build --preset release --target tether
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Iinclude bench/callgrind/fire_and_forget.c -Lbuild/release/src -ltether -o "$out/drv"
for n in 10000 30000; do
  LD_LIBRARY_PATH=build/release/src valgrind --tool=callgrind --separate-threads=yes \
    --callgrind-out-file="$out/cg.$n" "$out/drv" "$n" >/dev/null 2>&1
done
# Thread 1 is the caller; the thread with the most instructions besides it is the actor's.
ir() { grep -m1 '^summary:' "$1" | awk '{print $2}'; }
actor_file() {
  for f in "$out"/cg."$1"-*; do [ "${f##*-}" = 01 ] || echo "$(ir "$f") $f"; done | sort -n | tail -1 | cut -d' ' -f2
}
caller=$(( ($(ir "$out/cg.30000-01") - $(ir "$out/cg.10000-01")) ))
actor=$(( ($(ir "$(actor_file 30000)") - $(ir "$(actor_file 10000)")) ))
awk -v c="$caller" -v a="$actor" 'BEGIN { printf "instructions per call: calling thread %.1f, actor thread %.1f\n", c / 20000, a / 20000 }'
