package cost

import (
	"fmt"
	"math"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
)

// Input is what a run measured that its cost is made of.
type Input struct {
	System v1alpha1.System
	// PublishMBPerSec and ConsumeMBPerSec are the measured phase's rates
	// (MB = 10^6 bytes), as summary.json's results have them.
	PublishMBPerSec float64
	ConsumeMBPerSec float64
	// TargetMBPerSec is the rate the workload asked for (producerRate
	// times messageSize); 0 when it asked for none (a rate search).
	TargetMBPerSec float64
	// Resources are the brokers' measured resources; nil when none were
	// (ResourcesWhy says why).
	Resources    *brokerres.Report
	ResourcesWhy string
	// Replicas is how many copies of each message the durability setting
	// keeps (Kafka's replication factor, Pulsar's write quorum); 0 when not
	// known.
	Replicas int32
	// RequestedCores and RequestedMemoryGiB are what the brokers' pods
	// requested (all of them); 0 when not known (local processes request
	// nothing). RequestedFrom says where they were read.
	RequestedCores     float64
	RequestedMemoryGiB float64
	RequestedFrom      string
	// OneMachine says every broker ran on one machine (local mode), so
	// they shared its disks, network and CPUs.
	OneMachine bool
}

// Figure is one derived number, with how it was computed. Value is nil
// when an input was not measured, and Missing says which.
type Figure struct {
	Value   *float64 `json:"value,omitempty"`
	Unit    string   `json:"unit"`
	Formula string   `json:"formula,omitempty"`
	// From says where the inputs came from (proc, prometheus, the
	// durability setting, the pods' requests, the price model).
	From    string `json:"from,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// Efficiency is what one MB/s took, per system and run.
type Efficiency struct {
	MBPerSecPerCoreUsed      Figure `json:"mbPerSecPerCoreUsed"`
	MBPerSecPerCoreRequested Figure `json:"mbPerSecPerCoreRequested"`
	MBPerSecPerGiBUsed       Figure `json:"mbPerSecPerGiBUsed"`
	MBPerSecPerGiBRequested  Figure `json:"mbPerSecPerGiBRequested"`
	// DiskWritePerByte is bytes the brokers wrote to storage per byte
	// produced (write amplification: replicas, journal and ledger, index).
	DiskWritePerByte Figure `json:"diskWritePerByte"`
	// NetworkInPerByte and NetworkOutPerByte are the brokers' network
	// bytes per byte produced; ReplicationPerByte the share of the inbound
	// that was not the producers' (network in less the produced rate).
	NetworkInPerByte   Figure `json:"networkInPerByte"`
	NetworkOutPerByte  Figure `json:"networkOutPerByte"`
	ReplicationPerByte Figure `json:"replicationPerByte"`
}

// Costs are money per hour at the measured rate and per TB (10^12 bytes)
// produced, each part with its formula. Compute is priced twice: on what
// the brokers used (a floor: no cluster runs at 100 %) and on what they
// reserved (requests, or the model's instances).
type Costs struct {
	ComputeUsedPerHour     Figure `json:"computeUsedPerHour"`
	ComputeReservedPerHour Figure `json:"computeReservedPerHour"`
	StoragePerHour         Figure `json:"storagePerHour"`
	CrossZonePerHour       Figure `json:"crossZonePerHour"`
	// TotalPerHour is compute (reserved when known, else used) plus
	// storage plus cross-zone traffic; PerTBIngested is that over the TB
	// produced in an hour.
	TotalPerHour  Figure `json:"totalPerHour"`
	PerTBIngested Figure `json:"perTBIngested"`
}

// Projection is the cost at another rate, scaled from this run's
// efficiency. Refused when the run was bounded by something else than the
// brokers' own work; flagged when its scaling rests on a shaky input.
type Projection struct {
	TargetMBPerSec float64  `json:"targetMBPerSec"`
	Assumption     string   `json:"assumption"`
	Cores          Figure   `json:"cores"`
	TotalPerHour   Figure   `json:"totalPerHour"`
	Refused        string   `json:"refused,omitempty"`
	Flags          []string `json:"flags,omitempty"`
}

// Model is the price model a report used, whole, so that every figure
// can be checked from summary.json alone (and priced again, as a suite's
// repeated cells are); Default says it was Default().
type Model struct {
	PriceModel
	Default bool `json:"default,omitempty"`
}

// Report is summary.json's cost.
type Report struct {
	Model      Model       `json:"model"`
	Efficiency Efficiency  `json:"efficiency"`
	Costs      Costs       `json:"costs"`
	Projection *Projection `json:"projection,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
}

// bytes per GiB and per MB, and TB per MB.
const (
	gib = 1 << 30
	mb  = 1e6
)

// Compute is the cost report of a run under model m (isDefault: m is
// Default(), which the report says).
func Compute(in Input, m PriceModel, isDefault bool) *Report {
	r := &Report{Model: Model{PriceModel: *m.DeepCopy(), Default: isDefault}}
	r.Efficiency = efficiency(in)
	r.Costs = costs(in, m, r.Efficiency)
	if m.ProjectToMBPerSec > 0 {
		r.Projection = project(in, m, r.Costs)
	}
	if in.PublishMBPerSec <= 0 {
		r.Notes = append(r.Notes, "nothing was produced in the measured phase: no figure per MB/s or per TB")
	}
	return r
}

