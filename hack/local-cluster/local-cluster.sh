#!/usr/bin/env bash
# A real single-node Kubernetes cluster from source, for the e2e suite on
# machines without Docker (kind needs a Docker engine and the kindest/node
# image). Usage: hack/local-cluster/local-cluster.sh up|down|status|packages|load-image|load-strimzi|load-pulsar|check-services
#
#   up          build the binaries once (bin/k8s/<version>/), write every
#               config under the state dir, start etcd, kube-apiserver,
#               containerd, kube-controller-manager, kube-scheduler, CoreDNS,
#               the kubelet and kube-proxy, and wait until the node is Ready
#               and kube-proxy has written the Service rules
#   down        stop every process by its own pid, tear down the pods' network
#               and containerd state, remove every iptables chain kube-proxy
#               and the kubelet added, remove the state dir's cluster data
#   status      print each part and whether its pid is alive
#   packages    install only what up installs with apt-get (containerd,
#               runc, the CNI plugins), so CI can fetch them while it
#               builds the binaries
#   load-image  build the streambench image (static binary, no Docker) and
#               import it into the cluster's containerd
#   load-strimzi
#               build Strimzi 1.2.0 from source and its operator and Kafka
#               images (hack/images/strimzi.sh) and import them
#   load-pulsar build the Pulsar image the Apache Pulsar chart runs
#               (hack/images/pulsar.sh) and import it
#   check-services
#               prove ClusterIP Services work: a pod serving TCP behind a
#               ClusterIP Service, dialled by IP and by DNS name from another
#               pod and from itself (hairpin); cleans up after itself
#
# Networking, all inside this machine: a CNI bridge cni0 with gateway
# 10.244.0.1 (pods 10.244.0.0/24) whose address is also the node IP, so pods
# reach processes on the host (brokers, CoreDNS) there. kube-apiserver listens
# on the node IP, port 443, which is the `kubernetes` Service's endpoint.
# kube-proxy (iptables mode) DNATs every ClusterIP (10.96.0.0/16), the
# `kubernetes` Service's 10.96.0.1:443 too, to its endpoints; br_netfilter
# (bridge-nf-call-iptables=1) makes the bridge pass pod-to-pod replies through
# conntrack so the DNAT is undone, and kube-proxy masquerades a pod that
# reaches itself through its own Service (hairpin). CoreDNS runs on the host
# at 10.244.0.1:53 and is the pods' DNS.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
COREDNS_VERSION="${COREDNS_VERSION:-1.14.6}"
E2E_IMG="${E2E_IMG:-docker.io/streambench/streambench:e2e}"
PAUSE_IMG="docker.io/streambench/pause:1.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/hack/local-cluster"
bin="${LOCAL_CLUSTER_BIN_DIR:-$root/bin/k8s/$K8S_VERSION}"
state="${LOCAL_CLUSTER_DIR:-$root/bin/local-cluster}"
# Unix sockets have a 108-byte path limit, so they live under /run.
run_dir="/run/streambench-local-cluster"

NODE_NAME="streambench-local"
NODE_IP="10.244.0.1"
POD_CIDR="10.244.0.0/24"
SERVICE_CIDR="10.96.0.0/16"
# The `kubernetes` Service's ClusterIP: in the serving certificate, and what
# an older version of this script put on lo (down removes it).
API_IP="10.96.0.1"
API_PORT=443
PROXY_HEALTHZ="127.0.0.1:10256"
PROXY_METRICS="127.0.0.1:10249"
ETCD_PORT=12379
ETCD_PEER_PORT=12380
BRIDGE="cni0"
CNI_NET="streambench-local"
READY_TIMEOUT="${READY_TIMEOUT:-180}"

containerd_sock="$run_dir/containerd.sock"
kubeconfig="$state/kubeconfig"
pki="$state/pki"
logs="$state/logs"
pids="$state/pids"
cni_conf="$state/cni/net.d"
cni_ipam="$state/cni/ipam"

# Start order; down stops them in reverse.
parts=(etcd kube-apiserver containerd kube-controller-manager kube-scheduler coredns kubelet kube-proxy)

log() { echo "local-cluster: $*" >&2; }
die() { echo "local-cluster: $*" >&2; exit 1; }

