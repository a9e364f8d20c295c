package pulsar

import (
	"fmt"
	"strings"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/storageclass"
)

// MetadataStoreClassField is the field that names ZooKeeper's class.
const MetadataStoreClassField = "spec.cluster.managed.storage.metadataStore.storageClassName"

// MetadataStoreClass is what CheckMetadataStoreClass found: Refused, the
// run must fail before anything is deployed; Warning, it may go on, but
// the user should know.
type MetadataStoreClass struct {
	Refused string
	Warning string
}

// CheckMetadataStoreClass looks, before the chart is installed, at the
// class ZooKeeper's claims would get when MetadataStoreClassField is
// empty (a named class is the user's choice and is not judged), given the
// cluster's StorageClasses:
//
//   - no default class: refused. The claims would stay Pending, the
//     chart's pulsar-init Job would wait for ZooKeeper until it gave up,
//     and the run would fail at its provisioning deadline saying only
//     that a StatefulSet is not ready.
//   - the default is the bookies' own class (journal's or ledgers', named
//     or by default) with static volumes (storageclass.StaticProvisioner,
//     config/nodepool's local-nvme): refused. Each ZooKeeper claim would
//     bind one of the bookies' disks (the bookies then wait for disks
//     that are gone), and a local volume's node affinity would pull
//     ZooKeeper onto the bookies' nodes whatever auxiliaryPlacement says.
//     Refused rather than said: the run could not measure what it claims.
//   - the default is the bookies' class, provisioned on demand: a
//     warning. ZooKeeper gets new volumes, but of the kind the bookies are
//     measured on (with a node-local provisioner maybe the same disk);
//     that is a choice a user can make knowingly.
func CheckMetadataStoreClass(m *v1alpha1.ManagedCluster, classes []storagev1.StorageClass) MetadataStoreClass {
	if c := m.Storage.MetadataStore.StorageClassName; c != nil && *c != "" {
		return MetadataStoreClass{}
	}
	def := storageclass.Default(classes)
	if def == nil {
		return MetadataStoreClass{Refused: fmt.Sprintf("%s is not set and the cluster has no default StorageClass (annotation %s), "+
			"so ZooKeeper's claims would stay Pending and the chart's pulsar-init Job would time out waiting for it: "+
			"set %s to a class that provisions volumes off the bookies' disks (kubectl get storageclass), or mark one the cluster's default",
			MetadataStoreClassField, storageclass.AnnotationDefault, MetadataStoreClassField)}
	}
	var bookies []string // the bookies' volumes that get the default's class
	for _, v := range []struct {
		field string
		spec  v1alpha1.VolumeSpec
	}{{"journal", m.Storage.Journal}, {"ledgers", m.Storage.Ledgers}} {
		name := def.Name
		if v.spec.StorageClassName != nil {
			name = *v.spec.StorageClassName
		}
		if name == def.Name {
			bookies = append(bookies, "spec.cluster.managed.storage."+v.field)
		}
	}
	if len(bookies) == 0 {
		return MetadataStoreClass{}
	}
	which := fmt.Sprintf("%s is not set, so ZooKeeper's claims get the cluster's default StorageClass %s, which is also the bookies' (%s)",
		MetadataStoreClassField, def.Name, strings.Join(bookies, " and "))
	if def.Provisioner == storageclass.StaticProvisioner {
		return MetadataStoreClass{Refused: fmt.Sprintf("%s and has static volumes (%s): each of ZooKeeper's %d claims would take a bookie's disk, "+
			"and its local volume would pin ZooKeeper to a bookie's node; set %s to a class of its own (off the bookies' disks)",
			which, storageclass.StaticProvisioner, m.MetadataStoreReplicasOrDefault(), MetadataStoreClassField)}
	}
	return MetadataStoreClass{Warning: fmt.Sprintf("%s: ZooKeeper's volumes are of the kind of disk the bookies are measured on (with a node-local provisioner maybe the same disk); "+
		"set %s to another class to keep them apart", which, MetadataStoreClassField)}
}
