package v1alpha1

import "time"

// The defaults of the spec, each written once. Where the CRD defaults a
// field (a +kubebuilder:default marker), the constant is the same value for
// Go callers that never pass the API server (builders, tests), and
// internal/admission's tests hold the two equal. Bookies and ZooKeeper
// nodes are not defaulted by the CRD, because they mean nothing for Kafka;
// an absent count means the constant.
const (
	// DefaultBrokers: +kubebuilder:default on ManagedCluster.Brokers.
	DefaultBrokers int32 = 3
	// DefaultBookies is the ensemble size of the durability levels
	// (docs/methodology.md), so 3/3/2 quorums are real.
	DefaultBookies int32 = 3
	// DefaultMetadataStoreReplicas: three ZooKeeper nodes is the smallest
	// quorum that survives a node loss.
	DefaultMetadataStoreReplicas int32 = 3
	// DefaultProvisioningTimeout: +kubebuilder:default on
	// TimeoutsSpec.Provisioning.
	DefaultProvisioningTimeout = 20 * time.Minute
)

// BrokersOrDefault is spec.cluster.managed.brokers, DefaultBrokers when unset.
func (m *ManagedCluster) BrokersOrDefault() int32 { return orDefault(m.Brokers, DefaultBrokers) }

// BookiesOrDefault is spec.cluster.managed.bookies, DefaultBookies when unset.
func (m *ManagedCluster) BookiesOrDefault() int32 { return orDefault(m.Bookies, DefaultBookies) }

// MetadataStoreReplicasOrDefault is spec.cluster.managed.metadataStoreReplicas,
// DefaultMetadataStoreReplicas when unset.
func (m *ManagedCluster) MetadataStoreReplicasOrDefault() int32 {
	return orDefault(m.MetadataStoreReplicas, DefaultMetadataStoreReplicas)
}

// ProvisioningOrDefault is spec.timeouts.provisioning,
// DefaultProvisioningTimeout when unset.
func (t TimeoutsSpec) ProvisioningOrDefault() time.Duration {
	if t.Provisioning != nil {
		return t.Provisioning.Duration
	}
	return DefaultProvisioningTimeout
}

func orDefault(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}
