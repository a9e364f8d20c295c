package coordinator

import (
	"fmt"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/workload"
)

// SubscriptionRef names one subscription of one topic.
type SubscriptionRef struct {
	Topic   string `json:"topic"`
	Name    string `json:"name"`
	CatchUp bool   `json:"catchUp,omitempty"`
}

// Plan is who runs what: which workers produce and consume, and the
// producers and consumers of each worker. It is pure, so its rules are
// table-tested.
type Plan struct {
	// ProducerWorkers and ConsumerWorkers are worker indexes; a worker is
	// in both when there is only one worker.
	ProducerWorkers []int
	ConsumerWorkers []int
	Producers       map[int][]protocol.ProducerAssignment
	Consumers       map[int][]protocol.ConsumerAssignment
	Subscriptions   []SubscriptionRef
	// ProducerTopic maps a producer id to its topic.
	ProducerTopic map[uint32]string
	// ProducerWorker maps a producer id to its worker.
	ProducerWorker map[uint32]int
}

// NewPlan splits the roles as OMB does (the first half of the workers
// produce, the rest consume), except that a produce-only workload uses
// every worker to produce (OMB #405 reserves idle consumer workers), and a
// single worker does both. Producers and consumers are dealt round-robin
// over their workers; producer ids are unique in the run. Subscription names
// carry the run id and topic index, so Kafka consumer groups of two topics
// or two runs never merge.
func NewPlan(workers int, runID string, topics []string, w v1alpha1.WorkloadSpec) (Plan, error) {
	if workers < 1 {
		return Plan{}, fmt.Errorf("workers (%d) must be at least 1", workers)
	}
	produceOnly := workload.IsProduceOnly(w)
	p := Plan{
		Producers:      map[int][]protocol.ProducerAssignment{},
		Consumers:      map[int][]protocol.ConsumerAssignment{},
		ProducerTopic:  map[uint32]string{},
		ProducerWorker: map[uint32]int{},
	}
	switch {
	case workers == 1:
		p.ProducerWorkers = []int{0}
		if !produceOnly {
			p.ConsumerWorkers = []int{0}
		}
	case produceOnly:
		for i := 0; i < workers; i++ {
			p.ProducerWorkers = append(p.ProducerWorkers, i)
		}
	default:
		half := workers / 2
		for i := 0; i < workers; i++ {
			if i < half {
				p.ProducerWorkers = append(p.ProducerWorkers, i)
			} else {
				p.ConsumerWorkers = append(p.ConsumerWorkers, i)
			}
		}
	}
	perTopic := int(w.ProducersPerTopic)
	if perTopic < 1 {
		perTopic = 1
	}
	var id uint32
	for _, t := range topics {
		for j := 0; j < perTopic; j++ {
			wk := p.ProducerWorkers[int(id)%len(p.ProducerWorkers)]
			p.Producers[wk] = append(p.Producers[wk], protocol.ProducerAssignment{Topic: t, ID: id})
			p.ProducerTopic[id] = t
			p.ProducerWorker[id] = wk
			id++
		}
	}
	if produceOnly {
		return p, nil
	}
	consumersPerSub := int(w.ConsumerPerSubscription)
	if consumersPerSub < 1 {
		consumersPerSub = 1
	}
	n := 0
	for ti, t := range topics {
		var subs []SubscriptionRef
		for j := 0; j < workload.SubscriptionsPerTopic(w); j++ {
			subs = append(subs, SubscriptionRef{Topic: t, Name: fmt.Sprintf("%s-t%d-sub-%d", runID, ti, j)})
		}
		for j := 0; j < workload.CatchUpSubscriptionsPerTopic(w); j++ {
			subs = append(subs, SubscriptionRef{Topic: t, Name: fmt.Sprintf("%s-t%d-catchup-%d", runID, ti, j), CatchUp: true})
		}
		for _, s := range subs {
			p.Subscriptions = append(p.Subscriptions, s)
			for c := 0; c < consumersPerSub; c++ {
				wk := p.ConsumerWorkers[n%len(p.ConsumerWorkers)]
				n++
				p.Consumers[wk] = append(p.Consumers[wk], protocol.ConsumerAssignment{Topic: s.Topic, Subscription: s.Name, CatchUp: s.CatchUp})
			}
		}
	}
	return p, nil
}

// WorkerRates splits a total rate over the producer workers in proportion
// to their producers, so every producer gets the same rate.
func (p Plan) WorkerRates(total float64) map[int]float64 {
	n := 0
	for _, ps := range p.Producers {
		n += len(ps)
	}
	out := map[int]float64{}
	for wk, ps := range p.Producers {
		if n > 0 {
			out[wk] = total * float64(len(ps)) / float64(n)
		}
	}
	return out
}
