// Package apiservertest starts a real kube-apiserver and etcd (envtest) for
// the tests that need an API server, the same way in every package: the
// binaries come from KUBEBUILDER_ASSETS or hack/envtest-binaries.sh (built
// from source on first use), and the control plane gets start and stop
// bounds a busy machine meets.
package apiservertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// StartTimeout bounds each control-plane process's start. envtest's default
// (20 s, tried five times) is met by an idle machine, but not by CI's: beside
// the broker tests and a compile, on a machine whose hypervisor steals CPU,
// kube-apiserver took longer than 20 s five times over and a test failed on
// time rather than on behaviour. A process that truly fails to start exits,
// which envtest sees at once; the bound only caps a slow one.
const StartTimeout = 3 * time.Minute

// StopTimeout bounds each control-plane process's stop, for the same reason.
const StopTimeout = time.Minute

// New is an envtest.Environment with the control plane's binaries and the
// CRDs of crdDirs (each must exist).
func New(crdDirs ...string) (*envtest.Environment, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDDirectoryPaths:        crdDirs,
		ErrorIfCRDPathMissing:    len(crdDirs) > 0,
		ControlPlaneStartTimeout: StartTimeout,
		ControlPlaneStopTimeout:  StopTimeout,
	}, nil
}

// Start starts a control plane with streambench's CRDs for the test and
// stops it when the test ends; it returns the admin config.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := StartWith(t, crds)
	return cfg
}

// StartWith starts a control plane with the CRDs of crdDirs for the test
// and stops it when the test ends; it returns the admin config and the
// environment (for AddUser).
func StartWith(t testing.TB, crdDirs ...string) (*rest.Config, *envtest.Environment) {
	t.Helper()
	env, err := New(crdDirs...)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return cfg, env
}

// CRDs is the directory of streambench's own CRDs (config/crd/bases).
func CRDs() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "config", "crd", "bases"), nil
}

// Assets is the directory with kube-apiserver and etcd: KUBEBUILDER_ASSETS,
// or what hack/envtest-binaries.sh builds (from source, on first use only).
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", filepath.Join(root, "hack", "envtest-binaries.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/envtest-binaries.sh: %w (set KUBEBUILDER_ASSETS to a directory with kube-apiserver and etcd instead)", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// moduleRoot is the directory of streambench's go.mod, found upwards from
// the working directory (a test's working directory is its package's).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/streambench/streambench-operator\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no streambench go.mod above the working directory; run the tests from the repository")
		}
		dir = parent
	}
}
