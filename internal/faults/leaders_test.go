package faults

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestLeaderFaultsRoundTrip(t *testing.T) {
	fs := []v1alpha1.Fault{
		{Action: v1alpha1.FaultDeletePod, Target: "broker-1", At: metav1.Duration{Duration: 10 * time.Second}},
		{Action: v1alpha1.FaultKill, Target: "leader", At: metav1.Duration{Duration: 40 * time.Second}},
		{Action: v1alpha1.FaultPause, Target: "leader", At: metav1.Duration{Duration: 90 * time.Second}},
	}
	flag := LeaderFaults(fs)
	if flag != "1@40s,2@1m30s" {
		t.Fatalf("flag %q", flag)
	}
	got, err := ParseLeaderFaults(flag)
	if err != nil || len(got) != 2 || got[0] != (LeaderFault{1, 40 * time.Second}) || got[1] != (LeaderFault{2, 90 * time.Second}) {
		t.Errorf("parsed %+v, %v", got, err)
	}
	if l, err := ParseLeaderFaults(""); err != nil || l != nil {
		t.Errorf("empty: %v %v", l, err)
	}
	for _, bad := range []string{"1", "x@1s", "1@soon", "-1@1s"} {
		if _, err := ParseLeaderFaults(bad); err == nil || !strings.Contains(err.Error(), "index@duration") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func TestWithLeader(t *testing.T) {
	data, err := WithLeader(nil, LeaderAnswer{Index: 1, Target: LeaderTarget(2), Detail: "leader of t-0"})
	if err != nil {
		t.Fatal(err)
	}
	// A second answer for the same fault (a retried write) changes nothing.
	if data, err = WithLeader(data, LeaderAnswer{Index: 1, Target: "broker-0"}); err != nil {
		t.Fatal(err)
	}
	if data, err = WithLeader(data, LeaderAnswer{Index: 1, Repeat: 1, Error: "no leader"}); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLeaders(data)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := l.For(1, 0); !ok || a.Target != "broker-2" {
		t.Errorf("repeat 0: %+v %v, want broker-2", a, ok)
	}
	if a, ok := l.For(1, 1); !ok || a.Error != "no leader" {
		t.Errorf("repeat 1: %+v %v", a, ok)
	}
	if _, ok := l.For(0, 0); ok {
		t.Error("an answer for a fault not asked")
	}
	if _, err := ReadLeaders(map[string]string{KeyLeaders: "{"}); err == nil {
		t.Error("bad JSON: want an error")
	}
}

func TestPulsarOwnerTarget(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want v1alpha1.FaultTarget
		err  string
	}{
		{"pulsar://run-1-broker-2.run-1-broker.ns.svc.cluster.local:6650", "broker-2", ""},
		{"pulsar+ssl://e2e-pulsar-3n-l1-broker-0.e2e-pulsar-3n-l1-broker.default.svc.cluster.local:6651", "broker-0", ""},
		{"pulsar://10.244.1.7:6650", "", "names no broker pod of the chart"},
		{"pulsar://run-1-bookie-2.run-1-bookie.ns.svc:3181", "", "names no broker pod"},
		{"not a url", "", "has no host"},
	} {
		got, err := PulsarOwnerTarget(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want an error with %q", tc.url, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %s", tc.url, got, err, tc.want)
		}
	}
}
