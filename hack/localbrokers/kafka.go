package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

func init() {
	systems["kafka"] = system{start: startKafka, defaultBrokers: 3}
}

func startKafka(ctx context.Context, o startOptions) (started, error) {
	var brokerConfig map[string]string
	if o.Level != 0 {
		eff, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{Level: &o.Level})
		if err != nil {
			return started{}, fmt.Errorf("--level %d: %w", o.Level, err)
		}
		// The level's broker defaults (default.replication.factor,
		// min.insync.replicas) cannot be met by fewer brokers.
		if rf := int(eff.Kafka.ReplicationFactor); o.Brokers < rf {
			return started{}, fmt.Errorf("--brokers %d is fewer than the replication factor %d of --level %d; use --brokers %d or more", o.Brokers, rf, o.Level, rf)
		}
		brokerConfig = eff.Kafka.Broker
		if eff.Explanation != "" {
			o.Log("durability: %s", eff.Explanation)
		}
	}
	var sec *secureKafka
	var listeners []localbrokers.KafkaListener
	var err error
	if o.Secure {
		if sec, err = newSecureKafka(o.Dir); err != nil {
			return started{}, err
		}
		listeners = sec.listeners()
	}
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{
		Brokers: o.Brokers, BrokerConfig: brokerConfig, Dir: o.Dir,
		Version: o.Version, Detached: true, Log: o.Log, Listeners: listeners,
	})
	if err != nil {
		return started{}, err
	}
	s := started{Pids: k.Pids(), Endpoints: map[string]string{"bootstrap": k.Bootstrap()}}
	if sec != nil {
		if err := sec.endpoints(k, s.Endpoints); err != nil {
			return started{}, errors.Join(err, k.Stop())
		}
	}
	return s, nil
}
