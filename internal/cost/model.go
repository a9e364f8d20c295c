// Package cost turns what a run measured into what its throughput costs:
// efficiency (MB/s per broker core and per GiB, bytes written to disk and
// sent over the network per byte produced), the cost per hour and per TB
// ingested under a price model the user gives (or the default one, whose
// source and date are named), and a projection to a target rate, labelled
// as such and refused where the run was bounded by something else than
// the brokers. Every figure carries the formula it came from and where its
// inputs were measured; an input that was not measured makes the figure
// missing, with why, never zero. Pure: computed once, in the outcome step
// both modes share (internal/outcome).
package cost

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// PriceModel is what resources cost (the API's type: a run's spec.cost
// carries one, and its status the one used).
type PriceModel = v1alpha1.PriceModel

// Instance is one machine type the brokers run on.
type Instance = v1alpha1.PriceInstance

// HoursPerMonth is the month a GB-month price means (730 = 8760 / 12, as
// the clouds' calculators use).
const HoursPerMonth = 730

// Default is the model used when the user gives none: Google Compute
// Engine's on-demand list prices, whose per-vCPU and per-GiB prices are
// published separately (so no split of an instance's price has to be
// invented): N2 in us-central1, zonal SSD persistent disk, and traffic
// between zones of one region. Recorded on the date named; they had been
// the listed prices for years by then, but they are not re-read here (the
// build machine has no internet): check them before quoting a cost.
// n2-standard-2 (2 vCPUs, 8 GiB) at these prices is 0.097118 USD an hour,
// its listed price.
func Default() PriceModel {
	return PriceModel{
		Name:              "gcp-n2-us-central1-on-demand",
		Source:            "https://cloud.google.com/compute/vm-instance-pricing (N2: vCPU 0.031611, memory 0.004237 per GiB-hour); https://cloud.google.com/compute/disks-image-pricing (zonal SSD PD 0.17 per GiB-month); https://cloud.google.com/vpc/network-pricing (between zones of a region 0.01 per GiB)",
		Date:              "2026-12-02",
		Currency:          "USD",
		CoreHour:          0.031611,
		GiBHour:           0.004237,
		StorageGBMonth:    0.17,
		RetentionHours:    24,
		CrossZoneGB:       0.01,
		Zones:             3,
		ProjectToMBPerSec: 5000,
	}
}

// Parse reads a price model (YAML or JSON). Unknown fields are refused,
// so a misspelt price is not silently free.
func Parse(data []byte) (PriceModel, error) {
	var m PriceModel
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return PriceModel{}, fmt.Errorf("price model: %w", err)
	}
	return m, Validate(m)
}

// Validate says, naming each field, what makes the model unusable.
func Validate(m PriceModel) error {
	var errs []string
	if m.Name == "" {
		errs = append(errs, "name: empty; name the model (it is printed beside every cost)")
	}
	if m.Source == "" || m.Date == "" {
		errs = append(errs, "source and date: both are required, so a reader can check the prices (a URL or document, and the day they were read, YYYY-MM-DD)")
	}
	if m.Currency == "" {
		errs = append(errs, "currency: empty; e.g. USD")
	}
	for _, p := range []struct {
		field string
		v     float64
	}{{"coreHour", m.CoreHour}, {"gibHour", m.GiBHour}, {"storageGBMonth", m.StorageGBMonth},
		{"retentionHours", m.RetentionHours}, {"crossZoneGB", m.CrossZoneGB}, {"projectToMBPerSec", m.ProjectToMBPerSec}} {
		if p.v < 0 {
			errs = append(errs, fmt.Sprintf("%s: %g is negative", p.field, p.v))
		}
	}
	if m.Zones < 0 {
		errs = append(errs, fmt.Sprintf("zones: %d is negative; 1 (the default) means nothing crosses zones", m.Zones))
	}
	for name, s := range map[string]*float64{"replicationCrossZoneShare": m.ReplicationCrossZoneShare, "clientCrossZoneShare": m.ClientCrossZoneShare} {
		if s != nil && (*s < 0 || *s > 1) {
			errs = append(errs, fmt.Sprintf("%s: %g is not a share between 0 and 1", name, *s))
		}
	}
	for i, in := range m.Instances {
		if in.Type == "" || in.Count < 1 || in.HourlyPrice <= 0 {
			errs = append(errs, fmt.Sprintf("instances[%d]: needs a type, a count of at least 1 and a positive hourlyPrice (got %q, %d, %g)", i, in.Type, in.Count, in.HourlyPrice))
		}
	}
	if m.CoreHour == 0 && m.GiBHour == 0 && len(m.Instances) == 0 {
		errs = append(errs, "coreHour, gibHour, instances: none is set, so compute would cost nothing; set coreHour and gibHour, or list the instances")
	}
	if len(errs) > 0 {
		return errors.New("price model: " + strings.Join(errs, "; "))
	}
	return nil
}

// zones is m.Zones with its default.
func zones(m PriceModel) int {
	if m.Zones < 1 {
		return 1
	}
	return m.Zones
}

// shares are the cross-zone shares of replication and client traffic.
func shares(m PriceModel) (repl, client float64) {
	even := float64(zones(m)-1) / float64(zones(m))
	repl, client = even, even
	if m.ReplicationCrossZoneShare != nil {
		repl = *m.ReplicationCrossZoneShare
	}
	if m.ClientCrossZoneShare != nil {
		client = *m.ClientCrossZoneShare
	}
	return repl, client
}
