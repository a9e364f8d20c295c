package main

import (
	"time"

	"github.com/streambench/streambench-operator/internal/recycle"
	"github.com/streambench/streambench-operator/internal/worker"
)

// buffers gives each message a buffer of its own with the worker's header
// written into it (worker.Header: sequence number and times), and takes
// the buffer back when the client acknowledges the message. The floor's default is one shared payload that is never
// written, which no load generator that counts its messages can send:
// with --unique the floor measures what a message of its own costs on
// this machine (the cold line the sender writes, the client's copy of a
// buffer the other core just wrote), apart from streambench's accounting.
type buffers struct {
	free *recycle.Buffers // as the worker's producer keeps its payloads
	seq  uint64
}

func newBuffers(size int) *buffers { return &buffers{free: recycle.NewBuffers(size)} }

// next returns a buffer holding template with this message's header.
func (b *buffers) next(template []byte) []byte {
	buf, fresh := b.free.Get()
	if fresh {
		copy(buf, template)
	}
	now := time.Now().UnixMicro()
	worker.Header{Seq: b.seq, SendMicros: now, IntendedMicros: now}.Put(buf)
	b.seq++
	return buf
}

// giveBack takes back a buffer next handed out; nil-safe, so the clients
// call it whether or not --unique is set.
func (b *buffers) giveBack(buf []byte) {
	if b != nil {
		b.free.Put(buf)
	}
}
