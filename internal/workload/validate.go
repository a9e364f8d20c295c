package workload

import (
	"fmt"
	"math"
	"os"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// KeyDistributors are the values keyDistributor accepts (the CRD enum).
var KeyDistributors = []v1alpha1.KeyDistributor{v1alpha1.KeyNone, v1alpha1.KeyRoundRobin, v1alpha1.KeyRandomNano}

// Validate returns every problem of a defaulted workload (call Default
// first, as the API server defaults before it validates), each naming the
// field under fldPath and the fix. It enforces exactly the CRD's OpenAPI and
// CEL rules, so local mode accepts and rejects what the API server does. A
// nil optional field is valid (it is absent); zero in a defaulted field
// such as topics is reported, since Default would have replaced it.
//
// The payload file's length is checked by CheckPayloadFile, which needs the
// file system.
// Bounds on what a workload makes every worker allocate; the CRD's markers
// say the same (api/v1alpha1/workload_types.go).
const (
	MinMessageSize      = 32       // the payload header
	MaxMessageSize      = 16 << 20 // 16 MiB
	MaxPayloadPoolSize  = 1000000
	MaxPayloadPoolBytes = 256 << 20
)

func Validate(w v1alpha1.WorkloadSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList

	atLeast1 := func(name string, v int32, what string) {
		if v < 1 {
			errs = append(errs, field.Invalid(fldPath.Child(name), v,
				fmt.Sprintf("must be at least 1: %s; set it to 1 or more, or remove it for the default (1)", what)))
		}
	}
	atLeast1("topics", w.Topics, "the number of topics")
	atLeast1("partitionsPerTopic", w.PartitionsPerTopic, "partitions of each topic (1 is a non-partitioned topic on Pulsar)")

	if !isKeyDistributor(w.KeyDistributor) {
		errs = append(errs, field.NotSupported(fldPath.Child("keyDistributor"), w.KeyDistributor, KeyDistributors))
	}

	switch {
	case w.MessageSize == 0:
		errs = append(errs, field.Required(fldPath.Child("messageSize"),
			"set messageSize to the bytes per message (at least 1), e.g. 1024"))
	case w.MessageSize < MinMessageSize:
		errs = append(errs, field.Invalid(fldPath.Child("messageSize"), w.MessageSize,
			fmt.Sprintf("must be at least %d: every message carries a %d-byte header (send time, producer id, sequence number); bytes per message, e.g. 1024", MinMessageSize, MinMessageSize)))
	case w.MessageSize > MaxMessageSize:
		errs = append(errs, field.Invalid(fldPath.Child("messageSize"), w.MessageSize,
			fmt.Sprintf("must be at most %d (16 MiB): every worker holds its payloads in memory; lower messageSize", MaxMessageSize)))
	}

	if w.RandomBytesRatio != nil && !inUnit(*w.RandomBytesRatio) {
		errs = append(errs, field.Invalid(fldPath.Child("randomBytesRatio"), *w.RandomBytesRatio,
			"must be between 0 and 1: the random fraction of each payload, e.g. 0.5"))
	}
	if p := w.RandomizedPayloadPoolSize; p != nil {
		switch {
		case *p < 1:
			errs = append(errs, field.Invalid(fldPath.Child("randomizedPayloadPoolSize"), *p,
				"must be at least 1: the number of payloads in the pool, e.g. 1000"))
		case *p > MaxPayloadPoolSize:
			errs = append(errs, field.Invalid(fldPath.Child("randomizedPayloadPoolSize"), *p,
				fmt.Sprintf("must be at most %d: the number of payloads in the pool, e.g. 1000", MaxPayloadPoolSize)))
		case w.UseRandomizedPayloads && int64(*p)*int64(w.MessageSize) > MaxPayloadPoolBytes:
			errs = append(errs, field.Invalid(fldPath.Child("randomizedPayloadPoolSize"), *p,
				"randomizedPayloadPoolSize x messageSize must be at most 256 MiB: every worker holds the pool in memory; lower randomizedPayloadPoolSize"))
		}
	}
	if w.SubscriptionsPerTopic != nil && *w.SubscriptionsPerTopic < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("subscriptionsPerTopic"), *w.SubscriptionsPerTopic,
			"must be at least 0: subscriptions (consumer groups) per topic; 0 is a produce-only run"))
	}
	atLeast1("consumerPerSubscription", w.ConsumerPerSubscription, "consumers of each subscription")
	atLeast1("producersPerTopic", w.ProducersPerTopic, "producers of each topic")

	if w.ProducerRate < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("producerRate"), w.ProducerRate,
			"must be at least 0: total messages per second over all producers, or 0 to search the maximum rate"))
	}

	if w.ConsumerBacklogSizeGB != nil {
		gb := *w.ConsumerBacklogSizeGB
		switch {
		case !(gb >= 0) || math.IsInf(gb, 0):
			errs = append(errs, field.Invalid(fldPath.Child("consumerBacklogSizeGB"), gb,
				"must be at least 0: the backlog to build in GiB (2^30 bytes, OMB's unit), or 0 for none"))
		case gb > 0 && w.ProducerRate == 0:
			// OMB refuses this combination too: the rate search never settles
			// while the consumers are paused.
			errs = append(errs, field.Invalid(fldPath.Child("consumerBacklogSizeGB"), gb,
				"needs a fixed producerRate (> 0): a backlog cannot be built while the maximum rate is searched; set producerRate"))
		}
	}
	if w.BacklogDrainRatio != nil && !inUnit(*w.BacklogDrainRatio) {
		errs = append(errs, field.Invalid(fldPath.Child("backlogDrainRatio"), *w.BacklogDrainRatio,
			"must be between 0 and 1: the fraction of the backlog that must drain, e.g. 1.0"))
	}

	if w.TestDurationMinutes != nil {
		if t := *w.TestDurationMinutes; !(t > 0) || math.IsInf(t, 0) {
			errs = append(errs, field.Invalid(fldPath.Child("testDurationMinutes"), t,
				"must be more than 0: minutes of the measured phase, e.g. 5 (fractions such as 0.5 are allowed)"))
		}
	}
	if w.WarmupDurationMinutes != nil {
		if t := *w.WarmupDurationMinutes; !(t >= 0) || math.IsInf(t, 0) {
			errs = append(errs, field.Invalid(fldPath.Child("warmupDurationMinutes"), t,
				"must be at least 0: minutes of discarded warm-up, e.g. 1, or 0 for none"))
		}
	}

	if w.Mixed != nil {
		if w.ConsumerBacklogSizeGB == nil || !(*w.ConsumerBacklogSizeGB > 0) {
			errs = append(errs, field.Required(fldPath.Child("consumerBacklogSizeGB"),
				"mixed needs consumerBacklogSizeGB > 0: the catch-up subscriptions drain that backlog; set consumerBacklogSizeGB (GiB, 2^30 bytes) or remove mixed"))
		}
		if c := w.Mixed.CatchUpSubscriptionsPerTopic; c < 1 {
			errs = append(errs, field.Invalid(fldPath.Child("mixed", "catchUpSubscriptionsPerTopic"), c,
				"must be at least 1: catch-up subscriptions per topic; set it to 1 or more, or remove it for the default (1)"))
		}
	}
	if rs := w.RateSearch; rs != nil {
		p := fldPath.Child("rateSearch")
		if w.ProducerRate != 0 {
			errs = append(errs, field.Invalid(p, "set",
				"tunes the maximum-rate search, which runs only with producerRate 0; set producerRate to 0 or remove rateSearch"))
		}
		if h := rs.HoldSeconds; h != nil && (*h < 3 || *h > 600) {
			errs = append(errs, field.Invalid(p.Child("holdSeconds"), *h,
				"must be 3..600: seconds the rate found must hold, e.g. 35; remove it for the default (the brokers' write-back window)"))
		}
		if l := rs.MaxP99LatencyMs; l != nil && (!(*l > 0) || math.IsInf(*l, 0)) {
			errs = append(errs, field.Invalid(p.Child("maxP99LatencyMs"), *l,
				"must be more than 0: the bound, in ms, on the corrected p99 publish latency of a sustainable rate, e.g. 100; remove it for the default (1000)"))
		}
	}
	return errs
}

