package localcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// InstallPackages installs with apt-get what the nodes run and is missing:
// containerd, runc and the CNI plugins (Debian's). hack/apt-get.sh takes
// the machine's apt lock, so CI's lanes can call this at once.
func InstallPackages(root string) error {
	var missing []string
	if _, err := exec.LookPath("containerd"); err != nil {
		missing = append(missing, "containerd")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		missing = append(missing, "runc")
	}
	if !exists("/usr/lib/cni/bridge") {
		missing = append(missing, "containernetworking-plugins")
	}
	if len(missing) == 0 {
		return nil
	}
	Logf("installing %s with apt-get", strings.Join(missing, " "))
	aptGet := filepath.Join(root, "hack", "apt-get.sh")
	install := func() error {
		cmd := exec.Command(aptGet, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stderr = os.Stderr
		return cmd.Run()
	}
	if install() == nil {
		return nil
	}
	// The package lists may be missing or stale on a new machine.
	if err := exec.Command(aptGet, "update", "-qq").Run(); err == nil && install() == nil {
		return nil
	}
	return fmt.Errorf("apt-get could not install %s", strings.Join(missing, " "))
}
