# tether_warnings(target): the warning set every target of the project builds with.
function(tether_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(TETHER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Sanitizers apply to everything built in the tree, so tests and library agree.
if(TETHER_SANITIZE)
  list(JOIN TETHER_SANITIZE "," _tether_san)
  add_compile_options(-fsanitize=${_tether_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_tether_san})
endif()
