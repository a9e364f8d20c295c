# Shared by hack/bench-omb and hack/bench-worker (sourced, not run). The
# caller sets WORK (a scratch directory it removes on exit) and, for a
# baseline, BASELINE (a git revision); it calls bench_cleanup from its EXIT
# trap.

clk=$(getconf CLK_TCK)
cpu_of() { # utime+stime of a live pid in seconds
  awk -v t="$clk" '{ split($0, a, ") "); split(a[2], f, " "); printf "%.3f", (f[12] + f[13]) / t }' "/proc/$1/stat"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# build_streambench: $WORK/streambench from this tree and, with BASELINE,
# $WORK/streambench-baseline from that revision (a temporary worktree).
build_streambench() {
  echo "building streambench..." >&2
  go build -o "$WORK/streambench" ./cmd/streambench
  [[ -n "$BASELINE" ]] || return 0
  echo "building streambench at $BASELINE (baseline)..." >&2
  git worktree add --detach "$WORK/baseline-src" "$BASELINE" >/dev/null 2>&1 ||
    { echo "--baseline $BASELINE: not a revision of this repository" >&2; exit 2; }
  (cd "$WORK/baseline-src" && go build -o "$WORK/streambench-baseline" ./cmd/streambench)
  git worktree remove --force "$WORK/baseline-src"
}

# brokers_up system: brokers started afresh in an empty directory, at
# durability level 2; sets BOOT, SERVICE_URL and ADMIN_URL. Every run gets
# its own: no tool meets the previous run's topics, page cache or disk
# usage (one Pulsar standalone used for three runs in a row refused the
# third run's subscriptions with "request timed out"; a Kafka that had
# taken four maximum-rate runs filled the disk and lost a broker).
# It returns 1 (saying why on stderr) when the brokers do not start, so a
# caller can record the failure and go on with the next run.
BROKERS_UP=""
brokers_up() {
  rm -rf "${WORK:?}/$1"
  # Set before the start: a start that fails halfway may leave JVMs behind,
  # and brokers_down stops whatever the directory recorded.
  BROKERS_UP=$1
  local start_out
  start_out=$(hack/local-brokers.sh "$1" start --dir "$WORK/$1" --level 2 2>"$WORK/brokers-$1.log") ||
    { echo "starting $1 failed:" >&2; tail -20 "$WORK/brokers-$1.log" >&2; return 1; }
  BOOT=$(sed -n 's/^bootstrap=//p' <<<"$start_out")
  SERVICE_URL=$(sed -n 's/^serviceURL=//p' <<<"$start_out")
  ADMIN_URL=$(sed -n 's/^adminURL=//p' <<<"$start_out")
}
# brokers_down [keep-dir]: stops the brokers and removes their directory;
# with keep-dir, their logs (the JVMs' own, GC logs left out; not the data
# directories, where bookies' entry logs and Kafka's segments are *.log
# too) and the start's log are copied there first, to read why a run failed.
brokers_down() {
  [[ -n "$BROKERS_UP" ]] || return 0
  hack/local-brokers.sh "$BROKERS_UP" stop --dir "$WORK/$BROKERS_UP" >/dev/null 2>&1 || true
  if [[ -n "${1:-}" ]]; then
    mkdir -p "$1"
    cp "$WORK/brokers-$BROKERS_UP.log" "$1/" 2>/dev/null || true
    (cd "$WORK/$BROKERS_UP" 2>/dev/null && find . -type d -name data -prune -o -name '*.log' ! -name 'gc*.log' -exec cp --parents {} "$1/" \;) || true
  fi
  rm -rf "${WORK:?}/$BROKERS_UP"
  BROKERS_UP=""
}

bench_cleanup() {
  brokers_down
  [[ -d "$WORK/baseline-src" ]] && git worktree remove --force "$WORK/baseline-src" 2>/dev/null
  return 0
}
