package pulsar

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rel = "run-a-pulsar"

func sts(name string, replicas, ready int32, generation, observed int64) appsv1.StatefulSet {
	return appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: generation},
		Spec:       appsv1.StatefulSetSpec{Replicas: &replicas},
		Status:     appsv1.StatefulSetStatus{ObservedGeneration: observed, Replicas: replicas, ReadyReplicas: ready},
	}
}

func job(name string, conds ...batchv1.JobConditionType) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
			Type: c, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit",
		})
		if c == batchv1.JobComplete {
			j.Status.Succeeded = 1
		}
		if c == batchv1.JobFailed {
			j.Status.Failed = 7
		}
	}
	return j
}

func readyCluster() ([]appsv1.StatefulSet, []batchv1.Job) {
	return []appsv1.StatefulSet{
			sts(rel+"-zookeeper", 3, 3, 1, 1),
			sts(rel+"-bookie", 3, 3, 1, 1),
			sts(rel+"-recovery", 1, 1, 1, 1),
			sts(rel+"-broker", 3, 3, 2, 2),
		}, []batchv1.Job{
			job(rel+"-pulsar-init", batchv1.JobComplete),
			job(rel+"-bookie-init", batchv1.JobComplete),
		}
}

func TestReady(t *testing.T) {
	tests := []struct {
		name   string
		change func([]appsv1.StatefulSet, []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job)
		ready  bool
		// reason must contain these.
		reason []string
		failed bool
	}{
		{
			name:   "all ready",
			ready:  true,
			reason: []string{"run-a-pulsar-zookeeper, run-a-pulsar-bookie, run-a-pulsar-recovery, run-a-pulsar-broker ready", "init Jobs complete"},
		},
		{
			name: "one bookie not ready",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				s[1].Status.ReadyReplicas = 2
				return s, j
			},
			reason: []string{"StatefulSet run-a-pulsar-bookie: 2/3 replicas ready"},
		},
		{
			name: "status of an older generation",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				// All replicas ready, but for the previous spec.
				s[3].Generation = 3
				return s, j
			},
			reason: []string{"StatefulSet run-a-pulsar-broker: status is of generation 2, spec is at 3"},
		},
		{
			name: "a StatefulSet not created yet",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				return s[:3], j
			},
			reason: []string{"StatefulSet run-a-pulsar-broker not created yet"},
		},
		{
			name: "another release's StatefulSets do not count",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				s[0].Name = "run-b-pulsar-zookeeper"
				return s, j
			},
			reason: []string{"StatefulSet run-a-pulsar-zookeeper not created yet"},
		},
		{
			name: "init job still running after failed attempts",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				j[1] = job(rel + "-bookie-init")
				j[1].Status.Failed = 2
				return s, j
			},
			reason: []string{"Job run-a-pulsar-bookie-init not complete (2 failed attempts)"},
		},
		{
			name: "init job missing",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				return s, j[1:]
			},
			reason: []string{"Job run-a-pulsar-pulsar-init not created yet"},
		},
		{
			name: "init job failed",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				j[0] = job(rel+"-pulsar-init", batchv1.JobFailed)
				return s, j
			},
			reason: []string{"Job run-a-pulsar-pulsar-init failed"},
			failed: true,
		},
		{
			name: "several things missing are all named",
			change: func(s []appsv1.StatefulSet, j []batchv1.Job) ([]appsv1.StatefulSet, []batchv1.Job) {
				s[0].Status.ReadyReplicas = 0
				return s[:1], nil
			},
			reason: []string{
				"Job run-a-pulsar-pulsar-init not created yet",
				"Job run-a-pulsar-bookie-init not created yet",
				"StatefulSet run-a-pulsar-zookeeper: 0/3 replicas ready",
				"StatefulSet run-a-pulsar-bookie not created yet",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, j := readyCluster()
			if tt.change != nil {
				s, j = tt.change(s, j)
			}
			ready, reason, err := Ready(s, j, rel)
			if ready != tt.ready {
				t.Errorf("ready = %v, want %v (reason %q)", ready, tt.ready, reason)
			}
			for _, w := range tt.reason {
				if !strings.Contains(reason, w) {
					t.Errorf("reason %q does not contain %q", reason, w)
				}
			}
			var failed *InitJobFailedError
			if tt.failed {
				if !errors.As(err, &failed) {
					t.Fatalf("err = %v, want an *InitJobFailedError", err)
				}
				if failed.Job != rel+"-pulsar-init" || failed.Reason != "BackoffLimitExceeded" {
					t.Errorf("failure = %+v", failed)
				}
				if !strings.Contains(err.Error(), "kubectl logs job/"+rel+"-pulsar-init") {
					t.Errorf("error %q does not say how to investigate", err)
				}
			} else if err != nil {
				t.Errorf("err = %v, want nil (not a terminal failure)", err)
			}
		})
	}
}

