package cost

import (
	"math"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
)

// model is the price model of the hand-computed cases.
func model() PriceModel {
	return PriceModel{Name: "hand", Source: "this test", Date: "2026-12-02", Currency: "EUR",
		CoreHour: 0.04, GiBHour: 0.005, StorageGBMonth: 0.1, RetentionHours: 24, CrossZoneGB: 0.02, Zones: 3, ProjectToMBPerSec: 1000}
}

func resources(src string, cores, mem, disk, in, out *float64) *brokerres.Report {
	return &brokerres.Report{Source: src, Seconds: 60, Total: v1alpha1.BrokerResources{Source: src, Seconds: 60, Brokers: 3,
		CPUCores: cores, MemoryGiB: mem, DiskWriteMBPerSec: disk, NetworkInMBPerSec: in, NetworkOutMBPerSec: out}}
}

// want is a figure's expected value; nil: missing, and then the Missing
// text must hold missing.
type want struct {
	v       *float64
	missing string
}

func TestCompute(t *testing.T) {
	// 1e6 * 3600 / 2^30: GiB an hour at 1 MB/s.
	cpuBound := resources(brokerres.SourceProc, ptr.To(1.0), ptr.To(2.0), ptr.To(40.0), nil, nil)
	cpuBound.Host = &brokerres.Host{CPUs: 2, CPUBusyCores: ptr.To(1.9), CPUBound: true, CPUVerdict: "the host's CPUs were 95 % busy"}
	threeI3 := model()
	threeI3.Instances = []Instance{{Type: "i3.4xlarge", Count: 3, HourlyPrice: 1.248}}
	threeI3.Zones, threeI3.StorageGBMonth, threeI3.ProjectToMBPerSec = 1, 0, 0

	for _, c := range []struct {
		name  string
		in    Input
		m     PriceModel
		check map[string]want
		// refused: the projection's refusal holds it; nil projection when
		// noProjection.
		refused      string
		noProjection bool
		flags        []string
	}{{
		// Kafka in a cluster, everything measured. By hand:
		// compute used 2 × 0.04 + 6 × 0.005 = 0.11; reserved 6 × 0.04 +
		// 24 × 0.005 = 0.36; storage 100 MB/s × 3600 / 2^30 × 24 h × 3
		// copies = 24139.9 GiB held × 0.1 / 730 = 3.30683; replication
		// (300 − 100) MB/s measured, clients 200 MB/s, 2/3 of each crossing:
		// 266.67 MB/s = 894.07 GiB/h × 0.02 = 17.8814; total 0.36 + 3.30683
		// + 17.8814 = 21.5482; per TB 21.5482 / 0.36 TB/h = 59.856;
		// at 1000 MB/s (×10) on use: (0.11 + 3.30683 + 17.8814) × 10 = 212.982.
		name: "kafka, everything measured",
		in: Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 100, ConsumeMBPerSec: 100, TargetMBPerSec: 100,
			Resources: resources(brokerres.SourcePrometheus, ptr.To(2.0), ptr.To(6.0), ptr.To(300.0), ptr.To(300.0), ptr.To(300.0)),
			Replicas:  3, RequestedCores: 6, RequestedMemoryGiB: 24, RequestedFrom: "testbed.topology"},
		m: model(),
		check: map[string]want{
			"perCoreUsed": {v: ptr.To(50.0)}, "perGiBUsed": {v: ptr.To(100.0 / 6)}, "perCoreRequested": {v: ptr.To(100.0 / 6)},
			"perGiBRequested": {v: ptr.To(100.0 / 24)}, "disk": {v: ptr.To(3.0)}, "netIn": {v: ptr.To(3.0)}, "replication": {v: ptr.To(2.0)},
			"computeUsed": {v: ptr.To(0.11)}, "computeReserved": {v: ptr.To(0.36)}, "storage": {v: ptr.To(3.306833)},
			"crossZone": {v: ptr.To(17.881393)}, "total": {v: ptr.To(21.548226)}, "perTB": {v: ptr.To(59.856185)},
			"projectedCores": {v: ptr.To(20.0)}, "projected": {v: ptr.To(212.982265)},
		},
	}, {
		// Pulsar on one machine: no network, no requests, the host's CPUs
		// bound it. Replication is modeled: the broker sends each entry to
		// its write quorum of 2 bookies, 20 MB/s. By hand: compute used 1 ×
		// 0.04 + 2 × 0.005 = 0.05 (the total's compute, as nothing reserved
		// is known); storage 10 × 3.35276 × 24 × 2 × 0.1 / 730 = 0.220456;
		// cross-zone (20 × 2/3 + 20 × 2/3) × 3.35276 × 0.02 = 1.788139;
		// total 2.058595; per TB 2.058595 / 0.036 = 57.1832.
		name: "pulsar on one CPU-bound machine",
		in: Input{System: v1alpha1.SystemPulsar, PublishMBPerSec: 10, ConsumeMBPerSec: 10, TargetMBPerSec: 20,
			Resources: cpuBound, Replicas: 2, OneMachine: true},
		m: model(),
		check: map[string]want{
			"perCoreUsed": {v: ptr.To(10.0)}, "perGiBUsed": {v: ptr.To(5.0)}, "disk": {v: ptr.To(4.0)},
			"perCoreRequested": {missing: "local processes request nothing"}, "netIn": {missing: "not measured by proc"},
			"replication": {missing: "network in"}, "computeUsed": {v: ptr.To(0.05)}, "computeReserved": {missing: "nothing reserved is known"},
			"storage": {v: ptr.To(0.220456)}, "crossZone": {v: ptr.To(1.788139)}, "total": {v: ptr.To(2.058595)}, "perTB": {v: ptr.To(57.183191)},
		},
		refused: "the host's CPUs bounded this run",
	}, {
		// Nothing measured, instances priced, one zone, storage free: the
		// total is the instances' 3 × 1.248 = 3.744, per TB 3.744 / (50 ×
		// 0.0036) = 20.8; what was not measured is said, not zero.
		name: "no broker resources, instances priced",
		in:   Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 50, Replicas: 3, ResourcesWhy: "no Prometheus was found"},
		m:    threeI3,
		check: map[string]want{
			"perCoreUsed": {missing: "no Prometheus was found"}, "disk": {missing: "no Prometheus was found"},
			"computeUsed": {missing: "broker cores used: no Prometheus was found"}, "computeReserved": {v: ptr.To(3.744)},
			"storage": {v: ptr.To(0.0)}, "crossZone": {v: ptr.To(0.0)}, "total": {v: ptr.To(3.744)}, "perTB": {v: ptr.To(20.8)},
		},
		noProjection: true,
	}, {
		// Kafka that fell behind its target, projected 20 times beyond:
		// both flagged; the storage has no copies known, so the total is
		// missing and says which part.
		name: "behind its target, far projection, copies unknown",
		in: Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 50, ConsumeMBPerSec: 50, TargetMBPerSec: 100,
			Resources: resources(brokerres.SourceProc, ptr.To(1.0), ptr.To(1.0), nil, nil, nil)},
		m: model(),
		check: map[string]want{
			"storage": {missing: "copies kept"}, "crossZone": {missing: "replication traffic"},
			"total": {missing: "no storage, cross-zone traffic"}, "projectedCores": {v: ptr.To(20.0)}, "projected": {missing: "storage or cross-zone"},
		},
		flags: []string{"produced 50 of the 100 MB/s asked", "20 times the measured rate"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r := Compute(c.in, c.m, false)
			e, k := r.Efficiency, r.Costs
			figs := map[string]Figure{"perCoreUsed": e.MBPerSecPerCoreUsed, "perGiBUsed": e.MBPerSecPerGiBUsed,
				"perCoreRequested": e.MBPerSecPerCoreRequested, "perGiBRequested": e.MBPerSecPerGiBRequested,
				"disk": e.DiskWritePerByte, "netIn": e.NetworkInPerByte, "replication": e.ReplicationPerByte,
				"computeUsed": k.ComputeUsedPerHour, "computeReserved": k.ComputeReservedPerHour, "storage": k.StoragePerHour,
				"crossZone": k.CrossZonePerHour, "total": k.TotalPerHour, "perTB": k.PerTBIngested}
			if p := r.Projection; p != nil {
				figs["projectedCores"], figs["projected"] = p.Cores, p.TotalPerHour
			}
			for name, w := range c.check {
				f, ok := figs[name]
				if !ok {
					t.Errorf("%s: no such figure (no projection?)", name)
					continue
				}
				switch {
				case w.v == nil && f.Value != nil:
					t.Errorf("%s = %g (%s), want missing (%q)", name, *f.Value, f.Formula, w.missing)
				case w.v == nil && !strings.Contains(f.Missing, w.missing):
					t.Errorf("%s missing %q, want it to say %q", name, f.Missing, w.missing)
				case w.v != nil && f.Value == nil:
					t.Errorf("%s missing (%s), want %g", name, f.Missing, *w.v)
				case w.v != nil && math.Abs(*f.Value-*w.v) > 1e-6*math.Max(1, math.Abs(*w.v)):
					t.Errorf("%s = %.6f (%s), want %.6f", name, *f.Value, f.Formula, *w.v)
				case w.v != nil && *w.v != 0 && f.Formula == "":
					t.Errorf("%s has no formula", name)
				}
			}
			switch {
			case c.noProjection && r.Projection != nil:
				t.Errorf("a projection without projectToMBPerSec: %+v", r.Projection)
			case c.refused != "" && (r.Projection == nil || !strings.Contains(r.Projection.Refused, c.refused)):
				t.Errorf("projection %+v, want refused for %q", r.Projection, c.refused)
			case c.refused == "" && r.Projection != nil && r.Projection.Refused != "":
				t.Errorf("projection refused: %s", r.Projection.Refused)
			}
			if r.Projection != nil && r.Projection.Refused == "" {
				got := strings.Join(r.Projection.Flags, " | ")
				for _, f := range c.flags {
					if !strings.Contains(got, f) {
						t.Errorf("projection flags %q lack %q", got, f)
					}
				}
				if c.in.OneMachine != strings.Contains(got, "one machine") {
					t.Errorf("one machine %v, flags %q", c.in.OneMachine, got)
				}
			}
		})
	}
}

