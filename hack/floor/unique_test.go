package main

import (
	"bytes"
	"testing"

	"github.com/streambench/streambench-operator/internal/worker"
)

// TestBuffers: each message gets its own numbered buffer holding the
// template past the header; a buffer given back is handed out again, and
// one still out never is.
func TestBuffers(t *testing.T) {
	template := bytes.Repeat([]byte{7}, 64)
	b := newBuffers(len(template))
	first, second := b.next(template), b.next(template)
	if &first[0] == &second[0] {
		t.Fatal("two messages in flight share a buffer")
	}
	for k, buf := range [][]byte{first, second} {
		if h, err := worker.ParseHeader(buf); err != nil || h.Seq != uint64(k) {
			t.Errorf("message %d carries header %+v (%v)", k, h, err)
		}
		if !bytes.Equal(buf[worker.HeaderSize:], template[worker.HeaderSize:]) {
			t.Errorf("message %d lost the template outside its header", k)
		}
	}
	b.giveBack(first)
	third := b.next(template)
	if &third[0] != &first[0] || len(third) != len(template) {
		t.Error("a buffer given back was not reused whole")
	}
	if h, _ := worker.ParseHeader(third); h.Seq != 2 {
		t.Error("a reused buffer kept its old sequence number")
	}
	var none *buffers
	none.giveBack(first) // the clients call it without --unique
}