need_root() {
  [ "$(id -u)" = 0 ] || die "must run as root (it starts containerd and the kubelet and creates the bridge $BRIDGE)"
}

pid_of() { [ -f "$pids/$1.pid" ] && cat "$pids/$1.pid" || true; }

alive() {
  local pid; pid="$(pid_of "$1")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}

tail_log() { echo "--- last lines of $logs/$1.log:" >&2; tail -n "${2:-25}" "$logs/$1.log" >&2 || true; }

fail_part() {
  local part="$1"; shift
  echo "local-cluster: $part: $*" >&2
  tail_log "$part"
  echo "local-cluster: stop what started with: $0 down" >&2
  exit 1
}

# start <part> <binary> <args...>: own session, own log and pid file.
start() {
  local part="$1"; shift
  if alive "$part"; then log "$part already running (pid $(pid_of "$part"))"; return; fi
  setsid "$@" >"$logs/$part.log" 2>&1 < /dev/null &
  echo $! > "$pids/$part.pid"
  log "$part started (pid $!, log ${logs#$root/}/$part.log)"
}

# wait_for <part> <seconds> <command...>: until the command succeeds, the
# part's process dies, or the time is up.
wait_for() {
  local part="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    alive "$part" || fail_part "$part" "exited during start"
    [ $SECONDS -lt $deadline ] || fail_part "$part" "not ready after ${secs}s"
    sleep 1
  done
}

stop_pid() {
  local name="$1" pid="$2" grace="${3:-20}"
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < grace * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || { log "$name stopped (pid $pid)"; return 0; }
    sleep 0.2
  done
  log "$name did not stop within ${grace}s; killing pid $pid"
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.5
}

stop_part() {
  local pid; pid="$(pid_of "$1")"
  [ -n "$pid" ] && stop_pid "$1" "$pid" "${2:-20}"
  rm -f "$pids/$1.pid"
}

kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }
ctr() { command ctr --address "$containerd_sock" "$@"; }

