package worker

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/streambench/streambench-operator/internal/stats"
)

// SeqSet is the set of sequence numbers of one producer that one
// subscription has received: one bit per message, so a run of a million
// messages costs 125 kB, and it travels gzip-compressed (a set without gaps
// compresses to almost nothing). It is not safe for concurrent use.
type SeqSet struct {
	words []uint64
	count int64
}

// Add records seq and reports whether it was already there (a duplicate).
func (s *SeqSet) Add(seq uint64) (dup bool) {
	w := int(seq >> 6)
	if w >= len(s.words) {
		n := max(w+1, 2*len(s.words))
		nw := make([]uint64, n)
		copy(nw, s.words)
		s.words = nw
	}
	bit := uint64(1) << (seq & 63)
	if s.words[w]&bit != 0 {
		return true
	}
	s.words[w] |= bit
	s.count++
	return false
}

// Outside is the set of the sequence numbers in [0, n) that are in none of
// sets (nil sets are empty): a producer's sends that had no answer, from
// its acknowledged and failed ones. Word by word, so a run's millions cost
// milliseconds.
func Outside(n uint64, sets ...*SeqSet) *SeqSet {
	out := &SeqSet{words: make([]uint64, (n+63)/64)}
	for w := range out.words {
		var in uint64
		for _, s := range sets {
			if s != nil && w < len(s.words) {
				in |= s.words[w]
			}
		}
		word := ^in
		if rest := n - uint64(w)*64; rest < 64 {
			word &= (uint64(1) << rest) - 1
		}
		out.words[w] = word
		out.count += int64(bits.OnesCount64(word))
	}
	return out
}

// Has reports whether seq is in the set.
func (s *SeqSet) Has(seq uint64) bool {
	w := int(seq >> 6)
	return w < len(s.words) && s.words[w]&(uint64(1)<<(seq&63)) != 0
}

// Len is the number of distinct sequence numbers.
func (s *SeqSet) Len() int64 { return s.count }

// Union adds every member of o and returns how many of them were already in
// s (messages of one subscription received on two workers: duplicates).
func (s *SeqSet) Union(o *SeqSet) (overlap int64) {
	if len(o.words) > len(s.words) {
		nw := make([]uint64, len(o.words))
		copy(nw, s.words)
		s.words = nw
	}
	for i, w := range o.words {
		both := s.words[i] & w
		overlap += int64(bits.OnesCount64(both))
		s.count += int64(bits.OnesCount64(w &^ s.words[i]))
		s.words[i] |= w
	}
	return overlap
}

// Missing counts the sequence numbers in [0, n) that are neither in the set
// nor in skip (messages whose send failed, so nobody expects them); skip
// may be nil.
func (s *SeqSet) Missing(n uint64, skip *SeqSet) int64 {
	var skipWords []uint64
	if skip != nil {
		skipWords = skip.words
	}
	var missing int64
	for i := 0; uint64(i)<<6 < n; i++ {
		have := wordAt(s.words, i) | wordAt(skipWords, i)
		if left := n - uint64(i)<<6; left < 64 {
			have |= ^uint64(0) << left // past n: not expected
		}
		missing += int64(bits.OnesCount64(^have))
	}
	return missing
}

// MissingRuns are the sequence numbers Missing counts, as runs: those in
// [0, n) in neither the set nor skip (which may be nil), lowest first.
// Losses come in runs (a lost batch, a truncated log), so this is short
// where the numbers would be many.
func (s *SeqSet) MissingRuns(n uint64, skip *SeqSet) []stats.SeqRange {
	var skipWords []uint64
	if skip != nil {
		skipWords = skip.words
	}
	var out []stats.SeqRange
	for i := 0; uint64(i)<<6 < n; i++ {
		base := uint64(i) << 6
		miss := ^(wordAt(s.words, i) | wordAt(skipWords, i))
		if left := n - base; left < 64 {
			miss &= ^(^uint64(0) << left)
		}
		for b := uint64(0); b < 64 && base+b < n; {
			if miss>>b&1 == 1 {
				// The run of missing numbers from bit b (the shift
				// brings zeros in, so it ends by bit 63 at the latest).
				l := uint64(bits.TrailingZeros64(^(miss >> b)))
				// A run that goes on from the previous word extends.
				if len(out) > 0 && out[len(out)-1].To == base+b {
					out[len(out)-1].To += l
				} else {
					out = append(out, stats.SeqRange{From: base + b, To: base + b + l})
				}
				b += l
				continue
			}
			// Past the run of present numbers from bit b.
			b += min(uint64(bits.TrailingZeros64(miss>>b)), 64-b)
		}
	}
	return out
}

// wordAt is word i of ws; 0 past its end (nothing there).
func wordAt(ws []uint64, i int) uint64 {
	if i < len(ws) {
		return ws[i]
	}
	return 0
}

// MarshalBinary is the gzip-compressed little-endian word array.
func (s *SeqSet) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	b := make([]byte, 8)
	// Trailing zero words carry nothing.
	n := len(s.words)
	for n > 0 && s.words[n-1] == 0 {
		n--
	}
	for _, w := range s.words[:n] {
		binary.LittleEndian.PutUint64(b, w)
		if _, err := zw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary reads what MarshalBinary wrote.
func (s *SeqSet) UnmarshalBinary(data []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("sequence set: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("sequence set: %w", err)
	}
	if len(raw)%8 != 0 {
		return fmt.Errorf("sequence set: %d bytes is not a whole number of words", len(raw))
	}
	s.words = make([]uint64, len(raw)/8)
	s.count = 0
	for i := range s.words {
		s.words[i] = binary.LittleEndian.Uint64(raw[8*i:])
		s.count += int64(bits.OnesCount64(s.words[i]))
	}
	return nil
}
