package results

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

// Keys of the results ConfigMap.
const (
	// KeySummary is the summary JSON (Summary).
	KeySummary = "summary.json"
	// KeyOMB is the OMB-compatible result JSON (OMBResult).
	KeyOMB = "omb-result.json"
	// KeyHistograms (binaryData) is a gzipped HdrHistogram log with one
	// histogram per phase and kind, tagged "<phase>.<kind>", values in µs.
	KeyHistograms = "histograms.hlog.gz"
	// KeyIntervalHistograms (binaryData) is a gzipped HdrHistogram log of
	// the time series, one histogram per interval and kind.
	KeyIntervalHistograms = "intervals.hlog.gz"

	// LabelRun carries the run's name on the ConfigMap.
	LabelRun = "streambench.io/run"
)

// MaxConfigMapBytes is the budget for a results ConfigMap: its JSON form,
// binaryData base64 included, must stay below Kubernetes' 1 MiB ConfigMap
// limit with room for metadata.
const MaxConfigMapBytes = 1000 * 1024

// ConfigMapName is the name of a run's results ConfigMap.
func ConfigMapName(run string) string { return run + "-results" }

// histogramKinds are the kinds written to the histogram logs.
var histogramKinds = []struct {
	name string
	get  func(s *stats.Snapshot) *stats.Histogram
}{
	{"publishLatency", func(s *stats.Snapshot) *stats.Histogram { return s.Producer.PublishLatency }},
	{"sendDelay", func(s *stats.Snapshot) *stats.Histogram { return s.Producer.SendDelay }},
	{"correctedLatency", func(s *stats.Snapshot) *stats.Histogram { return s.Producer.CorrectedLatency }},
	{"endToEnd", func(s *stats.Snapshot) *stats.Histogram { return s.Consumer.EndToEnd }},
	{"catchUpEndToEnd", func(s *stats.Snapshot) *stats.Histogram { return s.Consumer.CatchUpEndToEnd }},
}

