//go:build tools

// Prometheus for the monitoring test (a real server scraping real local
// brokers and a worker), built from source. This module pins its
// dependency graph (go.mod and go.sum are committed, the build runs with
// -mod=readonly); update it with hack/tools/update.sh.
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
