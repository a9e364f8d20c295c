package brokerres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// PromTarget says which Prometheus to ask about which pods.
type PromTarget struct {
	// URL is the Prometheus base URL (http://host:9090).
	URL string
	// Namespace and Pods (a regular expression, fully anchored as PromQL's
	// =~ is) select the broker pods; the labels are the ones a PodMonitor
	// target carries.
	Namespace, Pods string
	System          v1alpha1.System
	// Client defaults to one with a 30 s timeout.
	Client *http.Client
	// Widen is how far a figure's window is widened on each side when
	// Prometheus has fewer than two samples of it inside the measured
	// window; zero means DefaultWiden.
	Widen time.Duration
}

// DefaultWiden is PromTarget.Widen's default. A rate needs two samples
// inside its window: a measured phase not much longer than the scrape
// interval (kube-prometheus-stack's default is 30 s), or scrapes that time
// out while the machine is busy (a Kafka JMX exporter walks every MBean on
// each scrape), can leave fewer, and the figure would be missing although
// the broker was scraped around it.
const DefaultWiden = 30 * time.Second

// Metric names the broker queries use; the dashboards use the same, and
// their test checks each was seen in a scrape.
const (
	MetricContainerCPU     = "container_cpu_usage_seconds_total"
	MetricContainerMemory  = "container_memory_working_set_bytes"
	MetricProcessRSS       = "process_resident_memory_bytes"
	MetricContainerFSWrite = "container_fs_writes_bytes_total"
	MetricContainerNetIn   = "container_network_receive_bytes_total"
	MetricContainerNetOut  = "container_network_transmit_bytes_total"
	MetricMachineCPUs      = "machine_cpu_cores"
	MetricProcessCPU       = "process_cpu_seconds_total"
	MetricJVMGC            = "jvm_gc_collection_seconds_sum"
	// NotPauseCollectors matches the collector beans (the gc label of
	// MetricJVMGC) whose time is not pause time: ZGC's "Cycles" beans
	// (JDK 17's "ZGC Cycles", generational ZGC's "ZGC Minor Cycles" and
	// "ZGC Major Cycles") and G1's "G1 Concurrent GC" (JDK 20+) time
	// concurrent work, done beside the application. Measured on a JDK 17
	// ZGC: "ZGC Cycles" 870 ms, "ZGC Pauses" 0 ms for the same garbage
	// (TestPauseCollectors). Serial's, Parallel's and G1's young and old
	// beans, and ZGC's "Pauses" beans, time pauses.
	NotPauseCollectors = `.*(Cycles|Concurrent).*`
	MetricJournalAdd   = "bookie_journal_JOURNAL_ADD_ENTRY"
	MetricLedgerWrite  = "pulsar_storage_ledger_write_latency"
)

// IsPauseCollector says whether a collector bean (the gc label) times
// pauses, as the GC pause figure counts it.
func IsPauseCollector(gc string) bool {
	return !notPause.MatchString(gc)
}

var notPause = regexp.MustCompile("^(?:" + NotPauseCollectors + ")$")

// promQuery is one figure: a PromQL expression per pod over the window.
type promQuery struct {
	name string
	expr string
	// fallback is asked when expr has no result (e.g. no cAdvisor, as
	// outside Kubernetes: the JVM's own process CPU).
	fallback string
	set      func(b *Broker, v float64)
}

