#!/usr/bin/env bash
# The root file system Strimzi is built in: Debian trixie (minbase) with
# OpenJDK 21's JDK and Maven 3.9, from Debian's packages with mmdebstrap,
# as rootfs.sh builds the images' root file system. Strimzi >= 0.50
# compiles with maven.compiler.release 21, and the host (Debian bookworm)
# has no JDK 21; trixie's cannot run on bookworm's C library, so the build
# runs in this tree as a chroot. Nothing is installed on the host but
# mmdebstrap.
#
#   hack/images/buildroot.sh                 -> bin/images/buildroot-<hash>/ (prints it)
#   hack/images/buildroot.sh run DIR CMD...  runs CMD in the chroot, in DIR
#
# `run` mounts, in a mount namespace of its own (so nothing stays mounted
# when it ends, however it ends): /proc (the JDK's launcher finds libjli
# through it), DIR at the same path, and the host's Maven repository
# (~/.m2) at /root/.m2, so the dependencies are downloaded once for every
# build. The host's trust store (Java's cacerts and the PEM bundle) and
# resolver are copied in at each run: these machines reach Maven Central
# through a TLS proxy only the host's store trusts (without it Maven fails
# with "PKIX path building failed"), and a store copied at build time would
# go stale with the host's.
#
# Needs root (mmdebstrap's root mode, chroot, mount).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out_dir="${IMAGES_DIR:-$root/bin/images}"
here="$root/hack/images"
# shellcheck source=lib.sh
. "$here/lib.sh"

# openjdk-21-jdk-headless  javac 21 (Strimzi's maven.compiler.release)
# maven                    3.9.9 in trixie
# ca-certificates-java     the JDK's trust store file, replaced by the host's at each run
# unzip                    Strimzi's Makefiles and ours unpack its distributions
packages=(openjdk-21-jdk-headless maven ca-certificates-java unzip)

hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
tree="$out_dir/buildroot-$hash"

build() {
  mkdir -p "$out_dir"
  exec 9>"$out_dir/.buildroot.lock"
  flock 9
  [ -f "$tree/.done" ] && return
  [ "$(id -u)" = 0 ] || { echo "buildroot: must run as root (mmdebstrap's root mode)" >&2; exit 1; }
  need_mmdebstrap
  rm -rf "$out_dir"/buildroot-*
  echo "buildroot: building $tree (Debian trixie, ${packages[*]})" >&2
  mmdebstrap_private ${MMDEBSTRAP_FLAGS:---quiet} --mode=root --variant=minbase --format=directory \
    --include="$(IFS=,; echo "${packages[*]}")" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/usr/share/man/*' \
    trixie "$tree"
  touch "$tree/.done"
}

run() {
  local dir="$1"
  shift
  [ -d "$dir" ] || { echo "buildroot: run: $dir is not a directory" >&2; exit 1; }
  dir="$(cd "$dir" && pwd)"
  mkdir -p "$HOME/.m2" "$tree/root/.m2" "$tree$dir"
  cp /etc/ssl/certs/java/cacerts "$tree/etc/ssl/certs/java/cacerts"
  cp /etc/ssl/certs/ca-certificates.crt "$tree/etc/ssl/certs/ca-certificates.crt"
  cp -L /etc/resolv.conf "$tree/etc/resolv.conf"
  cp /etc/hosts "$tree/etc/hosts"
  # The arguments reach the inner shell as its own, quoted as given.
  unshare --mount --propagation private -- /bin/sh -ec '
    tree="$1" dir="$2"; shift 2
    mount -t proc proc "$tree/proc"
    mount --bind "$dir" "$tree$dir"
    mount --bind "$HOME/.m2" "$tree/root/.m2"
    exec chroot "$tree" /usr/bin/env HOME=/root PATH=/usr/local/bin:/usr/bin:/bin \
      JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64 /bin/sh -ec "cd \"\$0\" && exec \"\$@\"" "$dir" "$@"
  ' sh "$tree" "$dir" "$@"
}

build
case "${1:-}" in
  "") echo "$tree" ;;
  run) shift; [ $# -ge 2 ] || { echo "usage: $0 run DIR CMD..." >&2; exit 1; }; run "$@" ;;
  *) echo "usage: $0 [run DIR CMD...]" >&2; exit 1 ;;
esac
