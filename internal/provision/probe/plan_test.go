package probe

import (
	"reflect"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func class(name, provisioner string, isDefault bool) storagev1.StorageClass {
	c := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
	if isDefault {
		c.Annotations = map[string]string{AnnotationDefaultClass: "true"}
	}
	return c
}

func TestPlanFor(t *testing.T) {
	gp3 := class("gp3", "ebs.csi.aws.com", false)
	localNVMe := class("local-nvme", StaticProvisioner, false)
	standardDefault := class("standard", "rancher.io/local-path", true)
	localDefault := class("local-nvme", StaticProvisioner, true)
	kafka := func(data *string, extra ...*string) *v1alpha1.BenchmarkRun {
		return run(v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			s := &r.Spec.Cluster.Managed.Storage
			s.Data.StorageClassName = data
			for _, c := range extra {
				s.AdditionalData = append(s.AdditionalData, v1alpha1.VolumeSpec{StorageClassName: c})
			}
		})
	}
	pulsar := func(journal, ledgers *string) *v1alpha1.BenchmarkRun {
		return run(v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Storage.Journal.StorageClassName = journal
			r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ledgers
		})
	}
	probeOff := func(r *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
		r.Spec.Testbed = &v1alpha1.TestbedSpec{Probe: ptr.To(false)}
		return r
	}
	existing := run(v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
	})

	tests := []struct {
		name    string
		run     *v1alpha1.BenchmarkRun
		classes []storagev1.StorageClass
		want    []Volume // classes resolved; nil: no probe Job
		note    string
	}{
		{
			name: "a dynamic class is probed as before", run: kafka(sp("gp3")),
			classes: []storagev1.StorageClass{gp3, localNVMe},
			want:    []Volume{{Name: "data", StorageClassName: sp("gp3")}},
		},
		{
			name: "a static class is not claimed", run: kafka(sp("local-nvme")),
			classes: []storagev1.StorageClass{gp3, localNVMe},
			note:    "storage not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a broker's disk; the probe would take one",
		},
		{
			name: "no class named: the default, by its own name", run: kafka(nil),
			classes: []storagev1.StorageClass{gp3, standardDefault},
			want:    []Volume{{Name: "data", StorageClassName: sp("standard")}},
		},
		{
			name: "an empty class is the default too (Strimzi omits it)", run: kafka(sp("")),
			classes: []storagev1.StorageClass{standardDefault},
			want:    []Volume{{Name: "data", StorageClassName: sp("standard")}},
		},
		{
			name: "a static default class is not claimed", run: kafka(nil),
			classes: []storagev1.StorageClass{gp3, localDefault},
			note:    "storage not probed: the default class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a broker's disk; the probe would take one",
		},
		{
			name: "no class named and no default: nothing to provision from", run: kafka(nil),
			classes: []storagev1.StorageClass{gp3},
			note:    "storage not probed: no storageClassName is set and the cluster has no default StorageClass (annotation storageclass.kubernetes.io/is-default-class), so a claim could bind only a volume made beforehand, maybe a broker's disk",
		},
		{
			name: "a class that does not exist can only bind a volume made beforehand", run: kafka(sp("nvme-by-hand")),
			classes: []storagev1.StorageClass{gp3},
			note:    "storage not probed: StorageClass nvme-by-hand does not exist, so a claim of it could bind only a volume made beforehand, maybe a broker's disk",
		},
		{
			name: "kafka JBOD: the dynamic class is probed, the static one left out", run: kafka(sp("gp3"), sp("local-nvme")),
			classes: []storagev1.StorageClass{gp3, localNVMe},
			want:    []Volume{{Name: "data", StorageClassName: sp("gp3")}},
			note:    "data-1 not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a broker's disk; the probe would take one",
		},
		{
			name: "pulsar: a dynamic journal is probed, static ledgers are not", run: pulsar(sp("gp3"), sp("local-nvme")),
			classes: []storagev1.StorageClass{gp3, localNVMe},
			want:    []Volume{{Name: "journal", StorageClassName: sp("gp3")}},
			note:    "ledgers not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one",
		},
		{
			name: "pulsar: journal and ledgers of one static class, one sentence", run: pulsar(sp("local-nvme"), sp("local-nvme")),
			classes: []storagev1.StorageClass{localNVMe},
			note:    "storage not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one",
		},
		{
			name: "pulsar: each volume left out for its own reason", run: pulsar(sp("local-nvme"), sp("gone")),
			classes: []storagev1.StorageClass{localNVMe},
			note: "journal not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one; " +
				"ledgers not probed: StorageClass gone does not exist, so a claim of it could bind only a volume made beforehand, maybe a bookie's disk",
		},
		{
			name: "a testbed section without probe is probed", run: func() *v1alpha1.BenchmarkRun {
				r := kafka(sp("gp3"))
				r.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
				return r
			}(),
			classes: []storagev1.StorageClass{gp3},
			want:    []Volume{{Name: "data", StorageClassName: sp("gp3")}},
		},
		{
			name: "spec.testbed.probe false: nothing, even on a dynamic class", run: probeOff(kafka(sp("gp3"))),
			classes: []storagev1.StorageClass{gp3},
			note:    NoteProbeOff,
		},
		{
			name: "an existing cluster probes an emptyDir, whatever the classes", run: existing,
			want: []Volume{{Name: "scratch"}},
		},
		{
			name: "spec.testbed.probe false on an existing cluster: nothing", run: probeOff(existing.DeepCopy()),
			note: NoteProbeOff,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanFor(tc.run, tc.classes)
			if !reflect.DeepEqual(got.Volumes, tc.want) {
				t.Errorf("volumes %s, want %s", volumesText(got.Volumes), volumesText(tc.want))
			}
			if got.Probes() != (tc.want != nil) {
				t.Errorf("Probes() = %v with volumes %s", got.Probes(), volumesText(got.Volumes))
			}
			if got.Note != tc.note {
				t.Errorf("note\n%q\nwant\n%q", got.Note, tc.note)
			}
		})
	}
}

