package version

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/streambench/streambench-operator", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "abc123"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}
	for _, tc := range []struct {
		name             string
		ldVersion, ldSHA string
		bi               *debug.BuildInfo
		want             Info
	}{
		{"ldflags win over the build info", "v0.1.0", "def456", vcs, Info{Version: "v0.1.0", Commit: "def456"}},
		{"a build in a checkout: the vcs revision", "", "", vcs, Info{Version: "unknown", Commit: "abc123", Modified: true}},
		{"go install of a tagged module: its version", "", "", installed, Info{Version: "v0.2.0", Commit: "unknown"}},
		{"ldflags version, vcs commit", "v0.1.0", "", vcs, Info{Version: "v0.1.0", Commit: "abc123", Modified: true}},
		{"nothing recorded says so", "", "", nil, Info{Version: "unknown", Commit: "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve(tc.ldVersion, tc.ldSHA, tc.bi); got != tc.want {
				t.Fatalf("resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestImage(t *testing.T) {
	for v, want := range map[string]string{
		"v0.1.0":      "ghcr.io/streambench/streambench:0.1.0",
		"v0.1.0-dev":  "ghcr.io/streambench/streambench:0.1.0",
		"1.2.3":       "ghcr.io/streambench/streambench:1.2.3",
		"unknown":     "",
		"v0.1.0-rc.1": "",
	} {
		got, ok := Info{Version: v}.Image()
		if got != want || ok != (want != "") {
			t.Errorf("Image of %q = %q, %v; want %q", v, got, ok, want)
		}
	}
}

func TestString(t *testing.T) {
	if got, want := (Info{Version: "v0.1.0", Commit: "abc"}).String(), "streambench v0.1.0 (commit abc)"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}

// TestLdflags builds a program with the -X flags the Makefile and .ko.yaml
// use: a renamed variable or package would otherwise leave every release
// binary saying "unknown" without any test failing.
func TestLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	ldflags := "-X " + Package + ".version=v9.8.7 -X " + Package + ".commit=0123abc"
	out, err := exec.Command("go", "run", "-ldflags", ldflags, "./testdata/printversion").Output()
	if err != nil {
		t.Fatalf("go run: %v", err)
	}
	var got Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if want := (Info{Version: "v9.8.7", Commit: "0123abc"}); got != want {
		t.Fatalf("built with %s: %+v, want %+v", ldflags, got, want)
	}
	// The Makefile and .ko.yaml name the same variables.
	for f, wants := range map[string][]string{
		"../../Makefile": {"VERSION_PKG := " + Package + "\n", "-X $(VERSION_PKG).version=$(VERSION)", "-X $(VERSION_PKG).commit=$(COMMIT)"},
		"../../.ko.yaml": {"-X " + Package + ".version={{.Env.VERSION}}", "-X " + Package + ".commit={{.Env.COMMIT}}"},
	} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s does not have %q: binaries it builds would not say their version", f, w)
			}
		}
	}
}
