package main

import (
	"bytes"
	"encoding/binary"
	"testing"
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
		if seq := binary.BigEndian.Uint64(buf[8:16]); seq != uint64(k) {
			t.Errorf("message %d carries sequence number %d", k, seq)
		}
		if !bytes.Equal(buf[32:], template[32:]) || !bytes.Equal(buf[:8], template[:8]) {
			t.Errorf("message %d lost the template outside its header", k)
		}
	}
	b.giveBack(first)
	third := b.next(template)
	if &third[0] != &first[0] || len(third) != len(template) {
		t.Error("a buffer given back was not reused whole")
	}
	if binary.BigEndian.Uint64(third[8:16]) != 2 {
		t.Error("a reused buffer kept its old sequence number")
	}
	var none *buffers
	none.giveBack(first) // the clients call it without --unique
}
