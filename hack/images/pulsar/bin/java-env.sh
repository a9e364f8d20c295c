# Sourced by bin/pulsar and bin/bookkeeper: the JVM command line the Apache
# Pulsar image's scripts build, over the jars in /pulsar/lib.
#
# run_java MAIN ARGS...   execs java with, in order, the component's memory
# and collector flags ($MEM_OPTS, $GC_OPTS, set by the caller from
# PULSAR_MEM/PULSAR_GC or BOOKIE_MEM/BOOKIE_GC), the module openings Pulsar 4
# needs on Java 17, the logging configuration and the chart's $OPTS.

PULSAR_HOME="${PULSAR_HOME:-/pulsar}"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

run_java() {
  local main="$1"; shift
  # The chart's flags run as written: the image's JVM is Java 21, as
  # upstream's, so the chart's PULSAR_GC (generational ZGC,
  # -XX:+ZGenerational, which Java 17 refused) needs nothing cut. Word
  # splitting of the *_OPTS strings is wanted: they are flag lists.
  # shellcheck disable=SC2086
  exec "$JAVA" -cp "$PULSAR_HOME/lib/*" $MEM_OPTS $GC_OPTS \
    -Djava.net.preferIPv4Stack=true -Djava.awt.headless=true \
    --add-opens java.base/sun.net=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
    --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED \
    --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.zip=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
    --add-opens java.management/sun.management=ALL-UNNAMED \
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
    -Dio.netty.tryReflectionSetAccessible=true -Dpulsar.allocator.exit_on_oom=true \
    -Djute.maxbuffer=10485760 -Dzookeeper.4lw.commands.whitelist='*' \
    -Dlog4j.configurationFile="$PULSAR_HOME/conf/log4j2.xml" \
    $OPTS "$main" "$@"
}
