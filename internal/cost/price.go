package cost

import (
	"fmt"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// mbPerSecToGiBPerHour converts a rate in MB/s (10^6 bytes) into the GiB
// it moves in an hour.
const mbPerSecToGiBPerHour = mb * 3600 / gib

// tbPerHourPerMBPerSec is the TB (10^12 bytes) produced in an hour at
// 1 MB/s.
const tbPerHourPerMBPerSec = mb * 3600 / 1e12

func money(v float64) *float64 { return &v }

// costs prices the run's figures under m.
func costs(in Input, m PriceModel, e Efficiency) Costs {
	cur := m.Currency
	perHour := cur + " per hour"
	t := totals(in)
	var c Costs

	// Compute on what was used.
	c.ComputeUsedPerHour = Figure{Unit: perHour, From: "measured use × price model"}
	var cores, memGiB *float64
	if t != nil {
		cores, memGiB = t.CPUCores, t.MemoryGiB
	}
	switch {
	case cores == nil && m.CoreHour > 0:
		c.ComputeUsedPerHour.Missing = notMeasured(in, "broker cores used")
	case memGiB == nil && m.GiBHour > 0:
		c.ComputeUsedPerHour.Missing = notMeasured(in, "broker memory used")
	default:
		var v float64
		var parts []string
		if m.CoreHour > 0 {
			v += *cores * m.CoreHour
			parts = append(parts, fmt.Sprintf("%.3g cores × %g", *cores, m.CoreHour))
		}
		if m.GiBHour > 0 {
			v += *memGiB * m.GiBHour
			parts = append(parts, fmt.Sprintf("%.3g GiB × %g", *memGiB, m.GiBHour))
		}
		if len(parts) == 0 {
			c.ComputeUsedPerHour.Missing = "the price model prices compute only by instance (instances), not by core or GiB"
			break
		}
		c.ComputeUsedPerHour.Value, c.ComputeUsedPerHour.Formula = money(v), strings.Join(parts, " + ")
	}

	// Compute on what was reserved.
	c.ComputeReservedPerHour = Figure{Unit: perHour}
	switch {
	case len(m.Instances) > 0:
		var v float64
		var parts []string
		for _, i := range m.Instances {
			v += float64(i.Count) * i.HourlyPrice
			parts = append(parts, fmt.Sprintf("%d × %s at %g", i.Count, i.Type, i.HourlyPrice))
		}
		c.ComputeReservedPerHour.Value, c.ComputeReservedPerHour.Formula = money(v), strings.Join(parts, " + ")
		c.ComputeReservedPerHour.From = "price model instances"
	case in.RequestedCores > 0 && (in.RequestedMemoryGiB > 0 || m.GiBHour == 0):
		v := in.RequestedCores*m.CoreHour + in.RequestedMemoryGiB*m.GiBHour
		c.ComputeReservedPerHour.Value = money(v)
		c.ComputeReservedPerHour.Formula = fmt.Sprintf("%.3g cores requested × %g + %.3g GiB requested × %g", in.RequestedCores, m.CoreHour, in.RequestedMemoryGiB, m.GiBHour)
		c.ComputeReservedPerHour.From = in.RequestedFrom + " × price model"
	default:
		c.ComputeReservedPerHour.Missing = "nothing reserved is known: the brokers' pods requested no CPU and memory (local processes request none), and the price model lists no instances"
	}

	// Storage held: the produced rate, times the copies kept, times the
	// retention.
	c.StoragePerHour = Figure{Unit: perHour, From: "durability setting × price model"}
	switch {
	case m.StorageGBMonth == 0 || m.RetentionHours == 0:
		c.StoragePerHour.Value = money(0)
		c.StoragePerHour.Formula = "not charged: the price model's storageGBMonth or retentionHours is 0"
	case in.Replicas <= 0:
		c.StoragePerHour.Missing = "copies kept: the run's durability names no replication factor or write quorum"
	default:
		held := in.PublishMBPerSec * mbPerSecToGiBPerHour * m.RetentionHours * float64(in.Replicas)
		c.StoragePerHour.Value = money(held * m.StorageGBMonth / HoursPerMonth)
		c.StoragePerHour.Formula = fmt.Sprintf("%.3g MB/s × 3600 s ÷ 2^30 × %g h retained × %d copies = %.4g GiB held; × %g per GiB-month ÷ %d h",
			in.PublishMBPerSec, m.RetentionHours, in.Replicas, held, m.StorageGBMonth, HoursPerMonth)
	}

	// Traffic between zones.
	c.CrossZonePerHour = Figure{Unit: perHour}
	replShare, clientShare := shares(m)
	switch {
	case m.CrossZoneGB == 0 || (replShare == 0 && clientShare == 0):
		c.CrossZonePerHour.Value = money(0)
		c.CrossZonePerHour.Formula = fmt.Sprintf("not charged: the price model's crossZoneGB is %g and its brokers span %d zone(s)", m.CrossZoneGB, zones(m))
	default:
		repl, from, missing := replicationMBPerSec(in, e)
		if missing != "" {
			c.CrossZonePerHour.Missing = missing
			break
		}
		client := in.PublishMBPerSec + in.ConsumeMBPerSec
		gibh := (repl*replShare + client*clientShare) * mbPerSecToGiBPerHour
		c.CrossZonePerHour.Value = money(gibh * m.CrossZoneGB)
		c.CrossZonePerHour.Formula = fmt.Sprintf("(%.3g MB/s replication × %.2f + %.3g MB/s clients × %.2f) × 3600 s ÷ 2^30 = %.4g GiB/h; × %g per GiB",
			repl, replShare, client, clientShare, gibh, m.CrossZoneGB)
		c.CrossZonePerHour.From = from + "; shares from the price model"
	}

	// The whole, and per TB.
	compute, which := c.ComputeReservedPerHour, "compute reserved"
	if compute.Value == nil {
		compute, which = c.ComputeUsedPerHour, "compute used"
	}
	c.TotalPerHour = Figure{Unit: perHour}
	c.PerTBIngested = Figure{Unit: cur + " per TB produced"}
	var missing []string
	for _, p := range []struct {
		name string
		f    Figure
	}{{which, compute}, {"storage", c.StoragePerHour}, {"cross-zone traffic", c.CrossZonePerHour}} {
		if p.f.Value == nil {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		c.TotalPerHour.Missing = "no " + strings.Join(missing, ", ") + " figure (see each)"
		c.PerTBIngested.Missing = c.TotalPerHour.Missing
		return c
	}
	total := *compute.Value + *c.StoragePerHour.Value + *c.CrossZonePerHour.Value
	c.TotalPerHour.Value = money(total)
	c.TotalPerHour.Formula = fmt.Sprintf("%s %.4g + storage %.4g + cross-zone %.4g", which, *compute.Value, *c.StoragePerHour.Value, *c.CrossZonePerHour.Value)
	if in.PublishMBPerSec > 0 {
		tb := in.PublishMBPerSec * tbPerHourPerMBPerSec
		c.PerTBIngested.Value = money(total / tb)
		c.PerTBIngested.Formula = fmt.Sprintf("%.4g per hour ÷ (%.3g MB/s × 3600 s ÷ 10^6 = %.4g TB/h)", total, in.PublishMBPerSec, tb)
	} else {
		c.PerTBIngested.Missing = "nothing was produced"
	}
	return c
}

// replicationMBPerSec is the brokers' replication traffic: measured (the
// brokers' network in less the produced rate) where network was
// measured, else modeled from the copies the durability setting keeps: a
// Kafka leader sends each byte to replicas-1 followers, a Pulsar broker to
// writeQuorum bookies.
func replicationMBPerSec(in Input, e Efficiency) (v float64, from, missing string) {
	if f := e.ReplicationPerByte; f.Value != nil {
		return *f.Value * in.PublishMBPerSec, "replication measured (network in − produced, " + f.From + ")", ""
	}
	if in.Replicas <= 0 {
		return 0, "", "replication traffic: network was not measured and the durability setting names no replication factor or write quorum"
	}
	copies := float64(in.Replicas)
	how := fmt.Sprintf("%d bookie copies", in.Replicas)
	if in.System != v1alpha1.SystemPulsar {
		copies--
		how = fmt.Sprintf("%d replicas − 1", in.Replicas)
	}
	return copies * in.PublishMBPerSec, "replication modeled from the durability setting (" + how + "; network not measured)", ""
}

// projectionAssumption is what a projection takes for granted.
const projectionAssumption = "linear: every resource grows with the produced rate as this run's per-MB/s figures say (cores, memory, disk and network as measured), compute priced on use with no headroom; partitions, batching, a NIC's or a disk's limit and the number of machines are not modeled"

// project scales the cost at the measured rate to m.ProjectToMBPerSec.
func project(in Input, m PriceModel, c Costs) *Projection {
	p := &Projection{TargetMBPerSec: m.ProjectToMBPerSec, Assumption: projectionAssumption,
		Cores:        Figure{Unit: "cores"},
		TotalPerHour: Figure{Unit: m.Currency + " per hour"}}
	if in.PublishMBPerSec <= 0 {
		p.Refused = "nothing was produced, so there is no efficiency to scale"
		return p
	}
	if in.Resources != nil && in.Resources.Host != nil && in.Resources.Host.CPUBound {
		p.Refused = "the host's CPUs bounded this run (" + in.Resources.Host.CPUVerdict + "), so its efficiency is the host's, not the brokers'"
		return p
	}
	scale := m.ProjectToMBPerSec / in.PublishMBPerSec
	if t := totals(in); t != nil && t.CPUCores != nil {
		p.Cores.Value = money(*t.CPUCores * scale)
		p.Cores.Formula = fmt.Sprintf("%.3g cores used × %g ÷ %.3g MB/s", *t.CPUCores, m.ProjectToMBPerSec, in.PublishMBPerSec)
	} else {
		p.Cores.Missing = notMeasured(in, "broker cores used")
	}
	used := c.ComputeUsedPerHour
	switch {
	case used.Value == nil:
		p.TotalPerHour.Missing = "compute used: " + used.Missing
	case c.StoragePerHour.Value == nil || c.CrossZonePerHour.Value == nil:
		p.TotalPerHour.Missing = "storage or cross-zone traffic has no figure at the measured rate (see each)"
	default:
		at := *used.Value + *c.StoragePerHour.Value + *c.CrossZonePerHour.Value
		p.TotalPerHour.Value = money(at * scale)
		p.TotalPerHour.Formula = fmt.Sprintf("(compute used %.4g + storage %.4g + cross-zone %.4g) × %g ÷ %.3g MB/s",
			*used.Value, *c.StoragePerHour.Value, *c.CrossZonePerHour.Value, m.ProjectToMBPerSec, in.PublishMBPerSec)
	}
	if in.OneMachine {
		p.Flags = append(p.Flags, "one machine hosted every broker: they shared its disks, network and CPUs, so brokers on machines of their own may do better or worse per core")
	}
	if in.TargetMBPerSec > 0 && in.PublishMBPerSec < 0.95*in.TargetMBPerSec {
		p.Flags = append(p.Flags, fmt.Sprintf("the run produced %.3g of the %.3g MB/s asked: the load generator or the brokers fell behind, so the efficiency is at the rate reached", in.PublishMBPerSec, in.TargetMBPerSec))
	}
	if scale > 10 {
		p.Flags = append(p.Flags, fmt.Sprintf("%.0f times the measured rate: far outside what was measured", scale))
	}
	return p
}
