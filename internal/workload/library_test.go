package workload

// These tests hold the workload library (workloads/ at the repository root)
// and the durability matrix of config/samples to the source studies: an edit
// that changes a scenario's rate, partitions or clients, or a local variant
// that grows too large for a laptop, fails here.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
)

var (
	libraryDir = filepath.Join("..", "..", "workloads")
	samplesDir = filepath.Join("..", "..", "config", "samples")
)

// The keys of the source studies (docs/methodology.md) a library file names in its
// first comment line.
const (
	durabilityStudy = "D"
	latencyStudy    = "L"
	study2022       = "22"
	gigaomStudy     = "G"
)

var studyDocuments = []string{durabilityStudy, latencyStudy, study2022, gigaomStudy}

// studyScenario is what a source study says about one of its tests.
type studyScenario struct {
	study         string
	partitions    int32
	messageSize   int32
	rate          int64 // msg/s; 0 is the maximum-rate search
	subscriptions int32
	consumers     int32 // per subscription
	producers     int32 // per topic
	backlogGB     float64
	catchUp       int32 // catch-up subscriptions of a mixed workload
	testMinutes   float64
}

// studyScenarios has one entry per full-size library file (by file stem).
// Client counts the study does not state are those of its other tests (see
// each file's comment).
var studyScenarios = map[string]studyScenario{
	// Durability study D, Maximum Throughput Test #1-#4: 1 KB, max rate.
	"max-rate-1-topic-100-partitions-1kb-2p-2c":  {durabilityStudy, 100, 1024, 0, 1, 2, 2, 0, 0, 5},
	"max-rate-1-topic-2000-partitions-1kb-2p-2c": {durabilityStudy, 2000, 1024, 0, 1, 2, 2, 0, 0, 5},
	"max-rate-1-topic-1-partition-1kb-2p-2c":     {durabilityStudy, 1, 1024, 0, 1, 2, 2, 0, 0, 5},
	"max-rate-1-topic-1-partition-1kb-1p-1c":     {durabilityStudy, 1, 1024, 0, 1, 1, 1, 0, 0, 5},
	// Durability study D, Publish & End-to-End Latency Test #1-#3: 200k msg/s.
	"latency-1-topic-100-partitions-1kb":                  {durabilityStudy, 100, 1024, 200000, 1, 2, 2, 0, 0, 5},
	"latency-1-topic-100-partitions-1kb-10-subscriptions": {durabilityStudy, 100, 1024, 200000, 10, 2, 2, 0, 0, 5},
	"latency-1-topic-5000-partitions-1kb":                 {durabilityStudy, 5000, 1024, 200000, 1, 2, 2, 0, 0, 5},
	"latency-1-topic-8000-partitions-1kb":                 {durabilityStudy, 8000, 1024, 200000, 1, 2, 2, 0, 0, 5},
	"latency-1-topic-10000-partitions-1kb":                {durabilityStudy, 10000, 1024, 200000, 1, 2, 2, 0, 0, 5},
	// Durability study D, Catch-up Read and Mixed Workload Tests: 512 GB.
	"catchup-1-topic-100-partitions-1kb": {durabilityStudy, 100, 1024, 200000, 1, 2, 2, 512, 0, 5},
	"mixed-1-topic-100-partitions-1kb":   {durabilityStudy, 100, 1024, 200000, 1, 1, 2, 512, 1, 5},
	// Latency study L, Tests 1-12: 100 B at 50k msg/s for 15 minutes.
	"latency-1-topic-1-partition-100b":   {latencyStudy, 1, 100, 50000, 1, 1, 1, 0, 0, 15},
	"latency-1-topic-6-partitions-100b":  {latencyStudy, 6, 100, 50000, 1, 1, 1, 0, 0, 15},
	"latency-1-topic-16-partitions-100b": {latencyStudy, 16, 100, 50000, 1, 1, 1, 0, 0, 15},
	// 2022 study, Tests #1-#3 (its workload files).
	"max-rate-1-topic-1-partition-4p-1c-1kb":        {study2022, 1, 1024, 0, 1, 1, 4, 0, 0, 5},
	"1-topic-100-partitions-1kb-4p-4c-2000k":        {study2022, 100, 1024, 2000000, 1, 4, 4, 0, 0, 5},
	"1-topic-100-partitions-1kb-4p-4c-500k":         {study2022, 100, 1024, 500000, 1, 4, 4, 0, 0, 5},
	"1-topic-100-partitions-1kb-4p-4c-200k-backlog": {study2022, 100, 1024, 200000, 1, 4, 4, 512, 0, 5},
	// GigaOm study G, its workload table.
	"latency-1-topic-1-partition-1kb":   {gigaomStudy, 1, 1024, 50000, 1, 1, 1, 0, 0, 15},
	"latency-1-topic-16-partitions-1kb": {gigaomStudy, 16, 1024, 50000, 1, 1, 1, 0, 0, 15},
	"max-rate-1-topic-1-partition-100b": {gigaomStudy, 1, 100, 0, 1, 1, 1, 0, 0, 5},
}