install_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  [ ${#missing[@]} -eq 0 ] && return
  log "installing ${missing[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive "$root/hack/apt-get.sh" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { "$root/hack/apt-get.sh" update -qq && DEBIAN_FRONTEND=noninteractive "$root/hack/apt-get.sh" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } \
    || die "apt-get could not install ${missing[*]}"
}

# --- certificates and credentials (openssl) ---------------------------------

write_pki() {
  mkdir -p "$pki"
  [ -f "$pki/ca.crt" ] && return
  log "writing certificates and keys into ${pki#$root/}"
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=streambench-local-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  cat > "$pki/apiserver.ext" <<EOF
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$API_IP,IP:$NODE_IP,IP:127.0.0.1
EOF
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
  # The service-account token signing pair.
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  # One admin token (group system:masters) for kubectl and every component.
  echo "$(openssl rand -hex 24),streambench-admin,streambench-admin,system:masters" > "$pki/tokens.csv"
  chmod 600 "$pki"/*.key "$pki/tokens.csv"
}

write_configs() {
  mkdir -p "$logs" "$pids" "$cni_conf" "$cni_ipam" "$state/etcd" "$state/containerd" "$state/kubelet" "$run_dir"
  local token; token="$(cut -d, -f1 "$pki/tokens.csv")"
  cat > "$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: streambench-local
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority: $pki/ca.crt
users:
- name: streambench-admin
  user:
    token: $token
contexts:
- name: streambench-local
  context: {cluster: streambench-local, user: streambench-admin}
current-context: streambench-local
EOF
  chmod 600 "$kubeconfig"

  # restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, and without it
  # every sandbox fails in runc with "can't get final child's PID from pipe".
  cat > "$state/containerd/config.toml" <<EOF
version = 2
root = "$state/containerd/root"
state = "$run_dir/containerd-state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$containerd_sock"
[ttrpc]
  address = "$run_dir/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMG"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$cni_conf"
EOF

  # No portmap and no ipMasq: no pod uses a host port and nothing leaves the
  # machine; the only iptables rules are kube-proxy's and the kubelet's.
  cat > "$cni_conf/10-streambench.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$CNI_NET",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "isDefaultGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$cni_ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]]
      }
    }
  ]
}
EOF

  # The pods' DNS: cluster names only; there is no upstream to forward to.
  cat > "$state/Corefile" <<EOF
cluster.local:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local {
        kubeconfig $kubeconfig streambench-local
    }
}
EOF
  echo "nameserver $NODE_IP" > "$state/resolv.conf"

  # cgroup v1 host: the kubelet refuses v1 unless told, and the QoS and
  # node-allocatable cgroups cannot be managed here.
  cat > "$state/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
localStorageCapacityIsolation: false
containerRuntimeEndpoint: unix://$containerd_sock
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $state/resolv.conf
podLogsDir: $state/kubelet/pod-logs
serializeImagePulls: false
# The images were imported, not pulled: garbage collection must never drop
# them, and other work on this disk must not evict the test pods.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
EOF
}

# --- network ----------------------------------------------------------------

# has_addr <dev> <ip/prefix>; reads the whole output first (a grep -q in a
# pipe would make `ip` die of SIGPIPE, which pipefail reports as failure).
has_addr() {
  local out; out="$(ip -o addr show dev "$1" 2>/dev/null)" || return 1
  [[ "$out" == *" inet $2 "* ]]
}

setup_network() {
  # The bridge exists before the kubelet starts: the node IP must be on a
  # host interface, and the CNI bridge plugin reuses a bridge that has its
  # gateway address.
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge || die "network: cannot create bridge $BRIDGE (needs CAP_NET_ADMIN)"
    touch "$state/created-bridge"
  fi
  has_addr "$BRIDGE" "$NODE_IP/24" || ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # 10.96.0.1 is no host address any more (an older version of this script
  # put it on lo for a kube-apiserver listening there): kube-proxy DNATs it to
  # the `kubernetes` Service's endpoint, kube-apiserver on the node IP.
  remove_api_ip
  # A pod's reply to a pod that dialled a ClusterIP on the same bridge is
  # switched by cni0, not routed; only br_netfilter hands bridged packets to
  # iptables, where conntrack undoes kube-proxy's DNAT (without it the client
  # gets its answer from the endpoint's pod IP instead of the ClusterIP, and
  # drops it). down restores the setting if up changed it.
  local nf=/proc/sys/net/bridge/bridge-nf-call-iptables
  [ -e "$nf" ] || modprobe br_netfilter 2>/dev/null || true
  [ -e "$nf" ] || die "network: $nf is missing: kube-proxy needs br_netfilter (modprobe br_netfilter)"
  if [ "$(cat "$nf")" != 1 ]; then
    echo 1 > "$nf" || die "network: cannot set $nf to 1"
    touch "$state/set-bridge-nf-call-iptables"
  fi
}

remove_api_ip() {
  if has_addr lo "$API_IP/32"; then
    ip addr del "$API_IP/32" dev lo && log "removed $API_IP from lo" || true
  fi
  rm -f "$state/created-api-ip"
}

teardown_network() {
  if [ -f "$state/created-bridge" ] || has_addr "$BRIDGE" "$NODE_IP/24"; then
    ip link del "$BRIDGE" 2>/dev/null && log "removed bridge $BRIDGE" || true
  fi
  remove_api_ip
  if [ -f "$state/set-bridge-nf-call-iptables" ]; then
    echo 0 > /proc/sys/net/bridge/bridge-nf-call-iptables && log "bridge-nf-call-iptables back to 0" || true
  fi
  rm -f "$state/created-bridge" "$state/set-bridge-nf-call-iptables"
}

# Every chain kube-proxy and the kubelet add, in iptables and ip6tables; run
# after both have stopped (they would recreate them), and safe when neither
# ever ran. kube-proxy --cleanup removes its own chains (iptables, and ipvs
# and nftables leftovers if any). The kubelet's are KUBE-IPTABLES-HINT
# (mangle), KUBE-FIREWALL (filter, jumped to from INPUT and OUTPUT) and
# KUBE-KUBELET-CANARY (mangle, nat, filter); the kubelet never removes them.
cleanup_iptables() {
  local out
  if [ -x "$bin/kube-proxy" ] && ! out="$("$bin/kube-proxy" --cleanup 2>&1)"; then
    log "kube-proxy --cleanup failed: $(echo "$out" | tail -n 5)"
  fi
  local ipt t c
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    while "$ipt" -w -t filter -D INPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
    while "$ipt" -w -t filter -D OUTPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
    for t in mangle:KUBE-IPTABLES-HINT filter:KUBE-FIREWALL mangle:KUBE-KUBELET-CANARY nat:KUBE-KUBELET-CANARY filter:KUBE-KUBELET-CANARY; do
      c="${t#*:}" t="${t%%:*}"
      "$ipt" -w -t "$t" -F "$c" 2>/dev/null && "$ipt" -w -t "$t" -X "$c" 2>/dev/null || true
    done
  done
  local left
  left="$({ iptables-save 2>/dev/null; ip6tables-save 2>/dev/null; } | grep -c 'KUBE-' || true)"
  [ "$left" = 0 ] || log "iptables: $left lines still name a KUBE- chain (iptables-save | grep KUBE-)"
}

# --- images -----------------------------------------------------------------

# koimage builds a Go command into an OCI image tarball with ko (bin/ko,
# pinned by the Makefile's KO_VERSION), from a base image it serves itself:
# no Docker, no registry.
image_tool() {
  local tool="$state/images/koimage"
  if [ ! -x "$tool" ] || [ -n "$(find "$here/koimage" -newer "$tool" -name '*.go' 2>/dev/null)" ]; then
    (cd "$root" && go build -o "$tool" ./hack/local-cluster/koimage)
  fi
  [ -x "$root/bin/ko" ] || (cd "$root" && make --no-print-directory ko >/dev/null) || die "could not install ko (make ko)"
  echo "$tool"
}

# build_image PACKAGE IMAGE TARBALL: ko run from the repository root, where
# .ko.yaml is; the version and commit are the Makefile's (make version).
build_image() {
  local version commit
  read -r version commit < <(cd "$root" && make --no-print-directory -s version)
  local tool
  tool="$(image_tool)"
  (cd "$root" && "$tool" -ko "$root/bin/ko" -path "$1" -image "$2" -version "$version" -commit "$commit" -out "$3" 2>"$state/images/ko.log") ||
    die "ko could not build $2 (see $state/images/ko.log)"
}

import_image() {
  ctr -n k8s.io images import "$1" >/dev/null || die "containerd: could not import $1"
}

load_pause() {
  mkdir -p "$state/images"
  local tar="$state/images/pause.tar"
  if [ ! -f "$tar" ]; then
    build_image ./hack/local-cluster/pause "$PAUSE_IMG" "$tar"
  fi
  import_image "$tar"
}

load_image() {
  need_root
  alive containerd || die "containerd is not running; start the cluster with: $0 up"
  mkdir -p "$state/images"
  log "building $E2E_IMG with ko (no Docker, no registry)"
  build_image ./cmd/streambench "$E2E_IMG" "$state/images/streambench.tar"
  import_image "$state/images/streambench.tar"
  log "imported $E2E_IMG"
}

# load_strimzi builds Strimzi's cluster operator from source and its
# operator and Kafka images (hack/images/strimzi.sh; cached after the first
# build) and imports them under the names Strimzi's install files use.
load_strimzi() {
  need_root
  alive containerd || die "containerd is not running; start the cluster with: $0 up"
  local dir t
  dir="$("$root/hack/images/strimzi.sh")" || die "hack/images/strimzi.sh could not build Strimzi's images"
  for t in "$dir"/images/*.tar; do import_image "$t"; done
  log "imported Strimzi's images ($(cd "$dir/images" && echo *.tar)); its install files: ${dir#$root/}/dist/install, the same as testdata/upstream/strimzi-1.2.0"
}

# load_pulsar builds the Pulsar image (hack/images/pulsar.sh; cached) and
# imports it under the name the Apache Pulsar chart uses for
# spec.cluster.managed.version 4.0.7.
load_pulsar() {
  need_root
  alive containerd || die "containerd is not running; start the cluster with: $0 up"
  local dir
  dir="$("$root/hack/images/pulsar.sh")" || die "hack/images/pulsar.sh could not build the Pulsar image"
  import_image "$dir/image.tar"
  log "imported the Pulsar image (${dir#$root/}/image.tar)"
}

# --- up / down / status -----------------------------------------------------

# weigh_pods gives the pods, together, the CPU weight a node's kubelet
# gives its kubepods cgroup: 1024 shares per core. With cgroupsPerQOS off
# (a cgroup v1 host) containerd puts every container under /k8s.io, a group
# of the default 1024 shares: all pods together weighed as one busy thread
# of the host, against every thread of the CI's lanes, the e2e suite's
# host-side brokers and a shared machine's neighbour. Within the group the
# containers keep the shares of their CPU requests, as on a node.
weigh_pods() {
  local g=/sys/fs/cgroup/cpu/k8s.io shares
  shares=$(( $(nproc) * 1024 ))
  [ -d /sys/fs/cgroup/cpu ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ] || return 0
  if mkdir -p "$g" 2>/dev/null && echo "$shares" >"$g/cpu.shares" 2>/dev/null; then
    log "pods' CPU weight: $shares shares ($g), as a node's kubepods"
  else
    log "could not set $g/cpu.shares: the pods weigh as one host thread when the machine is busy"
  fi
}

up() {
  need_root
  local t0=$SECONDS
  install_packages
  log "binaries: building into ${bin#$root/} if missing"
  K8S_VERSION="$K8S_VERSION" ETCD_VERSION="$ETCD_VERSION" COREDNS_VERSION="$COREDNS_VERSION" \
    LOCAL_CLUSTER_BIN_DIR="$bin" "$here/build-binaries.sh" >/dev/null
  log "binaries ready after $((SECONDS - t0))s"
  mkdir -p "$state"
  write_pki
  write_configs
  setup_network

  start etcd "$bin/etcd" --name streambench-local --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "streambench-local=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync
  wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health"

  # The node IP and port are what the `kubernetes` Service's EndpointSlice
  # names (--advertise-address, --secure-port), where kube-proxy sends
  # 10.96.0.1:443, so kube-apiserver must listen there (not on 0.0.0.0: this
  # machine's other interfaces have no business with it).
  start kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$NODE_IP" --secure-port "$API_PORT" --advertise-address "$NODE_IP" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
    --authorization-mode RBAC --allow-privileged=true \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer "https://kubernetes.default.svc.cluster.local" \
    --kubelet-preferred-address-types InternalIP --cert-dir "$state/apiserver"
  wait_for kube-apiserver 120 kubectl get --raw /readyz

  start containerd containerd --config "$state/containerd/config.toml"
  wait_for containerd 60 ctr version
  weigh_pods
  load_pause

  start kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --service-cluster-ip-range "$SERVICE_CIDR" --controllers '*,-nodeipam'
  start kube-scheduler "$bin/kube-scheduler" \
    --kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false
  start coredns "$bin/coredns" -conf "$state/Corefile"
  start kubelet "$bin/kubelet" --config "$state/kubelet/config.yaml" --kubeconfig "$kubeconfig" \
    --node-ip "$NODE_IP" --hostname-override "$NODE_NAME" \
    --root-dir "$state/kubelet/root" --cert-dir "$state/kubelet/pki" --v 1
  # kube-proxy reads its node's IPs from the Node object when it starts (it
  # waits 30s for one, then goes on without), so it starts once the kubelet
  # has registered the node.
  wait_for kubelet 60 kubectl get node "$NODE_NAME"
  # Mode iptables: iptables v1.8.9 (its nf_tables backend) is what this
  # machine has and what the kubelet already uses; nftables mode needs the nft
  # CLI (not installed here) and ipvs the ip_vs kernel module (no
  # /proc/net/ip_vs here). The conntrack flags at 0 and NodePorts on the node
  # IP only (not on localhost, so no route_localnet) keep kube-proxy from
  # changing this machine's sysctls; health and metrics on loopback only.
  # --bind-address is the node IP kube-proxy assumes, not a listen address.
  start kube-proxy "$bin/kube-proxy" --kubeconfig "$kubeconfig" \
    --hostname-override "$NODE_NAME" --bind-address "$NODE_IP" \
    --proxy-mode iptables --cluster-cidr "$POD_CIDR" --nodeport-addresses primary \
    --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
    --healthz-bind-address "$PROXY_HEALTHZ" --metrics-bind-address "$PROXY_METRICS"
  # Healthy, and the first sync written (its healthz answers 200 before that).
  wait_for kube-proxy 60 proxy_synced

  log "waiting up to ${READY_TIMEOUT}s for node $NODE_NAME to be Ready"
  local deadline=$((SECONDS + READY_TIMEOUT)) p
  until [ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
    for p in "${parts[@]}"; do alive "$p" || fail_part "$p" "exited while waiting for the node"; done
    [ $SECONDS -lt $deadline ] || fail_part kubelet "node $NODE_NAME not Ready after ${READY_TIMEOUT}s: $(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}' 2>&1)"
    sleep 1
  done
  wait_for coredns 30 grep -q "CoreDNS-" "$logs/coredns.log"
  log "node $NODE_NAME Ready after $((SECONDS - t0))s; KUBECONFIG=${kubeconfig#$root/}"
}

# kube-proxy's healthz is 200 and its rules for the `kubernetes` Service are in.
proxy_synced() {
  curl -sf "http://$PROXY_HEALTHZ/healthz" >/dev/null || return 1
  local rules
  rules="$(iptables -w -t nat -S KUBE-SERVICES 2>/dev/null)" || return 1
  [[ "$rules" == *"default/kubernetes:https"* ]]
}

# proxy_has_endpoint NS/SERVICE: kube-proxy's rules send it to a pod.
proxy_has_endpoint() {
  local rules
  rules="$(iptables -w -t nat -S 2>/dev/null)" || return 1
  grep -Eq -- "--comment \"$1(:[^ ]*)? -> " <<<"$rules"
}

# Pods first, through the kubelet, so the CRI tears down their network
# (CNI DEL) and volumes; then the processes; then whatever is left.
down() {
  need_root
  [ -d "$state" ] || { log "nothing to stop (no ${state#$root/})"; teardown_network; cleanup_iptables; return; }
  if alive kubelet && alive kube-apiserver; then
    stop_part kube-controller-manager
    stop_part kube-scheduler
    log "deleting every pod through the kubelet"
    kubectl delete pods --all-namespaces --all --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ] && [ -n "$(ctr -n k8s.io tasks ls -q 2>/dev/null | head -1)" ]; do sleep 1; done
  fi
  local p i
  for ((i = ${#parts[@]} - 1; i >= 0; i--)); do
    p="${parts[$i]}"
    [ "$p" = containerd ] && cleanup_containers
    stop_part "$p"
  done
  stop_shims
  cleanup_mounts
  teardown_network
  cleanup_iptables
  # Fresh cluster data every time; certificates, images and binaries stay.
  rm -rf "$state/etcd" "$state/containerd/root" "$state/kubelet/root" "$state/kubelet/pod-logs" "$cni_ipam" "$state/apiserver" "$run_dir" "$state/netns-before"
  log "down"
}

# Containers the kubelet did not stop (e.g. it was already gone).
cleanup_containers() {
  alive containerd || return 0
  local c
  for c in $(ctr -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -n k8s.io tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
  done
  sleep 1
  for c in $(ctr -n k8s.io tasks ls -q 2>/dev/null); do ctr -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true; done
  for c in $(ctr -n k8s.io containers ls -q 2>/dev/null); do ctr -n k8s.io containers delete "$c" >/dev/null 2>&1 || true; done
}

# containerd-shim processes detach from containerd; ours are the ones whose
# command line names this cluster's containerd socket.
stop_shims() {
  local d pid cmd
  for d in /proc/[0-9]*; do
    pid="${d#/proc/}"
    cmd="$(tr '\0' ' ' 2>/dev/null < "$d/cmdline")" || continue
    [[ "$cmd" == *containerd-shim*" -address $containerd_sock "* ]] || continue
    stop_pid containerd-shim "$pid" 5
  done
}

# Mounts under the state and run dirs (overlay root file systems, volume
# tmpfs) and network namespaces of pods this cluster ran.
cleanup_mounts() {
  local m
  for m in $(awk -v s="$state/" -v r="$run_dir/" 'index($2, s) == 1 || index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  if [ -f "$state/netns-before" ]; then
    for m in $(ls /var/run/netns 2>/dev/null | grep '^cni-' || true); do
      grep -qx "$m" "$state/netns-before" && continue
      umount "/var/run/netns/$m" 2>/dev/null || true
      rm -f "/var/run/netns/$m"
    done
  fi
}

# A pod serving TCP behind a ClusterIP Service, dialled by ClusterIP and by
# DNS name from another pod and from the serving pod itself (hairpin), and
# the `kubernetes` Service as in-cluster clients use it; in namespace
# svcprobe, deleted afterwards. The image is hack/local-cluster/svcprobe.
check_services() {
  need_root
  status >/dev/null || die "the cluster is not running; start it with: $0 up"
  local img="docker.io/streambench/svcprobe:local" ns=svcprobe rc=0
  mkdir -p "$state/images"
  build_image ./hack/local-cluster/svcprobe "$img" "$state/images/svcprobe.tar"
  import_image "$state/images/svcprobe.tar"
  kubectl delete namespace "$ns" --ignore-not-found --timeout=120s >/dev/null # left by a failed run
  kubectl create namespace "$ns" >/dev/null
  # The service account controller makes "default" a moment after.
  wait_for kube-controller-manager 30 kubectl -n "$ns" get serviceaccount default
  local pod
  for pod in server client; do
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $pod, namespace: $ns, labels: {app: svcprobe-$pod}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - {name: svcprobe, image: $img, imagePullPolicy: Never, args: [serve, -addr, ":8080"]}
---
EOF
  done | kubectl apply -f - >/dev/null
  kubectl -n "$ns" create service clusterip probe --tcp=80:8080 >/dev/null
  kubectl -n "$ns" set selector service probe app=svcprobe-server >/dev/null
  if kubectl -n "$ns" wait --for=condition=Ready pod --all --timeout=120s >/dev/null; then
    local ip; ip="$(kubectl -n "$ns" get service probe -o jsonpath='{.spec.clusterIP}')"
    # A pod is Ready a moment before kube-proxy's next sync sends its
    # Service there (until then the ClusterIP refuses connections).
    wait_for kube-proxy 30 proxy_has_endpoint "$ns/probe"
    log "service $ns/probe: ClusterIP $ip, endpoint pod server $(kubectl -n "$ns" get pod server -o jsonpath='{.status.podIP}'), client $(kubectl -n "$ns" get pod client -o jsonpath='{.status.podIP}')"
    for pod in client server; do
      echo "from pod $pod:"
      kubectl -n "$ns" exec "$pod" -- /ko-app/svcprobe dial "$ip:80" "probe.$ns.svc.cluster.local:80" || rc=1
      kubectl -n "$ns" exec "$pod" -- /ko-app/svcprobe api env kubernetes.default.svc.cluster.local || rc=1
    done
    echo "server's log (the peers it saw):"
    kubectl -n "$ns" logs server || true
  else
    kubectl -n "$ns" get pods -o wide >&2 || true
    rc=1
  fi
  kubectl delete namespace "$ns" --timeout=120s >/dev/null || true
  [ $rc = 0 ] && log "ClusterIP Services work" || log "ClusterIP Services check FAILED"
  return $rc
}

status() {
  local p rc=0
  for p in "${parts[@]}"; do
    if alive "$p"; then printf '%-24s running (pid %s)\n' "$p" "$(pid_of "$p")"
    else printf '%-24s not running\n' "$p"; rc=1; fi
  done
  if [ $rc = 0 ]; then
    printf '%-24s %s\n' node "$(kubectl get node "$NODE_NAME" --no-headers 2>&1 | awk '{print $2}')"
    printf '%-24s %s\n' kubeconfig "$kubeconfig"
  fi
  return $rc
}

case "${1:-}" in
  up)
    mkdir -p "$state"
    # Pod network namespaces that existed before are never touched by down.
    [ -f "$state/netns-before" ] || { ls /var/run/netns 2>/dev/null | grep '^cni-' > "$state/netns-before" || true; }
    up ;;
  down) down ;;
  status) status ;;
  packages) need_root; install_packages ;;
  load-image) load_image ;;
  load-strimzi) load_strimzi ;;
  load-pulsar) load_pulsar ;;
  check-services) check_services ;;
  *) echo "usage: $0 up|down|status|packages|load-image|load-strimzi|load-pulsar|check-services" >&2; exit 2 ;;
esac
