# Test helpers shared by tests/ and bindings/c/.
#
# tether_test_launcher(target): under the valgrind preset, every run of `target` by ctest
# goes through memcheck; any error or leak fails the test. Further arguments are more
# valgrind options for that target. Without --track-origins: memcheck finds the same
# errors, and runs about twice as fast (the whole valgrind stage: ~11 -> ~6 minutes); to
# see where an uninitialised value came from, rerun the failing test with it, e.g.
#   TETHER_TEST_SCALE=20 valgrind --track-origins=yes build/valgrind/bindings/c/tether_c_tests NAME
find_program(TETHER_VALGRIND_EXE valgrind)
set(TETHER_VALGRIND_SUPPRESSIONS ${PROJECT_SOURCE_DIR}/tests/valgrind.supp)
function(tether_test_launcher target)
  if(TETHER_VALGRIND)
    if(NOT TETHER_VALGRIND_EXE)
      message(FATAL_ERROR "TETHER_VALGRIND=ON but valgrind is not installed")
    endif()
    set(launcher ${TETHER_VALGRIND_EXE} --tool=memcheck --error-exitcode=99 --leak-check=full
      --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible
      --suppressions=${TETHER_VALGRIND_SUPPRESSIONS} --quiet ${ARGN})
    set_target_properties(${target} PROPERTIES CROSSCOMPILING_EMULATOR "${launcher}")
  endif()
endfunction()
