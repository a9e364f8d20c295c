package workload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestParseFileStockWorkloads(t *testing.T) {
	payload1K := filepath.Join("testdata", "payload", "payload-1Kb.data")
	tests := []struct {
		file string
		want v1alpha1.WorkloadSpec
	}{
		{"1-topic-100-partitions-1kb-4p-4c-200k.yaml", v1alpha1.WorkloadSpec{
			Name: "1 topic / 100 partitions / 1Kb / 4p 4c / 200k", Topics: 1, PartitionsPerTopic: 100,
			KeyDistributor: v1alpha1.KeyNone, MessageSize: 1024, PayloadFile: payload1K,
			SubscriptionsPerTopic: ptr.To[int32](1), ConsumerPerSubscription: 4, ProducersPerTopic: 4,
			ProducerRate: 200000, ConsumerBacklogSizeGB: ptr.To(0.0), TestDurationMinutes: ptr.To(5.0),
		}},
		{"1-topic-100-partitions-1kb-4p-4c-200k-backlog.yaml", v1alpha1.WorkloadSpec{
			Name: "1 topic / 100 partitions / 1Kb / 4p 4c / 200k / 512 GB backlog", Topics: 1, PartitionsPerTopic: 100,
			KeyDistributor: v1alpha1.KeyNone, MessageSize: 1024, PayloadFile: payload1K,
			SubscriptionsPerTopic: ptr.To[int32](1), ConsumerPerSubscription: 4, ProducersPerTopic: 4,
			ProducerRate: 200000, ConsumerBacklogSizeGB: ptr.To(512.0), TestDurationMinutes: ptr.To(5.0),
		}},
		{"max-rate-1-topic-100-partitions-1kb.yaml", v1alpha1.WorkloadSpec{
			Name: "max-rate-1-topic-100-partitions-1kb", Topics: 1, PartitionsPerTopic: 100,
			MessageSize: 1024, PayloadFile: payload1K,
			SubscriptionsPerTopic: ptr.To[int32](1), ConsumerPerSubscription: 1, ProducersPerTopic: 1,
			ProducerRate: 0, ConsumerBacklogSizeGB: ptr.To(0.0), TestDurationMinutes: ptr.To(5.0),
		}},
		{"1-topic-16-partitions-100b.yaml", v1alpha1.WorkloadSpec{
			Name: "1 topic / 16 partitions / 100b", Topics: 1, PartitionsPerTopic: 16,
			MessageSize: 100, PayloadFile: filepath.Join("testdata", "payload", "payload-100b.data"),
			SubscriptionsPerTopic: ptr.To[int32](1), ConsumerPerSubscription: 1, ProducersPerTopic: 1,
			ProducerRate: 50000, ConsumerBacklogSizeGB: ptr.To(0.0), TestDurationMinutes: ptr.To(15.0),
		}},
		{"simple-workload.yaml", v1alpha1.WorkloadSpec{
			Name: "1 producer / 1 consumers on 1 topic", Topics: 1, PartitionsPerTopic: 10,
			MessageSize: 1024, PayloadFile: payload1K,
			SubscriptionsPerTopic: ptr.To[int32](1), ConsumerPerSubscription: 1, ProducersPerTopic: 1,
			ProducerRate: 10000, ConsumerBacklogSizeGB: ptr.To(0.0), TestDurationMinutes: ptr.To(5.0),
		}},
		{"mixed-1-topic-16-partitions-1kb.yaml", v1alpha1.WorkloadSpec{
			Name: "mixed / 1 topic / 16 partitions / 1Kb / 10 GB catch-up", Topics: 1, PartitionsPerTopic: 16,
			KeyDistributor: v1alpha1.KeyRoundRobin, MessageSize: 1024,
			UseRandomizedPayloads: true, RandomBytesRatio: ptr.To(0.5), RandomizedPayloadPoolSize: ptr.To[int32](1000),
			SubscriptionsPerTopic: ptr.To[int32](1), ConsumerPerSubscription: 2, ProducersPerTopic: 2,
			ProducerRate: 100000, ConsumerBacklogSizeGB: ptr.To(10.0), BacklogDrainRatio: ptr.To(0.9),
			TestDurationMinutes: ptr.To(0.5), WarmupDurationMinutes: ptr.To(0.25),
			Mixed: &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			got, err := ParseFile(path)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseFile mismatch\n got: %s\nwant: %s", dump(got), dump(tt.want))
			}
			// Every stock workload is valid as it is, payload length included.
			w, err := LoadFile(path, field.NewPath("spec", "workload"))
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			if w.Topics != tt.want.Topics || w.TestDurationMinutes == nil || w.WarmupDurationMinutes == nil {
				t.Fatalf("LoadFile did not default: %s", dump(w))
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want v1alpha1.WorkloadSpec
	}{
		{"integer rate", "messageSize: 1024\nproducerRate: 50000\n",
			v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 50000}},
		{"rate beyond int32", "messageSize: 1\nproducerRate: 5000000000\n",
			v1alpha1.WorkloadSpec{MessageSize: 1, ProducerRate: 5000000000}},
		{"integral float for an integer field, as the API server allows", "messageSize: 1024\nproducerRate: 1e6\ntopics: 2.0\n",
			v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000000, Topics: 2}},
		{"integers for float fields", "messageSize: 1\ntestDurationMinutes: 5\nwarmupDurationMinutes: 0\nconsumerBacklogSizeGB: 100\n",
			v1alpha1.WorkloadSpec{MessageSize: 1, TestDurationMinutes: ptr.To(5.0), WarmupDurationMinutes: ptr.To(0.0), ConsumerBacklogSizeGB: ptr.To(100.0)}},
		{"comments everywhere", "# header\nmessageSize: 100 # bytes\n# trailing\n",
			v1alpha1.WorkloadSpec{MessageSize: 100}},
		{"null means absent", "messageSize: 1\ntopics: null\nsubscriptionsPerTopic: ~\nmixed:\n",
			v1alpha1.WorkloadSpec{MessageSize: 1}},
		{"explicit zero subscriptions is a produce-only run", "messageSize: 1\nsubscriptionsPerTopic: 0\n",
			v1alpha1.WorkloadSpec{MessageSize: 1, SubscriptionsPerTopic: ptr.To[int32](0)}},
		{"empty mixed mapping", "messageSize: 1\nmixed: {}\n",
			v1alpha1.WorkloadSpec{MessageSize: 1, Mixed: &v1alpha1.MixedWorkload{}}},
		{"JSON is YAML", `{"messageSize": 512, "keyDistributor": "RANDOM_NANO"}`,
			v1alpha1.WorkloadSpec{MessageSize: 512, KeyDistributor: v1alpha1.KeyRandomNano}},
		{"leading document marker", "---\nmessageSize: 1\n",
			v1alpha1.WorkloadSpec{MessageSize: 1}},
		{"empty payloadFile alone is a generated payload", "messageSize: 1\npayloadFile: \"\"\n",
			v1alpha1.WorkloadSpec{MessageSize: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %s, want %s", dump(got), dump(tt.want))
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error, in any order
	}{
		{"unknown key with suggestion", "messageSize: 1\nproducerRat: 5\n",
			[]string{`unknown field "producerRat" in workload; did you mean "producerRate"?`}},
		{"common OMB plural slip", "messageSize: 1\nconsumersPerSubscription: 2\n",
			[]string{`unknown field "consumersPerSubscription" in workload; did you mean "consumerPerSubscription"?`}},
		{"wrong case is unknown (the API server is case-sensitive)", "MessageSize: 1024\n",
			[]string{`unknown field "MessageSize" in workload; did you mean "messageSize"?`}},
		{"unknown key without a close match lists the known ones", "messageSize: 1\nbatchSize: 7\n",
			[]string{`unknown field "batchSize" in workload; known fields: `, "producerRate", "warmupDurationMinutes"}},
		{"unknown key inside mixed", "messageSize: 1\nmixed:\n  catchUpSubscriptions: 2\n",
			[]string{`unknown field "catchUpSubscriptions" in workload.mixed; did you mean "catchUpSubscriptionsPerTopic"?`}},
		{"string for an integer", "messageSize: 1kb\n",
			[]string{`workload field "messageSize" must be a whole number, got string "1kb"`}},
		{"quoted number for an integer", "messageSize: \"1024\"\n",
			[]string{`workload field "messageSize" must be a whole number, got string "1024"`}},
		{"fraction for an integer", "messageSize: 1024.5\n",
			[]string{`workload field "messageSize" must be a whole number, got 1024.5`}},
		{"int64 overflow", "messageSize: 1\nproducerRate: 1e19\n",
			[]string{`workload field "producerRate" must be a whole number between -9223372036854775808 and 9223372036854775807, got 10000000000000000000`}},
		{"int32 overflow", "messageSize: 1\ntopics: 3000000000\n",
			[]string{`workload field "topics" must be a whole number between -2147483648 and 2147483647, got 3000000000`}},
		{"string for a float", "messageSize: 1\ntestDurationMinutes: 5m\n",
			[]string{`workload field "testDurationMinutes" must be a number, got string "5m"`}},
		{"string for a bool", "messageSize: 1\nuseRandomizedPayloads: \"true\"\n",
			[]string{`workload field "useRandomizedPayloads" must be true or false, got string "true"`}},
		{"number for a string", "messageSize: 1\nkeyDistributor: 1\n",
			[]string{`workload field "keyDistributor" must be a string (quote it), got number 1`}},
		{"scalar for mixed", "messageSize: 1\nmixed: true\n",
			[]string{`workload field "mixed" must be a mapping of fields, got boolean true`}},
		{"type error inside mixed", "messageSize: 1\nmixed:\n  catchUpSubscriptionsPerTopic: all\n",
			[]string{`workload field "mixed.catchUpSubscriptionsPerTopic" must be a whole number, got string "all"`}},
		{"every problem at once", "messageSize: big\nproducerRat: 5\ntopics: [1]\n",
			[]string{`"messageSize" must be a whole number, got string "big"`, `unknown field "producerRat"`, `"topics" must be a whole number, got a list`}},
		{"empty file", "", []string{"workload is empty", "messageSize"}},
		{"only comments", "# a comment\n\n# another\n", []string{"workload is empty"}},
		{"not a mapping", "- messageSize: 1\n", []string{"workload must be a YAML mapping of fields", "got a list"}},
		{"scalar document", "hello\n", []string{"workload must be a YAML mapping of fields", `got string "hello"`}},
		{"duplicate key", "messageSize: 1\ntopics: 1\ntopics: 2\n", []string{"not valid YAML", `"topics" already set`}},
		{"two documents", "messageSize: 1\n---\nmessageSize: 2\n", []string{"2 YAML documents"}},
		{"syntax error", "messageSize: [1\n", []string{"not valid YAML"}},
		{"explicit zero topics", "messageSize: 1\ntopics: 0\n",
			[]string{`workload field "topics" is 0 but must be at least 1; remove the line for the default (1)`}},
		{"explicit zero partitions", "messageSize: 1\npartitionsPerTopic: 0\n", []string{`"partitionsPerTopic" is 0`}},
		{"explicit zero producers", "messageSize: 1\nproducersPerTopic: 0\n", []string{`"producersPerTopic" is 0`}},
		{"explicit zero consumers", "messageSize: 1\nconsumerPerSubscription: 0.0\n", []string{`"consumerPerSubscription" is 0`}},
		{"explicit zero catch-up subscriptions", "messageSize: 1\nmixed:\n  catchUpSubscriptionsPerTopic: 0\n",
			[]string{`"mixed.catchUpSubscriptionsPerTopic" is 0`}},
		{"explicit empty keyDistributor", "messageSize: 1\nkeyDistributor: \"\"\n",
			[]string{`workload field "keyDistributor" is empty but must be one of NO_KEY, KEY_ROUND_ROBIN, RANDOM_NANO`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse accepted it: %s", dump(got))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if !reflect.DeepEqual(got, v1alpha1.WorkloadSpec{}) {
				t.Errorf("on error Parse returned a non-zero spec: %s", dump(got))
			}
		})
	}
}

func TestParseFileBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"unknown-key.yaml", `unknown field "producerRat" in workload; did you mean "producerRate"?`},
		{"wrong-type.yaml", `workload field "messageSize" must be a whole number, got string "1kb"`},
		{"empty.yaml", "workload is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", tt.file)
			_, err := ParseFile(path)
			if err == nil {
				t.Fatal("ParseFile accepted it")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q should name the file %s and contain %q", err, path, tt.want)
			}
		})
	}
	if _, err := ParseFile(filepath.Join("testdata", "no-such-file.yaml")); err == nil || !strings.Contains(err.Error(), "no-such-file.yaml") {
		t.Fatalf("missing file: got %v", err)
	}
}

