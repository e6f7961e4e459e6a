# 20-dist.sh — distribution: the Windows cross-build (tether.dll exports only tether_*, the
# C suite under wine), the packages (.deb split, tarball, Windows .zip; lintian), the ABI
# guard and its self-test, and out-of-tree consumers against an installed prefix, the
# unpacked .debs and the installed .debs. Sourced by scripts/test.sh from the repository
# root (set -euo pipefail, scripts/deps.sh loaded); alone: bash -c '. scripts/deps.sh;
# set -euo pipefail; . scripts/test.d/20-dist.sh'.
#
# Hook for the bindings' own consumers: after the prefixes exist, every
# bindings/*/dist-consumer.sh is run as `bash SCRIPT PREFIX` twice, once with the installed
# prefix and once with the unpacked .debs' usr/ (also exported as TETHER_PREFIX).
tether_require_packages "${TETHER_BUILD_PACKAGES[@]}" g++-mingw-w64-x86-64-posix wine wine64 \
  lintian abi-dumper abi-compliance-checker dpkg-dev binutils-mingw-w64-x86-64 gzip
jobs=${TETHER_TEST_JOBS:-2}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# ---- Windows: tether.dll, its exports, the C suite under wine ------------------------------
echo "-- dist: mingw cross-build"
cmake --preset mingw >/dev/null
cmake --build --preset mingw -j "$jobs"
dll=build/mingw/bin/tether.dll
test -f build/mingw/src/libtether.dll.a
exports="$(x86_64-w64-mingw32-objdump -p "$dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | sed -n 's/^\s*\[ *[0-9]*\] //p')"
[ -n "$exports" ] || { echo "dist: tether.dll exports nothing" >&2; exit 1; }
if grep -qv '^tether_' <<<"$exports"; then
  echo "dist: tether.dll exports more than tether_*:" >&2; grep -v '^tether_' <<<"$exports" >&2; exit 1
fi
echo "dist: tether.dll exports $(wc -l <<<"$exports") symbols, all tether_*"
imports="$(x86_64-w64-mingw32-objdump -p "$dll" | sed -n 's/^\s*DLL Name: //p' | tr 'A-Z' 'a-z' | sort -u | tr '\n' ' ')"
for dep in $imports; do
  case "$dep" in kernel32.dll|msvcrt.dll) ;; *) echo "dist: tether.dll needs $dep" >&2; exit 1 ;; esac
done
echo "dist: tether.dll imports only: $imports"

# Under wine: the whole C suite (`ctest --preset mingw`; the POSIX-only cases are listed by
# ctest as disabled), every case required to pass and to exit. The `version` run first
# tells a machine where wine cannot start at all (reported, not failed) from a failure.
# A persistent wineserver, and the prefix's services started by that first run with their
# output away from any pipe: otherwise a case's wine process starts them, they inherit its
# output pipe, and ctest waits for them (until the last wine process of the run ends)
# before it calls that case done (cases of 0.1 s took 50-90 s, or timed out).
export WINEPREFIX="${TETHER_WINEPREFIX:-$HOME/.cache/tether-wine}" WINEDEBUG=-all
mkdir -p "$WINEPREFIX"
wineserver -p </dev/null >/dev/null 2>&1 || true
if timeout 300 wine build/mingw/bin/tether_c_tests.exe version </dev/null >"$work/wine.out" 2>&1; then
  echo "-- dist: C suite under wine"
  wine_rc=0
  # --output-on-failure: a failing case says why. A process wine fails to start (ended at
  # once, no output, before main) is started again by cmake/wine_case.sh, and said so.
  ctest --preset mingw -j "$jobs" --output-on-failure || wine_rc=$?
  wineserver -k || true
  [ "$wine_rc" = 0 ] || { echo "dist: the C suite under wine failed" >&2; exit "$wine_rc"; }
else
  wineserver -k || true
  echo "dist: wine cannot run here; its output:" >&2
  cat "$work/wine.out" >&2
  echo "dist: the wine run is: ctest --preset mingw" >&2
fi
(cd build/mingw && cpack >/dev/null)
zip_list="$(cmake -E tar tf build/mingw/tether-*-win64.zip)"
for f in bin/tether.dll lib/libtether.dll.a include/tether/tether.h lib/pkgconfig/tether.pc \
         lib/cmake/tether/tetherConfig.cmake lib/cmake/tether/tetherConfigVersion.cmake; do
  grep -q "/$f\$" <<<"$zip_list" || { echo "dist: the .zip lacks $f" >&2; exit 1; }
done
echo "dist: $(basename build/mingw/tether-*-win64.zip) holds the DLL, import library, headers, CMake and pkg-config files"