// histogramLog writes the given snapshots' histograms as a gzipped
// HdrHistogram log (the format HdrHistogram's tools read).
func histogramLog(points []stats.Snapshot, comment string) ([]byte, error) {
	var raw bytes.Buffer
	w := hdr.NewHistogramLogWriter(&raw)
	if err := w.OutputLogFormatVersion(); err != nil {
		return nil, err
	}
	if err := w.OutputComment(comment); err != nil {
		return nil, err
	}
	if len(points) > 0 {
		base := points[0].Start
		for _, p := range points {
			if p.Start.Before(base) {
				base = p.Start
			}
		}
		w.SetBaseTime(base.UnixMilli())
		if err := w.OutputStartTime(base.UnixMilli()); err != nil {
			return nil, err
		}
	}
	if err := w.OutputLegend(); err != nil {
		return nil, err
	}
	for i := range points {
		p := &points[i]
		for _, k := range histogramKinds {
			h := k.get(p)
			if h.Count() == 0 {
				continue
			}
			ph := h.Packed()
			ph.SetTag(fmt.Sprintf("%s.%s", p.Phase, k.name))
			ph.SetStartTimeMs(p.Start.UnixMilli())
			ph.SetEndTimeMs(p.End.UnixMilli())
			if err := w.OutputIntervalPackedHistogram(ph); err != nil {
				return nil, err
			}
		}
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

// BuildConfigMap builds the <run>-results ConfigMap (pure: no API calls) and
// returns the summary it carries. When the full detail does not fit in
// MaxConfigMapBytes it thins, in this order: the interval histogram log
// (merging intervals, then leaving it out), then the time series (merging
// 2, 4, 8, ... intervals per point, exactly); Summary.Truncation says what
// was done. Histograms are per phase, never per partition, so the size does
// not grow with the number of partitions; per-subscription counts are
// capped at MaxListedSubscriptions.
func BuildConfigMap(in Input) (*corev1.ConfigMap, *Summary, error) {
	return buildConfigMap(in, MaxConfigMapBytes-OutcomeReserve)
}

// OutcomeReserve is the room the coordinator leaves in the ConfigMap for
// each summary it writes, for what the outcome step adds when the run is
// collected (internal/outcome): the summary's cost (about 4 KB) and its
// faults. Without it a ConfigMap thinned to the last byte could not take
// them, and its summary.json would lack what local mode's has.
const OutcomeReserve = 8 * 1024

// buildConfigMap is BuildConfigMap within budget bytes.
func buildConfigMap(in Input, budget int) (*corev1.ConfigMap, *Summary, error) {
	pr, err := prepare(in)
	if err != nil {
		return nil, nil, err
	}
	phaseAggs := make([]stats.Snapshot, 0, len(pr.phases))
	for _, p := range pr.phases {
		phaseAggs = append(phaseAggs, pr.aggs[p])
	}
	aggLog, err := histogramLog(phaseAggs, "streambench whole-phase histograms; values in microseconds; tag = <phase>.<kind>")
	if err != nil {
		return nil, nil, fmt.Errorf("results of run %q: histogram log: %w", in.Run, err)
	}

	// The whole-phase log is never thinned: larger than the budget, no
	// thinning of the rest makes the results fit (a repeat's share of a
	// repeated run's ConfigMap, BuildRepeatedConfigMap).
	if n := base64.StdEncoding.EncodedLen(len(aggLog)); n > budget {
		return nil, nil, fmt.Errorf("results of run %q: the whole-phase histogram log alone takes %d bytes of %d", in.Run, n, budget)
	}
	longest := 0
	for _, p := range pr.phases {
		longest = max(longest, len(pr.series[p]))
	}

	seriesStride, histStride := 1, 1
	for {
		sum := pr.summarize(seriesStride)
		omb := pr.omb(seriesStride)
		var intervalLog []byte
		if histStride > 0 {
			var points []stats.Snapshot
			for _, p := range pr.phases {
				points = append(points, strided(pr.series[p], histStride)...)
			}
			intervalLog, err = histogramLog(points,
				fmt.Sprintf("streambench interval histograms, %d interval(s) per entry; values in microseconds; tag = <phase>.<kind>", histStride))
			if err != nil {
				return nil, nil, fmt.Errorf("results of run %q: interval histogram log: %w", in.Run, err)
			}
		}
		listed := len(sum.Subscriptions.Items)
		if seriesStride > 1 || histStride != 1 || listed < sum.Subscriptions.Count {
			sum.Truncation = &Truncation{SeriesStride: seriesStride, IntervalHistogramStride: histStride, SubscriptionsListed: listed}
		}
		cm, err := configMap(in, sum, omb, aggLog, intervalLog)
		if err != nil {
			return nil, nil, err
		}
		size, err := jsonSize(cm)
		if err != nil {
			return nil, nil, err
		}
		if size <= budget {
			return cm, sum, nil
		}
		switch {
		case histStride > 0 && histStride < longest:
			histStride *= 4
		case histStride > 0:
			histStride = 0
		case seriesStride < longest:
			seriesStride *= 2
		default:
			return nil, nil, fmt.Errorf("results of run %q: %d bytes do not fit %d even fully thinned", in.Run, size, budget)
		}
	}
}

// EncodedSize is cm's size as the API server takes it (its JSON form,
// binaryData base64 included): what MaxConfigMapBytes bounds.
func EncodedSize(cm *corev1.ConfigMap) (int, error) { return jsonSize(cm) }

func jsonSize(cm *corev1.ConfigMap) (int, error) {
	b, err := json.Marshal(cm)
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

func configMap(in Input, sum *Summary, omb *OMBResult, aggLog, intervalLog []byte) (*corev1.ConfigMap, error) {
	sj, err := json.Marshal(sum)
	if err != nil {
		return nil, fmt.Errorf("results of run %q: summary JSON: %w", in.Run, err)
	}
	oj, err := json.Marshal(omb)
	if err != nil {
		return nil, fmt.Errorf("results of run %q: OMB JSON: %w", in.Run, err)
	}
	cm := emptyConfigMap(in)
	cm.Data[KeySummary], cm.Data[KeyOMB] = string(sj), string(oj)
	cm.BinaryData[KeyHistograms] = aggLog
	if intervalLog != nil {
		cm.BinaryData[KeyIntervalHistograms] = intervalLog
	}
	return cm, nil
}

// emptyConfigMap is the results ConfigMap of in's run, without results.
func emptyConfigMap(in Input) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ConfigMapName(in.Run), Namespace: in.Namespace,
			Labels: map[string]string{LabelRun: in.Run},
		},
		Data:       map[string]string{},
		BinaryData: map[string][]byte{},
	}
	if in.Owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{in.Owner.Reference()}
	}
	return cm
}