// TestReadyExpectsWhatValuesEnables ties Ready's list to the chart's
// components as Values sets them: a component switched on without Ready
// waiting for it (or the reverse) fails here.
func TestReadyExpectsWhatValuesEnables(t *testing.T) {
	enabledSTS := map[string]string{
		"zookeeper":    ComponentZooKeeper,
		"bookkeeper":   ComponentBookie,
		"autorecovery": ComponentRecovery,
		"broker":       ComponentBroker,
		"proxy":        ComponentProxy,
		"toolset":      "toolset",
		"functions":    "",
		"oxia":         "",
		// pulsar_manager is a Deployment, not a StatefulSet.
		"pulsar_manager": "",
	}
	var want []string
	for comp, on := range components() {
		stsName, known := enabledSTS[comp]
		if !known {
			t.Errorf("component %q is not classified in this test", comp)
			continue
		}
		if on.(bool) && stsName != "" {
			want = append(want, rel+"-"+stsName)
		}
	}
	got := StatefulSetNames(rel)
	if len(got) != len(want) {
		t.Fatalf("StatefulSetNames = %v, enabled components give %v", got, want)
	}
	gotSet := map[string]bool{}
	for _, n := range got {
		gotSet[n] = true
	}
	for _, n := range want {
		if !gotSet[n] {
			t.Errorf("Ready does not wait for %s, which Values enables", n)
		}
	}
}

func TestServiceURLs(t *testing.T) {
	if got, want := ServiceURL(rel, "bench"), "pulsar://run-a-pulsar-broker.bench.svc:6650"; got != want {
		t.Errorf("ServiceURL = %q, want %q", got, want)
	}
	if got, want := AdminURL(rel, "bench"), "http://run-a-pulsar-broker.bench.svc:8080"; got != want {
		t.Errorf("AdminURL = %q, want %q", got, want)
	}
	if got, want := ServiceURLTLS(rel, "bench"), "pulsar+ssl://run-a-pulsar-broker.bench.svc:6651"; got != want {
		t.Errorf("ServiceURLTLS = %q, want %q", got, want)
	}
	if got, want := AdminURLTLS(rel, "bench"), "https://run-a-pulsar-broker.bench.svc:8443"; got != want {
		t.Errorf("AdminURLTLS = %q, want %q", got, want)
	}
}

func TestUnschedulable(t *testing.T) {
	pod := func(name, component string, conds ...corev1.PodCondition) corev1.Pod {
		p := corev1.Pod{}
		p.Name, p.Labels = name, map[string]string{"app": "pulsar", "release": "run-a-pulsar", "component": component}
		p.Status.Conditions = conds
		return p
	}
	unschedulable := func(msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}
	}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	antiAffinity := "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 node(s) had untolerated taint {dedicated: streaming}."
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want []string // substrings, in order
	}{
		{name: "none", pods: nil},
		{name: "all placed", pods: []corev1.Pod{pod("run-a-pulsar-bookie-0", ComponentBookie, scheduled), pod("run-a-pulsar-broker-0", ComponentBroker)}},
		{name: "a second bookie on a one-node pool", pods: []corev1.Pod{
			pod("run-a-pulsar-bookie-0", ComponentBookie, scheduled),
			pod("run-a-pulsar-bookie-1", ComponentBookie, unschedulable(antiAffinity)),
		}, want: []string{
			"bookie pod run-a-pulsar-bookie-1 cannot be scheduled: " + antiAffinity,
			"every bookie needs a node of its own", "spec.cluster.managed.placement", "spec.cluster.managed.bookies",
		}},
		{name: "brokers and ZooKeeper, each with its fix", pods: []corev1.Pod{
			pod("run-a-pulsar-zookeeper-0", ComponentZooKeeper, unschedulable("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")),
			pod("run-a-pulsar-broker-2", ComponentBroker, unschedulable(antiAffinity)),
			pod("run-a-pulsar-broker-1", ComponentBroker, unschedulable(antiAffinity)),
		}, want: []string{
			"broker pods cannot be scheduled (run-a-pulsar-broker-1: " + antiAffinity + "; run-a-pulsar-broker-2: ",
			"lower spec.cluster.managed.brokers",
			"zookeeper pod run-a-pulsar-zookeeper-0 cannot be scheduled: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
			"spec.cluster.managed.auxiliaryPlacement",
		}},
		{name: "an init Job's pod", pods: []corev1.Pod{
			pod("run-a-pulsar-pulsar-init-x7k2p", JobPulsarInit, unschedulable("0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: streaming}.")),
		}, want: []string{"pulsar-init pod run-a-pulsar-pulsar-init-x7k2p cannot be scheduled: 0/3 nodes", "spec.cluster.managed.auxiliaryPlacement"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Unschedulable(tc.pods)
			if len(tc.want) == 0 {
				if got != "" {
					t.Errorf("got %q, want \"\"", got)
				}
				return
			}
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("got %q\nwant it to contain, in order, %q", got, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
