#!/usr/bin/env bash
# Runs one stage of the build or the tests and says how long it took:
#
#   hack/timed.sh "stage name" command [args...]
#
# The line goes to stderr and, when STAGE_TIMES names a file, a record of
# it (name, start in seconds after CI_START, seconds, status, CPU seconds;
# tab-separated) is appended to it; .ci/run prints that file as a table at the end
# (hack/stage-table.sh), so a slow stage on a cold machine is seen by name.
# The command's exit status is passed on.
set -uo pipefail
name="$1"; shift
start=$(date +%s)
echo "==> $name" >&2
"$@"
rc=$?
secs=$(( $(date +%s) - start ))
# The CPU the stage used: user and system time of every process it ran and
# waited for (bash's `times`, its children's line). On a machine whose
# cores are busy the whole run, wall time follows the sum of these, not
# the order of the stages; daemons the stage did not start (the local
# cluster, its pods) are not in it.
# (`times` runs in this shell, into a file: in a $(...) it would count the
# subshell's children, none.)
tf="$(mktemp)"
times > "$tf"
cpu="$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$tf")"
rm -f "$tf"
status=ok; [ "$rc" -eq 0 ] || status="FAILED (exit $rc)"
echo "<== $(printf '%-28s %5d s  %s  (CPU %d s)' "$name" "$secs" "$status" "$cpu")" >&2
[ -z "${STAGE_TIMES:-}" ] || printf '%s\t%d\t%d\t%s\t%d\n' "$name" "$(( start - ${CI_START:-$start} ))" "$secs" "$status" "$cpu" >> "$STAGE_TIMES"
exit "$rc"
