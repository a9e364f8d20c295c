package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestLeaderAnswer(t *testing.T) {
	ok := func(context.Context) (v1alpha1.FaultTarget, string, error) {
		return "broker-2", "leader of sb-r-0-0 (replicas [2 0 1], in sync [2 0])", nil
	}
	failed := func(context.Context) (v1alpha1.FaultTarget, string, error) {
		return "", "", errors.New("sb-r-0-0 has no leader now")
	}
	a := leaderAnswer(context.Background(), 3, 1, ok)
	if a.Index != 3 || a.Repeat != 1 || a.Target != "broker-2" || a.Error != "" || !strings.Contains(a.Detail, "leader of sb-r-0-0") {
		t.Errorf("answer %+v", a)
	}
	if a := leaderAnswer(context.Background(), 0, 0, failed); a.Target != "" || !strings.Contains(a.Error, "no leader now") {
		t.Errorf("a failed look-up: %+v, want its error and no target", a)
	}
}
