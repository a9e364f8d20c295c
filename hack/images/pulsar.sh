#!/usr/bin/env bash
# Builds the Pulsar image the Apache Pulsar Helm chart runs on the local
# cluster (ZooKeeper, bookies, autorecovery, brokers, the init Jobs),
# without Docker or a registry, under the name the chart uses:
#
#   docker.io/apachepulsar/pulsar-all:4.0.7
#
#   hack/images/pulsar.sh     build what is missing; print the folder
#                             (bin/pulsar-image/4.0.7) holding image.tar
#
# What the image is: the shared root file system (hack/images/rootfs.sh:
# Debian trixie, JRE 21 as upstream's image, python3, nc, nslookup), Pulsar 4.0.7's jars
# from Maven Central (hack/images/pulsar/pulsar-libs.pom.xml) in
# /pulsar/lib, and our own stand-ins for the commands and configuration
# files of the Apache Pulsar image that the chart calls
# (hack/images/pulsar/bin, conf; their headers say what each does), with
# WORKDIR /pulsar and user 10000 in group 0, as upstream's. The chart runs
# it unchanged; streambench's run sets spec.cluster.managed.version 4.0.7
# (the newest 4.0.x whose jars resolve from Maven Central), which the
# durability experiment covers.
#
# Needs root (rootfs.sh), Go and Maven.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/hack/images"
# shellcheck source=lib.sh
. "$here/lib.sh"

PULSAR_VERSION=4.0.7
IMAGE="docker.io/apachepulsar/pulsar-all:$PULSAR_VERSION"
out="${PULSAR_IMAGE_DIR:-$root/bin/pulsar-image/$PULSAR_VERSION}"

log() { echo "pulsar-image: $*" >&2; }
die() { echo "pulsar-image: $*" >&2; exit 1; }

# fetch_libs: Pulsar's jars and what they need, from Maven Central.
fetch_libs() {
  local pom="$here/pulsar/pulsar-libs.pom.xml" stamp
  stamp="$(sha256sum "$pom" | cut -c1-12)"
  [ -f "$out/lib/.$stamp" ] && return
  rm -rf "$out/lib"
  log "fetching Pulsar $PULSAR_VERSION's jars from Maven Central"
  copy_jars "$pom" "$out/lib" "$out/maven.log" ||
    die "fetching Pulsar's jars failed (is Maven Central reachable?)"
  touch "$out/lib/.$stamp"
}

# build_image: /pulsar laid out as the upstream image lays it out. conf,
# logs and data are group-writable: the chart's scripts rewrite conf/*.conf
# and the broker writes logs/status, as user 10000 in group 0 (files of
# the added layer belong to root:0).
build_image() {
  local rootfs stamp stage="$out/stage"
  rootfs="$("$here/rootfs.sh")"
  stamp="$( (echo "$rootfs"; ls "$out/lib"; cat "$here/pulsar/bin/"* "$here/pulsar/conf/"* "${BASH_SOURCE[0]}") | sha256sum | cut -c1-12)"
  [ -f "$out/.image-$stamp" ] && return
  rm -rf "$stage" "$out"/.image-* "$out/image.tar"
  mkdir -p "$stage/logs" "$stage/data"
  cp -r "$here/pulsar/bin" "$here/pulsar/conf" "$stage/"
  chmod 0775 "$stage/conf" "$stage/logs" "$stage/data"
  chmod 0664 "$stage/conf/"*
  log "assembling $IMAGE"
  fsimage -base "$rootfs" -image "$IMAGE" -out "$out/image.tar" \
    -add "$out/lib=/pulsar/lib" -add "$stage/bin=/pulsar/bin" -add "$stage/conf=/pulsar/conf" \
    -add "$stage/logs=/pulsar/logs" -add "$stage/data=/pulsar/data" \
    -env JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64 -env PULSAR_HOME=/pulsar \
    -env PATH=/pulsar/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    -workdir /pulsar -user 10000 \
    -label org.opencontainers.image.version="$PULSAR_VERSION"
  rm -rf "$stage"
  touch "$out/.image-$stamp"
}

mkdir -p "$out"
# One build at a time (see strimzi.sh).
exec 9>"$out/.build.lock"
flock 9
case "${1:-}" in
  "") fetch_libs; build_image ;;
  *) die "usage: $0" ;;
esac
echo "$out"