func TestSummary(t *testing.T) {
	r := Compute(Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 100, Replicas: 3,
		Resources: resources(brokerres.SourceProc, ptr.To(2.0), nil, nil, nil, nil)}, Default(), true)
	s := r.Summary()
	if s.Model != Default().Name || s.Currency != "USD" || s.MBPerSecPerCore == nil || *s.MBPerSecPerCore != 50 || !r.Model.Default {
		t.Errorf("summary %+v", s)
	}
	// Memory was not measured: compute used, hence the total and the
	// projection, are missing, and the brief says so.
	if s.PerHour != nil || s.ProjectedPerHour != nil || !strings.Contains(s.Missing, "broker memory used") || s.ProjectedMBPerSec != 5000 {
		t.Errorf("summary without memory: %+v", s)
	}
}

func TestDefaultPrices(t *testing.T) {
	d := Default()
	if err := Validate(d); err != nil {
		t.Fatal(err)
	}
	// n2-standard-2 (2 vCPUs, 8 GiB) is listed at 0.097118 USD an hour:
	// the per-resource prices add up to it.
	if got := 2*d.CoreHour + 8*d.GiBHour; math.Abs(got-0.097118) > 1e-9 {
		t.Errorf("n2-standard-2 at the default prices: %.6f, want 0.097118", got)
	}
}

