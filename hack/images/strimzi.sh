#!/usr/bin/env bash
# Builds a real Strimzi cluster operator from source and the two images it
# runs on the local cluster, without Docker or a registry:
#
#   quay.io/strimzi/operator:1.2.0              the cluster operator, and the
#                                               User Operator of the entity
#                                               operator (KafkaUsers)
#   quay.io/strimzi/kafka:1.2.0-kafka-4.3.1     the Kafka it starts
#
# under the names Strimzi's own install files use, so they run unchanged:
# the release README tells users to install, on Java 21 as upstream's images.
#
#   hack/images/strimzi.sh            build what is missing; print the folder
#                                     (bin/strimzi/1.2.0) holding images/*.tar
#                                     and dist/install/ (Strimzi's install files)
#
# A cluster that pulls Strimzi's own images (kind) needs none of this: it
# takes the same release's install files, testdata/upstream/strimzi-1.2.0.
#
# Inputs, all pinned:
#   - Strimzi's source: GitHub's archive of the 1.2.0 tag's commit, or
#     $STREAMBENCH_MIRROR/strimzi-1.2.0-src.tar.gz where GitHub cannot be
#     reached, checked against the tree digest internal/upstream pins
#     (go run ./hack/upstream fetch); built with Maven 3.9 and OpenJDK 21
#     (Strimzi >= 0.50 compiles with maven.compiler.release 21) in a Debian
#     trixie root file system (hack/images/buildroot.sh: the host, bookworm,
#     has no JDK 21), every dependency from Maven Central (~/.m2 caches
#     them: the first build downloads ~260 MB). What Maven Central does not
#     serve here is patched around, by name (patch_poms).
#   - The root file system: hack/images/rootfs.sh (Debian trixie, JRE 21).
#   - Kafka 4.3.1's jars and what Strimzi's image adds to them:
#     hack/images/strimzi/kafka-libs.pom.xml; the Prometheus JMX exporter
#     agent.
#   - Start scripts: Strimzi's own (docker-images/) and ours for Apache's
#     bin/kafka-*.sh (hack/images/strimzi/kafka-bin/).
# Needs root (rootfs.sh, buildroot.sh), Go, Maven (the host's, for the
# jars).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/hack/images"
# shellcheck source=lib.sh
. "$here/lib.sh"

STRIMZI_VERSION=1.2.0
KAFKA_VERSION=4.3.1
# Strimzi's image carries 1.5.0 from GitHub; Maven Central's newest is 1.0.1
# (also what the monitoring test attaches to local brokers), whose rule
# format is the same.
JMX_EXPORTER_VERSION=1.0.1
OPERATOR_IMAGE="quay.io/strimzi/operator:$STRIMZI_VERSION"
KAFKA_IMAGE="quay.io/strimzi/kafka:$STRIMZI_VERSION-kafka-$KAFKA_VERSION"

out="${STRIMZI_DIR:-$root/bin/strimzi/$STRIMZI_VERSION}"

log() { echo "strimzi: $*" >&2; }
die() { echo "strimzi: $*" >&2; exit 1; }

