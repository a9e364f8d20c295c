package runqueue

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

func pv(name, class string, phase corev1.PersistentVolumePhase, claim string) corev1.PersistentVolume {
	v := corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PersistentVolumeSpec{StorageClassName: class},
		Status:     corev1.PersistentVolumeStatus{Phase: phase},
	}
	if claim != "" {
		v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "bench", Name: claim}
	}
	return v
}

func class(name, provisioner string, isDefault bool) storagev1.StorageClass {
	c := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
	if isDefault {
		c.Annotations = map[string]string{probe.AnnotationDefaultClass: "true"}
	}
	return c
}

// kafkaOn is a managed Kafka run of 3 brokers with data (and extra log
// directories) of class c (nil: the default).
func kafkaOn(name string, c *string, extra int) v1alpha1.BenchmarkRun {
	r := run(name, 10, v1alpha1.PhasePending, streaming)
	r.Spec.System = v1alpha1.SystemKafka
	r.Spec.Cluster.Managed.Brokers = 3
	r.Spec.Cluster.Managed.Storage.Data.StorageClassName = c
	for range extra {
		r.Spec.Cluster.Managed.Storage.AdditionalData = append(r.Spec.Cluster.Managed.Storage.AdditionalData, v1alpha1.VolumeSpec{})
	}
	return r
}

func TestDisks(t *testing.T) {
	classes := []storagev1.StorageClass{
		class("local-nvme", probe.StaticProvisioner, false),
		class("gp3", "ebs.csi.aws.com", true),
	}
	// Claims as Strimzi names a broker's: data-<volume id>-<cluster>-<pool>-<node id>.
	released := func(n int, prefix, claimOf string) []corev1.PersistentVolume {
		var out []corev1.PersistentVolume
		run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: claimOf}}
		for i := range n {
			out = append(out, pv(prefix+string(rune('0'+i)), "local-nvme", corev1.VolumeReleased, "data-0-"+strimzi.PodSetName(run)+"-"+string(rune('0'+i))))
		}
		return out
	}
	finished := run("run-ack2-sync", 0, v1alpha1.PhaseSucceeded, streaming)
	cases := []struct {
		name    string
		run     v1alpha1.BenchmarkRun
		classes []storagev1.StorageClass
		pvs     []corev1.PersistentVolume
		runs    []v1alpha1.BenchmarkRun
		want    string // part of the message; "" means no wait
	}{
		{
			name: "every static volume Released by the last run: wait, naming them, the run and the recipe",
			run:  kafkaOn("me", ptr.To("local-nvme"), 0),
			pvs:  released(3, "local-nvme-", "run-ack2-sync"),
			runs: []v1alpha1.BenchmarkRun{finished, run("run-ack2", 0, v1alpha1.PhaseSucceeded, streaming)},
			want: "the brokers claim 3 PersistentVolume(s) of class local-nvme and 0 are Available; local-nvme-0 (Released), local-nvme-1 (Released), local-nvme-2 (Released) of class local-nvme must be freed first (left by run bench/run-ack2-sync): wipe and free them with the README's disk recipe, hack/free-local-disks.sh local-nvme",
		},
		{
			name: "enough Available: no wait",
			run:  kafkaOn("me", ptr.To("local-nvme"), 0),
			pvs: append(released(2, "old-", "gone"),
				pv("a0", "local-nvme", corev1.VolumeAvailable, ""), pv("a1", "local-nvme", corev1.VolumeAvailable, ""), pv("a2", "local-nvme", corev1.VolumeAvailable, "")),
		},
		{
			name: "additional log directories take data's class: 6 claimed, 3 Available",
			run:  kafkaOn("me", ptr.To("local-nvme"), 1),
			pvs: append(released(3, "old-", "gone"),
				pv("a0", "local-nvme", corev1.VolumeAvailable, ""), pv("a1", "local-nvme", corev1.VolumeAvailable, ""), pv("a2", "local-nvme", corev1.VolumeAvailable, "")),
			want: "claim 6 PersistentVolume(s) of class local-nvme and 3 are Available; old-0 (Released), old-1 (Released), old-2 (Released) of class local-nvme must be freed first (left by claim bench/data-0-gone-broker-283bb9-0, claim bench/data-0-gone-broker-283bb9-1, claim bench/data-0-gone-broker-283bb9-2)",
		},
		{
			name: "too few volumes and none to free: the queue cannot help",
			run:  kafkaOn("me", ptr.To("local-nvme"), 0),
			pvs:  []corev1.PersistentVolume{pv("a0", "local-nvme", corev1.VolumeAvailable, "")},
		},
		{
			name: "a class with a provisioner never waits",
			run:  kafkaOn("me", ptr.To("gp3"), 0),
			pvs:  []corev1.PersistentVolume{pv("x", "gp3", corev1.VolumeReleased, "old")},
		},
		{
			name: "no class named: the default, here dynamic",
			run:  kafkaOn("me", nil, 0),
			pvs:  released(3, "local-nvme-", "x"),
		},
		{
			name:    "no class named and a static default",
			run:     kafkaOn("me", nil, 0),
			classes: []storagev1.StorageClass{class("local-nvme", probe.StaticProvisioner, true)},
			pvs:     released(1, "local-nvme-", "x"),
			want:    "claim 3 PersistentVolume(s) of class local-nvme and 0 are Available",
		},
		{
			name: "a class that does not exist: the claims say so themselves",
			run:  kafkaOn("me", ptr.To("nope"), 0),
			pvs:  []corev1.PersistentVolume{pv("x", "nope", corev1.VolumeReleased, "old")},
		},
		{
			name: "volumes still Bound to a finished run's claims are on their way to Released",
			run:  kafkaOn("me", ptr.To("local-nvme"), 0),
			pvs: []corev1.PersistentVolume{
				pv("b0", "local-nvme", corev1.VolumeBound, "data-0-run-ack2-sync-broker-fb1105-0"),
				pv("b1", "local-nvme", corev1.VolumeBound, "data-0-someone-else-0"),
			},
			runs: []v1alpha1.BenchmarkRun{finished},
			want: "b0 (Bound) of class local-nvme must be freed first (left by run bench/run-ack2-sync)",
		},
		{
			name: "Pulsar: journal and ledgers per bookie",
			run: func() v1alpha1.BenchmarkRun {
				r := run("me", 10, v1alpha1.PhasePending, streaming)
				r.Spec.System = v1alpha1.SystemPulsar
				r.Spec.Cluster.Managed.Storage.Journal.StorageClassName = ptr.To("local-nvme")
				r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = ptr.To("local-nvme")
				return r
			}(),
			pvs:  released(1, "local-nvme-", "x"),
			want: "claim 6 PersistentVolume(s) of class local-nvme",
		},
		{
			name: "an existing cluster's run claims nothing",
			run:  run("me", 10, v1alpha1.PhasePending, nil, existing),
			pvs:  released(3, "local-nvme-", "x"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := tc.classes
			if cl == nil {
				cl = classes
			}
			d := Disks(&tc.run, cl, tc.pvs, tc.runs)
			if tc.want == "" {
				if d.Waiting() {
					t.Errorf("want no wait, got %q", d.Message())
				}
				return
			}
			if !d.Waiting() || !strings.Contains(d.Message(), tc.want) {
				t.Errorf("message %q lacks %q", d.Message(), tc.want)
			}
			if !strings.HasPrefix(d.Message(), "waiting for disks: ") {
				t.Errorf("message %q does not start with the wait", d.Message())
			}
		})
	}
}
