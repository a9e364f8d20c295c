// Package dashboards generates the Grafana dashboards of charts/streambench
// (dashboards/*.json, shipped as ConfigMaps labelled grafana_dashboard:
// "1", which kube-prometheus-stack's Grafana sidecar loads): a run
// overview from the workers' and coordinator's /metrics, and the brokers'
// resources per system. The JSON is generated here, and a test checks
// the chart's files are what this package generates and that every query
// parses and names only metrics a real scrape exposed.
package dashboards

import (
	"encoding/json"
	"fmt"
)

// Dashboard is the part of Grafana's dashboard model streambench uses.
type Dashboard struct {
	UID           string     `json:"uid"`
	Title         string     `json:"title"`
	Tags          []string   `json:"tags"`
	Timezone      string     `json:"timezone"`
	SchemaVersion int        `json:"schemaVersion"`
	Refresh       string     `json:"refresh"`
	Time          TimeRange  `json:"time"`
	Templating    Templating `json:"templating"`
	Panels        []Panel    `json:"panels"`
}

type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type Templating struct {
	List []Variable `json:"list"`
}

// Variable is a dashboard variable (a query variable over Prometheus).
type Variable struct {
	Name       string     `json:"name"`
	Label      string     `json:"label"`
	Type       string     `json:"type"`
	Query      any        `json:"query,omitempty"`
	Datasource Datasource `json:"datasource,omitempty"`
	Multi      bool       `json:"multi,omitempty"`
	IncludeAll bool       `json:"includeAll,omitempty"`
	Refresh    int        `json:"refresh,omitempty"`
	Hide       int        `json:"hide,omitempty"`
}

type Datasource struct {
	Type string `json:"type,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Panel is a time series or state timeline panel.
type Panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description,omitempty"`
	GridPos     GridPos     `json:"gridPos"`
	Datasource  Datasource  `json:"datasource"`
	Targets     []Target    `json:"targets,omitempty"`
	FieldConfig FieldConfig `json:"fieldConfig"`
	Collapsed   *bool       `json:"collapsed,omitempty"`
	Panels      []Panel     `json:"panels,omitempty"`
}

type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

type Target struct {
	RefID        string     `json:"refId"`
	Expr         string     `json:"expr"`
	LegendFormat string     `json:"legendFormat,omitempty"`
	Datasource   Datasource `json:"datasource"`
}

type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

type FieldDefaults struct {
	Unit string `json:"unit,omitempty"`
}

// prom is the dashboards' datasource: the ${datasource} variable, which
// kube-prometheus-stack's Grafana fills with its Prometheus.
var prom = Datasource{Type: "prometheus", UID: "${datasource}"}

func datasourceVar() Variable {
	return Variable{Name: "datasource", Label: "Prometheus", Type: "datasource", Query: "prometheus"}
}

func queryVar(name, label, query string, multi bool) Variable {
	return Variable{Name: name, Label: label, Type: "query", Datasource: prom, Refresh: 2, Multi: multi, IncludeAll: multi,
		Query: map[string]any{"query": query, "refId": name}}
}

// layout places panels two per row, 12 wide and 8 high.
type layout struct {
	panels []Panel
	y, col int
}

func (l *layout) row(title string) {
	if l.col != 0 {
		l.y += 8
		l.col = 0
	}
	f := false
	l.panels = append(l.panels, Panel{Type: "row", Title: title, GridPos: GridPos{H: 1, W: 24, Y: l.y}, Collapsed: &f, Datasource: prom})
	l.y++
}

func (l *layout) add(kind, title, desc, unit string, targets ...Target) {
	for i := range targets {
		targets[i].RefID = string(rune('A' + i))
		targets[i].Datasource = prom
	}
	l.panels = append(l.panels, Panel{Type: kind, Title: title, Description: desc, Datasource: prom, Targets: targets,
		GridPos: GridPos{H: 8, W: 12, X: 12 * l.col, Y: l.y}, FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: unit}, Overrides: []any{}}})
	l.col++
	if l.col == 2 {
		l.col = 0
		l.y += 8
	}
}

func (l *layout) done() []Panel {
	for i := range l.panels {
		l.panels[i].ID = i + 1
	}
	return l.panels
}

func t(expr, legend string) Target { return Target{Expr: expr, LegendFormat: legend} }

