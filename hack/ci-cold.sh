#!/usr/bin/env bash
# The cold-start check: runs .ci/run as a brand-new machine would, on a fresh
# clone of the committed HEAD with empty Go module, Go build and broker-jar
# caches, a temporary HOME, GOPATH and GOCACHE and no bin/, and prints how
# long each stage took.
#
#   make ci-cold            (KEEP=1 keeps the temporary folder for a look)
#   CI_LOAD=1 make ci-cold  (beside a CPU-bound load of 1: one process that
#                           hashes /dev/zero the whole time, as a shared CI
#                           machine's neighbour would be)
#
# What it cannot empty: packages installed system-wide with apt-get
# (containerd, runc, the CNI plugins, chromium); on a new machine the scripts
# install them on first use, which adds a minute or two.
# Needs what .ci/run needs: root for the local cluster, Go, Java 17 and Maven.
set -euo pipefail
src="$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)"

if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
  echo "ci-cold: note: uncommitted changes are not tested; ci-cold clones HEAD ($(git -C "$src" rev-parse --short HEAD))" >&2
fi
if [ -d /run/streambench-local-cluster ] || ip link show cni0 >/dev/null 2>&1; then
  echo "ci-cold: a local cluster seems to be up (cni0 or /run/streambench-local-cluster exists);" >&2
  echo "  stop it first with: make local-cluster-down" >&2
  exit 1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/streambench-ci-cold.XXXXXX")"
cleanup() {
  if [ "${KEEP:-}" = 1 ]; then echo "ci-cold: kept $tmp" >&2; return; fi
  chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
  rm -rf "$tmp"
}
trap cleanup EXIT

# The clone has nothing beside it, as anywhere but our machines: what
# cannot be fetched from upstream here comes from the mirror the variable
# names (internal/upstream), not from a ../shared that .ci/run would find.
git clone -q "$src" "$tmp/repo"
mirror="${STREAMBENCH_MIRROR:-}"
if [ -z "$mirror" ] && [ -d "$src/../shared/testdata" ]; then mirror="$(cd "$src/../shared/testdata" && pwd)"; fi

# A new machine's HOME has the machine's own settings (go env, git identity)
# and no caches.
mkdir -p "$tmp/home/.config"
[ -f "$HOME/.config/go/env" ] && mkdir -p "$tmp/home/.config/go" && cp "$HOME/.config/go/env" "$tmp/home/.config/go/env"
[ -f "$HOME/.gitconfig" ] && cp "$HOME/.gitconfig" "$tmp/home/.gitconfig"

# Nothing installed by hand in the old GOPATH/bin may be found.
path="$(echo "$PATH" | tr ':' '\n' | grep -vxF "$(go env GOPATH)/bin" | paste -sd:)"

loadpids=()
for _ in $(seq 1 "${CI_LOAD:-0}"); do
  sha256sum /dev/zero >/dev/null &
  loadpids+=($!)
done
stop_load() { [ ${#loadpids[@]} -eq 0 ] || kill "${loadpids[@]}" 2>/dev/null || true; }
trap 'stop_load; cleanup' EXIT
[ ${#loadpids[@]} -eq 0 ] || echo "ci-cold: a CPU-bound load of ${#loadpids[@]} beside it (sha256sum /dev/zero, pids ${loadpids[*]})" >&2

echo "ci-cold: $tmp/repo at $(git -C "$tmp/repo" rev-parse --short HEAD); load: $(uptime | sed 's/.*load average: //')" >&2
start=$(date +%s)
rc=0
(
  cd "$tmp/repo"
  env -u GOPATH -u GOCACHE -u GOMODCACHE -u XDG_CACHE_HOME -u STREAMBENCH_CACHE -u HELM_CACHE_HOME \
    -u KUBEBUILDER_ASSETS -u KUBECONFIG \
    HOME="$tmp/home" GOPATH="$tmp/gopath" GOCACHE="$tmp/gocache" PATH="$path" CI=true \
    STREAMBENCH_MIRROR="$mirror" \
    STAGE_TIMES="$tmp/stage-times" \
    bash .ci/run </dev/null
) || rc=$?
total=$(( $(date +%s) - start ))

echo
echo "ci-cold: stage times (cold caches, $(nproc) cores, CPU load beside it: ${CI_LOAD:-0})"
"$src/hack/stage-table.sh" "$tmp/stage-times" "$total" "$src/.ci/budgets" 2>/dev/null || true
printf '%-28s %5d s  (%dm%02ds) %s\n' "total .ci/run" "$total" $((total / 60)) $((total % 60)) "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")"
echo "load after: $(uptime | sed 's/.*load average: //')"
exit "$rc"
