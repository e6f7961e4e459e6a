#!/usr/bin/env bash
# abi-check.sh — the ABI guard. Compares a built libtether (with debug info: the `package`
# preset) against the ABI recorded in abi/<SONAME>.dump (abi-dumper output) with
# abi-compliance-checker, and fails on any binary- or source-incompatible change unless the
# SONAME changed (SOVERSION bumped), in which case there is nothing recorded to break.
#
#   scripts/abi-check.sh LIB [ABI_DIR]            check LIB (exit 1: incompatible)
#   scripts/abi-check.sh --update LIB [ABI_DIR]   record LIB's ABI as abi/<SONAME>.dump
#
# Headers: include/tether of this checkout (TETHER_ABI_HEADERS overrides). Reports go to
# TETHER_ABI_WORK (default: a temporary directory).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
lib="${1:?usage: abi-check.sh [--update] LIB [ABI_DIR]}"
abi_dir="${2:-$root/abi}"
headers="${TETHER_ABI_HEADERS:-$root/include/tether}"
work="${TETHER_ABI_WORK:-$(mktemp -d)}"
mkdir -p "$work"

soname="$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
[ -n "$soname" ] || { echo "abi-check: $lib has no SONAME" >&2; exit 2; }
version="$(basename "$(readlink -f "$lib")" | sed -n 's/^libtether\.so\.//p')"
new_dump="$work/$soname.new.dump"
abi-dumper "$lib" -o "$new_dump" -lver "${version:-new}" -public-headers "$headers" -quiet >/dev/null

recorded="$abi_dir/$soname.dump"
if [ "$update" = 1 ]; then
  mkdir -p "$abi_dir"
  cp "$new_dump" "$recorded"
  echo "abi-check: recorded the ABI of $soname in $recorded"
  exit 0
fi
if [ ! -f "$recorded" ]; then
  # A SONAME with no recorded ABI: the SOVERSION was bumped, so any change is allowed.
  echo "abi-check: no ABI recorded for $soname (SOVERSION bumped?); record it with --update"
  exit 0
fi
if abi-compliance-checker -l tether -old "$recorded" -new "$new_dump" \
     -report-path "$work/report.html" >"$work/checker.log" 2>&1; then
  echo "abi-check: $soname is compatible with the recorded ABI"
else
  rc=$?
  grep -E 'compatibility|Problems|Binary|Source' "$work/checker.log" >&2 || cat "$work/checker.log" >&2
  echo "abi-check: $soname breaks the recorded ABI ($recorded); bump SOVERSION or undo it." \
       "Report: $work/report.html" >&2
  exit "$rc"
fi
