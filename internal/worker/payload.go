package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/workload"
)

// HeaderSize is the number of bytes at the start of every payload that carry
// the send timestamps, the producer id and the sequence number. The rest of
// the payload is the workload's bytes, so a message is exactly messageSize.
const HeaderSize = 32

const (
	headerMagic = 0x5B
	flagProbe   = 1 << 0
)

// Header is what the load generator writes over the start of each payload.
// End-to-end latency is computed from SendMicros (as OMB does, from the
// message's send timestamp) in the consumer, and the producer id and
// sequence number let every subscription account exactly for lost and
// duplicated messages.
type Header struct {
	Probe      bool
	ProducerID uint32
	Seq        uint64
	// SendMicros is the wall clock (µs since the Unix epoch) of the producing
	// worker when Send was called.
	SendMicros int64
	// IntendedMicros is when the rate schedule wanted the message sent.
	IntendedMicros int64
}

// Put writes h over the first HeaderSize bytes of b.
func (h Header) Put(b []byte) {
	b[0] = headerMagic
	var flags byte
	if h.Probe {
		flags |= flagProbe
	}
	b[1] = flags
	b[2], b[3] = 0, 0
	binary.BigEndian.PutUint32(b[4:8], h.ProducerID)
	binary.BigEndian.PutUint64(b[8:16], h.Seq)
	binary.BigEndian.PutUint64(b[16:24], uint64(h.SendMicros))
	binary.BigEndian.PutUint64(b[24:32], uint64(h.IntendedMicros))
}

var errNotOurs = errors.New("payload has no streambench header (message not produced by this run's workers)")

// ParseHeader reads the header of a payload.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize || b[0] != headerMagic {
		return Header{}, errNotOurs
	}
	return Header{
		Probe:          b[1]&flagProbe != 0,
		ProducerID:     binary.BigEndian.Uint32(b[4:8]),
		Seq:            binary.BigEndian.Uint64(b[8:16]),
		SendMicros:     int64(binary.BigEndian.Uint64(b[16:24])),
		IntendedMicros: int64(binary.BigEndian.Uint64(b[24:32])),
	}, nil
}

// Payloads is the set of payload templates a producer draws from; the
// header is written over a copy of a template for each message.
type Payloads struct {
	templates [][]byte
	next      int
}

// NewPayloads builds the payload templates of a workload. payloadFile bytes
// are read from disk when given (their length must be messageSize);
// randomized payloads follow OMB: a pool of randomizedPayloadPoolSize
// payloads, the first randomBytesRatio of each random, the rest zeros.
func NewPayloads(w v1alpha1.WorkloadSpec, rng *rand.Rand) (*Payloads, error) {
	size := int(w.MessageSize)
	if size < HeaderSize {
		return nil, fmt.Errorf("spec.workload.messageSize (%d) must be at least %d bytes: every message carries a %d-byte header with its send time, producer id and sequence number; raise messageSize", size, HeaderSize, HeaderSize)
	}
	switch {
	case workload.ReadsPayloadFile(w):
		b, err := os.ReadFile(w.PayloadFile)
		if err != nil {
			return nil, fmt.Errorf("spec.workload.payloadFile %q: %w", w.PayloadFile, err)
		}
		if len(b) != size {
			return nil, fmt.Errorf("spec.workload.payloadFile %q has %d bytes but messageSize is %d; they must be equal (as in OMB)", w.PayloadFile, len(b), size)
		}
		return &Payloads{templates: [][]byte{b}}, nil
	case w.UseRandomizedPayloads:
		ratio := 0.0
		if w.RandomBytesRatio != nil {
			ratio = *w.RandomBytesRatio
		}
		if ratio < 0 || ratio > 1 {
			return nil, fmt.Errorf("spec.workload.randomBytesRatio (%v) must be between 0 and 1", ratio)
		}
		pool := 1
		if w.RandomizedPayloadPoolSize != nil {
			pool = int(*w.RandomizedPayloadPoolSize)
		}
		if pool < 1 {
			return nil, fmt.Errorf("spec.workload.randomizedPayloadPoolSize (%d) must be at least 1", pool)
		}
		nRandom := int(float64(size) * ratio)
		ts := make([][]byte, pool)
		for i := range ts {
			b := make([]byte, size)
			for j := 0; j < nRandom; j++ {
				b[j] = byte(rng.Uint32())
			}
			ts[i] = b
		}
		return &Payloads{templates: ts}, nil
	default:
		// OMB's default payload is file content; without a file, random
		// bytes are the honest choice (zeros would flatter compression).
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		return &Payloads{templates: [][]byte{b}}, nil
	}
}

// Size is the message size in bytes.
func (p *Payloads) Size() int { return len(p.templates[0]) }

// Fill copies the next template into dst (len Size) and writes h over its
// start. It is not safe for concurrent use: each producer owns its Payloads
// cursor (see Clone).
func (p *Payloads) Fill(dst []byte, h Header) { p.Refill(dst, true, h) }

// Refill is Fill for a buffer that may be used again: a fresh buffer gets
// a copy of the template, and so does every buffer when there are several
// templates (they take turns, so a reused buffer seldom holds the next
// one); with one template (a payload file, OMB's default) a reused buffer
// holds it already, and the 1 KiB copy per message becomes a 32-byte
// header write. The bytes the client sends are the same.
func (p *Payloads) Refill(dst []byte, fresh bool, h Header) {
	if fresh || len(p.templates) > 1 {
		copy(dst, p.templates[p.next])
	}
	p.next++
	if p.next == len(p.templates) {
		p.next = 0
	}
	h.Put(dst)
}

// Clone returns a cursor over the same templates.
func (p *Payloads) Clone() *Payloads { return &Payloads{templates: p.templates} }
