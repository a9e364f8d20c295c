package suite

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func level(l v1alpha1.Level) v1alpha1.DurabilitySpec { return v1alpha1.DurabilitySpec{Level: &l} }

func bypass() v1alpha1.DurabilitySpec {
	return v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Replicas: 3, AckReplicas: 2, Mode: v1alpha1.ReplicationSync},
		Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync, Journal: v1alpha1.JournalBypass},
	}
}

func testSuite(name string, systems ...v1alpha1.SuiteSystem) *v1alpha1.BenchmarkSuite {
	return &v1alpha1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       v1alpha1.BenchmarkSuiteSpec{Systems: systems},
	}
}

func managed(system v1alpha1.System, ds ...v1alpha1.DurabilitySpec) v1alpha1.SuiteSystem {
	return v1alpha1.SuiteSystem{System: system, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 3}}, Durabilities: ds}
}

var twoWorkloads = []v1alpha1.ResolvedWorkload{
	{Name: "maxtput", Spec: v1alpha1.WorkloadSpec{MessageSize: 1024}},
	{Name: "lat200k", Spec: v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 200000}},
}

func TestNew(t *testing.T) {
	tests := []struct {
		name      string
		suite     *v1alpha1.BenchmarkSuite
		clusters  []string
		settings  []map[string]string
		cells     []string
		cellOnCls []string
	}{{
		name:     "one Kafka cluster serves every level: its durability is topic and producer settings",
		suite:    testSuite("m", managed(v1alpha1.SystemKafka, level(1), level(2), level(3), level(4))),
		clusters: []string{"m-kafka"},
		settings: []map[string]string{nil},
		cells: []string{"m-kafka-l1-maxtput", "m-kafka-l1-lat200k", "m-kafka-l2-maxtput", "m-kafka-l2-lat200k",
			"m-kafka-l3-maxtput", "m-kafka-l3-lat200k", "m-kafka-l4-maxtput", "m-kafka-l4-lat200k"},
	}, {
		name: "Pulsar needs a cluster per journal configuration, and the cells of one cluster run together",
		// Levels 1 and 3 share journalSyncData=true; 2 and 4 the async
		// journal; the bypass is a third.
		suite:    testSuite("m", managed(v1alpha1.SystemPulsar, level(1), level(2), level(3), level(4), bypass())),
		clusters: []string{"m-pulsar-jsync", "m-pulsar-jasync", "m-pulsar-jbypass"},
		settings: []map[string]string{
			{"journalWriteData": "true", "journalSyncData": "true"},
			{"journalWriteData": "true", "journalSyncData": "false", "journalPageCacheFlushIntervalMSec": "1000"},
			{"journalWriteData": "false", "journalSyncData": "false"},
		},
		cells: []string{"m-pulsar-l1-maxtput", "m-pulsar-l1-lat200k", "m-pulsar-l3-maxtput", "m-pulsar-l3-lat200k",
			"m-pulsar-l2-maxtput", "m-pulsar-l2-lat200k", "m-pulsar-l4-maxtput", "m-pulsar-l4-lat200k",
			"m-pulsar-l2-bypass-maxtput", "m-pulsar-l2-bypass-lat200k"},
		cellOnCls: []string{"m-pulsar-jsync", "m-pulsar-jsync", "m-pulsar-jsync", "m-pulsar-jsync",
			"m-pulsar-jasync", "m-pulsar-jasync", "m-pulsar-jasync", "m-pulsar-jasync", "m-pulsar-jbypass", "m-pulsar-jbypass"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.suite, twoWorkloads)
			if err != nil {
				t.Fatal(err)
			}
			var clusters []string
			for i, c := range p.Clusters {
				clusters = append(clusters, string(c.Name))
				if !c.Managed {
					t.Errorf("cluster %s: want managed", c.Name)
				}
				if got, want := c.BrokerSettings, tt.settings[i]; len(got) != len(want) || !equalMaps(got, want) {
					t.Errorf("cluster %s settings = %v, want %v", c.Name, got, want)
				}
			}
			if strings.Join(clusters, " ") != strings.Join(tt.clusters, " ") {
				t.Errorf("clusters = %v, want %v", clusters, tt.clusters)
			}
			var cells []string
			for i, c := range p.Cells {
				cells = append(cells, string(c.Name))
				if tt.cellOnCls != nil && string(c.Cluster) != tt.cellOnCls[i] {
					t.Errorf("cell %s on %s, want %s", c.Name, c.Cluster, tt.cellOnCls[i])
				}
			}
			if strings.Join(cells, " ") != strings.Join(tt.cells, " ") {
				t.Errorf("cells = %v, want %v", cells, tt.cells)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestNewNamesStayRunNames(t *testing.T) {
	s := testSuite("a-twenty-char-suite1", managed(v1alpha1.SystemPulsar, bypass(), level(1)))
	p, err := New(s, []v1alpha1.ResolvedWorkload{{Name: "sixteen-chars-wl"}, {Name: "sixteen-chars-wm"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[CellName]bool{}
	for _, c := range p.Cells {
		if len(c.Name) > MaxRunName {
			t.Errorf("cell name %s is %d characters, BenchmarkRun allows %d", c.Name, len(c.Name), MaxRunName)
		}
		if seen[c.Name] {
			t.Errorf("two cells named %s", c.Name)
		}
		seen[c.Name] = true
	}
	if len(seen) != 4 {
		t.Errorf("%d distinct cells, want 4", len(seen))
	}
}

func TestNewRefusesTheSameCellTwice(t *testing.T) {
	_, err := New(testSuite("m", managed(v1alpha1.SystemKafka, level(2), level(2))), twoWorkloads)
	if err == nil || !strings.Contains(err.Error(), "spec.systems[0].durabilities[0]") || !strings.Contains(err.Error(), "durabilities[1]") || !strings.Contains(err.Error(), "remove one") {
		t.Fatalf("err = %v, want both durabilities named and the fix", err)
	}
}

func TestHostRunOfKafkaIsLevel2WhateverTheCells(t *testing.T) {
	s := testSuite("m", managed(v1alpha1.SystemKafka, level(1)))
	s.Status.Cells = []v1alpha1.SuiteCell{{Name: "m-kafka-l1-x", Cluster: "m-kafka", Durability: level(1)}}
	host, err := HostRun(s, v1alpha1.SuiteCluster{Name: "m-kafka", System: v1alpha1.SystemKafka, Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	// A broker-wide log.flush.interval.messages=1 would give level 1 to
	// every topic without its own flush.messages.
	if host.Spec.Durability.Level == nil || *host.Spec.Durability.Level != v1alpha1.Level2 {
		t.Errorf("host durability = %+v, want level 2", host.Spec.Durability)
	}
	if host.Name != "m-kafka" || host.Spec.Cluster.Managed == nil {
		t.Errorf("host = %s managed=%v", host.Name, host.Spec.Cluster.Managed != nil)
	}
}

func TestChildRunIsExistingModeAgainstTheCluster(t *testing.T) {
	s := testSuite("m", managed(v1alpha1.SystemPulsar, level(1)))
	s.Status.Workloads = twoWorkloads
	cell := v1alpha1.SuiteCell{Name: "m-pulsar-l1-maxtput", System: v1alpha1.SystemPulsar, Workload: "maxtput", Durability: level(1), Cluster: "m-pulsar-jsync"}
	cl := v1alpha1.SuiteCluster{Name: "m-pulsar-jsync", System: v1alpha1.SystemPulsar, Managed: true,
		Endpoints: &v1alpha1.BrokerEndpoints{ServiceURL: "pulsar://p:6650", AdminURL: "http://p:8080"}}
	run, err := ChildRun(s, cell, cl)
	if err != nil {
		t.Fatal(err)
	}
	e := run.Spec.Cluster.Existing
	if e == nil || e.ServiceURL != "pulsar://p:6650" || e.AdminURL != "http://p:8080" || run.Spec.Cluster.Managed != nil {
		t.Errorf("cluster = %+v", run.Spec.Cluster)
	}
	if *run.Spec.Durability.Level != v1alpha1.Level1 || run.Spec.Workload.Name != "maxtput" || run.Spec.Workload.MessageSize != 1024 {
		t.Errorf("durability %+v workload %+v", run.Spec.Durability, run.Spec.Workload)
	}
	if run.Labels[LabelSuite] != "m" || run.Labels[LabelCell] != cell.Name {
		t.Errorf("labels = %v", run.Labels)
	}
	cl.Endpoints = nil
	if _, err := ChildRun(s, cell, cl); err == nil {
		t.Error("a cluster without endpoints gave a run")
	}
}

func TestProgress(t *testing.T) {
	cells := []v1alpha1.SuiteCell{{Phase: v1alpha1.CellSucceeded}, {Phase: v1alpha1.CellFailed}, {Phase: v1alpha1.CellSkipped}, {Phase: v1alpha1.CellRunning}, {Phase: v1alpha1.CellWaiting}}
	if got := Progress(cells); got != "3/5" {
		t.Errorf("Progress = %s, want 3/5", got)
	}
}

func withSecurities(sys v1alpha1.SuiteSystem, secs ...v1alpha1.ManagedSecurity) v1alpha1.SuiteSystem {
	sys.Securities = secs
	return sys
}

var (
	plain    = v1alpha1.ManagedSecurity{}
	tlsOnly  = v1alpha1.ManagedSecurity{TLS: true}
	tlsScram = v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}
	mtls     = v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS}
	tlsToken = v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}
)

func TestNewSecurities(t *testing.T) {
	oneWorkload := twoWorkloads[:1]
	secured := managed(v1alpha1.SystemKafka, level(2))
	secured.Cluster.Managed.Security = &tlsScram
	tests := []struct {
		name string
		sys  v1alpha1.SuiteSystem
		// clusters are "name security-label" (security-label "-" when
		// the cluster records none), cells "name cluster security".
		clusters []string
		cells    []string
	}{{
		name:     "a Kafka cluster per security setting, each with every level; the names say the setting",
		sys:      withSecurities(managed(v1alpha1.SystemKafka, level(1), level(2)), plain, tlsOnly, tlsScram),
		clusters: []string{"m-kafka-plain plain", "m-kafka-tls tls", "m-kafka-tls-scram tls-scram"},
		cells: []string{
			"m-kafka-plain-l1-maxtput m-kafka-plain plain", "m-kafka-plain-l2-maxtput m-kafka-plain plain",
			"m-kafka-tls-l1-maxtput m-kafka-tls tls", "m-kafka-tls-l2-maxtput m-kafka-tls tls",
			"m-kafka-tls-scram-l1-maxtput m-kafka-tls-scram tls-scram", "m-kafka-tls-scram-l2-maxtput m-kafka-tls-scram tls-scram",
		},
	}, {
		name: "Pulsar: a cluster per security and journal configuration",
		sys:  withSecurities(managed(v1alpha1.SystemPulsar, level(1), level(2)), plain, tlsToken),
		clusters: []string{"m-pulsar-plain-jsync plain", "m-pulsar-plain-jasync plain",
			"m-pulsar-tls-token-jsync tls-token", "m-pulsar-tls-token-jasync tls-token"},
		cells: []string{
			"m-pulsar-plain-l1-maxtput m-pulsar-plain-jsync plain", "m-pulsar-plain-l2-maxtput m-pulsar-plain-jasync plain",
			"m-pulsar-tls-token-l1-maxtput m-pulsar-tls-token-jsync tls-token", "m-pulsar-tls-token-l2-maxtput m-pulsar-tls-token-jasync tls-token",
		},
	}, {
		name:     "mutual TLS",
		sys:      withSecurities(managed(v1alpha1.SystemKafka, level(2)), mtls),
		clusters: []string{"m-kafka-mtls mtls"},
		cells:    []string{"m-kafka-mtls-l2-maxtput m-kafka-mtls mtls"},
	}, {
		name:     "without securities the names are as before, and no security is recorded",
		sys:      managed(v1alpha1.SystemKafka, level(2)),
		clusters: []string{"m-kafka -"},
		cells:    []string{"m-kafka-l2-maxtput m-kafka "},
	}, {
		name:     "cluster.managed.security alone: the names are as before; the cluster and the cells say the setting",
		sys:      secured,
		clusters: []string{"m-kafka tls-scram"},
		cells:    []string{"m-kafka-l2-maxtput m-kafka tls-scram"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(testSuite("m", tt.sys), oneWorkload)
			if err != nil {
				t.Fatal(err)
			}
			clusters, cells := Status(p)
			var gotClusters, gotCells []string
			for _, c := range clusters {
				sec := "-"
				if c.Security != nil {
					sec = c.Security.Label()
				}
				gotClusters = append(gotClusters, c.Name+" "+sec)
			}
			for _, c := range cells {
				gotCells = append(gotCells, c.Name+" "+c.Cluster+" "+c.Security)
			}
			if strings.Join(gotClusters, "\n") != strings.Join(tt.clusters, "\n") {
				t.Errorf("clusters:\n%s\nwant:\n%s", strings.Join(gotClusters, "\n"), strings.Join(tt.clusters, "\n"))
			}
			if strings.Join(gotCells, "\n") != strings.Join(tt.cells, "\n") {
				t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(gotCells, "\n"), strings.Join(tt.cells, "\n"))
			}
		})
	}
}

func TestNewRecordsEachClustersOwnSecurity(t *testing.T) {
	s := testSuite("m", withSecurities(managed(v1alpha1.SystemKafka, level(2)), plain, tlsScram))
	p, err := New(s, twoWorkloads)
	if err != nil {
		t.Fatal(err)
	}
	// Plain is recorded as a setting ({}), not left out: it overrides the
	// system's cluster.managed.security in HostRun.
	if c := p.Clusters[0].Security; c == nil || c.Secured() {
		t.Errorf("plain cluster records %+v, want {}", c)
	}
	if c := p.Clusters[1].Security; c == nil || *c != tlsScram {
		t.Errorf("tls-scram cluster records %+v", c)
	}
	// A copy: the plan's settings are not the spec's.
	p.Clusters[1].Security.TLS = false
	if !s.Spec.Systems[0].Securities[1].TLS {
		t.Error("the plan shares the spec's security setting")
	}
}

func TestNewRefusesASecurityTwice(t *testing.T) {
	// {} and {tls: false} are one setting; the schema refuses it, and so
	// does the plan, for a suite that did not pass the API server.
	s := testSuite("m", withSecurities(managed(v1alpha1.SystemKafka, level(2)), plain, tlsOnly, v1alpha1.ManagedSecurity{TLS: false}))
	_, err := New(s, twoWorkloads)
	if err == nil || !strings.Contains(err.Error(), "spec.systems[0].securities[0] and securities[2] are the same setting (plain); remove one") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewSecurityNamesStayRunNames(t *testing.T) {
	s := testSuite("a-twenty-char-suite1", withSecurities(managed(v1alpha1.SystemPulsar, bypass(), level(1)), plain, tlsOnly, v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthToken}, tlsToken))
	p, err := New(s, []v1alpha1.ResolvedWorkload{{Name: "sixteen-chars-wl"}, {Name: "sixteen-chars-wm"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range p.Clusters {
		if len(c.Name) > MaxRunName || seen[string(c.Name)] {
			t.Errorf("cluster %s: %d characters, or twice", c.Name, len(c.Name))
		}
		seen[string(c.Name)] = true
	}
	for _, c := range p.Cells {
		if len(c.Name) > MaxRunName || seen[string(c.Name)] {
			t.Errorf("cell %s: %d characters, or twice", c.Name, len(c.Name))
		}
		seen[string(c.Name)] = true
	}
	if len(p.Clusters) != 8 || len(p.Cells) != 16 {
		t.Errorf("%d clusters and %d cells, want 8 (4 securities × 2 journals) and 16", len(p.Clusters), len(p.Cells))
	}
}

// TestNewRepeatsInterleaveWithinACluster: with spec.repeats every cell runs
// that many times, the cells of one cluster alternating in order (A B, B A,
// A B), the clusters still one after the other, each repeat a run name of
// its own that says which cell it repeats.
func TestNewRepeatsInterleaveWithinACluster(t *testing.T) {
	s := testSuite("m", managed(v1alpha1.SystemKafka, level(1), level(2)), managed(v1alpha1.SystemPulsar, level(1), level(2)))
	s.Spec.Repeats = 3
	one := []v1alpha1.ResolvedWorkload{twoWorkloads[0]}
	p, err := New(s, one)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Cells {
		got = append(got, string(c.RepeatOf)+"#"+string(rune('0'+c.Repeat))+"@"+string(c.Cluster))
		if len(c.Name) > MaxRunName || !strings.HasPrefix(string(c.Name), string(c.RepeatOf)) {
			t.Errorf("repeat %d of %s is named %q: want a run name (at most %d) that starts with the cell's", c.Repeat, c.RepeatOf, c.Name, MaxRunName)
		}
	}
	want := []string{
		// Kafka's levels share one cluster: interleaved.
		"m-kafka-l1-maxtput#1@m-kafka", "m-kafka-l2-maxtput#1@m-kafka",
		"m-kafka-l2-maxtput#2@m-kafka", "m-kafka-l1-maxtput#2@m-kafka",
		"m-kafka-l1-maxtput#3@m-kafka", "m-kafka-l2-maxtput#3@m-kafka",
		// Pulsar's have a cluster each: one after the other.
		"m-pulsar-l1-maxtput#1@m-pulsar-jsync", "m-pulsar-l1-maxtput#2@m-pulsar-jsync", "m-pulsar-l1-maxtput#3@m-pulsar-jsync",
		"m-pulsar-l2-maxtput#1@m-pulsar-jasync", "m-pulsar-l2-maxtput#2@m-pulsar-jasync", "m-pulsar-l2-maxtput#3@m-pulsar-jasync",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("cells =\n%v\nwant\n%v", got, want)
	}
	if p.Cells[0].Name != "m-kafka-l1-maxtput-r1" {
		t.Errorf("the first repeat is named %q, want m-kafka-l1-maxtput-r1", p.Cells[0].Name)
	}
	_, cells := Status(p)
	if c := cells[3]; c.Repeat != 2 || c.RepeatOf != "m-kafka-l1-maxtput" || c.Name != "m-kafka-l1-maxtput-r2" {
		t.Errorf("status.cells[3] = %+v, want repeat 2 of m-kafka-l1-maxtput", c)
	}

	// Not repeated (0 before defaulting, or 1): the names are the cells'.
	for _, n := range []int32{0, 1} {
		s.Spec.Repeats = n
		p, err := New(s, one)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Cells) != 4 || p.Cells[0].Name != "m-kafka-l1-maxtput" || p.Cells[0].Repeat != 0 || p.Cells[0].RepeatOf != "" {
			t.Errorf("repeats %d: cells %+v, want the 4 cells as named without repeats", n, p.Cells)
		}
	}

	// More child runs than a status holds: refused, naming the field.
	big := testSuite("m", managed(v1alpha1.SystemKafka, level(1), level(2), level(3), level(4)))
	big.Spec.Repeats = 20
	var many []v1alpha1.ResolvedWorkload
	for i := 0; i < 16; i++ {
		many = append(many, v1alpha1.ResolvedWorkload{Name: "w" + string(rune('a'+i))})
	}
	if _, err := New(big, many); err == nil || !strings.Contains(err.Error(), "spec.repeats: 20 repeats of the suite's 64 cells are 1280 child runs") {
		t.Errorf("1,280 child runs: %v", err)
	}

	// A name at the limit still gets a run name per repeat, each its own.
	long := testSuite(strings.Repeat("s", 30), managed(v1alpha1.SystemKafka, level(1)))
	long.Spec.Repeats = 12
	p, err = New(long, one)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[CellName]bool{}
	for _, c := range p.Cells {
		if len(c.Name) > MaxRunName || seen[c.Name] {
			t.Errorf("repeat %d named %q: too long or twice", c.Repeat, c.Name)
		}
		seen[c.Name] = true
	}
}