# patch_poms DIR: what Maven Central does not serve here, patched around in
# the source tree, each by name (checked: a POM that no longer has what is
# patched fails the build here, not with a resolution error later).
#   - io.fabric8:openshift-* 7.8.0 (the root POM's versions) are not
#     served; 7.5.2 is, and compiles against kubernetes-client 7.8.0. The
#     operator uses only the OpenShift model's types (Routes, Builds), for
#     clusters that have them.
#   - Test-only artifacts (io.strimzi:strimzi-test-container,
#     fault-injection-source-connector, the modules' "tests" jars, which are
#     built only with the tests) are dropped from the module POMs; their
#     scope is set in the root's dependency management, so the modules'
#     entries are matched by artifact and classifier.
patch_poms() {
  local dir="$1" pom
  perl -0pi -e 's{(<artifactId>openshift-[a-z-]+</artifactId>\s*<version>)[^<]+(</version>)}{${1}7.5.2${2}}g' "$dir/pom.xml"
  grep -q '<artifactId>openshift-model</artifactId>' "$dir/pom.xml" && ! grep -q '<version>7.8.0</version>' "$dir/pom.xml" ||
    die "patch_poms: Strimzi $STRIMZI_VERSION's pom.xml has no openshift-model entry to pin to 7.5.2, or one still at 7.8.0"
  while IFS= read -r pom; do
    perl -0pi -e 's{\s*<dependency>(?:(?!</dependency>).)*?(?:<artifactId>(?:strimzi-test-container|fault-injection-source-connector)</artifactId>|<classifier>tests</classifier>)(?:(?!</dependency>).)*?</dependency>}{}gs' "$pom"
  done < <(find "$dir" -mindepth 2 -name pom.xml)
  ! grep -rlq --include=pom.xml -e '<artifactId>strimzi-test-container</artifactId>' "$dir"/*/ ||
    die "patch_poms: a module POM still depends on strimzi-test-container"
}

# build_operator: Strimzi's cluster operator, User Operator and Kafka agent
# from source, with Maven, as Strimzi's own Makefile does (tests, spotbugs
# and checkstyle skipped); keeps their distributions and the install files.
# The User Operator runs in the entity operator's pod, which the cluster
# operator starts from the operator image (STRIMZI_DEFAULT_USER_OPERATOR_IMAGE)
# with the command /opt/strimzi/bin/user_operator_run.sh (EntityUserOperator
# .createContainer): a managed run with a KafkaUser needs it. A build of an
# older version of this script, without it, is built again.
build_operator() {
  [ -f "$out/dist/.done" ] && [ -x "$out/dist/operator/bin/user_operator_run.sh" ] && return
  local src_tar work="$out/src"
  src_tar="$(cd "$root" && go run ./hack/upstream -dir "$root/bin/upstream" fetch "strimzi-$STRIMZI_VERSION-src.tar.gz")" ||
    die "Strimzi $STRIMZI_VERSION's source could not be fetched and checked (above)"
  rm -rf "$work" "$out/dist"
  mkdir -p "$work"
  tar xzf "$src_tar" -C "$work" --strip-components=1
  patch_poms "$work"
  log "building the cluster operator, the User Operator and the Kafka agent $STRIMZI_VERSION with Maven and OpenJDK 21 in Debian trixie (cold: ~260 MB of dependencies, then ~3 min on 2 cores)"
  # Tests are not compiled (-Dmaven.test.skip: -DskipTests still resolves
  # the test-only artifacts patch_poms removes), so the dependency plugin's
  # analysis, which counts test classes, is off too.
  local skip="-B -q -Dmaven.test.skip=true -Dmdep.analyze.skip=true -Dspotbugs.skip -Dcheckstyle.skip -Dmaven.javadoc.skip"
  # The operator validates a Kafka's configuration against a model of the
  # Kafka version's settings, generated from Kafka's jars into its
  # resources before it is packaged (Strimzi's config-model-generator
  # Makefile; without it: "Configuration model /kafka-4.3.1-config-model.json
  # was not found"). Only the Kafka version of the image is generated.
  "$here/buildroot.sh" run "$work" sh -c "
    mvn $skip -pl config-model-generator -am install &&
    cd config-model-generator && mvn $skip verify exec:java -Pgenerate-model \
      -Dkafka-metadata-version=$KAFKA_VERSION \
      -Dconfig-model-file=../cluster-operator/src/main/resources/kafka-$KAFKA_VERSION-config-model.json &&
    cd .. && mvn $skip -pl cluster-operator,user-operator,kafka-agent -am package" > "$out/maven.log" 2>&1 ||
    { tail -n 40 "$out/maven.log" >&2; die "the Maven build failed (whole log: $out/maven.log)"; }
  # (Listed into a variable: grep -q in a pipe would end unzip with SIGPIPE.)
  local listing
  listing="$(unzip -l "$work/cluster-operator/target/cluster-operator-$STRIMZI_VERSION.jar")"
  [[ "$listing" == *"kafka-$KAFKA_VERSION-config-model.json"* ]] ||
    die "the operator jar has no configuration model of Kafka $KAFKA_VERSION"
  mkdir -p "$out/dist/operator" "$out/dist/install"
  # Both distributions unpack into one bin/ and lib/, as Strimzi's
  # docker-images/operator/Makefile does; each run script names its own
  # jars (the classpath Maven filters into it), so a dependency the two
  # take at different versions cannot mix.
  unzip -qo "$work/docker-images/artifacts/binaries/cluster-operator-$STRIMZI_VERSION-dist.zip" -d "$out/dist/operator"
  unzip -qo "$work/docker-images/artifacts/binaries/user-operator-$STRIMZI_VERSION-dist.zip" -d "$out/dist/operator"
  [ -f "$out/dist/operator/bin/user_operator_run.sh" ] && [ -f "$out/dist/operator/lib/io.strimzi.user-operator-$STRIMZI_VERSION.jar" ] ||
    die "the User Operator's distribution has no bin/user_operator_run.sh or lib/io.strimzi.user-operator-$STRIMZI_VERSION.jar"
  cp "$work/docker-images/operator/scripts/"* "$out/dist/operator/bin/"
  cp "$work/kafka-agent/target/kafka-agent-$STRIMZI_VERSION.jar" "$out/dist/"
  cp -r "$work/docker-images/kafka-based/kafka/scripts" "$out/dist/kafka-scripts"
  cp "$work/packaging/install/cluster-operator/"*.yaml "$out/dist/install/"
  touch "$out/dist/install/.done"
  chmod +x "$out/dist/operator/bin/"*.sh "$out/dist/kafka-scripts/"*.sh
  rm -rf "$work"
  touch "$out/dist/.done"
}

# fetch_kafka_libs: Kafka's jars and what Strimzi's image adds, and the JMX
# exporter agent, from Maven Central.
fetch_kafka_libs() {
  local pom="$here/strimzi/kafka-libs.pom.xml" stamp
  stamp="$(sha256sum "$pom" | cut -c1-12)"
  [ -f "$out/kafka-libs/.$stamp" ] && return
  rm -rf "$out/kafka-libs" "$out/jmx-exporter"
  log "fetching Kafka $KAFKA_VERSION's jars from Maven Central"
  copy_jars "$pom" "$out/kafka-libs" "$out/maven-kafka.log" ||
    die "fetching Kafka's jars failed (is Maven Central reachable?)"
  mvn -B -q "$MVN_DEPENDENCY_PLUGIN:copy" -Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:$JMX_EXPORTER_VERSION" \
    -DoutputDirectory="$out/jmx-exporter" > "$out/maven-jmx.log" 2>&1 ||
    { tail -n 20 "$out/maven-jmx.log" >&2; die "fetching the JMX exporter agent failed"; }
  touch "$out/kafka-libs/.$stamp"
}

# build_images: the operator's and Kafka's images on the shared root file
# system, laid out as Strimzi's Dockerfiles lay them out
# (docker-images/operator, docker-images/kafka-based/kafka).
build_images() {
  local rootfs stamp
  rootfs="$("$here/rootfs.sh")"
  # Rebuilt when the root file system, the jars or the scripts change.
  stamp="$( (echo "$rootfs"; ls "$out/kafka-libs"; cat "$here/strimzi/kafka-bin/"* "${BASH_SOURCE[0]}") | sha256sum | cut -c1-12)"
  [ -f "$out/images/.$stamp" ] && return
  rm -rf "$out/images"
  mkdir -p "$out/images"
  local java_env=(-env JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64 -env STRIMZI_VERSION="$STRIMZI_VERSION")
  log "assembling $OPERATOR_IMAGE"
  fsimage -base "$rootfs" -image "$OPERATOR_IMAGE" -out "$out/images/operator.tar" \
    -add "$out/dist/operator/bin=/opt/strimzi/bin" -add "$out/dist/operator/lib=/opt/strimzi/lib" \
    "${java_env[@]}" -env STRIMZI_HOME=/opt/strimzi -workdir /opt/strimzi -user 1001 \
    -label org.opencontainers.image.version="$STRIMZI_VERSION"

  log "assembling $KAFKA_IMAGE"
  local libs="$out/images/kafka-libs"
  mkdir -p "$libs" "$out/images/empty"
  cp "$out/kafka-libs/"*.jar "$out/dist/kafka-agent-$STRIMZI_VERSION.jar" "$libs/"
  fsimage -base "$rootfs" -image "$KAFKA_IMAGE" -out "$out/images/kafka.tar" \
    -add "$libs=/opt/kafka/libs" -add "$here/strimzi/kafka-bin=/opt/kafka/bin" \
    -add "$out/dist/kafka-scripts=/opt/kafka" -add "$out/images/empty=/opt/kafka/plugins" \
    -add "$out/jmx-exporter=/opt/prometheus-jmx-exporter" \
    "${java_env[@]}" -env KAFKA_HOME=/opt/kafka -env KAFKA_VERSION="$KAFKA_VERSION" \
    -env JMX_EXPORTER_HOME=/opt/prometheus-jmx-exporter -workdir /opt/kafka -user 1001 \
    -label org.opencontainers.image.version="$STRIMZI_VERSION-kafka-$KAFKA_VERSION"
  rm -rf "$libs" "$out/images/empty"
  touch "$out/images/.$stamp"
}

mkdir -p "$out"
# One build at a time: .ci/run builds the images in a lane of their own
# while the e2e suite's load-strimzi may already ask for them; it waits
# here and finds them built.
exec 9>"$out/.build.lock"
flock 9
[ $# -eq 0 ] || die "usage: $0 (no arguments)"
build_operator
fetch_kafka_libs
build_images
echo "$out"
