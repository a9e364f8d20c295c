#!/usr/bin/env bash
# Prints the failures in a test log, shortly: each failed Ginkgo spec's
# title and the first lines of its failure message, and each failed Go
# test's lines from its _test.go files. .ci/run prints it last, so the end
# of a CI log, often all of it that is shown, says what failed and why, and
# not only where.
#
#   hack/failure-digest.sh LOG
set -euo pipefail
# .ci/run's lanes prefix their lines with their name ([tests], [cluster]).
sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^\[[a-z]*\] //' "$1" | awk '
  # "• [FAILED] [60.2 seconds]" is followed by the spec title.
  /^• \[(FAILED|TIMEDOUT|PANICKED|INTERRUPTED)\]/ { if ((getline title) > 0) print "spec: " title; next }
  # The message block: "  [FAILED] Timed out ..." up to "  In [It] at: ...".
  /^  \[(FAILED|TIMEDOUT|PANICKED)\] / && !/\] in \[/ { n = 8 }
  /^  In \[/ { n = 0 }
  n > 0 { print; n--; next }
  # go test without -v prints only the failing tests and their lines.
  /^ *--- FAIL/ || /^ +[A-Za-z0-9_]+_test\.go:[0-9]+: / { print }
' | head -n 60
