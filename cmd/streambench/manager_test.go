package main

import (
	"strings"
	"testing"
)

// A bad allow-list stops the manager before it starts, naming the flag and
// the entry: a typo must not leave every run with a custom image refused.
func TestManagerRefusesABadAllowList(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--allowed-worker-images=registry.example/a:1,,registry.example/b:1", "--allowed-worker-images: entry 2 is empty"},
		{"--allowed-worker-images=registry.example/*/b:1", "--allowed-worker-images: entry 1 (registry.example/*/b:1) has a '*' before its end"},
	} {
		cmd := newManagerCmd()
		cmd.SetArgs([]string{"--worker-image=registry.example/streambench:1", "--operator-namespace=streambench-system", tc.flag})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.flag, err, tc.want)
		}
	}
}
