package localrun

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/suite"
)

func TestLoadSuiteSamplePlansOneKafkaAndAPulsarPerJournalSetting(t *testing.T) {
	s, err := LoadSuite(filepath.Join("..", "..", "config", "samples", "suite-durability-matrix-local.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := suite.New(s, s.Status.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	var clusters []string
	for _, c := range p.Clusters {
		clusters = append(clusters, string(c.Name))
	}
	if got, want := strings.Join(clusters, " "), "matrix-local-kafka matrix-local-pulsar-jsync matrix-local-pulsar-jasync"; got != want {
		t.Errorf("clusters = %s, want %s", got, want)
	}
	var cells []string
	for _, c := range p.Cells {
		cells = append(cells, string(c.Name)+" on "+string(c.Cluster))
	}
	// 2 systems × 2 levels × 1 workload, and Pulsar's matched twin of
	// Kafka's level 2 (ack quorum 3 of 3) on the level-2 bookies.
	if got, want := strings.Join(cells, ", "), "matrix-local-kafka-l1-lat2k on matrix-local-kafka, matrix-local-kafka-l2-lat2k on matrix-local-kafka, "+
		"matrix-local-pulsar-l1-lat2k on matrix-local-pulsar-jsync, matrix-local-pulsar-l2-lat2k on matrix-local-pulsar-jasync, "+
		"matrix-local-pulsar-l2-r33-lat2k on matrix-local-pulsar-jasync"; got != want {
		t.Errorf("cells:\n%s\nwant\n%s", got, want)
	}
}

func TestLoadSuiteRefusesWhatLocalModeCannotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	writeFile(t, path, `apiVersion: streambench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: s}
spec:
  systems: [{system: kafka, cluster: {managed: {}}, durabilities: [{level: 2}]}]
  workloads: [{name: w, configMapRef: {name: wl}}]
`)
	_, err := LoadSuite(path)
	if err == nil || !strings.Contains(err.Error(), "spec.workloads[0].configMapRef is read in a cluster only") {
		t.Fatalf("err = %v", err)
	}
	writeFile(t, path, "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkSuite\nmetadata: {name: s}\nspec:\n  sytems: []\n")
	if _, err := LoadSuite(path); err == nil || !strings.Contains(err.Error(), "sytems") {
		t.Fatalf("a misspelt field: err = %v", err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunSuiteOnRealBrokers runs a small real suite (Kafka and Pulsar ×
// levels 1 and 2 × one workload of seconds) on local brokers, and checks
// the suite's table against the cells' own summary.json files.
func TestRunSuiteOnRealBrokers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	writeFile(t, path, `apiVersion: streambench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: tiny}
spec:
  systems:
  - {system: kafka, cluster: {managed: {brokers: 3}}, durabilities: [{level: 1}, {level: 2}]}
  - {system: pulsar, cluster: {managed: {brokers: 1, bookies: 3}}, durabilities: [{level: 1}, {level: 2}]}
  workloads:
  - name: w
    spec: {name: tiny, topics: 1, partitionsPerTopic: 2, messageSize: 512, subscriptionsPerTopic: 1,
           consumerPerSubscription: 1, producersPerTopic: 1, producerRate: 500,
           warmupDurationMinutes: 0.05, testDurationMinutes: 0.1}
  workers: {count: 2}
`)
	// Only bounds a hang: three broker starts and four cells with their
	// disk probes take about 4 minutes quiet, far more on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var stdout, stderr lockedBuffer
	out, err := RunSuite(ctx, SuiteOptions{SuiteFile: path, ResultsDir: filepath.Join(dir, "results"), Stdout: &stdout, Stderr: &stderr, SnapshotInterval: 2 * time.Second})
	if err != nil {
		t.Fatalf("RunSuite: %v\n%s", err, stderr.String())
	}
	s := out.Suite
	if s.Status.Phase != v1alpha1.PhaseSucceeded || s.Status.Progress != "4/4" {
		t.Fatalf("phase %s progress %s", s.Status.Phase, s.Status.Progress)
	}
	if out.BrokerStarts[v1alpha1.SystemKafka] != 1 || out.BrokerStarts[v1alpha1.SystemPulsar] != 2 {
		t.Errorf("broker starts = %v, want Kafka once (every level), Pulsar twice (two journal settings)", out.BrokerStarts)
	}

	raw, err := os.ReadFile(filepath.Join(out.Dir, suite.KeySuite))
	if err != nil {
		t.Fatal(err)
	}
	var sr suite.SuiteResults
	if err := json.Unmarshal(raw, &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Cells) != 4 {
		t.Fatalf("suite.json has %d cells", len(sr.Cells))
	}
	for _, c := range sr.Cells {
		// The cell's own results, as `streambench run` wrote them.
		cellRaw, err := os.ReadFile(filepath.Join(out.Dir, c.Name, results.KeySummary))
		if err != nil {
			t.Fatalf("cell %s: %v", c.Name, err)
		}
		var own results.Summary
		if err := json.Unmarshal(cellRaw, &own); err != nil {
			t.Fatal(err)
		}
		if c.Phase != v1alpha1.CellSucceeded || c.Results == nil {
			t.Fatalf("cell %s: phase %s results %v: %s", c.Name, c.Phase, c.Results, c.Message)
		}
		if c.Results.PublishMBPerSec != own.Results.PublishMBPerSec || c.Results.PublishP99Ms != own.Results.PublishLatencyMs.P99 ||
			c.Results.EndToEndP99Ms == nil || *c.Results.EndToEndP99Ms != own.Results.EndToEndLatencyMs.P99 {
			t.Errorf("cell %s: table %+v, its summary.json %+v", c.Name, c.Results, own.Results)
		}
		if own.Results.Acked == 0 || own.Results.Lost != 0 {
			t.Errorf("cell %s: acked %d lost %d", c.Name, own.Results.Acked, own.Results.Lost)
		}
		if c.AchievedLevel != own.Durability.AchievedLevel {
			t.Errorf("cell %s: achieved level %d in the table, %d in its summary", c.Name, c.AchievedLevel, own.Durability.AchievedLevel)
		}
	}
	// One table per workload and achieved level, Kafka beside Pulsar.
	byLevel := map[v1alpha1.Level][]string{}
	for _, cmp := range sr.Comparisons {
		byLevel[cmp.AchievedLevel] = append(byLevel[cmp.AchievedLevel], cmp.Cells...)
	}
	for _, c := range sr.Cells {
		found := false
		for _, name := range byLevel[c.AchievedLevel] {
			found = found || name == c.Name
		}
		if !found {
			t.Errorf("cell %s (achieved level %d) is in no table of its level: %v", c.Name, c.AchievedLevel, byLevel)
		}
	}
	if !strings.Contains(stdout.String(), "achieved durability level") {
		t.Errorf("the tables were not printed:\n%s", stdout.String())
	}
	t.Logf("tables:\n%s", stdout.String()[strings.Index(stdout.String(), "Suite tiny"):])
}

// turnsSuite is a repeated suite on two small clusters (one Kafka broker,
// one Pulsar standalone with one bookie) with a workload of seconds.
const turnsSuite = `apiVersion: streambench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: turns}
spec:
  systems:
  - system: kafka
    cluster: {managed: {brokers: 1}}
    durabilities: [{replication: {mode: Sync, replicas: 1, ackReplicas: 1}, local: {mode: Async}}]
  - system: pulsar
    cluster: {managed: {brokers: 1, bookies: 1}}
    durabilities: [{replication: {mode: Sync, replicas: 1, ackReplicas: 1}, local: {mode: Async}}]
  workloads:
  - name: w
    spec: {name: tiny, topics: 1, partitionsPerTopic: 2, messageSize: 512, subscriptionsPerTopic: 1,
           consumerPerSubscription: 1, producersPerTopic: 1, producerRate: 500,
           warmupDurationMinutes: 0.05, testDurationMinutes: 0.1}
  workers: {count: 2}
  repeats: 2
`

// TestRunSuiteInterleavesRepeatsAcrossClusters runs a repeated suite on
// two clusters (one Kafka broker, one Pulsar standalone with one bookie, a
// workload of seconds): both clusters stand before the first cell, the
// repeats take turns across them (Kafka, Pulsar; Pulsar, Kafka), each
// cluster is started once, and no broker JVM outlives the suite.
func TestRunSuiteInterleavesRepeatsAcrossClusters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	writeFile(t, path, turnsSuite)
	// Only bounds a hang: two broker starts and four cells of seconds take
	// about a minute and a half on two quiet cores.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var stdout, stderr lockedBuffer
	out, err := RunSuite(ctx, SuiteOptions{SuiteFile: path, ResultsDir: filepath.Join(dir, "results"), Stdout: &stdout, Stderr: &stderr, SnapshotInterval: 2 * time.Second})
	if out != nil {
		defer func() {
			for _, pid := range out.BrokerPids {
				if localbrokers.PidAlive(pid) {
					t.Errorf("broker pid %d still runs after the suite returned", pid)
					_ = localbrokers.StopPid(pid, 0)
				}
			}
		}()
	}
	if err != nil {
		t.Fatalf("RunSuite: %v\n%s", err, stderr.String())
	}
	s := out.Suite
	if s.Status.Phase != v1alpha1.PhaseSucceeded || s.Status.Progress != "4/4" {
		t.Fatalf("phase %s progress %s", s.Status.Phase, s.Status.Progress)
	}
	if out.BrokerStarts[v1alpha1.SystemKafka] != 1 || out.BrokerStarts[v1alpha1.SystemPulsar] != 1 || len(out.BrokerPids) != 2 {
		t.Errorf("broker starts %v, pids %v: want each cluster started once, one JVM each", out.BrokerStarts, out.BrokerPids)
	}
	log := stderr.String()
	if !strings.Contains(log, "all 2 clusters stand at once: an idle cluster beside the one measured") {
		t.Errorf("the mode and its cost are not said:\n%s", log)
	}
	firstCell := strings.Index(log, "==> cell ")
	for _, c := range s.Status.Clusters {
		if ready := strings.Index(log, "cluster "+c.Name+" ready"); ready < 0 || ready > firstCell {
			t.Errorf("cluster %s was not ready before the first cell:\n%s", c.Name, log)
		}
		if c.Phase != v1alpha1.ClusterTornDown {
			t.Errorf("cluster %s: phase %s, want it torn down", c.Name, c.Phase)
		}
	}
	if stop := strings.Index(log, "==> stopping cluster "); stop < strings.LastIndex(log, "==> cell ") {
		t.Errorf("a cluster stopped before the last cell:\n%s", log)
	}

	// The order run: by each cell's own start, and by its progress line.
	want := "turns-kafka-l2-r11-w-r1 turns-pulsar-l2-r11-w-r1 turns-pulsar-l2-r11-w-r2 turns-kafka-l2-r11-w-r2"
	var byStart []v1alpha1.SuiteCell
	for _, c := range s.Status.Cells {
		if out.Summaries[c.Name] == nil {
			t.Fatalf("cell %s has no summary: %s %s", c.Name, c.Phase, c.Message)
		}
		byStart = append(byStart, c)
	}
	sort.Slice(byStart, func(i, j int) bool {
		return out.Summaries[byStart[i].Name].Start.Before(out.Summaries[byStart[j].Name].Start)
	})
	var started, said []string
	for _, c := range byStart {
		started = append(started, c.Name)
	}
	for _, line := range strings.Split(log, "\n") {
		if name, ok := strings.CutPrefix(line, "==> cell "); ok {
			said = append(said, strings.Fields(name)[0])
		}
	}
	if strings.Join(started, " ") != want || strings.Join(said, " ") != want {
		t.Errorf("cells ran in the order\n%s (by start)\n%s (by progress line)\nwant\n%s", strings.Join(started, " "), strings.Join(said, " "), want)
	}
	// status.cells and the tables keep the plan's order.
	var planned []string
	for _, c := range s.Status.Cells {
		planned = append(planned, c.Name)
	}
	if got := strings.Join(planned, " "); got != "turns-kafka-l2-r11-w-r1 turns-kafka-l2-r11-w-r2 turns-pulsar-l2-r11-w-r1 turns-pulsar-l2-r11-w-r2" {
		t.Errorf("status.cells = %s", got)
	}
}

// TestRunSuiteCancelledStopsEveryCluster: a suite whose context ends in
// its first cell, both clusters standing, stops both; no JVM is left.
func TestRunSuiteCancelledStopsEveryCluster(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	writeFile(t, path, turnsSuite)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stderr lockedBuffer
	go func() {
		select {
		case <-stderr.when(`==> running "tiny"`):
			cancel()
		case <-ctx.Done():
		}
	}()
	out, err := RunSuite(ctx, SuiteOptions{SuiteFile: path, ResultsDir: filepath.Join(dir, "results"), Stdout: io.Discard, Stderr: &stderr})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the context's", err)
	}
	if out == nil || len(out.BrokerPids) != 2 {
		t.Fatalf("outcome %+v: want both clusters started\n%s", out, stderr.String())
	}
	for _, pid := range out.BrokerPids {
		if localbrokers.PidAlive(pid) {
			t.Errorf("broker pid %d still runs after the suite returned", pid)
			_ = localbrokers.StopPid(pid, 0)
		}
	}
	for _, c := range out.Suite.Status.Clusters {
		if c.Phase != v1alpha1.ClusterTornDown {
			t.Errorf("cluster %s: phase %s, want it torn down", c.Name, c.Phase)
		}
	}
	if n := strings.Count(stderr.String(), "==> cell "); n != 1 {
		t.Errorf("%d cells started, want the one cancelled only:\n%s", n, stderr.String())
	}
}

// TestRunSuiteStopsAcrossClusters: with the clusters standing together,
// a cell failed under failurePolicy Stop still ends the suite, the cells
// of the other cluster skipped, not run. No broker is needed: the first
// cell (Kafka's repeat 1) fails before it connects, for want of --secrets.
func TestRunSuiteStopsAcrossClusters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	writeFile(t, path, `apiVersion: streambench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: stop}
spec:
  systems:
  - system: kafka
    cluster:
      existing:
        bootstrapServers: 127.0.0.1:1
        authentication: {mechanism: SCRAM-SHA-512, username: alice, password: {name: alice, key: password}}
    durabilities: [{level: 2}]
  - system: pulsar
    cluster: {existing: {serviceURL: "pulsar://127.0.0.1:1", adminURL: "http://127.0.0.1:1"}}
    durabilities: [{level: 2}]
  workloads: [{name: w, spec: {messageSize: 1024, producerRate: 10, testDurationMinutes: 0.1}}]
  repeats: 2
  failurePolicy: Stop
`)
	var stderr lockedBuffer
	out, err := RunSuite(context.Background(), SuiteOptions{SuiteFile: path, ResultsDir: filepath.Join(dir, "results"), Stdout: io.Discard, Stderr: &stderr})
	if err == nil || !strings.Contains(err.Error(), "--secrets") {
		t.Fatalf("err = %v, want the first cell's, naming --secrets", err)
	}
	if !strings.Contains(stderr.String(), "repeats interleaved across the 2 clusters") {
		t.Errorf("not run with the clusters together:\n%s", stderr.String())
	}
	var got []string
	for _, c := range out.Suite.Status.Cells {
		got = append(got, strings.TrimPrefix(c.Name, "stop-")+" "+string(c.Phase))
	}
	if want := "kafka-l2-w-r1 Failed, kafka-l2-w-r2 Skipped, pulsar-l2-w-r1 Skipped, pulsar-l2-w-r2 Skipped"; strings.Join(got, ", ") != want {
		t.Errorf("cells: %s\nwant   %s", strings.Join(got, ", "), want)
	}
	if n := strings.Count(stderr.String(), "==> cell "); n != 1 {
		t.Errorf("%d cells started, want only the one that failed:\n%s", n, stderr.String())
	}
	if out.Suite.Status.Phase != v1alpha1.PhaseFailed {
		t.Errorf("phase %s", out.Suite.Status.Phase)
	}
}

func TestLoadSuiteRefusesSecuritiesLocalBrokersCannotServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	for _, tt := range []struct{ system, want string }{
		{`{system: kafka, cluster: {managed: {}}, durabilities: [{level: 2}], securities: [{}, {tls: true}]}`,
			"spec.systems[0].securities: local mode starts brokers with plaintext, anonymous listeners only, so it cannot measure security settings; run the suite in a cluster (kubectl create -f " + path + "), or remove securities"},
		{`{system: pulsar, cluster: {managed: {security: {authentication: token}}}, durabilities: [{level: 2}]}`,
			"spec.systems[0].cluster.managed.security: local mode starts brokers with plaintext, anonymous listeners only"},
	} {
		writeFile(t, path, "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkSuite\nmetadata: {name: s}\nspec:\n  systems: ["+tt.system+"]\n  workloads: [{name: w, spec: {messageSize: 100}}]\n")
		if _, err := LoadSuite(path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	if _, err := LoadSuite(filepath.Join("..", "..", "config", "samples", "suite-security-cost.yaml")); err == nil || !strings.Contains(err.Error(), "spec.systems[0].securities: local mode") {
		t.Errorf("the security sample in local mode: err = %v", err)
	}
	// A plaintext setting said out loud is what local brokers serve.
	writeFile(t, path, "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkSuite\nmetadata: {name: s}\nspec:\n  systems: [{system: kafka, cluster: {managed: {security: {}}}, durabilities: [{level: 2}]}]\n  workloads: [{name: w, spec: {messageSize: 100}}]\n")
	if _, err := LoadSuite(path); err != nil {
		t.Errorf("security: {} is refused: %v", err)
	}
}

// TestRunSuiteReadsSecrets: every cell of a suite on a secured existing
// cluster gets --secrets; a key the file lacks fails each cell before
// anything connects, naming the key — so the file reached the cells.
func TestRunSuiteReadsSecrets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	writeFile(t, path, `apiVersion: streambench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: sec}
spec:
  systems:
  - system: kafka
    cluster:
      existing:
        bootstrapServers: 127.0.0.1:1
        tls: {ca: {name: kafka-ca, key: ca.crt}}
        authentication: {mechanism: SCRAM-SHA-512, username: alice, password: {name: alice, key: password}}
    durabilities: [{level: 2}]
  workloads: [{name: w, spec: {messageSize: 1024, producerRate: 10, testDurationMinutes: 0.1}}]
`)
	secrets := filepath.Join(dir, "secrets.yaml")
	writeFile(t, secrets, "apiVersion: v1\nkind: Secret\nmetadata: {name: kafka-ca}\nstringData: {ca.crt: x}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: alice}\nstringData: {other: y}\n")
	var stderr strings.Builder
	out, err := RunSuite(context.Background(), SuiteOptions{SuiteFile: path, SecretsFile: secrets, ResultsDir: filepath.Join(dir, "results"), Stdout: io.Discard, Stderr: &stderr})
	if err == nil {
		t.Fatal("a cell ran without the password key")
	}
	for _, want := range []string{"alice", "password", secrets} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if out == nil || len(out.Suite.Status.Cells) != 1 || out.Suite.Status.Cells[0].Phase != v1alpha1.CellFailed {
		t.Fatalf("the cell did not fail: %+v", out)
	}
	if _, err := RunSuite(context.Background(), SuiteOptions{SuiteFile: path, ResultsDir: filepath.Join(dir, "results"), Stdout: io.Discard, Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "--secrets") {
		t.Errorf("without --secrets: %v, want the flag named", err)
	}
}
