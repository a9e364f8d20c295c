package suite

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/brokerpods"
	"github.com/streambench/streambench-operator/internal/provision/clientsecurity"
)

// Labels on the suite's child runs.
const (
	LabelSuite = "streambench.io/suite"
	LabelCell  = "streambench.io/cell"
)

// System is the spec.systems entry of system, or nil.
func System(s *v1alpha1.BenchmarkSuite, system v1alpha1.System) *v1alpha1.SuiteSystem {
	for i := range s.Spec.Systems {
		if s.Spec.Systems[i].System == system {
			return &s.Spec.Systems[i]
		}
	}
	return nil
}

// Workload is the resolved workload called name, or an error naming it.
func Workload(workloads []v1alpha1.ResolvedWorkload, name string) (v1alpha1.WorkloadSpec, error) {
	for _, w := range workloads {
		if w.Name == name {
			return w.Spec, nil
		}
	}
	return v1alpha1.WorkloadSpec{}, fmt.Errorf("spec.workloads: no workload named %q in status.workloads", name)
}

// HostRun is the run a managed cluster is deployed from. It exists only in
// memory: the provisioners (internal/provision/strimzi, pulsar) build a
// cluster from a BenchmarkRun, and this one carries the suite's topology
// and the cluster's host durability under the cluster's name, so the
// Kafka is named <cluster> and the Pulsar release <cluster>-pulsar. The
// suite, not this run, owns what is deployed.
//
// The host durability is that of the cluster's first cell (they all need
// the same broker settings), through hostDurability; its security is the
// cluster's (status.clusters[].security, one of spec.systems[].securities),
// which is the brokers' listener configuration and credentials.
func HostRun(s *v1alpha1.BenchmarkSuite, c v1alpha1.SuiteCluster) (*v1alpha1.BenchmarkRun, error) {
	sys := System(s, c.System)
	if sys == nil || sys.Cluster.Managed == nil {
		return nil, fmt.Errorf("status.clusters %s: spec.systems has no managed cluster for system %s", c.Name, c.System)
	}
	var host *v1alpha1.DurabilitySpec
	for _, cell := range s.Status.Cells {
		if cell.Cluster == c.Name {
			d := hostDurability(c.System, cell.Durability)
			host = &d
			break
		}
	}
	if host == nil {
		return nil, fmt.Errorf("status.clusters %s: no cell runs on it", c.Name)
	}
	return hostRun(s, sys, c, *host), nil
}

func hostRun(s *v1alpha1.BenchmarkSuite, sys *v1alpha1.SuiteSystem, c v1alpha1.SuiteCluster, host v1alpha1.DurabilitySpec) *v1alpha1.BenchmarkRun {
	managed := sys.Cluster.Managed.DeepCopy()
	if c.Security != nil {
		managed.Security = c.Security.DeepCopy()
	}
	return &v1alpha1.BenchmarkRun{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.Name, Namespace: s.Namespace,
			Labels: map[string]string{LabelSuite: s.Name},
		},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:     c.System,
			Cluster:    v1alpha1.ClusterSpec{Managed: managed},
			Durability: host.DeepCopy(),
			Workers:    s.Spec.Workers,
			Teardown:   s.Spec.Teardown,
			Timeouts:   s.Spec.Timeouts,
		},
	}
}

// ChildRun is the BenchmarkRun of a cell: in existing mode against the
// cell's cluster (the endpoints the suite deployed, or the spec's existing
// cluster as written), with the cell's durability and workload. Against
// secured brokers the suite deployed, its clients read the Secrets the
// cluster's host run would (clientsecurity.ExistingFor), by reference. Its
// workers are removed when it ends (the cluster is the suite's to
// remove); it stays, with its results ConfigMap, as long as the suite.
func ChildRun(s *v1alpha1.BenchmarkSuite, cell v1alpha1.SuiteCell, cluster v1alpha1.SuiteCluster) (*v1alpha1.BenchmarkRun, error) {
	sys := System(s, cell.System)
	if sys == nil {
		return nil, fmt.Errorf("status.cells %s: spec.systems has no system %s", cell.Name, cell.System)
	}
	w, err := Workload(s.Status.Workloads, cell.Workload)
	if err != nil {
		return nil, err
	}
	if w.Name == "" {
		w.Name = cell.Workload
	}
	sched, err := FaultSchedule(s, cell.FaultSchedule)
	if err != nil {
		return nil, fmt.Errorf("status.cells %s: %w", cell.Name, err)
	}
	var existing v1alpha1.ExistingCluster
	switch {
	case sys.Cluster.Existing != nil:
		existing = *sys.Cluster.Existing.DeepCopy()
	case cluster.Endpoints != nil:
		existing = v1alpha1.ExistingCluster{
			BootstrapServers: cluster.Endpoints.BootstrapServers,
			ServiceURL:       cluster.Endpoints.ServiceURL,
			AdminURL:         cluster.Endpoints.AdminURL,
		}
		if sys.Cluster.Managed == nil {
			return nil, fmt.Errorf("status.clusters %s: spec.systems has no managed cluster for system %s", cluster.Name, cell.System)
		}
		// The cell is on the cluster: its durability gives the host's.
		host := hostRun(s, sys, cluster, hostDurability(cell.System, cell.Durability))
		if existing.TLS, existing.Authentication, err = clientsecurity.ExistingFor(host); err != nil {
			return nil, fmt.Errorf("status.clusters %s: %w", cluster.Name, err)
		}
		if len(sched) > 0 {
			existing.Faults = deployedFaults(host)
		}
	default:
		return nil, fmt.Errorf("status.clusters %s has no endpoints yet", cluster.Name)
	}
	return &v1alpha1.BenchmarkRun{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{
			Name: cell.Name, Namespace: s.Namespace,
			Labels: map[string]string{LabelSuite: s.Name, LabelCell: cell.Name},
		},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:     cell.System,
			Cluster:    v1alpha1.ClusterSpec{Existing: &existing},
			Durability: cell.Durability.DeepCopy(),
			Workload:   w,
			Workers:    s.Spec.Workers,
			Driver:     sys.Driver.DeepCopy(),
			Teardown:   v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAlways},
			Timeouts:   v1alpha1.TimeoutsSpec{Run: s.Spec.Timeouts.Run},
			Faults:     sched,
			Cost:       s.Spec.Cost.DeepCopy(),
			Results:    s.Spec.Results.DeepCopy(),
		},
	}, nil
}

