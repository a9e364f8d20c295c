#!/usr/bin/env bash
# Builds the root file system the JVM images of the local cluster share (the
# Strimzi operator, Kafka, Pulsar): Debian trixie (minbase) with OpenJDK
# 21's JRE, the Java the upstream images run (Strimzi 1.2.0's, Pulsar's), and the tools the upstream images' scripts call, from Debian's packages
# through the machine's apt sources, with mmdebstrap (no Docker). Prints the
# tarball's path; cached in bin/images/ and rebuilt only when this script
# changes (its hash is in the file name).
#
#   hack/images/rootfs.sh        -> bin/images/rootfs-jre-<hash>.tar
#
# Needs root (mmdebstrap's root mode) and apt; installs mmdebstrap when
# missing.
#
# IMAGES_JIT=c1 (what .ci/run sets; the default, c2, is the JRE as Debian
# and upstream ship it): every JVM of the images compiles with C1 only
# (-XX:TieredStopAtLevel=1, put in front of its options by a java that
# wraps the JRE's launcher, so whatever starts a JVM gets it: Strimzi's
# operator, Kafka, Pulsar's components, the chart's init Jobs). The e2e
# suite checks what the managed paths deploy, run and tear down, not how
# fast a JIT makes them; on CI's 2 cores the C2 compiler threads of every
# starting JVM are most of what the managed specs cost (the local brokers
# of the tests run C1 for the same reason: localbrokers.DefaultJVMArgs,
# PulsarTestJVM). A benchmark on the local cluster keeps c2.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out_dir="${IMAGES_DIR:-$root/bin/images}"
here="$root/hack/images"
# shellcheck source=lib.sh
. "$here/lib.sh"

# What the upstream images' scripts call, by package:
#   openjdk-21-jre-headless  java, keytool (Strimzi 1.2.0's and Pulsar 4.0's images run
#                            Java 21; the Pulsar chart's PULSAR_GC asks for generational
#                            ZGC, -XX:+ZGenerational, which Java 17 refuses)
#   tini                     PID 1 of Strimzi's launch scripts (/usr/bin/tini)
#   procps net-tools curl    ps; netstat (kafka_readiness.sh); curl (readiness, Pulsar probes)
#   gawk hostname openssl    dynamic_resources.sh; kafka_run.sh; tls_utils.sh
#   python3                  Pulsar's apply-config-from-env.py and its chart's scripts
#   ca-certificates          the JRE's trust store
#   netcat-openbsd           nc: the Pulsar chart's ZooKeeper probes (echo ruok | nc)
#   bind9-dnsutils           nslookup: the Pulsar chart's init Jobs and brokers wait
#                            on DNS with it (the broker counts its "Name:" lines)
packages=(openjdk-21-jre-headless tini procps net-tools curl gawk hostname openssl python3 ca-certificates netcat-openbsd bind9-dnsutils)
# Users of the upstream images: 1001 in group 0 (Strimzi's operator and
# Kafka) and 10000 (Pulsar's images, whose chart runs them as 10000).
users_hook='chroot "$1" useradd -r -m -u 1001 -g 0 strimzi && chroot "$1" useradd -r -m -u 10000 -g 0 pulsar'

jit="${IMAGES_JIT:-c2}"
jit_hook=true
case "$jit" in
  c2) ;;
  c1)
    # /usr/bin/java (an alternative) and $JAVA_HOME/bin/java both reach the
    # wrapper; the launcher finds the JRE from its own path, which stays.
    jit_hook='bin="$1/usr/lib/jvm/java-21-openjdk-amd64/bin" && mv "$bin/java" "$bin/java-launcher" &&
      printf "%s\n" "#!/bin/sh" "exec /usr/lib/jvm/java-21-openjdk-amd64/bin/java-launcher -XX:TieredStopAtLevel=1 \"\$@\"" > "$bin/java" &&
      chmod 0755 "$bin/java"' ;;
  *) echo "rootfs: IMAGES_JIT=$jit: use c2 (the JRE as shipped) or c1 (C1 only, CI's)" >&2; exit 1 ;;
esac

hash="$( (cat "${BASH_SOURCE[0]}"; echo "jit=$jit") | sha256sum | cut -c1-12)"
tar="$out_dir/rootfs-jre-$hash.tar"
# Strimzi's and Pulsar's images share it and may be built at once: one
# builds, the other waits and finds it.
mkdir -p "$out_dir"
exec 9>"$out_dir/.rootfs.lock"
flock 9
if [ -f "$tar" ]; then echo "$tar"; exit 0; fi

[ "$(id -u)" = 0 ] || { echo "rootfs: must run as root (mmdebstrap builds the root file system in root mode)" >&2; exit 1; }
need_mmdebstrap
rm -f "$out_dir"/rootfs-jre-*
# Debian's default mirror (deb.debian.org, what the machine's apt reaches,
# through its apt proxy settings if any); no documentation or apt lists in
# the image. Man pages are removed after the install, not excluded from it:
# the JRE's postinst links its man pages with update-alternatives, which
# fails when their directory is missing.
echo "rootfs: building $tar (Debian trixie, ${packages[*]}; JIT $jit)" >&2
mmdebstrap_private ${MMDEBSTRAP_FLAGS:---quiet} --mode=root --variant=minbase --format=tar \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook="$users_hook" --customize-hook="$jit_hook" \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/usr/share/man/*' \
  trixie "$tar.tmp"
mv "$tar.tmp" "$tar"
echo "$tar"
