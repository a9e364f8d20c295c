package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The suite command's own decisions; the local suite itself is tested end
// to end in internal/localrun through the function this command calls.
func TestSuiteCommand(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(run, []byte("apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-f", "s.yaml"}, "only --local is supported by suite; on a cluster use kubectl apply -f s.yaml"},
		{[]string{"--local"}, "-f FILE is required"},
		{[]string{"-f", run, "--local"}, `kind is "BenchmarkRun"; streambench suite takes a BenchmarkSuite`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := newSuiteCmd()
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
