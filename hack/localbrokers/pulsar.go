package main

import (
	"context"
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

func init() {
	systems["pulsar"] = system{start: startPulsar, defaultBrokers: 1}
}

// pulsarBookies is fixed: three bookies make ensemble 3, write quorum 3 and
// ack quorum 2 (every level's replication) real.
const pulsarBookies = 3

func startPulsar(ctx context.Context, o startOptions) (started, error) {
	if o.Brokers != 1 {
		return started{}, fmt.Errorf("--brokers %d: the local Pulsar is a standalone with one broker (and %d bookies); omit --brokers or use 1", o.Brokers, pulsarBookies)
	}
	var brokerConfig, bookieConfig map[string]string
	if o.Level != 0 {
		eff, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{Level: &o.Level})
		if err != nil {
			return started{}, fmt.Errorf("--level %d: %w", o.Level, err)
		}
		if e := int(eff.Pulsar.EnsembleSize); e > pulsarBookies {
			return started{}, fmt.Errorf("--level %d needs an ensemble of %d bookies; the local standalone has %d", o.Level, e, pulsarBookies)
		}
		brokerConfig, bookieConfig = eff.Pulsar.Broker, eff.Pulsar.Bookie
		o.Log("durability level %d: bookie %v; namespaces get persistence %d/%d/%d from the driver",
			o.Level, bookieConfig, eff.Pulsar.EnsembleSize, eff.Pulsar.WriteQuorum, eff.Pulsar.AckQuorum)
	}
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		Dir: o.Dir, Bookies: pulsarBookies, BrokerConfig: brokerConfig, BookieConfig: bookieConfig,
		Version: o.Version, Detached: true, Log: o.Log,
	})
	if err != nil {
		return started{}, err
	}
	return started{Pids: p.Pids(), Endpoints: map[string]string{"serviceURL": p.ServiceURL(), "adminURL": p.AdminURL()}}, nil
}
