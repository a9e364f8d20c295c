#!/usr/bin/env bash
# Prints the stage records of hack/timed.sh as a table: each stage's start
# (seconds after CI_START), its time, its share of the whole run, its
# budget and the CPU seconds it used (records of an older timed.sh have
# none: "-"); then names each stage over its budget. A warning, never a
# failure: a test must not fail on time, but a stage that grows is seen by
# name before the whole run crosses CI's limit.
#
#   hack/stage-table.sh STAGE_TIMES TOTAL_SECONDS [BUDGETS]
#
# BUDGETS has a line per stage: its name, a tab, its budget in seconds
# (# starts a comment). Stages run in two lanes at once (.ci/run), so the
# shares add up to more than 100 %.
set -euo pipefail
times="$1" total="$2" budgets="${3:-/dev/null}"
[ -f "$budgets" ] || budgets=/dev/null
awk -F'\t' -v total="$total" '
  FNR == NR {
    if ($0 !~ /^#/ && NF >= 2) budget[$1] = $2
    next
  }
  NF >= 4 {
    n++; name[n] = $1; start[n] = $2; secs[n] = $3; status[n] = $4
    cpu[n] = (NF >= 5) ? $5 " s" : "-"
    if (NF >= 5) cpusum += $5
  }
  END {
    printf "%-28s %7s %7s %7s %8s %8s  %s\n", "stage", "start", "s", "share", "budget", "CPU", "status"
    for (i = 1; i <= n; i++) {
      b = (name[i] in budget) ? budget[name[i]] " s" : "-"
      share = total > 0 ? 100 * secs[i] / total : 0
      printf "%-28s %6ds %6ds %6.1f%% %8s %8s  %s\n", name[i], start[i], secs[i], share, b, cpu[i], status[i]
    }
    printf "%-28s %7s %6ds %6.1f%% %8s %8s\n", "total (wall clock)", "", total, 100, ("total" in budget) ? budget["total"] " s" : "-", cpusum ? cpusum " s" : "-"
    over = 0
    for (i = 1; i <= n; i++) {
      if ((name[i] in budget) && secs[i] > budget[name[i]]) {
        if (!over) print "warning: stages over their budget (.ci/budgets):"
        over = 1
        printf "  %s: %d s, budget %d s (+%d s)\n", name[i], secs[i], budget[name[i]], secs[i] - budget[name[i]]
      }
    }
    if (("total" in budget) && total > budget["total"]) {
      if (!over) print "warning: stages over their budget (.ci/budgets):"
      printf "  the whole run: %d s, budget %d s (+%d s)\n", total, budget["total"], total - budget["total"]
    }
  }
' "$budgets" "$times"
