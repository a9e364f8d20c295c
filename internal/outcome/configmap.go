package outcome

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/results"
)

// FromConfigMap reads a cluster run's finished results ConfigMap (as the
// coordinator wrote it, internal/results) into an Input: the repeats'
// summaries, the measured phases' starts the coordinator recorded for the
// operator's faults (internal/faults, clock.go) and, for a run of two
// repeats or more, the aggregate. The faults and thresholds are the
// caller's, from the run.
func FromConfigMap(cm *corev1.ConfigMap, repeated bool, fs []v1alpha1.FaultStatus, ths []v1alpha1.Threshold) (Input, error) {
	in := Input{Repeated: repeated, Faults: fs, Thresholds: ths}
	sum, err := results.Read(cm)
	if err != nil {
		return in, err
	}
	starts, err := faults.ReadMeasureStarts(cm.Data)
	if err != nil {
		// Faults then have no figures; the results stand.
		starts = nil
	}
	start := func(i int) (t Repeat) {
		if i < len(starts) {
			t.MeasureStart = starts[i]
		}
		return t
	}
	if len(sum.Repeats) == 0 {
		r := start(0)
		r.Summary = sum
		in.Repeats = []Repeat{r}
		return in, nil
	}
	in.Aggregate = sum
	for i := range sum.Repeats {
		r := start(i)
		r.Summary, r.Unreadable = results.ReadRepeat(cm, i+1)
		in.Repeats = append(in.Repeats, r)
	}
	return in, nil
}

// IntoConfigMap writes out's summaries into a copy of cm, the ConfigMap
// FromConfigMap read: summary.json and each repeat's that cm holds, now
// with their faults. Nothing else changes. An error (the ConfigMap would
// pass its 1 MiB) leaves the caller's cm as it was.
func IntoConfigMap(cm *corev1.ConfigMap, out *Outcome) (*corev1.ConfigMap, error) {
	cm = cm.DeepCopy()
	set := func(key string, s *results.Summary) error {
		if _, ok := cm.Data[key]; !ok || s == nil {
			return nil
		}
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		cm.Data[key] = string(b)
		return nil
	}
	if err := set(results.KeySummary, out.Summary); err != nil {
		return nil, err
	}
	if out.Summary.Repeats != nil {
		for i, s := range out.Repeats {
			if err := set(results.RepeatKey(i+1, results.KeySummary), s); err != nil {
				return nil, err
			}
		}
	}
	size, err := results.EncodedSize(cm)
	if err != nil {
		return nil, err
	}
	if size > results.MaxConfigMapBytes {
		return nil, fmt.Errorf("the results with their faults take %d bytes, over a ConfigMap's %d", size, results.MaxConfigMapBytes)
	}
	return cm, nil
}

// Written is the run's summary as the coordinator wrote it: the
// aggregate, or the one repeat's (nil for an empty Input).
func (in Input) Written() *results.Summary {
	if in.Aggregate != nil {
		return in.Aggregate
	}
	if len(in.Repeats) > 0 {
		return in.Repeats[0].Summary
	}
	return nil
}

// Collect is the cluster path's outcome: in, read from cm by
// FromConfigMap, finished, and the ConfigMap as it is to be written back
// with the summaries' faults and cost (nil when nothing in it changes:
// collected before, by an operator that restarted since).
func Collect(cm *corev1.ConfigMap, in Input) (*Outcome, *corev1.ConfigMap, error) {
	out, err := Finish(in)
	if err != nil {
		return nil, nil, err
	}
	written, err := IntoConfigMap(cm, out)
	if err != nil {
		return out, nil, err
	}
	if maps.Equal(written.Data, cm.Data) {
		return out, nil, nil
	}
	return out, written, nil
}
