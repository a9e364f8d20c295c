//go:build !linux

package localbrokers

import "syscall"

// sysProcAttr puts the JVM in its own process group. Pdeathsig is Linux only;
// elsewhere a killed test may leave a broker that StopPid must end.
func sysProcAttr(detached bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