// Reference is the results ConfigMap's owner reference to its run, as
// its controller: the operator reads back only a ConfigMap its run
// controls (docs/security.md), so a look-alike of the same name (a
// tenant's, or one left by a deleted run of that name) is not taken for
// the run's.
func (o OwnerRef) Reference() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun",
		Name: o.Name, UID: types.UID(o.UID), Controller: ptr.To(true),
	}
}

// Write creates the results ConfigMap, or replaces the results in an
// existing one: the coordinator writes its results so far every interval,
// then its final ones, and the page-cache handshake (internal/pagecache)
// keeps its own keys in the same ConfigMap, so those stay. A conflict with
// the operator's answer to a page-cache request is retried.
func Write(ctx context.Context, c client.Client, cm *corev1.ConfigMap) error {
	err := c.Create(ctx, cm)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var cur corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
			return fmt.Errorf("get ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		cur.Labels, cur.OwnerReferences = cm.Labels, cm.OwnerReferences
		// A key the new results leave out (a thinned interval log, a
		// repeat's detail left out to fit) must not survive from an
		// earlier write.
		for k := range cur.Data {
			if isResultsKey(k) {
				delete(cur.Data, k)
			}
		}
		for k := range cur.BinaryData {
			if isResultsKey(k) {
				delete(cur.BinaryData, k)
			}
		}
		if cur.Data == nil {
			cur.Data = map[string]string{}
		}
		if cur.BinaryData == nil {
			cur.BinaryData = map[string][]byte{}
		}
		for k, v := range cm.Data {
			cur.Data[k] = v
		}
		for k, v := range cm.BinaryData {
			cur.BinaryData[k] = v
		}
		if err := c.Update(ctx, &cur); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return fmt.Errorf("update ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		return nil
	})
}

// Read parses the summary out of a results ConfigMap (the controller copies
// its Results into status.results).
func Read(cm *corev1.ConfigMap) (*Summary, error) {
	raw, ok := cm.Data[KeySummary]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no data key %q; it is not a streambench results ConfigMap", cm.Namespace, cm.Name, KeySummary)
	}
	var s Summary
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", cm.Namespace, cm.Name, KeySummary, err)
	}
	if s.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: schemaVersion %q, this streambench reads %q", cm.Namespace, cm.Name, KeySummary, s.SchemaVersion, SchemaVersion)
	}
	return &s, nil
}

// ReadRepeat parses repeat index's (from 1) own summary out of a repeated
// run's results ConfigMap (RepeatKey), where the run's summary is the
// aggregate.
func ReadRepeat(cm *corev1.ConfigMap, index int) (*Summary, error) {
	key := RepeatKey(index, KeySummary)
	raw, ok := cm.Data[key]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %q (left out to fit, or not written)", cm.Namespace, cm.Name, key)
	}
	one := &corev1.ConfigMap{ObjectMeta: cm.ObjectMeta, Data: map[string]string{KeySummary: raw}}
	return Read(one)
}

// ReadOMB parses the OMB-compatible result out of a results ConfigMap.
func ReadOMB(cm *corev1.ConfigMap) (*OMBResult, error) {
	raw, ok := cm.Data[KeyOMB]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no data key %q", cm.Namespace, cm.Name, KeyOMB)
	}
	var r OMBResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", cm.Namespace, cm.Name, KeyOMB, err)
	}
	return &r, nil
}

// ReadHistogramLog returns the uncompressed HdrHistogram log under key
// (KeyHistograms or KeyIntervalHistograms), ready for
// hdrhistogram.NewHistogramLogReader.
func ReadHistogramLog(cm *corev1.ConfigMap, key string) ([]byte, error) {
	gz, ok := cm.BinaryData[key]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no binaryData key %q", cm.Namespace, cm.Name, key)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", cm.Namespace, cm.Name, key, err)
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// Get reads the results summary of a run from the API server.
func Get(ctx context.Context, c client.Reader, namespace, run string) (*Summary, error) {
	var cm corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ConfigMapName(run)}, &cm); err != nil {
		return nil, fmt.Errorf("get results ConfigMap %s/%s: %w", namespace, ConfigMapName(run), err)
	}
	return Read(&cm)
}
