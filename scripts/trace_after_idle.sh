#!/usr/bin/env bash
# trace_after_idle.sh [ROUNDS] — where a round trip after 1 ms idle on one CPU spends its
# time (target 3 of bench/README.md): runs bench/after_idle/trace_driver with the kernel's
# tracer recording syscalls, wake-ups and switches, then prints segments.py's table
# (caller's code, other side's code, kernel) for the raw futex floor, a tether blocking
# call, a tether call with a future and a tether fire-and-forget call answered by a futex.
# Root and tracefs needed;
# the tracer's settings are put back on exit. Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" python3

tracing=/sys/kernel/tracing
[ -w "$tracing/trace_marker" ] || { echo "trace_after_idle: needs root and $tracing (tracefs)" >&2; exit 1; }

cmake --preset release >/dev/null
cmake --build --preset release --target tether_after_idle_trace
out=$(mktemp -d)

clock=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$tracing/trace_clock")
restore() {
  echo 0 >"$tracing/tracing_on"
  echo 0 >"$tracing/events/enable"
  echo "$clock" >"$tracing/trace_clock"
  echo >"$tracing/trace"
  rm -rf "$out"
}
trap restore EXIT

# A clock finer than the default microseconds when the CPU has one; segments.py converts
# whichever it is with the markers' own timestamps.
grep -qw x86-tsc "$tracing/trace_clock" && echo x86-tsc >"$tracing/trace_clock"
echo 0 >"$tracing/tracing_on"
echo >"$tracing/trace"
echo 0 >"$tracing/events/enable"
for e in sched/sched_switch sched/sched_wakeup raw_syscalls; do echo 1 >"$tracing/events/$e/enable"; done
echo 8192 >"$tracing/buffer_size_kb"
echo 1 >"$tracing/tracing_on"
build/release/bench/tether_after_idle_trace "$tracing/trace_marker" "${1:-400}"
echo 0 >"$tracing/tracing_on"
cp "$tracing/trace" "$out/trace.txt"
python3 bench/after_idle/segments.py "$out/trace.txt"
