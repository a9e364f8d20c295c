#!/usr/bin/env bash
# streambench's stand-in for Apache Kafka's bin/kafka-server-start.sh (see
# kafka-run-class.sh): the broker, with Apache's default heap when Strimzi
# sets none.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 server.properties" >&2; exit 1; }
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
exec "$(dirname "$0")/kafka-run-class.sh" kafka.Kafka "$@"
