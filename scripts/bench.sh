#!/usr/bin/env bash
# bench.sh — tether and its peers on the same work, in one run (bench/compare): builds the
# release preset's tether_compare with every peer library Debian has (installed here when
# missing), runs it, and writes bench/compare/results.md and the chart
# bench/compare/ratios.png; then runs it again beside one busy-looping process per CPU
# (--load: the issue's "under load") without the scale rows, into
# bench/compare/results-loaded.md. Arguments go to both runs (e.g. --reps 9, --seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" libbenchmark-dev libboost-dev libcaf-dev \
  libconcurrentqueue-dev libtbb-dev gnuplot-nox

cmake --preset release >/dev/null
cmake --build --preset release --target tether_compare
dat=build/release/bench/compare-ratios.dat
build/release/bench/tether_compare --out bench/compare/results.md --dat "$dat" "$@"
gnuplot -e "data='$dat'; out='bench/compare/ratios.png'" bench/compare/chart.gp
build/release/bench/tether_compare --load "$(nproc)" --no-scale --out bench/compare/results-loaded.md "$@" >/dev/null
echo "bench: wrote bench/compare/results.md, bench/compare/ratios.png and bench/compare/results-loaded.md"
