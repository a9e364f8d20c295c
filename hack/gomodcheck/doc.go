// Package gomodcheck holds the test of hack/gomod-check.sh, the step of
// hack/verify.sh that checks go.mod/go.sum with module look-ups disabled.
package gomodcheck
