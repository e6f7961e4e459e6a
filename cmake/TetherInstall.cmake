# Install rules: header, library, pkg-config file and CMake package config, plus a
# build-tree tether.pc so in-tree consumers find the library the way users do.
# Two components, split as Debian splits a library: "runtime" (the versioned .so and its
# SONAME link; tether.dll) and "dev" (headers, the .so link, the import library, tether.pc,
# the CMake package). Packaging: cmake/TetherPackage.cmake.

install(TARGETS tether EXPORT tetherTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(DIRECTORY include/tether DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

set(TETHER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tether)
install(EXPORT tetherTargets NAMESPACE tether:: DESTINATION ${TETHER_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/tetherConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tetherConfig.cmake INSTALL_DESTINATION ${TETHER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tetherConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tetherConfig.cmake ${PROJECT_BINARY_DIR}/tetherConfigVersion.cmake
  DESTINATION ${TETHER_CMAKE_DIR} COMPONENT dev)

# Installed tether.pc: paths relative to the prefix it lands in (however deep the libdir:
# Debian's is lib/<multiarch>), so an unpacked package or a moved prefix works too.
file(RELATIVE_PATH _pc_to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" _pc_to_prefix "${_pc_to_prefix}")
set(TETHER_PC_PREFIX "\${pcfiledir}/${_pc_to_prefix}")
set(TETHER_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(TETHER_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
set(TETHER_PC_RPATH "")
configure_file(cmake/tether.pc.in ${PROJECT_BINARY_DIR}/install-pc/tether.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install-pc/tether.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# Build-tree tether.pc: PKG_CONFIG_PATH=<build>/pkgconfig finds the fresh build.
set(TETHER_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(TETHER_PC_LIBDIR "$<TARGET_FILE_DIR:tether>")
set(TETHER_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
# The build tree is not on the loader path: the rpath lets consumers run without LD_LIBRARY_PATH.
set(TETHER_PC_RPATH "-Wl,-rpath,\${libdir} ")
configure_file(cmake/tether.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/tether.pc.tmp @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/pkgconfig/tether.pc
  INPUT ${PROJECT_BINARY_DIR}/pkgconfig/tether.pc.tmp)

include(cmake/TetherPackage.cmake)
