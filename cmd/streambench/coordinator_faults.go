package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/faults"
)

// leaderLookupTimeout bounds one look-up: the brokers may be mid-failover
// (an earlier fault), and the operator waits for the answer.
const leaderLookupTimeout = 15 * time.Second

// nameLeaders answers, at each leader fault's time in this repeat's
// measured phase, who leads the run's first topic's partition 0, in the
// results ConfigMap where the operator waits for it (internal/faults,
// leaders.go). In the background: the measured phase goes on.
func (r *repeater) nameLeaders(start time.Time, repeat int) {
	topic := kafka.RunTopic(r.runID, 0)
	for _, lf := range r.leaders {
		go func() {
			select {
			case <-r.writeCtx.Done():
				return
			case <-time.After(time.Until(start.Add(lf.At))):
			}
			ctx, cancel := context.WithTimeout(r.writeCtx, leaderLookupTimeout)
			a := leaderAnswer(ctx, r.sys, lf.Index, repeat, topic, func(ctx context.Context) (kafka.PartitionState, error) {
				return kafka.LookupPartition(ctx, r.f.bootstrap, r.sec, topic, 0)
			})
			cancel()
			wctx, wcancel := context.WithTimeout(r.writeCtx, finalWriteTimeout)
			defer wcancel()
			if err := r.clock.RecordLeader(wctx, a); err != nil {
				log.Printf("coordinator: fault %d's leader (%s%s) was not recorded for the operator: %v", lf.Index, a.Target, a.Error, err)
				return
			}
			log.Printf("coordinator: fault %d's leader: %s%s %s", lf.Index, a.Target, a.Error, a.Detail)
		}()
	}
}

// leaderAnswer asks lookup who leads topic's partition 0 and says so as
// the operator reads it. Pure but for lookup.
func leaderAnswer(ctx context.Context, sys v1alpha1.System, index, repeat int, topic string, lookup func(context.Context) (kafka.PartitionState, error)) faults.LeaderAnswer {
	a := faults.LeaderAnswer{Index: index, Repeat: repeat, At: time.Now().UTC()}
	if sys != v1alpha1.SystemKafka {
		a.Error = fmt.Sprintf("leader is looked up for Kafka only, not %s; name the broker", sys)
		return a
	}
	p, err := lookup(ctx)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Target = faults.LeaderTarget(p.Leader)
	a.Detail = fmt.Sprintf("leader of %s-0 (replicas %v, in sync %v)", topic, p.Replicas, p.ISR)
	return a
}
