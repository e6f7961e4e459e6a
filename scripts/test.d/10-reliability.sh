# 10-reliability: the short forms of the reliability suite (issue 12): the API fuzzer for
# 60 s under ASan+UBSan over the committed seeds, then that corpus replayed 60 s under TSan, and the soak
# for 120 s. (The fault sweeps, stress and scale tests run in every preset's ctest.)
# Long forms: tests/fuzz/README.md (hours of fuzzing), tests/reliability/README.md (soak).
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" clang libclang-rt-dev

fuzz_seconds=${TETHER_FUZZ_SECONDS:-60}
corpus=$(mktemp -d)
echo "== reliability: api fuzzer, ASan+UBSan, ${fuzz_seconds} s =="
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
# A scratch corpus first: what the run finds goes there, the seeds stay as committed.
build/fuzz/tests/fuzz/tether_api_fuzz -max_total_time="$fuzz_seconds" -timeout=30 -max_len=512 \
  -print_final_stats=1 -artifact_prefix="$corpus/" "$corpus" tests/fuzz/corpus 2>&1 | tail -n 12
# Under TSan coverage counters race by design, so the TSan build replays what the ASan run
# found (seeds included), round after round, for as long.
echo "== reliability: api fuzzer corpus replayed under TSan, ${fuzz_seconds} s =="
cmake --preset fuzz-tsan >/dev/null
cmake --build --preset fuzz-tsan
end=$((SECONDS + fuzz_seconds)); rounds=0
while [ "$SECONDS" -lt "$end" ]; do
  build/fuzz-tsan/tests/fuzz/tether_api_fuzz -timeout=30 "$corpus"/* tests/fuzz/corpus/* >/dev/null 2>"$corpus.log" \
    || { cat "$corpus.log"; exit 1; }
  rounds=$((rounds + 1))
done
echo "replayed $(ls "$corpus" tests/fuzz/corpus | wc -l) inputs x $rounds rounds under TSan"
rm -rf "$corpus" "$corpus.log"

echo "== reliability: soak, ${TETHER_SOAK_SECONDS:-120} s =="
cmake --preset default >/dev/null
cmake --build --preset default --target tether_reliability_tests
TETHER_SOAK_SECONDS=${TETHER_SOAK_SECONDS:-120} build/default/tests/reliability/tether_reliability_tests \
  --gtest_filter='Soak.*'
