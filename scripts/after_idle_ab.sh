#!/usr/bin/env bash
# after_idle_ab.sh LIBDIR_A LIBDIR_B [PAIRS] — target 3 on one CPU for two builds of the
# library: bench/after_idle/ratio_driver.c (medians of 200 blocking calls after 1 ms idle,
# the raw futex ping-pong interleaved) against each LIBDIR's libtether.so.0, alternating A
# and B PAIRS times (default 30), on CPU 0. Prints each build's median ratio, the median of
# the paired B/A ratios and how many pairs B won: a difference of ~3 % shows in 30 pairs
# where bench/compare's 9 samples see none. Make a LIBDIR by building a commit (e.g. a git
# worktree, `cmake --preset release && cmake --build --preset release --target tether`,
# then its build/release/src). Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 LIBDIR_A LIBDIR_B [PAIRS]" >&2; exit 2; }
a=$1 b=$2 pairs=${3:-30}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Iinclude bench/after_idle/ratio_driver.c -L"$a" -ltether -lpthread -o "$out/ratio_driver"
for _ in $(seq "$pairs"); do
  ra=$(LD_LIBRARY_PATH=$a taskset -c 0 "$out/ratio_driver" 200 | awk '{print $NF}')
  rb=$(LD_LIBRARY_PATH=$b taskset -c 0 "$out/ratio_driver" 200 | awk '{print $NF}')
  echo "$ra $rb"
done | python3 -c '
import statistics, sys
pairs = [tuple(map(float, line.split())) for line in sys.stdin]
a = [x for x, _ in pairs]
b = [y for _, y in pairs]
print("A median %.3f  B median %.3f  paired B/A median %.3f  B lower in %d of %d" % (
    statistics.median(a), statistics.median(b), statistics.median([y / x for x, y in pairs]),
    sum(y < x for x, y in pairs), len(pairs)))'
