#!/usr/bin/env bash
# Prints the failures in a test log, shortly: each failed Ginkgo spec's
# title and the first lines of its failure message, each failed Go test's
# lines from its _test.go files, the packages that failed and compile
# errors, and each stage that failed (hack/timed.sh's "<== ... FAILED"),
# with the last lines its lane printed before it when nothing above
# explained it: a stage that fails before any test runs (a package list,
# a build) says why only there. .ci/run prints it last, so the end of a CI
# log, often all of it that is shown, says what failed and why, and not
# only where. A spec's message keeps its first and its last lines (a
# failed run's message ends with what its pod said last: CI's cut after
# 8 lines once hid the error), and a line said twice (a lane's output
# printed again) is printed once, unless short.
#
#   hack/failure-digest.sh LOG
set -euo pipefail
# .ci/run's lanes prefix their lines with their name ([tests], [cluster]).
sed -e 's/\x1b\[[0-9;]*m//g' "$1" | awk -v keep=12 -v head=4 -v tail=14 '
  function out(s) { if (length(s) < 20 || !(s in printed)) { printed[s] = 1; print s } }
  # A spec message block, from its "[FAILED]" line to "In [It] at:": its
  # first head lines, and its last tail lines when it is longer.
  function flush(l,   i, from) {
    if (!(l in m)) return
    for (i = 1; i <= m[l] && i <= head; i++) out(msg[l, i])
    from = m[l] - tail + 1
    if (from <= head) from = head + 1
    else out("  ... (" (from - head - 1) " lines)")
    for (i = from; i <= m[l]; i++) out(msg[l, i])
    delete m[l]
  }
  {
    lane = ""
    if (match($0, /^\[[a-z]+\] /)) { lane = substr($0, 2, RLENGTH - 3); $0 = substr($0, RLENGTH + 1) }
    said = 0
  }
  # "• [FAILED] [60.2 seconds]" is followed by the spec title.
  /^• \[(FAILED|TIMEDOUT|PANICKED|INTERRUPTED)\]/ {
    flush(lane)
    if ((getline title) > 0) { sub(/^\[[a-z]+\] /, "", title); out("spec: " title); explained[lane] = 1 }
    next
  }
  # The message block: "  [FAILED] Timed out ..." up to "  In [It] at: ...".
  /^  \[(FAILED|TIMEDOUT|PANICKED)\] / && !/\] in \[/ { flush(lane); m[lane] = 0 }
  /^  In \[/ { flush(lane) }
  (lane in m) { msg[lane, ++m[lane]] = $0; said = 1 }
  # go test without -v prints only the failing tests and their lines; a
  # failed package is "FAIL<tab>path", a compile error "file.go:L:C: ...".
  !said && (/^ *--- FAIL/ || /^ +[A-Za-z0-9_]+_test\.go:[0-9]+: / || /^FAIL\t/ || /^[^ ]+\.go:[0-9]+:[0-9]+: /) { out($0); said = 1 }
  said { explained[lane] = 1 }
  /^<== .* FAILED \(exit [0-9]+\)/ {
    flush(lane)
    print "stage failed: " substr($0, 5)
    if (!explained[lane]) {
      print "  its lane" (lane == "" ? "" : " (" lane ")") "'"'"'s last lines before it:"
      for (i = count[lane] - keep + 1; i <= count[lane]; i++) if (i > 0) print "  | " last[lane, i % keep]
    }
    explained[lane] = 0
    next
  }
  { count[lane]++; last[lane, count[lane] % keep] = $0 }
  END { for (l in m) flush(l) }
' | head -n 120
