package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
)

func TestLeaderAnswer(t *testing.T) {
	state := kafka.PartitionState{Leader: 2, Replicas: []int32{2, 0, 1}, ISR: []int32{2, 0}}
	ok := func(context.Context) (kafka.PartitionState, error) { return state, nil }
	failed := func(context.Context) (kafka.PartitionState, error) {
		return kafka.PartitionState{}, errors.New("sb-r-0-0 has no leader now")
	}

	a := leaderAnswer(context.Background(), v1alpha1.SystemKafka, 3, 1, "sb-r-0", ok)
	if a.Index != 3 || a.Repeat != 1 || a.Target != "broker-2" || a.Error != "" || !strings.Contains(a.Detail, "leader of sb-r-0-0 (replicas [2 0 1], in sync [2 0])") {
		t.Errorf("answer %+v", a)
	}
	if a := leaderAnswer(context.Background(), v1alpha1.SystemKafka, 0, 0, "t", failed); a.Target != "" || !strings.Contains(a.Error, "no leader now") {
		t.Errorf("a failed look-up: %+v, want its error and no target", a)
	}
	if a := leaderAnswer(context.Background(), v1alpha1.SystemPulsar, 0, 0, "t", ok); a.Target != "" || !strings.Contains(a.Error, "Kafka only") {
		t.Errorf("Pulsar: %+v", a)
	}
}
