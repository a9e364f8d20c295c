#!/usr/bin/env bash
# Checks a Go module's go.mod/go.sum without ever asking the module proxy:
# every version is decided by the committed files, and whatever would need a
# look-up fails loudly instead of resolving "newest" on the day it runs.
# (Twice a step that could resolve "newest" broke CI on a day the proxy
# served something new: a `go mod tidy` that looked up a missing import, and
# a `tidy -e` that found a module version the proxy had refused before.)
#
#   hack/gomod-check.sh tidy  DIR          go.mod/go.sum of DIR are tidy
#   hack/gomod-check.sh built DIR TAGS     what DIR's build compiles (with
#                                          the build's TAGS, of the packages
#                                          its tools.go imports, or of DIR
#                                          itself when it is a main package)
#                                          is pinned by go.mod/go.sum
#   hack/gomod-check.sh shared DIR OTHER   every module both DIR's build
#                                          and OTHER's compile packages of
#                                          is required at the same version
#                                          in both (OTHER "." is
#                                          streambench with its tests), so
#                                          Go's build cache compiles those
#                                          packages once for both
#   hack/gomod-check.sh download DIR       download every module whose
#                                          content DIR's go.sum pins (what
#                                          an offline tidy reads: the
#                                          main module's imports and the
#                                          tests of its dependencies)
#
# tidy rewrites go.mod/go.sum when they are not tidy (hack/verify.sh then
# names the changed files); built changes nothing. Both read the module
# cache only: make modules fills it first (download for streambench's own
# module, go mod download for the tool modules).
#
# Why two checks: tidy walks every build tag of every package, including the
# tags a build leaves out, so it is right for streambench's own module and
# wrong for a pinned tool module such as Prometheus, built with
# -tags remove_all_sd, whose left-out service-discovery plugins import
# modules nothing built needs. For those, `built` checks exactly what
# hack/tools/build.sh compiles, with its -mod=readonly.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# GOPROXY=off: a module look-up is an error ("module lookup disabled by
# GOPROXY=off"); GOTOOLCHAIN=local: no toolchain download either.
offline() { env GOPROXY=off GOTOOLCHAIN=local GOFLAGS="$1 -buildvcs=false" "${@:2}"; }

fail() {
  echo "gomod-check: $1" >&2
  echo "$2" | sed 's/^/  /' >&2
  echo "  a module look-up is needed: pin it on purpose (go get MODULE@VERSION, or hack/tools/update.sh for a tool module), then commit go.mod and go.sum" >&2
  exit 1
}

# programs are the packages hack/tools/build.sh is given for the module in
# the current folder: the programs its tools.go names, or the module itself
# when it is a main package. $1: the build's tags.
programs() {
  offline -mod=readonly go list -e -tags "tools,$1" -f '{{if eq .Name "main"}}.{{else}}{{join .Imports " "}}{{end}}' .
}

shared() { # other folder, this build's tags
  # Go keys a compiled package by the version its module is *required* at
  # (a replace to another version still counts as the required one), and
  # by its dependencies' keys: a module at two versions is compiled twice,
  # with everything above it. On a cold machine client-go, the API types
  # and grpc at CoreDNS's own versions cost ~4 CPU-minutes more.
  local other="$1" tags="$2"
  here="$(pwd)"
  # module path and required version of every package DIR's build compiles
  modules() { # folder, build tags
    local pkgs
    if [ "$1" = "$root" ]; then
      (cd "$1" && offline -mod=readonly go list -e -deps -test -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' ./...)
    else
      pkgs="$(cd "$1" && programs "$2")"
      # shellcheck disable=SC2086 # one word per package
      (cd "$1" && offline -mod=readonly go list -e -deps -tags "$2" -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' $pkgs)
    fi | LC_ALL=C sort -u
  }
  [ "$other" = . ] && other="$root" || other="$(cd "$root" && cd "$other" && pwd)"
  differ="$(LC_ALL=C join <(modules "$here" "$tags") <(modules "$other" "") | awk '$2 != $3 {print $1 ": " $2 " here, " $3 " in " o}' o="$other")"
  if [ -n "$differ" ]; then
    echo "gomod-check: the builds of $dir and $other compile these modules at different versions, so each is compiled twice:" >&2
    echo "$differ" | sed 's/^/  /' >&2
    echo "  raise the lower one (hack/tools/update.sh aligns a tool module with the k8s module, and the k8s module with streambench; a replace does not help)" >&2
    exit 1
  fi
}

mode="${1:?usage: gomod-check.sh tidy DIR | built DIR TAGS | shared DIR OTHER | download DIR}" dir="${2:?module folder}"
cd "$dir"
case "$mode" in
tidy)
  if ! out="$(offline -mod=mod go mod tidy 2>&1)"; then
    fail "go mod tidy in $dir needs what go.mod/go.sum do not pin:" "$out"
  fi
  ;;
built)
  tags="${3-}"
  # What hack/tools/build.sh is given: the programs tools.go names.
  pkgs="$(programs "$tags")"
  # shellcheck disable=SC2086 # one word per package
  if ! out="$(offline -mod=readonly go list -deps -tags "$tags" $pkgs 2>&1 >/dev/null)"; then
    fail "the build of $dir (tags: ${tags:-none}) needs what go.mod/go.sum do not pin:" "$out"
  fi
  ;;
shared)
  shared "${3:?the other module folder}" "${4-}"
  ;;
download)
  # Exact versions from the committed go.sum: nothing here resolves.
  mapfile -t mods < <(awk '$2 !~ /\/go\.mod$/ {print $1 "@" $2}' go.sum | sort -u)
  # The plain download first: it reads the module graph (every go.mod
  # file tidy walks) and fetches what go.mod requires.
  GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local go mod download
  [ ${#mods[@]} -eq 0 ] || GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local go mod download "${mods[@]}"
  ;;
*)
  echo "gomod-check: unknown check $mode (tidy, built, shared or download)" >&2
  exit 2
  ;;
esac
