package coordinator

import (
	"fmt"
	"sort"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/worker"
)

// SubscriptionAccount is the exact delivery record of one subscription.
type SubscriptionAccount struct {
	SubscriptionRef
	// Expected is the acknowledged messages of the subscription's topic.
	Expected int64 `json:"expected"`
	// Unique is the distinct messages received; Duplicates = deliveries
	// beyond the first. What was acknowledged and not received is Lost
	// when the subscription's final drain ended with it caught up or
	// stalled, and NotConsumed when the drain ran out of time while it
	// was still receiving: then it was slow, and nothing says lost.
	Unique      int64 `json:"unique"`
	Lost        int64 `json:"lost"`
	NotConsumed int64 `json:"notConsumed,omitempty"`
	Duplicates  int64 `json:"duplicates"`
}

// Accounting is the run's delivery record: every acknowledged message must
// be consumed once per subscription.
type Accounting struct {
	Sent   int64 `json:"sent"`
	Acked  int64 `json:"acked"`
	Failed int64 `json:"failed"`
	// Unanswered are sends with neither an ack nor a failure when the
	// load stopped (a client with no send timeout holds what the brokers
	// cannot write): not acknowledged, so never lost.
	Unanswered int64 `json:"unanswered,omitempty"`
	// Received is the distinct messages received over all subscriptions.
	Received int64 `json:"received"`
	Lost     int64 `json:"lost"`
	// NotConsumed is what subscriptions still receiving when the final
	// drain's deadline ran out had not read yet: the backlog at the end.
	NotConsumed int64 `json:"notConsumed,omitempty"`
	// Duplicates are deliveries beyond the first, on one worker or across
	// workers (a message of a subscription received on two of them).
	Duplicates    int64                 `json:"duplicates"`
	Subscriptions []SubscriptionAccount `json:"subscriptions,omitempty"`
	// LostRuns are, per producer ID, the sequence numbers Lost counts, as
	// runs: one list over the subscriptions, so a message lost on two is
	// in two runs. The results place the losses in the intervals their
	// sends were in (stats.Producer.SeqEnds). Not written out.
	LostRuns map[uint32][]stats.SeqRange `json:"-"`
}

// Account unions the received sets of each subscription over the workers
// and compares them with what each producer had acknowledged. localDups
// are the duplicates the workers saw themselves (keyed by topic and
// subscription); a message received on two workers adds one more.
// unfinished are the subscriptions whose final drain ran out of time while
// they were still receiving: what they miss is not consumed, not lost.
func Account(subs []SubscriptionRef, answers []protocol.ReceivedResponse, localDups map[SubscriptionRef]int64, unfinished map[SubscriptionRef]bool) (Accounting, error) {
	var acc Accounting
	type prod struct {
		topic  string
		sent   uint64
		failed *worker.SeqSet
	}
	producers := map[uint32]*prod{}
	for _, a := range answers {
		for _, p := range a.Producers {
			f := &worker.SeqSet{}
			if len(p.FailedSet) > 0 {
				if err := f.UnmarshalBinary(p.FailedSet); err != nil {
					return acc, fmt.Errorf("producer %d's failed sends: %w", p.ID, err)
				}
			}
			if f.Len() != p.Failed {
				return acc, fmt.Errorf("producer %d counted %d failed sends but listed %d", p.ID, p.Failed, f.Len())
			}
			acc.Sent += int64(p.Sent)
			acc.Failed += f.Len()
			if len(p.UnansweredSet) > 0 {
				var u worker.SeqSet
				if err := u.UnmarshalBinary(p.UnansweredSet); err != nil {
					return acc, fmt.Errorf("producer %d's unanswered sends: %w", p.ID, err)
				}
				if u.Len() != p.Unanswered {
					return acc, fmt.Errorf("producer %d counted %d unanswered sends but listed %d", p.ID, p.Unanswered, u.Len())
				}
				acc.Unanswered += u.Len()
				// Nobody expects them, as nobody expects a failed send.
				f.Union(&u)
			}
			producers[p.ID] = &prod{topic: p.Topic, sent: p.Sent, failed: f}
		}
	}
	acc.Acked = acc.Sent - acc.Failed - acc.Unanswered
	ackedByTopic := map[string]int64{}
	for _, p := range producers {
		ackedByTopic[p.topic] += int64(p.sent) - p.failed.Len()
	}
	key := func(topic, name string) string { return topic + "\x00" + name }
	sets := map[string]map[uint32]*worker.SeqSet{}
	overlap := map[string]int64{}
	for _, a := range answers {
		for _, s := range a.Subscriptions {
			k := key(s.Topic, s.Subscription)
			if sets[k] == nil {
				sets[k] = map[uint32]*worker.SeqSet{}
			}
			for _, ps := range s.Producers {
				var set worker.SeqSet
				if err := set.UnmarshalBinary(ps.Set); err != nil {
					return acc, fmt.Errorf("subscription %s, producer %d: %w", s.Subscription, ps.ProducerID, err)
				}
				if cur := sets[k][ps.ProducerID]; cur != nil {
					overlap[k] += cur.Union(&set)
				} else {
					sets[k][ps.ProducerID] = &set
				}
			}
		}
	}
	ordered := append([]SubscriptionRef(nil), subs...)
	sort.Slice(ordered, func(i, j int) bool {
		return key(ordered[i].Topic, ordered[i].Name) < key(ordered[j].Topic, ordered[j].Name)
	})
	for _, s := range ordered {
		k := key(s.Topic, s.Name)
		sa := SubscriptionAccount{SubscriptionRef: s, Expected: ackedByTopic[s.Topic], Duplicates: overlap[k] + localDups[s]}
		for id, p := range producers {
			if p.topic != s.Topic {
				continue
			}
			set := sets[k][id]
			if set == nil {
				set = &worker.SeqSet{}
			}
			sa.Unique += set.Len()
			if unfinished[s] {
				sa.NotConsumed += set.Missing(p.sent, p.failed)
			} else if runs := set.MissingRuns(p.sent, p.failed); len(runs) > 0 {
				for _, r := range runs {
					sa.Lost += int64(r.Len())
				}
				if acc.LostRuns == nil {
					acc.LostRuns = map[uint32][]stats.SeqRange{}
				}
				acc.LostRuns[id] = append(acc.LostRuns[id], runs...)
			}
		}
		acc.Received += sa.Unique
		acc.Lost += sa.Lost
		acc.NotConsumed += sa.NotConsumed
		acc.Duplicates += sa.Duplicates
		acc.Subscriptions = append(acc.Subscriptions, sa)
	}
	return acc, nil
}
