#!/usr/bin/env bash
# A real Kubernetes cluster of one or more nodes, built from source, on this
# machine without Docker (kind needs a Docker engine and the kindest/node
# image). The work is Go: internal/localcluster (the nodes as typed values,
# up as ordered actions that down undoes in reverse) and its command
# hack/local-cluster/localcluster, built here on each call (the Go build
# cache makes that a second when nothing changed).
#
# Usage: hack/local-cluster/local-cluster.sh COMMAND
#   up [--nodes N]  build the binaries once, start etcd, kube-apiserver, and
#                   per node a containerd, a kubelet and a bridge cni<i>
#                   (10.244.<i>.1/24, the node IP), kube-controller-manager,
#                   kube-scheduler, CoreDNS and kube-proxy; wait until every
#                   node is Ready. N defaults to LOCAL_CLUSTER_NODES or 1.
#   down            stop everything up started, on every node; fail if a
#                   bridge, iptables chain, shim or mount is left
#   status          each part and whether it runs, each node's state
#   packages        install only what up installs with apt-get (containerd,
#                   runc, the CNI plugins)
#   load-image      build the streambench image (ko, no Docker), import it
#                   into every node
#   load-strimzi    build Strimzi 1.2.0's images from source
#                   (hack/images/strimzi.sh), import them
#   load-pulsar     build the Pulsar chart's image (hack/images/pulsar.sh),
#                   import it
#   check-services  prove ClusterIP Services and DNS work for pods
#   check-nodes     prove the nodes are nodes: one pod per node under a
#                   required anti-affinity (one more stays Pending), a local
#                   volume bound on each node, pod to pod across nodes,
#                   Services, DNS, exec and logs from every node, a stopped
#                   kubelet leaves the other nodes' pods alone
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tool="$root/bin/localcluster"
(cd "$root" && go build -o "$tool" ./hack/local-cluster/localcluster)
cd "$root"
exec "$tool" "$@"
