# The asymmetric fences' fallback (real fences on both sides, as where membarrier is
# missing): the actor and C suites of the plain build once more with it forced.
TETHER_NO_MEMBARRIER=1 ctest --preset default -j "${TETHER_TEST_JOBS:-2}" -R '^(actors|c)\.'
