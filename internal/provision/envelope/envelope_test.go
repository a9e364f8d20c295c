package envelope

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func res(req, lim map[corev1.ResourceName]string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{}
	for n, v := range req {
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[n] = resource.MustParse(v)
	}
	for n, v := range lim {
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[n] = resource.MustParse(v)
	}
	return r
}

func TestOf(t *testing.T) {
	const cpu, mem = corev1.ResourceCPU, corev1.ResourceMemory
	tests := []struct {
		name      string
		c         Component
		r         corev1.ResourceRequirements
		want      v1alpha1.ComponentEnvelope
		fromReq   bool
		wantFlags string
	}{
		{name: "Kafka under 48Gi: half, capped at 5 GiB", c: KafkaBroker,
			r:         res(map[corev1.ResourceName]string{cpu: "6", mem: "48Gi"}, map[corev1.ResourceName]string{mem: "48Gi"}),
			want:      v1alpha1.ComponentEnvelope{Component: "broker", Replicas: 3, CPURequest: "6", MemoryRequest: "48Gi", MemoryLimit: "48Gi", Heap: "5120Mi"},
			wantFlags: "-Xms5120m -Xmx5120m"},
		{name: "Kafka under 2Gi: half", c: KafkaBroker,
			r:         res(nil, map[corev1.ResourceName]string{mem: "2Gi"}),
			want:      v1alpha1.ComponentEnvelope{Component: "broker", Replicas: 3, MemoryLimit: "2Gi", Heap: "1024Mi"},
			wantFlags: "-Xms1024m -Xmx1024m"},
		{name: "a bookie with a request only gets it as its limit", c: Bookie,
			r:         res(map[corev1.ResourceName]string{cpu: "4", mem: "32Gi"}, nil),
			want:      v1alpha1.ComponentEnvelope{Component: "broker", Replicas: 3, CPURequest: "4", MemoryRequest: "32Gi", MemoryLimit: "32Gi", Heap: "9830Mi", DirectMemory: "16384Mi"},
			fromReq:   true,
			wantFlags: "-Xms9830m -Xmx9830m -XX:MaxDirectMemorySize=16384m"},
		{name: "a Pulsar broker: heap and direct memory", c: PulsarBroker,
			r:         res(map[corev1.ResourceName]string{mem: "16Gi"}, map[corev1.ResourceName]string{cpu: "4", mem: "16Gi"}),
			want:      v1alpha1.ComponentEnvelope{Component: "broker", Replicas: 3, MemoryRequest: "16Gi", CPULimit: "4", MemoryLimit: "16Gi", Heap: "6553Mi", DirectMemory: "6553Mi"},
			wantFlags: "-Xms6553m -Xmx6553m -XX:MaxDirectMemorySize=6553m"},
		{name: "ZooKeeper: heap only, at least 64 MiB", c: ZooKeeper,
			r:         res(nil, map[corev1.ResourceName]string{mem: "64Mi"}),
			want:      v1alpha1.ComponentEnvelope{Component: "broker", Replicas: 3, MemoryLimit: "64Mi", Heap: "64Mi"},
			wantFlags: "-Xms64m -Xmx64m"},
		{name: "no memory: nothing sized, the image's defaults", c: KafkaBroker,
			r:    res(map[corev1.ResourceName]string{cpu: "2"}, nil),
			want: v1alpha1.ComponentEnvelope{Component: "broker", Replicas: 3, CPURequest: "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Of(tc.c, tc.r)
			if got := e.Status("broker", 3); got != tc.want {
				t.Errorf("Status = %+v\nwant     %+v", got, tc.want)
			}
			if e.LimitFromRequest != tc.fromReq {
				t.Errorf("LimitFromRequest = %v, want %v", e.LimitFromRequest, tc.fromReq)
			}
			if tc.wantFlags != "" && e.HeapFlags() != tc.wantFlags {
				t.Errorf("HeapFlags = %q, want %q", e.HeapFlags(), tc.wantFlags)
			}
		})
	}
}

// The spec's resources are not changed by sizing (the envelope is a copy).
func TestOfCopies(t *testing.T) {
	r := res(map[corev1.ResourceName]string{corev1.ResourceMemory: "8Gi"}, nil)
	_ = Of(Bookie, r)
	if r.Limits != nil {
		t.Errorf("the spec's resources gained limits: %v", r.Limits)
	}
}
