// Package crd embeds the CustomResourceDefinitions controller-gen writes
// into bases/ (make manifests), so the binary carries the very schema a
// cluster is given: local mode admits its objects with it
// (internal/admission) instead of a hand-written copy of its rules.
package crd

import "embed"

// Bases holds bases/*.yaml, one CRD per file.
//
//go:embed bases/*.yaml
var Bases embed.FS
