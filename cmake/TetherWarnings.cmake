# tether_warnings(target): the warning set every target of the project builds with.
function(tether_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(TETHER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    # GCC 12's -Wrestrict and -Wstringop-overflow fire falsely inside libstdc++'s string and
    # vector code at -O2/-O3 (GCC bugs 105329, 106199): kept as warnings, not errors.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=restrict -Wno-error=stringop-overflow>)
    endif()
  endif()
endfunction()

# Sanitizers apply to everything built in the tree, so tests and library agree.
if(TETHER_SANITIZE)
  list(JOIN TETHER_SANITIZE "," _tether_san)
  add_compile_options(-fsanitize=${_tether_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_tether_san})
endif()
# The fuzzer's coverage counters go into everything it links, the library included —
# except under ThreadSanitizer, where the counters (plain bytes every thread bumps) would
# be reported as races: there the fuzz-tsan build checks the library's own accesses only.
if(TETHER_BUILD_FUZZ AND NOT "thread" IN_LIST TETHER_SANITIZE)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
