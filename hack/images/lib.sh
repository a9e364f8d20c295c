# Sourced by the image scripts of hack/images (strimzi.sh, pulsar.sh); they
# set root (the repository) and here (hack/images) first.

# The Maven dependency plugin pinned (not what the super POM picks today).
MVN_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1

# copy_jars POM DIR LOG: the runtime jars POM lists, with what they need,
# from Maven Central into DIR (Maven's output in LOG); false on failure,
# after printing the log's tail.
copy_jars() {
  mvn -B -q -f "$1" "$MVN_DEPENDENCY_PLUGIN:copy-dependencies" -DincludeScope=runtime \
    -DoutputDirectory="$2" > "$3" 2>&1 || { tail -n 20 "$3" >&2; return 1; }
}

# fsimage ARGS...: hack/images/fsimage, built when missing or older than
# its sources.
fsimage() {
  local tool="$root/bin/images/fsimage"
  if [ ! -x "$tool" ] || [ -n "$(find "$here/fsimage" "$root/hack/imagetar" -newer "$tool" -name '*.go' 2>/dev/null)" ]; then
    (cd "$root" && go build -o "$tool" ./hack/images/fsimage)
  fi
  "$tool" "$@"
}

# need_mmdebstrap: installs mmdebstrap with apt-get when missing (rootfs.sh
# and buildroot.sh build their root file systems with it).
need_mmdebstrap() {
  command -v mmdebstrap >/dev/null && return
  echo "images: installing mmdebstrap with apt-get" >&2
  DEBIAN_FRONTEND=noninteractive "$root/hack/apt-get.sh" install -y -qq --no-install-recommends mmdebstrap >/dev/null \
    || { "$root/hack/apt-get.sh" update -qq && DEBIAN_FRONTEND=noninteractive "$root/hack/apt-get.sh" install -y -qq --no-install-recommends mmdebstrap >/dev/null; } \
    || { echo "images: apt-get could not install mmdebstrap" >&2; return 1; }
}

# mmdebstrap_private ARGS...: mmdebstrap in a mount namespace of its own. In
# root mode mmdebstrap mounts /proc, /sys and /dev into the tree it builds,
# in the namespace it runs in: under bin/images those mounts made a
# concurrent `go fmt ./...` (CI's tests lane) fail on
# "open bin/images/buildroot-.../proc/1/fdinfo: permission denied", and a
# build killed halfway left them mounted for a later rm -rf to walk into.
# Mounts in a private namespace vanish with its last process.
mmdebstrap_private() {
  unshare --mount --propagation private -- mmdebstrap "$@"
}
