# 10-reliability: the short forms of the reliability suite (issue 12): the API fuzzer for
# 60 s under ASan+UBSan and 60 s under TSan over the committed seed corpus, and the soak
# for 120 s. (The fault sweeps, stress and scale tests run in every preset's ctest.)
# Long forms: tests/fuzz/README.md (hours of fuzzing), tests/reliability/README.md (soak).
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" clang libclang-rt-dev

fuzz_seconds=${TETHER_FUZZ_SECONDS:-60}
for preset in fuzz fuzz-tsan; do
  echo "== reliability: api fuzzer, $preset, ${fuzz_seconds} s =="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  scratch=$(mktemp -d)
  # A scratch corpus first: what the run finds goes there, the seeds stay as committed.
  build/"$preset"/tests/fuzz/tether_api_fuzz -max_total_time="$fuzz_seconds" -timeout=30 -max_len=512 \
    -print_final_stats=1 "$scratch" tests/fuzz/corpus 2>&1 | tail -n 25
  rm -rf "$scratch"
done

echo "== reliability: soak, ${TETHER_SOAK_SECONDS:-120} s =="
cmake --preset default >/dev/null
cmake --build --preset default --target tether_reliability_tests
TETHER_SOAK_SECONDS=${TETHER_SOAK_SECONDS:-120} build/default/tests/reliability/tether_reliability_tests \
  --gtest_filter='Soak.*'
