package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/worker"
)

// TestAccountingCatchesLossAndDuplicates runs the whole protocol against an
// in-memory broker (memdriver_test.go) that acknowledges some messages
// without storing them and stores others twice — the failure a real broker
// cannot be asked for — and checks the accounting names both.
func TestAccountingCatchesLossAndDuplicates(t *testing.T) {
	b := newMemBroker()
	b.dropEvery, b.dupEvery = 97, 89
	urls := startWorkers(t, 2, map[v1alpha1.System]worker.DriverFactory{v1alpha1.SystemKafka: b.factory})
	wl := shortWorkload("mem", 2000, 2)
	wl.WarmupDurationMinutes = f64(1.0 / 60)
	res, err := Run(context.Background(), Options{
		Workers: urls, Driver: driver.Config{System: v1alpha1.SystemKafka, RunID: "memrun"},
		Workload: wl, SnapshotInterval: time.Second, Logf: t.Logf, CatchUpTimeout: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	acc := res.Accounting
	if acc.Lost == 0 || acc.Duplicates == 0 {
		t.Fatalf("accounting saw lost %d, duplicates %d; the broker dropped every 97th and doubled every 89th message", acc.Lost, acc.Duplicates)
	}
	// 1 subscription: every dropped message is one lost message.
	wantLost := int64(0)
	for n := 101; n <= int(acc.Sent)+50; n++ { // probes count in the broker's n
		if n%97 == 0 {
			wantLost++
		}
	}
	if acc.Lost > wantLost || acc.Lost < wantLost-3 {
		t.Errorf("lost %d, want about %d", acc.Lost, wantLost)
	}
	b.mu.Lock()
	left := len(b.topics)
	b.mu.Unlock()
	if left != 0 {
		t.Errorf("%d topics left behind after the run", left)
	}
}
