package recycle

import "unsafe"

// Buffers are byte buffers of one size that one goroutine takes and
// another gives back: a message's payload, taken by the sender and given
// back at its ack. They are kept by their first byte, not as a *[]byte or
// in a struct: an object of its own per buffer would be one more cache
// line per message to load, cold, at both ends.
type Buffers struct {
	free List[byte]
	size int
}

// NewBuffers makes buffers of size bytes (at least 1).
func NewBuffers(size int) *Buffers {
	if size < 1 {
		panic("recycle.NewBuffers: size must be at least 1")
	}
	return &Buffers{size: size}
}

// Get returns a buffer given back earlier, holding the bytes it held then
// (fresh false), or a new zeroed one (fresh true).
func (b *Buffers) Get() (buf []byte, fresh bool) {
	if p := b.free.Get(); p != nil {
		return unsafe.Slice(p, b.size), false
	}
	return make([]byte, b.size), true
}

// Put gives back a buffer Get returned; its holder must not use it again.
func (b *Buffers) Put(buf []byte) {
	if len(buf) != b.size {
		panic("recycle.Buffers.Put: a buffer these Buffers did not make")
	}
	b.free.Put(unsafe.SliceData(buf))
}
