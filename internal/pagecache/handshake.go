// Package pagecache is the mid-run handshake by which the coordinator asks
// the operator to drop the broker nodes' page cache, and waits until it
// is done (spec.testbed.dropPageCache).
//
// Why a handshake: the durability study dropped the page cache before
// every catch-up test, so that the catch-up reads come from the disk. The
// backlog those reads drain is written during the run, so a drop before
// the workers start leaves it in memory; the drop must happen between the
// backlog build and the drain, a moment only the coordinator knows. The
// coordinator has no right to run privileged pods (its Role covers its own
// results ConfigMap only), and the operator already creates the drop Jobs,
// so the coordinator asks through that ConfigMap and the operator answers
// there:
//
//   - the coordinator writes KeyRequest {seq, reason} with the next seq and
//     waits, bounded, until KeyAck carries that seq;
//   - the operator, in the Running phase, sees a request whose seq is
//     above the acknowledged one, runs the drop Jobs for that seq on every
//     broker node, and writes KeyAck {seq, state Done or Failed, message}.
//
// Each side writes only its own key, and both are in the ConfigMap, so a
// restarted operator finds an unanswered request (and its Jobs, named
// after the seq) and continues. The pure functions here decide; Requester
// does the coordinator's API calls.
package pagecache

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Keys of the results ConfigMap the handshake uses.
const (
	// KeyRequest is the coordinator's latest request (Request as JSON).
	KeyRequest = "pageCacheDrop.request"
	// KeyAck is the operator's answer to the latest request it handled
	// (Ack as JSON).
	KeyAck = "pageCacheDrop.ack"
)

// Reasons: the points of a run before which the page cache is dropped.
const (
	ReasonBeforeLoad  = "before the load (warm-up and measured phase)"
	ReasonBeforeDrain = "before the backlog drain (catch-up reads)"
)

// Request is the coordinator's ask.
type Request struct {
	// Seq numbers the requests of a run from 1.
	Seq         int32     `json:"seq"`
	Reason      string    `json:"reason"`
	RequestedAt time.Time `json:"requestedAt"`
}

// State is how a request ended.
type State string

const (
	StateDone   State = "Done"
	StateFailed State = "Failed"
)

// Ack is the operator's answer to the request of the same Seq.
type Ack struct {
	Seq   int32 `json:"seq"`
	State State `json:"state"`
	// Message says why it failed (naming the field and the fix), or is
	// empty.
	Message string    `json:"message,omitempty"`
	Nodes   []string  `json:"nodes,omitempty"`
	At      time.Time `json:"at"`
}

// read decodes one key; ok is false when the key is absent.
func read[T any](data map[string]string, key string) (v T, ok bool, err error) {
	raw, ok := data[key]
	if !ok || raw == "" {
		return v, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return v, false, fmt.Errorf("results ConfigMap key %s: %w", key, err)
	}
	return v, true, nil
}

// ReadRequest and ReadAck decode the handshake's keys from a ConfigMap's
// data.
func ReadRequest(data map[string]string) (Request, bool, error) {
	return read[Request](data, KeyRequest)
}

func ReadAck(data map[string]string) (Ack, bool, error) {
	return read[Ack](data, KeyAck)
}

// Pending returns the request the operator has yet to answer, if any.
func Pending(data map[string]string) (Request, bool, error) {
	req, ok, err := ReadRequest(data)
	if err != nil || !ok {
		return Request{}, false, err
	}
	ack, _, err := ReadAck(data)
	if err != nil {
		return Request{}, false, err
	}
	return req, req.Seq > ack.Seq, nil
}

// NextRequest is the request that follows what data holds: a seq above
// both the last request and the last answer, so an answer to an earlier
// request is never read as the answer to this one.
func NextRequest(data map[string]string, reason string, now time.Time) (Request, error) {
	req, _, err := ReadRequest(data)
	if err != nil {
		return Request{}, err
	}
	ack, _, err := ReadAck(data)
	if err != nil {
		return Request{}, err
	}
	return Request{Seq: max(req.Seq, ack.Seq) + 1, Reason: reason, RequestedAt: now}, nil
}

// AnswerTo returns the answer to request seq, once data holds it.
func AnswerTo(data map[string]string, seq int32) (Ack, bool, error) {
	ack, ok, err := ReadAck(data)
	if err != nil || !ok || ack.Seq < seq {
		return Ack{}, false, err
	}
	if ack.Seq > seq {
		return Ack{}, false, fmt.Errorf("results ConfigMap key %s answers request %d, but the coordinator asked %d: another writer touched the handshake", KeyAck, ack.Seq, seq)
	}
	return ack, true, nil
}

// Put sets key to v's JSON in data (which may be nil) and returns it.
func Put(data map[string]string, key string, v any) (map[string]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return data, err
	}
	if data == nil {
		data = map[string]string{}
	}
	data[key] = string(b)
	return data, nil
}

// Drop is the record of a request and its answer, for status.testbed and
// summary.json.
func Drop(req Request, ack Ack) v1alpha1.PageCacheDrop {
	return v1alpha1.PageCacheDrop{
		Seq: req.Seq, Reason: req.Reason, At: metav1.NewTime(ack.At),
		Dropped: ack.State == StateDone, Nodes: ack.Nodes, Message: ack.Message,
	}
}
