package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"-f", "run.yaml"}, "only --local is supported by run; on a cluster use kubectl apply -f run.yaml"},
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
// namespaces (the chart's Roles exist only there) and the operator's own,
// where its privileged Jobs run; none means every one.
func TestCacheOptions(t *testing.T) {
	if got := cacheOptions(nil, "streambench-system"); got.DefaultNamespaces != nil {
		t.Fatalf("no namespaces: DefaultNamespaces = %v, want all (nil)", got.DefaultNamespaces)
	}
	got := cacheOptions([]string{"team-a", "team-b"}, "streambench-system").DefaultNamespaces
	if len(got) != 3 {
		t.Fatalf("DefaultNamespaces = %v", got)
	}
	for _, ns := range []string{"team-a", "team-b", "streambench-system"} {
		if _, ok := got[ns]; !ok {
			t.Fatalf("DefaultNamespaces = %v, misses %s", got, ns)
		}
	}
}