// FaultSchedule is a copy of the faults of the schedule called name
// (spec.faultSchedules); nil for "" (a suite without schedules) and for
// a schedule without faults.
func FaultSchedule(s *v1alpha1.BenchmarkSuite, name string) ([]v1alpha1.Fault, error) {
	if name == "" {
		return nil, nil
	}
	for _, fs := range s.Spec.FaultSchedules {
		if fs.Name == name {
			var out []v1alpha1.Fault
			for _, f := range fs.Faults {
				out = append(out, *f.DeepCopy())
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("spec.faultSchedules has no schedule named %q", name)
}

// deployedFaults is the consent a cell's run needs for faults on the
// cluster the suite deployed, which it reaches in existing mode: the
// suite owns that cluster and its spec.faultSchedules asked for the
// faults, so the disruption is allowed; the pods are selected by the
// labels the provisioners put on them (Strimzi's strimzi.io/cluster of the
// cluster's Kafka; the Apache Pulsar chart's app and release), in the
// suite's namespace, which is the run's.
func deployedFaults(host *v1alpha1.BenchmarkRun) *v1alpha1.ExistingClusterFaults {
	sel := brokerpods.All(host)
	return &v1alpha1.ExistingClusterFaults{AllowDisruption: true, PodSelector: &metav1.LabelSelector{MatchLabels: sel}}
}

// Progress is finished cells / all cells, e.g. 7/16.
func Progress(cells []v1alpha1.SuiteCell) string {
	done := 0
	for _, c := range cells {
		if c.Phase.Finished() {
			done++
		}
	}
	return fmt.Sprintf("%d/%d", done, len(cells))
}

// CellResultsOf are the headline figures of a run's results.
func CellResultsOf(r *v1alpha1.ResultsSummary) *v1alpha1.CellResults {
	if r == nil {
		return nil
	}
	out := &v1alpha1.CellResults{PublishMBPerSec: r.PublishMBPerSec, PublishP99Ms: r.PublishLatencyMs.P99}
	if r.EndToEndLatencyMs != nil {
		p99 := r.EndToEndLatencyMs.P99
		out.EndToEndP99Ms = &p99
	}
	return out
}

// Status is the plan as status.clusters and status.cells, nothing run yet.
// An existing cluster is Ready from the start: there is nothing to deploy,
// and its cells take the spec's cluster as written (ChildRun).
func Status(p Plan) ([]v1alpha1.SuiteCluster, []v1alpha1.SuiteCell) {
	var clusters []v1alpha1.SuiteCluster
	for _, c := range p.Clusters {
		sc := v1alpha1.SuiteCluster{Name: string(c.Name), System: c.System, Managed: c.Managed, BrokerSettings: c.BrokerSettings, Security: c.Security.DeepCopy(), Phase: v1alpha1.ClusterWaiting}
		if !c.Managed {
			sc.Phase, sc.Message = v1alpha1.ClusterReady, "existing cluster, used as it is"
		}
		clusters = append(clusters, sc)
	}
	var cells []v1alpha1.SuiteCell
	for _, c := range p.Cells {
		cells = append(cells, v1alpha1.SuiteCell{
			Name: string(c.Name), System: c.System, Workload: c.Workload, Durability: c.Durability,
			RequestedLevel: c.RequestedLevel, Security: c.Security, FaultSchedule: c.FaultSchedule, Cluster: string(c.Cluster), Phase: v1alpha1.CellWaiting,
			Repeat: int32(c.Repeat), RepeatOf: string(c.RepeatOf),
		})
	}
	return clusters, cells
}

// EndCell records a finished cell; with failurePolicy Stop a failed one
// skips every cell not yet run.
func EndCell(s *v1alpha1.BenchmarkSuite, cell *v1alpha1.SuiteCell, phase v1alpha1.CellPhase, message string) {
	cell.Phase, cell.Message = phase, message
	s.Status.CurrentCell = ""
	s.Status.Message = fmt.Sprintf("cell %s %s", cell.Name, phase)
	if phase == v1alpha1.CellFailed && s.Spec.FailurePolicy == v1alpha1.FailureStop {
		for j := range s.Status.Cells {
			if c := &s.Status.Cells[j]; !c.Phase.Finished() {
				c.Phase, c.Message = v1alpha1.CellSkipped, fmt.Sprintf("skipped: cell %s failed and spec.failurePolicy is Stop", cell.Name)
			}
		}
	}
	s.Status.Progress = Progress(s.Status.Cells)
}
