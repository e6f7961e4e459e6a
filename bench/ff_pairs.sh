#!/usr/bin/env bash
# ff_pairs.sh BENCH N — N back-to-back pairs of the fire-and-forget benchmarks (tether,
# then the hand-written baseline, 1 and 2 producers), each tagged with the load and the
# rate of tether_spsc_probe measured just before it: on a VM whose cross-thread state
# changes under it, only figures taken in the same state can be compared (README).
set -euo pipefail
bench=$1
n=$2
probe="$(dirname "$bench")/tether_spsc_probe"
for _ in $(seq 1 "$n"); do
  state=$("$probe" | awk '{print $2}')
  load=$(cut -d' ' -f1 /proc/loadavg)
  figures=$("$bench" --benchmark_filter='(Tether|Baseline)_FireAndForget' --benchmark_min_time=0.3 2>/dev/null |
            awk '/real_time +[0-9]/ {sub("BM_", "", $1); sub("_FireAndForget", "", $1);
                                     sub("/process_time/real_time", "", $1); sub("items_per_second=", "", $NF);
                                     printf "%s %s  ", $1, $NF}')
  echo "$(date +%H:%M:%S) load $load spsc $state M/s :: $figures"
done
