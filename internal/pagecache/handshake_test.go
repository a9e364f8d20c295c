package pagecache

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func mustPut(t *testing.T, data map[string]string, key string, v any) map[string]string {
	t.Helper()
	out, err := Put(data, key, v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProtocol(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

	// An empty ConfigMap: nothing pending, the first request is 1.
	if _, pending, err := Pending(nil); err != nil || pending {
		t.Fatalf("Pending(empty) = %v, %v; want nothing pending", pending, err)
	}
	req, err := NextRequest(nil, ReasonBeforeDrain, now)
	if err != nil || req.Seq != 1 || req.Reason != ReasonBeforeDrain {
		t.Fatalf("first request %+v, %v; want seq 1", req, err)
	}

	data := mustPut(t, nil, KeyRequest, req)
	got, pending, err := Pending(data)
	if err != nil || !pending || got.Seq != 1 {
		t.Fatalf("after a request: Pending = %+v, %v, %v; want request 1 pending", got, pending, err)
	}
	if _, ok, _ := AnswerTo(data, 1); ok {
		t.Fatal("AnswerTo found an answer before the operator wrote one")
	}

	data = mustPut(t, data, KeyAck, Ack{Seq: 1, State: StateDone, Nodes: []string{"node-a"}, At: now})
	if _, pending, _ := Pending(data); pending {
		t.Fatal("request 1 still pending after its answer")
	}
	ack, ok, err := AnswerTo(data, 1)
	if err != nil || !ok || ack.State != StateDone {
		t.Fatalf("AnswerTo(1) = %+v, %v, %v", ack, ok, err)
	}
	d := Drop(req, ack)
	if !d.Dropped || d.Seq != 1 || d.Reason != ReasonBeforeDrain || !d.At.Time.Equal(now) || d.Nodes[0] != "node-a" {
		t.Errorf("Drop = %+v", d)
	}

	// The next request is numbered above the answer, so the old answer is
	// not read as the new one's.
	req2, _ := NextRequest(data, ReasonBeforeDrain, now)
	if req2.Seq != 2 {
		t.Fatalf("second request seq %d, want 2", req2.Seq)
	}
	data = mustPut(t, data, KeyRequest, req2)
	if _, ok, _ := AnswerTo(data, 2); ok {
		t.Fatal("the answer to request 1 was taken for request 2's")
	}
	if _, pending, _ := Pending(data); !pending {
		t.Fatal("request 2 not pending")
	}

	// An answer from the future means someone else wrote the key.
	data = mustPut(t, data, KeyAck, Ack{Seq: 3, State: StateDone})
	if _, _, err := AnswerTo(data, 2); err == nil || !strings.Contains(err.Error(), "another writer") {
		t.Errorf("AnswerTo with ack 3 for request 2: %v; want an error", err)
	}

	// Garbage names the key.
	if _, _, err := Pending(map[string]string{KeyRequest: "{"}); err == nil || !strings.Contains(err.Error(), KeyRequest) {
		t.Errorf("bad request JSON: %v; want an error naming %s", err, KeyRequest)
	}
}

// fakeOperator plays the operator's side against the fake API: it answers
// each pending request with answer(req).
func fakeOperator(ctx context.Context, c client.Client, ns, name string, answer func(Request) Ack) {
	for ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
		var cm corev1.ConfigMap
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm) != nil {
			continue
		}
		req, pending, err := Pending(cm.Data)
		if err != nil || !pending {
			continue
		}
		cm.Data, _ = Put(cm.Data, KeyAck, answer(req))
		_ = c.Update(ctx, &cm) // a conflict is retried on the next round
	}
}

func newRequester(c client.Client, timeout time.Duration) *Requester {
	return &Requester{Client: c, Namespace: "bench", Name: "r1-results", Labels: map[string]string{"streambench.io/run": "r1"},
		Owner:   []metav1.OwnerReference{{APIVersion: "streambench.io/v1alpha1", Kind: "BenchmarkRun", Name: "r1", UID: "u1"}},
		Timeout: timeout, Poll: 10 * time.Millisecond}
}

func TestRequesterWaitsForTheOperatorsAnswer(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go fakeOperator(ctx, c, "bench", "r1-results", func(req Request) Ack {
		if req.Seq == 2 {
			return Ack{Seq: req.Seq, State: StateFailed, Message: "node node-b: Job x failed", At: time.Now()}
		}
		return Ack{Seq: req.Seq, State: StateDone, Nodes: []string{"node-a", "node-b"}, At: time.Now()}
	})
	r := newRequester(c, 10*time.Second)

	// The ConfigMap does not exist yet: the request creates it, owned by
	// the run, so it goes with the run like the results.
	d, err := r.DropPageCache(ctx, ReasonBeforeDrain)
	if err != nil || !d.Dropped || d.Seq != 1 || len(d.Nodes) != 2 {
		t.Fatalf("first drop %+v, %v; want dropped on 2 nodes", d, err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "r1-results"}, &cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.OwnerReferences) != 1 || cm.Labels["streambench.io/run"] != "r1" {
		t.Errorf("created ConfigMap owners %v labels %v", cm.OwnerReferences, cm.Labels)
	}

	// A failed answer is an error with the operator's reason.
	d, err = r.DropPageCache(ctx, ReasonBeforeDrain)
	if err == nil || !strings.Contains(err.Error(), "node node-b: Job x failed") || !strings.Contains(err.Error(), "spec.testbed.dropPageCache") {
		t.Fatalf("second drop: %v; want the operator's reason", err)
	}
	if d.Dropped || d.Seq != 2 {
		t.Errorf("failed drop recorded as %+v", d)
	}
}

func TestRequesterTimesOutNamingTheTimeout(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// A results ConfigMap that already exists (with results keys the
	// request must keep), and no operator.
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "r1-results"}, Data: map[string]string{"other": "kept"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(existing).Build()
	start := time.Now()
	d, err := newRequester(c, 200*time.Millisecond).DropPageCache(context.Background(), ReasonBeforeDrain)
	if err == nil || !strings.Contains(err.Error(), "within 200ms") || !strings.Contains(err.Error(), KeyAck) {
		t.Fatalf("no operator: %v; want a timeout error naming 200ms and %s", err, KeyAck)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the wait took %s, not bounded by the timeout", time.Since(start))
	}
	if d.Dropped || d.Message == "" {
		t.Errorf("timed-out drop recorded as %+v", d)
	}
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "bench", Name: "r1-results"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["other"] != "kept" {
		t.Errorf("the request overwrote the ConfigMap's other keys: %v", cm.Data)
	}
	if _, pending, _ := Pending(cm.Data); !pending {
		t.Errorf("no pending request in the ConfigMap: %v", cm.Data)
	}
}
