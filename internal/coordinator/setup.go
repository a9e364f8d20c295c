package coordinator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/inspect"
	"github.com/streambench/streambench-operator/internal/protocol"
)

// readDurability reads the existing cluster's durability settings. A
// cluster that cannot be read does not stop the run: the results then say
// the level is as requested, not verified, and why it was not read.
func (c *coordinator) readDurability(ctx context.Context, topics []string) {
	asked := c.o.Driver.Durability
	eff, err := inspect.Existing(ctx, c.o.Driver.System, c.o.Driver.Brokers, c.o.Driver.Security, asked, topics)
	if err != nil {
		eff = asked
		eff.Verification = v1alpha1.NotVerified
		eff.Explanation = fmt.Sprintf("The existing cluster's durability settings could not be read (%v); the level is as requested, not verified.", err)
		c.res.Notes = append(c.res.Notes, "durability: "+eff.Explanation)
	}
	c.logf("durability of the existing cluster: level %d in effect (%d requested): %s", eff.AchievedLevel, eff.RequestedLevel, eff.Explanation)
	c.res.Durability = &eff
}

// readFailureSettings reads the brokers' settings that bound a failure's
// stall. A read that fails does not stop the run: the stalls are then
// explained by the faults' own lengths alone, and a note says why.
func (c *coordinator) readFailureSettings(ctx context.Context) {
	s, err := inspect.Failure(ctx, c.o.Driver.System, c.o.Driver.Brokers, c.o.Driver.Security)
	if err != nil {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("faults: the brokers' failure settings could not be read (%v), so no stall is explained by them", err))
	}
	var said []string
	for _, x := range s {
		said = append(said, x.Name+"="+x.Value)
	}
	c.logf("failure settings of the brokers: %s", strings.Join(said, ", "))
	c.res.FailureSettings = s
}

func (c *coordinator) initialize(ctx context.Context) error {
	answers := make([]protocol.InitializeResponse, len(c.clients))
	err := each(c.all(), func(i int) error {
		return c.clients[i].post(ctx, protocol.PathInitialize, protocol.InitializeRequest{
			WorkerIndex: i, Driver: c.o.Driver, Workload: c.wl, PayloadData: c.o.PayloadData,
			SnapshotIntervalMillis: c.o.SnapshotInterval.Milliseconds(),
		}, &answers[i], callOpt{idempotent: true, timeout: 2 * time.Minute})
	})
	if err != nil {
		return err
	}
	c.res.Security = firstSecurity(answers)
	return nil
}

// firstSecurity is the security the first worker that says reports: every
// worker's driver has the same configuration, and a TLS version that
// differed between workers would be the same client library on the same
// brokers.
func firstSecurity(answers []protocol.InitializeResponse) *v1alpha1.SecurityInfo {
	for _, a := range answers {
		if a.Security != nil {
			return a.Security
		}
	}
	return nil
}

// createClients creates the consumers first, so no message is published
// before its subscriptions exist.
func (c *coordinator) createClients(ctx context.Context) error {
	err := each(c.plan.ConsumerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathCreateConsumers,
			protocol.CreateConsumersRequest{Consumers: c.plan.Consumers[i]}, nil, callOpt{timeout: 3 * time.Minute})
	})
	if err != nil {
		return fmt.Errorf("creating consumers: %w", err)
	}
	err = each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathCreateProducers,
			protocol.CreateProducersRequest{Producers: c.plan.Producers[i]}, nil, callOpt{timeout: 3 * time.Minute})
	})
	if err != nil {
		return fmt.Errorf("creating producers: %w", err)
	}
	return nil
}

func (c *coordinator) clockOffsets(ctx context.Context) error {
	c.res.ClockOffsets = make([]protocol.ClockOffset, len(c.clients))
	if c.o.SameClock {
		c.logf("the workers share the coordinator's clock: no clock offset measured or applied")
	} else {
		err := each(c.all(), func(i int) error {
			off, err := c.clients[i].clockOffset(ctx, c.o.ClockSamples)
			c.res.ClockOffsets[i] = off
			return err
		})
		if err != nil {
			return err
		}
		for i, off := range c.res.ClockOffsets {
			c.logf("worker %d clock offset %+d µs ± %d µs", i, off.OffsetMicros, off.UncertaintyMicros)
		}
	}
	prod := map[uint32]int64{}
	for id, wk := range c.plan.ProducerWorker {
		prod[id] = c.res.ClockOffsets[wk].OffsetMicros
	}
	return each(c.plan.ConsumerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathClockOffsets, protocol.ClockOffsetsRequest{
			SelfMicros: c.res.ClockOffsets[i].OffsetMicros, ProducerMicros: prod,
		}, nil, callOpt{idempotent: true})
	})
}

// counters reads every worker's counters.
func (c *coordinator) counters(ctx context.Context) ([]protocol.CountersResponse, error) {
	out := make([]protocol.CountersResponse, len(c.clients))
	err := each(c.all(), func(i int) error {
		return c.clients[i].get(ctx, protocol.PathCounters, &out[i], callOpt{})
	})
	return out, err
}

// probe sends probe messages until every subscription has received one
// (OMB #275 waits forever; here the wait is bounded and the error names
// the subscriptions that never got a message).
func (c *coordinator) probe(ctx context.Context) error {
	if len(c.plan.Subscriptions) == 0 {
		// Produce-only: a probe still proves every producer can publish.
		return each(c.plan.ProducerWorkers, func(i int) error {
			return c.clients[i].post(ctx, protocol.PathProbe, nil, nil, callOpt{timeout: c.o.ProbeTimeout})
		})
	}
	deadline := time.Now().Add(c.o.ProbeTimeout)
	var missing []string
	for attempt := 0; ; attempt++ {
		if attempt%5 == 0 {
			err := each(c.plan.ProducerWorkers, func(i int) error {
				return c.clients[i].post(ctx, protocol.PathProbe, nil, nil, callOpt{timeout: c.o.ProbeTimeout})
			})
			if err != nil {
				return fmt.Errorf("probing producers: %w", err)
			}
		}
		cs, err := c.counters(ctx)
		if err != nil {
			return err
		}
		got := map[SubscriptionRef]bool{}
		for _, cr := range cs {
			for _, s := range cr.Subscriptions {
				if s.Probes > 0 {
					got[SubscriptionRef{Topic: s.Topic, Name: s.Subscription, CatchUp: s.CatchUp}] = true
				}
			}
		}
		missing = missing[:0]
		for _, s := range c.plan.Subscriptions {
			if !got[s] {
				missing = append(missing, s.Name+" on "+s.Topic)
			}
		}
		if len(missing) == 0 {
			c.logf("probe: every subscription (%d) received a message", len(c.plan.Subscriptions))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("probe: after %s, %d of %d subscriptions never received a message: %s; check that the consumers can reach the brokers and subscribe from the earliest position",
				c.o.ProbeTimeout, len(missing), len(c.plan.Subscriptions), strings.Join(missing, ", "))
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}
