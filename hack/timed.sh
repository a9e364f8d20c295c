#!/usr/bin/env bash
# Runs one stage of the build or the tests and says how long it took:
#
#   hack/timed.sh "stage name" command [args...]
#
# The line goes to stderr and, when STAGE_TIMES names a file, a record of
# it (name, start in seconds after CI_START, seconds, status; tab-separated)
# is appended to it; .ci/run prints that file as a table at the end
# (hack/stage-table.sh), so a slow stage on a cold machine is seen by name.
# The command's exit status is passed on.
set -uo pipefail
name="$1"; shift
start=$(date +%s)
echo "==> $name" >&2
"$@"
rc=$?
secs=$(( $(date +%s) - start ))
status=ok; [ "$rc" -eq 0 ] || status="FAILED (exit $rc)"
echo "<== $(printf '%-28s %5d s  %s' "$name" "$secs" "$status")" >&2
[ -z "${STAGE_TIMES:-}" ] || printf '%s\t%d\t%d\t%s\n' "$name" "$(( start - ${CI_START:-$start} ))" "$secs" "$status" >> "$STAGE_TIMES"
exit "$rc"
