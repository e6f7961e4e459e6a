#!/usr/bin/env bash
# valgrind.sh DIR — builds the crate's test binaries (cargo test --no-run) and runs each
# under valgrind memcheck: any error or definite leak fails. Called by ctest (rust.valgrind)
# with TETHER_LIB_DIR and CARGO_TARGET_DIR set. Scaled down: valgrind runs one thread at a time.
set -euo pipefail
cd "${1:-$(dirname "$0")}"
valgrind_exe=${TETHER_VALGRIND_EXE:-valgrind}
bins=$(cargo test --offline --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p')
[ -n "$bins" ] || { echo "valgrind.sh: cargo built no test binary" >&2; exit 1; }
for bin in $bins; do
  case "$bin" in /*) ;; *) bin="${CARGO_TARGET_DIR:-target}/${bin#target/}" ;; esac
  echo "== valgrind $bin"
  TETHER_TEST_SCALE=${TETHER_VALGRIND_SCALE:-20} "$valgrind_exe" --quiet --error-exitcode=99 \
    --leak-check=full --errors-for-leak-kinds=definite "$bin" --test-threads=1
done
