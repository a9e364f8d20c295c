// Package storageclass answers what the builders ask of a cluster's
// StorageClasses: which one a claim without a class gets, and whether a
// class makes volumes on demand. The testbed probe (internal/provision/
// probe) and the Pulsar metadata store's check (internal/provision/
// pulsar) ask the same questions.
package storageclass

import storagev1 "k8s.io/api/storage/v1"

// StaticProvisioner is the provisioner of a class whose volumes are made
// beforehand, one per disk (config/nodepool's local-nvme, the local
// static provisioner's classes): nothing makes a new one on demand, so a
// claim binds one of those disks, and a bound local disk is gone for the
// run and, with reclaimPolicy Delete, Failed after it.
const StaticProvisioner = "kubernetes.io/no-provisioner"

// The annotations that make a StorageClass the cluster's default, the
// class of a claim that names none; the API server still honours the
// beta one.
const (
	AnnotationDefault     = "storageclass.kubernetes.io/is-default-class"
	AnnotationDefaultBeta = "storageclass.beta.kubernetes.io/is-default-class"
)

// Default is the class a claim that names none gets: of several marked
// default, the newest, as the API server picks (then the first by name,
// to be deterministic); nil when none is.
func Default(classes []storagev1.StorageClass) *storagev1.StorageClass {
	var out *storagev1.StorageClass
	for i := range classes {
		c := &classes[i]
		if c.Annotations[AnnotationDefault] != "true" && c.Annotations[AnnotationDefaultBeta] != "true" {
			continue
		}
		if out == nil || c.CreationTimestamp.After(out.CreationTimestamp.Time) ||
			(c.CreationTimestamp.Equal(&out.CreationTimestamp) && c.Name < out.Name) {
			out = c
		}
	}
	return out
}
