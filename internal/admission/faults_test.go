package admission

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestCRDFaultRules: the CRD refuses each fault that is wrong on its own,
// at its index, and faults on an existing cluster without consent; what
// needs the rest of the spec (the phase, the topology) is
// internal/faults', and passes here.
func TestCRDFaultRules(t *testing.T) {
	const managed = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: faults}\nspec:\n  system: kafka\n  cluster: {managed: {}}\n  workload: {messageSize: 1024}\n  faults:\n%s"
	const existing = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: faults}\nspec:\n  system: kafka\n  cluster: {existing: {bootstrapServers: 'k:9092'%s}}\n  workload: {messageSize: 1024}\n  faults:\n  - {action: Kill, target: broker-0, at: 1m}\n"
	cases := []struct {
		name, doc string
		// field and words of the refusal; empty: accepted.
		field string
		words []string
	}{
		{"a schedule", fmt.Sprintf(managed, "  - {action: Pause, target: broker-1, at: 1m, duration: 30s}\n  - {action: Kill, target: leader, at: 2m}\n  - {action: DeletePod, target: controller-2, at: 1m30s}\n"), "", nil},
		{"checked with the spec later: beyond the phase and the brokers", fmt.Sprintf(managed, "  - {action: Kill, target: broker-9, at: 1h}\n"), "", nil},
		{"an action not in the enum", fmt.Sprintf(managed, "  - {action: Reboot, target: broker-0, at: 1m}\n"),
			"spec.faults[0].action", []string{"Pause", "Kill", "DeletePod"}},
		{"a Pause without duration", fmt.Sprintf(managed, "  - {action: Kill, target: broker-0, at: 1m}\n  - {action: Pause, target: broker-0, at: 2m}\n"),
			"spec.faults[1]", []string{"a Pause needs duration"}},
		{"a Kill with a duration", fmt.Sprintf(managed, "  - {action: Kill, target: broker-0, at: 1m, duration: 5s}\n"),
			"spec.faults[0]", []string{"Pause only", "remove duration"}},
		{"at that is not a duration", fmt.Sprintf(managed, "  - {action: Kill, target: broker-0, at: 2 minutes}\n"),
			"spec.faults[0].at", []string{"must be a duration"}},
		{"at before the phase", fmt.Sprintf(managed, "  - {action: Kill, target: broker-0, at: -1m}\n"),
			"spec.faults[0].at", []string{"must be a duration"}},
		{"a target that is not one", fmt.Sprintf(managed, "  - {action: Kill, target: kafka-0, at: 1m}\n"),
			"spec.faults[0].target", []string{"should match"}},
		{"existing without consent", fmt.Sprintf(existing, ""),
			"spec", []string{"spec.cluster.existing.faults.allowDisruption: true"}},
		{"existing with consent withheld", fmt.Sprintf(existing, ", faults: {allowDisruption: false}"),
			"spec", []string{"spec.cluster.existing.faults.allowDisruption: true"}},
		{"existing with consent", fmt.Sprintf(existing, ", faults: {allowDisruption: true, podSelector: {matchLabels: {app: kafka}}}"), "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := Decode([]byte(tc.doc))
			if err != nil {
				t.Fatalf("test input: %v", err)
			}
			errs := BenchmarkRun().Create(obj)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("accepted, want refused at %s", tc.field)
			}
			for _, e := range errs {
				if e.Field != tc.field {
					continue
				}
				for _, w := range tc.words {
					if !strings.Contains(e.Error(), w) {
						t.Errorf("the refusal lacks %q: %v", w, e)
					}
				}
				return
			}
			t.Fatalf("refused, but not at %s: %v", tc.field, errs.ToAggregate())
		})
	}
}

// TestCRDFaultTargetsAreParsed: the CRD's target pattern accepts exactly
// the targets v1alpha1.FaultTarget.Parse reads.
func TestCRDFaultTargetsAreParsed(t *testing.T) {
	const doc = "apiVersion: streambench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: faults}\nspec:\n  system: kafka\n  cluster: {managed: {}}\n  workload: {messageSize: 1024}\n  faults:\n  - {action: Kill, target: '%s', at: 1m}\n"
	for _, target := range []string{
		"broker-0", "broker-12", "controller-9999", "bookie-1", "zookeeper-2", "leader",
		"broker-01", "broker-10000", "broker-+1", "broker--1", "broker-", "broker", "leader-0",
		"bookkeeper-0", "Broker-0", "broker-1 ", "",
	} {
		obj, err := Decode([]byte(fmt.Sprintf(doc, target)))
		if err != nil {
			t.Fatalf("test input: %v", err)
		}
		crd := len(BenchmarkRun().Create(obj)) == 0
		_, _, perr := v1alpha1.FaultTarget(target).Parse()
		if crd != (perr == nil) {
			t.Errorf("target %q: the CRD accepts it %v, Parse %v", target, crd, perr)
		}
	}
}
