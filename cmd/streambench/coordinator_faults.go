package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
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
	lookup := r.leaderLookup()
	for _, lf := range r.leaders {
		go func() {
			select {
			case <-r.writeCtx.Done():
				return
			case <-time.After(time.Until(start.Add(lf.At))):
			}
			ctx, cancel := context.WithTimeout(r.writeCtx, leaderLookupTimeout)
			a := leaderAnswer(ctx, lf.Index, repeat, lookup)
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

// leaderLookup asks the brokers who serves the run's first topic now:
// Kafka, the leader of its partition 0; Pulsar, the broker that owns its
// (first partition's) bundle.
func (r *repeater) leaderLookup() leaderLookupFunc {
	if r.sys == v1alpha1.SystemPulsar {
		topic := pulsar.FirstTopic(r.runID, r.wl.PartitionsPerTopic)
		return func(ctx context.Context) (v1alpha1.FaultTarget, string, error) {
			owner, err := pulsar.LookupOwner(ctx, r.f.adminURL, r.sec, topic)
			if err != nil {
				return "", "", err
			}
			t, err := faults.PulsarOwnerTarget(owner)
			return t, fmt.Sprintf("owner of %s (%s)", topic, owner), err
		}
	}
	topic := kafka.RunTopic(r.runID, 0)
	return func(ctx context.Context) (v1alpha1.FaultTarget, string, error) {
		p, err := kafka.LookupPartition(ctx, r.f.bootstrap, r.sec, topic, 0)
		if err != nil {
			return "", "", err
		}
		return faults.LeaderTarget(p.Leader), fmt.Sprintf("leader of %s-0 (replicas %v, in sync %v)", topic, p.Replicas, p.ISR), nil
	}
}

// leaderLookupFunc names the broker serving the first topic now and says
// what it asked and was answered.
type leaderLookupFunc func(ctx context.Context) (v1alpha1.FaultTarget, string, error)

// leaderAnswer asks lookup who serves the first topic and says so as the
// operator reads it. Pure but for lookup.
func leaderAnswer(ctx context.Context, index, repeat int, lookup leaderLookupFunc) faults.LeaderAnswer {
	a := faults.LeaderAnswer{Index: index, Repeat: repeat, At: time.Now().UTC()}
	t, detail, err := lookup(ctx)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Target, a.Detail = t, detail
	return a
}
