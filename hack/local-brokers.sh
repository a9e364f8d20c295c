#!/usr/bin/env bash
# Start, stop or inspect real local brokers (JVM processes from Maven Central
# jars) in the background, for trying streambench by hand.
#
#   hack/local-brokers.sh kafka start [--brokers 3] [--level 2] [--dir bin/local-kafka]
#   hack/local-brokers.sh kafka status
#   hack/local-brokers.sh kafka stop
#
# start prints the endpoint (bootstrap=127.0.0.1:...) and records it with the
# pids under the directory (default bin/local-<system>); stop ends exactly
# those pids. Needs Go, Java 17+ and Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 2 ]]; then
  echo "usage: $0 <system> <start|stop|status> [flags]" >&2
  exit 2
fi
exec go run ./hack/localbrokers "$@"