// The bounds that keep a -local variant to a few minutes on 2 cores.
const (
	localMaxRate         = 20000
	localMaxRunTime      = 3 * time.Minute // warm-up + measured phase
	localMaxBacklogBuild = 30 * time.Second
)

const quickstartWorkload = "latency-1-topic-16-partitions-1kb-local.yaml"

type libraryFile struct {
	path, stem string
	header     string // the leading comment block
	w          v1alpha1.WorkloadSpec
}

// loadLibrary loads every workload file as local mode does (LoadFile:
// Parse, Default, Validate, CheckPayloadFile) and fails on any problem.
func loadLibrary(t *testing.T) map[string]libraryFile {
	t.Helper()
	entries, err := os.ReadDir(libraryDir)
	if err != nil {
		t.Fatalf("reading the workload library: %v", err)
	}
	files := map[string]libraryFile{}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() || name == "README.md":
			continue
		case !strings.HasSuffix(name, ".yaml"):
			t.Errorf("%s: the library holds workloads as .yaml files only", name)
			continue
		}
		path := filepath.Join(libraryDir, name)
		w, err := LoadFile(path, field.NewPath("workload"))
		if err != nil {
			t.Errorf("%s does not load: %v", name, err)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var header []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			header = append(header, line)
		}
		files[name] = libraryFile{path: path, stem: strings.TrimSuffix(name, ".yaml"),
			header: strings.Join(header, "\n"), w: w}
	}
	// Guards against a wrong directory or a glob that matches nothing.
	if len(files) < len(studyScenarios) {
		t.Fatalf("found %d workload files in %s, want at least the %d study scenarios", len(files), libraryDir, len(studyScenarios))
	}
	return files
}

func isLocal(stem string) bool { return strings.HasSuffix(stem, "-local") }

func TestLibraryFilesNameTheirSource(t *testing.T) {
	for name, f := range loadLibrary(t) {
		if f.w.Name != f.stem {
			t.Errorf("%s: name is %q; use the file name without .yaml (%q) so results are labelled by the file that made them", name, f.w.Name, f.stem)
		}
		first, _, _ := strings.Cut(f.header, "\n")
		study := ""
		for _, s := range studyDocuments {
			if strings.HasPrefix(first, "# Source: "+s+" (docs/methodology.md),") {
				study = s
			}
		}
		if study == "" {
			t.Errorf("%s: the first line must be \"# Source: <key> (docs/methodology.md), <test or table>\" with a key of %v; got %q", name, studyDocuments, first)
			continue
		}
		if !strings.Contains(f.header, "Test") && !strings.Contains(f.header, "Table") && !strings.Contains(f.header, "table") {
			t.Errorf("%s: the header names no test or table of %s", name, study)
		}
		if s, ok := studyScenarios[strings.TrimSuffix(f.stem, "-local")]; ok && s.study != study {
			t.Errorf("%s: names %s, but its scenario comes from %s", name, study, s.study)
		}
	}
}

