#!/usr/bin/env bash
# streambench's stand-in for Apache Kafka's bin/kafka-storage.sh (see
# kafka-run-class.sh): kafka_run.sh formats the KRaft log directories with it.
set -euo pipefail
exec "$(dirname "$0")/kafka-run-class.sh" kafka.tools.StorageTool "$@"
