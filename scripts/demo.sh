#!/usr/bin/env bash
# demo.sh — builds everything (library, C examples, demo, tests, benchmarks) in an
# optimised build and runs the demo. README command 1.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" libbenchmark-dev libboost-dev

cmake --preset release >/dev/null
cmake --build --preset release
echo
echo "== tether demo =="
./build/release/examples/tether_demo