func isKeyDistributor(k v1alpha1.KeyDistributor) bool {
	for _, v := range KeyDistributors {
		if k == v {
			return true
		}
	}
	return false
}

// inUnit reports 0 <= x <= 1 (false for NaN).
func inUnit(x float64) bool { return x >= 0 && x <= 1 }

// CheckPayloadFile checks OMB's rule that a payload file's length equals
// messageSize (OMB sends the file's bytes as every message). A relative path
// is taken relative to the working directory; ParseFile has already looked
// for it there and next to the workload file. No payloadFile: no problems.
func CheckPayloadFile(w v1alpha1.WorkloadSpec, fldPath *field.Path) field.ErrorList {
	if w.PayloadFile == "" {
		return nil
	}
	p := fldPath.Child("payloadFile")
	fi, err := os.Stat(w.PayloadFile)
	if err != nil {
		return field.ErrorList{field.Invalid(p, w.PayloadFile,
			fmt.Sprintf("cannot read the payload file (%v); fix the path (relative to the working directory, as OMB, or to the workload file) or remove payloadFile for a generated payload", err))}
	}
	if !fi.Mode().IsRegular() {
		return field.ErrorList{field.Invalid(p, w.PayloadFile,
			"is not a regular file; point payloadFile at a file of messageSize bytes")}
	}
	if fi.Size() != int64(w.MessageSize) {
		return field.ErrorList{field.Invalid(p, w.PayloadFile,
			fmt.Sprintf("is %d bytes but messageSize is %d; they must be equal: set messageSize: %d or use a payload file of %d bytes",
				fi.Size(), w.MessageSize, fi.Size(), w.MessageSize))}
	}
	return nil
}
