package coordinator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/worker"
	"github.com/streambench/streambench-operator/internal/workload"
)

// fakeDropper stands in for the operator's side of the handshake (the
// drop Jobs; the controller's envtest specs cover that side, and the
// pagecache package the ConfigMap protocol). When asked, it records what
// the in-memory broker holds at that moment and when it answered.
type fakeDropper struct {
	b    *memBroker
	fail string

	mu       sync.Mutex
	reasons  []string
	unread   []int
	answered time.Time
}

func (f *fakeDropper) DropPageCache(_ context.Context, reason string) (v1alpha1.PageCacheDrop, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reasons = append(f.reasons, reason)
	f.unread = append(f.unread, f.b.unread())
	// The operator takes a while: the producers keep publishing meanwhile.
	time.Sleep(300 * time.Millisecond)
	f.answered = time.Now()
	d := v1alpha1.PageCacheDrop{Seq: int32(len(f.reasons)), Reason: reason, At: metav1.NewTime(f.answered)}
	if f.fail != "" {
		d.Message = f.fail
		return d, errors.New("spec.testbed.dropPageCache: " + f.fail)
	}
	d.Dropped, d.Nodes = true, []string{"node-a"}
	return d, nil
}

func memBacklogWorkload() v1alpha1.WorkloadSpec {
	w := shortWorkload("mem-backlog", 4000, 2)
	w.WarmupDurationMinutes = f64(1.0 / 60)
	w.ConsumerBacklogSizeGB = f64(0.006)
	return w
}

// TestPageCacheDroppedAfterTheBacklogIsBuiltAndBeforeTheDrain (fake
// operator side, in-memory broker): the coordinator asks exactly once, with
// the whole backlog written and still unread, and the drain starts only
// after the answer.
func TestPageCacheDroppedAfterTheBacklogIsBuiltAndBeforeTheDrain(t *testing.T) {
	b := newMemBroker()
	urls := startWorkers(t, 2, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	wl := memBacklogWorkload()
	dropper := &fakeDropper{b: b}
	res, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memdrop"},
		Workload: wl, SnapshotInterval: time.Second, Logf: t.Logf, CatchUpTimeout: 5 * time.Second,
		PageCache: dropper,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dropper.reasons) != 1 || dropper.reasons[0] != pagecache.ReasonBeforeDrain {
		t.Fatalf("asked %q; want one drop %q", dropper.reasons, pagecache.ReasonBeforeDrain)
	}
	// The backlog was built (the paused subscription had the target
	// unread) and not yet drained when the drop was asked for.
	target := int(workload.BacklogBytes(wl) / int64(wl.MessageSize))
	if dropper.unread[0] < target {
		t.Errorf("when the drop was asked, the paused subscription had %d messages unread; want the built backlog, at least %d", dropper.unread[0], target)
	}
	var drain []stats.Snapshot
	for _, s := range res.Snapshots {
		if s.Phase == stats.PhaseDrain {
			drain = append(drain, s)
		}
	}
	if len(drain) == 0 {
		t.Fatal("no drain snapshots: the backlog was not drained")
	}
	for _, s := range drain {
		// The workers share this process's clock; the phase command that
		// opens the drain is sent after the answer.
		if s.Start.Before(dropper.answered) {
			t.Errorf("a drain interval on %s started at %s, before the page cache was dropped at %s",
				s.Worker, s.Start.Format(time.RFC3339Nano), dropper.answered.Format(time.RFC3339Nano))
		}
	}
	if len(res.PageCacheDrops) != 1 || !res.PageCacheDrops[0].Dropped {
		t.Errorf("result records drops %+v; want one that happened", res.PageCacheDrops)
	}
	if res.Backlog.PageCacheDropSeconds < 0.3 {
		t.Errorf("backlog pageCacheDropSeconds %.2f; the drop took at least 0.3 s", res.Backlog.PageCacheDropSeconds)
	}
	in := res.ResultsInput("memdrop", "", nil)
	if !strings.Contains(strings.Join(in.Notes, "\n"), "page cache dropped on the broker nodes "+pagecache.ReasonBeforeDrain) {
		t.Errorf("notes do not say the page cache was dropped: %q", in.Notes)
	}
}

// TestFailedPageCacheDropFailsTheRunBeforeTheDrain (fake operator side): a
// failed drop ends the run with the operator's reason, and no catch-up read
// is measured on a warm cache.
func TestFailedPageCacheDropFailsTheRunBeforeTheDrain(t *testing.T) {
	b := newMemBroker()
	urls := startWorkers(t, 1, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	dropper := &fakeDropper{b: b, fail: "node node-b: Job r-dropcache1-x failed: DeadlineExceeded"}
	res, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memdropfail"},
		Workload: memBacklogWorkload(), SnapshotInterval: time.Second, Logf: t.Logf,
		PageCache: dropper,
	})
	if err == nil || !strings.Contains(err.Error(), "node node-b: Job r-dropcache1-x failed") {
		t.Fatalf("run error %v; want the drop's failure", err)
	}
	for _, s := range res.Snapshots {
		if s.Phase == stats.PhaseDrain || s.Phase == stats.PhaseMeasure {
			t.Fatalf("a %s interval was recorded after the failed drop", s.Phase)
		}
	}
	if len(res.PageCacheDrops) != 1 || res.PageCacheDrops[0].Dropped {
		t.Errorf("result records drops %+v; want one that did not happen", res.PageCacheDrops)
	}
}

// A fixed-rate workload has no catch-up reads: nothing is asked mid-run
// (its drop is the operator's, before the load).
func TestNoMidRunPageCacheDropWithoutABacklog(t *testing.T) {
	b := newMemBroker()
	urls := startWorkers(t, 1, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	wl := shortWorkload("mem-fixed", 1000, 1)
	wl.WarmupDurationMinutes = f64(0)
	dropper := &fakeDropper{b: b}
	if _, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memnodrop"},
		Workload: wl, SnapshotInterval: time.Second, Logf: t.Logf, CatchUpTimeout: 3 * time.Second,
		PageCache: dropper,
	}); err != nil {
		t.Fatal(err)
	}
	if len(dropper.reasons) != 0 {
		t.Errorf("a fixed-rate run asked for drops %q", dropper.reasons)
	}
}
