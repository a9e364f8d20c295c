package stats

import (
	"sync"
	"testing"
	"time"
)

// The benchmarks show what a record costs on the hot path; they assert
// nothing about time (run: go test -bench Recorder -run '^$' ./internal/stats/).

func BenchmarkRecorderAckParallel(b *testing.B) {
	rec := NewRecorder("w", PhaseMeasure, time.Now())
	intended := time.Now()
	sent := intended.Add(20 * time.Microsecond)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			rec.RecordAck(intended, sent, sent.Add(time.Duration(i%5000)*time.Microsecond), 1024)
		}
	})
}

func BenchmarkRecorderReceiveParallel(b *testing.B) {
	rec := NewRecorder("w", PhaseMeasure, time.Now())
	sub := rec.Subscription("s", false)
	sent := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			sub.RecordReceive(sent, sent.Add(time.Duration(i%5000)*time.Microsecond), 1024)
		}
	})
}

// BenchmarkSingleMutexAckParallel is the alternative the Recorder's
// sharding is measured against: one mutex around one set of histograms.
func BenchmarkSingleMutexAckParallel(b *testing.B) {
	var mu sync.Mutex
	var pub, corr dense
	var acked, bytes int64
	intended := time.Now()
	sent := intended.Add(20 * time.Microsecond)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			ack := sent.Add(time.Duration(i%5000) * time.Microsecond)
			mu.Lock()
			acked++
			bytes += 1024
			pub.record(ack.Sub(sent).Microseconds())
			corr.record(ack.Sub(intended).Microseconds())
			mu.Unlock()
		}
	})
}

func BenchmarkRecorderCut(b *testing.B) {
	rec := NewRecorder("w", PhaseMeasure, time.Now())
	now := time.Now()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 1000; j++ {
			rec.RecordAck(now, now, now.Add(time.Duration(j)*time.Microsecond), 100)
		}
		now = now.Add(10 * time.Second)
		_ = rec.Cut(now)
	}
}
