package workload

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestDefault(t *testing.T) {
	t.Run("every default on an empty spec", func(t *testing.T) {
		w := v1alpha1.WorkloadSpec{MessageSize: 1024}
		Default(&w)
		want := v1alpha1.WorkloadSpec{
			MessageSize:             1024,
			Topics:                  1,
			PartitionsPerTopic:      1,
			KeyDistributor:          v1alpha1.KeyNone,
			SubscriptionsPerTopic:   ptr.To[int32](1),
			ConsumerPerSubscription: 1,
			ProducersPerTopic:       1,
			ProducerRate:            0,
			BacklogDrainRatio:       ptr.To(1.0),
			TestDurationMinutes:     ptr.To(5.0),
			WarmupDurationMinutes:   ptr.To(1.0),
		}
		if !reflect.DeepEqual(w, want) {
			t.Fatalf("got  %s\nwant %s", dump(w), dump(want))
		}
	})
	t.Run("mixed gets its catch-up default", func(t *testing.T) {
		w := v1alpha1.WorkloadSpec{Mixed: &v1alpha1.MixedWorkload{}}
		Default(&w)
		if w.Mixed.CatchUpSubscriptionsPerTopic != 1 {
			t.Fatalf("catchUpSubscriptionsPerTopic = %d, want 1", w.Mixed.CatchUpSubscriptionsPerTopic)
		}
	})
	t.Run("set values are kept, including valid zeros", func(t *testing.T) {
		w := v1alpha1.WorkloadSpec{
			Topics: 3, PartitionsPerTopic: 16, KeyDistributor: v1alpha1.KeyRandomNano,
			SubscriptionsPerTopic: ptr.To[int32](0), ConsumerPerSubscription: 2, ProducersPerTopic: 4,
			ProducerRate: 7, BacklogDrainRatio: ptr.To(0.0), TestDurationMinutes: ptr.To(0.5),
			WarmupDurationMinutes: ptr.To(0.0), Mixed: &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 3},
		}
		want := w
		want.Mixed = &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 3}
		Default(&w)
		if !reflect.DeepEqual(w, want) {
			t.Fatalf("got  %s\nwant %s", dump(w), dump(want))
		}
	})
	t.Run("fields without a CRD default stay unset", func(t *testing.T) {
		var w v1alpha1.WorkloadSpec
		Default(&w)
		if w.MessageSize != 0 || w.ConsumerBacklogSizeGB != nil || w.RandomBytesRatio != nil ||
			w.RandomizedPayloadPoolSize != nil || w.PayloadFile != "" || w.Mixed != nil || w.UseRandomizedPayloads {
			t.Fatalf("Default set a field the CRD does not default: %s", dump(w))
		}
	})
	t.Run("idempotent", func(t *testing.T) {
		w := v1alpha1.WorkloadSpec{Mixed: &v1alpha1.MixedWorkload{}}
		Default(&w)
		once := dump(w)
		Default(&w)
		if dump(w) != once {
			t.Fatalf("second Default changed %s into %s", once, dump(w))
		}
	})
}

// validSpec is a defaulted mixed workload that passes every rule.
func validSpec() v1alpha1.WorkloadSpec {
	w := v1alpha1.WorkloadSpec{
		MessageSize:           1024,
		ProducerRate:          1000,
		ConsumerBacklogSizeGB: ptr.To(1.0),
		Mixed:                 &v1alpha1.MixedWorkload{},
	}
	Default(&w)
	return w
}