// Queries are the PromQL expressions for a window of w ending at the
// query time, per pod. The container_* series are the kubelet's cAdvisor
// (kube-prometheus-stack scrapes it); the JVM's come from the pods' own
// /metrics (Strimzi's JMX exporter, Pulsar's broker and bookie).
func (t PromTarget) queries(w time.Duration) []promQuery {
	sel := fmt.Sprintf(`namespace=%q,pod=~%q`, t.Namespace, t.Pods)
	win := fmt.Sprintf("[%ds]", int(math.Round(w.Seconds())))
	rate := func(metric, extra string) string {
		return fmt.Sprintf(`sum by (pod) (rate(%s{%s%s}%s))`, metric, sel, extra, win)
	}
	q := []promQuery{
		{name: "CPU", expr: rate(MetricContainerCPU, `,container!="",container!="POD"`), fallback: rate(MetricProcessCPU, ""),
			set: func(b *Broker, v float64) { b.CPUCores = f(v) }},
		// A gauge: its mean over the window. The working set is what the
		// kubelet counts against a limit (resident memory plus the active
		// page cache it is charged); the JVM's own figure where there is
		// no cAdvisor.
		{name: "memory", expr: fmt.Sprintf(`sum by (pod) (avg_over_time(%s{%s,container!="",container!="POD"}%s)) / %d`, MetricContainerMemory, sel, win, 1<<30),
			fallback: fmt.Sprintf(`sum by (pod) (avg_over_time(%s{%s}%s)) / %d`, MetricProcessRSS, sel, win, 1<<30),
			set:      func(b *Broker, v float64) { b.MemoryGiB = f(v) }},
		{name: "disk write", expr: rate(MetricContainerFSWrite, `,container!=""`) + " / 1e6",
			set: func(b *Broker, v float64) { b.DiskWriteMBPerSec = f(v) }},
		{name: "network in", expr: rate(MetricContainerNetIn, "") + " / 1e6",
			set: func(b *Broker, v float64) { b.NetworkInMBPerSec = f(v) }},
		{name: "network out", expr: rate(MetricContainerNetOut, "") + " / 1e6",
			set: func(b *Broker, v float64) { b.NetworkOutMBPerSec = f(v) }},
		{name: "GC pause", expr: fmt.Sprintf(`sum by (pod) (increase(%s{%s,gc!~%q}%s)) * 1000`, MetricJVMGC, sel, NotPauseCollectors, win),
			set: func(b *Broker, v float64) { b.GCPauseMs = f(v) }},
	}
	if t.System == v1alpha1.SystemPulsar {
		// The bookies' journal add latency; where the bookies export no
		// metrics (the local standalone), the brokers' ledger write
		// latency: the bookie add round trip, bound by the journal's
		// fsync. Pulsar publishes the latter as gauges of its last stats
		// interval, hence the average over the window of sum/count.
		q = append(q, promQuery{name: "journal latency",
			expr: fmt.Sprintf(`sum by (pod) (increase(%s_sum{%s}%s)) / sum by (pod) (increase(%s_count{%s}%s))`, MetricJournalAdd, sel, win, MetricJournalAdd, sel, win),
			fallback: fmt.Sprintf(`avg_over_time((sum by (pod) (%s_sum{%s}) / sum by (pod) (%s_count{%s}))%s)`,
				MetricLedgerWrite, sel, MetricLedgerWrite, sel, strings.TrimSuffix(win, "]")+":]"),
			set: func(b *Broker, v float64) { b.JournalLatencyMs = f(v) }})
	}
	return q
}

