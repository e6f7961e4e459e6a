#!/usr/bin/env bash
# reliability.sh — the reliability suite's long forms: the fuzzer (ASan+UBSan, then its
# corpus replayed under TSan) and the soak, for as long as the environment says.
#   TETHER_FUZZ_SECONDS (default 3600) and TETHER_SOAK_SECONDS (default 1800).
# The test command runs the same part with 60 s and 120 s.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
export TETHER_FUZZ_SECONDS=${TETHER_FUZZ_SECONDS:-3600}
export TETHER_SOAK_SECONDS=${TETHER_SOAK_SECONDS:-1800}
. scripts/test.d/10-reliability.sh