func TestValidate(t *testing.T) {
	base := field.NewPath("spec", "workload")
	tests := []struct {
		name   string
		mutate func(*v1alpha1.WorkloadSpec)
		field  string          // "" = valid
		typ    field.ErrorType // checked when field is set
		fix    string          // substring of the message
	}{
		{"valid", func(*v1alpha1.WorkloadSpec) {}, "", "", ""},
		{"messageSize missing", func(w *v1alpha1.WorkloadSpec) { w.MessageSize = 0 },
			"spec.workload.messageSize", field.ErrorTypeRequired, "bytes per message (at least 1), e.g. 1024"},
		{"messageSize negative", func(w *v1alpha1.WorkloadSpec) { w.MessageSize = -1 },
			"spec.workload.messageSize", field.ErrorTypeInvalid, "bytes per message, e.g. 1024"},
		{"topics 0", func(w *v1alpha1.WorkloadSpec) { w.Topics = 0 },
			"spec.workload.topics", field.ErrorTypeInvalid, "must be at least 1"},
		{"partitionsPerTopic negative", func(w *v1alpha1.WorkloadSpec) { w.PartitionsPerTopic = -4 },
			"spec.workload.partitionsPerTopic", field.ErrorTypeInvalid, "must be at least 1"},
		{"producersPerTopic 0", func(w *v1alpha1.WorkloadSpec) { w.ProducersPerTopic = 0 },
			"spec.workload.producersPerTopic", field.ErrorTypeInvalid, "set it to 1 or more"},
		{"consumerPerSubscription 0", func(w *v1alpha1.WorkloadSpec) { w.ConsumerPerSubscription = 0 },
			"spec.workload.consumerPerSubscription", field.ErrorTypeInvalid, "set it to 1 or more"},
		{"subscriptionsPerTopic 0 is produce-only", func(w *v1alpha1.WorkloadSpec) { w.SubscriptionsPerTopic = ptr.To[int32](0) }, "", "", ""},
		{"subscriptionsPerTopic negative", func(w *v1alpha1.WorkloadSpec) { w.SubscriptionsPerTopic = ptr.To[int32](-1) },
			"spec.workload.subscriptionsPerTopic", field.ErrorTypeInvalid, "must be at least 0"},
		{"producerRate negative", func(w *v1alpha1.WorkloadSpec) { w.ProducerRate = -1 },
			"spec.workload.producerRate", field.ErrorTypeInvalid, "or 0 to search the maximum rate"},
		{"max rate without backlog", func(w *v1alpha1.WorkloadSpec) {
			w.ProducerRate, w.ConsumerBacklogSizeGB, w.Mixed = 0, ptr.To(0.0), nil
		}, "", "", ""},
		{"consumerBacklogSizeGB negative", func(w *v1alpha1.WorkloadSpec) { w.ConsumerBacklogSizeGB = ptr.To(-1.0); w.Mixed = nil },
			"spec.workload.consumerBacklogSizeGB", field.ErrorTypeInvalid, "must be at least 0"},
		{"backlog with max rate", func(w *v1alpha1.WorkloadSpec) { w.ProducerRate = 0; w.Mixed = nil },
			"spec.workload.consumerBacklogSizeGB", field.ErrorTypeInvalid, "needs a fixed producerRate (> 0)"},
		{"mixed without backlog", func(w *v1alpha1.WorkloadSpec) { w.ConsumerBacklogSizeGB = nil },
			"spec.workload.consumerBacklogSizeGB", field.ErrorTypeRequired, "set consumerBacklogSizeGB"},
		{"mixed with zero backlog", func(w *v1alpha1.WorkloadSpec) { w.ConsumerBacklogSizeGB = ptr.To(0.0) },
			"spec.workload.consumerBacklogSizeGB", field.ErrorTypeRequired, "mixed needs consumerBacklogSizeGB > 0"},
		{"mixed catch-up 0", func(w *v1alpha1.WorkloadSpec) { w.Mixed.CatchUpSubscriptionsPerTopic = 0 },
			"spec.workload.mixed.catchUpSubscriptionsPerTopic", field.ErrorTypeInvalid, "must be at least 1"},
		{"rateSearch on a max-rate run", func(w *v1alpha1.WorkloadSpec) {
			w.ProducerRate, w.ConsumerBacklogSizeGB, w.Mixed = 0, nil, nil
			w.RateSearch = &v1alpha1.RateSearchSpec{HoldSeconds: ptr.To[int32](3), MaxP99LatencyMs: ptr.To(50.0)}
		}, "", "", ""},
		{"rateSearch with a fixed rate", func(w *v1alpha1.WorkloadSpec) { w.RateSearch = &v1alpha1.RateSearchSpec{} },
			"spec.workload.rateSearch", field.ErrorTypeInvalid, "set producerRate to 0 or remove rateSearch"},
		{"rateSearch hold too short", func(w *v1alpha1.WorkloadSpec) {
			w.ProducerRate, w.ConsumerBacklogSizeGB, w.Mixed = 0, nil, nil
			w.RateSearch = &v1alpha1.RateSearchSpec{HoldSeconds: ptr.To[int32](2)}
		}, "spec.workload.rateSearch.holdSeconds", field.ErrorTypeInvalid, "must be 3..600"},
		{"rateSearch latency bound 0", func(w *v1alpha1.WorkloadSpec) {
			w.ProducerRate, w.ConsumerBacklogSizeGB, w.Mixed = 0, nil, nil
			w.RateSearch = &v1alpha1.RateSearchSpec{MaxP99LatencyMs: ptr.To(0.0)}
		}, "spec.workload.rateSearch.maxP99LatencyMs", field.ErrorTypeInvalid, "must be more than 0"},
		// OMB: randomized payloads win and payloadFile is not read.
		{"payloadFile with randomized payloads", func(w *v1alpha1.WorkloadSpec) { w.PayloadFile = "p.data"; w.UseRandomizedPayloads = true }, "", "", ""},
		{"payloadFile without randomized payloads", func(w *v1alpha1.WorkloadSpec) { w.PayloadFile = "p.data" }, "", "", ""},
		{"randomBytesRatio above 1", func(w *v1alpha1.WorkloadSpec) { w.RandomBytesRatio = ptr.To(1.5) },
			"spec.workload.randomBytesRatio", field.ErrorTypeInvalid, "must be between 0 and 1"},
		{"randomBytesRatio below 0", func(w *v1alpha1.WorkloadSpec) { w.RandomBytesRatio = ptr.To(-0.1) },
			"spec.workload.randomBytesRatio", field.ErrorTypeInvalid, "must be between 0 and 1"},
		{"randomBytesRatio NaN", func(w *v1alpha1.WorkloadSpec) { w.RandomBytesRatio = ptr.To(math.NaN()) },
			"spec.workload.randomBytesRatio", field.ErrorTypeInvalid, "must be between 0 and 1"},
		{"randomBytesRatio bounds", func(w *v1alpha1.WorkloadSpec) { w.RandomBytesRatio = ptr.To(0.0); w.BacklogDrainRatio = ptr.To(1.0) }, "", "", ""},
		{"backlogDrainRatio above 1", func(w *v1alpha1.WorkloadSpec) { w.BacklogDrainRatio = ptr.To(1.01) },
			"spec.workload.backlogDrainRatio", field.ErrorTypeInvalid, "must be between 0 and 1"},
		{"backlogDrainRatio below 0", func(w *v1alpha1.WorkloadSpec) { w.BacklogDrainRatio = ptr.To(-1.0) },
			"spec.workload.backlogDrainRatio", field.ErrorTypeInvalid, "the fraction of the backlog that must drain"},
		{"testDurationMinutes 0", func(w *v1alpha1.WorkloadSpec) { w.TestDurationMinutes = ptr.To(0.0) },
			"spec.workload.testDurationMinutes", field.ErrorTypeInvalid, "must be more than 0"},
		{"testDurationMinutes negative", func(w *v1alpha1.WorkloadSpec) { w.TestDurationMinutes = ptr.To(-5.0) },
			"spec.workload.testDurationMinutes", field.ErrorTypeInvalid, "e.g. 5"},
		{"testDurationMinutes fraction", func(w *v1alpha1.WorkloadSpec) { w.TestDurationMinutes = ptr.To(0.01) }, "", "", ""},
		{"warmupDurationMinutes 0", func(w *v1alpha1.WorkloadSpec) { w.WarmupDurationMinutes = ptr.To(0.0) }, "", "", ""},
		{"warmupDurationMinutes negative", func(w *v1alpha1.WorkloadSpec) { w.WarmupDurationMinutes = ptr.To(-0.5) },
			"spec.workload.warmupDurationMinutes", field.ErrorTypeInvalid, "must be at least 0"},
		{"randomizedPayloadPoolSize 0", func(w *v1alpha1.WorkloadSpec) { w.RandomizedPayloadPoolSize = ptr.To[int32](0) },
			"spec.workload.randomizedPayloadPoolSize", field.ErrorTypeInvalid, "must be at least 1"},
		{"keyDistributor unknown", func(w *v1alpha1.WorkloadSpec) { w.KeyDistributor = "ROUND_ROBIN" },
			"spec.workload.keyDistributor", field.ErrorTypeNotSupported, `supported values: "NO_KEY", "KEY_ROUND_ROBIN", "RANDOM_NANO"`},
		{"keyDistributor empty (not defaulted)", func(w *v1alpha1.WorkloadSpec) { w.KeyDistributor = "" },
			"spec.workload.keyDistributor", field.ErrorTypeNotSupported, `"NO_KEY"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := validSpec()
			tt.mutate(&w)
			errs := Validate(w, base)
			if tt.field == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want exactly one error on %s, got %d: %v", tt.field, len(errs), errs.ToAggregate())
			}
			e := errs[0]
			if e.Field != tt.field || e.Type != tt.typ {
				t.Fatalf("got %s (%s), want field %s type %s", e.Field, e.Type, tt.field, tt.typ)
			}
			if !strings.Contains(e.Error(), tt.fix) || !strings.HasPrefix(e.Error(), tt.field+": ") {
				t.Fatalf("message %q should start with the field and contain the fix %q", e.Error(), tt.fix)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	w := v1alpha1.WorkloadSpec{Topics: -1, MessageSize: 0, ProducerRate: -5, Mixed: &v1alpha1.MixedWorkload{}}
	Default(&w)
	errs := Validate(w, field.NewPath("workload"))
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	want := []string{"workload.topics", "workload.messageSize", "workload.producerRate", "workload.consumerBacklogSizeGB"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
}

func TestCheckPayloadFile(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join("testdata", "payload", "payload-1Kb.data")
	p := field.NewPath("spec", "workload")
	tests := []struct {
		name     string
		file     string
		size     int32
		contains string // "" = no error
	}{
		{"matching length", kb, 1024, ""},
		{"no payload file", "", 1024, ""},
		{"mismatch", kb, 2048, "is 1024 bytes but messageSize is 2048; they must be equal: set messageSize: 1024 or use a payload file of 2048 bytes"},
		{"missing", filepath.Join(dir, "nope.data"), 1024, "cannot read the payload file"},
		{"directory", dir, 1024, "is not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := CheckPayloadFile(v1alpha1.WorkloadSpec{MessageSize: tt.size, PayloadFile: tt.file}, p)
			if tt.contains == "" {
				if len(errs) != 0 {
					t.Fatalf("want no error, got %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != "spec.workload.payloadFile" || !strings.Contains(errs[0].Error(), tt.contains) {
				t.Fatalf("want one spec.workload.payloadFile error containing %q, got %v", tt.contains, errs.ToAggregate())
			}
		})
	}
}

func TestLoadFileBadFiles(t *testing.T) {
	tests := []struct{ file, want string }{
		{"payload-mismatch.yaml", "spec.workload.payloadFile: Invalid value: "},
		{"payload-mismatch.yaml", "is 1024 bytes but messageSize is 2048"},
		{"backlog-max-rate.yaml", "spec.workload.consumerBacklogSizeGB: Invalid value: 1: needs a fixed producerRate (> 0)"},
		{"unknown-key.yaml", `did you mean "producerRate"?`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := LoadFile(filepath.Join("testdata", "bad", tt.file), field.NewPath("spec", "workload"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestPayloadFixtureSizes(t *testing.T) {
	// The stock files depend on these lengths (OMB's payload-1Kb.data and
	// payload-100b.data).
	for name, size := range map[string]int64{"payload-1Kb.data": 1024, "payload-100b.data": 100} {
		fi, err := os.Stat(filepath.Join("testdata", "payload", name))
		if err != nil || fi.Size() != size {
			t.Fatalf("%s: %v, size want %d", name, err, size)
		}
	}
}
