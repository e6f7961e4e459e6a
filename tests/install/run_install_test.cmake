# run_install_test.cmake: installs the build into a fresh prefix, then builds and runs the
# consumers against that prefix only: C, C++ and C++20 with tether.hpp through
# find_package(tether CONFIG), C with pkg-config.
#   cmake -DBUILD_DIR= -DWORK_DIR= -DSOURCE_DIR= -DGENERATOR= -DC_COMPILER= -DCXX_COMPILER=
#         -DPKG_CONFIG= -P run_install_test.cmake
# With -DPREFIX=<dir> (an unpacked .deb's usr/, say) nothing is installed: the consumers
# use that prefix (BUILD_DIR is then not needed).
cmake_minimum_required(VERSION 3.25)
if(DEFINED PREFIX)
  set(BUILD_DIR "(unused)")
endif()
foreach(var BUILD_DIR WORK_DIR SOURCE_DIR GENERATOR C_COMPILER CXX_COMPILER PKG_CONFIG)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: ${var} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
if(DEFINED PREFIX)
  set(prefix "${PREFIX}")
else()
  set(prefix "${WORK_DIR}/prefix")
  # 1. Install.
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
endif()
file(GLOB_RECURSE installed_libs "${prefix}/*/libtether.so")
file(GLOB_RECURSE installed_pcs "${prefix}/*/tether.pc")
file(GLOB_RECURSE installed_configs "${prefix}/*/tetherConfig.cmake")
if(NOT EXISTS "${prefix}/include/tether/tether.h")
  message(FATAL_ERROR "tether.h not installed under ${prefix}/include/tether")
endif()
# The C++ layer: tether.hpp and every part of it under tether/hpp/, as in the source tree.
file(GLOB_RECURSE hpp_parts RELATIVE "${SOURCE_DIR}/../../include" "${SOURCE_DIR}/../../include/tether/hpp/*.hpp")
foreach(f tether/tether.hpp ${hpp_parts})
  if(NOT EXISTS "${prefix}/include/${f}")
    message(FATAL_ERROR "${f} not installed under ${prefix}/include")
  endif()
endforeach()
foreach(what installed_libs installed_pcs installed_configs)
  list(LENGTH ${what} n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected exactly one of ${what} under ${prefix}, found: ${${what}}")
  endif()
endforeach()
get_filename_component(libdir "${installed_libs}" DIRECTORY)
get_filename_component(pcdir "${installed_pcs}" DIRECTORY)

# 2. CMake consumer: find_package(tether CONFIG) from the prefix only.
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/cmake_consumer" -B "${WORK_DIR}/cmake-consumer"
    -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DEXPECTED_PREFIX=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/cmake-consumer")
run("${WORK_DIR}/cmake-consumer/tether_cmake_consumer")
message(STATUS "cmake consumer: ${RUN_OUTPUT}")
run("${WORK_DIR}/cmake-consumer/tether_cmake_consumer_c")
message(STATUS "cmake consumer (C): ${RUN_OUTPUT}")
run("${WORK_DIR}/cmake-consumer/tether_cmake_consumer_hpp")
message(STATUS "cmake consumer (C++20, tether.hpp): ${RUN_OUTPUT}")

# 3. pkg-config consumer: flags from the installed tether.pc, compiled as strict C99.
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
set(ENV{PKG_CONFIG_LIBDIR} "${pcdir}")
run("${PKG_CONFIG}" --cflags tether)
string(STRIP "${RUN_OUTPUT}" cflags)
run("${PKG_CONFIG}" --libs tether)
string(STRIP "${RUN_OUTPUT}" libs)
run("${PKG_CONFIG}" --modversion tether)
string(STRIP "${RUN_OUTPUT}" modversion)
separate_arguments(cflags_list UNIX_COMMAND "${cflags}")
separate_arguments(libs_list UNIX_COMMAND "${libs}")
if(NOT cflags MATCHES "${prefix}/include" AND NOT cflags MATCHES "${pcdir}/[./]*include")
  message(FATAL_ERROR "pkg-config --cflags does not point into the prefix: '${cflags}'")
endif()
run("${C_COMPILER}" -std=c99 -Wall -Wextra -Werror -pedantic ${cflags_list}
    "${SOURCE_DIR}/pkgconfig_consumer/main.c" -o "${WORK_DIR}/tether_pc_consumer" ${libs_list})
# The installed tether.pc carries no rpath (a system install needs none): point the loader
# at the prefix, which also proves the binary does not pick up the build tree.
set(ENV{LD_LIBRARY_PATH} "${libdir}")
run("${WORK_DIR}/tether_pc_consumer" "${modversion}")
message(STATUS "pkg-config consumer: ${RUN_OUTPUT}")