// totals are the brokers' measured totals, or nil.
func totals(in Input) *v1alpha1.BrokerResources {
	if in.Resources == nil {
		return nil
	}
	return &in.Resources.Total
}

// notMeasured is the Missing text for a resource figure that was not.
func notMeasured(in Input, what string) string {
	if in.Resources == nil {
		why := in.ResourcesWhy
		if why == "" {
			why = "no broker resources were measured"
		}
		return fmt.Sprintf("%s: %s", what, why)
	}
	return fmt.Sprintf("%s: not measured by %s (see brokerResources.notes)", what, in.Resources.Source)
}

func per(num, den float64) *float64 {
	if den <= 0 || math.IsNaN(num) || math.IsInf(num, 0) {
		return nil
	}
	v := num / den
	return &v
}

// ratio is produced MB/s over a measured figure, or the figure over it.
func efficiency(in Input) Efficiency {
	t := totals(in)
	src := ""
	if in.Resources != nil {
		src = in.Resources.Source
	}
	pub := in.PublishMBPerSec
	var e Efficiency
	perResource := func(v *float64, unit, what, from string) Figure {
		f := Figure{Unit: unit, From: from}
		if v == nil {
			f.Missing = notMeasured(in, what)
			return f
		}
		f.Value = per(pub, *v)
		f.Formula = fmt.Sprintf("%.3g MB/s produced ÷ %.3g %s", pub, *v, what)
		if f.Value == nil {
			f.Missing, f.Formula = fmt.Sprintf("%s was %g", what, *v), ""
		}
		return f
	}
	perByte := func(v *float64, what string) Figure {
		f := Figure{Unit: "bytes per byte produced", From: src}
		if v == nil {
			f.Missing = notMeasured(in, what)
			return f
		}
		f.Value = per(*v, pub)
		f.Formula = fmt.Sprintf("%.3g MB/s %s ÷ %.3g MB/s produced", *v, what, pub)
		if f.Value == nil {
			f.Missing, f.Formula = "nothing was produced", ""
		}
		return f
	}
	var cores, mem, disk, in_, out *float64
	if t != nil {
		cores, mem, disk, in_, out = t.CPUCores, t.MemoryGiB, t.DiskWriteMBPerSec, t.NetworkInMBPerSec, t.NetworkOutMBPerSec
	}
	e.MBPerSecPerCoreUsed = perResource(cores, "MB/s per core", "broker cores used", src)
	e.MBPerSecPerGiBUsed = perResource(mem, "MB/s per GiB", "broker memory used (GiB)", src)
	e.MBPerSecPerCoreRequested = requested(in, in.RequestedCores, "MB/s per core", "broker cores requested")
	e.MBPerSecPerGiBRequested = requested(in, in.RequestedMemoryGiB, "MB/s per GiB", "broker memory requested (GiB)")
	e.DiskWritePerByte = perByte(disk, "written to disk")
	e.NetworkInPerByte = perByte(in_, "network in")
	e.NetworkOutPerByte = perByte(out, "network out")
	e.ReplicationPerByte = Figure{Unit: "bytes per byte produced", From: src}
	switch {
	case in_ == nil:
		e.ReplicationPerByte.Missing = notMeasured(in, "network in")
	case pub <= 0:
		e.ReplicationPerByte.Missing = "nothing was produced"
	default:
		e.ReplicationPerByte.Value = per(math.Max(0, *in_-pub), pub)
		e.ReplicationPerByte.Formula = fmt.Sprintf("(%.3g MB/s network in − %.3g MB/s produced) ÷ %.3g MB/s produced", *in_, pub, pub)
	}
	return e
}

func requested(in Input, v float64, unit, what string) Figure {
	f := Figure{Unit: unit, From: in.RequestedFrom}
	if v <= 0 {
		f.Missing = what + ": not known"
		if in.OneMachine {
			f.Missing = what + ": local processes request nothing"
		}
		return f
	}
	f.Value = per(in.PublishMBPerSec, v)
	f.Formula = fmt.Sprintf("%.3g MB/s produced ÷ %.3g %s", in.PublishMBPerSec, v, what)
	return f
}

// Summary is the report in brief, for status.results.cost.
func (r *Report) Summary() *v1alpha1.CostSummary {
	s := &v1alpha1.CostSummary{Model: r.Model.Name, Currency: r.Model.Currency,
		PerHour: r.Costs.TotalPerHour.Value, PerTBIngested: r.Costs.PerTBIngested.Value,
		MBPerSecPerCore: r.Efficiency.MBPerSecPerCoreUsed.Value}
	var missing []string
	if s.PerHour == nil {
		missing = append(missing, "per hour: "+r.Costs.TotalPerHour.Missing)
	}
	if s.MBPerSecPerCore == nil {
		missing = append(missing, "per core: "+r.Efficiency.MBPerSecPerCoreUsed.Missing)
	}
	if p := r.Projection; p != nil {
		s.ProjectedMBPerSec = p.TargetMBPerSec
		s.ProjectedPerHour = p.TotalPerHour.Value
		switch {
		case p.Refused != "":
			missing = append(missing, "projection refused: "+p.Refused)
		case p.TotalPerHour.Value == nil:
			missing = append(missing, "projection: "+p.TotalPerHour.Missing)
		}
	}
	s.Missing = strings.Join(missing, "; ")
	return s
}
