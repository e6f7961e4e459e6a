#!/usr/bin/env bash
# callgrind.sh — instructions per actor call on the calling thread and on the actor's
# thread, under valgrind --tool=callgrind --separate-threads=yes, for three drivers in
# bench/callgrind/ (each run for a small and a large count; the difference divided by the
# calls between them, so the setup cancels out):
#   fire_and_forget.c  fire-and-forget calls (N = 10,000 and 30,000)
#   round_trip.c       a call with a future, waited for, taken, released (N = 10,000 and
#                      30,000), on one CPU: nobody spins, so the counts do not depend on timing
#   in_flight.c        1,024 calls with a future in flight, then every answer (10 and 30
#                      rounds), on one CPU
# Nearly deterministic: valgrind runs one thread at a time, and whether a waiter finds its
# answer ready or parks first follows valgrind's scheduling, which a busy machine shifts
# (a round trip's count moved ~10 % with the test suite running beside it). Compare two
# commits by running it in each checkout on a quiet machine. Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" valgrind

cmake --preset release >/dev/null
cmake --build --preset release --target tether
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ir() { grep -m1 '^summary:' "$1" | awk '{print $2}'; }
# actor_file RUN: thread 1 is the caller; the thread with the most instructions besides it
# is the actor's.
actor_file() {
  for f in "$out"/cg."$1"-*; do [ "${f##*-}" = 01 ] || echo "$(ir "$f") $f"; done | sort -n | tail -1 | cut -d' ' -f2
}

# measure NAME SMALL LARGE CALLS_BETWEEN [LAUNCHER...]: prints NAME's instructions per call.
measure() {
  local name=$1 small=$2 large=$3 calls=$4
  shift 4
  cc -O2 -Iinclude "bench/callgrind/$name.c" -Lbuild/release/src -ltether -o "$out/$name"
  for n in "$small" "$large"; do
    LD_LIBRARY_PATH=build/release/src "$@" valgrind --tool=callgrind --separate-threads=yes \
      --callgrind-out-file="$out/cg.$name.$n" "$out/$name" "$n" >/dev/null 2>&1
  done
  local caller actor
  caller=$(( $(ir "$out/cg.$name.$large-01") - $(ir "$out/cg.$name.$small-01") ))
  actor=$(( $(ir "$(actor_file "$name.$large")") - $(ir "$(actor_file "$name.$small")") ))
  awk -v n="$name" -v c="$caller" -v a="$actor" -v k="$calls" \
    'BEGIN { printf "%-16s instructions per call: calling thread %.1f, actor thread %.1f\n", n, c / k, a / k }'
}

measure fire_and_forget 10000 30000 20000
measure round_trip 10000 30000 20000 taskset -c 0
measure in_flight 10 30 20480 taskset -c 0
