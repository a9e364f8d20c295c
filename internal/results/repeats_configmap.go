package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RepeatDir is the directory of a repeat's results, relative to its run's
// (index from 1): local mode and the coordinator's --output-dir write
// each repeat's files there.
func RepeatDir(index int) string { return fmt.Sprintf("repeat-%d", index) }

// RepeatKey is where a repeated run's results ConfigMap keeps key (one of
// a run's keys: KeySummary, KeyOMB, the histogram logs) of one repeat:
// repeat-<index>.<key>.
func RepeatKey(index int, key string) string { return RepeatDir(index) + "." + key }

// isResultsKey tells the keys results write (and replace at every write)
// from the ones other writers keep in the ConfigMap (internal/pagecache).
func isResultsKey(k string) bool {
	switch k {
	case KeySummary, KeyOMB, KeyHistograms, KeyIntervalHistograms:
		return true
	}
	return strings.HasPrefix(k, "repeat-")
}

// repeatSlack is the part of the budget kept for what the shares do not
// count: the ConfigMap's own metadata, and the notes of repeats left out.
const repeatSlack = 8 * 1024

// BuildRepeatedConfigMap builds the results ConfigMap of a run repeated on
// the same brokers (spec.repeats) from its repeats' inputs, in the order
// run; while the run goes on, the last is the repeat in progress, marked
// partial. summary.json is their Aggregate, so status.results is the
// median of each figure, with status.repeats and status.intervals beside
// it. Each repeat's own results (summary, OMB result, histogram logs) are
// under RepeatKey(i, key), thinned as BuildConfigMap thins, each to an
// equal share of what the aggregate leaves of MaxConfigMapBytes. A repeat
// whose results cannot fit its share keeps its headline in the aggregate
// only, and the notes say so. A single input is BuildConfigMap's.
func BuildRepeatedConfigMap(ins []Input) (*corev1.ConfigMap, *Summary, error) {
	switch len(ins) {
	case 0:
		return nil, nil, errors.New("results: no repeats to write")
	case 1:
		return BuildConfigMap(ins[0])
	}
	sums := make([]*Summary, len(ins))
	dirs := make([]string, len(ins))
	for i, in := range ins {
		s, err := Summarize(in)
		if err != nil {
			return nil, nil, fmt.Errorf("repeat %d: %w", i+1, err)
		}
		sums[i], dirs[i] = s, RepeatDir(i+1)
	}
	agg, err := Aggregate(sums, dirs)
	if err != nil {
		return nil, nil, err
	}
	aj, err := json.Marshal(agg)
	if err != nil {
		return nil, nil, err
	}
	// Every summary, the aggregate's and each repeat's, keeps the
	// outcome step's room (OutcomeReserve).
	share := (MaxConfigMapBytes-len(aj)-repeatSlack-OutcomeReserve)/len(ins) - OutcomeReserve
	cm := emptyConfigMap(ins[0])
	for i, in := range ins {
		rcm, _, err := buildConfigMap(in, share)
		if err != nil {
			agg.Notes = append(agg.Notes, fmt.Sprintf("repeat %d: its results do not fit its share (%d B) of the ConfigMap, so only its headline is kept (status.repeats): %v", i+1, share, err))
			continue
		}
		for k, v := range rcm.Data {
			cm.Data[RepeatKey(i+1, k)] = v
		}
		for k, v := range rcm.BinaryData {
			cm.BinaryData[RepeatKey(i+1, k)] = v
		}
	}
	if aj, err = json.Marshal(agg); err != nil {
		return nil, nil, err
	}
	cm.Data[KeySummary] = string(aj)
	size, err := jsonSize(cm)
	if err != nil {
		return nil, nil, err
	}
	if size > MaxConfigMapBytes {
		return nil, nil, fmt.Errorf("results of run %q: %d repeats take %d bytes, over a ConfigMap's %d", ins[0].Run, len(ins), size, MaxConfigMapBytes)
	}
	return cm, agg, nil
}
