package recycle

import "testing"

// TestBuffers: a buffer given back is taken again with the bytes it held,
// and only a new one is fresh; a buffer of another size is refused.
func TestBuffers(t *testing.T) {
	b := NewBuffers(100)
	first, fresh := b.Get()
	if !fresh || len(first) != 100 {
		t.Fatalf("first buffer: fresh %v, %d bytes; want a fresh one of 100", fresh, len(first))
	}
	copy(first, "kept")
	b.Put(first)
	again, fresh := b.Get()
	if fresh || &again[0] != &first[0] || len(again) != 100 || string(again[:4]) != "kept" {
		t.Fatalf("taken again: fresh %v, same buffer %v, %d bytes, %q; want the buffer given back, as it was",
			fresh, &again[0] == &first[0], len(again), again[:4])
	}
	if other, fresh := b.Get(); !fresh || &other[0] == &again[0] {
		t.Fatal("with none given back, want a new fresh buffer")
	}
	defer func() {
		if recover() == nil {
			t.Error("Put of a 10-byte buffer into 100-byte Buffers did not panic")
		}
	}()
	b.Put(make([]byte, 10))
}
