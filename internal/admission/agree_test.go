package admission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/internal/apiservertest"
)

// TestAgreesWithTheAPIServer sends the same objects, good and bad, to a
// real kube-apiserver (envtest, with the same CRDs installed; a dry-run
// create with kubectl's strict field validation) and to Create: both must
// accept or both refuse, an accepted object must come out with the same
// spec (the defaults), and a refused one must be refused for the same
// fields.
func TestAgreesWithTheAPIServer(t *testing.T) {
	c := startAPIServer(t)
	cases := agreementCases(t)
	accepted, refused := 0, 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := Decode([]byte(tc.doc))
			if err != nil {
				t.Fatalf("test input: %v", err)
			}
			kind := BenchmarkRun()
			if obj["kind"] == "BenchmarkSuite" {
				kind = BenchmarkSuite()
			}
			server := &unstructured.Unstructured{Object: deepCopy(t, obj)}
			if server.GetNamespace() == "" {
				server.SetNamespace("default")
			}
			serverErr := c.Create(context.Background(), server, client.DryRunAll, client.FieldValidation("Strict"))

			local := deepCopy(t, obj)
			localErrs := kind.Create(local)

			switch {
			case serverErr == nil && len(localErrs) > 0:
				t.Fatalf("the API server accepts, Create refuses: %v", localErrs.ToAggregate())
			case serverErr != nil && len(localErrs) == 0:
				t.Fatalf("the API server refuses (%v), Create accepts", serverErr)
			case serverErr == nil:
				accepted++
				if got, want := dump(t, local["spec"]), dump(t, server.Object["spec"]); got != want {
					t.Errorf("defaulted spec differs\n  API server: %s\n  Create:     %s", want, got)
				}
				if _, ok := local["status"]; ok {
					t.Errorf("Create kept a status; a create drops it")
				}
			default:
				refused++
				if meta.IsNoMatchError(serverErr) {
					// A version the CRD does not serve has no endpoint.
					return
				}
				if !apierrors.IsInvalid(serverErr) && !apierrors.IsBadRequest(serverErr) {
					t.Fatalf("the API server refuses for another reason than the object: %v", serverErr)
				}
				for _, f := range refusedFields(localErrs) {
					if !strings.Contains(serverErr.Error(), f) {
						t.Errorf("Create refuses %s, the API server does not name it: %v\n  Create: %v", f, serverErr, localErrs.ToAggregate())
					}
				}
			}
		})
	}
	// Both sides of the table must be exercised for the comparison to mean
	// anything.
	if accepted < 10 || refused < 30 {
		t.Fatalf("%d accepted, %d refused of %d; the table should hold many of each", accepted, refused, len(cases))
	}
	t.Logf("%d objects: %d accepted by both, %d refused by both", len(cases), accepted, refused)
}

// refusedFields are the fields Create names. With strict field
// validation the API server stops at unknown fields (a decoding error), so
// when there are any, only they are compared.
func refusedFields(errs field.ErrorList) []string {
	var unknown, all []string
	for _, e := range errs {
		if e.Field == "" || e.Field == "<nil>" {
			continue
		}
		all = append(all, e.Field)
		if strings.HasPrefix(e.Detail, "unknown field") {
			unknown = append(unknown, e.Field)
		}
	}
	if len(unknown) > 0 {
		return unknown
	}
	return all
}

type agreementCase struct{ name, doc string }

