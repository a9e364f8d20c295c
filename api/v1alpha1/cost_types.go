package v1alpha1

// CostSpec says how a run's cost is priced (docs/cost.md). Without it the
// run is priced at the default list prices (internal/cost.Default), which
// its results name.
// +kubebuilder:validation:XValidation:rule="!(has(self.priceModel) && has(self.priceModelRef))",message="spec.cost: set priceModel or priceModelRef, not both"
type CostSpec struct {
	// PriceModel is the price model itself.
	// +optional
	PriceModel *PriceModel `json:"priceModel,omitempty"`
	// PriceModelRef names a ConfigMap in the run's namespace holding a
	// price model file (YAML), read when the run starts: kubectl create
	// configmap prices --from-file=prices.yaml.
	// +optional
	PriceModelRef *ConfigMapFileRef `json:"priceModelRef,omitempty"`
}

// PriceModel is what resources cost, in one currency. A price left at 0 is
// not charged (and the figure says so); a user's model is read from a file
// (local mode: --price-model) or a ConfigMap (spec.cost.priceModelRef).
type PriceModel struct {
	// Name names the model in the results, e.g. "gcp-n2-us-central1".
	Name string `json:"name"`
	// Source is where the prices come from (a URL or a document), and Date
	// when they were read (YYYY-MM-DD): a price without either is not one a
	// reader can check.
	Source   string `json:"source"`
	Date     string `json:"date"`
	Currency string `json:"currency"`
	// CoreHour is the price of one vCPU for an hour; GiBHour of one GiB of
	// memory for an hour.
	// +optional
	CoreHour float64 `json:"coreHour,omitempty"`
	// +optional
	GiBHour float64 `json:"gibHour,omitempty"`
	// Instances, when given, replace CoreHour and GiBHour for the brokers'
	// compute: what the user runs them on, each type's count and hourly
	// price (e.g. three i3.4xlarge at 1.248). Measured efficiency still
	// says how much of them the run used.
	// +optional
	Instances []PriceInstance `json:"instances,omitempty"`
	// StorageGBMonth is the price of one GiB of disk kept for a month (730
	// hours); RetentionHours how long produced data is kept. The storage
	// held is the produced rate times the copies the durability setting
	// keeps times the retention.
	// +optional
	StorageGBMonth float64 `json:"storageGBMonth,omitempty"`
	// +optional
	RetentionHours float64 `json:"retentionHours,omitempty"`
	// CrossZoneGB is the price of one GiB that crosses between zones (the
	// sum of both directions' charges where a cloud bills each). Zones is
	// how many zones the brokers are spread over (default 1: nothing
	// crosses). ReplicationCrossZoneShare and ClientCrossZoneShare are the
	// shares of replication and of client traffic that cross; each
	// defaults to (Zones-1)/Zones, which is what an even spread with no
	// rack-aware fetching gives.
	// +optional
	CrossZoneGB float64 `json:"crossZoneGB,omitempty"`
	// +optional
	Zones int `json:"zones,omitempty"`
	// +optional
	ReplicationCrossZoneShare *float64 `json:"replicationCrossZoneShare,omitempty"`
	// +optional
	ClientCrossZoneShare *float64 `json:"clientCrossZoneShare,omitempty"`
	// ProjectToMBPerSec, when set, projects the cost to that produced rate
	// (MB/s, 10^6 bytes), scaling from the measured efficiency.
	// +optional
	ProjectToMBPerSec float64 `json:"projectToMBPerSec,omitempty"`
}

// PriceInstance is one machine type the brokers run on.
type PriceInstance struct {
	Type        string  `json:"type"`
	Count       int     `json:"count"`
	HourlyPrice float64 `json:"hourlyPrice"`
}
