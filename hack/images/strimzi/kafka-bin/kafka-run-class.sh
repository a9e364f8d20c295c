#!/usr/bin/env bash
# streambench's stand-in for Apache Kafka's bin/kafka-run-class.sh in the
# Kafka image of the local cluster (the Apache binary tarball that carries
# the original is not reachable here; the jars come from Maven Central).
# It runs a class on libs/ with the environment variables Strimzi's
# kafka_run.sh sets (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
# KAFKA_GC_LOG_OPTS, KAFKA_JMX_OPTS, KAFKA_LOG4J_OPTS, KAFKA_OPTS) in the
# order Apache's script puts them, with Apache's defaults.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 class [args...]" >&2; exit 1; }
base_dir="$(cd "$(dirname "$0")/.." && pwd)"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx256M}"
KAFKA_JVM_PERFORMANCE_OPTS="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
# shellcheck disable=SC2086 # the *_OPTS are lists of words, as in Apache's script
exec java $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_GC_LOG_OPTS:-} ${KAFKA_JMX_OPTS:-} ${KAFKA_LOG4J_OPTS:-} \
  -cp "$base_dir/libs/*" ${KAFKA_OPTS:-} "$@"