// QueryPrometheus reads the brokers' resources over [start, end] from
// Prometheus. A figure Prometheus has no series for stays nil and a note
// says so; only an unreachable or failing Prometheus is an error.
func QueryPrometheus(ctx context.Context, t PromTarget, start, end time.Time) (*Report, error) {
	if t.URL == "" || t.Pods == "" {
		return nil, fmt.Errorf("broker resources from Prometheus need its URL and the broker pods (--prometheus-url, --broker-pods)")
	}
	if !end.After(start) {
		return nil, fmt.Errorf("broker resources: window end %s is not after its start %s", end, start)
	}
	if t.Client == nil {
		t.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if t.Widen <= 0 {
		t.Widen = DefaultWiden
	}
	r := &Report{Source: SourcePrometheus, Start: start, End: end, Seconds: end.Sub(start).Seconds()}
	brokers := map[string]*Broker{}
	exact, wide := t.queries(end.Sub(start)), t.queries(end.Sub(start)+2*t.Widen)
	var widened []string
	for i, q := range exact {
		vals, err := t.firstOf(ctx, end, q.expr, q.fallback)
		if err == nil && len(vals) == 0 {
			// The same figure over the widened window, evaluated that
			// much after the window's end.
			vals, err = t.firstOf(ctx, end.Add(t.Widen), wide[i].expr, wide[i].fallback)
			if len(vals) > 0 {
				widened = append(widened, q.name)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("broker resources: asking %s for %s: %w", t.URL, q.name, err)
		}
		if len(vals) == 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: Prometheus has no series for the broker pods (%s)", q.name, q.expr))
		}
		for pod, v := range vals {
			b := brokers[pod]
			if b == nil {
				b = &Broker{Name: pod}
				brokers[pod] = b
			}
			q.set(b, v)
		}
	}
	if len(widened) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: Prometheus had fewer than two samples inside the measured window (a scrape interval near its length, or scrapes that failed), so these are read over the window widened by %s on each side (%s..%s) and include some of the phases around it",
			strings.Join(widened, ", "), t.Widen, start.Add(-t.Widen).Format(time.RFC3339), end.Add(t.Widen).Format(time.RFC3339)))
	}
	names := make([]string, 0, len(brokers))
	for n := range brokers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r.Brokers = append(r.Brokers, *brokers[n])
	}
	if len(r.Brokers) == 0 {
		return nil, fmt.Errorf("broker resources: Prometheus at %s has no series of pods %q in namespace %q over %s..%s, nor over it widened by %s on each side; %s",
			t.URL, t.Pods, t.Namespace, start.Format(time.RFC3339), end.Format(time.RFC3339), t.Widen, t.scrapeHealth(ctx))
	}
	r.Notes = append(r.Notes, "GC pause is the JVMs' pause time: jvm_gc_collection_seconds of the collectors that time pauses, without ZGC's Cycles and G1's Concurrent GC beans, which time work done beside the application")
	r.totals()
	host, err := t.busiestNode(ctx, end.Sub(start), end)
	if err != nil {
		return nil, fmt.Errorf("broker resources: asking %s for the brokers' nodes' CPU: %w", t.URL, err)
	}
	if host == nil {
		r.Notes = append(r.Notes, fmt.Sprintf("node CPU: Prometheus has no cAdvisor series of the brokers' nodes (%s and %s{id=\"/\"} with a node label, as the kubelet's ServiceMonitor gives them), so whether the nodes' CPUs set the latency is not known", MetricMachineCPUs, MetricContainerCPU))
	}
	r.Host = host
	return r, nil
}

// busiestNode reads, for each node a broker pod ran on, its CPUs, how
// many of them were busy over the window (the root cgroup's CPU time, by
// every process on the node) and the brokers' share of that, and returns
// the busiest node judged (Host.JudgeCPU); nil when Prometheus has no
// such series. The nodes come from the node label the kubelet's cAdvisor
// series carry (prometheus-operator sets it from the kubelet endpoints'
// target), so no kube-state-metrics is needed.
func (t PromTarget) busiestNode(ctx context.Context, w time.Duration, at time.Time) (*Host, error) {
	sel := fmt.Sprintf(`namespace=%q,pod=~%q,container!="",container!="POD"`, t.Namespace, t.Pods)
	win := fmt.Sprintf("[%ds]", int(math.Round(w.Seconds())))
	brokerNodes := fmt.Sprintf(`group by (node) (%s{%s})`, MetricContainerCPU, sel)
	cpus, err := t.instant(ctx, fmt.Sprintf(`max by (node) (%s) and on (node) %s`, MetricMachineCPUs, brokerNodes), at, "node")
	if err != nil {
		return nil, err
	}
	busy, err := t.instant(ctx, fmt.Sprintf(`sum by (node) (rate(%s{id="/"}%s)) and on (node) %s`, MetricContainerCPU, win, brokerNodes), at, "node")
	if err != nil {
		return nil, err
	}
	brokers, err := t.instant(ctx, fmt.Sprintf(`sum by (node) (rate(%s{%s}%s))`, MetricContainerCPU, sel, win), at, "node")
	if err != nil {
		return nil, err
	}
	return busiest(cpus, busy, brokers), nil
}