func volumesText(vs []Volume) string {
	out := "["
	for _, v := range vs {
		out += v.Name + ":"
		if v.StorageClassName == nil {
			out += "<nil> "
		} else {
			out += *v.StorageClassName + " "
		}
	}
	return out + "]"
}

func TestDefaultClass(t *testing.T) {
	at := func(c storagev1.StorageClass, minutes int) storagev1.StorageClass {
		c.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, minutes, 0, 0, time.UTC))
		return c
	}
	beta := class("beta", "x", false)
	beta.Annotations = map[string]string{AnnotationDefaultClassBeta: "true"}
	notDefault := class("off", "x", false)
	notDefault.Annotations = map[string]string{AnnotationDefaultClass: "false"}
	for _, tc := range []struct {
		name    string
		classes []storagev1.StorageClass
		want    string // "" for none
	}{
		{"none marked", []storagev1.StorageClass{class("a", "x", false), notDefault}, ""},
		{"one marked", []storagev1.StorageClass{class("a", "x", false), class("b", "x", true)}, "b"},
		{"the beta annotation counts", []storagev1.StorageClass{class("a", "x", false), beta}, "beta"},
		{"of two marked, the newest (as the API server picks)", []storagev1.StorageClass{at(class("new", "x", true), 5), at(class("old", "x", true), 1)}, "new"},
		{"of two as new, the first by name", []storagev1.StorageClass{at(class("b", "x", true), 1), at(class("a", "x", true), 1)}, "a"},
	} {
		got := ""
		if c := DefaultClass(tc.classes); c != nil {
			got = c.Name
		}
		if got != tc.want {
			t.Errorf("%s: default %q, want %q", tc.name, got, tc.want)
		}
	}
}