func TestLibraryMatchesSeeds(t *testing.T) {
	files := loadLibrary(t)
	for stem, want := range studyScenarios {
		f, ok := files[stem+".yaml"]
		if !ok {
			t.Errorf("%s.yaml is missing from the library (%s)", stem, want.study)
			continue
		}
		w := f.w
		got := studyScenario{
			study:         want.study,
			partitions:    w.PartitionsPerTopic,
			messageSize:   w.MessageSize,
			rate:          w.ProducerRate,
			subscriptions: int32(SubscriptionsPerTopic(w)),
			consumers:     w.ConsumerPerSubscription,
			producers:     w.ProducersPerTopic,
			backlogGB:     float64(BacklogBytes(w)) / BytesPerGB,
			catchUp:       int32(CatchUpSubscriptionsPerTopic(w)),
			testMinutes:   TestDuration(w).Minutes(),
		}
		if got != want {
			t.Errorf("%s.yaml does not match %s:\n got %+v\nwant %+v", stem, want.study, got, want)
		}
		if w.Topics != 1 {
			t.Errorf("%s.yaml: topics = %d; every study scenario uses 1 topic", stem, w.Topics)
		}
		if w.KeyDistributor != v1alpha1.KeyNone {
			t.Errorf("%s.yaml: keyDistributor = %s; the source studies send null keys (OMB's NO_KEY)", stem, w.KeyDistributor)
		}
		if d := BacklogDrainRatio(w); d != 1 {
			t.Errorf("%s.yaml: backlogDrainRatio = %v; the source studies drain the whole backlog", stem, d)
		}
		if wu := WarmupDuration(w); wu != time.Minute {
			t.Errorf("%s.yaml: warm-up %v; full-size runs keep OMB's 1 minute", stem, wu)
		}
	}
	for name, f := range files {
		if _, ok := studyScenarios[f.stem]; !ok && !isLocal(f.stem) {
			t.Errorf("%s has no entry in studyScenarios; add the study's numbers so the file is checked", name)
		}
	}
}

func TestLibraryLocalVariants(t *testing.T) {
	files := loadLibrary(t)
	locals := 0
	for name, f := range files {
		if !isLocal(f.stem) {
			continue
		}
		locals++
		w := f.w
		sib, ok := files[strings.TrimSuffix(f.stem, "-local")+".yaml"]
		if !ok {
			t.Errorf("%s has no full-size sibling %s.yaml", name, strings.TrimSuffix(f.stem, "-local"))
			continue
		}
		s := sib.w

		if run := WarmupDuration(w) + TestDuration(w); run > localMaxRunTime {
			t.Errorf("%s: warm-up + measured phase is %v; a local variant must stay within %v", name, run, localMaxRunTime)
		}
		if w.ProducerRate < 1 || w.ProducerRate > localMaxRate {
			t.Errorf("%s: producerRate %d; a local variant publishes a fixed rate of 1..%d msg/s", name, w.ProducerRate, localMaxRate)
		}
		if IsBacklog(w) {
			build := time.Duration(float64(BacklogBytes(w)) / float64(w.ProducerRate*int64(w.MessageSize)) * float64(time.Second))
			if build > localMaxBacklogBuild {
				t.Errorf("%s: the backlog takes %v to build at producerRate; keep it under %v", name, build, localMaxBacklogBuild)
			}
		}

		// Scaled down, not changed: the sibling's scenario with smaller
		// numbers.
		if w.ProducerRate >= s.ProducerRate && s.ProducerRate != 0 {
			t.Errorf("%s: producerRate %d is not below its sibling's %d", name, w.ProducerRate, s.ProducerRate)
		}
		if w.PartitionsPerTopic > s.PartitionsPerTopic || w.Topics > s.Topics {
			t.Errorf("%s: %dx%d partitions exceed its sibling's %dx%d", name, w.Topics, w.PartitionsPerTopic, s.Topics, s.PartitionsPerTopic)
		}
		if IsBacklog(w) && BacklogBytes(w) >= BacklogBytes(s) {
			t.Errorf("%s: backlog %d bytes is not below its sibling's %d", name, BacklogBytes(w), BacklogBytes(s))
		}
		same := []struct {
			what      string
			got, want any
		}{
			{"messageSize", w.MessageSize, s.MessageSize},
			{"subscriptionsPerTopic", SubscriptionsPerTopic(w), SubscriptionsPerTopic(s)},
			{"consumerPerSubscription", w.ConsumerPerSubscription, s.ConsumerPerSubscription},
			{"producersPerTopic", w.ProducersPerTopic, s.ProducersPerTopic},
			{"keyDistributor", w.KeyDistributor, s.KeyDistributor},
			{"a backlog", IsBacklog(w), IsBacklog(s)},
			{"mixed catch-up subscriptions", CatchUpSubscriptionsPerTopic(w), CatchUpSubscriptionsPerTopic(s)},
			{"backlogDrainRatio", BacklogDrainRatio(w), BacklogDrainRatio(s)},
		}
		for _, c := range same {
			if c.got != c.want {
				t.Errorf("%s: %s is %v, its sibling's %v; a local variant scales rates, partitions, backlog and time only", name, c.what, c.got, c.want)
			}
		}
	}
	if locals < 5 {
		t.Errorf("found %d -local variants, want at least 5 (quick start, latency with 1 and 10 subscriptions, catch-up, mixed)", locals)
	}
}