// busiest picks the node with the largest busy share of its CPUs and
// judges it; nil when no node has both figures.
func busiest(cpus, busy, brokers map[string]float64) *Host {
	var best *Host
	bestShare := -1.0
	for node, n := range cpus {
		b, ok := busy[node]
		if !ok || n < 1 {
			continue
		}
		if share := b / n; share > bestShare {
			bestShare = share
			best = &Host{Node: node, CPUs: int(math.Round(n)), CPUBusyCores: f(b)}
		}
	}
	if best == nil {
		return nil
	}
	var on *float64
	if v, ok := brokers[best.Node]; ok {
		on = f(v)
	}
	best.JudgeCPU(on)
	return best
}

// firstOf is expr's values at at, or fallback's where expr has none and
// there is a fallback.
func (t PromTarget) firstOf(ctx context.Context, at time.Time, expr, fallback string) (map[string]float64, error) {
	vals, err := t.instant(ctx, expr, at, "pod")
	if err == nil && len(vals) == 0 && fallback != "" {
		vals, err = t.instant(ctx, fallback, at, "pod")
	}
	return vals, err
}

// scrapeHealth says how Prometheus's scrapes of the broker pods went, from
// its active targets (a PodMonitor's carry the namespace and pod labels):
// whether there are any, and for each its health, last error and how
// long its last scrape took, so that "no series" names its cause.
func (t PromTarget) scrapeHealth(ctx context.Context) string {
	const ask = "are the brokers scraped (PodMonitors, cAdvisor)?"
	pods, err := regexp.Compile("^(?:" + t.Pods + ")$")
	if err != nil {
		return ask
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.URL, "/")+"/api/v1/targets?state=active", nil)
	if err != nil {
		return ask
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		return ask + " (its targets could not be read: " + err.Error() + ")"
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			ActiveTargets []scrapeTarget `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return ask + " (its targets could not be read: " + err.Error() + ")"
	}
	return describeTargets(body.Data.ActiveTargets, t.Namespace, pods)
}

// scrapeTarget is one of Prometheus's active targets (/api/v1/targets).
type scrapeTarget struct {
	Labels             map[string]string `json:"labels"`
	ScrapeURL          string            `json:"scrapeUrl"`
	Health             string            `json:"health"`
	LastError          string            `json:"lastError"`
	LastScrapeDuration float64           `json:"lastScrapeDuration"`
	ScrapeTimeout      string            `json:"scrapeTimeout"`
}

// describeTargets says which of targets are the broker pods' and how their
// last scrapes went.
func describeTargets(targets []scrapeTarget, namespace string, pods *regexp.Regexp) string {
	var parts []string
	for _, tg := range targets {
		if tg.Labels["namespace"] != namespace || !pods.MatchString(tg.Labels["pod"]) {
			continue
		}
		p := fmt.Sprintf("%s (%s) is %s, its last scrape took %.1f s of a %s timeout", tg.Labels["pod"], tg.ScrapeURL, tg.Health, tg.LastScrapeDuration, tg.ScrapeTimeout)
		if tg.LastError != "" {
			p += ": " + tg.LastError
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "Prometheus has no target of these pods: are the brokers scraped (PodMonitors, cAdvisor)?"
	}
	sort.Strings(parts)
	return "Prometheus's targets of these pods: " + strings.Join(parts, "; ")
}

// instant runs an instant query at time at and returns its value per
// value of label (pod, node); NaN and infinite values, e.g. 0/0 of an idle
// journal, are left out.
func (t PromTarget) instant(ctx context.Context, expr string, at time.Time, label string) (map[string]float64, error) {
	u := strings.TrimRight(t.URL, "/") + "/api/v1/query?" + url.Values{
		"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("HTTP %s, not a Prometheus API answer: %w", resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %q, want vector", expr, body.Data.ResultType)
	}
	out := map[string]float64{}
	for _, s := range body.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		out[s.Metric[label]] = v
	}
	return out, nil
}
