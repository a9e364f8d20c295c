package dashboards

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the generated dashboards into charts/streambench/dashboards")

// chartDir holds the dashboards the chart ships.
var chartDir = filepath.Join("..", "..", "charts", "streambench", "dashboards")

// The chart's dashboards are exactly what this package generates
// (regenerate with make dashboards), and nothing else.
func TestChartDashboardsAreGenerated(t *testing.T) {
	all := All()
	for name, d := range all {
		want, err := Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(chartDir, name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run make dashboards)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what internal/dashboards generates; run make dashboards", path)
		}
		// Grafana's model: it must be JSON with the fields Grafana needs.
		var m map[string]any
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range []string{"uid", "title", "panels", "schemaVersion", "templating"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s lacks %q", name, k)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(chartDir, "*.json"))
	if len(files) != len(all) {
		t.Errorf("chart has %d dashboards %v, generated %d", len(files), files, len(all))
	}
}

// notScrapedHere are metrics the dashboards use from exporters that do
// not run outside a Kubernetes node: the kubelet's cAdvisor (container_*)
// and node-exporter (node_disk_*), both part of kube-prometheus-stack.
// Their names are those exporters' documented, stable ones; every other
// metric must have been seen by the scrape test.
var notScrapedHere = map[string]string{
	"container_cpu_usage_seconds_total":      "cAdvisor (kubelet)",
	"container_fs_writes_bytes_total":        "cAdvisor (kubelet)",
	"container_network_receive_bytes_total":  "cAdvisor (kubelet)",
	"container_network_transmit_bytes_total": "cAdvisor (kubelet)",
	"node_disk_write_time_seconds_total":     "node-exporter",
	"node_disk_writes_completed_total":       "node-exporter",
}

// seenMetrics are the metric names the real Prometheus of the scrape test
// (internal/monitoringtest) saw on real brokers and a real worker; that
// test fails when the file no longer matches what it sees.
func seenMetrics(t *testing.T) map[string]bool {
	f, err := os.Open(filepath.Join("testdata", "seen-metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			seen[l] = true
		}
	}
	return seen
}

// Every query of every dashboard parses, and names only metrics that a
// real scrape exposed (or, for the node exporters, that cannot run here).
func TestQueriesParseAndUseSeenMetrics(t *testing.T) {
	seen := seenMetrics(t)
	var used []string
	for name, d := range All() {
		qs := Queries(d)
		if len(qs) < 5 {
			t.Errorf("%s: only %d queries", name, len(qs))
		}
		for _, q := range qs {
			ms, err := CheckPromQL(q)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, m := range ms {
				used = append(used, m)
				if !seen[m] && notScrapedHere[m] == "" {
					t.Errorf("%s: %q uses metric %s, which the scrape test never saw", name, q, m)
				}
			}
		}
	}
	sort.Strings(used)
	t.Logf("metrics used: %v", used)
}