// Overview is the run overview: throughput, latency percentiles over
// time, backlog and phases, from the workers' and coordinator's /metrics
// (internal/metrics).
func Overview() Dashboard {
	run := `run=~"$run"`
	var l layout
	l.row("Throughput")
	l.add("timeseries", "Publish and consume rate", "Messages acknowledged and received per second, all workers.", "msg/s",
		t(`sum(rate(streambench_messages_acked_total{`+run+`}[$__rate_interval]))`, "published"),
		t(`sum(rate(streambench_messages_received_total{`+run+`}[$__rate_interval]))`, "consumed"))
	l.add("timeseries", "Publish and consume throughput", "Payload MB/s (10^6 bytes), all workers.", "MBs",
		t(`sum(rate(streambench_bytes_acked_total{`+run+`}[$__rate_interval])) / 1e6`, "published"),
		t(`sum(rate(streambench_bytes_received_total{`+run+`}[$__rate_interval])) / 1e6`, "consumed"))
	l.add("timeseries", "Publish errors and duplicates", "Sends that failed, and deliveries of an already received message, per second.", "short",
		t(`sum(rate(streambench_publish_errors_total{`+run+`}[$__rate_interval]))`, "publish errors"),
		t(`sum(rate(streambench_duplicates_total{`+run+`}[$__rate_interval]))`, "duplicates"))
	l.add("timeseries", "Backlog", "Messages acknowledged but not yet received, over every subscription (the coordinator's count).", "short",
		t(`sum by (run) (streambench_backlog_messages{`+run+`})`, "{{run}}"))
	l.row("Latency")
	for _, h := range []struct{ metric, title, desc string }{
		{"streambench_publish_latency_seconds", "Publish latency", "ack - send, over all workers."},
		{"streambench_end_to_end_latency_seconds", "End-to-end latency", "receive - send timestamp in the payload; off by the workers' clock offsets (in the results)."},
		{"streambench_send_delay_seconds", "Send delay", "How late the load generator sent against its rate schedule: when it grows, the publish latency hides coordinated omission."},
	} {
		var ts []Target
		for _, q := range []string{"0.5", "0.99", "0.999"} {
			ts = append(ts, t(fmt.Sprintf(`histogram_quantile(%s, sum by (le) (rate(%s_bucket{%s}[$__rate_interval])))`, q, h.metric, run), "p"+q[2:]))
		}
		l.add("timeseries", h.title, h.desc+" The histograms' buckets bound the precision; the results have the exact HDR percentiles.", "s", ts...)
	}
	l.add("state-timeline", "Phase", "The run's phase (warm-up, measure, backlog build, drain, cool-down).", "",
		t(`max by (phase) (streambench_phase{`+run+`})`, "{{phase}}"))
	return Dashboard{
		UID: "streambench-run-overview", Title: "streambench / run overview", Tags: []string{"streambench"},
		Timezone: "utc", SchemaVersion: 39, Refresh: "10s", Time: TimeRange{From: "now-30m", To: "now"},
		Templating: Templating{List: []Variable{datasourceVar(),
			queryVar("run", "Run", `label_values(streambench_phase, run)`, true)}},
		Panels: l.done(),
	}
}