# ---- Linux packages -------------------------------------------------------------------------
echo "-- dist: packages"
cmake --preset package >/dev/null
cmake --build --preset package -j "$jobs"
rm -f build/package/*.deb build/package/*.tar.gz
(cd build/package && cpack >/dev/null)
runtime_deb="$(ls build/package/libtether0_*.deb)"
dev_deb="$(ls build/package/libtether-dev_*.deb)"
ls build/package/tether-*-Linux.tar.gz >/dev/null
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
expect_files() {  # expect_files DEB PATH...: the package holds exactly these regular files and links
  local deb=$1; shift
  local got want
  got="$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' | sort)"
  want="$(printf '%s\n' "$@" | sort)"
  if [ "$got" != "$want" ]; then
    echo "dist: $(basename "$deb") holds:" >&2; echo "$got" >&2
    echo "dist: expected:" >&2; echo "$want" >&2; exit 1
  fi
  echo "dist: $(basename "$deb"): $(wc -l <<<"$got") files as expected"
}
lib="usr/lib/$multiarch"
expect_files "$runtime_deb" "$lib/libtether.so.0" "$lib/libtether.so.0.1.0" \
  usr/share/doc/libtether0/changelog.Debian.gz usr/share/doc/libtether0/copyright
hpp=usr/include/tether/hpp
expect_files "$dev_deb" "$lib/libtether.so" usr/include/tether/tether.h usr/include/tether/tether.hpp \
  "$hpp/error.hpp" "$hpp/task.hpp" "$hpp/future.hpp" "$hpp/runner.hpp" "$hpp/executor.hpp" \
  "$hpp/actor.hpp" "$hpp/graph.hpp" "$hpp/detail/unique_handle.hpp" \
  "$lib/pkgconfig/tether.pc" "$lib/cmake/tether/tetherConfig.cmake" \
  "$lib/cmake/tether/tetherConfigVersion.cmake" "$lib/cmake/tether/tetherTargets.cmake" \
  "$lib/cmake/tether/tetherTargets-relwithdebinfo.cmake" \
  usr/share/doc/libtether-dev/changelog.Debian.gz usr/share/doc/libtether-dev/copyright
dpkg-deb -f "$dev_deb" Depends | grep -qx 'libtether0 (= 0.1.0-1)'
dpkg-deb -f "$runtime_deb" Depends | grep -q 'libc6'
grep -q 'SameMajorVersion\|same major' build/package/tetherConfigVersion.cmake 2>/dev/null ||
  grep -q 'PACKAGE_VERSION_MAJOR\|CVF_VERSION_MAJOR' build/package/tetherConfigVersion.cmake

lintian_out="$(lintian "$runtime_deb" "$dev_deb" 2>&1 | grep -v 'running with root privileges' || true)"
echo "$lintian_out"
if grep -q '^E:' <<<"$lintian_out"; then echo "dist: lintian reports errors" >&2; exit 1; fi
echo "dist: lintian: no errors"

# ---- ABI guard ----------------------------------------------------------------------------
echo "-- dist: ABI"
scripts/abi-check.sh "$(readlink -f build/package/src/libtether.so)"
scripts/abi-selftest.sh "$work/abi-selftest"

# ---- Consumers: installed prefix, unpacked .debs, installed .debs -----------------------------
echo "-- dist: consumers"
consumers() {  # consumers WORK [cmake -D...]
  local dir=$1; shift
  cmake -DWORK_DIR="$dir" -DSOURCE_DIR="$PWD/tests/install" -DGENERATOR=Ninja \
    -DC_COMPILER=cc -DCXX_COMPILER=c++ -DPKG_CONFIG=pkg-config "$@" -P tests/install/run_install_test.cmake
}
consumers "$work/prefix-test" -DBUILD_DIR="$PWD/build/package"
mkdir -p "$work/deb-root"
dpkg-deb -x "$runtime_deb" "$work/deb-root"
dpkg-deb -x "$dev_deb" "$work/deb-root"
consumers "$work/deb-test" -DPREFIX="$work/deb-root/usr"
for hook in bindings/*/dist-consumer.sh; do
  [ -e "$hook" ] || continue
  for prefix in "$work/prefix-test/prefix" "$work/deb-root/usr"; do
    echo "dist: $hook $prefix"
    TETHER_PREFIX="$prefix" bash "$hook" "$prefix"
  done
done

if [ "$(id -u)" -eq 0 ]; then
  preinstalled="$(dpkg-query -W -f='${Status}' libtether0 2>/dev/null | grep -c 'install ok installed' || true)"
  [ "$preinstalled" = 0 ] || { echo "dist: libtether0 is already installed here; not testing dpkg -i" >&2; exit 1; }
  trap 'dpkg -P libtether-dev libtether0 >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  dpkg -i "$runtime_deb" "$dev_deb" >/dev/null
  cc -std=c99 -Wall -Werror tests/install/pkgconfig_consumer/main.c $(pkg-config --cflags --libs tether) -o "$work/app"
  "$work/app" "$(pkg-config --modversion tether)"
  dpkg -P libtether-dev libtether0 >/dev/null
  ! dpkg-query -W -f='${Status}' libtether0 2>/dev/null | grep -q 'install ok installed'
  echo "dist: the installed .debs served cc app.c \$(pkg-config --cflags --libs tether); uninstalled again"
else
  echo "dist: not root: dpkg -i of the .debs skipped" >&2
fi
echo "-- dist: all passed"
