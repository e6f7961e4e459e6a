#!/usr/bin/env bash
# abi-selftest.sh — shows the ABI guard failing: builds, in a temporary directory, a
# deliberately broken libtether (a field removed from tether_executor_stats, and
# tether_version returning uint64_t instead of uint32_t) with the same SONAME, and
# expects scripts/abi-check.sh to reject it and to name both breaks.
#   scripts/abi-selftest.sh [WORK_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
src="$work/src"
rm -rf "$src" && mkdir -p "$src"
cp -r "$root/CMakeLists.txt" "$root/cmake" "$root/include" "$root/src" "$src/"

# The two breaks, each with the one source line that uses it.
sed -i '/uint64_t errors_dropped; /d' "$src/include/tether/tether.h"
sed -i '/full.errors_dropped = /d' "$src/src/capi/boundary.cpp"
sed -i 's/^TETHER_API uint32_t tether_version(void);/TETHER_API uint64_t tether_version(void);/' "$src/include/tether/tether.h"
sed -i 's/^TETHER_API uint32_t tether_version(void) {/TETHER_API uint64_t tether_version(void) {/' "$src/src/capi/status_api.cpp"
if grep -q 'errors_dropped;' "$src/include/tether/tether.h" || ! grep -q 'uint64_t tether_version' "$src/include/tether/tether.h" ||
   grep -rq 'full.errors_dropped' "$src/src" || ! grep -q 'uint64_t tether_version(void) {' "$src/src/capi/status_api.cpp"; then
  echo "abi-selftest: the breaks did not apply (the header changed?)" >&2
  exit 1
fi

# The build's output is kept and shown if it fails: a silent exit here once failed CI with no clue.
if ! { cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
         -DTETHER_BUILD_TESTS=OFF -DTETHER_BUILD_EXAMPLES=OFF &&
       cmake --build "$work/build" --target tether -j "${TETHER_TEST_JOBS:-2}"; } >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  echo "abi-selftest: the broken library did not build (a source line the breaks touch moved?)" >&2
  exit 1
fi

lib="$(readlink -f "$work/build/src/libtether.so")"
if TETHER_ABI_HEADERS="$src/include/tether" TETHER_ABI_WORK="$work/check" \
     "$root/scripts/abi-check.sh" "$lib" "$root/abi" 2>"$work/check.err"; then
  echo "abi-selftest: FAILED: the check accepted a broken ABI" >&2
  exit 1
fi
for broken in tether_executor_stats tether_version; do
  grep -q "$broken" "$work/check/report.html" ||
    { echo "abi-selftest: FAILED: the report does not name $broken" >&2; exit 1; }
done
echo "abi-selftest: the check rejects the broken library and names tether_executor_stats and tether_version"
