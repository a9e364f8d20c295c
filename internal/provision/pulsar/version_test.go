package pulsar

import (
	"strings"
	"testing"
)

func TestPulsarVersion(t *testing.T) {
	chart := ChartInfo{Name: "pulsar", Version: "4.7.0", AppVersion: "4.0.12"}
	for _, tc := range []struct {
		name        string
		pinned      string
		ch          ChartInfo
		wantVersion string
		wantNote    []string
	}{
		{"unpinned takes the chart's appVersion", "", chart, "4.0.12", nil},
		{"pinned to the chart's default says nothing", "4.0.12", chart, "4.0.12", nil},
		{"pinned to another version says which and why", "4.0.7", chart, "4.0.7",
			[]string{"Pulsar 4.0.7, not 4.0.12", "chart pulsar 4.7.0", "spec.cluster.managed.version pins it", "apachepulsar/pulsar-all:4.0.7"}},
		{"a chart without appVersion: the pin, no comparison", "4.0.7", ChartInfo{Name: "pulsar", Version: "9.9.9"}, "4.0.7", nil},
		{"neither: unknown", "", ChartInfo{}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, note := PulsarVersion(tc.pinned, tc.ch)
			if v != tc.wantVersion {
				t.Errorf("version %q, want %q", v, tc.wantVersion)
			}
			if len(tc.wantNote) == 0 && note != "" {
				t.Errorf("note %q, want none", note)
			}
			for _, w := range tc.wantNote {
				if !strings.Contains(note, w) {
					t.Errorf("note %q lacks %q", note, w)
				}
			}
		})
	}
}
