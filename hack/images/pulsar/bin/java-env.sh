# Sourced by bin/pulsar and bin/bookkeeper: the JVM command line the Apache
# Pulsar image's scripts build, over the jars in /pulsar/lib.
#
# run_java MAIN ARGS...   execs java with, in order, the component's memory
# and collector flags ($MEM_OPTS, $GC_OPTS, set by the caller from
# PULSAR_MEM/PULSAR_GC or BOOKIE_MEM/BOOKIE_GC), the module openings Pulsar 4
# needs on Java 17, the logging configuration and the chart's $OPTS.

PULSAR_HOME="${PULSAR_HOME:-/pulsar}"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

# The Java feature version (17, 21, ...).
java_version() {
  "$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

# without_unsupported_flags: drops the flags this JVM refuses. The chart's
# default PULSAR_GC carries -XX:+ZGenerational, an option of Java 21 (the
# upstream image's); Java 17 (Debian bookworm's, this image's) exits with
# "Unrecognized VM option" on it. ZGC itself is in 17, non-generational.
without_unsupported_flags() {
  local v="" out=() f
  for f in "$@"; do
    if [ "$f" = "-XX:+ZGenerational" ]; then
      # The JVM is asked its version (a JVM start) only when the flag is there.
      v="${v:-$(java_version)}"
      if [ "${v:-0}" -lt 21 ]; then
        echo "pulsar-image: dropping $f: Java $v has no generational ZGC (it came in 21)" >&2
        continue
      fi
    fi
    out+=("$f")
  done
  if [ ${#out[@]} -gt 0 ]; then printf '%s\n' "${out[@]}"; fi
}

run_java() {
  local main="$1"; shift
  local flags
  # Word splitting of the *_OPTS strings is wanted: they are flag lists.
  # shellcheck disable=SC2086
  mapfile -t flags < <(without_unsupported_flags $MEM_OPTS $GC_OPTS)
  # shellcheck disable=SC2086
  exec "$JAVA" -cp "$PULSAR_HOME/lib/*" "${flags[@]}" \
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
