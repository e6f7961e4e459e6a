#!/usr/bin/env bash
# test.sh — runs every test: the C++ and C suites under AddressSanitizer+UBSan, under
# ThreadSanitizer, under valgrind memcheck, and in the plain debug build (which also
# checks the exported symbols, the install tree and the examples). README command 2.
# Ends with ctest's summary of the plain build; any failure stops it with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" valgrind binutils

jobs=${TETHER_TEST_JOBS:-2}
for preset in asan tsan valgrind default; do
  echo "== tether tests: $preset =="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j "$jobs"
done
