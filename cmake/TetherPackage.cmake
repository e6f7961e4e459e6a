# Packages (cpack in a build of the `package` preset, which installs under /usr):
#   Linux:   tether-<v>-Linux.tar.gz (everything), and the .debs split as Debian does:
#            libtether0 (runtime: the versioned .so and its SONAME link) and
#            libtether-dev (headers, the .so link, tether.pc, the CMake package).
#   Windows: tether-<v>-win64.zip (tether.dll, the import library, headers, tether.pc,
#            the CMake package).
set(CPACK_PACKAGE_NAME tether)
set(CPACK_PACKAGE_VENDOR "the tether authors")
# Who the packages name as maintainer: set it when publishing (the default is a reserved,
# undeliverable address).
set(TETHER_PACKAGE_CONTACT "tether maintainers <maintainers@tether.invalid>" CACHE STRING
    "Maintainer of the .deb packages (Name <address>)")
set(CPACK_PACKAGE_CONTACT "${TETHER_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)

if(WIN32)
  set(CPACK_GENERATOR ZIP)
  set(CPACK_SYSTEM_NAME win64)
  include(CPack)
  return()
endif()

set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)  # one tarball with both components
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # <name>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(_soversion ${PROJECT_VERSION_MAJOR})
set(_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libtether${_soversion})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)     # libc6, libstdc++6, libgcc-s1 from dpkg-shlibdeps
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)       # the shlibs file and the ldconfig trigger
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "threads whose failures are never lost - runtime library
tether runs code on threads whose failures are never lost and whose state
never moves. This package holds the shared library.")
# The loader cache is refreshed by dpkg's ldconfig trigger, not by maintainer scripts.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/cmake/debian/triggers ${PROJECT_SOURCE_DIR}/cmake/debian/postinst
    ${PROJECT_SOURCE_DIR}/cmake/debian/postrm)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libtether-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libtether${_soversion} (= ${_deb_version})")
set(CPACK_DEBIAN_DEV_DESCRIPTION "threads whose failures are never lost - development files
tether runs code on threads whose failures are never lost and whose state
never moves. This package holds the C and C++ headers, the pkg-config file
and the CMake package.")

# What Debian policy asks of every package: a copyright file and a changelog in
# /usr/share/doc/<package>/ (the changelog compressed, reproducibly: gzip -n).
foreach(_component runtime dev)
  string(TOUPPER ${_component} _upper)
  set(_pkg ${CPACK_DEBIAN_${_upper}_PACKAGE_NAME})
  set(_doc ${PROJECT_BINARY_DIR}/debian-doc/${_pkg})
  set(PACKAGE ${_pkg})
  set(MAINTAINER "${TETHER_PACKAGE_CONTACT}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${_doc}/changelog.Debian @ONLY)
  execute_process(COMMAND gzip -9nf ${_doc}/changelog.Debian)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${_doc}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg} COMPONENT ${_component})
endforeach()

include(CPack)
