# The chaos build: the library with random yields and sleeps at every step of its wait
# and claim protocols (src/core/chaos.h), optimised as a release is, running the C and
# C++ suites, so that rare interleavings (the lost wake-up of the executor stall among
# them: c.wakeup_*) are common. TETHER_WAKEUP_ROUNDS=N lengthens the wake-up tests.
cmake --preset chaos >/dev/null
cmake --build --preset chaos
ctest --preset chaos -j "${TETHER_TEST_JOBS:-2}"
