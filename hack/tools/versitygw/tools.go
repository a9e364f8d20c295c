//go:build tools

// versitygw, Versity's S3 gateway, for the archive tests (internal/archive,
// internal/archive/archivetest): a real S3-compatible server over a local
// directory (its posix backend), built from source. This module pins its
// dependency graph (go.mod and go.sum are committed, the build runs with
// -mod=readonly); update it with hack/tools/update.sh.
package tools

import _ "github.com/versity/versitygw/cmd/versitygw"