// agreementCases: every sample users apply, and good and bad variations
// of a run and a suite, one rule of the CRD each.
func agreementCases(t *testing.T) []agreementCase {
	var cases []agreementCase
	samples, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*-*.yaml"))
	if err != nil || len(samples) < 5 {
		t.Fatalf("samples: %v (%d)", err, len(samples))
	}
	for _, f := range samples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, agreementCase{"sample " + filepath.Base(f), string(b)})
	}
	const head = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: agree}\n"
	kafka := func(extra string) string {
		return head + "spec:\n  system: kafka\n  cluster: {managed: {brokers: 3}}\n  workload: {messageSize: 1024}\n" + extra
	}
	pulsar := func(extra string) string {
		return head + "spec:\n  system: pulsar\n  cluster: {managed: {brokers: 1}}\n  workload: {messageSize: 1024}\n" + extra
	}
	with := func(doc, old, new string) string { return strings.Replace(doc, old, new, 1) }
	runs := []agreementCase{
		// accepted
		{"minimal kafka", kafka("")},
		{"minimal pulsar", pulsar("")},
		{"generateName", with(kafka(""), "{name: agree}", "{generateName: agree-}")},
		{"empty managed is defaulted", with(kafka(""), "{brokers: 3}", "{}")},
		{"explicit durability", kafka("  durability: {replication: {mode: Sync}, local: {mode: Async}}\n")},
		{"level 1", kafka("  durability: {level: 1}\n")},
		{"pulsar bypass journal", pulsar("  durability: {replication: {mode: Sync}, local: {mode: Async, journal: Bypass}}\n")},
		{"existing kafka", with(kafka(""), "{managed: {brokers: 3}}", "{existing: {bootstrapServers: 'h:9092'}}")},
		{"existing pulsar", with(pulsar(""), "{managed: {brokers: 1}}", "{existing: {serviceURL: 'pulsar://h:6650', adminURL: 'http://h:8080'}}")},
		{"kafka driver settings", kafka("  driver: {kafka: {producer: {linger.ms: '1'}}}\n")},
		{"teardown and timeouts", kafka("  teardown: {policy: Never, ttlSecondsAfterFinished: 60}\n  timeouts: {provisioning: 5m, run: 1h}\n")},
		{"workers", kafka("  workers: {count: 4}\n")},
		{"workload in full", with(kafka(""), "{messageSize: 1024}", "{messageSize: 100, topics: 2, partitionsPerTopic: 4, producerRate: 1000, testDurationMinutes: 1}")},
		{"a status is dropped", kafka("status: {phase: Succeeded}\n")},
		// refused
		{"unknown spec field", with(kafka(""), "brokers: 3", "brokerz: 3")},
		{"unknown top-level field", kafka("specs: {}\n")},
		{"unknown deep field", kafka("  teardown: {when: Always}\n")},
		{"unknown workload field", with(kafka(""), "{messageSize: 1024}", "{messageSize: 1024, producerRat: 10}")},
		{"case matters", with(kafka(""), "system:", "System:")},
		{"unknown metadata field", with(kafka(""), "{name: agree}", "{name: agree, labelz: {a: b}}")},
		{"wrong apiVersion", with(kafka(""), "v1alpha1", "v1alpha2")},
		{"no name", with(kafka(""), "{name: agree}", "{}")},
		{"name too long", with(kafka(""), "name: agree", "name: "+strings.Repeat("a", 41))},
		{"name not DNS", with(kafka(""), "name: agree", "name: Bad_Name")},
		{"no system", with(kafka(""), "  system: kafka\n", "")},
		{"unknown system", with(kafka(""), "system: kafka", "system: rabbitmq")},
		{"explicit zero brokers", with(kafka(""), "brokers: 3", "brokers: 0")},
		{"brokers not a number", with(kafka(""), "brokers: 3", "brokers: three")},
		{"unquoted number in brokerConfig", with(kafka(""), "brokers: 3", "brokers: 3, brokerConfig: {num.io.threads: 8}")},
		{"explicit zero workers", kafka("  workers: {count: 0}\n")},
		{"empty teardown policy", kafka("  teardown: {policy: \"\"}\n")},
		{"bad teardown policy", kafka("  teardown: {policy: Sometimes}\n")},
		{"negative ttl", kafka("  teardown: {ttlSecondsAfterFinished: -1}\n")},
		{"managed and existing", with(kafka(""), "{managed: {brokers: 3}}", "{managed: {}, existing: {bootstrapServers: 'h:9092'}}")},
		{"neither managed nor existing", with(kafka(""), "{managed: {brokers: 3}}", "{}")},
		{"kafka brokers below replicas", with(kafka(""), "brokers: 3", "brokers: 2")},
		{"pulsar bookies below replicas", with(pulsar(""), "brokers: 1", "brokers: 1, bookies: 2")},
		{"bookies on kafka", with(kafka(""), "brokers: 3", "brokers: 3, bookies: 3")},
		{"spec.payload without payloadFile", kafka("  payload: {configMapRef: {name: omb-payload}}\n")},
		{"durability key in brokerConfig", with(kafka(""), "brokers: 3", "brokers: 3, brokerConfig: {min.insync.replicas: '1'}")},
		{"journal key in bookieConfig", with(pulsar(""), "brokers: 1", "brokers: 1, bookieConfig: {journalSyncData: 'false'}")},
		{"kafka existing with pulsar URLs", with(kafka(""), "{managed: {brokers: 3}}", "{existing: {bootstrapServers: 'h:9092', serviceURL: 'pulsar://h:6650'}}")},
		{"kafka existing without address", with(kafka(""), "{managed: {brokers: 3}}", "{existing: {}}")},
		{"pulsar existing without adminURL", with(pulsar(""), "{managed: {brokers: 1}}", "{existing: {serviceURL: 'pulsar://h:6650'}}")},
		{"pulsar existing with a bad scheme", with(pulsar(""), "{managed: {brokers: 1}}", "{existing: {serviceURL: 'http://h:6650', adminURL: 'http://h:8080'}}")},
		{"pulsar driver on kafka", kafka("  driver: {pulsar: {producer: {batchingMaxPublishDelayMs: '1'}}}\n")},
		{"acks in the kafka driver", kafka("  driver: {kafka: {producer: {acks: '1'}}}\n")},
		{"flush.ms in the kafka topic", kafka("  driver: {kafka: {topic: {flush.ms: '1'}}}\n")},
		{"level out of range", kafka("  durability: {level: 5}\n")},
		{"level and explicit", kafka("  durability: {level: 2, replication: {mode: Sync}, local: {mode: Async}}\n")},
		{"replication without local", kafka("  durability: {replication: {mode: Sync}}\n")},
		{"ackReplicas above replicas", kafka("  durability: {replication: {replicas: 2, ackReplicas: 3, mode: Async}, local: {mode: Async}}\n")},
		{"sync with no ack majority", kafka("  durability: {replication: {replicas: 3, ackReplicas: 1, mode: Sync}, local: {mode: Async}}\n")},
		{"explicit zero replicas", kafka("  durability: {replication: {replicas: 0, mode: Sync}, local: {mode: Async}}\n")},
		{"local sync bypassing the journal", pulsar("  durability: {replication: {mode: Sync}, local: {mode: Sync, journal: Bypass}}\n")},
		{"no workload", with(kafka(""), "  workload: {messageSize: 1024}\n", "")},
		{"workload explicit zero", with(kafka(""), "{messageSize: 1024}", "{messageSize: 1024, topics: 0}")},
		{"workload without messageSize", with(kafka(""), "{messageSize: 1024}", "{topics: 1}")},
		{"mixed without backlog", with(kafka(""), "{messageSize: 1024}", "{messageSize: 1024, mixed: {}}")},
	}
	const suiteHead = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkSuite\nmetadata: {name: agree}\n"
	suite := func(systems, workloads string) string {
		return suiteHead + "spec:\n  systems: " + systems + "\n  workloads: " + workloads + "\n"
	}
	sys := "[{system: kafka, cluster: {managed: {brokers: 3}}, durabilities: [{level: 1}, {level: 2}]}]"
	wl := "[{name: w, spec: {messageSize: 1024}}]"
	suites := []agreementCase{
		{"suite minimal", suite(sys, wl)},
		{"suite two systems", suite("[{system: kafka, cluster: {managed: {}}, durabilities: [{level: 2}]}, {system: pulsar, cluster: {managed: {bookies: 3}}, durabilities: [{level: 2}]}]", wl)},
		{"suite configMapRef workload", suite(sys, "[{name: w, configMapRef: {name: wl}}]")},
		{"suite misspelt field", with(suite(sys, wl), "systems:", "sytems:")},
		{"suite no systems", suite("[]", wl)},
		{"suite no workloads", suite(sys, "[]")},
		{"suite name too long", with(suite(sys, wl), "name: agree", "name: "+strings.Repeat("a", 21))},
		{"suite workload with both", suite(sys, "[{name: w, spec: {messageSize: 1}, configMapRef: {name: wl}}]")},
		{"suite workload with neither", suite(sys, "[{name: w}]")},
		{"suite brokers below replicas", suite("[{system: kafka, cluster: {managed: {brokers: 2}}, durabilities: [{level: 1}]}]", wl)},
		{"suite durability key", suite("[{system: kafka, cluster: {managed: {brokerConfig: {min.insync.replicas: '1'}}}, durabilities: [{level: 1}]}]", wl)},
		{"suite bad failure policy", with(suite(sys, wl), "spec:\n", "spec:\n  failurePolicy: Sometimes\n")},
		{"suite workload explicit zero", suite(sys, "[{name: w, spec: {messageSize: 1024, topics: 0}}]")},
	}
	return append(append(cases, runs...), suites...)
}

func deepCopy(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	return (&unstructured.Unstructured{Object: obj}).DeepCopy().Object
}

func dump(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startAPIServer starts kube-apiserver and etcd (envtest) with the CRDs of
// config/crd/bases installed, and returns a client of it.
func startAPIServer(t *testing.T) client.Client {
	t.Helper()
	cfg := apiservertest.Start(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
