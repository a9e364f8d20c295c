package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The fault schedule's clock in a cluster. spec.faults count from the
// start of the measured phase, which only the coordinator knows (a
// warm-up, a rate search or a backlog come first and vary in length),
// while the operator injects. So the coordinator writes each repeat's
// measured-phase start into the run's results ConfigMap, beside the
// page-cache handshake's keys, and the operator reads it there: the
// same channel, no new permission, and a restarted operator finds it.

// KeyMeasureStarts is the results ConfigMap key with the measured
// phase's start of every repeat so far (MeasureStarts as JSON).
const KeyMeasureStarts = "faults.measureStarts"

// MeasureStarts are the measured phases' starts, index = repeat (0 for a
// run not repeated).
type MeasureStarts []time.Time

// ReadMeasureStarts decodes the key; nil when it is absent.
func ReadMeasureStarts(data map[string]string) (MeasureStarts, error) {
	raw, ok := data[KeyMeasureStarts]
	if !ok || raw == "" {
		return nil, nil
	}
	var s MeasureStarts
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return nil, fmt.Errorf("results ConfigMap key %s: %w", KeyMeasureStarts, err)
	}
	return s, nil
}

// WithMeasureStart returns data with repeat's start recorded. A repeat's
// start is written once: a retried write must not move the clock.
func WithMeasureStart(data map[string]string, repeat int, start time.Time) (map[string]string, error) {
	s, err := ReadMeasureStarts(data)
	if err != nil {
		return data, err
	}
	if repeat < len(s) && !s[repeat].IsZero() {
		return data, nil
	}
	for len(s) <= repeat {
		s = append(s, time.Time{})
	}
	s[repeat] = start.UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return data, err
	}
	if data == nil {
		data = map[string]string{}
	}
	data[KeyMeasureStarts] = string(b)
	return data, nil
}

// ClockWriter is the coordinator's side: it records a repeat's start in
// the results ConfigMap, creating it if the results were not written
// yet (with the labels and owner the results give it, so it goes with
// the run).
type ClockWriter struct {
	Client          client.Client
	Namespace, Name string
	Labels          map[string]string
	Owner           []metav1.OwnerReference
}

// Record writes repeat's start, retrying a conflict with the results'
// own writes and the operator's answers.
func (w *ClockWriter) Record(ctx context.Context, repeat int, start time.Time) error {
	return w.update(ctx, func(data map[string]string) (map[string]string, error) {
		return WithMeasureStart(data, repeat, start)
	})
}

// RecordLeader writes the coordinator's answer to who leads for a
// leader fault (leaders.go).
func (w *ClockWriter) RecordLeader(ctx context.Context, a LeaderAnswer) error {
	return w.update(ctx, func(data map[string]string) (map[string]string, error) {
		return WithLeader(data, a)
	})
}

// update applies change to the ConfigMap's data, creating the ConfigMap
// when the results were not written yet, on a fresh read after a
// conflict.
func (w *ClockWriter) update(ctx context.Context, change func(map[string]string) (map[string]string, error)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var cm corev1.ConfigMap
		err := w.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, &cm)
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return fmt.Errorf("fault clock: get ConfigMap %s/%s: %w", w.Namespace, w.Name, err)
		}
		if cm.Data, err = change(cm.Data); err != nil {
			return err
		}
		if create {
			cm.ObjectMeta = metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, Labels: w.Labels, OwnerReferences: w.Owner}
			err = w.Client.Create(ctx, &cm)
			if apierrors.IsAlreadyExists(err) {
				// Written meanwhile: read it again, as after a conflict.
				return apierrors.NewConflict(corev1.Resource("configmaps"), w.Name, err)
			}
			return err
		}
		return w.Client.Update(ctx, &cm)
	})
}
