package suite

import (
	"reflect"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/clientsecurity"
)

func secretPath(r v1alpha1.SecretKeyRef) string {
	return "/etc/streambench/secrets/" + r.Name + "/" + r.Key
}

// plannedSuite is a suite planned as the controller plans it, every
// cluster ready at made-up endpoints (secured ones when the cluster is).
func plannedSuite(t *testing.T, sys v1alpha1.SuiteSystem) *v1alpha1.BenchmarkSuite {
	t.Helper()
	s := testSuite("m", sys)
	s.Status.Workloads = twoWorkloads[:1]
	p, err := New(s, s.Status.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	s.Status.Clusters, s.Status.Cells = Status(p)
	for i := range s.Status.Clusters {
		c := &s.Status.Clusters[i]
		c.Phase = v1alpha1.ClusterReady
		if c.System == v1alpha1.SystemKafka {
			c.Endpoints = &v1alpha1.BrokerEndpoints{BootstrapServers: c.Name + "-kafka-bootstrap.ns.svc:9092"}
		} else {
			c.Endpoints = &v1alpha1.BrokerEndpoints{ServiceURL: "pulsar://p:6650", AdminURL: "http://p:8080"}
			if c.Security.Secured() && c.Security.TLS {
				c.Endpoints = &v1alpha1.BrokerEndpoints{ServiceURL: "pulsar+ssl://p:6651", AdminURL: "https://p:8443"}
			}
		}
	}
	return s
}

// The property that makes a secured suite right: each cell, a run in
// existing mode, mounts the Secret keys and gives its driver the files
// that the run deploying its cluster (HostRun) would have, and the
// cluster is deployed with its own security, not the system's.
func TestChildRunReadsWhatItsClusterGives(t *testing.T) {
	withBase := func(sys v1alpha1.SuiteSystem, base *v1alpha1.ManagedSecurity) v1alpha1.SuiteSystem {
		sys.Cluster.Managed.Security = base
		return sys
	}
	tests := []struct {
		name string
		sys  v1alpha1.SuiteSystem
		// wantKeys are each cluster's mounted Secret keys, in plan order.
		wantKeys [][]string
	}{
		{"Kafka plain, TLS, TLS+SCRAM, mutual TLS",
			withSecurities(managed(v1alpha1.SystemKafka, level(2)), plain, tlsOnly, tlsScram, mtls),
			[][]string{
				nil,
				{"m-kafka-tls-cluster-ca-cert/ca.crt"},
				{"m-kafka-tls-scram-cluster-ca-cert/ca.crt", "m-kafka-tls-scram-client/password"},
				{"m-kafka-mtls-cluster-ca-cert/ca.crt", "m-kafka-mtls-client/user.crt", "m-kafka-mtls-client/user.key"},
			}},
		{"Pulsar plain and TLS+token, each journal configuration",
			withSecurities(managed(v1alpha1.SystemPulsar, level(1), level(2)), plain, tlsToken),
			[][]string{
				nil, nil,
				{"m-pulsar-tls-token-jsync-pulsar-ca-tls/ca.crt", "m-pulsar-tls-token-jsync-pulsar-token-streambench/TOKEN"},
				{"m-pulsar-tls-token-jasync-pulsar-ca-tls/ca.crt", "m-pulsar-tls-token-jasync-pulsar-token-streambench/TOKEN"},
			}},
		{"the system's cluster.managed.security, without securities",
			withBase(managed(v1alpha1.SystemKafka, level(2)), &tlsScram),
			[][]string{{"m-kafka-cluster-ca-cert/ca.crt", "m-kafka-client/password"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := plannedSuite(t, tt.sys)
			if len(s.Status.Clusters) != len(tt.wantKeys) {
				t.Fatalf("%d clusters, want %d", len(s.Status.Clusters), len(tt.wantKeys))
			}
			for i, cl := range s.Status.Clusters {
				host, err := HostRun(s, cl)
				if err != nil {
					t.Fatal(err)
				}
				if got := host.Spec.Cluster.Managed.Security; !reflect.DeepEqual(got, cl.Security) {
					t.Errorf("cluster %s is deployed with security %+v, want its own %+v", cl.Name, got, cl.Security)
				}
				hostRefs, err := clientsecurity.RunRefs(host)
				if err != nil {
					t.Fatal(err)
				}
				hostSec, err := clientsecurity.RunResolve(host, secretPath)
				if err != nil {
					t.Fatal(err)
				}
				var keys []string
				for _, r := range hostRefs {
					keys = append(keys, r.Name+"/"+r.Key)
				}
				if !reflect.DeepEqual(keys, tt.wantKeys[i]) {
					t.Errorf("cluster %s: its clients read %v, want %v", cl.Name, keys, tt.wantKeys[i])
				}
				cells := 0
				for _, cell := range s.Status.Cells {
					if cell.Cluster != cl.Name {
						continue
					}
					cells++
					run, err := ChildRun(s, cell, cl)
					if err != nil {
						t.Fatal(err)
					}
					if run.Spec.Cluster.Managed != nil || run.Spec.Cluster.Existing == nil {
						t.Fatalf("cell %s is not in existing mode: %+v", cell.Name, run.Spec.Cluster)
					}
					refs, err := clientsecurity.RunRefs(run)
					if err != nil {
						t.Fatal(err)
					}
					var cellKeys []string
					for _, r := range refs {
						cellKeys = append(cellKeys, r.Name+"/"+r.Key)
					}
					if !reflect.DeepEqual(cellKeys, keys) {
						t.Errorf("cell %s mounts %v, its cluster's clients read %v", cell.Name, cellKeys, keys)
					}
					sec, err := clientsecurity.RunResolve(run, secretPath)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(sec, hostSec) {
						t.Errorf("cell %s's driver gets %+v, its cluster's clients %+v", cell.Name, sec, hostSec)
					}
				}
				if cells == 0 {
					t.Errorf("no cell on cluster %s", cl.Name)
				}
			}
		})
	}
}

func TestHostRunKeepsTheSystemsSecurityForAStatusWithoutOne(t *testing.T) {
	// A status written before clusters recorded their security: the
	// system's cluster.managed.security still deploys the cluster.
	sys := managed(v1alpha1.SystemKafka, level(2))
	sys.Cluster.Managed.Security = &tlsScram
	s := testSuite("m", sys)
	s.Status.Cells = []v1alpha1.SuiteCell{{Name: "m-kafka-l2-x", Cluster: "m-kafka", Durability: level(2)}}
	host, err := HostRun(s, v1alpha1.SuiteCluster{Name: "m-kafka", System: v1alpha1.SystemKafka, Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := host.Spec.Cluster.Managed.Security; got == nil || *got != tlsScram {
		t.Errorf("host security = %+v, want %+v", got, tlsScram)
	}
	if host.Spec.Cluster.Managed.Brokers != 3 {
		t.Errorf("host brokers = %d: the rest of cluster.managed is kept", host.Spec.Cluster.Managed.Brokers)
	}
}

// A suite's spec.cost prices every cell: each child run carries a copy.
func TestChildRunCarriesTheSuitesCost(t *testing.T) {
	s := plannedSuite(t, managed(v1alpha1.SystemKafka, level(2)))
	s.Spec.Cost = &v1alpha1.CostSpec{PriceModelRef: &v1alpha1.ConfigMapFileRef{Name: "prices"}}
	cl := s.Status.Clusters[0]
	cl.Endpoints = &v1alpha1.BrokerEndpoints{BootstrapServers: "kafka:9092"}
	run, err := ChildRun(s, s.Status.Cells[0], cl)
	if err != nil {
		t.Fatal(err)
	}
	if run.Spec.Cost == nil || run.Spec.Cost.PriceModelRef.Name != "prices" || run.Spec.Cost == s.Spec.Cost {
		t.Errorf("the cell's spec.cost %+v, want a copy of the suite's", run.Spec.Cost)
	}
}
