//go:build tools

// etcd for the envtest suite and the local cluster, built from source. This
// module pins its dependency graph (go.mod and go.sum are committed, the build
// runs with -mod=readonly); update it with hack/tools/update.sh.
package tools

import _ "go.etcd.io/etcd/server/v3"
