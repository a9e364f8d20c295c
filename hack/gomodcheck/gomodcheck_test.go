package gomodcheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Twice a step of make test resolved "newest" on the day CI ran (a tidy
// that looked up a missing import; a `tidy -e` that found a module the
// proxy had refused before), and a submission that was green the day
// before failed. hack/gomod-check.sh runs with module look-ups disabled;
// these cases show that what would have looked something up fails loudly,
// names the package, and leaves go.mod as it was, while what is pinned
// passes. They need go-cmp v0.7.0 in the module cache: streambench requires
// it, and make test downloads every pinned module first (make modules).

const cmp = "github.com/google/go-cmp v0.7.0"

func TestTidyPassesWhenEverythingIsPinned(t *testing.T) {
	dir := module(t, "example.com/pinned", cmp, map[string]string{
		"main.go": "package main\n\nimport \"github.com/google/go-cmp/cmp\"\n\nfunc main() { _ = cmp.Equal(1, 1) }\n",
	})
	out, err := check(t, "tidy", dir)
	if err != nil {
		t.Fatalf("gomod-check tidy on a tidy module: %v\n%s", err, out)
	}
}

func TestTidyRefusesToLookUpAMissingImport(t *testing.T) {
	dir := module(t, "example.com/missing", cmp, map[string]string{
		"main.go": "package main\n\nimport (\n\t\"github.com/google/go-cmp/cmp\"\n\t\"golang.org/x/text/language\"\n)\n\nfunc main() { _ = cmp.Equal(language.English, language.English) }\n",
	})
	out, err := check(t, "tidy", dir)
	if err == nil {
		t.Fatalf("gomod-check tidy resolved an import go.mod does not pin:\n%s", out)
	}
	for _, want := range []string{"golang.org/x/text/language", "lookup disabled", "pin it on purpose"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
}

// A tool module is checked for what its build compiles: an import behind a
// tag the build leaves out needs nothing pinned (Prometheus' cloud
// service discovery under remove_all_sd), the same import behind a tag the
// build uses fails. Both shapes of hack/tools/ are checked: a tools.go that
// names the programs, and a module that is itself the program (coredns).
func TestBuiltChecksOnlyTheBuildsTags(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"tools.go": {
			"tools.go":         "//go:build tools\n\npackage tools\n\nimport _ \"example.com/tool/cmd/prog\"\n",
			"cmd/prog/main.go": "package main\n\nimport \"github.com/google/go-cmp/cmp\"\n\nfunc main() { _ = cmp.Equal(1, 1) }\n",
			"cmd/prog/sd.go":   "//go:build cloudsd\n\npackage main\n\nimport _ \"golang.org/x/text/language\"\n",
		},
		"main package": {
			"main.go": "package main\n\nimport \"github.com/google/go-cmp/cmp\"\n\nfunc main() { _ = cmp.Equal(1, 1) }\n",
			"sd.go":   "//go:build cloudsd\n\npackage main\n\nimport _ \"golang.org/x/text/language\"\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := module(t, "example.com/tool", cmp, files)
			if out, err := check(t, "built", dir, ""); err != nil {
				t.Errorf("gomod-check built without the left-out tag: %v\n%s", err, out)
			}
			out, err := check(t, "built", dir, "cloudsd")
			if err == nil {
				t.Fatalf("gomod-check built passed although the build's tags import what go.mod does not pin:\n%s", out)
			}
			if !strings.Contains(out, "golang.org/x/text/language") || !strings.Contains(out, "tags: cloudsd") {
				t.Errorf("the failure does not name the package and the tags:\n%s", out)
			}
		})
	}
}

// module writes a module requiring req (with its go.sum lines from
// streambench's go.sum) and files into a new folder; at the test's end,
// its go.mod and go.sum must be as written.
func module(t *testing.T, path, req string, files map[string]string) string {
	t.Helper()
	return moduleFrom(t, path, req, "go.sum", files)
}

// moduleFrom is module with req's go.sum lines from the go.sum at sumPath
// (from the repository's root).
func moduleFrom(t *testing.T, path, req, sumPath string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root(t), sumPath))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, req+" ") || strings.HasPrefix(l, req+"/go.mod ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%s has %d lines for %s, want 2", sumPath, len(lines), req)
	}
	files["go.mod"] = "module " + path + "\n\ngo 1.26.0\n\nrequire " + req + "\n"
	files["go.sum"] = strings.Join(lines, "\n") + "\n"
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, name := range []string{"go.mod", "go.sum"} {
			if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != files[name] {
				t.Errorf("%s changed; the check must change nothing it does not resolve:\n%s", name, got)
			}
		}
	})
	return dir
}

// check runs hack/gomod-check.sh with the test's environment, less any
// GOPROXY or GOFLAGS of the caller (the script sets its own).
func check(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root(t), "hack", "gomod-check.sh"), args...)
	cmd.Env = append(os.Environ(), "GOPROXY=https://proxy.golang.org,direct")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Two builds that compile the same module must require the same version of
// it, or Go's build cache compiles it (and everything above it) twice. Here
// two modules use golang.org/x/text/language: both at streambench's version
// pass; one at the etcd tool module's newer version fails, naming the
// module and the fix. (Both versions are in the module cache: make modules
// downloads every pinned tool module's.)
func TestSharedNamesAModuleAtTwoVersions(t *testing.T) {
	const text = "golang.org/x/text"
	main := "package main\n\nimport \"golang.org/x/text/language\"\n\nfunc main() { _ = language.English }\n"
	ours := requiredIn(t, "go.mod", text)
	etcds := requiredIn(t, "hack/tools/etcd/go.mod", text)
	if ours == etcds {
		t.Fatalf("streambench and hack/tools/etcd both require %s %s; the test needs two versions in the module cache", text, ours)
	}
	a := moduleFrom(t, "example.com/a", text+" "+ours, "go.sum", map[string]string{"main.go": main})
	b := moduleFrom(t, "example.com/b", text+" "+ours, "go.sum", map[string]string{"main.go": main})
	if out, err := check(t, "shared", a, b); err != nil {
		t.Fatalf("gomod-check shared with %s at one version in both: %v\n%s", text, err, out)
	}
	c := moduleFrom(t, "example.com/c", text+" "+etcds, "hack/tools/etcd/go.sum", map[string]string{"main.go": main})
	out, err := check(t, "shared", c, a)
	if err == nil {
		t.Fatalf("gomod-check shared passed although one build requires %s %s and the other %s:\n%s", text, etcds, ours, out)
	}
	for _, want := range []string{text + ": " + etcds + " here, " + ours, "raise the lower one"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
}

// requiredIn is the version of mod that the go.mod at path (from the
// repository's root) requires.
func requiredIn(t *testing.T, path, mod string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), path))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == mod {
			return f[1]
		}
	}
	t.Fatalf("%s requires no %s", path, mod)
	return ""
}