// TestQuickstartWorkload pins the workload make quickstart runs.
func TestQuickstartWorkload(t *testing.T) {
	files := loadLibrary(t)
	f, ok := files[quickstartWorkload]
	if !ok {
		t.Fatalf("%s is missing: make quickstart runs it", quickstartWorkload)
	}
	w := f.w
	checks := []struct {
		what string
		ok   bool
	}{
		{"1 topic", w.Topics == 1},
		{"16 partitions", w.PartitionsPerTopic == 16},
		{"1 KiB messages", w.MessageSize == 1024},
		{"1 producer", w.ProducersPerTopic == 1},
		{"1 subscription", SubscriptionsPerTopic(w) == 1},
		{"1 consumer", w.ConsumerPerSubscription == 1},
		{"a fixed rate around 2,000 msg/s", w.ProducerRate >= 1500 && w.ProducerRate <= 2500},
		{"~1 minute measured", TestDuration(w) == time.Minute},
		{"15 s of warm-up", WarmupDuration(w) == 15*time.Second},
		{"no backlog", !IsBacklog(w) && !IsMixed(w)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: want %s; got %+v", quickstartWorkload, c.what, w)
		}
	}
}

// TestLibraryREADME keeps the README's table complete.
func TestLibraryREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(libraryDir, "README.md"))
	if err != nil {
		t.Fatalf("workloads/README.md: %v", err)
	}
	for name := range loadLibrary(t) {
		if !strings.Contains(string(data), "`"+name+"`") {
			t.Errorf("workloads/README.md does not list `%s`", name)
		}
	}
}

// durabilityMatrix is config/samples' Table 1-6 of the durability study:
// ack-2/ack-1 replication x sync/async local, for both systems.
var durabilityMatrix = []struct {
	file  string
	level v1alpha1.Level
}{
	{"run-ack2-sync", v1alpha1.Level1},
	{"run-ack2-async", v1alpha1.Level2},
	{"run-ack1-sync", v1alpha1.Level3},
	{"run-ack1-async", v1alpha1.Level4},
}

