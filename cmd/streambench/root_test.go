package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteTerminationLog: a load pod's error lands in its termination
// message file whole when short, cut to what the kubelet keeps (its start,
// the cause) when long, and nothing is written outside a pod.
func TestWriteTerminationLog(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"short", "streambench: repeat 2: creating producers: no brokers", errors.New("repeat 2: creating producers: no brokers")},
		{"long", "streambench: " + strings.Repeat("é", (maxTerminationMessage-len("streambench: "))/2), errors.New(strings.Repeat("é", maxTerminationMessage))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			writeTerminationLog(path, tc.err)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || len(got) > maxTerminationMessage {
				t.Errorf("wrote %d bytes %.60q…, want %d bytes %.60q…", len(got), got, len(tc.want), tc.want)
			}
		})
	}
	writeTerminationLog("", errors.New("outside a pod"))
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files %v, want only the two written", entries)
	}
}
