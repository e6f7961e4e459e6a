# The Rust and Go bindings' own test suites, run by ctest in the plain build against the
# library just built, found the way their users find it (TETHER_LIB_DIR / pkg-config).
# Sanitizer and valgrind builds skip them: those builds check the library itself.
if(TETHER_SANITIZE OR TETHER_VALGRIND)
  return()
endif()

set(_tether_lib_dir "$<TARGET_FILE_DIR:tether>")
set(_tether_pc_dir "${PROJECT_BINARY_DIR}/pkgconfig")

find_program(TETHER_CARGO cargo)
if(TETHER_CARGO AND EXISTS "${PROJECT_SOURCE_DIR}/bindings/rust/Cargo.toml")
  # Two ways to link, each in its own target directory so neither rebuilds the other:
  # the bundled core, statically (the default a user gets: rust.cargo_test with the doc
  # tests, rust.consumer), and the build tree's shared library through TETHER_LIB_DIR
  # (rust.valgrind, rust.clippy). The bundled C++ compiles once per target directory.
  set(_rust_dir "${PROJECT_SOURCE_DIR}/bindings/rust")
  set(_rust_bundled_env "CARGO_TARGET_DIR=${PROJECT_BINARY_DIR}/rust-target-bundled" "TETHER_TEST_SCALE=1")
  set(_rust_env "TETHER_LIB_DIR=${_tether_lib_dir}" "CARGO_TARGET_DIR=${PROJECT_BINARY_DIR}/rust-target"
                "TETHER_TEST_SCALE=1")
  add_test(NAME rust.cargo_test
    COMMAND ${CMAKE_COMMAND} -E env --unset=TETHER_LIB_DIR --unset=PKG_CONFIG_PATH ${_rust_bundled_env}
            ${TETHER_CARGO} test --offline --manifest-path "${_rust_dir}/Cargo.toml")
  add_test(NAME rust.consumer
    COMMAND ${CMAKE_COMMAND} -E env ${_rust_bundled_env} bash "${_rust_dir}/consumer-test.sh")
  add_test(NAME rust.pkg_config
    COMMAND ${CMAKE_COMMAND} -E env --unset=TETHER_LIB_DIR "PKG_CONFIG_PATH=${_tether_pc_dir}"
            "CARGO_TARGET_DIR=${PROJECT_BINARY_DIR}/rust-target-pkg-config"
            ${TETHER_CARGO} test --offline --no-default-features -p tether-sys
            --manifest-path "${_rust_dir}/Cargo.toml")
  add_test(NAME rust.valgrind
    COMMAND ${CMAKE_COMMAND} -E env ${_rust_env} "TETHER_VALGRIND_EXE=${TETHER_VALGRIND_EXE}"
            bash "${_rust_dir}/valgrind.sh" "${_rust_dir}")
  set_tests_properties(rust.cargo_test rust.consumer rust.pkg_config rust.valgrind
    PROPERTIES TIMEOUT 900 RESOURCE_LOCK cargo)
  set_tests_properties(rust.consumer PROPERTIES DEPENDS rust.cargo_test)
  if(NOT EXISTS "${_rust_dir}/valgrind.sh")
    set_tests_properties(rust.valgrind PROPERTIES DISABLED TRUE)
  endif()
  get_filename_component(_cargo_dir "${TETHER_CARGO}" DIRECTORY)
  find_program(TETHER_CARGO_CLIPPY cargo-clippy HINTS "${_cargo_dir}")
  if(TETHER_CARGO_CLIPPY)  # lint only where clippy is installed
    add_test(NAME rust.clippy
      COMMAND ${CMAKE_COMMAND} -E env ${_rust_env}
              ${TETHER_CARGO} clippy --offline --all-targets --manifest-path "${_rust_dir}/Cargo.toml"
              -- -D warnings)
    set_tests_properties(rust.clippy PROPERTIES TIMEOUT 900 RESOURCE_LOCK cargo)
  endif()
endif()

find_program(TETHER_GO go)
if(TETHER_GO AND EXISTS "${PROJECT_SOURCE_DIR}/bindings/go/go.mod")
  # The default Go build compiles the core from bindings/go/tether_core.cpp (nothing
  # installed); -tags tether_system links the library just built, found by pkg-config.
  set(_go_env "CGO_ENABLED=1" "TETHER_TEST_SCALE=1")
  set(_go_dir "${PROJECT_SOURCE_DIR}/bindings/go")
  add_test(NAME go.amalgamation_fresh
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/amalgamate_go.sh" --check)
  add_test(NAME go.vet
    COMMAND ${CMAKE_COMMAND} -E env ${_go_env} ${TETHER_GO} vet ./...
    WORKING_DIRECTORY "${_go_dir}")
  add_test(NAME go.test_race
    COMMAND ${CMAKE_COMMAND} -E env ${_go_env} ${TETHER_GO} test -race -count=1 ./...
    WORKING_DIRECTORY "${_go_dir}")
  add_test(NAME go.test_system
    COMMAND ${CMAKE_COMMAND} -E env ${_go_env} "PKG_CONFIG_PATH=${_tether_pc_dir}"
            ${TETHER_GO} test -tags tether_system -race -count=1 ./...
    WORKING_DIRECTORY "${_go_dir}")
  add_test(NAME go.consumer
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/go_consumer.sh")
  set_tests_properties(go.vet go.test_race go.test_system go.consumer
    PROPERTIES TIMEOUT 900 RESOURCE_LOCK go)
endif()
