package localbrokers

import "syscall"

// sysProcAttr puts the JVM in its own process group (so signals reach only
// it) and, unless detached, asks the kernel to SIGKILL it when the Go process
// dies. Pdeathsig really fires when the forking OS thread exits; the Go
// runtime only ends threads whose goroutine exits while locked to them
// (LockOSThread), which this package never does, so in practice that is the
// death of the process.
func sysProcAttr(detached bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !detached {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}
