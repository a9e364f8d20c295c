package monitoringtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/dashboards"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/metrics"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/worker"
)

// prometheusBinary is the Prometheus hack/prometheus-binary.sh builds (from
// the pinned module; cached after the first build).
func prometheusBinary(t *testing.T) string {
	if p := os.Getenv("PROMETHEUS_BIN"); p != "" {
		return p
	}
	cmd := exec.Command("bash", filepath.Join("..", "..", "hack", "prometheus-binary.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/prometheus-binary.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

type target struct {
	job, addr, pod string
	// node, for a kubelet's cAdvisor target, is the node label
	// prometheus-operator gives its series (no namespace or pod label: the
	// series carry their own).
	node string
}

// prometheus runs a real Prometheus scraping targets every second (the
// Kafka brokers every 5 s), with
// the namespace and pod labels a PodMonitor target carries.
type prometheus struct {
	url string
	cmd *exec.Cmd
}

func startPrometheus(t *testing.T, targets []target) *prometheus {
	t.Helper()
	bin := prometheusBinary(t)
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
	jobs := map[string][]target{}
	var order []string
	for _, tg := range targets {
		if jobs[tg.job] == nil {
			order = append(order, tg.job)
		}
		jobs[tg.job] = append(jobs[tg.job], tg)
	}
	for _, j := range order {
		fmt.Fprintf(&cfg, "- job_name: %s\n", j)
		if j == "kafka" {
			// The JMX exporter walks every Kafka MBean on each scrape,
			// which takes seconds on a busy 2-core machine.
			cfg.WriteString("  scrape_interval: 5s\n  scrape_timeout: 5s\n")
		}
		if j == "sparse" {
			// Sparser than a short measured window (TestWidenedWindow).
			cfg.WriteString("  scrape_interval: 6s\n  scrape_timeout: 2s\n")
		}
		if j == "pulsar" {
			// The standalone's /metrics (broker, bookies, metadata store
			// in one JVM) can take over a second on a busy machine.
			cfg.WriteString("  scrape_interval: 2s\n  scrape_timeout: 2s\n")
		}
		cfg.WriteString("  static_configs:\n")
		for _, tg := range jobs[j] {
			if tg.node != "" {
				fmt.Fprintf(&cfg, "  - targets: [%q]\n    labels: {node: %q}\n", tg.addr, tg.node)
				continue
			}
			fmt.Fprintf(&cfg, "  - targets: [%q]\n    labels: {namespace: local, pod: %q}\n", tg.addr, tg.pod)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := localbrokers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{url: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
	})
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("Prometheus not ready after a minute:\n%s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *prometheus) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(p.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// logTargets logs every target's health and last error.
func (p *prometheus) logTargets(t *testing.T) {
	var r struct {
		Data struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/targets", &r)
	for _, tg := range r.Data.ActiveTargets {
		t.Logf("target %s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError)
	}
	var names []string
	for n := range p.names(t) {
		if strings.HasPrefix(n, "jvm") || strings.HasPrefix(n, "process") || strings.HasPrefix(n, "kafka_server") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	t.Logf("names: %v", names)
}

// scrapedAfter waits until every target of job has been scraped with
// success after at (a fixed sleep is not enough: a busy machine makes a
// scrape late or fail, and a failed one leaves the series stale), for at
// most two minutes, and fails the test naming the targets if not.
func (p *prometheus) scrapedAfter(t *testing.T, job string, targets int, at time.Time) {
	t.Helper()
	// timestamp() must take the selector itself: of an expression such as
	// up == 1 it returns the evaluation time, and the wait would end at
	// once, before the scrape that reads the counters' final values (it
	// did: the brokers' bytes in read 0.92 of what they were a scrape
	// later).
	q := fmt.Sprintf(`count((timestamp(up{job=%q}) > %.3f) and on(instance) (up{job=%q} == 1))`, job, float64(at.UnixMilli())/1000, job)
	deadline := time.Now().Add(2 * time.Minute)
	for p.value(t, q, time.Now()) < float64(targets) {
		if time.Now().After(deadline) {
			p.logTargets(t)
			t.Fatalf("the %d targets of job %s were not all scraped after %s within two minutes", targets, job, at.Format(time.RFC3339Nano))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// names are every metric name Prometheus has stored.
func (p *prometheus) names(t *testing.T) map[string]bool {
	var r struct {
		Data []string `json:"data"`
	}
	p.get(t, "/api/v1/label/__name__/values", &r)
	out := map[string]bool{}
	for _, n := range r.Data {
		out[n] = true
	}
	return out
}

// value is the single value of an instant query at at, or -1 when it has
// no result.
func (p *prometheus) value(t *testing.T, q string, at time.Time) float64 {
	t.Helper()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/query?query="+urlEscape(q)+fmt.Sprintf("&time=%.3f", float64(at.UnixMilli())/1000), &r)
	if len(r.Data.Result) != 1 {
		return -1
	}
	v, err := strconv.ParseFloat(r.Data.Result[0].Value[1].(string), 64)
	if err != nil {
		return -1
	}
	return v
}

// scalar is the single value of an instant query at at.
func (p *prometheus) scalar(t *testing.T, q string, at time.Time) float64 {
	t.Helper()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/query?query="+urlEscape(q)+fmt.Sprintf("&time=%.3f", float64(at.UnixMilli())/1000), &r)
	if len(r.Data.Result) != 1 {
		t.Fatalf("query %s: %d series, want 1", q, len(r.Data.Result))
	}
	v, err := strconv.ParseFloat(r.Data.Result[0].Value[1].(string), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func urlEscape(s string) string {
	r := strings.NewReplacer("%", "%25", " ", "%20", "+", "%2B", "{", "%7B", "}", "%7D", "\"", "%22", "[", "%5B", "]", "%5D", "=", "%3D", "~", "%7E", "&", "%26", "#", "%23")
	return r.Replace(s)
}

func startWorkers(t *testing.T, n int) []string {
	var urls []string
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := worker.New(worker.Options{Name: fmt.Sprintf("w%d", i), Drivers: worker.DefaultDrivers(), FlushTimeout: 30 * time.Second})
		done := make(chan struct{})
		go func() { defer close(done); _ = worker.ServeListener(ctx, ln, w) }()
		t.Cleanup(func() { cancel(); <-done })
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls
}

func level2(t *testing.T, sys v1alpha1.System) v1alpha1.EffectiveDurability {
	l := v1alpha1.Level2
	eff, err := durability.Translate(sys, v1alpha1.DurabilitySpec{Level: &l})
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

func workload(rate int64, measureSeconds float64) v1alpha1.WorkloadSpec {
	one, warm, measure := int32(1), 2.0/60, measureSeconds/60
	return v1alpha1.WorkloadSpec{Name: "monitoring", Topics: 1, PartitionsPerTopic: 3, MessageSize: 1024,
		ProducersPerTopic: 1, ConsumerPerSubscription: 1, SubscriptionsPerTopic: &one,
		ProducerRate: rate, WarmupDurationMinutes: &warm, TestDurationMinutes: &measure}
}

// seen collects the metric names the scrapes saw, for the dashboards.
var seen = map[string]bool{}

// TestKafkaThroughPrometheus: three real Kafka brokers with the JMX
// exporter agent and Strimzi's exporter rules, two real workers and the
// coordinator's /metrics, scraped by a real Prometheus every second.
func TestKafkaThroughPrometheus(t *testing.T) {
	ctx := context.Background()
	jar, err := localbrokers.FetchJMXExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(t.TempDir(), "kafka-metrics.yml")
	run := &v1alpha1.BenchmarkRun{}
	run.Name = "local"
	if err := os.WriteFile(rules, []byte(strimzi.MetricsConfigMap(run).Data[strimzi.MetricsConfigKey]), 0o644); err != nil {
		t.Fatal(err)
	}
	agentPorts, err := localbrokers.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	eff := level2(t, v1alpha1.SystemKafka)
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{BrokerConfig: eff.Kafka.Broker, Log: t.Logf,
		NodeJVMArgs: func(id int) []string {
			return []string{localbrokers.JMXExporterArg(jar, agentPorts[id-1], rules)}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stopping Kafka: %v", err)
		}
	})
	urls := startWorkers(t, 2)
	coll := metrics.New()
	coll.Reset("pending")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: coll.Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	var targets []target
	for i, port := range agentPorts {
		targets = append(targets, target{job: "kafka", addr: fmt.Sprintf("127.0.0.1:%d", port), pod: fmt.Sprintf("kafka-%d", i+1)})
	}
	for i, u := range urls {
		targets = append(targets, target{job: "workers", addr: strings.TrimPrefix(u, "http://"), pod: fmt.Sprintf("worker-%d", i)})
	}
	targets = append(targets, target{job: "coordinator", addr: ln.Addr().String(), pod: "coordinator"})
	pods := map[string]int{}
	for i, pid := range k.Pids() {
		pods[fmt.Sprintf("kafka-%d", i+1)] = pid
	}
	targets = append(targets, target{job: "kubelet", addr: standInCAdvisor(t, pods), node: "local-node"})
	prom := startPrometheus(t, targets)

	// Every broker scraped once before the load: the counters' values
	// before it are known.
	deadline := time.Now().Add(2 * time.Minute)
	for prom.value(t, `count(up{job="kafka"} == 1)`, time.Now()) != 3 {
		if time.Now().After(deadline) {
			prom.logTargets(t)
			t.Fatal("the Kafka brokers' JMX exporters were not scraped within 2 minutes")
		}
		time.Sleep(time.Second)
	}
	const (
		bytesIn     = `sum(kafka_server_brokertopicmetrics_bytesin_total{topic=""})`
		replBytesIn = `sum(kafka_server_brokertopicmetrics_replicationbytesin_total)`
	)
	before := time.Now()
	inBefore, replBefore := prom.scalar(t, bytesIn, before), prom.scalar(t, replBytesIn, before)
	wl := workload(2000, 30)
	runID := fmt.Sprintf("mon%d", time.Now().UnixNano()%1e9)
	coll.Reset(runID)
	coll.SetSubscriptionsPerTopic(1)
	rctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	res, err := coordinator.Run(rctx, coordinator.Options{
		Workers: urls, Workload: wl, SnapshotInterval: 2 * time.Second, Logf: t.Logf,
		Driver:     driver.Config{System: v1alpha1.SystemKafka, Brokers: v1alpha1.BrokerEndpoints{BootstrapServers: k.Bootstrap()}, Durability: eff, RunID: runID},
		OnSnapshot: func(s stats.Snapshot) { coll.Add(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	start, end, ok := res.MeasuredWindow()
	if !ok {
		t.Fatal("no measured phase")
	}
	// The window's last samples, and the counters after the run, are
	// scraped: every broker and worker once more after the run's end.
	runEnd := time.Now()
	prom.scrapedAfter(t, "kafka", len(agentPorts), runEnd)
	prom.scrapedAfter(t, "workers", len(urls), runEnd)

	// The brokers' figures, as the coordinator reads them in a cluster.
	rep, err := brokerres.QueryPrometheus(ctx, brokerres.PromTarget{URL: prom.url, Namespace: "local", Pods: "kafka-[0-9]+", System: v1alpha1.SystemKafka}, start, end)
	if err != nil {
		prom.logTargets(t)
		t.Fatal(err)
	}
	if len(rep.Brokers) != 3 || rep.Total.CPUCores == nil || *rep.Total.CPUCores <= 0 || rep.Total.GCPauseMs == nil {
		t.Fatalf("broker resources from Prometheus: %+v (notes %q)", rep.Total, rep.Notes)
	}
	for _, b := range rep.Brokers {
		if b.CPUCores == nil || *b.CPUCores <= 0 {
			t.Errorf("%s: CPU %v", b.Name, b.CPUCores)
		}
	}
	// The brokers' node, found through their cAdvisor series' node label:
	// its CPUs, busy at least with the brokers' own CPU time.
	if h := rep.Host; h == nil || h.Node != "local-node" || h.CPUs != runtime.NumCPU() || h.CPUBusyCores == nil ||
		*h.CPUBusyCores < 0.9**rep.Total.CPUCores || *h.CPUBusyCores > float64(h.CPUs)*1.05 || !strings.Contains(h.CPUVerdict, "node local-node") {
		t.Errorf("the brokers' node from cAdvisor: %+v, brokers' CPU %v cores (notes %q)", h, *rep.Total.CPUCores, rep.Notes)
	} else {
		t.Logf("node CPU: %s", h.CPUVerdict)
	}

	// Efficiency and cost (issue 62) from these figures, as the outcome
	// step computes them, checked against counters read another way: the
	// JVMs' own CPU and resident-memory exports and the leaders' bytes in
	// (Kafka's own metrics), over the same window.
	sum, err := results.Summarize(results.Input{Run: "mon", System: v1alpha1.SystemKafka, Workload: wl, Durability: &eff, Snapshots: res.Snapshots, BrokerResources: rep})
	if err != nil {
		t.Fatal(err)
	}
	fin, _ := outcome.FinishRepeat(outcome.Repeat{Summary: sum}, 0, nil, nil)
	eff62 := fin.Cost.Efficiency
	win := fmt.Sprintf("[%ds]", int(math.Round(end.Sub(start).Seconds())))
	jvmCores := prom.value(t, `sum(rate(process_cpu_seconds_total{job="kafka"}`+win+`))`, end)
	jvmGiB := prom.value(t, `sum(avg_over_time(process_resident_memory_bytes{job="kafka"}`+win+`))`, end) / (1 << 30)
	leadersMBps := prom.value(t, `sum(rate(kafka_server_brokertopicmetrics_bytesin_total{topic=""}`+win+`))`, end) / 1e6
	if jvmCores <= 0 || jvmGiB <= 0 || leadersMBps <= 0 {
		t.Fatalf("the brokers' own counters over the window: %.3f cores, %.3f GiB, bytes in %.3f MB/s", jvmCores, jvmGiB, leadersMBps)
	}
	perCore := eff62.MBPerSecPerCoreUsed.Value
	if perCore == nil || rep.Total.MemoryGiB == nil {
		t.Fatalf("no efficiency per core or memory: %+v, memory %v", eff62.MBPerSecPerCoreUsed, rep.Total.MemoryGiB)
	}
	// The leaders' bytes in hold the record batches' headers too (up to
	// 1.3 times the payload, as bounded below), and the two CPU figures are
	// the same kernel counter sampled at different scrapes.
	if r := *perCore / (leadersMBps / jvmCores); r < 0.65 || r > 1.2 {
		t.Errorf("MB/s per core used %.3f (%s); the brokers' own bytes in over their own CPU give %.3f (%.3f MB/s ÷ %.3f cores): ratio %.2f, want 0.65..1.2",
			*perCore, eff62.MBPerSecPerCoreUsed.Formula, leadersMBps/jvmCores, leadersMBps, jvmCores, r)
	}
	if r := *rep.Total.MemoryGiB / jvmGiB; r < 0.85 || r > 1.15 {
		t.Errorf("broker memory %.3f GiB (working set), the JVMs' own resident memory %.3f GiB: ratio %.2f, want 0.85..1.15", *rep.Total.MemoryGiB, jvmGiB, r)
	}
	// What the stand-in kubelet does not serve is said, not zero.
	if f := eff62.DiskWritePerByte; f.Value != nil || !strings.Contains(f.Missing, "not measured by prometheus") {
		t.Errorf("disk written per byte without a disk figure: %+v", f)
	}
	if c := fin.Cost.Costs; c.TotalPerHour.Value == nil || !strings.Contains(c.CrossZonePerHour.From, "replication modeled from the durability setting (3 replicas − 1") {
		t.Errorf("cost: total %+v, cross-zone %+v", c.TotalPerHour, c.CrossZonePerHour)
	}
	t.Logf("efficiency: %.3f MB/s per core used (brokers' own counters %.3f), %.3f GiB (JVMs' own %.3f); cost %.4g USD an hour, %.4g per TB",
		*perCore, leadersMBps/jvmCores, *rep.Total.MemoryGiB, jvmGiB, *fin.Cost.Costs.TotalPerHour.Value, *fin.Cost.Costs.PerTBIngested.Value)

	// Known without Prometheus: every acknowledged byte reached its
	// partition's leader once (bytes in), plus the record batches'
	// headers. Over the whole run (the counters before it and after its
	// last scrape), so the 5 s scrapes do not blur the window's edges.
	//
	// The followers' share (replication bytes in) is only bounded: acks=all
	// waits for the replicas in the ISR, which min.insync.replicas lets
	// shrink to 2: on a busy machine a follower can fall out of it, still
	// be catching up when the run ends, and the run deletes the topic
	// before it has. So the followers hold at least (min.insync.replicas -
	// 1) copies and at most (replicas - 1).
	all := stats.Merge(res.Snapshots...)
	acked := float64(all.Producer.AckedBytes)
	in := prom.scalar(t, bytesIn, time.Now()) - inBefore
	repl := prom.scalar(t, replBytesIn, time.Now()) - replBefore
	rf := float64(eff.Kafka.ReplicationFactor)
	minISR, err := strconv.ParseFloat(eff.Kafka.Topic["min.insync.replicas"], 64)
	if err != nil {
		t.Fatalf("level 2's min.insync.replicas: %v", err)
	}
	t.Logf("run: acked %.1f MB; leaders' bytes in %.1f MB (%.3f x acked), followers' replication bytes in %.1f MB (%.3f x acked, replicas %.0f, min ISR %.0f); measured phase %.1f s, broker resources %+v, CPU %.2f cores, GC %.1f ms",
		acked/1e6, in/1e6, in/acked, repl/1e6, repl/acked, rf, minISR, end.Sub(start).Seconds(), rep.Total, *rep.Total.CPUCores, *rep.Total.GCPauseMs)
	if r := in / acked; r < 0.97 || r > 1.3 {
		t.Errorf("leaders' bytes in %.0f over the run, %.3f times the acked bytes (%.0f); want 0.97..1.3", in, r, acked)
	}
	if r := repl / acked; r < 0.97*(minISR-1) || r > 1.3*(rf-1) {
		t.Errorf("followers' replication bytes in %.0f over the run, %.3f times the acked bytes (%.0f); want %.2f..%.2f (min ISR %.0f - 1 .. replicas %.0f - 1)",
			repl, r, acked, 0.97*(minISR-1), 1.3*(rf-1), minISR, rf)
	}
	if repl/acked < 0.97*(rf-1) {
		// Not a failure (see above), but say why, from the brokers' logs.
		t.Logf("followers hold fewer than %.0f copies; the brokers' ISR changes:\n%s", rf-1, isrChanges(k))
	}
	// The workers' counters as Prometheus stored them: the run's exact
	// count.
	if got := prom.scalar(t, `sum(streambench_messages_acked_total{run="`+runID+`"})`, time.Now()); got != float64(all.Producer.Acked) {
		t.Errorf("Prometheus has %v acked for the run, the run acked %d", got, all.Producer.Acked)
	}
	if got := prom.scalar(t, `max(streambench_backlog_messages{run="`+runID+`"})`, time.Now()); got != 0 {
		t.Errorf("backlog after a complete run %v, want 0", got)
	}
	for n := range prom.names(t) {
		seen[n] = true
	}
}

// TestPulsarThroughPrometheus: the Pulsar standalone's own /metrics
// (broker and its bookies' client side) with traffic from real workers.
func TestPulsarThroughPrometheus(t *testing.T) {
	ctx := context.Background()
	eff := level2(t, v1alpha1.SystemPulsar)
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{BrokerConfig: eff.Pulsar.Broker, BookieConfig: eff.Pulsar.Bookie, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stopping Pulsar: %v", err)
		}
	})
	urls := startWorkers(t, 2)
	prom := startPrometheus(t, []target{{job: "pulsar", addr: strings.TrimPrefix(p.AdminURL(), "http://"), pod: "pulsar-standalone"}})
	runID := fmt.Sprintf("monp%d", time.Now().UnixNano()%1e9)
	rctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	res, err := coordinator.Run(rctx, coordinator.Options{
		Workers: urls, Workload: workload(1000, 10), SnapshotInterval: 2 * time.Second, Logf: t.Logf,
		Driver: driver.Config{System: v1alpha1.SystemPulsar, Brokers: v1alpha1.BrokerEndpoints{ServiceURL: p.ServiceURL(), AdminURL: p.AdminURL()}, Durability: eff, RunID: runID},
	})
	if err != nil {
		t.Fatal(err)
	}
	start, end, _ := res.MeasuredWindow()
	prom.scrapedAfter(t, "pulsar", 1, time.Now())
	rep, err := brokerres.QueryPrometheus(ctx, brokerres.PromTarget{URL: prom.url, Namespace: "local", Pods: "pulsar-standalone", System: v1alpha1.SystemPulsar}, start, end)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Brokers) != 1 || rep.Total.CPUCores == nil || *rep.Total.CPUCores <= 0 || rep.Total.GCPauseMs == nil {
		t.Errorf("broker resources from Prometheus: %+v (notes %q)", rep.Total, rep.Notes)
	}
	t.Logf("pulsar broker resources %+v, notes %q", rep.Total, rep.Notes)
	var names []string
	for n := range prom.names(t) {
		seen[n] = true
		names = append(names, n)
	}
	if d := os.Getenv("DUMP_METRIC_NAMES"); d != "" {
		sort.Strings(names)
		_ = os.WriteFile(d, []byte(strings.Join(names, "\n")), 0o644)
	}
}

// TestMain runs the scrapes, then checks the dashboards against what they
// saw (after both, since each system exposes its own names).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && len(seen) > 0 {
		code = checkDashboards()
	}
	os.Exit(code)
}

// checkDashboards fails unless every metric the dashboards use (but the
// node exporters', which cannot run here) was seen, and writes what the
// dashboards use and was seen to internal/dashboards/testdata, the list
// the dashboards' unit test checks against; a change there shows in git.
func checkDashboards() int {
	used := map[string]bool{}
	for _, d := range dashboards.All() {
		for _, q := range dashboards.Queries(d) {
			ms, err := dashboards.CheckPromQL(q)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			for _, n := range ms {
				used[n] = true
			}
		}
	}
	var found, missing []string
	for n := range used {
		switch {
		case strings.HasPrefix(n, "container_") || strings.HasPrefix(n, "node_"):
			// The kubelet's and node-exporter's: not scraped here (the
			// test's stand-in kubelet serves some, but it is not the real
			// exporter), so never listed as seen.
		case seen[n]:
			found = append(found, n)
		default:
			missing = append(missing, n)
		}
	}
	sort.Strings(found)
	sort.Strings(missing)
	if len(missing) > 0 {
		// Not written then: a run of one system's test (-run) would drop
		// the other's names from the file the dashboards' test reads.
		fmt.Fprintf(os.Stderr, "the dashboards use metrics no scrape exposed: %v\n", missing)
		return 1
	}
	out := "# Metric names the dashboards use that a real Prometheus scraped from real\n# brokers and workers (internal/monitoringtest writes this file).\n" + strings.Join(found, "\n") + "\n"
	if err := os.WriteFile(filepath.Join("..", "dashboards", "testdata", "seen-metrics.txt"), []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// isrChanges are the lines of the Kafka nodes' logs that shrink or expand
// an ISR or fence a broker, at most 20 per node.
func isrChanges(k *localbrokers.Kafka) string {
	var b strings.Builder
	for _, n := range k.Nodes {
		data, err := os.ReadFile(n.Process.LogFile)
		if err != nil {
			fmt.Fprintf(&b, "node %d: %v\n", n.ID, err)
			continue
		}
		shown := 0
		for _, line := range strings.Split(string(data), "\n") {
			l := strings.ToLower(line)
			if shown < 20 && (strings.Contains(l, "isr") && (strings.Contains(l, "shrink") || strings.Contains(l, "expand")) || strings.Contains(l, "fenced")) {
				fmt.Fprintf(&b, "node %d: %s\n", n.ID, line)
				shown++
			}
		}
	}
	return b.String()
}

// standInCAdvisor serves, in the format and with the labels of a real
// kubelet's /metrics/cadvisor (checked against the local cluster's
// kubelet), this host's CPU counters: the root cgroup (id="/", every
// process: /proc/stat less idle and iowait), the machine's CPUs, and one
// container per broker pod from its JVM's /proc/<pid>/stat. It stands in
// for the kubelet, which does not run in this test; the figures are the
// machine's real ones. It returns its address.
func standInCAdvisor(t *testing.T, pods map[string]int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ticks := func(fields []string) float64 {
		var sum float64
		for _, f := range fields {
			v, _ := strconv.ParseFloat(f, 64)
			sum += v
		}
		return sum / 100 // USER_HZ
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		cpu := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]) // cpu user nice system idle iowait irq softirq steal
		busy := ticks(cpu[1:4]) + ticks(cpu[6:9])
		fmt.Fprintf(w, "machine_cpu_cores{boot_id=\"b\",machine_id=\"m\",system_uuid=\"u\"} %d\n", runtime.NumCPU())
		fmt.Fprintf(w, "container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/\",image=\"\",name=\"\",namespace=\"\",pod=\"\"} %g\n", busy)
		for pod, pid := range pods {
			st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:])) // fields from 3 (state) on
			fmt.Fprintf(w, "container_cpu_usage_seconds_total{container=\"kafka\",cpu=\"total\",id=\"/kubepods/%s\",image=\"kafka\",name=\"%s\",namespace=\"local\",pod=%q} %g\n",
				pod, pod, pod, ticks(f[11:13])) // utime, stime
			// The working set, as the JVM's resident set: a container
			// holding one process and no page cache of its own.
			if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, line := range strings.Split(string(status), "\n") {
					if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(kb), " kB"), 64)
						fmt.Fprintf(w, "container_memory_working_set_bytes{container=\"kafka\",id=\"/kubepods/%s\",image=\"kafka\",name=\"%s\",namespace=\"local\",pod=%q} %g\n",
							pod, pod, pod, n*1024)
					}
				}
			}
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}
