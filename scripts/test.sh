#!/usr/bin/env bash
# test.sh — runs every test: the C++ and C suites under AddressSanitizer+UBSan, under
# ThreadSanitizer, under valgrind memcheck, and in the plain debug build, which also runs
# the Rust and Go bindings' suites (cargo test, valgrind over the Rust tests, go vet,
# go test -race) and checks the exported symbols, the install tree and the examples.
# Then every part in scripts/test.d/ (one file per area, run in name order).
# README command 2.
# Any failure stops it with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" valgrind binutils
tether_require_commands cargo:cargo go:golang-go   # the Rust and Go bindings' suites

jobs=${TETHER_TEST_JOBS:-2}
for preset in asan tsan valgrind default; do
  echo "== tether tests: $preset =="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j "$jobs"
done

# Each part is a bash script sourced in a subshell, so it may `set` what it likes.
for part in scripts/test.d/*.sh; do
  [ -e "$part" ] || continue
  echo "== tether tests: $(basename "$part" .sh) =="
  (. "$part")
done
echo "== tether tests: all passed =="