// TestDurabilityMatrixSamples checks that the eight samples differ only in
// their durability level (and system), so their results compare. The
// envtest suite (controllers/samples_test.go) creates them on an API server.
func TestDurabilityMatrixSamples(t *testing.T) {
	comments := map[string]string{}
	load := func(stem string) v1alpha1.BenchmarkRun {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(samplesDir, stem+".yaml"))
		if err != nil {
			t.Fatalf("config/samples/%s.yaml: %v", stem, err)
		}
		var r v1alpha1.BenchmarkRun
		if err := yaml.UnmarshalStrict(data, &r); err != nil {
			t.Fatalf("config/samples/%s.yaml is not a BenchmarkRun: %v", stem, err)
		}
		comments[stem], _, _ = strings.Cut(string(data), "apiVersion:")
		return r
	}
	kustomization, err := os.ReadFile(filepath.Join(samplesDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	reference := load("run-ack2-async") // the sample users apply first
	refCluster := map[v1alpha1.System]v1alpha1.ClusterSpec{
		v1alpha1.SystemKafka:  reference.Spec.Cluster,
		v1alpha1.SystemPulsar: load("run-ack2-async-pulsar").Spec.Cluster,
	}
	var names []string
	for _, m := range durabilityMatrix {
		for _, sys := range []v1alpha1.System{v1alpha1.SystemKafka, v1alpha1.SystemPulsar} {
			stem := m.file
			if sys == v1alpha1.SystemPulsar {
				stem += "-pulsar"
			}
			r := load(stem)
			names = append(names, r.Name)
			if r.Name != stem || len(r.Name) > 40 {
				t.Errorf("%s.yaml: metadata.name %q; use the file name (at most 40 characters)", stem, r.Name)
			}
			if r.Spec.System != sys {
				t.Errorf("%s.yaml: system %q, want %q", stem, r.Spec.System, sys)
			}
			d := r.Spec.Durability
			if d == nil || d.Level == nil || *d.Level != m.level || d.Replication != nil || d.Local != nil {
				got, _ := yaml.Marshal(d)
				t.Errorf("%s.yaml: want spec.durability {level: %d} and nothing else; got %s", stem, m.level, strings.TrimSpace(string(got)))
			}
			// Kafka has no sync local durability and reports a lower level
			// than it was asked for; the sample must say so up front.
			if d != nil {
				eff, err := durability.Translate(sys, *d)
				if err != nil {
					t.Errorf("%s.yaml: %v", stem, err)
				} else if eff.AchievedLevel != m.level {
					say := fmt.Sprintf("reports the level really achieved, %d, one level lower", eff.AchievedLevel)
					if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(comments[stem], "#", "")), " "), say) {
						t.Errorf("%s.yaml: achieves level %d instead of %d; its comment must say it %q", stem, eff.AchievedLevel, m.level, say)
					}
				}
			}
			if !reflect.DeepEqual(r.Spec.Workload, reference.Spec.Workload) {
				t.Errorf("%s.yaml: the workload differs from run-ack2-async.yaml's; the matrix compares only when it is the same", stem)
			}
			if !reflect.DeepEqual(r.Spec.Workers, reference.Spec.Workers) || !reflect.DeepEqual(r.Spec.Teardown, reference.Spec.Teardown) {
				t.Errorf("%s.yaml: workers or teardown differ from run-ack2-async.yaml's", stem)
			}
			if !reflect.DeepEqual(r.Spec.Cluster, refCluster[sys]) {
				t.Errorf("%s.yaml: the cluster differs from the other %s samples'", stem, sys)
			}
			if r.Spec.Driver != nil {
				t.Errorf("%s.yaml: driver overrides would make the run differ from its twin; remove spec.driver", stem)
			}
			if !strings.Contains(string(kustomization), "- "+stem+".yaml\n") {
				t.Errorf("config/samples/kustomization.yaml does not list %s.yaml", stem)
			}
		}
	}
	sort.Strings(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			t.Errorf("two samples are named %q", names[i])
		}
	}

	w := reference.Spec.Workload
	Default(&w)
	if errs := Validate(w, field.NewPath("spec", "workload")); len(errs) > 0 {
		t.Errorf("the samples' workload is invalid: %v", errs.ToAggregate())
	}

	// The matched twin: run-ack2-async-pulsar.yaml but for the ack quorum,
	// at the same level as run-ack2-async.yaml and waiting for as many
	// replicas as Kafka's acks=all while they keep up.
	const matched = "run-ack2-async-pulsar-aq3"
	m, study := load(matched), load("run-ack2-async-pulsar")
	if m.Name != matched || !strings.Contains(string(kustomization), "- "+matched+".yaml\n") {
		t.Errorf("%s.yaml: named %q, listed in the kustomization: %v", matched, m.Name, strings.Contains(string(kustomization), matched))
	}
	mm, ms := m, study
	mm.Name, ms.Name, mm.Spec.Durability, ms.Spec.Durability = "", "", nil, nil
	if !reflect.DeepEqual(mm.Spec, ms.Spec) {
		t.Errorf("%s.yaml differs from run-ack2-async-pulsar.yaml in more than its durability", matched)
	}
	effM, err := durability.TranslateFor(v1alpha1.SystemPulsar, durability.StallVersions(v1alpha1.SystemPulsar)[0], *m.Spec.Durability)
	if err != nil {
		t.Fatalf("%s.yaml: %v", matched, err)
	}
	effK, err := durability.TranslateFor(v1alpha1.SystemKafka, durability.StallVersions(v1alpha1.SystemKafka)[0], *reference.Spec.Durability)
	if err != nil {
		t.Fatal(err)
	}
	wm, _ := durability.AckWaitOf(effM)
	wk, _ := durability.AckWaitOf(effK)
	if effM.AchievedLevel != effK.AchievedLevel || wm.Healthy != wk.Healthy || wm.Healthy != 3 {
		t.Errorf("%s.yaml: level %d waiting for %s; run-ack2-async.yaml: level %d waiting for %s", matched, effM.AchievedLevel, wm.Description, effK.AchievedLevel, wk.Description)
	}
}
