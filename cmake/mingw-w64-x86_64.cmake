# Cross-build for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64-posix: the
# posix thread model, which the C++ standard library's std::thread and std::mutex need).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(TETHER_MINGW_TRIPLE x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${TETHER_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${TETHER_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${TETHER_MINGW_TRIPLE}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${TETHER_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Test binaries run under wine: `wine64` (Debian's wine package provides it).
find_program(TETHER_WINE NAMES wine64 wine)
if(TETHER_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TETHER_WINE})
endif()
