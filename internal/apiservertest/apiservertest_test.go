package apiservertest

import (
	"os"
	"path/filepath"
	"testing"
)

// The root is found from a package's directory, as every test runs there.
func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "envtest-binaries.sh")); err != nil {
		t.Errorf("root %s has no hack/envtest-binaries.sh: %v", root, err)
	}
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(crds, "*.yaml")); len(m) == 0 {
		t.Errorf("no CRDs in %s", crds)
	}
}
