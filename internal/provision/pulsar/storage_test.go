package pulsar

import (
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/storageclass"
)

func TestCheckMetadataStoreClass(t *testing.T) {
	class := func(name, provisioner string, isDefault bool) storagev1.StorageClass {
		c := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1, 0))}, Provisioner: provisioner}
		if isDefault {
			c.Annotations = map[string]string{storageclass.AnnotationDefault: "true"}
		}
		return c
	}
	nvme := func(isDefault bool) storagev1.StorageClass {
		return class("local-nvme", storageclass.StaticProvisioner, isDefault)
	}
	gp3 := func(isDefault bool) storagev1.StorageClass { return class("gp3", "ebs.csi.aws.com", isDefault) }
	onNVMe := func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Storage.Journal.StorageClassName = ptr.To("local-nvme")
		r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ptr.To("local-nvme")
	}
	zkClass := func(c string) func(*v1alpha1.BenchmarkRun) {
		return func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Storage.MetadataStore.StorageClassName = ptr.To(c)
		}
	}
	for _, tc := range []struct {
		name        string
		run         *v1alpha1.BenchmarkRun
		classes     []storagev1.StorageClass
		wantRefused []string
		wantWarning []string
	}{
		{
			name:    "a named class is the user's choice, even the bookies' own",
			run:     newRun(onNVMe, zkClass("local-nvme")),
			classes: []storagev1.StorageClass{nvme(true)},
		},
		{
			name:    "a named class with no default at all",
			run:     newRun(onNVMe, zkClass("standard")),
			classes: nil,
		},
		{
			name:    "the default is a class of its own",
			run:     newRun(onNVMe),
			classes: []storagev1.StorageClass{nvme(false), gp3(true)},
		},
		{
			name:    "no default class: the claims would stay Pending",
			run:     newRun(onNVMe),
			classes: []storagev1.StorageClass{nvme(false), gp3(false)},
			wantRefused: []string{
				"spec.cluster.managed.storage.metadataStore.storageClassName is not set and the cluster has no default StorageClass",
				"pulsar-init Job would time out",
				"set spec.cluster.managed.storage.metadataStore.storageClassName to a class",
			},
		},
		{
			name:    "an empty name is no name",
			run:     newRun(onNVMe, zkClass("")),
			classes: nil,
			wantRefused: []string{
				"spec.cluster.managed.storage.metadataStore.storageClassName is not set and the cluster has no default StorageClass",
			},
		},
		{
			name:    "the default is the bookies' static NVMe class: it would take a bookie's disk",
			run:     newRun(onNVMe),
			classes: []storagev1.StorageClass{nvme(true), gp3(false)},
			wantRefused: []string{
				"default StorageClass local-nvme, which is also the bookies' (spec.cluster.managed.storage.journal and spec.cluster.managed.storage.ledgers)",
				"static volumes (kubernetes.io/no-provisioner): each of ZooKeeper's 3 claims would take a bookie's disk",
				"set spec.cluster.managed.storage.metadataStore.storageClassName to a class of its own",
			},
		},
		{
			name:    "bookies on the default too (no class named anywhere), static",
			run:     newRun(),
			classes: []storagev1.StorageClass{nvme(true)},
			wantRefused: []string{
				"default StorageClass local-nvme, which is also the bookies' (spec.cluster.managed.storage.journal and spec.cluster.managed.storage.ledgers)",
			},
		},
		{
			name: "the default is the ledgers' class, provisioned on demand: said, not refused",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.Storage.Journal.StorageClassName = ptr.To("local-nvme")
				r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ptr.To("gp3")
			}),
			classes: []storagev1.StorageClass{nvme(false), gp3(true)},
			wantWarning: []string{
				"default StorageClass gp3, which is also the bookies' (spec.cluster.managed.storage.ledgers)",
				"set spec.cluster.managed.storage.metadataStore.storageClassName to another class",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckMetadataStoreClass(tc.run.Spec.Cluster.Managed, tc.classes)
			for _, c := range []struct {
				what, got string
				want      []string
			}{{"Refused", got.Refused, tc.wantRefused}, {"Warning", got.Warning, tc.wantWarning}} {
				if (c.got == "") != (len(c.want) == 0) {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
				for _, w := range c.want {
					if !strings.Contains(c.got, w) {
						t.Errorf("%s = %q\nwant it to contain %q", c.what, c.got, w)
					}
				}
			}
		})
	}
}
