package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// The run command's own decisions; the local run itself is tested end to
// end in internal/localrun through the function this command calls.
func TestRunCommand(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: x}\nspec: {sytem: kafka}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-f", "run.yaml"}, "open run.yaml"},
		{[]string{"-f", "run.yaml", "--archive", "/tmp/a"}, "--archive is for --local runs"},
		{[]string{"--local"}, "-f FILE is required"},
		{[]string{"-f", bad, "--local"}, `spec.sytem: unknown field "sytem" in spec; did you mean "system"?`},
		{[]string{"-f", "does-not-exist.yaml", "--local"}, "does-not-exist.yaml"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := newRunCmd()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(c.args)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestCacheOptions: --watch-namespaces limits the manager's cache to those
// namespaces (the chart's Roles exist only there); Jobs and pods are
// cached in the operator's own namespace too, where its privileged Jobs
// run, and nothing else is (the chart's Role there grants those alone);
// none means every one.
func TestCacheOptions(t *testing.T) {
	if got := cacheOptions(nil, "streambench-system"); got.DefaultNamespaces != nil || got.ByObject != nil {
		t.Fatalf("no namespaces: %+v, want all", got)
	}
	got := cacheOptions([]string{"team-a", "team-b"}, "streambench-system")
	keys := func(m map[string]cache.Config) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if k := keys(got.DefaultNamespaces); !slices.Equal(k, []string{"team-a", "team-b"}) {
		t.Errorf("DefaultNamespaces = %v, want the watched ones alone: the operator's namespace grants jobs and pods only", k)
	}
	kinds := map[string]bool{}
	for obj, by := range got.ByObject {
		kind := fmt.Sprintf("%T", obj)
		kinds[kind] = true
		if k := keys(by.Namespaces); !slices.Equal(k, []string{"streambench-system", "team-a", "team-b"}) {
			t.Errorf("%s cached in %v, want the watched namespaces and the operator's", kind, k)
		}
	}
	if len(kinds) != 2 || !kinds["*v1.Job"] || !kinds["*v1.Pod"] {
		t.Errorf("cached in the operator's namespace: %v, want Jobs and pods alone", kinds)
	}
}