func TestParse(t *testing.T) {
	good := "name: mine\nsource: https://example.com/prices\ndate: 2026-12-01\ncurrency: EUR\ncoreHour: 0.05\ngibHour: 0.006\nzones: 2\n"
	m, err := Parse([]byte(good))
	if err != nil || m.CoreHour != 0.05 || m.Zones != 2 {
		t.Fatalf("%+v, %v", m, err)
	}
	if r, c := shares(m); r != 0.5 || c != 0.5 {
		t.Errorf("2 zones: shares %g %g, want 1/2 each", r, c)
	}
	for _, c := range []struct{ in, want string }{
		{good + "coreHours: 0.1\n", `unknown field "coreHours"`},
		{good + "storageGBMonth: -1\n", "storageGBMonth: -1 is negative"},
		{"name: x\ncurrency: EUR\ncoreHour: 1\n", "source and date: both are required"},
		{"name: x\nsource: s\ndate: d\ncurrency: EUR\n", "compute would cost nothing"},
		{good + "clientCrossZoneShare: 1.5\n", "clientCrossZoneShare: 1.5 is not a share"},
		{good + "instances: [{type: m, count: 0, hourlyPrice: 1}]\n", "instances[0]: needs a type, a count of at least 1"},
	} {
		if _, err := Parse([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.in, err, c.want)
		}
	}
}