// Brokers is the brokers' resources, per pod: CPU, heap and GC, disk
// write MB/s and latency, network; Kafka's flush and produce times and
// Pulsar's ledger (bookie add) and managed-ledger write latency. The container_* series are
// the kubelet's cAdvisor and node_disk_* node-exporter's, both scraped by
// kube-prometheus-stack; the JVM and broker series come from the run's
// PodMonitors.
func Brokers() Dashboard {
	pods := `namespace=~"$namespace",pod=~"$pod"`
	var l layout
	l.row("Resources (every system)")
	l.add("timeseries", "CPU", "Cores used per broker pod (cAdvisor).", "short",
		t(`sum by (pod) (rate(container_cpu_usage_seconds_total{`+pods+`,container!="",container!="POD"}[$__rate_interval]))`, "{{pod}}"))
	l.add("timeseries", "Heap used", "JVM heap per pod (the JMX exporter's and Pulsar's JVM collectors name it differently).", "bytes",
		t(`sum by (pod) (jvm_memory_used_bytes{`+pods+`,area="heap"})`, "{{pod}}"),
		t(`sum by (pod) (jvm_memory_bytes_used{`+pods+`,area="heap"})`, "{{pod}}"))
	l.add("timeseries", "GC time", "Seconds of garbage collection per second, per pod.", "percentunit",
		t(`sum by (pod) (rate(jvm_gc_collection_seconds_sum{`+pods+`}[$__rate_interval]))`, "{{pod}}"))
	l.add("timeseries", "Disk write", "MB/s written by each pod's containers (cAdvisor).", "MBs",
		t(`sum by (pod) (rate(container_fs_writes_bytes_total{`+pods+`,container!=""}[$__rate_interval])) / 1e6`, "{{pod}}"))
	l.add("timeseries", "Disk write latency", "Mean time per completed write on each node's devices (node-exporter).", "s",
		t(`rate(node_disk_write_time_seconds_total[$__rate_interval]) / rate(node_disk_writes_completed_total[$__rate_interval])`, "{{instance}} {{device}}"))
	l.add("timeseries", "Network", "MB/s received (+) and sent (-) per pod (cAdvisor).", "MBs",
		t(`sum by (pod) (rate(container_network_receive_bytes_total{`+pods+`}[$__rate_interval])) / 1e6`, "{{pod}} in"),
		t(`-sum by (pod) (rate(container_network_transmit_bytes_total{`+pods+`}[$__rate_interval])) / 1e6`, "{{pod}} out"))
	l.row("Kafka")
	l.add("timeseries", "Bytes in and replication", "Producer bytes in, and replication bytes in, per broker (Strimzi's JMX exporter).", "MBs",
		t(`sum by (pod) (rate(kafka_server_brokertopicmetrics_bytesin_total{`+pods+`,topic=""}[$__rate_interval])) / 1e6`, "{{pod}} in"),
		t(`sum by (pod) (rate(kafka_server_brokertopicmetrics_replicationbytesin_total{`+pods+`}[$__rate_interval])) / 1e6`, "{{pod}} replication in"))
	l.add("timeseries", "Produce request time p99", "Where a produce request's time goes (remote: waiting for the followers with acks=all).", "ms",
		t(`max by (pod) (kafka_network_requestmetrics_totaltimems{`+pods+`,request="Produce",quantile="0.99"})`, "{{pod}} total"),
		t(`max by (pod) (kafka_network_requestmetrics_remotetimems{`+pods+`,request="Produce",quantile="0.99"})`, "{{pod}} remote"))
	l.add("timeseries", "Log flush time p99", "fsync of the log (flush.messages / flush.ms): where Kafka's local durability costs.", "ms",
		t(`max by (pod) (kafka_log_logflushstats_flushtimems{`+pods+`,quantile="0.99"})`, "{{pod}}"))
	l.row("Pulsar")
	// Pulsar's topic latency series are gauges it recomputes every stats
	// interval (statsUpdateFrequencyInSecs), so the mean is sum / count
	// as published, not a rate. The bookies' own journal series
	// (bookie_journal_*) are left out: the test's standalone bookies
	// export none, so no scrape here has seen them.
	l.add("timeseries", "Ledger write latency (bookie add)", "Mean time for the bookies to acknowledge an entry, per broker: bound by the journal's fsync when journalSyncData is on.", "ms",
		t(`sum by (pod) (pulsar_storage_ledger_write_latency_sum{`+pods+`}) / sum by (pod) (pulsar_storage_ledger_write_latency_count{`+pods+`})`, "{{pod}}"))
	l.add("timeseries", "Managed-ledger write latency", "Mean add-entry latency of the broker's managed ledgers (the bookie add plus the broker's queueing).", "ms",
		t(`sum by (pod) (pulsar_storage_write_latency_sum{`+pods+`}) / sum by (pod) (pulsar_storage_write_latency_count{`+pods+`})`, "{{pod}}"))
	return Dashboard{
		UID: "streambench-broker-resources", Title: "streambench / broker resources", Tags: []string{"streambench"},
		Timezone: "utc", SchemaVersion: 39, Refresh: "10s", Time: TimeRange{From: "now-30m", To: "now"},
		Templating: Templating{List: []Variable{datasourceVar(),
			queryVar("namespace", "Namespace", `label_values(jvm_gc_collection_seconds_sum, namespace)`, false),
			queryVar("pod", "Broker pods", `label_values(jvm_gc_collection_seconds_sum{namespace=~"$namespace"}, pod)`, true)}},
		Panels: l.done(),
	}
}

// All are the dashboards by file name.
func All() map[string]Dashboard {
	return map[string]Dashboard{"run-overview.json": Overview(), "broker-resources.json": Brokers()}
}

// Marshal is a dashboard's file content.
func Marshal(d Dashboard) ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Queries lists every PromQL expression of a dashboard: its panels'
// targets and its query variables.
func Queries(d Dashboard) []string {
	var out []string
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, t.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if m, ok := v.Query.(map[string]any); ok {
			out = append(out, m["query"].(string))
		}
	}
	return out
}
