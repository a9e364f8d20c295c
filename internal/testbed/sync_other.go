//go:build !linux

package testbed

func sync() {}
