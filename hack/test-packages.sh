#!/usr/bin/env bash
# Prints the packages of one stage of make test, found from what their tests
# import, so a new package lands in the right stage without a list to keep:
#
#   hack/test-packages.sh experiments  tests that start real brokers and time them through
#                                   the sync shim (import internal/localbrokers and
#                                   internal/syncdelay): their verdicts are timings
#   hack/test-packages.sh brokers   the other tests that start real brokers (import internal/localbrokers)
#   hack/test-packages.sh report    tests that drive headless Chromium (import chromedp)
#   hack/test-packages.sh unit      every other package (unit tests, the envtest suite)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mod="$(go list -m)"
go list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... |
  awk -v stage="$1" -v brokers="$mod/internal/localbrokers" -v shim="$mod/internal/syncdelay" '
    {
      s = ($1 == brokers) ? "brokers" : "unit"
      timed = 0
      for (i = 1; i <= NF; i++) {
        if ($i == brokers) s = "brokers"
        else if ($i == shim) timed = 1
        else if ($i ~ /^github\.com\/chromedp\/chromedp$/ && s == "unit") s = "report"
      }
      if (s == "brokers" && timed) s = "experiments"
      if (s == stage) print $1
    }'