// OMB opens payloadFile relative to its working directory; streambench
// looks there first and then next to the workload file. Each case lays out
// real files and runs from a chosen working directory.
func TestParseFilePayloadPath(t *testing.T) {
	write := func(t *testing.T, p string, n int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		layout  []string // files of 32 bytes (the smallest message), relative to the root
		cwd     string   // relative to the root
		payload string
		want    string // relative to the root; "" = as written
	}{
		{"OMB's layout, run from the repository root", []string{"payload/p.data"}, ".", "payload/p.data", "payload/p.data"},
		{"next to the workload file", []string{"workloads/payload/p.data"}, ".", "payload/p.data", "workloads/payload/p.data"},
		{"the working directory wins over next to the file", []string{"payload/p.data", "workloads/payload/p.data"}, ".", "payload/p.data", "payload/p.data"},
		{"parent of the workload file", []string{"p.data"}, "elsewhere", "../p.data", "p.data"},
		{"absolute stays", []string{"p.data"}, ".", "<abs>", "p.data"},
		{"none stays empty", nil, ".", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tt.layout {
				write(t, filepath.Join(root, f), 32)
			}
			if err := os.MkdirAll(filepath.Join(root, tt.cwd), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(filepath.Join(root, tt.cwd))
			payload := tt.payload
			if payload == "<abs>" {
				payload = filepath.Join(root, "p.data")
			}
			f := filepath.Join(root, "workloads", "w.yaml")
			content := "messageSize: 32\n"
			if payload != "" {
				content += "payloadFile: " + payload + "\n"
			}
			write(t, f, 0)
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := LoadFile(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if w.PayloadFile != "" {
					t.Fatalf("payloadFile = %q, want none", w.PayloadFile)
				}
				return
			}
			got, err := filepath.Abs(w.PayloadFile)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, tt.want); got != want {
				t.Fatalf("payloadFile resolves to %q, want %q", got, want)
			}
		})
	}
}

func TestLoadFileMissingPayloadNamesBothPlaces(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	f := filepath.Join(root, "workloads", "w.yaml")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("messageSize: 1024\npayloadFile: payload/payload-1Kb.data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(f, field.NewPath("spec", "workload"))
	if err == nil {
		t.Fatal("a payload file that exists nowhere was accepted")
	}
	for _, want := range []string{
		"spec.workload.payloadFile",
		filepath.Join(root, "payload", "payload-1Kb.data") + " (relative to the working directory, where OMB looks)",
		filepath.Join(root, "workloads", "payload", "payload-1Kb.data") + " (next to the file that names it)",
		"workloads/ beside payload/",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"producerRat", "producerRate"},
		{"topic", "topics"},
		{"partitionPerTopic", "partitionsPerTopic"},
		{"TESTDURATIONMINUTES", "testDurationMinutes"},
		{"subscriptionPerTopic", "subscriptionsPerTopic"},
		{"warmupMinutes", ""}, // too far from warmupDurationMinutes to guess
		{"zzz", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.in, specSchema.keys); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// dump shows a spec with its pointer fields dereferenced.
func dump(w v1alpha1.WorkloadSpec) string {
	b, err := json.Marshal(w)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
