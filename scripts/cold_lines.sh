#!/usr/bin/env bash
# cold_lines.sh [LIBDIR...] — the cache lines one round trip after an idle spell touches:
# bench/after_idle/cold_lines.c (a blocking call after a wipe of a simulated 32 KiB cache)
# under valgrind --tool=callgrind --cache-sim on one CPU, for 100 and 300 round trips; the
# difference divided by 200 gives a round trip's instructions and misses on the calling
# thread (less the wipes', measured alike) and on the actor's: instruction lines, data
# lines read, data lines written. Each LIBDIR holds a libtether.so.0 (default:
# this checkout's release build). Deterministic but for layout: a function's lines move
# with the code linked before it (+-10 lines between builds of the same source). Not part
# of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" valgrind python3

if [ $# -eq 0 ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target tether
  set -- build/release/src
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Iinclude bench/after_idle/cold_lines.c -L"$1" -ltether -o "$out/cold_lines"

for lib in "$@"; do
  for run in 100 300 "100 wipe" "300 wipe"; do
    LD_LIBRARY_PATH=$lib taskset -c 0 valgrind --tool=callgrind --separate-threads=yes --cache-sim=yes \
      --I1=32768,8,64 --D1=32768,8,64 --LL=65536,8,64 --callgrind-out-file="$out/cg.${run/ /.}" \
      "$out/cold_lines" $run >/dev/null 2>&1
  done
  python3 - "$out" "$lib" <<'PY'
import glob, sys
out, lib = sys.argv[1], sys.argv[2]
def totals(path):  # events: Ir Dr Dw I1mr D1mr D1mw ...
    for line in open(path):
        if line.startswith(("summary:", "totals:")):
            return [int(x) for x in line.split()[1:]]
def per_trip(run, t):
    small, large = totals(f"{out}/cg.100{run}-{t:02d}"), totals(f"{out}/cg.300{run}-{t:02d}")
    return [(b - a) / 200 for a, b in zip(small, large)]
actor = max((int(p.rsplit("-", 1)[1]) for p in glob.glob(f"{out}/cg.300-*") if not p.endswith("-01")),
            key=lambda t: totals(f"{out}/cg.300-{t:02d}")[0])
wipes = per_trip(".wipe", 1)
for name, d in (("caller", [x - w for x, w in zip(per_trip("", 1), wipes)]), ("actor", per_trip("", actor))):
    print(f"{lib}: {name:6} instructions {d[0]:6.1f}  instruction lines {d[3]:5.1f}  data lines read {d[4]:5.1f}"
          f"  written {d[5]:5.1f}")
PY
done
