package streambench_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The dashboards ship as ConfigMaps labelled grafana_dashboard: "1" (the
// Grafana sidecar's default), one per dashboards/*.json with the file's
// exact content; monitoring.dashboards=false leaves them out. The manager
// gets --monitoring-release.
func TestDashboardConfigMaps(t *testing.T) {
	files, err := filepath.Glob("dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	r := render(t, nil)
	if len(r.configMaps) != len(files) {
		t.Fatalf("%d ConfigMaps, want one per dashboard (%d)", len(r.configMaps), len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, cm := range r.configMaps {
			got, ok := cm.Data[filepath.Base(f)]
			if !ok {
				continue
			}
			found = true
			if cm.Labels["grafana_dashboard"] != "1" || cm.Namespace != releaseNS {
				t.Errorf("%s: labels %v, namespace %s", cm.Name, cm.Labels, cm.Namespace)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(got), &v); err != nil || got != string(want) {
				t.Errorf("%s: the ConfigMap's JSON is not %s as it is (%v)", cm.Name, f, err)
			}
		}
		if !found {
			t.Errorf("no ConfigMap carries %s", f)
		}
	}
	if !slices.Contains(r.deployment.Spec.Template.Spec.Containers[0].Args, "--monitoring-release=kube-prometheus-stack") {
		t.Errorf("manager args lack the default --monitoring-release")
	}
	r = render(t, map[string]any{"monitoring": map[string]any{"dashboards": false, "release": "prom"}})
	if len(r.configMaps) != 0 {
		t.Errorf("monitoring.dashboards=false renders %d ConfigMaps", len(r.configMaps))
	}
	if !slices.Contains(r.deployment.Spec.Template.Spec.Containers[0].Args, "--monitoring-release=prom") {
		t.Errorf("monitoring.release not passed to the manager")
	}
}
