#!/usr/bin/env bash
# wine_case.sh WINE PROGRAM ARGS...: how ctest runs a case of the C suite under wine.
#
# A wine process has ended at once (0.00 s, where starting one takes 0.03 s), with a
# failing status and no output, before the program's main began: c.bad_out_pointers,
# c.task_set_result_twice, c.actor_release_wakes_stop, c.executor_self_wait_deadlock, one
# each in runs of the whole suite in CI or a clean clone, none reproduced in ~1,000 runs of
# single cases or ten of the suite on one machine. That is wine failing to start a process, not a case failing.
# main() creates the file TETHER_TEST_STARTED names before it runs the case, so:
#   ended 0                        -> passed
#   ended non-zero, file created   -> the case failed: that status, never run again
#   ended non-zero, no file        -> wine did not start it: said on stderr, run again
#                                     (three starts at most, then that status)
set -u
wine=$1
shift
marker="$(mktemp -u "${TMPDIR:-/tmp}/tether-case-started.XXXXXX")"
trap 'rm -f "$marker"' EXIT
rc=0
for start in 1 2 3; do
  TETHER_TEST_STARTED="Z:${marker//\//\\}" "$wine" "$@" && exit 0
  rc=$?
  if [ -e "$marker" ]; then
    echo "wine_case: '$*' ended with status $rc" >&2
    exit "$rc"
  fi
  echo "wine_case: start $start of '$*' ended with status $rc before main began (wine did not start it)" >&2
done
exit "$rc"
