package testbed

import "syscall"

func sync() { syscall.Sync() }
