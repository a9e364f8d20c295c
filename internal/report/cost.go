package report

import (
	"fmt"
	"slices"

	"github.com/streambench/streambench-operator/internal/cost"
)

// costView is the "Efficiency and cost" card: each figure with its
// formula and where its inputs came from, or why it is missing.
type costView struct {
	Model      string
	Default    bool
	Efficiency []costRow
	Costs      []costRow
	Projection *projectionView
	Notes      []string
}

type costRow struct {
	Name, Value, Unit, Formula, From, Missing string
}

type projectionView struct {
	Target, Assumption, Refused string
	Rows                        []costRow
	Flags                       []string
}

func costCard(r *cost.Report) *costView {
	if r == nil {
		return nil
	}
	v := &costView{Model: fmt.Sprintf("%s (%s, prices of %s: %s)", r.Model.Name, r.Model.Currency, r.Model.Date, r.Model.Source),
		Default: r.Model.Default, Notes: r.Notes}
	e, c := r.Efficiency, r.Costs
	for _, f := range []struct {
		name string
		f    cost.Figure
	}{
		{"per broker core used", e.MBPerSecPerCoreUsed}, {"per broker core requested", e.MBPerSecPerCoreRequested},
		{"per GiB of broker memory used", e.MBPerSecPerGiBUsed}, {"per GiB requested", e.MBPerSecPerGiBRequested},
		{"disk written per byte produced", e.DiskWritePerByte}, {"network in per byte produced", e.NetworkInPerByte},
		{"network out per byte produced", e.NetworkOutPerByte}, {"replication per byte produced", e.ReplicationPerByte},
	} {
		v.Efficiency = append(v.Efficiency, costFigure(f.name, f.f, "%.3g"))
	}
	for _, f := range []struct {
		name string
		f    cost.Figure
	}{
		{"compute, on what was used", c.ComputeUsedPerHour}, {"compute, on what was reserved", c.ComputeReservedPerHour},
		{"storage held", c.StoragePerHour}, {"traffic between zones", c.CrossZonePerHour},
		{"total", c.TotalPerHour}, {"per TB produced", c.PerTBIngested},
	} {
		v.Costs = append(v.Costs, costFigure(f.name, f.f, "%.4g"))
	}
	if p := r.Projection; p != nil {
		v.Projection = &projectionView{Target: fmt.Sprintf("%g MB/s", p.TargetMBPerSec), Assumption: p.Assumption, Refused: p.Refused, Flags: p.Flags}
		if p.Refused == "" {
			v.Projection.Rows = []costRow{costFigure("broker cores", p.Cores, "%.3g"), costFigure("cost", p.TotalPerHour, "%.4g")}
		}
	}
	return v
}

func costFigure(name string, f cost.Figure, format string) costRow {
	r := costRow{Name: name, Unit: f.Unit, Formula: f.Formula, From: f.From, Missing: f.Missing}
	if f.Value != nil {
		r.Value = fmt.Sprintf(format, *f.Value)
	}
	return r
}

// costRows are compare's cost rows, one per run (none when no run has a
// cost): the figures people decide by, with the model and the resources'
// source beside them (two runs priced or measured differently are
// flagged, FlagCost).
func costRows(runs []Named) [][]string {
	if !slices.ContainsFunc(runs, func(n Named) bool { return n.Summary.Cost != nil }) {
		return nil
	}
	var rows [][]string
	for _, n := range runs {
		c := n.Summary.Cost
		if c == nil {
			rows = append(rows, []string{n.Name, "–", "–", "–", "–", "–", "–"})
			continue
		}
		proj := "–"
		if p := c.Projection; p != nil {
			proj = opt(p.TotalPerHour.Value, "%.4g") + fmt.Sprintf(" at %g MB/s", p.TargetMBPerSec)
			if p.Refused != "" {
				proj = "refused"
			}
		}
		rows = append(rows, []string{n.Name, c.Model.Name + " (" + c.Model.Currency + ")", resourcesSource(n.Summary),
			opt(c.Efficiency.MBPerSecPerCoreUsed.Value, "%.3g"), opt(c.Costs.TotalPerHour.Value, "%.4g"), opt(c.Costs.PerTBIngested.Value, "%.4g"), proj})
	}
	return rows
}

// costColumns head compare's cost rows.
var costColumns = []string{"", "price model", "resources from", "MB/s per core used", "per hour", "per TB produced", "projected per hour"}
